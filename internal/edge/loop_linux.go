//go:build linux

package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gantryhq/gantry"
)

// Loop serves the common requests of live sites on event loops of its own
// and hands every other connection to net/http. See the LoopOptions doc
// for what it serves itself.
//
// Why: net/http spends a goroutine wake-up, a parsed header map, a cloned
// and sorted response header and per-request deadlines on every request;
// for a file from the memory cache that is most of the cost (see the
// README's Benchmarks). The loops, one per core, each locked to a thread
// with an epoll set of its own, read a request, answer it with one writev
// (or a send and a sendfile for a large file) and log it, with no
// goroutine switch and nearly no allocation.
//
// Connections start on the loops; a connection whose request the loop does
// not serve itself (the platform's own host, a POST, an If-None-Match, a
// WebSocket, a malformed request, anything unusual) is handed over whole,
// with the bytes already read, to net/http through Listener, for the rest
// of its life. So every answer the loop does not give is the one the
// ordinary path gives.
type Loop struct {
	e       *Edge
	opts    LoopOptions
	lfd     int // the listening socket, shared by the loops (EPOLLEXCLUSIVE)
	addr    net.Addr
	loops   []*evloop
	handoff *handoffListener
	closing atomic.Bool
	done    sync.WaitGroup
}

// NewLoop takes over ln, a TCP listener, for the edge e: it duplicates
// ln's socket and closes ln. Call Serve to start the loops, hand
// Listener() to an http.Server, and call Shutdown or Close at the end.
func (e *Edge) NewLoop(ln net.Listener, opts LoopOptions) (*Loop, error) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil, errors.New("edge loop: not a TCP listener")
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, err
	}
	lfd := -1
	if cerr := rc.Control(func(fd uintptr) { lfd, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	addr := ln.Addr()
	ln.Close()
	opts.defaults()
	e.proxy.once.Do(func() { e.initProxy(ProxyConfig{}) }) // the proxy's limits, unless configured
	l := &Loop{e: e, opts: opts, lfd: lfd, addr: addr}
	l.handoff = &handoffListener{addr: addr, conns: make(chan net.Conn, 256), closed: make(chan struct{})}
	n := opts.Loops
	for i := 0; i < n; i++ {
		lp, err := newEvloop(l)
		if err != nil {
			for _, o := range l.loops {
				o.close()
			}
			unix.Close(lfd)
			return nil, err
		}
		l.loops = append(l.loops, lp)
	}
	return l, nil
}

// Listener returns the net.Listener that yields the connections the loops
// hand over, for http.Server.Serve.
func (l *Loop) Listener() net.Listener { return l.handoff }

// Addr returns the address the loop listens on.
func (l *Loop) Addr() net.Addr { return l.addr }

// Serve runs the loops until Shutdown or Close.
func (l *Loop) Serve() {
	for _, lp := range l.loops {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			runtime.LockOSThread() // the loop blocks its thread in epoll_wait
			loopPriority()
			lp.run()
		}()
	}
}

// Shutdown stops accepting connections, closes the idle ones and waits
// until the loops have finished the answers in progress (or ctx ends, when
// it closes the rest).
func (l *Loop) Shutdown(ctx context.Context) error {
	if l.closing.Swap(true) {
		return nil
	}
	for _, lp := range l.loops {
		lp.wake()
	}
	done := make(chan struct{})
	go func() { l.done.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		for _, lp := range l.loops {
			lp.abort.Store(true)
			lp.wake()
		}
		<-done
	}
	unix.Close(l.lfd)
	for _, lp := range l.loops {
		lp.close()
	}
	return ctx.Err()
}

// Close stops the loops at once, closing every connection they hold.
func (l *Loop) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = l.Shutdown(ctx)
	return nil
}

// evloop is one event loop: an epoll set, the connections registered in
// it, and an eventfd to wake it.
type evloop struct {
	// Its parts, each a type of its own over the loop: the connections
	// to apps, idle ones kept by address (upPool, loop_proxy_linux.go),
	// and answering from a site's files (filePart).
	upPool
	filePart

	l      *Loop
	epfd   int
	wakefd int
	conns  map[int]*lconn
	nconns atomic.Int64 // len(conns) and connections on their way here, for accept
	// incoming are connections another loop accepted for this one.
	mu       sync.Mutex
	incoming []newConn
	abort    atomic.Bool
	events   [128]unix.EpollEvent
	now      time.Time
	date     []byte // "Date: ...\r\n" for now's second
	dateAt   int64
	swept    time.Time
	files    map[cacheKey]*openFile // large files kept open (openFile)
	ups      map[int]*upConn        // connections to apps, by descriptor
	idle     map[string][]*upConn   // idle ones by app address, newest last
	logBuf   bytes.Buffer           // lines logged during this round of events
	logH     slog.Handler           // writes into logBuf
	iov      []unix.Iovec           // rawWritev's array, reused
	stats    loopCounters           // for Loop.Stats
}

// filePart answers requests from a site's files: cached small ones,
// large ones kept open (evloop.files) and sent with sendfile.
type filePart struct{ lp *evloop }

func newEvloop(l *Loop) (*evloop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	lp := &evloop{l: l, epfd: epfd, wakefd: wfd, conns: make(map[int]*lconn),
		ups: make(map[int]*upConn), idle: make(map[string][]*upConn)}
	lp.upPool, lp.filePart = upPool{lp}, filePart{lp}
	if l.opts.NewLogHandler != nil && l.opts.LogOutput != nil {
		lp.logH = l.opts.NewLogHandler(&lp.logBuf)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, l.lfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE, Fd: int32(l.lfd)}); err != nil {
		lp.close()
		return nil, err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
		lp.close()
		return nil, err
	}
	return lp, nil
}

func (lp *evloop) close() {
	for _, nc := range lp.incoming { // passed on after the loop stopped
		unix.Close(nc.fd)
	}
	lp.incoming = nil
	unix.Close(lp.epfd)
	unix.Close(lp.wakefd)
}

func (lp *evloop) wake() {
	var one = [8]byte{1}
	_, _ = unix.Write(lp.wakefd, one[:])
}

// run is the loop: wait for events, serve them, sweep timeouts once a
// second.
func (lp *evloop) run() {
	stopping := false
	for {
		n, err := lp.wait()
		if err != nil && !errors.Is(err, unix.EINTR) {
			lp.l.opts.Errorf("edge loop: epoll_wait: %v", err)
			return
		}
		lp.now = time.Now()
		if n > 0 {
			lp.stats.rounds.Add(1)
		}
		for i := 0; i < n; i++ {
			ev := lp.events[i]
			fd := int(ev.Fd)
			switch fd {
			case lp.l.lfd:
				if !stopping {
					lp.accept()
				}
			case lp.wakefd:
				var b [8]byte
				_, _ = unix.Read(lp.wakefd, b[:])
				lp.takeIncoming()
			default:
				if c := lp.conns[fd]; c != nil {
					lp.event(c, ev.Events)
				} else if u := lp.ups[fd]; u != nil {
					lp.upEvent(u, ev.Events)
				}
			}
		}
		if lp.logBuf.Len() > 0 {
			_, _ = lp.l.opts.LogOutput.Write(lp.logBuf.Bytes())
			lp.logBuf.Reset()
		}
		if n > 0 {
			// Let the CPU's other runnable threads go first before
			// the next round: the clients on a shared machine, the
			// apps a loop proxies to, builds, the rest of the server.
			// A loop costs the kernel's scheduler less than it is owed,
			// so it kept its CPU for whole time slices while they
			// waited with their answers unread: 6-7 ms p99 for 0.2 ms
			// at the median under bench/edgebench, where nginx (which
			// the woken clients preempt) had 2-3 ms. Yielding once per
			// round of events costs ~0.3 µs and brought the p99 to
			// 0.5-0.7 ms, with more requests per second.
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		if lp.l.closing.Load() {
			if !stopping {
				stopping = true
				_ = unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_DEL, lp.l.lfd, nil)
			}
			for _, c := range lp.conns {
				if lp.abort.Load() || (!c.busy() && len(c.in) == 0) {
					lp.closeConn(c)
				}
			}
			if len(lp.conns) == 0 {
				for _, u := range lp.ups {
					lp.closeUp(u)
				}
				return
			}
		}
		if lp.now.Sub(lp.swept) >= time.Second {
			lp.sweep()
		}
	}
}

// event handles what epoll reported for c. Connections are registered
// edge-triggered for both directions once, at accept, so no request costs
// an epoll_ctl: reads go on until a short read or EAGAIN (rdPending marks
// input left unread while an answer is stuck), writes until done or
// EAGAIN, and the next EPOLLOUT edge resumes them.
func (lp *evloop) event(c *lconn, events uint32) {
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		c.rdPending = true
	}
	if c.up != nil && events&(unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		// The client left during an exchange with an app (net/http
		// cancels the request then too).
		lp.closeConn(c)
		return
	}
	if c.writing() {
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 || !lp.flush(c) || c.writing() {
			return
		}
		if c.up != nil {
			lp.upResume(c.up) // the client took what the app sent so far
			return
		}
		// The stuck answer has left: serve what arrived meanwhile.
		if len(c.in) > 0 {
			lp.serve(c)
			if lp.conns[c.fd] != c || c.busy() {
				return
			}
		}
	}
	if c.rdPending && c.up == nil {
		lp.read(c)
	}
}

// wait returns the next events. It polls the epoll set without blocking
// first, a raw system call that leaves the Go scheduler out (under load
// events are nearly always ready); only when nothing is ready does it
// block, as a system call the scheduler knows of, so that the loop's
// thread lends its processor to other goroutines meanwhile. (Parking the
// loop on Go's own poller instead, with the epoll descriptor registered
// there, costs less CPU but wakes the loop late: 10-15% fewer requests
// per second in bench/edgebench.) The blocking wait ends after a second
// at most, for the sweep.
func (lp *evloop) wait() (int, error) {
	r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(lp.epfd), uintptr(unsafe.Pointer(&lp.events[0])), uintptr(len(lp.events)), 0, 0, 0)
	if errno == 0 && r > 0 {
		return int(r), nil
	}
	lp.stats.waits.Add(1)
	return unix.EpollWait(lp.epfd, lp.events[:], 1000)
}

// sweep closes connections past their deadline: a request head not read
// within ReadHeaderTimeout, or a head and body (for an app) not read within
// the proxy's UploadTimeout, both counted from the request's first byte
// (a client trickling bytes gains nothing); a keep-alive connection idle
// for IdleTimeout, or an answer the client has not taken for IdleTimeout.
func (lp *evloop) sweep() {
	lp.swept = lp.now
	for k, f := range lp.files {
		if f.root.closed.Load() {
			lp.dropFile(k, f)
		}
	}
	for _, c := range lp.conns {
		if c.up != nil {
			lp.upSweep(c.up) // an app's answer may stream for as long as it likes
			continue
		}
		limit, since := lp.l.opts.IdleTimeout, c.active
		if len(c.in) > 0 && !c.writing() {
			limit, since = lp.l.opts.ReadHeaderTimeout, c.reqStart
			if end, ok := headEnd(c.in); ok && end >= 0 { // the head is in: its body is on its way
				limit = lp.l.e.proxy.cfg.UploadTimeout
			}
		}
		if lp.now.Sub(since) > limit {
			lp.closeConn(c)
		}
	}
	lp.sweepIdleUps()
}

// accept takes the pending connections and gives each to the loop that
// holds the fewest. The listener is shared (EPOLLEXCLUSIVE), but whichever
// loop wakes takes a burst whole (a browser's six connections, a load
// test's sixty-four): left to itself one loop carried 70% of them while
// the other idled. A connection passed to another loop costs one eventfd
// write, once in its life.
func (lp *evloop) accept() {
	for {
		fd, sa, err := unix.Accept4(lp.l.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
				lp.l.opts.Errorf("edge loop: accept: %v", err)
			}
			return
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		nc := newConn{fd, sockaddrIP(sa)}
		to := lp
		for _, o := range lp.l.loops {
			if o.nconns.Load() < to.nconns.Load() {
				to = o
			}
		}
		to.nconns.Add(1)
		if to == lp {
			lp.register(nc)
			continue
		}
		to.mu.Lock()
		to.incoming = append(to.incoming, nc)
		to.mu.Unlock()
		to.wake()
	}
}

// newConn is an accepted connection on its way to a loop.
type newConn struct {
	fd int
	ip string
}

// takeIncoming registers the connections other loops passed to this one.
func (lp *evloop) takeIncoming() {
	lp.mu.Lock()
	in := lp.incoming
	lp.incoming = nil
	lp.mu.Unlock()
	for _, nc := range in {
		lp.register(nc)
	}
}

// register adds an accepted connection to the loop's epoll set, edge-
// triggered for both directions, once for its whole life.
func (lp *evloop) register(nc newConn) {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(nc.fd)}
	if err := unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, nc.fd, &ev); err != nil {
		unix.Close(nc.fd)
		lp.nconns.Add(-1)
		return
	}
	lp.conns[nc.fd] = &lconn{fd: nc.fd, ip: nc.ip, active: lp.now}
}

func sockaddrIP(sa unix.Sockaddr) string {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr).String()
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr).Unmap().String()
	}
	return ""
}

// lconn is a connection on a loop.
type lconn struct {
	fd     int
	ip     string
	in     []byte    // bytes read and not yet consumed
	buf    []byte    // the read buffer in points into
	active time.Time // last read or write progress
	// reqStart is when the first byte of the request in `in` arrived.
	reqStart time.Time

	// The answer being written: iovecs, then size bytes of file from off.
	out       [][]byte
	outv      [2][]byte // out's own array, which out starts again from once written (a header and a body need no allocation)
	hdr       []byte    // the header buffer out[0] may point into (reused)
	src       *openFile // the file to sendfile from, or nil
	up        *upConn   // the app connection answering c's request, or nil
	off, size int64
	closeDone bool // close once the answer is written
	rdPending bool // input may be waiting unread (edge-triggered)
}

func (c *lconn) writing() bool { return len(c.out) > 0 || c.src != nil }

// busy reports whether c has an answer under way: being written, or
// coming from an app.
func (c *lconn) busy() bool { return c.writing() || c.up != nil }

func (lp *evloop) closeConn(c *lconn) {
	delete(lp.conns, c.fd)
	lp.nconns.Add(-1)
	if c.up != nil {
		lp.endExchange(c.up, false)
	}
	if c.src != nil {
		lp.release(c.src)
		c.src = nil
	}
	unix.Close(c.fd) // also removes it from the epoll set
}

// readBufSize is the first read buffer of a connection; it grows up to
// MaxHeaderBytes for a larger request head.
const readBufSize = 4096

// read reads what the socket holds and serves the complete requests in
// it, until a short read (the socket is drained: edge-triggered epoll
// reports the next data), EAGAIN, or an answer that cannot leave at once.
func (lp *evloop) read(c *lconn) {
	if c.buf == nil {
		c.buf = make([]byte, readBufSize)
	}
	for {
		if len(c.in) > 0 && &c.in[0] != &c.buf[0] {
			c.in = c.buf[:copy(c.buf, c.in)]
		}
		if len(c.in) == len(c.buf) {
			if len(c.buf) >= lp.l.opts.MaxHeaderBytes {
				lp.handOff(c) // net/http answers 431
				return
			}
			nb := make([]byte, 2*len(c.buf))
			c.in = nb[:copy(nb, c.in)]
			c.buf = nb
		}
		space := len(c.buf) - len(c.in)
		n, err := rawRead(c.fd, c.buf[len(c.in):])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				c.rdPending = false
				return
			}
			lp.closeConn(c)
			return
		}
		if n == 0 {
			lp.closeConn(c)
			return
		}
		if len(c.in) == 0 {
			c.reqStart = lp.now
		}
		c.in = c.buf[:len(c.in)+n]
		c.active = lp.now
		lp.serve(c)
		if lp.conns[c.fd] != c {
			return // closed or handed over
		}
		if n < space {
			c.rdPending = false
			return
		}
		if c.busy() {
			return // rdPending stays: more may be waiting
		}
	}
}

// serve answers the complete requests buffered on c, in order, while their
// answers leave at once.
func (lp *evloop) serve(c *lconn) {
	for len(c.in) > 0 && !c.busy() {
		var req loopRequest
		total, found := req.take(c.in, lp.l.opts.MaxHeaderBytes)
		if found == reqMore {
			if req.host != nil && !lp.l.opts.IsLive(b2s(req.host)) {
				// A platform request whose body is on its way: net/http
				// reads it, within the API's body timeout.
				lp.handOff(c)
			}
			return
		}
		if found == reqHandOff {
			lp.handOff(c)
			return
		}
		if !lp.answer(c, &req) {
			lp.handOff(c)
			return
		}
		c.in = c.in[total:]
		lp.stats.requests.Add(1)
		c.reqStart = lp.now // of the next request, if it has begun
		if c.up != nil {
			lp.kick(c.up)
			return
		}
		if !lp.flush(c) {
			return // closed
		}
	}
	if len(c.in) == 0 {
		c.in = c.buf[:0]
	}
}

// flush writes what c has to send until it has all left (then it closes
// c when asked to) or the socket is full (the next EPOLLOUT edge calls it
// again). It returns false when c was closed.
func (lp *evloop) flush(c *lconn) bool {
	for len(c.out) > 0 {
		var n int
		var err error
		if c.src != nil && len(c.out) == 1 {
			// The header of a file: MSG_MORE holds it back to leave with
			// the file's first bytes, in full-sized segments (as TCP_CORK
			// does for nginx's tcp_nopush) without two setsockopt calls.
			n, err = rawSend(c.fd, c.out[0], unix.MSG_MORE|unix.MSG_NOSIGNAL)
		} else {
			n, err = rawWritev(c.fd, c.out, &lp.iov)
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				return true // the next EPOLLOUT edge resumes
			}
			lp.closeConn(c)
			return false
		}
		c.active = lp.now
		c.out = advance(c.out, n)
	}
	// advance moved out along its array: start again from the beginning.
	c.outv = [2][]byte{}
	c.out = c.outv[:0]
	for c.src != nil && c.size > 0 {
		n, err := rawSendfile(c.fd, c.src.fd, &c.off, int(min(c.size, 1<<30)))
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			lp.closeConn(c)
			return false
		}
		if n > 0 {
			c.size -= int64(n)
			c.active = lp.now
		}
		if errors.Is(err, unix.EAGAIN) {
			return true
		}
		if n == 0 && err == nil {
			lp.closeConn(c) // the file shrank: published files never do
			return false
		}
	}
	if c.src != nil {
		lp.release(c.src)
		c.src = nil
	}
	if c.closeDone {
		lp.closeConn(c)
		return false
	}
	return true
}

// handOff gives c, with the bytes read from it and not yet answered, to
// net/http.
func (lp *evloop) handOff(c *lconn) {
	delete(lp.conns, c.fd)
	lp.nconns.Add(-1)
	_ = unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	f := os.NewFile(uintptr(c.fd), "")
	nc, err := net.FileConn(f) // a duplicate, registered with Go's poller
	f.Close()
	if err != nil {
		return
	}
	var conn net.Conn = nc
	if len(c.in) > 0 {
		tc, ok := nc.(*net.TCPConn)
		if !ok {
			nc.Close()
			return
		}
		conn = &prefixConn{TCPConn: tc, buf: bytes.Clone(c.in)}
	}
	lp.l.handoff.put(conn)
}

// answer serves req on c when the loop can: it queues the answer, logs the
// request and returns true; false leaves c untouched for net/http.
func (lp *evloop) answer(c *lconn, req *loopRequest) bool {
	opts := &lp.l.opts
	if !opts.IsLive(b2s(req.host)) {
		return false
	}
	e := lp.l.e
	sub, ok := e.Subdomain(b2s(req.host)) // a lookup key only: no copy
	if !ok {
		return false
	}
	rl, ok := e.resolver.(rootLookup)
	if !ok {
		return false
	}
	site, root, ok := rl.lookupRoot(sub)
	if !ok || site.Status != gantry.DeploymentLive || site.Home != "" {
		return false // an app homed elsewhere: net/http forwards it (forward.go)
	}
	if site.ProxyTarget != "" {
		if site.App != nil {
			site.App.Touch(lp.now.UnixNano())
		}
		return lp.startExchange(c, req, site.ProxyTarget, sub)
	}
	if site.Fetched != nil {
		site.Fetched.Store(lp.now.UnixNano())
	}
	// A sleeping app (App set, no ProxyTarget) has no root either: its
	// requests go to net/http, which holds them while it wakes; so do a
	// fetched site's while its folder is missing (fetch.go).
	if root == nil {
		return false
	}
	p := req.path
	if req.unusual() || !req.get && !req.head || !cleanRequestPath(p) {
		return false
	}
	name := firstName(cleanPath(b2s(p)), b2s(p))
	start := lp.now
	const status = 200
	var sent int64
	if cf := e.cache.get(root, name); cf != nil {
		sent = lp.answerCached(c, req, cf)
	} else {
		// Not cached: a large file is sent from a descriptor opened for
		// this answer; a small one is read into the cache first.
		f, err := lp.openFile(root, name)
		switch {
		case err != nil:
			return false
		case f.st.Mode&unix.S_IFMT != unix.S_IFREG:
			lp.release(f)
			return false
		case f.st.Size <= maxCachedFile:
			lp.release(f)
			fd, err := e.lookup(root, true, name)
			if err != nil || fd.cf == nil {
				fd.close()
				return false
			}
			sent = lp.answerCached(c, req, fd.cf)
		default:
			if sent, ok = lp.answerFile(c, req, root, name, f); !ok {
				return false
			}
		}
	}
	lp.log(b2s(req.method), b2s(req.host), b2s(p), status, lp.now.Sub(start), sent, opts.ClientIP(c.ip, b2s(req.xff)))
	return true
}

// log writes a request's log line into the loop's batch.
func (lp *evloop) log(method, host, path string, status int, d time.Duration, sent int64, ip string) {
	if opts := &lp.l.opts; opts.Log != nil {
		opts.Log(lp.logH, method, host, path, status, d, sent, ip)
	}
}

// answerCached queues a file from the memory cache; it returns the body
// bytes sent.
func (pt filePart) answerCached(c *lconn, req *loopRequest, cf *cachedFile) int64 {
	lp := pt.lp
	rep := &cf.plain
	if cf.br != nil && accepts(b2s(req.acceptEncoding), "br") {
		rep = cf.br
	} else if cf.gz != nil && accepts(b2s(req.acceptEncoding), "gzip") {
		rep = cf.gz
	}
	h := lp.header(c, req, cf.contentType[0], cf.cacheControl[0], rep.encoding, cf.vary, rep.etag[0], rep.lastModified[0], rep.length[0])
	c.out = append(c.out[:0], h)
	if req.head {
		return 0
	}
	c.out = append(c.out, rep.data)
	return int64(len(rep.data))
}

// answerFile queues a file too large for the memory cache (f), or one of
// its precompressed siblings, to be sent with sendfile; it takes f's
// reference. It returns false, releasing f, when net/http should answer
// instead (a type to sniff).
func (pt filePart) answerFile(c *lconn, req *loopRequest, root *siteRoot, name string, f *openFile) (int64, bool) {
	lp := pt.lp
	ext := extOf(name)
	ct := contentType(ext)
	if ct == nil {
		lp.release(f)
		return 0, false
	}
	plain, src := f, f
	var enc []string
	vary := false
	if compressible(ext) && f.st.Size >= minCompressSize {
		vary = true
		ae := b2s(req.acceptEncoding)
		for _, v := range variants {
			if !accepts(ae, v.token) {
				continue
			}
			vf, err := lp.openFile(root, name+v.suffix)
			if err != nil {
				continue
			}
			if vf.st.Mode&unix.S_IFMT != unix.S_IFREG {
				lp.release(vf)
				continue
			}
			src, enc = vf, v.header
			break
		}
	}
	size := src.st.Size
	if src.etag == "" {
		src.etag = etagOf(size, src.st.Mtim.Nano(), encToken(enc))
		src.length = strconv.FormatInt(size, 10)
	}
	if plain.lastModified == "" {
		plain.lastModified = time.Unix(0, plain.st.Mtim.Nano()).UTC().Format(http1Time)
	}
	h := lp.header(c, req, ct[0], cacheControl(name, ext)[0], enc, vary, src.etag, plain.lastModified, src.length)
	c.out = append(c.out[:0], h)
	if src != plain {
		lp.release(plain)
	}
	if req.head {
		lp.release(src)
		return 0, true
	}
	c.src, c.off, c.size = src, 0, size
	return size, true
}

// openFile is a file a loop sends from. Large files stay open in the
// loop's own cache (no lock: each loop has one) until their site's folder
// is closed (the site was switched or removed: the sweep drops them) or
// the cache is full; a dropped file is closed when no answer uses it.
type openFile struct {
	fd   int
	st   unix.Stat_t
	root *siteRoot
	refs int  // users: the cache's lookup caller, answers in progress
	kept bool // in the loop's cache
	// Header values, made on first use.
	etag, length, lastModified string
}

// maxOpenFiles bounds each loop's cache of open files.
const maxOpenFiles = 256

// openFile returns name in root with a reference for the caller, from the
// loop's cache or opened now (and kept when it is a large regular file).
func (pt filePart) openFile(root *siteRoot, name string) (*openFile, error) {
	lp := pt.lp
	k := cacheKey{root, name}
	if f := lp.files[k]; f != nil && !root.closed.Load() {
		f.refs++
		return f, nil
	}
	fd, st, err := root.openStat(name)
	if err != nil {
		return nil, err
	}
	f := &openFile{fd: fd, st: st, root: root, refs: 1}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size > maxCachedFile {
		if old := lp.files[k]; old != nil {
			lp.dropFile(k, old)
		}
		if len(lp.files) >= maxOpenFiles {
			for k, old := range lp.files {
				lp.dropFile(k, old)
			}
		}
		if lp.files == nil {
			lp.files = make(map[cacheKey]*openFile)
		}
		f.kept = true
		lp.files[k] = f
	}
	return f, nil
}

// release drops a reference to f, closing it when it is out of the cache
// and unused.
func (filePart) release(f *openFile) {
	f.refs--
	if f.refs == 0 && !f.kept {
		unix.Close(f.fd)
	}
}

// dropFile takes f out of the cache.
func (pt filePart) dropFile(k cacheKey, f *openFile) {
	lp := pt.lp
	delete(lp.files, k)
	f.kept = false
	if f.refs == 0 {
		unix.Close(f.fd)
	}
}

func encToken(enc []string) string {
	if enc == nil {
		return ""
	}
	return enc[0]
}

// http1Time is http.TimeFormat.
const http1Time = "Mon, 02 Jan 2006 15:04:05 GMT"

func extOf(name string) string {
	for i := len(name) - 1; i >= 0 && name[i] != '/'; i-- {
		if name[i] == '.' {
			return name[i:]
		}
	}
	return ""
}

// header builds a 200 answer's header in c's header buffer: the header
// fields net/http's path sends for the same file, with a Date.
func (lp *evloop) header(c *lconn, req *loopRequest, ctype, cacheCtl string, enc []string, vary bool, etagv, lastMod, length string) []byte {
	b := c.hdr[:0]
	b = append(b, "HTTP/1.1 200 OK\r\nAccept-Ranges: bytes\r\nCache-Control: "...)
	b = append(b, cacheCtl...)
	if enc != nil {
		b = append(b, "\r\nContent-Encoding: "...)
		b = append(b, enc[0]...)
	}
	b = append(b, "\r\nContent-Length: "...)
	b = append(b, length...)
	b = append(b, "\r\nContent-Type: "...)
	b = append(b, ctype...)
	b = append(b, "\r\n"...)
	b = append(b, lp.dateLine()...)
	b = append(b, "Etag: "...)
	b = append(b, etagv...)
	b = append(b, "\r\nLast-Modified: "...)
	b = append(b, lastMod...)
	if vary {
		b = append(b, "\r\nVary: Accept-Encoding"...)
	}
	b = append(b, "\r\nX-Content-Type-Options: nosniff\r\n"...)
	if req.close {
		b = append(b, "Connection: close\r\n"...)
		c.closeDone = true
	}
	b = append(b, "\r\n"...)
	c.hdr = b
	return b
}

// dateLine returns the Date header line for the current second.
func (lp *evloop) dateLine() []byte {
	if s := lp.now.Unix(); s != lp.dateAt || lp.date == nil {
		lp.dateAt = s
		lp.date = append(lp.date[:0], "Date: "...)
		lp.date = lp.now.UTC().AppendFormat(lp.date, http1Time)
		lp.date = append(lp.date, "\r\n"...)
	}
	return lp.date
}

// cleanRequestPath reports whether p is a plain, clean absolute path the
// loop serves as it is: no escapes (net/http decodes those), no dot
// segments or doubled slashes (cleaned and redirected there), no control
// or non-ASCII bytes, no backslash.
func cleanRequestPath(p []byte) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if ch <= ' ' || ch >= 0x7f || ch == '%' || ch == '\\' {
			return false
		}
		if ch == '/' && i+1 < len(p) {
			switch p[i+1] {
			case '/':
				return false
			case '.':
				rest := p[i+2:]
				if len(rest) == 0 || rest[0] == '/' || rest[0] == '.' && (len(rest) == 1 || rest[1] == '/') {
					return false
				}
			}
		}
	}
	return true
}

// handoffListener is the net.Listener through which the loops hand
// connections to net/http.
type handoffListener struct {
	addr      net.Addr
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func (h *handoffListener) put(c net.Conn) {
	select {
	case h.conns <- c:
	case <-h.closed:
		c.Close()
	default:
		go func() {
			select {
			case h.conns <- c:
			case <-h.closed:
				c.Close()
			}
		}()
	}
}

func (h *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.closed:
		return nil, net.ErrClosed
	}
}

func (h *handoffListener) Close() error {
	h.closeOnce.Do(func() { close(h.closed) })
	return nil
}

func (h *handoffListener) Addr() net.Addr { return h.addr }

// prefixConn is a handed-over connection whose first bytes were read by a
// loop already.
type prefixConn struct {
	*net.TCPConn
	buf []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.TCPConn.Read(p)
}

// WriteTo copies the connection's bytes, the buffered ones first, to w.
func (c *prefixConn) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(c.buf)
	c.buf = c.buf[n:]
	if err != nil {
		return int64(n), err
	}
	m, err := io.Copy(w, c.TCPConn)
	return int64(n) + m, err
}

// SyscallConn is the TCP connection's, for ConnContext's corking.
func (c *prefixConn) SyscallConn() (syscall.RawConn, error) { return c.TCPConn.SyscallConn() }

// b2s views b as a string without copying; the string must not be kept
// past b's next change.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// advance drops the first n bytes written from iovecs.
// Empty buffers at the front are dropped too (an empty file's body): a
// write of nothing is never left pending.
func advance(iovecs [][]byte, n int) [][]byte {
	for len(iovecs) > 0 && (n > 0 || len(iovecs[0]) == 0) {
		if n < len(iovecs[0]) {
			iovecs[0] = iovecs[0][n:]
			break
		}
		n -= len(iovecs[0])
		iovecs[0] = nil
		iovecs = iovecs[1:]
	}
	return iovecs
}

// loopPriority puts the calling loop thread ahead of everything else the
// machine runs at the default priority: the shortest time slice (0.1 ms,
// EEVDF's custom slices, Linux 6.12 and later; older kernels ignore the
// request) and niceness -10 (a weight about nine times the default, as
// nginx's worker_priority -10 does). A loop woken by a request then
// preempts a tenant's build or app holding its CPU at once: with the slice
// alone it was often not owed the CPU at that instant, and waited out the
// run's tick (4 ms at 250 Hz), which put a bystander's p99 at 2–5 ms
// under every attack of bench/hostile (0.4–1 ms quiet). The runs' weight
// stays a tenth of a platform thread's, so they still get the CPU the
// loops leave. Without the privilege to lower its niceness (not root),
// the thread keeps its niceness and asks for the short slice alone.
func loopPriority() {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil || attr.Policy != unix.SCHED_NORMAL {
		return
	}
	attr.Runtime = 100_000 // ns
	nice := attr.Nice
	attr.Nice = loopNice
	if err := unix.SchedSetAttr(0, attr, 0); err != nil {
		attr.Nice = nice
		_ = unix.SchedSetAttr(0, attr, 0)
	}
}

// loopNice is the loop threads' niceness (loopPriority).
const loopNice = -10
