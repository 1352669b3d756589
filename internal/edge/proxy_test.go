package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// appServer is a stand-in for a server app: it echoes what it received,
// streams events, tunnels upgraded connections, and can be made slow.
func appServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-App", "yes")
		fmt.Fprintf(w, "%s %s host=%s xff=%s xfh=%s xfp=%s len=%d",
			r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("X-Forwarded-For"),
			r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Forwarded-Proto"), len(body))
	})
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "data: tick %d\n\n", i)
			rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		io.WriteString(w, "finally")
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "upgrade required", http.StatusUpgradeRequired)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		// Echo lines back in upper case until the client closes.
		for {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			brw.WriteString(strings.ToUpper(line))
			brw.Flush()
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// proxyEdge serves the edge on loopback with "app" proxied to target.
func proxyEdge(t *testing.T, target string, cfg edge.ProxyConfig) (*edge.Table, string) {
	t.Helper()
	table := edge.NewTable()
	table.Set("app", edge.Site{DeploymentID: "d1", Status: gantry.DeploymentLive, ProxyTarget: target})
	table.Set("off", edge.Site{DeploymentID: "d2", Status: gantry.DeploymentStopped, ProxyTarget: target})
	e := edge.New("localhost", table, "http://localhost:8080")
	e.ConfigureProxy(cfg)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return table, srv.Listener.Addr().String()
}

func do(t *testing.T, addr, method, host, path string, body io.Reader, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestProxy(t *testing.T) {
	t.Parallel()
	app := appServer(t)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{MaxBodySize: 1 << 20})

	resp, body := do(t, addr, "POST", "app.localhost:8080", "/echo?x=1", strings.NewReader("hello"),
		map[string]string{"X-Forwarded-For": "6.6.6.6", "X-Forwarded-Proto": "https"})
	want := "POST /echo?x=1 host=app.localhost:8080 xff=127.0.0.1 xfh=app.localhost:8080 xfp=http len=5"
	if resp.StatusCode != 200 || body != want || resp.Header.Get("X-App") != "yes" {
		t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, body, want)
	}
	if resp.Header.Get("X-Content-Type-Options") != "" {
		t.Errorf("the edge added headers to the app's answer: %v", resp.Header)
	}

	// Bodies over the limit: announced, or found while streaming.
	resp, body = do(t, addr, "PUT", "app.localhost", "/echo", strings.NewReader(strings.Repeat("x", 2<<20)), nil)
	if resp.StatusCode != 413 || !strings.Contains(body, "This request is too large") {
		t.Fatalf("announced big body: got %d %q", resp.StatusCode, body)
	}
	chunked := io.MultiReader(strings.NewReader(strings.Repeat("y", 2<<20)))
	resp, _ = do(t, addr, "PUT", "app.localhost", "/echo", chunked, nil)
	if resp.StatusCode != 413 {
		t.Fatalf("chunked big body: got %d, want 413", resp.StatusCode)
	}

	// A stopped app's subdomain answers 503 without reaching the app.
	resp, body = do(t, addr, "GET", "off.localhost", "/echo", nil, nil)
	if resp.StatusCode != 503 || !strings.Contains(body, "This app is stopped") {
		t.Fatalf("stopped: got %d %q", resp.StatusCode, body)
	}
}

func TestProxyTrustForwarded(t *testing.T) {
	t.Parallel()
	app := appServer(t)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{TrustForwarded: true})
	_, body := do(t, addr, "GET", "app.localhost", "/echo", nil,
		map[string]string{"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "app.example.com"})
	if want := "GET /echo host=app.localhost xff=203.0.113.9, 127.0.0.1 xfh=app.example.com xfp=https len=0"; body != want {
		t.Fatalf("got %q, want %q", body, want)
	}
}

func TestProxyAppDownAndTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	_, addr := proxyEdge(t, down, edge.ProxyConfig{})
	resp, body := do(t, addr, "GET", "app.localhost", "/", nil, nil)
	if resp.StatusCode != 502 || !strings.Contains(body, "This app is not responding") || !strings.Contains(body, "app.localhost") {
		t.Fatalf("app down: got %d %q", resp.StatusCode, body)
	}

	app := appServer(t)
	_, addr = proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{ResponseHeaderTimeout: 300 * time.Millisecond})
	resp, body = do(t, addr, "GET", "app.localhost", "/slow", nil, nil)
	if resp.StatusCode != 504 || !strings.Contains(body, "took too long") {
		t.Fatalf("slow app: got %d %q", resp.StatusCode, body)
	}
}

func TestProxyStreamsEvents(t *testing.T) {
	t.Parallel()
	app := appServer(t)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	req, _ := http.NewRequest("GET", "http://"+addr+"/events", nil)
	req.Host = "app.localhost"
	start := time.Now()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: tick 1\n" {
		t.Fatalf("got %q %v", line, err)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Fatalf("the first event took %s: the proxy buffers the stream", d)
	}
}

func TestProxyUpgrade(t *testing.T) {
	t.Parallel()
	app := appServer(t)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(conn, "GET /ws HTTP/1.1\r\nHost: app.localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("got %v %v, want 101", resp, err)
	}
	for _, msg := range []string{"hello\n", "again\n"} {
		io.WriteString(conn, msg)
		got, err := br.ReadString('\n')
		if err != nil || got != strings.ToUpper(msg) {
			t.Fatalf("echo: got %q %v", got, err)
		}
	}
}

func TestDrainWaitsForRequestsInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var started atomic.Int32
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		<-release
		io.WriteString(w, "done")
	}))
	defer app.Close()
	e, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{})
	got := make(chan int, 1)
	go func() {
		resp, _ := do(t, addr, "GET", "app.localhost", "/", nil, nil)
		got <- resp.StatusCode
	}()
	for started.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	drained := make(chan struct{})
	go func() { e.Drain(context.Background(), app.Listener.Addr().String()); close(drained) }()
	select {
	case <-drained:
		t.Fatal("Drain returned while a request was in flight")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not return after the request ended")
	}
	if code := <-got; code != 200 {
		t.Fatalf("got %d, want 200", code)
	}

	// A bounded drain gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	e.Drain(ctx, "127.0.0.1:1")
}
