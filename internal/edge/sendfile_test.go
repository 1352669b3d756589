package edge_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// TestLargeFileOverTCP serves a file too large for the memory cache through
// a real http.Server with edge.ConnContext (the corked sendfile path) and
// checks every kind of answer on one keep-alive connection, the last a
// small file that must not wait behind a cork left set.
func TestLargeFileOverTCP(t *testing.T) {
	dir := t.TempDir()
	raw := make([]byte, 150<<10)
	_, _ = rand.Read(raw)
	big := []byte(hex.EncodeToString(raw)) // 300 KiB, over the cache's 128 KiB
	if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "assets", "big-3f9a2c1d.js"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small"), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := edge.NewTable()
	tbl.Set("site", edge.Site{DeploymentID: "a", Dir: dir, Status: gantry.DeploymentLive})
	for _, withConn := range []bool{true, false} {
		t.Run("ConnContext="+strconv.FormatBool(withConn), func(t *testing.T) {
			srv := &http.Server{Handler: edge.New("localhost", tbl, "")}
			if withConn {
				srv.ConnContext = edge.ConnContext
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(ln)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, DisableCompression: true}}
			defer client.CloseIdleConnections()
			base := "http://" + ln.Addr().String()
			do := func(method, path string, h map[string]string) (*http.Response, []byte, time.Duration) {
				t.Helper()
				req, _ := http.NewRequest(method, base+path, nil)
				req.Host = "site.localhost"
				for k, v := range h {
					req.Header.Set(k, v)
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				return resp, body, time.Since(start)
			}

			resp, body, _ := do("GET", "/assets/big-3f9a2c1d.js", nil)
			if resp.StatusCode != 200 || !bytes.Equal(body, big) {
				t.Fatalf("GET: got %d and %d bytes, want 200 and the %d bytes of the file", resp.StatusCode, len(body), len(big))
			}
			for k, want := range map[string]string{
				"Content-Length":         strconv.Itoa(len(big)),
				"Content-Type":           "text/javascript; charset=utf-8",
				"Cache-Control":          "public, max-age=31536000, immutable",
				"Accept-Ranges":          "bytes",
				"X-Content-Type-Options": "nosniff",
			} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("GET: got %s %q, want %q", k, got, want)
				}
			}
			etag, lm := resp.Header.Get("Etag"), resp.Header.Get("Last-Modified")
			if etag == "" || lm == "" {
				t.Errorf("GET: got ETag %q and Last-Modified %q, want both", etag, lm)
			}

			resp, body, _ = do("HEAD", "/assets/big-3f9a2c1d.js", nil)
			if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(big)) {
				t.Errorf("HEAD: got %d, %d bytes, Content-Length %q", resp.StatusCode, len(body), resp.Header.Get("Content-Length"))
			}
			resp, body, _ = do("GET", "/assets/big-3f9a2c1d.js", map[string]string{"Range": "bytes=1000-1099"})
			if resp.StatusCode != 206 || !bytes.Equal(body, big[1000:1100]) {
				t.Errorf("Range: got %d and %q", resp.StatusCode, body)
			}
			resp, _, _ = do("GET", "/assets/big-3f9a2c1d.js", map[string]string{"If-None-Match": etag})
			if resp.StatusCode != 304 {
				t.Errorf("If-None-Match: got %d, want 304", resp.StatusCode)
			}
			resp, _, _ = do("GET", "/assets/big-3f9a2c1d.js", map[string]string{"If-Modified-Since": lm})
			if resp.StatusCode != 304 {
				t.Errorf("If-Modified-Since: got %d, want 304", resp.StatusCode)
			}
			// A cork left on the connection would hold this small answer
			// for 200 ms.
			do("GET", "/assets/big-3f9a2c1d.js", nil)
			var slowest time.Duration
			for range 3 {
				resp, body, d := do("GET", "/small.txt", nil)
				if resp.StatusCode != 200 || string(body) != "small" {
					t.Fatalf("small file: got %d %q", resp.StatusCode, body)
				}
				slowest = max(slowest, d)
			}
			if slowest > 150*time.Millisecond {
				t.Errorf("a small answer after a large one took %v: the connection stayed corked?", slowest)
			}
		})
	}
}
