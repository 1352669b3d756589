package api

import (
	"bytes"
	"io"
	"log/slog"
	"os"
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
// plain slog.NewTextHandler. Lines never interleave.
//
// When w is an *os.File (Gantry's stderr: a file, a pipe to journald, a
// terminal), request lines on the fast path are buffered: a request only
// appends its line to memory, and a goroutine of the handler's own
// (started with the first request line, it runs as long as the process)
// writes them to w once 64 KiB are waiting or at the latest 100 ms after
// the first, so no request waits for the disk (an appending write to a
// file can block for milliseconds on the file system's journal or on
// writeback; a pipe, on its reader). Should w stop taking lines (a stuck
// disk or reader), up to 4 MiB are held, then request lines are dropped
// and counted, and a WARN line `msg="request lines dropped" count=N`
// follows the lines written before them once w takes lines again. Every
// other line is written at once, after the request lines buffered before
// it, as before. FlushLog writes out what is buffered (at a clean stop); a
// crash can lose the last 100 ms of request lines. RequestLogWriter lets
// lines formatted elsewhere (the edge loops' rounds) join the buffer.
// Other writers (a buffer in memory, such as the one each edge loop gives
// its handler and reads itself, without a lock) are written at once, each
// line in one Write.
func NewTextHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	_, file := w.(*os.File)
	return newTextHandler(w, opts, file)
}

// The buffering of request lines (NewTextHandler).
const (
	logFlushSize  = 64 << 10               // the buffered lines are written at this size,
	logFlushAfter = 100 * time.Millisecond // or at the latest this long after the first of them
	logHoldMax    = 4 << 20                // beyond this many bytes waiting, request lines are dropped
	logKeepCap    = 1 << 20                // a buffer grown beyond this (while w was stuck) is not kept
)

// newTextHandler is NewTextHandler, buffering request lines or not
// whatever w is.
func newTextHandler(w io.Writer, opts *slog.HandlerOptions, buffered bool) slog.Handler {
	if opts != nil && (opts.ReplaceAttr != nil || opts.AddSource) {
		return slog.NewTextHandler(w, opts)
	}
	lw := &lockedWriter{w: w}
	if buffered {
		lw.buffered = true
		lw.flushSize, lw.flushAfter, lw.holdMax = logFlushSize, logFlushAfter, logHoldMax
		lw.kick = make(chan struct{}, 1)
		if opts != nil {
			lw.level = opts.Level
		}
	}
	return &textHandler{Handler: slog.NewTextHandler(lw, opts), w: lw}
}

type textHandler struct {
	slog.Handler // slog's, writing to w
	w            *lockedWriter
}

// lockedWriter is the handler's output: slog's lines (Write) and the fast
// path's request lines (writeRequestLine), which, buffered, wait in
// pending for the flusher goroutine.
type lockedWriter struct {
	w io.Writer
	// writeMu is held by whoever writes to w, so lines never interleave
	// and come out in order: it is taken before pending is taken out
	// (under mu) and held until what was taken, and the line that wanted
	// it written first, are written. It comes before mu.
	writeMu sync.Mutex
	buf     []byte // unbuffered: the fast path's line, under writeMu

	buffered   bool
	flushSize  int           // logFlushSize (tests change these before the first line)
	flushAfter time.Duration // logFlushAfter
	holdMax    int           // logHoldMax
	level      slog.Leveler  // the handler's level (nil: INFO), for the dropped-lines warning
	kick       chan struct{} // one slot: pending has a first line, or is full

	mu      sync.Mutex
	pending []byte    // request lines not yet taken to be written
	spare   []byte    // the other buffer, while no one is writing
	since   time.Time // when the first line in pending was logged
	dropped int       // request lines dropped since pending was last taken
	started bool      // the flusher runs
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.buffered {
		l.writePending()
	}
	return l.w.Write(p)
}

// writePending writes the buffered request lines, then the warning for
// the lines dropped after them, if any, to w. The caller holds writeMu.
func (l *lockedWriter) writePending() {
	l.mu.Lock()
	out, dropped := l.pending, l.dropped
	l.pending, l.spare, l.dropped = l.spare[:0], nil, 0
	l.mu.Unlock()
	if dropped > 0 && (l.level == nil || l.level.Level() <= slog.LevelWarn) {
		out = appendDroppedLine(out, time.Now(), dropped)
	}
	if len(out) > 0 {
		_, _ = l.w.Write(out)
	}
	if cap(out) > logKeepCap {
		out = nil // the memory of a stall is not kept
	}
	l.mu.Lock()
	l.spare = out[:0]
	l.mu.Unlock()
}

// hold appends a request line (or, from RequestLogWriter, whole lines)
// to pending, or counts lines dropped when holdMax bytes already wait,
// and starts or wakes the flusher as needed. It makes no system call
// (but for waking the flusher, at most twice per buffer written) and,
// in steady state, no allocation.
func (l *lockedWriter) hold(t time.Time, lines int, add func([]byte) []byte) {
	l.mu.Lock()
	n := len(l.pending)
	if n >= l.holdMax {
		l.dropped += lines
		l.mu.Unlock()
		return
	}
	if !l.started {
		l.started = true
		l.pending = make([]byte, 0, l.flushSize+l.flushSize/4)
		l.spare = make([]byte, 0, l.flushSize+l.flushSize/4)
		go l.flusher()
	}
	if n == 0 {
		l.since = t
	}
	l.pending = add(l.pending)
	wake := n == 0 || n < l.flushSize && len(l.pending) >= l.flushSize
	l.mu.Unlock()
	if wake {
		select {
		case l.kick <- struct{}{}:
		default: // already woken
		}
	}
}

// flusher writes pending to w once it holds flushSize bytes or its first
// line is flushAfter old, outside mu, so requests go on adding lines
// meanwhile (into the other buffer).
func (l *lockedWriter) flusher() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for range l.kick {
		for {
			l.mu.Lock()
			n, due := len(l.pending), l.since.Add(l.flushAfter)
			l.mu.Unlock()
			if n == 0 {
				break // taken by a Write or FlushLog meanwhile
			}
			if wait := time.Until(due); n < l.flushSize && wait > 0 {
				timer.Reset(wait)
				select {
				case <-l.kick:
					timer.Stop()
				case <-timer.C:
				}
				continue
			}
			l.writeMu.Lock()
			l.writePending()
			l.writeMu.Unlock()
		}
	}
}

// FlushLog writes out the request lines h holds (a handler from
// NewTextHandler buffering them), as a clean stop must before the process
// exits. For other handlers it does nothing.
func FlushLog(h slog.Handler) {
	if th, ok := h.(*textHandler); ok && th.w.buffered {
		th.w.writeMu.Lock()
		th.w.writePending()
		th.w.writeMu.Unlock()
	}
}

// RequestLogWriter returns a writer for whole request lines bound for w
// (the edge loops' LogOutput, which gets the lines of a round of events in
// one Write): when h is NewTextHandler's handler on w buffering request
// lines, the lines join its buffer, as its own request lines do (written
// by its goroutine, in order with its other lines, dropped and counted
// when w is stuck), so the caller never waits for w. Otherwise it is w.
func RequestLogWriter(h slog.Handler, w io.Writer) io.Writer {
	if th, ok := h.(*textHandler); ok && th.w.buffered && th.w.w == w {
		return requestLogWriter{th.w}
	}
	return w
}

type requestLogWriter struct{ l *lockedWriter }

func (r requestLogWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		r.l.hold(time.Now(), bytes.Count(p, []byte{'\n'}), func(b []byte) []byte { return append(b, p...) })
	}
	return len(p), nil
}

// writeRequestLine writes the line if every value can go unquoted and
// reports whether it did.
func (h *textHandler) writeRequestLine(t time.Time, level slog.Level, method, host, path string, status int, d time.Duration, bytes int64, ip string) bool {
	if !plain(method) || !plain(host) || !plain(path) || !plain(ip) {
		return false
	}
	l := h.w
	if l.buffered {
		l.hold(t, 1, func(b []byte) []byte {
			return appendRequestLine(b, t, level, method, host, path, status, d, bytes, ip)
		})
		return true
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.buf = appendRequestLine(l.buf[:0], t, level, method, host, path, status, d, bytes, ip)
	_, _ = l.w.Write(l.buf)
	if cap(l.buf) > 4096 {
		l.buf = nil
	}
	return true
}

// appendDroppedLine appends the line slog's text handler writes for
// slog.Warn("request lines dropped", "count", n, "reason", "the log could
// not keep up") at t.
func appendDroppedLine(b []byte, t time.Time, n int) []byte {
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, t)
	b = append(b, ` level=WARN msg="request lines dropped" count=`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, " reason=\"the log could not keep up\"\n"...)
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
