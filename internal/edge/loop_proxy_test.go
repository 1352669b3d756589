package edge_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// startApp runs a server app on loopback with the answers a proxy must
// pass on: known length, chunked, streamed, ended by closing, no body,
// informational, large, slow; and an echo of what the app received.
func startApp(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-App", "yes")
		io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s host=%s xff=%q xfh=%q xfp=%q conn=%q custom=%q body=%q",
			r.Method, r.URL.RequestURI(), r.Host, r.Header.Values("X-Forwarded-For"), r.Header.Get("X-Forwarded-Host"),
			r.Header.Get("X-Forwarded-Proto"), r.Header.Values("Connection"), r.Header.Get("X-Custom"), body)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := range 5 {
			fmt.Fprintf(w, "part %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(2<<20))
		w.Write([]byte(strings.Repeat("0123456789abcdef", (2<<20)/16)))
	})
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/notmodified", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"v1"`)
		w.WriteHeader(http.StatusNotModified)
	})
	mux.HandleFunc("/created", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/things/1")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "made")
	})
	mux.HandleFunc("/hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</app.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "after hints")
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		// An HTTP/1.0-style answer: no length, ended by closing.
		c, bw, _ := http.NewResponseController(w).Hijack()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Old: 1\r\n\r\nuntil the end")
		bw.Flush()
		c.Close()
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(4 * time.Second):
		case <-r.Context().Done():
		}
		io.WriteString(w, "late")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// refusedAddr is a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func proxyFixture(t *testing.T) *edge.Edge {
	tbl := edge.NewTable()
	tbl.Set("app", edge.Site{DeploymentID: "app", Status: gantry.DeploymentLive, ProxyTarget: startApp(t)})
	tbl.Set("down", edge.Site{DeploymentID: "down", Status: gantry.DeploymentLive, ProxyTarget: refusedAddr(t)})
	e := edge.New("localhost", tbl, "http://localhost:8080")
	e.ConfigureProxy(edge.ProxyConfig{ResponseHeaderTimeout: 1500 * time.Millisecond, MaxBodySize: 1 << 10})
	return e
}

// TestLoopProxiesAsNetHTTP sends the same requests for a server app to
// the loop and to net/http's ReverseProxy and expects the same answers.
func TestLoopProxiesAsNetHTTP(t *testing.T) {
	e := proxyFixture(t)
	loop := startLoop(t, e)
	plain := startPlain(t, e)

	cases := []struct {
		raw    string
		byLoop bool
	}{
		{get("app.localhost", "/json"), true},
		{get("app.localhost", "/echo?q=1&r=2", "X-Custom: kept\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\n"), true},
		{"POST /echo HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nhello world", true},
		{"PUT /echo HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: 0\r\n\r\n", true},
		{"HEAD /json HTTP/1.1\r\nHost: app.localhost\r\n\r\n", true},
		{get("app.localhost", "/chunked"), true},
		{get("app.localhost", "/big"), true},
		{get("app.localhost", "/nocontent"), true},
		{get("app.localhost", "/notmodified", "If-None-Match: \"v1\"\r\n"), true},
		{"POST /created HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: 0\r\n\r\n", true},
		{get("app.localhost", "/hints"), true},
		{get("app.localhost", "/close"), true},
		{get("app.localhost", "/missing"), true},
		{get("app.localhost", "/json", "Connection: close\r\n"), true},
		{get("down.localhost", "/"), true},
		{get("app.localhost", "/slow"), true},
		// Left to net/http:
		{"POST /echo HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: 2000\r\n\r\n" + strings.Repeat("x", 2000), false},
		{"POST /echo HTTP/1.1\r\nHost: app.localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", false},
		{get("app.localhost", "/echo", "Connection: Upgrade\r\nUpgrade: websocket\r\n"), false},
		{get("app.localhost", "/echo", "Connection: X-Private\r\nX-Private: 1\r\n"), false},
		{"GET /echo HTTP/1.0\r\nHost: app.localhost\r\n\r\n", false},
		// Not taken as they are (the loops' parser): net/http answers
		// 400, or reads and proxies them itself.
		{"GET\t/echo\tHTTP/1.1\nHost:x\n\nGET /slow HTTP/1.1\r\nHost: app.localhost\r\n\r\n", false},
		{"GET /echo HTTP/1.1\nHost: app.localhost\n\n", false},
		{"GET /echo HTTP/1.1\r\nHost: app.localhost\nX-Custom: smuggled\r\n\r\n", false},
		{"GET /echo HTTP/1.1\r\nHost: app.localhost\r\nX-Custom: a\x00b\r\n\r\n", false},
		{"GET /echo HTTP/1.1\r\nHost: app.localhost\r\nX-Custom: a\rb\r\n\r\n", false},
		{"GET /echo HTTP/1.1\r\nHost: app.localhost\r\nX-Custom : a\r\n\r\n", false},
		{"GET /echo HTTP/1.1\r\nHost: app.localhost\r\nX-Custom: a\r\n folded\r\n\r\n", false},
		{"GET /echo%zz HTTP/1.1\r\nHost: app.localhost\r\n\r\n", false},
		{"GET /echo\x01 HTTP/1.1\r\nHost: app.localhost\r\n\r\n", false},
		{"GE\x00T /echo HTTP/1.1\r\nHost: app.localhost\r\n\r\n", false},
		{"GET /echo HTTP/1.1\r\nHost: app.localhost:8080 x\r\n\r\n", false},
		{"POST /echo HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: +5\r\n\r\nhello", false},
		{"POST /echo HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: -0\r\n\r\n", false},
	}
	for _, tc := range cases {
		method := strings.Fields(tc.raw)[0]
		name := strings.SplitN(tc.raw, "\r\n", 3)[:2]
		want := exchange(t, plain, tc.raw, 1, method)[0]
		loop.takeLog()
		got := exchange(t, loop.addr, tc.raw, 1, method)[0]
		logged := loop.takeLog()
		if got.StatusCode != want.StatusCode {
			t.Errorf("%q: status %d through the loop, %d through net/http", name, got.StatusCode, want.StatusCode)
		}
		gb, _ := io.ReadAll(got.Body)
		wb, _ := io.ReadAll(want.Body)
		// The echo shows the client's port in X-Forwarded-For only via
		// the address, which is the same host: compare as is.
		if string(gb) != string(wb) {
			t.Errorf("%q: bodies differ:\n loop     %.300q\n net/http %.300q", name, gb, wb)
		}
		for _, h := range []http.Header{got.Header, want.Header} {
			h.Del("Date")
		}
		if !slices.Equal(got.TransferEncoding, want.TransferEncoding) {
			t.Errorf("%q: Transfer-Encoding %q through the loop, %q through net/http", name, got.TransferEncoding, want.TransferEncoding)
		}
		for k := range want.Header {
			if !slices.Equal(got.Header[k], want.Header[k]) {
				t.Errorf("%q: %s is %q through the loop, %q through net/http", name, k, got.Header[k], want.Header[k])
			}
		}
		for k := range got.Header {
			if want.Header[k] == nil {
				t.Errorf("%q: the loop adds %s: %q", name, k, got.Header[k])
			}
		}
		if by := len(logged) == 1; by != tc.byLoop {
			t.Errorf("%q: answered by the loop = %v, want %v (log %q)", name, by, tc.byLoop, logged)
		}
		if tc.byLoop && len(logged) == 1 && strings.Fields(logged[0])[3] != fmt.Sprint(want.StatusCode) {
			t.Errorf("%q: logged %q, want status %d", name, logged[0], want.StatusCode)
		}
	}
}

// TestLoopProxyKeepsAlive: many requests on one client connection, some
// pipelined, reuse the loop's connections to the app and come back in
// order; a slow reader of a large answer gets all of it. Both ways.
func TestLoopProxyKeepsAlive(t *testing.T) {
	for _, mode := range loopModes {
		t.Run(mode.name, func(t *testing.T) {
			loop := startEdge(t, proxyFixture(t), mode.on)
			raw := ""
			for i := range 20 {
				raw += get("app.localhost", fmt.Sprintf("/echo?n=%d", i))
			}
			got := exchange(t, loop.addr, raw, 20)
			for i, r := range got {
				b, _ := io.ReadAll(r.Body)
				if !strings.HasPrefix(string(b), fmt.Sprintf("GET /echo?n=%d host=app.localhost", i)) {
					t.Fatalf("answer %d: %q", i, b)
				}
			}

			c, err := net.Dial("tcp", loop.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, get("app.localhost", "/big")+get("app.localhost", "/json"))
			time.Sleep(200 * time.Millisecond) // the answer fills the socket buffers
			br := bufio.NewReaderSize(c, 1024)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			if n != 2<<20 {
				t.Fatalf("large answer: %d bytes", n)
			}
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != `{"ok":true}` {
				t.Fatalf("after the large answer: %q", b)
			}
			if l := loop.takeLog(); mode.on && len(l) != 22 {
				t.Errorf("logged %d lines, want 22", len(l))
			}
		})
	}
}
