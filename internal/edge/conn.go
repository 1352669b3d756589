package edge

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// connKey is the context key under which ConnContext stores a request's
// connection (its syscall.RawConn).
type connKey struct{}

// ConnContext is an http.Server ConnContext hook that lets the edge reach
// the TCP connection each request came on, to cork it (TCP_CORK) while it
// sends a file too large for its memory cache: the header and the file then
// leave in full-sized segments, as with nginx's tcp_nopush, instead of a
// packet for the header and many small ones. Set it on the http.Server
// whose handler leads to the edge; without it the edge serves the same
// answers, less efficiently. Connections other than plain TCP (TLS) are
// left alone.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	tc, ok := c.(interface {
		SyscallConn() (syscall.RawConn, error)
	}) // *net.TCPConn, or one a Loop handed over
	if !ok {
		return ctx
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return ctx
	}
	return context.WithValue(ctx, connKey{}, rc)
}

// setCork sets or clears TCP_CORK on rc. Clearing it sends what it held.
// Errors are ignored: corking only saves packets.
func setCork(rc syscall.RawConn, on bool) {
	v := 0
	if on {
		v = 1
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, v)
	})
}
