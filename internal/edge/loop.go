package edge

import (
	"bytes"
	"io"
	"log"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// LoopOptions configure a Loop (Edge.NewLoop, Linux only).
//
// The loop answers itself only requests it can answer exactly as the
// net/http path would: HTTP/1.1 GET and HEAD requests without a body, a
// range or a validator, for a live static site, at a plain clean path that
// names a regular file (from the memory cache, or sent with sendfile) or a
// folder's index.html. Everything else — the platform's own host, other
// methods, conditional and range requests, redirects, clean URLs,
// single-page-app fallbacks, 404s, stopped sites, server apps, upgrades,
// malformed or oversized heads — goes with its connection to net/http.
type LoopOptions struct {
	// IsLive reports whether a Host header names a live site (and not the
	// platform itself). Required.
	IsLive func(host string) bool
	// Log writes the one log line of a request the loop answered to h, a
	// handler from NewLogHandler (nil without one).
	Log func(h slog.Handler, method, host, path string, status int, d time.Duration, bytes int64, ip string)
	// NewLogHandler makes each loop's log handler, writing into the loop's
	// buffer; what a round of events logged goes to LogOutput in one write.
	// So the loops share no lock for their lines (a shared handler's mutex
	// costs a futex wake-up per request under load), and a line is held
	// back only while the loop serves the events it came with.
	NewLogHandler func(w io.Writer) slog.Handler
	// LogOutput receives the loops' log lines (required with NewLogHandler).
	LogOutput io.Writer
	// Errorf logs the loop's own errors (default: the log package).
	Errorf func(format string, args ...any)
	// ClientIP returns the client address a request is logged with, from
	// the peer's IP and the last X-Forwarded-For value ("" for none):
	// the api.Server's rule (default: the peer). Proxied requests carry
	// X-Forwarded-* headers by the edge's ProxyConfig.
	ClientIP func(peer, xff string) string
	// ReadHeaderTimeout closes a connection whose request head has not
	// fully arrived this long after it started (default 10 s). A head and
	// its body must arrive within the edge's ProxyConfig.UploadTimeout;
	// the platform's own requests go to net/http as soon as their head is
	// in, for the API's body timeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long, or one
	// whose client has not taken any of its answer this long (default 2 min).
	IdleTimeout time.Duration
	// MaxHeaderBytes is the largest request head the loop reads; a larger
	// one goes to net/http (which answers 431). Default 64 KiB.
	MaxHeaderBytes int
	// Loops is the number of event loops (default GOMAXPROCS; see
	// ReserveLoopProcs).
	Loops int
}

var reserveOnce = sync.OnceValue(func() int {
	n := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(n + 1)
	return n
})

// ReserveLoopProcs prepares the process for a Loop and returns how many
// loops to run: one per processor the Go scheduler was given (GOMAXPROCS,
// which follows the machine's CPUs or the container's CPU quota). It
// raises GOMAXPROCS by one, once; later calls return the same count.
//
// A loop's socket calls are raw system calls (rawsys_linux.go), so a busy
// loop keeps its processor. With one processor per loop and none spare,
// the rest of the server (the platform's API, the connections the loops
// hand over, builds' log pumps) would run only when a loop pauses; and
// the scheduler's monitor, seeing no idle processor, took a loop's
// processor away each time its blocking epoll_wait lasted over 20 µs and
// woke a thread to look for work (~10,000 wake-ups a second under load,
// ~8% of the CPU per request of a 200 KB file). The spare processor ends
// both; the loops still run one per CPU.
func ReserveLoopProcs() int { return reserveOnce() }

func (o *LoopOptions) defaults() {
	if o.ClientIP == nil {
		o.ClientIP = func(peer, _ string) string { return peer }
	}
	if o.Errorf == nil {
		o.Errorf = log.Printf
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.Loops <= 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
}

// loopRequest is a parsed request head: views into the connection's
// buffer, valid until the next read.
type loopRequest struct {
	method, target, path, host, acceptEncoding, xff []byte
	xfHost, xfProto                                 []byte // X-Forwarded-Host and -Proto
	headers                                         []byte // the header lines, each ending in CRLF
	body                                            []byte // the whole body (serve reads it before answer)
	get, head                                       bool
	close                                           bool  // Connection: close
	bodyLen                                         int64 // Content-Length (0 when absent)
	// Things the loop leaves to net/http: a chunked body, an upgrade,
	// Expect, other Connection options; conditional marks a range or a
	// validator (net/http's for static files, the app's when proxied).
	chunked, upgrade, expect, connOther, conditional bool
}

// unusual reports whether a static file request needs net/http.
func (r *loopRequest) unusual() bool {
	return r.chunked || r.upgrade || r.expect || r.connOther || r.conditional || r.bodyLen != 0
}

// parse parses a request head (the request line and header lines, each
// ending in CRLF, without the blank line). It returns false for anything
// it does not take as it is — another protocol version, a target that is
// not a path, a folded or malformed line, a repeated Host — which then
// goes to net/http for the answer the standard gives it.
func (r *loopRequest) parse(b []byte) bool {
	sawLength := false
	i := bytes.Index(b, crlf)
	line := b[:i]
	b = b[i+2:]
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return false
	}
	r.method = line[:sp]
	line = line[sp+1:]
	sp = bytes.IndexByte(line, ' ')
	if sp <= 0 || string(line[sp+1:]) != "HTTP/1.1" {
		return false
	}
	r.target = line[:sp]
	if r.target[0] != '/' {
		return false
	}
	r.path = r.target
	if q := bytes.IndexByte(r.target, '?'); q >= 0 {
		r.path = r.target[:q]
	}
	switch string(r.method) {
	case "GET":
		r.get = true
	case "HEAD":
		r.head = true
	}
	r.headers = b
	for len(b) > 0 {
		i := bytes.Index(b, crlf)
		line := b[:i]
		b = b[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || bytes.IndexByte(line, '\r') >= 0 || bytes.IndexByte(line, '\n') >= 0 || bytes.IndexByte(line, 0) >= 0 {
			return false
		}
		name := line[:colon]
		for _, ch := range name {
			if !isTokenChar(ch) {
				return false // includes folded lines, which start with a space
			}
		}
		value := bytes.Trim(line[colon+1:], " \t")
		switch {
		case eqFold(name, "host"):
			if r.host != nil || len(value) == 0 {
				return false
			}
			r.host = value
		case eqFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = bytes.Trim(tok, " \t")
				switch {
				case eqFold(tok, "close"):
					r.close = true
				case eqFold(tok, "keep-alive"), len(tok) == 0:
				case eqFold(tok, "upgrade"):
					r.upgrade = true
				default:
					r.connOther = true
				}
			}
		case eqFold(name, "content-length"):
			if sawLength {
				return false
			}
			sawLength = true
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || len(value) == 0 || value[0] == '+' {
				return false
			}
			r.bodyLen = n
		case eqFold(name, "accept-encoding"):
			if r.acceptEncoding != nil {
				r.conditional = true // two of them: net/http's answer
			}
			r.acceptEncoding = value
		case eqFold(name, "x-forwarded-for"):
			if r.xff != nil {
				r.connOther = true // several: net/http joins them
			}
			r.xff = value
		case eqFold(name, "x-forwarded-host"):
			r.xfHost = value
		case eqFold(name, "x-forwarded-proto"):
			r.xfProto = value
		case eqFold(name, "transfer-encoding"):
			r.chunked = true
		case eqFold(name, "upgrade"):
			r.upgrade = true
		case eqFold(name, "expect"):
			r.expect = true
		case eqFold(name, "range"), len(name) > 3 && eqFold(name[:3], "if-"):
			r.conditional = true
		}
	}
	return r.host != nil
}

var crlf = []byte("\r\n")

// eqFold reports whether b equals the lower-case ASCII s, ignoring case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// isTokenChar reports whether c may appear in a header name (RFC 9110).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}
