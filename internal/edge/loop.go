package edge

import (
	"bytes"
	"io"
	"log"
	"log/slog"
	"runtime"
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

// proxied reports whether the loop passes the request on to an app itself
// (the rest goes to net/http's ReverseProxy): no chunked body, upgrade,
// Expect or other Connection option, a body of at most maxBody bytes.
func (r *loopRequest) proxied(maxBody int64) bool {
	return !r.chunked && !r.upgrade && !r.expect && !r.connOther && r.bodyLen <= maxBody
}

// parse parses a request head (the request line and header lines, each
// ending in CRLF, without the blank line: headEnd found it). It returns
// false for anything it does not take as it is, which then goes to
// net/http for the answer the standard gives it (400 for the malformed).
//
// It is strict, so that whatever the loop answers or passes on to an app
// is a request net/http would have accepted and read the same way (see
// docs/architecture.md, "The loops' parser"): the method an RFC 9110
// token (not CONNECT); one space on either side of the target; the target
// an origin-form path of visible ASCII (no controls, spaces, '#' or
// non-ASCII bytes) whose '%' escapes are complete; the version exactly
// HTTP/1.1 (HTTP/1.0 goes to net/http); field names tokens; field values
// free of control bytes but HTAB (so of CR, LF and NUL); no folded
// (obs-fold) lines; a Host of letters, digits, dots and hyphens with an
// optional numeric port, exactly once; at most one Content-Length, all
// digits. Bare CR inside a line is a control byte and bare LF is refused
// by headEnd, so every line ends in CRLF.
func (r *loopRequest) parse(b []byte) bool {
	sawLength := false
	i := bytes.Index(b, crlf)
	line := b[:i]
	b = b[i+2:]
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !isToken(line[:sp]) {
		return false
	}
	r.method = line[:sp]
	line = line[sp+1:]
	sp = bytes.IndexByte(line, ' ')
	if sp <= 0 || string(line[sp+1:]) != "HTTP/1.1" {
		return false
	}
	r.target = line[:sp]
	if r.target[0] != '/' || !validTarget(r.target) {
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
	case "CONNECT":
		return false
	}
	r.headers = b
	for len(b) > 0 {
		i := bytes.Index(b, crlf)
		line := b[:i]
		b = b[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return false
		}
		name := line[:colon]
		if !isToken(name) || !validFieldValue(line[colon+1:]) {
			return false // includes folded lines, which start with a space
		}
		value := bytes.Trim(line[colon+1:], " \t")
		switch {
		case eqFold(name, "host"):
			if r.host != nil || !plainHost(value) {
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
			n, ok := parseLength(value)
			if sawLength || !ok {
				return false
			}
			sawLength = true
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

// What take found at the start of a connection's input.
const (
	reqMore    = iota // not all of it has arrived
	reqHandOff        // not for the loop: net/http takes the connection
	reqReady          // a whole request the loop may take
)

// take parses the request at the start of in, head and body, as the loop
// serves it: a head that passes parse, and a body of Content-Length bytes,
// both within maxBytes. It returns the request's length with reqReady.
func (r *loopRequest) take(in []byte, maxBytes int) (int, int) {
	end, ok := headEnd(in)
	switch {
	case !ok:
		return 0, reqHandOff
	case end < 0 && len(in) >= maxBytes:
		return 0, reqHandOff // net/http answers 431
	case end < 0:
		return 0, reqMore
	case !r.parse(in[:end+2]):
		return 0, reqHandOff
	}
	// A body (for an app) is taken whole, when head and body fit in
	// maxBytes; a larger one goes to net/http.
	total := int64(end+4) + r.bodyLen
	if total > int64(maxBytes) {
		return 0, reqHandOff
	}
	if int64(len(in)) < total {
		return 0, reqMore // the rest of the body is on its way
	}
	r.body = in[end+4 : total]
	return int(total), reqReady
}

// headEnd finds the blank line that ends the head (of a request, or of an
// app's answer) at the start of in: head is in[:end+2], its lines with
// their CRLFs, and the head with its blank line takes end+4 bytes. It
// returns end -1 while the blank line has not arrived, and ok false for a
// line ending in a bare LF before it (net/http would read that LF as a
// line end, a program splitting on CRLF would not: such a message is
// never taken as it is).
func headEnd(in []byte) (end int, ok bool) {
	for i := 0; ; i++ {
		j := bytes.IndexByte(in[i:], '\n')
		if j < 0 {
			return -1, true
		}
		i += j
		if i == 0 || in[i-1] != '\r' {
			return -1, false
		}
		if i >= 3 && in[i-2] == '\n' && in[i-3] == '\r' {
			return i - 3, true
		}
	}
}

// parseLength reads a Content-Length value: digits only (no sign, no
// list), at most 18 of them.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// plainHost reports whether a Host value is one the loop takes: a name of
// letters, digits, dots and hyphens, then optionally ':' and a numeric
// port. Anything else (IPv6 literals, userinfo, other bytes net/http may
// refuse) goes to net/http.
func plainHost(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	port := false
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
		case c == ':' && !port:
			port = true
		case port:
			return false
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
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

// Byte classes of the parsers (RFC 9110 and RFC 9112).
var (
	tokenByte  [256]bool // tchar: method and field names
	valueByte  [256]bool // field-value bytes: HTAB, SP, VCHAR, obs-text
	targetByte [256]bool // request-target bytes: VCHAR but '#'
	hexByte    [256]bool
)

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		tokenByte[c] = 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), b) >= 0
		valueByte[c] = b == '\t' || b >= ' ' && b != 0x7f
		targetByte[c] = b > ' ' && b < 0x7f && b != '#'
		hexByte[c] = '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
	}
}

// isToken reports whether b is a non-empty RFC 9110 token (a method or a
// field name).
func isToken(b []byte) bool {
	for _, c := range b {
		if !tokenByte[c] {
			return false
		}
	}
	return len(b) > 0
}

// validFieldValue reports whether b holds only field-value bytes: no
// control byte but HTAB (so no CR, LF or NUL), no DEL.
func validFieldValue(b []byte) bool {
	for _, c := range b {
		if !valueByte[c] {
			return false
		}
	}
	return true
}

// validTarget reports whether a request target is visible ASCII without
// '#' and with every '%' followed by two hex digits.
func validTarget(t []byte) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !targetByte[c] {
			return false
		}
		if c == '%' && (i+2 >= len(t) || !hexByte[t[i+1]] || !hexByte[t[i+2]]) {
			return false
		}
	}
	return true
}
