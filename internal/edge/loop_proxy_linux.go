//go:build linux

package edge

import (
	"bytes"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// upPool is a loop's connections to apps: dialled, read and written as
// their events come (relaying answers to the client, retrying a request
// an idle connection dropped), kept idle by app address for reuse, swept
// when idle too long, closed.
type upPool struct{ lp *evloop }

// The loops' reverse proxy to server apps. A request for a live server
// app (Site.ProxyTarget) that the loop takes — HTTP/1.1, no upgrade, no
// Expect, no chunked body, head and body within MaxHeaderBytes; the rest
// goes to net/http's ReverseProxy — is passed on as net/http's path does
// it: the Host header kept, hop-by-hop headers dropped, X-Forwarded-For,
// -Host and -Proto set (kept and appended to with TrustForwarded), over a
// pooled keep-alive connection of the loop's own to the app. The answer is
// relayed as it arrives, with the socket to the client setting the pace:
// the app's connection is read only when the client has taken what came
// before. Answers of known length keep it; chunked ones are relayed as
// they are; answers ending at the app's close are sent chunked. An app
// that cannot be reached gets the 502 page, one that does not start its
// answer within ResponseHeaderTimeout the 504 page, as on net/http's path.

// upConn is a connection from a loop to an app.
type upConn struct {
	fd     int
	target string
	c      *lconn // the client whose request it carries; nil while idle
	buf    []byte // read buffer; in and the client's queued output point into it
	in     []byte // read and not yet relayed

	state     int
	req       []byte   // the request as sent (kept until the answer starts, for a retry)
	reqOut    [][]byte // what is left to write of it
	reused    bool     // it carried an earlier exchange
	retried   bool
	started   time.Time // the exchange's start (the dial's, then the request's)
	idleSince time.Time

	// The answer.
	status  int
	mode    int   // how its body ends
	remain  int64 // bodyLength: bytes left; bodyChunked: bytes left of the current chunk's data
	chunkSt int   // bodyChunked: where in the framing the relay is
	sent    int64 // body bytes relayed
	closeUp bool  // the app closes after this answer
	paused  bool  // the client's socket is full: the app is not read meanwhile

	// The request's: for the log line, the error pages and Table.Drain.
	method, host, path, ip string
	sub                    string
	headOnly, clientClose  bool
	logged                 bool
	begun                  time.Time
	untrack                func()

	head     []byte // the answer's head as sent to the client
	chunkHdr []byte // bodyEOF: the size line of the chunk being relayed
}

// upConn states.
const (
	upConnecting = iota
	upSending
	upHead
	upBody
	upIdle
)

// Body framings of an answer.
const (
	bodyNone = iota
	bodyLength
	bodyChunked
	bodyEOF // until the app closes; relayed chunked
)

// upBufSize is the read buffer of an app connection.
const upBufSize = 32 << 10

// maxIdleUps bounds each loop's idle connections per app.
const maxIdleUps = 256

// startExchange passes req to the app at target. It returns false (the
// connection goes to net/http) for requests the loop leaves to
// ReverseProxy.
func (lp *evloop) startExchange(c *lconn, req *loopRequest, target, sub string) bool {
	e := lp.l.e
	if !req.proxied(e.proxy.cfg.MaxBodySize) {
		return false
	}
	ip := lp.l.opts.ClientIP(c.ip, b2s(req.xff))
	u := lp.takeIdle(target)
	if u == nil {
		sa := appSockaddr(target)
		if sa == nil {
			return false
		}
		u = &upConn{fd: -1, target: target, buf: make([]byte, upBufSize)}
		if err := lp.dial(u, sa); err != nil {
			// Refused at once: nothing listens there (the app crashed or
			// is restarting).
			lp.errorPage(c, req.close, req.head, http.StatusBadGateway, pageAppDown, sub+e.suffix)
			lp.log(b2s(req.method), b2s(req.host), b2s(req.path), http.StatusBadGateway, 0, 0, ip)
			return true
		}
	}
	u.req = lp.appRequest(u.req[:0], req, c.ip)
	u.c, c.up = c, u
	u.method, u.host, u.path, u.ip = string(req.method), string(req.host), string(req.path), ip
	u.sub, u.headOnly, u.clientClose, u.begun = sub, req.head, req.close, lp.now
	u.status, u.mode, u.sent, u.closeUp, u.paused, u.retried, u.chunkSt, u.logged = 0, bodyNone, 0, false, false, false, chunkSize, false
	u.in = u.buf[:0]
	if t, ok := e.resolver.(*Table); ok {
		u.untrack = t.track(target)
	}
	if u.state == upIdle {
		u.state, u.started = upSending, lp.now
		u.reqOut = append(u.reqOut[:0], u.req)
	}
	// serve writes the request (kick) once it has consumed it.
	return true
}

// kick writes the request of a new exchange (once serve has consumed it
// from the client's buffer: the answer may come at once).
func (lp *evloop) kick(u *upConn) {
	if u.state == upSending {
		lp.upWrite(u)
	}
}

// appRequest writes the request to pass on into b: the request line and
// the client's header lines but the hop-by-hop ones and the forwarding
// ones it sets, then X-Forwarded-For, -Host and -Proto, then the body.
func (lp *evloop) appRequest(b []byte, req *loopRequest, peer string) []byte {
	b = append(b, req.method...)
	b = append(b, ' ')
	b = append(b, req.target...)
	b = append(b, " HTTP/1.1\r\n"...)
	trust := lp.l.e.proxy.cfg.TrustForwarded
	hs := req.headers
	for len(hs) > 0 {
		i := bytes.Index(hs, crlf)
		line := hs[:i+2]
		hs = hs[i+2:]
		name := line[:bytes.IndexByte(line, ':')]
		switch {
		case eqFold(name, "connection"), eqFold(name, "proxy-connection"), eqFold(name, "keep-alive"),
			eqFold(name, "te"), eqFold(name, "trailer"), eqFold(name, "transfer-encoding"), eqFold(name, "upgrade"),
			eqFold(name, "x-forwarded-for"), eqFold(name, "x-forwarded-host"), eqFold(name, "x-forwarded-proto"):
			continue
		}
		b = append(b, line...)
	}
	b = append(b, "X-Forwarded-For: "...)
	if trust && len(req.xff) > 0 {
		b = append(b, req.xff...)
		b = append(b, ", "...)
	}
	b = append(b, peer...)
	b = append(b, "\r\nX-Forwarded-Host: "...)
	if trust && len(req.xfHost) > 0 {
		b = append(b, req.xfHost...)
	} else {
		b = append(b, req.host...)
	}
	b = append(b, "\r\nX-Forwarded-Proto: "...)
	if trust && len(req.xfProto) > 0 {
		b = append(b, req.xfProto...)
	} else {
		b = append(b, "http"...)
	}
	b = append(b, "\r\n\r\n"...)
	return append(b, req.body...)
}

// appSockaddr returns the address of an app ("127.0.0.1:PORT"), or nil
// when target is not an IP address and port.
func appSockaddr(target string) unix.Sockaddr {
	ap, err := netip.ParseAddrPort(target)
	if err != nil {
		return nil
	}
	if a := ap.Addr().Unmap(); a.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	} else if a.Zone() == "" {
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
	}
	return nil
}

// dial starts a new connection for u to its app. It fails only when the
// connection is refused at once; a pending one is finished by upEvent.
func (pt upPool) dial(u *upConn, sa unix.Sockaddr) error {
	lp := pt.lp
	family := unix.AF_INET
	if _, ok := sa.(*unix.SockaddrInet6); ok {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(fd, sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return err
	}
	u.fd, u.state, u.started, u.reused = fd, upConnecting, lp.now, false
	lp.ups[fd] = u
	return nil
}

// takeIdle returns an idle connection to target, or nil.
func (pt upPool) takeIdle(target string) *upConn {
	lp := pt.lp
	l := lp.idle[target]
	if len(l) == 0 {
		return nil
	}
	u := l[len(l)-1]
	l[len(l)-1] = nil
	lp.idle[target] = l[:len(l)-1]
	u.reused = true
	return u
}

// putIdle keeps u for the next request to its app.
func (pt upPool) putIdle(u *upConn) {
	lp := pt.lp
	l := lp.idle[u.target]
	if len(l) >= maxIdleUps || lp.l.closing.Load() {
		lp.closeUp(u)
		return
	}
	u.state, u.c, u.idleSince, u.in = upIdle, nil, lp.now, u.buf[:0]
	u.reqOut = u.reqOut[:0]
	lp.idle[u.target] = append(l, u)
}

// dropIdle takes u out of the idle list.
func (pt upPool) dropIdle(u *upConn) {
	lp := pt.lp
	l := lp.idle[u.target]
	for i, v := range l {
		if v == u {
			lp.idle[u.target] = append(l[:i], l[i+1:]...)
			return
		}
	}
}

func (pt upPool) closeUp(u *upConn) {
	lp := pt.lp
	if u.state == upIdle {
		lp.dropIdle(u)
	}
	delete(lp.ups, u.fd)
	unix.Close(u.fd)
	u.state = upIdle
	u.fd = -1
}

// sweepIdleUps closes connections idle for longer than IdleConnTimeout.
func (pt upPool) sweepIdleUps() {
	lp := pt.lp
	limit := lp.l.e.proxy.cfg.IdleConnTimeout
	for target, l := range lp.idle {
		keep := l[:0]
		for _, u := range l {
			if lp.now.Sub(u.idleSince) > limit {
				delete(lp.ups, u.fd)
				unix.Close(u.fd)
				continue
			}
			keep = append(keep, u)
		}
		if len(keep) == 0 {
			delete(lp.idle, target)
		} else {
			lp.idle[target] = keep
		}
	}
}

// upSweep answers 504 for an app that took too long to connect to or to
// start its answer.
func (pt upPool) upSweep(u *upConn) {
	lp := pt.lp
	cfg := &lp.l.e.proxy.cfg
	switch {
	case u.state == upConnecting && lp.now.Sub(u.started) > cfg.DialTimeout,
		(u.state == upSending || u.state == upHead) && u.status == 0 && lp.now.Sub(u.started) > cfg.ResponseHeaderTimeout:
		lp.failExchange(u, http.StatusGatewayTimeout, pageTimeout)
	}
}

// upEvent handles what epoll reported for an app connection.
func (pt upPool) upEvent(u *upConn, events uint32) {
	lp := pt.lp
	switch u.state {
	case upIdle:
		// An idle connection that turns readable was closed by the app (or
		// sent what nobody asked for): it is of no more use.
		if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			lp.closeUp(u)
		}
		return
	case upConnecting:
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		if soErr, err := unix.GetsockoptInt(u.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || soErr != 0 {
			lp.failExchange(u, http.StatusBadGateway, pageAppDown)
			return
		}
		u.state = upSending
		u.started = lp.now
		u.reqOut = append(u.reqOut[:0], u.req)
		lp.upWrite(u)
		return
	case upSending:
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			lp.upWrite(u)
		}
		return
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		lp.upRead(u)
	}
}

// upWrite writes the rest of the request; then the answer is awaited.
func (pt upPool) upWrite(u *upConn) {
	lp := pt.lp
	for len(u.reqOut) > 0 {
		n, err := rawWritev(u.fd, u.reqOut, &lp.iov)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				return
			}
			lp.appFailed(u)
			return
		}
		u.reqOut = advance(u.reqOut, n)
	}
	u.state = upHead
	u.started = lp.now
	lp.upRead(u) // the answer may be there already (edge-triggered)
}

// upResume goes on relaying once the client has taken what came before.
func (pt upPool) upResume(u *upConn) {
	lp := pt.lp
	u.paused = false
	if len(u.in) > 0 && lp.relay(u) {
		return
	}
	if u.c != nil && !u.c.writing() {
		lp.upRead(u)
	}
}

// upRead reads the app's answer and relays it, until EAGAIN or a full
// client socket.
func (pt upPool) upRead(u *upConn) {
	lp := pt.lp
	for u.c != nil && !u.paused {
		c := u.c
		if c.writing() {
			u.paused = true
			return
		}
		if len(u.in) > 0 && &u.in[0] != &u.buf[0] {
			u.in = u.buf[:copy(u.buf, u.in)]
		}
		if len(u.in) == len(u.buf) {
			// An answer head larger than the buffer.
			lp.failExchange(u, http.StatusBadGateway, pageAppDown)
			return
		}
		n, err := rawRead(u.fd, u.buf[len(u.in):])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				return
			}
			lp.appFailed(u)
			return
		}
		if n == 0 {
			lp.appEOF(u)
			return
		}
		u.in = u.buf[:len(u.in)+n]
		if lp.relay(u) {
			return
		}
	}
}

// appFailed handles an app connection that failed (reset): before the
// answer started, a reused connection is retried once on a new one for a
// request that may be repeated, else it is a 502; during the body the
// client's connection is cut.
func (pt upPool) appFailed(u *upConn) {
	lp := pt.lp
	if u.status == 0 && u.reused && !u.retried && idempotent(u.method) {
		lp.retry(u)
		return
	}
	if u.status == 0 {
		lp.failExchange(u, http.StatusBadGateway, pageAppDown)
		return
	}
	c := u.c
	lp.closeUp(u)
	if c != nil {
		lp.closeConn(c)
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// appEOF handles the app closing its connection.
func (pt upPool) appEOF(u *upConn) {
	lp := pt.lp
	if u.state == upBody && u.mode == bodyEOF {
		u.closeUp = true
		lp.queue(u.c, lastChunk)
		lp.finishExchange(u)
		return
	}
	lp.appFailed(u)
}

var lastChunk = []byte("0\r\n\r\n")

// retry sends the request again on a new connection.
func (pt upPool) retry(u *upConn) {
	lp := pt.lp
	delete(lp.ups, u.fd)
	unix.Close(u.fd)
	u.retried = true
	if err := lp.dial(u, appSockaddr(u.target)); err != nil {
		u.fd = -1
		lp.failExchange(u, http.StatusBadGateway, pageAppDown)
		return
	}
	u.in = u.buf[:0]
}

// relay parses and passes on what u.in holds of the answer. It returns
// true when the exchange ended or the client's socket is full (relaying
// resumes from the next EPOLLOUT edge of the client).
func (pt upPool) relay(u *upConn) bool {
	lp := pt.lp
	c := u.c
	for u.state == upHead {
		end, ok := headEnd(u.in)
		if ok && end < 0 {
			return false
		}
		if !ok || !lp.answerHead(u, u.in[:end+2]) {
			// Malformed: the edge's 502 page, and the connection is
			// closed (failExchange never reuses it).
			lp.failExchange(u, http.StatusBadGateway, pageAppDown)
			return true
		}
		u.in = u.in[end+4:]
		if u.status >= 100 && u.status < 200 {
			u.state = upHead // informational: the real answer follows
			u.status = 0
			continue
		}
		u.state = upBody
		u.req = u.req[:0] // no retry once the answer has started
	}
	switch u.mode {
	case bodyNone:
	case bodyLength:
		k := min(int64(len(u.in)), u.remain)
		if k > 0 {
			lp.queue(c, u.in[:k])
			u.in, u.remain, u.sent = u.in[k:], u.remain-k, u.sent+k
		}
		if u.remain > 0 {
			return lp.push(u)
		}
	case bodyChunked:
		n, done, ok := u.scanChunks(u.in)
		if !ok {
			c := u.c
			lp.closeUp(u)
			lp.closeConn(c)
			return true
		}
		if n > 0 {
			lp.queue(c, u.in[:n])
			u.in, u.sent = u.in[n:], u.sent+int64(n)
		}
		if !done {
			return lp.push(u)
		}
	case bodyEOF:
		if len(u.in) > 0 {
			var size [20]byte
			hdr := strconv.AppendInt(size[:0], int64(len(u.in)), 16)
			c.hdr = append(append(c.hdr[:0], hdr...), "\r\n"...)
			lp.queue(c, c.hdr)
			lp.queue(c, u.in)
			lp.queue(c, crlf)
			u.sent += int64(len(u.in))
			u.in = u.in[len(u.in):]
		}
		return lp.push(u)
	}
	if len(u.in) > 0 {
		u.closeUp = true // the app sent more than its answer
	}
	lp.finishExchange(u)
	return true
}

// push writes what was queued for the client. It returns true when the
// client's socket is full (or it was closed).
func (pt upPool) push(u *upConn) bool {
	lp := pt.lp
	c := u.c
	if !lp.flush(c) {
		return true
	}
	if c.writing() {
		u.paused = true
		return true
	}
	if len(u.in) > 0 || u.state != upBody {
		return false
	}
	u.in = u.buf[:0] // all relayed: the buffer is free again
	return false
}

func (lp *evloop) queue(c *lconn, b []byte) {
	if len(b) > 0 {
		c.out = append(c.out, b)
	}
}

// finishExchange ends an exchange whose answer was all relayed: the
// client's output is flushed (and goes on from EPOLLOUT if it must), the
// line logged, the app connection kept for the next request, and the
// client's next request served.
func (lp *evloop) finishExchange(u *upConn) {
	c := u.c
	if u.clientClose {
		c.closeDone = true
	}
	lp.logExchange(u) // before the answer leaves: it is complete
	if !lp.flush(c) {
		return // closed, and the exchange ended with it
	}
	if c.writing() {
		// The rest waits for the client; it points into u's buffer, which
		// the app connection's next exchange reuses: c keeps a copy.
		c.out = [][]byte{bytes.Join(c.out, nil)}
	}
	lp.endExchange(u, !u.closeUp)
	if c.writing() {
		return
	}
	if len(c.in) > 0 {
		lp.serve(c)
		if lp.conns[c.fd] != c || c.busy() {
			return
		}
	}
	if c.rdPending {
		lp.read(c)
	}
}

// endExchange logs the exchange and detaches u from its client, keeping
// u for reuse or closing it.
func (lp *evloop) endExchange(u *upConn, reuse bool) {
	c := u.c
	if u.untrack != nil {
		u.untrack()
		u.untrack = nil
	}
	lp.logExchange(u)
	if c != nil {
		c.up = nil
	}
	u.c = nil
	if reuse && u.fd >= 0 && u.state == upBody {
		lp.putIdle(u)
	} else if u.fd >= 0 {
		lp.closeUp(u)
	}
}

// logExchange writes the exchange's log line, once.
func (lp *evloop) logExchange(u *upConn) {
	if u.status != 0 && !u.logged {
		lp.log(u.method, u.host, u.path, u.status, lp.now.Sub(u.begun), u.sent, u.ip)
	}
	u.logged = true
}

// failExchange answers the client with one of the edge's pages when the
// app's answer has not started, and cuts the connection when it has.
func (lp *evloop) failExchange(u *upConn, status, kind int) {
	c := u.c
	started := u.state == upBody
	u.status = 0
	lp.endExchange(u, false)
	if c == nil {
		return
	}
	if started {
		lp.closeConn(c)
		return
	}
	lp.errorPage(c, u.clientClose, u.headOnly, status, kind, u.sub+lp.l.e.suffix)
	lp.log(u.method, u.host, u.path, status, lp.now.Sub(u.begun), 0, u.ip)
	if lp.flush(c) && !c.writing() && len(c.in) > 0 {
		lp.serve(c)
	}
}

// Where scanChunks is in a chunked body.
const (
	chunkSize    = iota // at a chunk-size line
	chunkData           // in a chunk's data (remain bytes left)
	chunkCRLF           // at the CRLF after a chunk's data
	chunkTrailer        // in the trailer section after the last chunk
)

// scanChunks follows a chunked body through in. It returns how many bytes
// of in are whole framing or data (to relay as they are), whether the body
// ended there, and false when the framing is broken: a size line that is
// not hex digits (extensions aside) or holds a control byte, data not
// followed by CRLF, a trailer line that is not a valid header field.
func (u *upConn) scanChunks(in []byte) (int, bool, bool) {
	i := 0
	for i < len(in) {
		switch u.chunkSt {
		case chunkSize:
			j := bytes.Index(in[i:], crlf)
			if j < 0 {
				return i, false, len(in)-i <= 4096
			}
			line := in[i : i+j]
			if !validFieldValue(line) {
				return 0, false, false // a control byte (a bare CR or LF) in the line
			}
			if k := bytes.IndexByte(line, ';'); k >= 0 {
				line = line[:k] // chunk extensions
			}
			size, err := strconv.ParseUint(string(bytes.TrimRight(line, " \t")), 16, 63)
			if err != nil {
				return 0, false, false
			}
			i += j + 2
			if size == 0 {
				u.chunkSt = chunkTrailer
			} else {
				u.chunkSt, u.remain = chunkData, int64(size)
			}
		case chunkData:
			k := min(int64(len(in)-i), u.remain)
			i += int(k)
			if u.remain -= k; u.remain == 0 {
				u.chunkSt = chunkCRLF
			}
		case chunkCRLF:
			if len(in)-i < 2 {
				return i, false, true
			}
			if in[i] != '\r' || in[i+1] != '\n' {
				return 0, false, false
			}
			i += 2
			u.chunkSt = chunkSize
		case chunkTrailer:
			j := bytes.Index(in[i:], crlf)
			if j < 0 {
				return i, false, len(in)-i <= 4096
			}
			if l := in[i : i+j]; j > 0 {
				colon := bytes.IndexByte(l, ':')
				if colon <= 0 || !isToken(l[:colon]) || !validFieldValue(l[colon+1:]) {
					return 0, false, false // trailer fields are checked as header fields are
				}
			}
			i += j + 2
			if j == 0 {
				u.chunkSt = chunkSize
				return i, true, true
			}
		}
	}
	return i, false, true
}

// answerHead turns the head of the app's answer into the client's and
// queues it: status line (with net/http's reason phrase), the app's header
// lines but the hop-by-hop ones, a Date when the app sent none, the
// framing, Connection: close when the client asked for it. It returns
// false — the client gets the 502 page and the connection to the app is
// closed — for a head it does not relay as it is: a status line other
// than HTTP/1.0 or HTTP/1.1, a space, three digits and a reason phrase
// free of control bytes but HTAB; a header line whose name is not a token
// (folded lines included) or whose value holds a control byte but HTAB
// (CR, LF, NUL…); a Content-Length that is not digits, or two that
// differ; a Transfer-Encoding other than one "chunked" on HTTP/1.1 (bare
// LFs were refused by headEnd). So whatever reaches the client is an
// answer net/http's client would have read the same way.
func (lp *evloop) answerHead(u *upConn, h []byte) bool {
	i := bytes.Index(h, crlf)
	line := h[:i]
	h = h[i+2:]
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[7] != '0' && line[7] != '1' || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) ||
		len(line) > 12 && (line[12] != ' ' || !validFieldValue(line[13:])) {
		return false
	}
	status := int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if status < 100 || status == http.StatusSwitchingProtocols {
		return false
	}
	appClose := line[7] == '0' // HTTP/1.0: closes unless keep-alive
	// First pass: every line checked, then framing and the Connection
	// options.
	length, chunked, hasDate := int64(-1), false, false
	var connTokens [8][]byte
	nTokens := 0
	for rest := h; len(rest) > 0; {
		j := bytes.Index(rest, crlf)
		l := rest[:j]
		rest = rest[j+2:]
		colon := bytes.IndexByte(l, ':')
		if colon <= 0 || !isToken(l[:colon]) || !validFieldValue(l[colon+1:]) {
			return false
		}
		name, value := l[:colon], bytes.Trim(l[colon+1:], " \t")
		switch {
		case eqFold(name, "content-length"):
			n, ok := parseLength(value)
			if !ok || length >= 0 && n != length {
				return false
			}
			length = n
		case eqFold(name, "transfer-encoding"):
			if chunked || !eqFold(value, "chunked") || line[7] == '0' {
				return false // another coding, or on HTTP/1.0: net/http's path sorts it out
			}
			chunked = true
		case eqFold(name, "date"):
			hasDate = true
		case eqFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = bytes.Trim(tok, " \t")
				switch {
				case eqFold(tok, "close"):
					appClose = true
				case eqFold(tok, "keep-alive"):
					appClose = false
				case len(tok) > 0 && nTokens < len(connTokens):
					connTokens[nTokens] = tok
					nTokens++
				}
			}
		}
	}
	u.status = status
	if status < 200 {
		return true // informational (103 Early Hints): dropped, as net/http's path does
	}
	b := append(u.head[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	if t := http.StatusText(status); t != "" {
		b = append(b, t...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(status), 10)
	}
	b = append(b, "\r\n"...)
	for rest := h; len(rest) > 0; {
		j := bytes.Index(rest, crlf)
		l := rest[:j+2]
		rest = rest[j+2:]
		name := l[:bytes.IndexByte(l, ':')]
		switch {
		case eqFold(name, "connection"), eqFold(name, "proxy-connection"), eqFold(name, "keep-alive"),
			eqFold(name, "te"), eqFold(name, "trailer"), eqFold(name, "transfer-encoding"), eqFold(name, "upgrade"):
			continue
		case chunked && eqFold(name, "content-length"):
			continue
		}
		listed := false
		for _, tok := range connTokens[:nTokens] {
			if bytes.EqualFold(name, tok) {
				listed = true
			}
		}
		if !listed {
			b = append(b, l...)
		}
	}
	if !hasDate {
		b = append(b, lp.dateLine()...)
	}
	noBody := u.headOnly || status == http.StatusNoContent || status == http.StatusNotModified
	switch {
	case noBody:
		u.mode = bodyNone
	case chunked:
		u.mode, u.chunkSt = bodyChunked, chunkSize
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	case length >= 0:
		u.mode, u.remain = bodyLength, length
	default:
		u.mode = bodyEOF
		appClose = true
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	u.closeUp = appClose
	if u.clientClose {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	u.head = b
	lp.queue(u.c, b)
	return true
}

// pageWriter captures one of the edge's pages.
type pageWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (w *pageWriter) Header() http.Header         { return w.h }
func (w *pageWriter) WriteHeader(status int)      { w.status = status }
func (w *pageWriter) Write(b []byte) (int, error) { w.body = append(w.body, b...); return len(b), nil }

// errorPage queues one of the edge's pages as the answer to c.
func (lp *evloop) errorPage(c *lconn, closeAfter, headOnly bool, status, kind int, host string) {
	w := &pageWriter{h: http.Header{}}
	method := http.MethodGet
	if headOnly {
		method = http.MethodHead
	}
	lp.l.e.page(w, &http.Request{Method: method}, status, kind, host)
	b := append(c.hdr[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\nCache-Control: "...)
	b = append(b, w.h.Get("Cache-Control")...)
	b = append(b, "\r\nContent-Length: "...)
	b = append(b, w.h.Get("Content-Length")...)
	b = append(b, "\r\nContent-Type: "...)
	b = append(b, w.h.Get("Content-Type")...)
	b = append(b, "\r\n"...)
	b = append(b, lp.dateLine()...)
	if closeAfter {
		b = append(b, "Connection: close\r\n"...)
		c.closeDone = true
	}
	b = append(b, "\r\n"...)
	c.hdr = b
	lp.queue(c, b)
	lp.queue(c, w.body)
}
