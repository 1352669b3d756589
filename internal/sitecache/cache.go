package sitecache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/objstore"
)

// Cache is an edge's read-through copy of sites kept in the object store:
// one folder per deployment under Dir, filled on the first request that
// needs it (edge.SiteFetcher) and evicted, least recently served first,
// once the folders take more than Max bytes.
//
// A fetch is shared by every request waiting for the same site (single
// flight), checks every blob against its SHA-256, builds the folder aside
// and renames it into place, so a site is served whole or not at all.
type Cache struct {
	Dir    string
	Max    int64
	Remote *Remote
	// StoreRetry is how long misses fail at once (ErrStoreDown) after a
	// fetch could not reach the store (default DefaultStoreRetry).
	StoreRetry time.Duration
	// OnEvict is told the folder of a site it removed (the edge's
	// Table.Reopen), so no request keeps using a folder gone from disk.
	OnEvict func(dir string)

	flight singleflight.Group
	mu     sync.Mutex
	sites  map[string]*cached       // deployment id → what is on disk
	clocks map[string]*atomic.Int64 // deployment id → last request (edge.Site.Fetched)
	total  int64
	// downUntil (UnixNano): a fetch could not reach the store; until
	// then misses fail at once (ErrStoreDown) instead of each waiting for
	// a store that is down or does not answer.
	downUntil atomic.Int64
}

// DefaultStoreRetry is how long misses fail at once after a fetch could
// not reach the object store (Cache.StoreRetry).
const DefaultStoreRetry = 10 * time.Second

// ErrStoreDown is a miss while the object store was found unreachable
// less than StoreRetry ago.
var ErrStoreDown = errors.New("site cache: the object store was unreachable moments ago")

type cached struct{ bytes int64 }

var _ edge.SiteFetcher = (*Cache)(nil)

// FetchTimeout bounds one site's fetch, whoever waits for it.
const FetchTimeout = 2 * time.Minute

// Open returns the cache in dir, counting the sites already there (their
// last use is their folder's time) and removing what an interrupted fetch
// or eviction left.
func Open(dir string, max int64, remote *Remote) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("site cache: %w", err)
	}
	c := &Cache{Dir: dir, Max: max, Remote: remote, sites: map[string]*cached{}, clocks: map[string]*atomic.Int64{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("site cache: %w", err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") || !e.IsDir() {
			_ = os.RemoveAll(p)
			continue
		}
		n := diskBytes(p)
		c.sites[e.Name()] = &cached{bytes: n}
		c.total += n
		if fi, err := e.Info(); err == nil {
			c.Clock(e.Name()).Store(fi.ModTime().UnixNano())
		}
	}
	return c, nil
}

// Path is the folder of deployment id's site in the cache.
func (c *Cache) Path(id string) string { return filepath.Join(c.Dir, id) }

// Clock is deployment id's use clock, for edge.Site.Fetched.
func (c *Cache) Clock(id string) *atomic.Int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.clocks[id]
	if k == nil {
		k = new(atomic.Int64)
		c.clocks[id] = k
	}
	return k
}

// Bytes is what the cached sites take.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Fetch implements edge.SiteFetcher: dir must be Path(id).
func (c *Cache) Fetch(ctx context.Context, id, dir string) error {
	if dir != c.Path(id) || !accountName.MatchString(id) {
		return fmt.Errorf("site cache: %s is not the cache folder of deployment %q", dir, id)
	}
	if time.Now().UnixNano() < c.downUntil.Load() {
		return ErrStoreDown
	}
	ch := c.flight.DoChan(id, func() (any, error) {
		c.mu.Lock()
		_, ok := c.sites[id]
		c.mu.Unlock()
		if ok && dirExists(dir) {
			return nil, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FetchTimeout)
		defer cancel()
		err := c.fetch(fctx, id)
		if err != nil && !errors.Is(err, objstore.ErrCorrupt) && !errors.Is(err, objstore.ErrNotFound) {
			c.downUntil.Store(time.Now().Add(cmp.Or(c.StoreRetry, DefaultStoreRetry)).UnixNano())
		}
		return nil, err
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetch gets deployment id's site into its folder.
func (c *Cache) fetch(ctx context.Context, id string) error {
	start := time.Now()
	tmp, err := os.MkdirTemp(c.Dir, ".fetch-"+id+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // left only on failure: renamed otherwise
	n, files, err := c.Remote.Fill(ctx, Site, id, tmp)
	if err != nil {
		return err
	}
	dst := c.Path(id)
	_ = os.RemoveAll(dst) // a folder the index lost (removed meanwhile)
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	c.mu.Lock()
	if old := c.sites[id]; old != nil {
		c.total -= old.bytes
	}
	c.sites[id] = &cached{bytes: n}
	c.total += n
	k := c.clocks[id]
	if k == nil {
		k = new(atomic.Int64)
		c.clocks[id] = k
	}
	k.Store(time.Now().UnixNano())
	c.mu.Unlock()
	slog.Info("site cache: fetched", "deployment", id, "files", files, "bytes", n, "took", time.Since(start).Round(time.Millisecond))
	c.evict(id)
	return nil
}

// readOnly is a cached file's mode: published files are never written.
func readOnly(m fs.FileMode) fs.FileMode { return (m.Perm() | 0o444) &^ 0o222 }

// link is a file whose blob was fetched to another path: a hard link to it.
type link struct{ from, to string }

// evict removes the least recently served sites until the cache fits in
// Max, never keep (just fetched).
func (c *Cache) evict(keep string) {
	for {
		c.mu.Lock()
		if c.total <= c.Max {
			c.mu.Unlock()
			return
		}
		victim, oldest := "", int64(0)
		for id := range c.sites {
			if id == keep {
				continue
			}
			if t := c.clocks[id].Load(); victim == "" || t < oldest {
				victim, oldest = id, t
			}
		}
		if victim == "" {
			c.mu.Unlock()
			return
		}
		c.total -= c.sites[victim].bytes
		delete(c.sites, victim)
		c.mu.Unlock()
		c.removeDir(victim)
		slog.Info("site cache: evicted", "deployment", victim)
	}
}

// Drop removes deployment id's site from the cache (it was deleted).
func (c *Cache) Drop(id string) {
	c.mu.Lock()
	if s := c.sites[id]; s != nil {
		c.total -= s.bytes
		delete(c.sites, id)
	}
	delete(c.clocks, id)
	c.mu.Unlock()
	c.removeDir(id)
}

// removeDir moves id's folder aside, tells OnEvict, then deletes it.
func (c *Cache) removeDir(id string) {
	dst := c.Path(id)
	trash := filepath.Join(c.Dir, ".evict-"+id+"-"+fmt.Sprint(time.Now().UnixNano()))
	if err := os.Rename(dst, trash); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			slog.Error("site cache: evict", "deployment", id, "err", err)
		}
		return
	}
	if c.OnEvict != nil {
		c.OnEvict(dst)
	}
	_ = os.RemoveAll(trash)
}

// diskBytes is the bytes of the regular files under dir, each inode once.
func diskBytes(dir string) int64 {
	seen := map[uint64]bool{}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		n += fi.Size()
		return nil
	})
	return n
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
