package edge_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/edge"
)

// A loop answers a small file from its memory cache, on a kept-alive
// connection, without allocating: a static site's load leaves the garbage
// collector idle, so its pauses and the heap's size (a platform hosting
// 200 apps has twice the heap of an empty one) do not reach the answers'
// latency. The Host carries a port, so the test's own isLive allocates
// nothing either; request logging is off (Log nil).
func TestLoopAnswersWithoutAllocating(t *testing.T) {
	e, _, _ := fixture(t)
	loop := startLoop(t, e, func(o *edge.LoopOptions) { o.Log = nil })
	c, err := net.Dial("tcp", loop.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	req := []byte("GET /robots.txt HTTP/1.1\r\nHost: site.localhost:80\r\nAccept-Encoding: gzip, br\r\n\r\n")
	// The first answers (and their length: the Date line keeps its size).
	var size int
	for range 3 {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(body) != "User-agent: *" {
			t.Fatalf("got %d %q", res.StatusCode, body)
		}
	}
	c.Write(req)
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		n, err := br.Read(buf[size:])
		size += n
		if err != nil {
			break
		}
	}
	c.SetReadDeadline(time.Time{})
	const n = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(br, buf[:size]); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := float64(after.Mallocs-before.Mallocs) / n; per > 0.1 {
		t.Errorf("%.2f allocations a request, want none", per)
	}
}
