package api

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// NewTextHandler is slog.NewTextHandler(w, opts) that writes request
// lines (the servers' and the edge loops', writeRequestLine) itself: the
// same bytes as the text handler, about four times faster (a request line
// cost 1.5 µs through slog's generic path, the largest share of the edge's
// own CPU per request after the kernel's). Lines with a value slog would
// quote (a space, '=', '"', a control or non-ASCII byte, an empty
// string), lines of handlers made with WithAttrs or WithGroup, and all
// other records take slog's path. With ReplaceAttr or AddSource set it is
// plain slog.NewTextHandler. Both paths write through one mutex, so lines
// never interleave.
func NewTextHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts != nil && (opts.ReplaceAttr != nil || opts.AddSource) {
		return slog.NewTextHandler(w, opts)
	}
	lw := &lockedWriter{w: w}
	return &textHandler{Handler: slog.NewTextHandler(lw, opts), w: lw}
}

type textHandler struct {
	slog.Handler // slog's, writing to w
	w            *lockedWriter
}

type lockedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte // the fast path's line, under mu
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// writeRequestLine writes the line if every value can go unquoted and
// reports whether it did.
func (h *textHandler) writeRequestLine(t time.Time, level slog.Level, method, host, path string, status int, d time.Duration, bytes int64, ip string) bool {
	if !plain(method) || !plain(host) || !plain(path) || !plain(ip) {
		return false
	}
	l := h.w
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = appendRequestLine(l.buf[:0], t, level, method, host, path, status, d, bytes, ip)
	_, _ = l.w.Write(l.buf)
	if cap(l.buf) > 4096 {
		l.buf = nil
	}
	return true
}

// appendRequestLine appends the line slog's text handler writes for a
// request record (writeRequestLine's attributes), for values plain says
// need no quoting.
func appendRequestLine(b []byte, t time.Time, level slog.Level, method, host, path string, status int, d time.Duration, bytes int64, ip string) []byte {
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, t)
	b = append(b, " level="...)
	b = append(b, level.String()...)
	b = append(b, " msg=request method="...)
	b = append(b, method...)
	b = append(b, " host="...)
	b = append(b, host...)
	b = append(b, " path="...)
	b = append(b, path...)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, " duration="...)
	b = append(b, d.String()...)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, " ip="...)
	b = append(b, ip...)
	return append(b, '\n')
}

// appendRFC3339Millis is slog's time format: RFC 3339 with exactly three
// digits of milliseconds (the same steps as log/slog's own).
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// plain reports whether slog's text handler writes s as it is: not empty,
// only printable ASCII but for space, '=' and '"' (slog quotes those;
// this is stricter than slog for DEL and non-ASCII, which then simply take
// slog's path).
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '=' || c == '"' {
			return false
		}
	}
	return true
}
