package edge_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deadline/deadlinetest"
	"github.com/gantryhq/gantry/internal/edge"
)

// TestSlowUpload: on the net/http path, a body for a live site that
// trickles in is cut off once the UploadTimeout has passed — a proxied
// one answered 408 — while a large body sent at once reaches the app.
func TestSlowUpload(t *testing.T) {
	t.Parallel()
	app := appServer(t)
	_, addr := proxyEdge(t, app.Listener.Addr().String(), edge.ProxyConfig{UploadTimeout: time.Second})

	d, got := deadlinetest.Trickle(t, addr, "POST", "app.localhost", "/echo")
	if d > 2500*time.Millisecond {
		t.Errorf("proxied: connection held %v, want about 1 s (the body would take 20 s)", d)
	}
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, "This request took too long to arrive") ||
		!strings.Contains(got, "\r\nConnection: close\r\n") {
		t.Errorf("proxied: got %.300q, want the 408 page and Connection: close", got)
	}
	// A stopped site answers without reading the body; net/http's discard
	// of it is bounded the same way.
	if d, _ := deadlinetest.Trickle(t, addr, "POST", "off.localhost", "/"); d > 2500*time.Millisecond {
		t.Errorf("unread: connection held %v, want about 1 s", d)
	}

	big := bytes.Repeat([]byte("x"), 8<<20)
	res, body := do(t, addr, "POST", "app.localhost", "/echo", bytes.NewReader(big), nil)
	if res.StatusCode != 200 || !strings.Contains(body, fmt.Sprintf("len=%d", len(big))) {
		t.Errorf("8 MiB upload: got %d %q", res.StatusCode, body)
	}
}

// TestLoopSlowUpload: the loops close a connection whose body for an app
// has not arrived within the UploadTimeout, or whose head has not arrived
// within ReadHeaderTimeout, however steadily it trickles; a body too
// large for a loop goes to net/http and arrives.
func TestLoopSlowUpload(t *testing.T) {
	t.Parallel()
	tbl := edge.NewTable()
	tbl.Set("app", edge.Site{DeploymentID: "app", Status: gantry.DeploymentLive, ProxyTarget: startApp(t)})
	e := edge.New("localhost", tbl, "http://localhost:8080")
	e.ConfigureProxy(edge.ProxyConfig{UploadTimeout: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.NewLoop(ln, edge.LoopOptions{IsLive: isLive, ReadHeaderTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l.Serve()
	t.Cleanup(func() { l.Close() })
	addr := l.Addr().String()

	// The sweep runs once a second: allow it one more.
	d, got := deadlinetest.Trickle(t, addr, "POST", "app.localhost", "/echo")
	if d > 3500*time.Millisecond || got != "" {
		t.Errorf("body: connection held %v with %q, want closed after about 1-2 s", d, got)
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadlinetest.Giveup))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: app.localhost\r\n")
	start := time.Now()
	go func() {
		for i := 0; i < 100; i++ {
			time.Sleep(200 * time.Millisecond)
			if _, err := fmt.Fprintf(c, "X-Slow-%d: 1\r\n", i); err != nil {
				return
			}
		}
	}()
	io.ReadAll(c)
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("head: connection held %v, want closed after about 1-2 s", d)
	}

	body := strings.Repeat("y", 1<<20)
	raw := fmt.Sprintf("POST /echo HTTP/1.1\r\nHost: app.localhost\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	hs := startLoop(t, e)
	res := exchange(t, hs.addr, raw, 1, "POST")[0]
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !bytes.Contains(b, []byte(`body="yyyy`)) {
		t.Errorf("1 MiB upload through the loop: got %d %.100q", res.StatusCode, b)
	}
}
