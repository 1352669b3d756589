package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fast request line is byte for byte what slog's text handler writes.
func TestAppendRequestLineMatchesSlog(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("CET", 3600), time.FixedZone("NST", -(3*3600 + 1800))}
	times := []time.Time{
		time.Date(2026, 11, 22, 5, 31, 10, 0, time.UTC),
		time.Date(2026, 11, 22, 5, 31, 10, 999_999_999, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 1_000_000, time.UTC),
	}
	durations := []time.Duration{0, 999, 12345, 1_500_000, 61 * time.Second, 3*time.Hour + time.Nanosecond}
	cases := []struct {
		method, host, path, ip string
		status                 int
		bytes                  int64
	}{
		{"GET", "bench.localhost", "/assets/app-3f9a2c1d.js", "127.0.0.1", 200, 204800},
		{"HEAD", "my-site.localhost:8080", "/", "::1", 304, 0},
		{"POST", "app.gantry.example", `/a\b?x`, "2001:db8::1", 502, 1},
		{"GET", "x.localhost", "/~user/%20%3D", "10.0.0.1", 503, -1},
	}
	for _, z := range zones {
		for _, tm := range times {
			for _, d := range durations {
				for _, c := range cases {
					var want bytes.Buffer
					rec := slog.NewRecord(tm.In(z), logLevel(c.status), "request", 0)
					rec.AddAttrs(slog.String("method", c.method), slog.String("host", c.host), slog.String("path", c.path),
						slog.Int("status", c.status), slog.Duration("duration", d), slog.Int64("bytes", c.bytes), slog.String("ip", c.ip))
					if err := slog.NewTextHandler(&want, nil).Handle(context.Background(), rec); err != nil {
						t.Fatal(err)
					}
					got := appendRequestLine(nil, tm.In(z), logLevel(c.status), c.method, c.host, c.path, c.status, d, c.bytes, c.ip)
					if string(got) != want.String() {
						t.Fatalf("line differs:\n got %q\nwant %q", got, want.String())
					}
				}
			}
		}
	}
}

// WriteRequestLine gives the same line through NewTextHandler as through
// slog's handler, on the fast path and for values slog quotes.
func TestWriteRequestLineTextHandler(t *testing.T) {
	stamp := regexp.MustCompile(`^time=\S+ `)
	for _, c := range []struct{ host, path, ip string }{
		{"bench.localhost", "/index.html", "127.0.0.1"},
		{"bench.localhost", "/with space", "127.0.0.1"},
		{"bench.localhost", "/a=b", "127.0.0.1"},
		{"bench.localhost", `/say"hi"`, "127.0.0.1"},
		{"bench.localhost", "/caf\u00e9", "127.0.0.1"},
		{"bench.localhost", "/tab\tnl\n", "127.0.0.1"},
		{"", "/", ""},
	} {
		var fast, slow bytes.Buffer
		fh := NewTextHandler(&fast, nil)
		if _, ok := fh.(*textHandler); !ok {
			t.Fatalf("NewTextHandler(nil options) = %T, want the fast handler", fh)
		}
		WriteRequestLine(fh, "GET", c.host, c.path, 200, 1500*time.Microsecond, 42, c.ip)
		WriteRequestLine(slog.NewTextHandler(&slow, nil), "GET", c.host, c.path, 200, 1500*time.Microsecond, 42, c.ip)
		if f, s := stamp.ReplaceAllString(fast.String(), ""), stamp.ReplaceAllString(slow.String(), ""); f != s || f == "" {
			t.Errorf("path %q: fast handler wrote %q, slog %q", c.path, f, s)
		}
		// The same bytes once buffered.
		var buffered syncBuffer
		bh := newTextHandler(&buffered, nil, true)
		WriteRequestLine(bh, "GET", c.host, c.path, 200, 1500*time.Microsecond, 42, c.ip)
		FlushLog(bh)
		if b, s := stamp.ReplaceAllString(buffered.String(), ""), stamp.ReplaceAllString(slow.String(), ""); b != s {
			t.Errorf("path %q: buffered handler wrote %q, slog %q", c.path, b, s)
		}
	}
	// A file is buffered; a writer in memory (an edge loop's buffer) is not.
	if fh := NewTextHandler(os.Stderr, nil); !fh.(*textHandler).w.buffered {
		t.Error("NewTextHandler(os.Stderr) does not buffer request lines")
	}
	if fh := NewTextHandler(&bytes.Buffer{}, nil); fh.(*textHandler).w.buffered {
		t.Error("NewTextHandler(a bytes.Buffer) buffers request lines")
	}

	// Options are honoured: a level above INFO drops the line; attributes
	// added with WithAttrs appear (slog's path).
	var buf bytes.Buffer
	WriteRequestLine(NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}), "GET", "a.localhost", "/", 200, time.Millisecond, 1, "127.0.0.1")
	if buf.Len() != 0 {
		t.Errorf("a WARN handler wrote an INFO request line: %q", buf.String())
	}
	WriteRequestLine(NewTextHandler(&buf, nil).WithAttrs([]slog.Attr{slog.String("component", "edge")}), "GET", "a.localhost", "/", 200, time.Millisecond, 1, "127.0.0.1")
	if !strings.Contains(buf.String(), " component=edge method=GET") {
		t.Errorf("WithAttrs lost its attribute: %q", buf.String())
	}
	// Other records go through slog as usual.
	buf.Reset()
	slog.New(NewTextHandler(&buf, nil)).Info("database ready", "schema_version", 7)
	if !strings.Contains(buf.String(), `level=INFO msg="database ready" schema_version=7`) {
		t.Errorf("an ordinary record: %q", buf.String())
	}
}

func BenchmarkWriteRequestLine(b *testing.B) {
	for _, hc := range []struct {
		name string
		h    slog.Handler
	}{{"slog", slog.NewTextHandler(discard{}, nil)}, {"fast", NewTextHandler(discard{}, nil)}} {
		b.Run(hc.name, func(b *testing.B) {
			for b.Loop() {
				WriteRequestLine(hc.h, "GET", "bench.localhost", "/assets/app-3f9a2c1d.js", 200, 12345, 204800, "127.0.0.1")
			}
		})
	}
}

// The request line on the buffered path: what it costs a request (the
// flusher's write of /dev/null, once per 64 KiB, runs on its own
// goroutine), without allocating.
func BenchmarkRequestLine(b *testing.B) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	h := NewTextHandler(devnull, nil)
	b.ReportAllocs()
	for b.Loop() {
		WriteRequestLine(h, "GET", "bench.localhost", "/assets/app-3f9a2c1d.js", 200, 12345, 204800, "127.0.0.1")
	}
	FlushLog(h)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// IsLiveHost, which the edge's loops call for every request, without
// allocating.
func TestIsLiveHost(t *testing.T) {
	s := NewServer()
	s.PublicHost, s.LiveDomain = "localhost", "localhost"
	for host, want := range map[string]bool{
		"blog.localhost":      true,
		"blog.localhost:8080": true,
		"Blog.LocalHost.":     true,
		"a.b.localhost":       true,
		"localhost":           false,
		"localhost:8080":      false,
		".localhost":          false,
		"bloglocalhost":       false,
		"blog.localhost.evil": false,
		"blog.example.com":    false,
		"":                    false,
		"[::1]:8080":          false,
		"blog.localhost:":     true,
	} {
		if got := s.IsLiveHost(host); got != want {
			t.Errorf("IsLiveHost(%q) = %v, want %v", host, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.IsLiveHost("blog.localhost") }); n != 0 {
		t.Errorf("IsLiveHost allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.IsLiveHost("blog.localhost:8080") }); n != 0 {
		t.Errorf("IsLiveHost with a port allocates %v times per call", n)
	}
}

// logLines is out's lines, without the last newline.
func logLines(out string) []string {
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// Buffered request lines are written by FlushLog, else by the flusher 100
// ms after the first of them (not sooner), or once 64 KiB wait.
func TestRequestLinesBuffered(t *testing.T) {
	var out syncBuffer
	h := newTextHandler(&out, nil, true)
	start := time.Now()
	for i := range 3 {
		WriteRequestLine(h, "GET", "a.localhost", "/"+strconv.Itoa(i), 200, time.Millisecond, 1, "127.0.0.1")
	}
	if got, since := out.String(), time.Since(start); got != "" && since < logFlushAfter {
		t.Errorf("request lines written %v after the first, not held: %q", since, got)
	}
	FlushLog(h)
	lines := logLines(out.String())
	if len(lines) != 3 {
		t.Fatalf("after FlushLog: %d lines, want 3: %q", len(lines), out.String())
	}
	for i, line := range lines {
		if !strings.HasSuffix(line, fmt.Sprintf(" level=INFO msg=request method=GET host=a.localhost path=/%d status=200 duration=1ms bytes=1 ip=127.0.0.1", i)) {
			t.Errorf("line %d: %q", i, line)
		}
	}
	FlushLog(h) // nothing left: writes nothing
	if n := len(logLines(out.String())); n != 3 {
		t.Errorf("a second FlushLog wrote again: %d lines", n)
	}

	// Without FlushLog, the flusher writes the line after 100 ms.
	start = time.Now()
	WriteRequestLine(h, "GET", "a.localhost", "/later", 200, time.Millisecond, 1, "127.0.0.1")
	waitFor(t, &out, " path=/later ")
	if since := time.Since(start); since < logFlushAfter {
		t.Errorf("the line came %v after it was logged, sooner than %v", since, logFlushAfter)
	}
	if n := len(logLines(out.String())); n != 4 {
		t.Errorf("%d lines, want 4: %q", n, out.String())
	}

	// 64 KiB are written at once, without waiting for the timer.
	var big syncBuffer
	bh := newTextHandler(&big, nil, true)
	bh.(*textHandler).w.flushAfter = time.Hour
	n := 0
	for size := 0; size < logFlushSize; n++ {
		WriteRequestLine(bh, "GET", "a.localhost", "/"+strconv.Itoa(n), 200, time.Millisecond, 1, "127.0.0.1")
		size += len(appendRequestLine(nil, start, slog.LevelInfo, "GET", "a.localhost", "/"+strconv.Itoa(n), 200, time.Millisecond, 1, "127.0.0.1"))
	}
	waitFor(t, &big, fmt.Sprintf(" path=/%d ", n-1))
	if got := len(logLines(big.String())); got != n {
		t.Errorf("%d lines of 64 KiB written, want %d", got, n)
	}
}

// waitFor waits up to 2 s for out to contain s.
func waitFor(t *testing.T, out *syncBuffer, s string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !strings.Contains(out.String(), s); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q after 2 s: %q", s, out.String())
		}
	}
}

// Every other line comes out after the request lines buffered before it:
// slog's path (errors, request lines slog quotes) writes them first.
func TestLogOrder(t *testing.T) {
	var out syncBuffer
	h := newTextHandler(&out, nil, true)
	WriteRequestLine(h, "GET", "a.localhost", "/first", 200, time.Millisecond, 1, "127.0.0.1")
	WriteRequestLine(h, "GET", "a.localhost", "/with space", 200, time.Millisecond, 1, "127.0.0.1")
	slog.New(h).Error("internal error", "err", "boom")
	WriteRequestLine(h, "GET", "a.localhost", "/last", 200, time.Millisecond, 1, "127.0.0.1")
	FlushLog(h)
	want := []string{" path=/first ", ` path="/with space" `, ` msg="internal error" err=boom`, " path=/last "}
	lines := logLines(out.String())
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %q", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d is %q, want the one with %q", i, lines[i], w)
		}
	}

	// The same while the flusher writes often, to a slow writer: an error
	// line never overtakes request lines the flusher has taken out but not
	// yet written.
	slow := &slowWriter{}
	h = newTextHandler(slow, nil, true)
	h.(*textHandler).w.flushSize = 512
	logger := slog.New(h)
	const n = 3000
	for i := range n {
		if i%7 == 3 {
			logger.Error("internal error", "seq", i)
		} else {
			WriteRequestLine(h, "GET", "a.localhost", "/"+strconv.Itoa(i), 200, time.Millisecond, 1, "127.0.0.1")
		}
	}
	FlushLog(h)
	seq := regexp.MustCompile(`(?: path=/| seq=)(\d+)(?: |$)`)
	lines = logLines(slow.String())
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for i, line := range lines {
		if m := seq.FindStringSubmatch(line); m == nil || m[1] != strconv.Itoa(i) {
			t.Fatalf("line %d is %q", i, line)
		}
	}
}

// slowWriter takes its time for writes of more than a line (buffered
// request lines).
type slowWriter struct{ syncBuffer }

func (w *slowWriter) Write(p []byte) (int, error) {
	if bytes.Count(p, []byte{'\n'}) > 1 {
		time.Sleep(200 * time.Microsecond)
	}
	return w.syncBuffer.Write(p)
}

// A stuck writer does not hold up requests: their lines wait, up to 4 MiB,
// then are dropped, and once the writer takes lines again a WARN line
// counts them after the lines kept.
func TestRequestLinesStuckWriter(t *testing.T) {
	w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	h := newTextHandler(w, nil, true)
	lw := h.(*textHandler).w
	const total = 100_000
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		for i := range total {
			WriteRequestLine(h, "GET", "a.localhost", "/"+strconv.Itoa(i), 200, time.Millisecond, 1, "127.0.0.1")
		}
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		t.Logf("%d request lines in %v with the writer stuck", total, d)
	case <-time.After(20 * time.Second):
		close(w.release)
		t.Fatal("request lines waited for a stuck writer")
	}
	select {
	case <-w.entered:
	case <-time.After(2 * time.Second):
		t.Fatal("the flusher never wrote")
	}
	lw.mu.Lock()
	held, dropped := len(lw.pending), lw.dropped
	lw.mu.Unlock()
	if held < logHoldMax || held >= logHoldMax+200 || dropped == 0 {
		t.Errorf("with the writer stuck: %d bytes held, %d lines dropped; want 4 MiB held, and lines dropped", held, dropped)
	}

	close(w.release)
	FlushLog(h)
	lines := logLines(w.String())
	last := lines[len(lines)-1]
	kept := lines[:len(lines)-1]
	for i, line := range kept {
		if !strings.Contains(line, fmt.Sprintf(" msg=request method=GET host=a.localhost path=/%d ", i)) {
			t.Fatalf("line %d is %q", i, line)
		}
	}
	m := regexp.MustCompile(`^time=\S+ level=WARN msg="request lines dropped" count=(\d+) reason="the log could not keep up"$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("the last line is %q, want the dropped lines' warning", last)
	}
	n, _ := strconv.Atoi(m[1])
	if len(kept)+n != total {
		t.Errorf("%d lines kept and %d dropped, of %d", len(kept), n, total)
	}
	// slog's line for the warning.
	var want bytes.Buffer
	slog.New(slog.NewTextHandler(&want, nil)).Warn("request lines dropped", "count", n, "reason", "the log could not keep up")
	if stamp := regexp.MustCompile(`^time=\S+ `); stamp.ReplaceAllString(last+"\n", "") != stamp.ReplaceAllString(want.String(), "") {
		t.Errorf("warning %q, slog writes %q", last, want.String())
	}

	// Taken out, the lines of a stall leave the memory they took.
	lw.mu.Lock()
	if c := cap(lw.pending) + cap(lw.spare); c > 2*logKeepCap {
		t.Errorf("%d bytes of buffers kept after the stall", c)
	}
	lw.mu.Unlock()
	WriteRequestLine(h, "GET", "a.localhost", "/after", 200, time.Millisecond, 1, "127.0.0.1")
	FlushLog(h)
	if lines := logLines(w.String()); !strings.Contains(lines[len(lines)-1], " path=/after ") || len(lines) != len(kept)+2 {
		t.Errorf("after the stall: %d lines, the last %q", len(lines), lines[len(lines)-1])
	}
}

// stuckWriter's writes wait until release is closed.
type stuckWriter struct {
	syncBuffer
	once    sync.Once
	entered chan struct{} // closed at the first write
	release chan struct{}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return w.syncBuffer.Write(p)
}

// The warning is slog's line, and is left out of a log above WARN.
func TestDroppedLogLine(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 22, 5, 31, 10, 999_999_999, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.FixedZone("NST", -(3*3600+1800))),
	} {
		for _, n := range []int{1, 12345} {
			var want bytes.Buffer
			rec := slog.NewRecord(tm, slog.LevelWarn, "request lines dropped", 0)
			rec.AddAttrs(slog.Int("count", n), slog.String("reason", "the log could not keep up"))
			if err := slog.NewTextHandler(&want, nil).Handle(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			if got := appendDroppedLine(nil, tm, n); string(got) != want.String() {
				t.Errorf("got %q, want %q", got, want.String())
			}
		}
	}
	for _, c := range []struct {
		level slog.Level
		warn  bool
	}{{slog.LevelInfo, true}, {slog.LevelWarn, true}, {slog.LevelError, false}} {
		w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
		h := newTextHandler(w, &slog.HandlerOptions{Level: c.level}, true)
		h.(*textHandler).w.holdMax = 1000
		for range 100 {
			WriteRequestLine(h, "GET", "a.localhost", "/", 500, time.Millisecond, 1, "127.0.0.1")
		}
		close(w.release)
		FlushLog(h)
		if got := strings.Contains(w.String(), `msg="request lines dropped"`); got != c.warn {
			t.Errorf("level %v: warning written: %v, want %v", c.level, got, c.warn)
		}
	}
}

// Lines logged at once from many goroutines, through both paths, with
// FlushLog calls and the flusher writing often, come out whole, each
// goroutine's in order.
func TestRequestLinesConcurrent(t *testing.T) {
	var out syncBuffer
	h := newTextHandler(&out, nil, true)
	h.(*textHandler).w.flushSize = 2048
	logger := slog.New(h)
	const goroutines, each = 4, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				switch i % 10 {
				case 3:
					logger.Error("internal error", "g", g, "seq", i)
				case 5:
					WriteRequestLine(h, "GET", "a.localhost", fmt.Sprintf("/g%d %d", g, i), 200, time.Millisecond, 1, "127.0.0.1")
				case 7:
					FlushLog(h)
					fallthrough
				default:
					WriteRequestLine(h, "GET", "a.localhost", fmt.Sprintf("/g%d/%d", g, i), 200, time.Millisecond, 1, "127.0.0.1")
				}
			}
		})
	}
	wg.Wait()
	FlushLog(h)
	line := regexp.MustCompile(`^time=\S+ (?:level=ERROR msg="internal error" g=(\d) seq=(\d+)|level=INFO msg=request method=GET host=a\.localhost path=(?:/g(\d)/(\d+)|"/g(\d) (\d+)") status=200 duration=1ms bytes=1 ip=127\.0\.0\.1)$`)
	next := make([]int, goroutines)
	for _, l := range logLines(out.String()) {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a broken line: %q", l)
		}
		gs, is := m[1]+m[3]+m[5], m[2]+m[4]+m[6]
		g, _ := strconv.Atoi(gs)
		i, _ := strconv.Atoi(is)
		if i != next[g] {
			t.Fatalf("goroutine %d: line %d after line %d", g, i, next[g]-1)
		}
		next[g]++
	}
	for g, n := range next {
		if n != each {
			t.Errorf("goroutine %d: %d lines, want %d", g, n, each)
		}
	}
}

// The buffered fast path does not allocate.
func TestRequestLineBufferedAllocs(t *testing.T) {
	h := newTextHandler(discard{}, nil, true)
	if n := testing.AllocsPerRun(10000, func() {
		WriteRequestLine(h, "GET", "bench.localhost", "/assets/app-3f9a2c1d.js", 200, 12345, 204800, "127.0.0.1")
	}); n != 0 {
		t.Errorf("a buffered request line allocates %v times", n)
	}
}

// The edge loops' rounds of lines join the handler's buffer, in order with
// its other lines, and are dropped and counted when the writer is stuck.
func TestRequestLogWriter(t *testing.T) {
	var out syncBuffer
	h := newTextHandler(&out, nil, true)
	rw := RequestLogWriter(h, &out)
	if _, ok := rw.(requestLogWriter); !ok {
		t.Fatalf("RequestLogWriter(the buffered handler, its writer) = %T", rw)
	}
	var other bytes.Buffer
	for _, c := range []struct {
		h slog.Handler
		w io.Writer
	}{{h, &other}, {NewTextHandler(&other, nil), &other}, {slog.NewTextHandler(&other, nil), &other}} {
		if got := RequestLogWriter(c.h, c.w); got != c.w {
			t.Errorf("RequestLogWriter(%T, another writer) = %T, want the writer", c.h, got)
		}
	}
	rw.Write([]byte("round 1 line 1\nround 1 line 2\n"))
	slog.New(h).Info("database ready")
	rw.Write([]byte("round 2 line 1\n"))
	if strings.Contains(out.String(), "round 2") {
		t.Error("a round's lines were written at once")
	}
	FlushLog(h)
	lines := logLines(out.String())
	if len(lines) != 4 || lines[0] != "round 1 line 1" || lines[1] != "round 1 line 2" || !strings.HasSuffix(lines[2], `msg="database ready"`) || lines[3] != "round 2 line 1" {
		t.Errorf("lines: %q", lines)
	}

	w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	h = newTextHandler(w, nil, true)
	h.(*textHandler).w.holdMax = 1000
	rw = RequestLogWriter(h, w)
	for range 300 {
		rw.Write([]byte("a\nb\nc\n"))
	}
	close(w.release)
	FlushLog(h)
	lines = logLines(w.String())
	m := regexp.MustCompile(` count=(\d+) `).FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("no dropped lines' warning: %q", lines[len(lines)-1])
	}
	if n, _ := strconv.Atoi(m[1]); len(lines)-1+n != 900 {
		t.Errorf("%d lines kept, %d dropped, of 900", len(lines)-1, n)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes (a handler's flusher, the tests' servers).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
