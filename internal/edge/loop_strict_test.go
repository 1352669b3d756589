package edge_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// pythonApp is a keep-alive HTTP/1.1 app on Python's http.server (the
// server under Flask's and Django's development servers): it answers
// "answer for <path>" after a second for /slow, at once otherwise, and
// prints every request line it reads.
const pythonApp = `
import http.server, sys, time

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        print(repr(self.requestline), flush=True)
        if self.path == "/slow":
            time.sleep(1)
        body = ("answer for " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
`

// startPythonApp runs pythonApp on loopback until the test ends. It
// returns the app's address and the request lines it has read so far.
func startPythonApp(t *testing.T) (string, func() []string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for this test: %v", err)
	}
	cmd := exec.Command(python, "-c", pythonApp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("the Python app did not start")
	}
	port, err := strconv.Atoi(lines.Text())
	if err != nil {
		t.Fatalf("the Python app printed %q, not its port", lines.Text())
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		for lines.Scan() {
			mu.Lock()
			seen = append(seen, lines.Text())
			mu.Unlock()
		}
	}()
	return "127.0.0.1:" + strconv.Itoa(port), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestQueuePoisoningRefused replays the attack of issue 12 against a
// Python http.server app behind the edge: a request line with tabs and
// bare LFs that the app reads as two requests. The edge must refuse it
// (400) without passing anything on, and the next visitor, whose request
// would travel on the same pooled connection to the app (one loop), must
// get their own answer — not the second answer the app would have owed
// the attacker. Both ways: with the loops on and off.
func TestQueuePoisoningRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python app")
	}
	for _, mode := range loopModes {
		t.Run(mode.name, func(t *testing.T) {
			addr, seen := startPythonApp(t)
			tbl := edge.NewTable()
			tbl.Set("victim", edge.Site{DeploymentID: "victim", Status: gantry.DeploymentLive, ProxyTarget: addr})
			e := edge.New("localhost", tbl, "http://localhost:8080")
			s := startEdge(t, e, mode.on, func(o *edge.LoopOptions) { o.Loops = 1 })

			// A first visitor: the edge now holds a connection to the app.
			if r := exchange(t, s.addr, get("victim.localhost", "/first"), 1)[0]; r.StatusCode != 200 {
				t.Fatalf("first visitor: status %d", r.StatusCode)
			}
			attack := "GET\t/a\tHTTP/1.1\nHost:x\n\nGET /slow HTTP/1.1\r\nHost: victim.localhost\r\n\r\n"
			got := exchange(t, s.addr, attack, 1)[0]
			body, _ := io.ReadAll(got.Body)
			if got.StatusCode != http.StatusBadRequest {
				t.Errorf("the attack got %d %q, want 400", got.StatusCode, body)
			}
			r := exchange(t, s.addr, get("victim.localhost", "/visitor"), 1)[0]
			if b, _ := io.ReadAll(r.Body); r.StatusCode != 200 || string(b) != "answer for /visitor" {
				t.Errorf("the next visitor got %d %q, want their own answer", r.StatusCode, b)
			}
			want := []string{`'GET /first HTTP/1.1'`, `'GET /visitor HTTP/1.1'`}
			if lines := seen(); strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("the app read %q, want %q (nothing of the attack)", lines, want)
			}
		})
	}
}

// badAnswers are malformed answers from an app: the loops relay none of
// them (the client gets the 502 page); net/http refuses those marked both
// too, and reads the others its own way, writing a head of its own.
var badAnswers = []struct {
	raw  string
	both bool
}{
	{"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok", true},
	{"HTTP/1.x 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
	{"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok", true},
	{"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", true},
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", true},
	{"HTTP/1.1 200 OK\r\n Folded: x\r\nContent-Length: 2\r\n\r\nok", true},
	{"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 2\r\n\r\nok", false},
	{"HTTP/1.1 200 OK\r\nX-A: a\nSet-Cookie: evil=1\r\nContent-Length: 2\r\n\r\nok", false},
	{"HTTP/1.1 200 OK\r\nX-A: a\r\n folded\r\nContent-Length: 2\r\n\r\nok", false},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false},
}

// TestMalformedAnswerIs502 has a raw app give malformed answers: each
// becomes the edge's 502 page (with the loops off, those net/http
// refuses), the connection to the app is closed (not
// kept for the next request), and the client's next request on the same
// connection gets the app's good answer over a new one. Both ways.
func TestMalformedAnswerIs502(t *testing.T) {
	for _, mode := range loopModes {
		t.Run(mode.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			var mu sync.Mutex
			accepted, closed := 0, 0
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					accepted++
					mu.Unlock()
					go func() {
						defer c.Close()
						c.SetDeadline(time.Now().Add(10 * time.Second))
						br := bufio.NewReader(c)
						for {
							req, err := http.ReadRequest(br)
							if err != nil {
								mu.Lock()
								closed++ // the edge closed the connection (or timed out: counted too, but late)
								mu.Unlock()
								return
							}
							io.Copy(io.Discard, req.Body)
							if n, err := strconv.Atoi(req.URL.Query().Get("bad")); err == nil {
								io.WriteString(c, badAnswers[n].raw)
							} else {
								io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood")
							}
						}
					}()
				}
			}()
			tbl := edge.NewTable()
			tbl.Set("app", edge.Site{DeploymentID: "app", Status: gantry.DeploymentLive, ProxyTarget: ln.Addr().String()})
			e := edge.New("localhost", tbl, "http://localhost:8080")
			s := startEdge(t, e, mode.on, func(o *edge.LoopOptions) { o.Loops = 1 })
			for i, answer := range badAnswers {
				if !mode.on && !answer.both {
					continue
				}
				bad := answer.raw
				mu.Lock()
				before := accepted
				mu.Unlock()
				raw := get("app.localhost", "/?bad="+strconv.Itoa(i)) + get("app.localhost", "/good")
				got := exchange(t, s.addr, raw, 2)
				b0, _ := io.ReadAll(got[0].Body)
				b1, _ := io.ReadAll(got[1].Body)
				if got[0].StatusCode != http.StatusBadGateway || !strings.Contains(string(b0), "app.localhost") {
					t.Errorf("%q: got %d %.60q, want the 502 page", bad, got[0].StatusCode, b0)
				}
				if got[1].StatusCode != 200 || string(b1) != "good" {
					t.Errorf("%q: the next request got %d %q", bad, got[1].StatusCode, b1)
				}
				deadline := time.Now().Add(5 * time.Second)
				for {
					mu.Lock()
					a, c := accepted, closed
					mu.Unlock()
					if a > before && c == a-1 {
						break // every connection closed but the good answer's, kept for the next request
					}
					if time.Now().After(deadline) {
						t.Errorf("%q: %d connections to the app made (%d before), %d closed: want a new one, all but one closed", bad, a, before, c)
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}
