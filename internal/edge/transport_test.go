package edge_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/edge"
)

// countingApp is an app that counts the connections the edge opens to it.
func countingApp(t *testing.T, h http.HandlerFunc, idle time.Duration) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	app := httptest.NewUnstartedServer(h)
	app.Config.IdleTimeout = idle
	app.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	app.Start()
	t.Cleanup(app.Close)
	return app, &conns
}

func TestProxyKeepsConnectionsToApps(t *testing.T) {
	t.Parallel()
	app, conns := countingApp(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/empty" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path == "/chunked" {
			w.Write([]byte("part one, "))
			w.(http.Flusher).Flush()
			w.Write([]byte("part two"))
			return
		}
		io.WriteString(w, r.Method+" "+string(body))
	}, time.Minute)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	for i := range 20 {
		method, body, want := "GET", "", "GET "
		if i%2 == 1 {
			method, body, want = "POST", "data", "POST data"
		}
		resp, got := do(t, addr, method, "app.localhost", "/", strings.NewReader(body), nil)
		if resp.StatusCode != 200 || got != want {
			t.Fatalf("request %d: got %d %q, want %q", i, resp.StatusCode, got, want)
		}
	}
	for path, want := range map[string]string{"/empty": "", "/chunked": "part one, part two"} {
		if resp, got := do(t, addr, "GET", "app.localhost", path, nil, nil); got != want || resp.StatusCode/100 != 2 {
			t.Fatalf("%s: got %d %q", path, resp.StatusCode, got)
		}
	}
	if resp, got := do(t, addr, "HEAD", "app.localhost", "/", nil, nil); resp.StatusCode != 200 || got != "" {
		t.Fatalf("HEAD: got %d %q", resp.StatusCode, got)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("the edge opened %d connections to the app for sequential requests, want 1", n)
	}
}

func TestProxyRecoversFromClosedIdleConnections(t *testing.T) {
	t.Parallel()
	// The app closes connections idle for 100 ms, as apps with short
	// keep-alive timeouts do.
	app, conns := countingApp(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, "ok "+string(body))
	}, 100*time.Millisecond)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	for i, tc := range []struct{ method, body string }{{"GET", ""}, {"GET", ""}, {"POST", "x"}, {"GET", ""}, {"PUT", "y"}} {
		if i > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		resp, got := do(t, addr, tc.method, "app.localhost", "/", strings.NewReader(tc.body), nil)
		if resp.StatusCode != 200 || got != "ok "+tc.body {
			t.Fatalf("%s after the app closed the idle connection: got %d %q", tc.method, resp.StatusCode, got)
		}
	}
	if n := conns.Load(); n != 5 {
		t.Fatalf("got %d connections, want 5 (one per request)", n)
	}
}

func TestProxyClosesStreamsClientsLeave(t *testing.T) {
	t.Parallel()
	left := make(chan struct{})
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: hello\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the edge closed its connection
		close(left)
	}))
	defer app.Close()
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET /events HTTP/1.1\r\nHost: app.localhost\r\n\r\n")
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "data: hello") {
			break
		}
	}
	conn.Close()
	select {
	case <-left:
	case <-time.After(5 * time.Second):
		t.Fatal("the app's stream stayed open after the client left")
	}
}

func TestProxyCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	left := make(chan struct{})
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
		close(left)
	}))
	defer app.Close()
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/slow", nil)
	req.Host = "app.localhost"
	go func() { <-started; cancel() }()
	if _, err := http.DefaultTransport.RoundTrip(req); err == nil {
		t.Fatal("the request succeeded")
	}
	select {
	case <-left:
	case <-time.After(5 * time.Second):
		t.Fatal("the app kept waiting after the client left")
	}
}
