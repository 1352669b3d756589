package edge

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// appTransport is the http.RoundTripper the edge proxies plain requests to
// apps with. It keeps idle HTTP/1.1 connections per app address and runs
// each exchange (write the request, read the answer's head, then the body
// as the proxy copies it) on the calling goroutine. http.Transport hands
// every request to two goroutines of its own per connection; for the small
// answers apps mostly give, those hand-offs cost more than the proxying,
// and cut the edge's throughput by half. Requests that ask to switch
// protocols (WebSockets) go to upgrade, an http.Transport.
//
// A connection goes back to the pool only after its answer was read to the
// end with keep-alive on both sides and the request's context still live.
// One that was idle for more than a second, or that is to carry a request
// body, is checked before reuse (the app may have closed it: Node closes
// idle connections after 5 s, Gunicorn after 2 s), and a request without a
// body that fails on a reused connection before any answer arrived is sent
// once more on a new one.
type appTransport struct {
	dialer        net.Dialer
	headerTimeout time.Duration // for the answer's head, from the end of the request
	idleTimeout   time.Duration // idle connections older than this are closed
	maxIdle       int           // idle connections kept per app address
	upgrade       http.RoundTripper

	mu        sync.Mutex
	idle      map[string][]*appConn
	lastSweep time.Time
}

// appConn is one connection to an app.
type appConn struct {
	net.Conn
	addr      string
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

// aLongTimeAgo is a deadline that makes blocked reads and writes fail at once.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip sends req to req.URL.Host and returns the answer; its body must
// be read to the end or closed.
func (t *appTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Upgrade") != "" {
		return t.upgrade.RoundTrip(req)
	}
	ctx := req.Context()
	replayable := req.Body == nil || req.Body == http.NoBody
	for attempt := 0; ; attempt++ {
		c, reused, err := t.conn(ctx, req.URL.Host, !replayable)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, sent, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		_ = c.Close()
		if reused && attempt == 0 && replayable && !sent && ctx.Err() == nil {
			continue // the app had closed the idle connection
		}
		closeBody(req)
		return nil, err
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// exchange writes req on c and reads the answer's head. sent reports
// whether any byte of an answer arrived (a request is then never resent).
func (t *appTransport) exchange(ctx context.Context, c *appConn, req *http.Request) (resp *http.Response, sent bool, err error) {
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, bool, error) {
		stop()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, sent, err
	}
	var body *bodyReader
	if req.Body != nil && req.Body != http.NoBody {
		body = &bodyReader{ReadCloser: req.Body}
		req.Body = body
	}
	if err := req.Write(c.bw); err != nil {
		if body != nil && body.err != nil {
			// The client's body failed (too large, too slow, cut off), not
			// the app: say so even though net/http has cancelled ctx.
			stop()
			return nil, sent, body.err
		}
		return fail(err)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err)
	}
	if t.headerTimeout > 0 {
		_ = c.SetReadDeadline(time.Now().Add(t.headerTimeout))
		if ctx.Err() != nil {
			// Cancelled before the deadline was set: stop's deadline in
			// the past was overwritten, so the read would wait it out.
			return fail(ctx.Err())
		}
	}
	for {
		if _, err := c.br.Peek(1); err != nil {
			return fail(err)
		}
		sent = true
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			return fail(err)
		}
		// 1xx answers (100 Continue, 103 Early Hints) precede the real one.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	if t.headerTimeout > 0 {
		_ = c.SetReadDeadline(time.Time{})
		if ctx.Err() != nil { // cancelled meanwhile: keep the body from waiting
			_ = c.SetDeadline(aLongTimeAgo)
		}
	}
	resp.Body = &appBody{body: resp.Body, c: c, t: t, stop: stop, keep: !resp.Close && !req.Close}
	return resp, true, nil
}

// bodyReader remembers why reading a request's body failed, which
// Request.Write reports in a type of its own.
type bodyReader struct {
	io.ReadCloser
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

// appBody is an answer's body; at its end the connection goes back to the
// pool.
type appBody struct {
	body io.ReadCloser
	c    *appConn
	t    *appTransport
	stop func() bool
	keep bool // keep-alive on both sides
	done bool
}

func (b *appBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.body.Read(p)
	if err != nil {
		b.done = true
		b.release(errors.Is(err, io.EOF))
	}
	return n, err
}

// Close ends the body: a connection whose answer was not read to the end
// is closed rather than drained (it may be an endless stream).
func (b *appBody) Close() error {
	if !b.done {
		b.done = true
		b.release(false)
	}
	return nil
}

func (b *appBody) release(complete bool) {
	// stop is false when the request's context ended first: the
	// connection's deadline is spoilt.
	if b.stop() && complete && b.keep && b.c.br.Buffered() == 0 {
		b.t.put(b.c)
		return
	}
	_ = b.c.Close()
}

// conn returns an idle connection to addr, or dials one. With check, an
// idle connection is always checked before reuse (the request cannot be
// sent again).
func (t *appTransport) conn(ctx context.Context, addr string, check bool) (*appConn, bool, error) {
	now := time.Now()
	var stale []*appConn
	t.mu.Lock()
	list := t.idle[addr]
	var c *appConn
	for len(list) > 0 {
		last := list[len(list)-1]
		list = list[:len(list)-1]
		if now.Sub(last.idleSince) > t.idleTimeout {
			stale = append(stale, last)
			continue
		}
		c = last
		break
	}
	if t.idle != nil {
		t.idle[addr] = list
	}
	t.mu.Unlock()
	for _, s := range stale {
		_ = s.Close()
	}
	if c != nil && (!check && now.Sub(c.idleSince) < time.Second || alive(c.Conn)) {
		return c, true, nil
	}
	if c != nil {
		_ = c.Close()
	}
	nc, err := t.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return &appConn{Conn: nc, addr: addr, br: bufio.NewReaderSize(nc, 4<<10), bw: bufio.NewWriterSize(nc, 4<<10)}, false, nil
}

// put keeps c for the next request to its address, and now and then closes
// connections that stayed idle too long (of apps no longer requested).
func (t *appTransport) put(c *appConn) {
	now := time.Now()
	c.idleSince = now
	var closing []*appConn
	t.mu.Lock()
	if t.idle == nil {
		t.idle = make(map[string][]*appConn)
	}
	if len(t.idle[c.addr]) < t.maxIdle {
		t.idle[c.addr] = append(t.idle[c.addr], c)
	} else {
		closing = append(closing, c)
	}
	if now.Sub(t.lastSweep) > t.idleTimeout {
		t.lastSweep = now
		for addr, list := range t.idle {
			kept := list[:0]
			for _, ic := range list {
				if now.Sub(ic.idleSince) > t.idleTimeout {
					closing = append(closing, ic)
				} else {
					kept = append(kept, ic)
				}
			}
			if len(kept) == 0 {
				delete(t.idle, addr)
			} else {
				t.idle[addr] = kept
			}
		}
	}
	t.mu.Unlock()
	for _, ic := range closing {
		_ = ic.Close()
	}
}

// alive reports whether the peer has neither closed c nor sent anything
// unasked, without waiting: a peek at the socket.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = errors.Is(err, syscall.EAGAIN) // nothing to read: open and quiet
		return true
	})
	return err == nil && ok
}
