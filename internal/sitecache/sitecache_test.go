package sitecache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/blobs"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/objstore"
	"github.com/gantryhq/gantry/internal/objstore/s3test"
	"github.com/gantryhq/gantry/internal/sitecache"
)

const account = "user-1"

// publish makes deployment id's site on "replica A" (its own data
// folder, files stored by content as deploy does) and uploads it.
func publish(t *testing.T, r *sitecache.Remote, id string, files map[string]string) {
	t.Helper()
	data := t.TempDir()
	st := blobs.Open(filepath.Join(data, "blobs"), account)
	site := filepath.Join(data, "sites", id)
	w, err := st.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var es []blobs.Entry
	for p, body := range files {
		dst := filepath.Join(site, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		e, err := w.Copy(strings.NewReader(body), dst, false)
		if err != nil {
			t.Fatal(err)
		}
		e.Path = p
		es = append(es, e)
	}
	if err := w.WriteManifest(id, es); err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(context.Background(), sitecache.Site, st, account, id, site); err != nil {
		t.Fatal(err)
	}
}

// replicaB is another replica's edge: it has none of the files and
// serves sub from its cache of the object store.
type replicaB struct {
	edge  *edge.Edge
	table *edge.Table
	cache *sitecache.Cache
}

func newReplicaB(t *testing.T, r *sitecache.Remote, max int64) *replicaB {
	t.Helper()
	c, err := sitecache.Open(filepath.Join(t.TempDir(), "site-cache"), max, r)
	if err != nil {
		t.Fatal(err)
	}
	table := edge.NewTable()
	c.OnEvict = table.Reopen
	e := edge.New("localhost", table, "http://localhost:8080")
	e.ConfigureFetch(c)
	return &replicaB{edge: e, table: table, cache: c}
}

func (b *replicaB) route(sub, id string) {
	b.table.Set(sub, edge.Site{DeploymentID: id, Dir: b.cache.Path(id), Status: gantry.DeploymentLive,
		Fetched: b.cache.Clock(id)})
}

func (b *replicaB) get(t *testing.T, sub, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+sub+".localhost"+path, nil)
	rec := httptest.NewRecorder()
	b.edge.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// TestOtherReplicaServesSite: a site built and published on one replica
// is served by another that never had its files, fetched on the first
// request; the site's own 404s stay 404s.
func TestOtherReplicaServesSite(t *testing.T) {
	srv := s3test.Start(t)
	r := &sitecache.Remote{Store: srv.Store("p")}
	publish(t, r, "dep-1", map[string]string{"index.html": "<h1>hello from A</h1>", "assets/app.js": "console.log(1)",
		"copy.js": "console.log(1)"})
	b := newReplicaB(t, r, 64<<20)
	b.route("site", "dep-1")
	for path, want := range map[string]string{"/": "<h1>hello from A</h1>", "/assets/app.js": "console.log(1)", "/copy.js": "console.log(1)"} {
		if code, body := b.get(t, "site", path); code != 200 || body != want {
			t.Fatalf("GET %s: %d %q, want 200 %q", path, code, body, want)
		}
	}
	if code, _ := b.get(t, "site", "/missing.js"); code != 404 {
		t.Fatalf("a missing file: %d, want 404", code)
	}
	// Files are read-only in the cache.
	fi, err := os.Stat(filepath.Join(b.cache.Path("dep-1"), "index.html"))
	if err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("cached file: %v %v", fi.Mode(), err)
	}
}

// TestStoreDown: with the object store stopped, a site already in the
// cache is still served (200), and one that is not answers 503 with a
// page saying so, never 404. Once the store is back the site is served.
func TestStoreDown(t *testing.T) {
	srv := s3test.Start(t)
	r := &sitecache.Remote{Store: srv.Store("p")}
	publish(t, r, "cached", map[string]string{"index.html": "cached site"})
	publish(t, r, "cold", map[string]string{"index.html": "cold site"})
	b := newReplicaB(t, r, 64<<20)
	b.cache.StoreRetry = 300 * time.Millisecond
	b.route("cached", "cached")
	b.route("cold", "cold")
	if code, _ := b.get(t, "cached", "/"); code != 200 {
		t.Fatalf("warm-up: %d", code)
	}
	srv.Stop()
	if code, body := b.get(t, "cached", "/"); code != 200 || body != "cached site" {
		t.Fatalf("cached site, store down: %d %q", code, body)
	}
	code, body := b.get(t, "cold", "/")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "temporarily unavailable") {
		t.Fatalf("uncached site, store down: %d %q, want 503 temporarily unavailable", code, body)
	}
	srv.Restart()
	time.Sleep(300 * time.Millisecond) // misses fail at once that long after a failed fetch
	if code, body := b.get(t, "cold", "/"); code != 200 || body != "cold site" {
		t.Fatalf("store back: %d %q", code, body)
	}
}

// TestTamperedBlobRefused: a file whose bytes were swapped in the store
// fails its SHA-256 check: the site answers 503 and the swapped bytes
// are never served nor kept.
func TestTamperedBlobRefused(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("p")
	r := &sitecache.Remote{Store: st}
	good := "<h1>bank</h1>"
	publish(t, r, "dep", map[string]string{"index.html": good})
	sum := sha256.Sum256([]byte(good))
	evil := []byte("<script>steal()</script>")
	evilSum := sha256.Sum256(evil)
	if err := st.Put(context.Background(), sitecache.BlobKey(account, hex.EncodeToString(sum[:])),
		bytes.NewReader(evil), hex.EncodeToString(evilSum[:])); err != nil {
		t.Fatal(err)
	}
	b := newReplicaB(t, r, 64<<20)
	b.route("bank", "dep")
	code, body := b.get(t, "bank", "/")
	if code != http.StatusServiceUnavailable || strings.Contains(body, "steal") {
		t.Fatalf("tampered blob: %d %q, want 503 without it", code, body)
	}
	if _, err := os.Stat(b.cache.Path("dep")); !os.IsNotExist(err) {
		t.Fatalf("a tampered site's folder exists: %v", err)
	}
}

// counting counts the gets of each key.
type counting struct {
	objstore.Store
	mu   sync.Mutex
	gets map[string]int
}

func (c *counting) Get(ctx context.Context, key, sum string, w io.Writer) (int64, error) {
	c.mu.Lock()
	c.gets[key]++
	c.mu.Unlock()
	return c.Store.Get(ctx, key, sum, w)
}

// TestSingleFlight: requests arriving together for a cold site share one
// fetch: each object is got once.
func TestSingleFlight(t *testing.T) {
	srv := s3test.Start(t)
	cs := &counting{Store: srv.Store("p"), gets: map[string]int{}}
	r := &sitecache.Remote{Store: cs}
	publish(t, r, "dep", map[string]string{"index.html": "x", "a.js": "a", "b.css": "b"})
	b := newReplicaB(t, r, 64<<20)
	b.route("s", "dep")
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 20 {
		wg.Go(func() {
			if code, _ := b.get(t, "s", "/a.js"); code == 200 {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 20 {
		t.Fatalf("%d of 20 requests got 200", ok.Load())
	}
	for k, n := range cs.gets {
		if n != 1 {
			t.Errorf("%s got %d times, want once", k, n)
		}
	}
	if len(cs.gets) != 4 {
		t.Errorf("objects got: %v, want the manifest and 3 blobs", cs.gets)
	}
}

// TestEvictsLeastRecentlyServed: over its bound the cache removes the
// site served longest ago; a request for it fetches it again.
func TestEvictsLeastRecentlyServed(t *testing.T) {
	srv := s3test.Start(t)
	r := &sitecache.Remote{Store: srv.Store("p")}
	big := strings.Repeat("x", 40<<10)
	for _, id := range []string{"d1", "d2", "d3"} {
		publish(t, r, id, map[string]string{"index.html": id + big})
	}
	b := newReplicaB(t, r, 100<<10) // two sites fit
	for _, id := range []string{"d1", "d2", "d3"} {
		b.route(id, id)
	}
	b.get(t, "d1", "/")
	b.get(t, "d2", "/")
	b.get(t, "d1", "/") // d2 is now the least recent
	if code, _ := b.get(t, "d3", "/"); code != 200 {
		t.Fatal(code)
	}
	if _, err := os.Stat(b.cache.Path("d2")); !os.IsNotExist(err) {
		t.Fatalf("d2 not evicted: %v", err)
	}
	for _, id := range []string{"d1", "d3"} {
		if _, err := os.Stat(b.cache.Path(id)); err != nil {
			t.Fatalf("%s evicted: %v", id, err)
		}
	}
	if n := b.cache.Bytes(); n > 100<<10 {
		t.Fatalf("cache holds %d bytes", n)
	}
	if code, body := b.get(t, "d2", "/"); code != 200 || !strings.HasPrefix(body, "d2") {
		t.Fatalf("evicted site again: %d", code)
	}
}

// TestRemoveKeepsSharedBlobs: removing a deployment deletes its manifest
// and the blobs no other deployment uses, not the ones another still
// links to.
func TestRemoveKeepsSharedBlobs(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("p")
	r := &sitecache.Remote{Store: st}
	publish(t, r, "old", map[string]string{"index.html": "shared", "old.js": "only old"})
	publish(t, r, "new", map[string]string{"index.html": "shared"})
	key := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return sitecache.BlobKey(account, hex.EncodeToString(h[:]))
	}
	stillUsed := map[string]bool{} // as the database would answer: "new" links to "shared"
	h := sha256.Sum256([]byte("shared"))
	stillUsed[hex.EncodeToString(h[:])] = true
	err := r.Remove(context.Background(), sitecache.Site, "old", func(acc string, names []string) ([]string, error) {
		if acc != account {
			t.Errorf("account %q", acc)
		}
		var gone []string
		for _, n := range names {
			if !stillUsed[n] {
				gone = append(gone, n)
			}
		}
		return gone, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for k, want := range map[string]bool{key("shared"): true, key("only old"): false,
		sitecache.ManifestKey("old"): false, sitecache.ManifestKey("new"): true} {
		if ok, err := st.Has(ctx, k); err != nil || ok != want {
			t.Errorf("%s present %v (%v), want %v", k, ok, err, want)
		}
	}
}

// TestFillApp: an app's workspace restored from the store keeps its
// files' modes (an executable stays one, a writable file writable:
// they are ingested into the account's store next), its symlinks and its
// empty files; a site's files are read-only.
func TestFillApp(t *testing.T) {
	srv := s3test.Start(t)
	r := &sitecache.Remote{Store: srv.Store("p")}
	data := t.TempDir()
	st := blobs.Open(filepath.Join(data, "blobs"), account)
	files := filepath.Join(data, "builds", "app.files")
	w, err := st.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var es []blobs.Entry
	for _, f := range []struct {
		path, body string
		exec       bool
	}{{"server.js", "require('http')", false}, {"bin/start", "#!/bin/sh\nnode server.js", true}, {"empty.txt", "", false}} {
		dst := filepath.Join(files, f.path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		e, err := w.Copy(strings.NewReader(f.body), dst, f.exec)
		if err != nil {
			t.Fatal(err)
		}
		e.Path = f.path
		es = append(es, e)
	}
	es = append(es, blobs.Entry{Path: "current", Mode: os.ModeSymlink | 0o777, Link: "server.js"})
	if err := w.WriteManifest("app-1", es); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ctx := context.Background()
	if err := r.Publish(ctx, sitecache.App, st, account, "app-1", files); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.Has(ctx, sitecache.Site, "app-1"); ok {
		t.Fatal("an app's manifest is a site's")
	}
	dir := t.TempDir()
	if _, n, err := r.Fill(ctx, sitecache.App, "app-1", dir); err != nil || n != 4 {
		t.Fatalf("fill: %d entries, %v", n, err)
	}
	for p, want := range map[string]os.FileMode{"server.js": 0o644, "bin/start": 0o755, "empty.txt": 0o644} {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(dir, "current")); err != nil || l != "server.js" {
		t.Errorf("symlink: %q %v", l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "bin/start")); string(b) != "#!/bin/sh\nnode server.js" {
		t.Errorf("bin/start: %q", b)
	}
}

// TestPausedStore: a store that takes connections but does not answer
// (SIGSTOP) makes a miss answer 503 within seconds, and the misses right
// after it at once, rather than each waiting; once the store answers
// again the site is served.
func TestPausedStore(t *testing.T) {
	srv := s3test.Start(t)
	r := &sitecache.Remote{Store: srv.Store("p")}
	publish(t, r, "one", map[string]string{"index.html": "one"})
	publish(t, r, "two", map[string]string{"index.html": "two"})
	b := newReplicaB(t, r, 64<<20)
	b.cache.StoreRetry = 2 * time.Second
	b.route("one", "one")
	b.route("two", "two")
	srv.Pause()
	start := time.Now()
	if code, body := b.get(t, "one", "/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "temporarily unavailable") {
		t.Fatalf("a miss with the store paused: %d", code)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("the first miss took %v", d)
	}
	start = time.Now()
	if code, _ := b.get(t, "two", "/"); code != http.StatusServiceUnavailable {
		t.Fatalf("the next miss: %d", code)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("the next miss waited %v for a store known to be down", d)
	}
	srv.Resume()
	time.Sleep(2 * time.Second)
	if code, body := b.get(t, "two", "/"); code != 200 || body != "two" {
		t.Fatalf("store back: %d %q", code, body)
	}
}
