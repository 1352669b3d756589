package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// loopServer is a platform as `gantry serve` runs it: the edge's loops on
// the listener, handing what they do not answer to an http.Server whose
// handler sends live hosts to the edge and answers "platform" otherwise;
// or, with the loops off (GANTRY_EDGE_LOOPS=off, loop nil), that
// http.Server alone.
type loopServer struct {
	addr   string
	loop   *edge.Loop
	mu     sync.Mutex
	logged []string // "METHOD host path status bytes" of the loop's answers
}

// loopModes are the two ways `gantry serve` serves (GANTRY_EDGE_LOOPS):
// tests that exercise serving run both, through startEdge.
var loopModes = []struct {
	name string
	on   bool
}{{"loops=on", true}, {"loops=off", false}}

// startEdge serves e as `gantry serve` does with the loops on or off.
func startEdge(t *testing.T, e *edge.Edge, on bool, opts ...func(*edge.LoopOptions)) *loopServer {
	t.Helper()
	if on {
		return startLoop(t, e, opts...)
	}
	return &loopServer{addr: startPlain(t, e)}
}

func isLive(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	return strings.HasSuffix(strings.ToLower(h), ".localhost")
}

func platform(e *edge.Edge) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLive(r.Host) {
			e.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "platform %s %s %q", r.Method, r.URL.Path, body)
	})
}

// startLoop serves e behind its loops; opts may change the options.
func startLoop(t *testing.T, e *edge.Edge, opts ...func(*edge.LoopOptions)) *loopServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &loopServer{addr: ln.Addr().String()}
	o := edge.LoopOptions{
		IsLive: isLive,
		Log: func(_ slog.Handler, method, host, path string, status int, d time.Duration, bytes int64, ip string) {
			s.mu.Lock()
			s.logged = append(s.logged, fmt.Sprintf("%s %s %s %d %d %s", method, host, path, status, bytes, ip))
			s.mu.Unlock()
		},
		IdleTimeout: 5 * time.Second,
	}
	for _, f := range opts {
		f(&o)
	}
	s.loop, err = e.NewLoop(ln, o)
	if err != nil {
		t.Fatal(err)
	}
	s.loop.Serve()
	hs := &http.Server{Handler: platform(e), ConnContext: edge.ConnContext}
	go hs.Serve(s.loop.Listener())
	t.Cleanup(func() {
		s.loop.Close()
		hs.Close()
	})
	return s
}

func (s *loopServer) takeLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logged
	s.logged = nil
	return l
}

// startPlain serves the same platform with net/http alone: the reference.
func startPlain(t *testing.T, e *edge.Edge) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: platform(e), ConnContext: edge.ConnContext}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// exchange sends raw requests on one connection and reads as many answers.
func exchange(t *testing.T, addr, raw string, n int, methods ...string) []*http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []*http.Response
	for i := 0; i < n; i++ {
		req := &http.Request{Method: http.MethodGet}
		if i < len(methods) {
			req.Method = methods[i]
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("answer %d of %q: %v", i+1, raw, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("answer %d body: %v", i+1, err)
		}
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		out = append(out, resp)
	}
	return out
}

func get(host, target string, headers ...string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + strings.Join(headers, "") + "\r\n"
}

// bigFixture adds a site with files larger than the memory cache.
func bigFixture(t *testing.T, tbl *edge.Table) (string, string) {
	dir := t.TempDir()
	big := strings.Repeat("const bundle = 'x';\n", 15000) // 300 KB
	for name, body := range map[string]string{
		"index.html":            "<h1>big</h1>",
		"vendor-4f9c2a1b.js":    big,
		"vendor-4f9c2a1b.js.gz": gz(big),
		"video.bin":             big, // no known type: net/http sniffs it
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tbl.Set("big", edge.Site{DeploymentID: "big", Dir: dir, Status: gantry.DeploymentLive})
	return dir, big
}

// TestLoopAnswersAsNetHTTP sends the same requests to the loop and to
// net/http alone and expects the same answers (but the Date), and checks
// which ones the loop answered itself.
func TestLoopAnswersAsNetHTTP(t *testing.T) {
	e, tbl, _ := fixture(t)
	bigFixture(t, tbl)
	loop := startLoop(t, e)
	plain := startPlain(t, e)

	cases := []struct {
		raw    string
		byLoop bool
	}{
		{get("site.localhost", "/"), true},
		{get("site.localhost:8080", "/?utm=1"), true},
		{get("Site.LOCALHOST", "/index.html", "Accept-Encoding: gzip, br\r\n"), true},
		{get("site.localhost", "/", "Accept-Encoding: gzip\r\n"), true},
		{get("site.localhost", "/", "Accept-Encoding: br;q=0, gzip;q=0\r\n"), true},
		{"HEAD / HTTP/1.1\r\nHost: site.localhost\r\n\r\n", true},
		{get("site.localhost", "/assets/index-BFfRB1bB.js", "Accept-Encoding: br\r\n"), true},
		{get("site.localhost", "/assets/app.3f9a2c1d.css"), true},
		{get("site.localhost", "/about/"), true},
		{get("site.localhost", "/logo.png"), true},
		{get("site.localhost", "/inner.html"), true},
		{get("site.localhost", "/empty.txt"), true},
		{get("big.localhost", "/vendor-4f9c2a1b.js"), true},
		{get("big.localhost", "/vendor-4f9c2a1b.js", "Accept-Encoding: gzip\r\n"), true},
		{"HEAD /vendor-4f9c2a1b.js HTTP/1.1\r\nHost: big.localhost\r\n\r\n", true},
		// Left to net/http:
		{get("big.localhost", "/video.qqq"), false},
		{get("site.localhost", "/docs"), false},
		{get("site.localhost", "/about"), false},
		{get("site.localhost", "/nope"), false},
		{get("site.localhost", "/secret"), false},
		{get("site.localhost", "/passwd"), false},
		{get("site.localhost", "/etc/passwd"), false},
		{get("site.localhost", "/dirlink/"), true}, // a link inside the site
		{get("site.localhost", "/%2e%2e/secret.key"), false},
		{get("site.localhost", "/a/../index.html"), false},
		{get("site.localhost", "//index.html"), false},
		{get("site.localhost", "/", "Range: bytes=0-9\r\n"), false},
		{get("site.localhost", "/", "If-Modified-Since: Mon, 02 Jan 2040 15:04:05 GMT\r\n"), false},
		{get("spa.localhost", "/users/jane"), false},
		{get("off.localhost", "/"), false},
		{get("nobody.localhost", "/"), false},
		{get("localhost:8080", "/"), false},
		{get("a.b.localhost", "/"), false},
		{"GET / HTTP/1.0\r\nHost: site.localhost\r\n\r\n", false},
		{"GET http://site.localhost/ HTTP/1.1\r\nHost: site.localhost\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nHost: site.localhost\r\nHost: off.localhost\r\n\r\n", false},
		{"GET / HTTP/1.1\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nHost: site.localhost\r\nX-Folded: a\r\n b\r\n\r\n", false},
		{"POST / HTTP/1.1\r\nHost: site.localhost\r\nContent-Length: 5\r\n\r\nhello", false},
		{"POST /api/x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello", false},
		{"DELETE / HTTP/1.1\r\nHost: site.localhost\r\n\r\n", false},
	}
	for _, tc := range cases {
		method := strings.Fields(tc.raw)[0]
		want := exchange(t, plain, tc.raw, 1, method)[0]
		loop.takeLog()
		got := exchange(t, loop.addr, tc.raw, 1, method)[0]
		logged := loop.takeLog()
		name := strings.SplitN(tc.raw, "\r\n", 3)
		if got.StatusCode != want.StatusCode {
			t.Errorf("%q: status %d through the loop, %d through net/http", name[:2], got.StatusCode, want.StatusCode)
		}
		gb, _ := io.ReadAll(got.Body)
		wb, _ := io.ReadAll(want.Body)
		if string(gb) != string(wb) {
			t.Errorf("%q: bodies differ (%d bytes through the loop, %d through net/http)", name[:2], len(gb), len(wb))
		}
		got.Header.Del("Date")
		want.Header.Del("Date")
		for k := range want.Header {
			if !slices.Equal(got.Header[k], want.Header[k]) {
				t.Errorf("%q: %s is %q through the loop, %q through net/http", name[:2], k, got.Header[k], want.Header[k])
			}
		}
		for k := range got.Header {
			if want.Header[k] == nil {
				t.Errorf("%q: the loop adds %s: %q", name[:2], k, got.Header[k])
			}
		}
		if by := len(logged) == 1; by != tc.byLoop {
			t.Errorf("%q: answered by the loop = %v, want %v (log %q)", name[:2], by, tc.byLoop, logged)
		}
		if tc.byLoop && len(logged) == 1 {
			fields := strings.Fields(logged[0])
			if fields[0] != method || fields[3] != fmt.Sprint(want.StatusCode) || fields[5] != "127.0.0.1" {
				t.Errorf("%q: logged %q", name[:2], logged[0])
			}
		}
	}
}

// TestLoopPipelinesAndHandsOver sends several requests in one write: the
// loop answers the first, net/http the rest of the connection's life,
// in order (with the loops off, net/http all of them, the same).
func TestLoopPipelinesAndHandsOver(t *testing.T) {
	for _, mode := range loopModes {
		t.Run(mode.name, func(t *testing.T) {
			e, tbl, _ := fixture(t)
			_, big := bigFixture(t, tbl)
			loop := startEdge(t, e, mode.on)

			raw := get("site.localhost", "/robots.txt") + get("site.localhost", "/nope") +
				get("site.localhost", "/robots.txt") + "POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi"
			got := exchange(t, loop.addr, raw, 4)
			bodies := []string{}
			for _, r := range got {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, fmt.Sprint(r.StatusCode, " ", string(b)))
			}
			if bodies[0] != "200 User-agent: *" || !strings.HasPrefix(bodies[1], "404 ") ||
				bodies[2] != "200 User-agent: *" || bodies[3] != `200 platform POST /form "hi"` {
				t.Errorf("answers: %q", bodies)
			}
			if l := loop.takeLog(); mode.on && len(l) != 1 {
				t.Errorf("the loop logged %q, want the first request only", l)
			}

			// Five 300 KB answers asked for at once, read only later: the loop
			// waits for the socket to drain, then answers the next.
			raw = strings.Repeat(get("big.localhost", "/vendor-4f9c2a1b.js")+get("site.localhost", "/robots.txt"), 5)
			c, err := net.Dial("tcp", loop.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, raw)
			time.Sleep(300 * time.Millisecond)
			br := bufio.NewReaderSize(c, 512)
			for i := 0; i < 10; i++ {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("answer %d: %v", i+1, err)
				}
				b, _ := io.ReadAll(resp.Body)
				want := big
				if i%2 == 1 {
					want = "User-agent: *"
				}
				if string(b) != want {
					t.Fatalf("answer %d: %d bytes, want %d", i+1, len(b), len(want))
				}
			}
			if l := loop.takeLog(); mode.on && len(l) != 10 {
				t.Errorf("the loop logged %d answers, want 10", len(l))
			}
		})
	}
}

func TestLoopConnectionCloseAndShutdown(t *testing.T) {
	e, _, _ := fixture(t)
	loop := startLoop(t, e)

	c, err := net.Dial("tcp", loop.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, get("site.localhost", "/robots.txt", "Connection: close\r\n"))
	all, err := io.ReadAll(c) // ends when the loop closes the connection
	c.Close()
	if err != nil || !strings.Contains(string(all), "Connection: close\r\n") || !strings.HasSuffix(string(all), "User-agent: *") {
		t.Fatalf("Connection: close answer %q, %v", all, err)
	}

	// An idle keep-alive connection is closed by Shutdown; no new one is
	// taken after it.
	idle, err := net.Dial("tcp", loop.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(idle, get("site.localhost", "/robots.txt"))
	br := bufio.NewReader(idle)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive answer: %v", err)
	} else {
		io.ReadAll(resp.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := loop.loop.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection after Shutdown: %v, want EOF", err)
	}
	if c, err := net.DialTimeout("tcp", loop.addr, time.Second); err == nil {
		c.SetDeadline(time.Now().Add(2 * time.Second))
		io.WriteString(c, get("site.localhost", "/robots.txt"))
		if b, _ := io.ReadAll(c); len(b) > 0 {
			t.Errorf("answered after Shutdown: %q", b)
		}
		c.Close()
	}
}

func TestLoopIdleTimeout(t *testing.T) {
	e, _, _ := fixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.NewLoop(ln, edge.LoopOptions{IsLive: isLive, IdleTimeout: time.Second, ReadHeaderTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l.Serve()
	defer l.Close()
	for _, first := range []string{get("site.localhost", "/robots.txt"), "GET / HTTP/1.1\r\nHost: site.loc"} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, first)
		start := time.Now()
		io.ReadAll(c)
		if d := time.Since(start); d < 900*time.Millisecond || d > 4*time.Second {
			t.Errorf("%q: closed after %v, want about 1-2 s", first, d)
		}
		c.Close()
	}
}

// TestLoopFollowsSiteSwitch: a large file the loop keeps open is never
// served once the site points at a new deployment.
func TestLoopFollowsSiteSwitch(t *testing.T) {
	for _, mode := range loopModes {
		t.Run(mode.name, func(t *testing.T) {
			e, tbl, _ := fixture(t)
			_, big := bigFixture(t, tbl)
			loop := startEdge(t, e, mode.on)
			body := func() string {
				r := exchange(t, loop.addr, get("big.localhost", "/vendor-4f9c2a1b.js"), 1)[0]
				b, _ := io.ReadAll(r.Body)
				return string(b)
			}
			if body() != big {
				t.Fatal("first deployment's file not served")
			}
			dir := t.TempDir()
			next := strings.Repeat("const next = 2;\n", 20000)
			if err := os.WriteFile(filepath.Join(dir, "vendor-4f9c2a1b.js"), []byte(next), 0o644); err != nil {
				t.Fatal(err)
			}
			tbl.Set("big", edge.Site{DeploymentID: "big2", Dir: dir, Status: gantry.DeploymentLive})
			for i := 0; i < 4; i++ { // both loops
				if got := body(); got != next {
					t.Fatalf("after the switch: %d bytes of the old deployment's file", len(got))
				}
			}
			if l := loop.takeLog(); mode.on && len(l) != 5 {
				t.Errorf("the loop answered %d of 5", len(l))
			}
		})
	}
}
