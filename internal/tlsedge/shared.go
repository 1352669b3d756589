package tlsedge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
)

// Objects is a key-value store every replica shares, with named locks
// (store.TLSObjects on PostgreSQL).
type Objects interface {
	PutObject(ctx context.Context, key string, value []byte, modified time.Time) error
	// GetObject answers fs.ErrNotExist for a missing key.
	GetObject(ctx context.Context, key string) ([]byte, time.Time, error)
	// DeleteObjects deletes key and the keys below key/.
	DeleteObjects(ctx context.Context, key string) error
	// ObjectKeys lists the keys below prefix/ (every key for "").
	ObjectKeys(ctx context.Context, prefix string) ([]string, error)
	TryLockName(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	RenewLock(ctx context.Context, name, owner string, until time.Time) (bool, error)
	UnlockName(ctx context.Context, name, owner string) error
}

// DefaultLockLease is how long a shared lock outlives a holder that
// stopped renewing it (a replica that died mid-order).
const DefaultLockLease = 2 * time.Minute

// lockPoll is how often Lock tries again while another holds the lock.
const lockPoll = time.Second

// SharedStorage is certmagic's storage in Objects: certificates, keys,
// ACME accounts and HTTP-01 challenge tokens written by one replica are
// read by all (so any replica answers a challenge and serves a
// certificate another ordered), and certmagic's locks are held across
// replicas, so one orders each certificate. A lock lives Lease (default
// DefaultLockLease) past its holder's last renewal: held locks are
// renewed every Lease/3 until Unlock.
type SharedStorage struct {
	Objects Objects
	Lease   time.Duration
	// Now returns the current time (default time.Now).
	Now func() time.Time

	owner string
	mu    sync.Mutex
	held  map[string]context.CancelFunc // lock name → stops its renewal
}

var (
	_ certmagic.Storage   = (*SharedStorage)(nil)
	_ certmagic.TryLocker = (*SharedStorage)(nil)
)

// NewSharedStorage returns the storage over objs, its locks owned by a
// name of its own.
func NewSharedStorage(objs Objects) *SharedStorage {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &SharedStorage{Objects: objs, owner: hex.EncodeToString(b[:]), held: map[string]context.CancelFunc{}}
}

func (s *SharedStorage) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *SharedStorage) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLockLease
}

// clean makes a key as certmagic means it: slash-separated, no leading
// or trailing slash.
func clean(key string) string { return strings.Trim(path.Clean("/"+key), "/") }

func (s *SharedStorage) Store(ctx context.Context, key string, value []byte) error {
	return s.Objects.PutObject(ctx, clean(key), value, s.now())
}

func (s *SharedStorage) Load(ctx context.Context, key string) ([]byte, error) {
	v, _, err := s.Objects.GetObject(ctx, clean(key))
	return v, err
}

func (s *SharedStorage) Delete(ctx context.Context, key string) error {
	return s.Objects.DeleteObjects(ctx, clean(key))
}

func (s *SharedStorage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// List returns the keys below prefix: with recursive, every one and the
// "folders" between (as a folder store walks them); without, only the
// names directly below prefix.
func (s *SharedStorage) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	prefix = clean(prefix)
	keys, err := s.Objects.ObjectKeys(ctx, prefix)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fs.ErrNotExist
	}
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	base := prefix
	if base != "" {
		base += "/"
	}
	for _, k := range keys {
		rest := strings.TrimPrefix(k, base)
		parts := strings.Split(rest, "/")
		if !recursive {
			add(base + parts[0])
			continue
		}
		for i := range parts {
			add(base + strings.Join(parts[:i+1], "/"))
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *SharedStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	key = clean(key)
	v, mod, err := s.Objects.GetObject(ctx, key)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: mod, Size: int64(len(v)), IsTerminal: true}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return certmagic.KeyInfo{}, err
	}
	keys, err := s.Objects.ObjectKeys(ctx, key)
	if err != nil {
		return certmagic.KeyInfo{}, err
	}
	if len(keys) == 0 {
		return certmagic.KeyInfo{}, fs.ErrNotExist
	}
	return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
}

// Lock waits until it holds name (or ctx ends).
func (s *SharedStorage) Lock(ctx context.Context, name string) error {
	for {
		ok, err := s.TryLock(ctx, name)
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// TryLock takes name when nobody holds it (or its holder stopped renewing
// it a Lease ago) and keeps renewing it until Unlock.
func (s *SharedStorage) TryLock(ctx context.Context, name string) (bool, error) {
	now := s.now()
	ok, err := s.Objects.TryLockName(ctx, name, s.owner, now, now.Add(s.lease()))
	if !ok || err != nil {
		return false, err
	}
	rctx, stop := context.WithCancel(context.Background())
	s.mu.Lock()
	if old := s.held[name]; old != nil {
		old() // a lock of ours that had lapsed and was taken again
	}
	s.held[name] = stop
	s.mu.Unlock()
	go s.renew(rctx, name)
	return true, nil
}

// renew keeps name held until ctx ends.
func (s *SharedStorage) renew(ctx context.Context, name string) {
	t := time.NewTicker(s.lease() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ok, err := s.Objects.RenewLock(ctx, name, s.owner, s.now().Add(s.lease())); err == nil && !ok {
				return // lost it (it lapsed and another took it)
			}
		}
	}
}

func (s *SharedStorage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	if stop := s.held[name]; stop != nil {
		stop()
		delete(s.held, name)
	}
	s.mu.Unlock()
	return s.Objects.UnlockName(ctx, name, s.owner)
}

// ImportFolder copies the files of a certificate folder (certmagic's
// FileStorage at dir) into s, each key that s does not have yet: moving a
// single server's certificates into the shared storage keeps them, with
// no new order. It returns how many it copied.
func ImportFolder(ctx context.Context, dir string, s *SharedStorage) (int, error) {
	fsys := &certmagic.FileStorage{Path: dir}
	keys, err := fsys.List(ctx, "", true)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		info, err := fsys.Stat(ctx, k)
		if err != nil || !info.IsTerminal || strings.HasPrefix(clean(k), "locks/") {
			continue
		}
		if _, _, err := s.Objects.GetObject(ctx, clean(k)); err == nil {
			continue
		}
		v, err := fsys.Load(ctx, k)
		if err != nil {
			return n, err
		}
		if err := s.Objects.PutObject(ctx, clean(k), v, info.Modified); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
