//go:build linux

package edge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The loops' parsers against net/http's, on the same bytes. The seed
// corpora are in testdata/fuzz/<FuzzName>/; `make test` runs each target
// for a while (`go test -run=NONE -fuzz=^FuzzLoopRequest$ -fuzztime=20s
// ./internal/edge/`), plain `go test` runs the seeds.

// seenRequest is a request as a net/http handler saw it.
type seenRequest struct {
	method, uri, host string
	header            http.Header
	body              []byte
}

// recorder is a net/http server with `gantry serve`'s limits whose handler
// records every request it is given, by the client's address.
type recorder struct {
	addr string
	mu   sync.Mutex
	seen map[string][]seenRequest
}

func startRecorder(tb testing.TB) *recorder {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	rec := &recorder{addr: ln.Addr().String(), seen: map[string][]seenRequest{}}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			rec.mu.Lock()
			rec.seen[r.RemoteAddr] = append(rec.seen[r.RemoteAddr], seenRequest{r.Method, r.RequestURI, r.Host, r.Header, body})
			rec.mu.Unlock()
			io.WriteString(w, "ok")
		}),
	}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return rec
}

// reads sends raw on a connection of its own, ends the sending side and
// returns the requests net/http's server handed to its handler.
func (rec *recorder) reads(tb testing.TB, raw []byte) []seenRequest {
	c, err := net.Dial("tcp", rec.addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		c.Write(raw)
		c.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(io.Discard, c) // until the server closes: it has handled all it will
	key := c.LocalAddr().String()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := rec.seen[key]
	delete(rec.seen, key)
	return seen
}

// testLoop is an evloop with nothing but an edge, for the parsers.
func testLoop() *evloop {
	e := New("localhost", NewTable(), "http://localhost:8080")
	e.ConfigureProxy(ProxyConfig{})
	return &evloop{l: &Loop{e: e}}
}

// hopByHop are the header fields a proxy does not pass on, and those the
// edge sets itself.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// FuzzLoopRequest feeds the same bytes to the loop's request parser and to
// net/http's server. It fails when the loop takes a request (to answer it
// or pass it on to an app) that net/http refused or read otherwise, or
// when what the loop passes on to the app is not exactly that one request
// as net/http reads it.
func FuzzLoopRequest(f *testing.F) {
	rec := startRecorder(f)
	lp := testLoop()
	maxBody := lp.l.e.proxy.cfg.MaxBodySize
	f.Fuzz(func(t *testing.T, raw []byte) {
		var taken []loopRequest
		var forwarded [][]byte
		for in := raw; len(in) > 0; {
			var r loopRequest
			n, found := r.take(in, 64<<10)
			if found != reqReady || !r.proxied(maxBody) {
				break // net/http takes the connection from here
			}
			taken = append(taken, r)
			forwarded = append(forwarded, lp.appRequest(nil, &r, "127.0.0.1"))
			in = in[n:]
			if r.close {
				break
			}
		}
		if len(taken) == 0 {
			return
		}
		ref := rec.reads(t, raw)
		for i, r := range taken {
			if i >= len(ref) {
				t.Fatalf("the loop takes request %d of %q; net/http refuses it (it handled %d)", i+1, raw, len(ref))
			}
			want := ref[i]
			if got := fmt.Sprintf("%s %s %s %q", r.method, r.target, r.host, r.body); got != fmt.Sprintf("%s %s %s %q", want.method, want.uri, want.host, want.body) {
				t.Fatalf("request %d of %q: the loop reads %s, net/http %s %s %s %q", i+1, raw, got, want.method, want.uri, want.host, want.body)
			}
			// What the app gets is that one request, as net/http reads it.
			br := bufio.NewReader(bytes.NewReader(forwarded[i]))
			app, err := http.ReadRequest(br)
			if err != nil {
				t.Fatalf("request %d of %q: the app cannot read what the loop passes on (%v): %q", i+1, raw, err, forwarded[i])
			}
			body, err := io.ReadAll(app.Body)
			if err != nil || br.Buffered() > 0 {
				t.Fatalf("request %d of %q: passed on as more than one request: %q", i+1, raw, forwarded[i])
			}
			if app.Method != want.method || app.RequestURI != want.uri || app.Host != want.host || !bytes.Equal(body, want.body) {
				t.Fatalf("request %d of %q: the app reads %s %s %s %q, net/http %s %s %s %q", i+1, raw,
					app.Method, app.RequestURI, app.Host, body, want.method, want.uri, want.host, want.body)
			}
			for k, v := range want.header {
				if !slices.Contains(hopByHop, k) && !slices.Equal(app.Header[k], v) {
					t.Fatalf("request %d of %q: the app gets %s %q, net/http read %q", i+1, raw, k, app.Header[k], v)
				}
			}
			for k := range app.Header {
				if want.header[k] == nil && !strings.HasPrefix(k, "X-Forwarded-") {
					t.Fatalf("request %d of %q: the app gets %s, which net/http did not read", i+1, raw, k)
				}
			}
		}
	})
}

// FuzzLoopAnswer feeds an app's answer to the loop's check (headEnd and
// answerHead) and to net/http's client (http.ReadResponse, which the edge's
// net/http path reads answers with). It fails when the loop relays a head
// net/http refuses, or one the client reads otherwise than net/http read
// the app's: another status, other header fields, other framing.
func FuzzLoopAnswer(f *testing.F) {
	lp := testLoop()
	f.Fuzz(func(t *testing.T, head bool, raw []byte) {
		end, ok := headEnd(raw)
		if !ok || end < 0 {
			return // the 502 page, at once or when the app closes
		}
		u := &upConn{c: &lconn{}, headOnly: head}
		if !lp.answerHead(u, raw[:end+2]) {
			return // the 502 page
		}
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		ref, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: method})
		if err != nil {
			t.Fatalf("the loop relays the answer %q; net/http refuses it: %v", raw, err)
		}
		if ref.StatusCode != u.status {
			t.Fatalf("%q: status %d for the loop, %d for net/http", raw, u.status, ref.StatusCode)
		}
		if u.status < 200 {
			return // dropped, as net/http's path does
		}
		got, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(u.head)), &http.Request{Method: method})
		if err != nil {
			t.Fatalf("the client cannot read the loop's head %q for %q: %v", u.head, raw, err)
		}
		if got.StatusCode != ref.StatusCode {
			t.Fatalf("%q: the client reads status %d, net/http %d", raw, got.StatusCode, ref.StatusCode)
		}
		// net/http's client drops Connection: close; the options listed
		// with it are read from the head itself.
		mh, _ := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw[bytes.Index(raw, crlf)+2 : end+4]))).ReadMIMEHeader()
		listed := slices.Clone(hopByHop)
		for _, v := range mh["Connection"] {
			for tok := range strings.SplitSeq(v, ",") {
				listed = append(listed, http.CanonicalHeaderKey(strings.TrimSpace(tok)))
			}
		}
		if len(ref.TransferEncoding) > 0 {
			listed = append(listed, "Content-Length")
		}
		for k, v := range ref.Header {
			if !slices.Contains(listed, k) && !slices.Equal(got.Header[k], v) {
				t.Fatalf("%q: the client reads %s %q, net/http %q", raw, k, got.Header[k], v)
			}
		}
		for k := range got.Header {
			if ref.Header[k] == nil && k != "Date" && k != "Connection" && k != "Content-Length" {
				t.Fatalf("%q: the client reads %s, which net/http did not", raw, k)
			}
		}
		if head || ref.StatusCode == http.StatusNoContent || ref.StatusCode == http.StatusNotModified {
			return
		}
		switch {
		case len(ref.TransferEncoding) > 0:
			if !slices.Equal(got.TransferEncoding, []string{"chunked"}) {
				t.Fatalf("%q: chunked for net/http, not for the client (%q)", raw, got.TransferEncoding)
			}
		case ref.ContentLength >= 0:
			if got.ContentLength != ref.ContentLength || len(got.TransferEncoding) > 0 {
				t.Fatalf("%q: length %d for net/http, %d %q for the client", raw, ref.ContentLength, got.ContentLength, got.TransferEncoding)
			}
		default: // until the app closes: relayed chunked
			if !slices.Equal(got.TransferEncoding, []string{"chunked"}) {
				t.Fatalf("%q: a body until the app closes is relayed as %q", raw, got.TransferEncoding)
			}
		}
	})
}
