package bench

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/edge"
)

// BenchmarkLiveRequest measures Gantry's own work for one request to a
// live static site, through the whole request path (api.Server: Host
// routing, panic recovery, the request log line; then the edge), without
// the network: the time and allocations net/http's serving adds are not
// counted. edgebench measures the whole thing against nginx.
func BenchmarkLiveRequest(b *testing.B) {
	site := b.TempDir()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(site, "assets"), 0o755))
	must(os.WriteFile(filepath.Join(site, "index.html"), []byte("<!doctype html><title>Bench</title><p>"+strings.Repeat("Gantry ", 40)), 0o644))
	must(os.WriteFile(filepath.Join(site, "assets", "app-3f9a2c1d.js"), []byte(strings.Repeat("x", 200<<10)), 0o644))
	table := edge.NewTable()
	table.Set("bench", edge.Site{DeploymentID: "bench", Dir: site, Status: gantry.DeploymentLive})

	for _, tc := range []struct {
		name, path string
		level      slog.Level
	}{
		{"html", "/", slog.LevelInfo},
		{"html-log-off", "/", slog.LevelError + 1},
		{"asset-200KB", "/assets/app-3f9a2c1d.js", slog.LevelInfo},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := api.NewServer()
			srv.PublicHost, srv.LiveDomain = "localhost", "localhost"
			srv.LiveHandler = edge.New("localhost", table, "http://localhost")
			srv.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: tc.level}))
			r, err := http.NewRequest("GET", "http://bench.localhost:8080"+tc.path, nil)
			must(err)
			r.RemoteAddr = "127.0.0.1:40000"
			w := &discardWriter{}
			b.ReportAllocs()
			for b.Loop() {
				w.h = make(http.Header, 8) // net/http starts every response with a fresh map
				w.status = 0
				srv.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Fatalf("got status %d", w.status)
				}
			}
		})
	}
}

// discardWriter is the cheapest http.ResponseWriter: it keeps the status
// and drops the body, taking files through ReadFrom as net/http does.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}

func (w *discardWriter) ReadFrom(r io.Reader) (int64, error) {
	w.WriteHeader(http.StatusOK)
	return io.Copy(io.Discard, r)
}
