package api

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The fast request line is byte for byte what slog's text handler writes.
func TestAppendRequestLineMatchesSlog(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("CET", 3600), time.FixedZone("NST", -(3*3600 + 1800))}
	times := []time.Time{
		time.Date(2026, 11, 22, 5, 31, 10, 0, time.UTC),
		time.Date(2026, 11, 22, 5, 31, 10, 999_999_999, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 1_000_000, time.UTC),
	}
	durations := []time.Duration{0, 999, 12345, 1_500_000, 61 * time.Second, 3*time.Hour + time.Nanosecond}
	cases := []struct {
		method, host, path, ip string
		status                 int
		bytes                  int64
	}{
		{"GET", "bench.localhost", "/assets/app-3f9a2c1d.js", "127.0.0.1", 200, 204800},
		{"HEAD", "my-site.localhost:8080", "/", "::1", 304, 0},
		{"POST", "app.gantry.example", `/a\b?x`, "2001:db8::1", 502, 1},
		{"GET", "x.localhost", "/~user/%20%3D", "10.0.0.1", 503, -1},
	}
	for _, z := range zones {
		for _, tm := range times {
			for _, d := range durations {
				for _, c := range cases {
					var want bytes.Buffer
					rec := slog.NewRecord(tm.In(z), logLevel(c.status), "request", 0)
					rec.AddAttrs(slog.String("method", c.method), slog.String("host", c.host), slog.String("path", c.path),
						slog.Int("status", c.status), slog.Duration("duration", d), slog.Int64("bytes", c.bytes), slog.String("ip", c.ip))
					if err := slog.NewTextHandler(&want, nil).Handle(context.Background(), rec); err != nil {
						t.Fatal(err)
					}
					got := appendRequestLine(nil, tm.In(z), logLevel(c.status), c.method, c.host, c.path, c.status, d, c.bytes, c.ip)
					if string(got) != want.String() {
						t.Fatalf("line differs:\n got %q\nwant %q", got, want.String())
					}
				}
			}
		}
	}
}

// WriteRequestLine gives the same line through NewTextHandler as through
// slog's handler, on the fast path and for values slog quotes.
func TestWriteRequestLineTextHandler(t *testing.T) {
	stamp := regexp.MustCompile(`^time=\S+ `)
	for _, c := range []struct{ host, path, ip string }{
		{"bench.localhost", "/index.html", "127.0.0.1"},
		{"bench.localhost", "/with space", "127.0.0.1"},
		{"bench.localhost", "/a=b", "127.0.0.1"},
		{"bench.localhost", `/say"hi"`, "127.0.0.1"},
		{"bench.localhost", "/caf\u00e9", "127.0.0.1"},
		{"bench.localhost", "/tab\tnl\n", "127.0.0.1"},
		{"", "/", ""},
	} {
		var fast, slow bytes.Buffer
		fh := NewTextHandler(&fast, nil)
		if _, ok := fh.(*textHandler); !ok {
			t.Fatalf("NewTextHandler(nil options) = %T, want the fast handler", fh)
		}
		WriteRequestLine(fh, "GET", c.host, c.path, 200, 1500*time.Microsecond, 42, c.ip)
		WriteRequestLine(slog.NewTextHandler(&slow, nil), "GET", c.host, c.path, 200, 1500*time.Microsecond, 42, c.ip)
		if f, s := stamp.ReplaceAllString(fast.String(), ""), stamp.ReplaceAllString(slow.String(), ""); f != s || f == "" {
			t.Errorf("path %q: fast handler wrote %q, slog %q", c.path, f, s)
		}
	}

	// Options are honoured: a level above INFO drops the line; attributes
	// added with WithAttrs appear (slog's path).
	var buf bytes.Buffer
	WriteRequestLine(NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}), "GET", "a.localhost", "/", 200, time.Millisecond, 1, "127.0.0.1")
	if buf.Len() != 0 {
		t.Errorf("a WARN handler wrote an INFO request line: %q", buf.String())
	}
	WriteRequestLine(NewTextHandler(&buf, nil).WithAttrs([]slog.Attr{slog.String("component", "edge")}), "GET", "a.localhost", "/", 200, time.Millisecond, 1, "127.0.0.1")
	if !strings.Contains(buf.String(), " component=edge method=GET") {
		t.Errorf("WithAttrs lost its attribute: %q", buf.String())
	}
	// Other records go through slog as usual.
	buf.Reset()
	slog.New(NewTextHandler(&buf, nil)).Info("database ready", "schema_version", 7)
	if !strings.Contains(buf.String(), `level=INFO msg="database ready" schema_version=7`) {
		t.Errorf("an ordinary record: %q", buf.String())
	}
}

func BenchmarkWriteRequestLine(b *testing.B) {
	for _, hc := range []struct {
		name string
		h    slog.Handler
	}{{"slog", slog.NewTextHandler(discard{}, nil)}, {"fast", NewTextHandler(discard{}, nil)}} {
		b.Run(hc.name, func(b *testing.B) {
			for b.Loop() {
				WriteRequestLine(hc.h, "GET", "bench.localhost", "/assets/app-3f9a2c1d.js", 200, 12345, 204800, "127.0.0.1")
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// IsLiveHost, which the edge's loops call for every request, without
// allocating.
func TestIsLiveHost(t *testing.T) {
	s := &Server{PublicHost: "localhost", LiveDomain: "localhost"}
	for host, want := range map[string]bool{
		"blog.localhost":      true,
		"blog.localhost:8080": true,
		"Blog.LocalHost.":     true,
		"a.b.localhost":       true,
		"localhost":           false,
		"localhost:8080":      false,
		".localhost":          false,
		"bloglocalhost":       false,
		"blog.localhost.evil": false,
		"blog.example.com":    false,
		"":                    false,
		"[::1]:8080":          false,
		"blog.localhost:":     true,
	} {
		if got := s.IsLiveHost(host); got != want {
			t.Errorf("IsLiveHost(%q) = %v, want %v", host, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.IsLiveHost("blog.localhost") }); n != 0 {
		t.Errorf("IsLiveHost allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.IsLiveHost("blog.localhost:8080") }); n != 0 {
		t.Errorf("IsLiveHost with a port allocates %v times per call", n)
	}
}
