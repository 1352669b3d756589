package runtime_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// events records what the supervisor reports.
type events struct {
	mu      sync.Mutex
	lines   []string
	logs    []string
	failed  chan string
	crashes int
}

func newEvents() *events { return &events{failed: make(chan string, 1)} }

func (e *events) Output(stream sandbox.Stream, line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, string(stream)+": "+line)
}

func (e *events) Log(level, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.logs = append(e.logs, level+": "+msg)
}

func (e *events) Failed(crashes int, reason string) {
	e.mu.Lock()
	e.crashes = crashes
	e.mu.Unlock()
	e.failed <- reason
}

func (e *events) has(list *[]string, substr string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range *list {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

func (e *events) dump() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "output:\n" + strings.Join(e.lines, "\n") + "\nlogs:\n" + strings.Join(e.logs, "\n")
}

// newSupervisor returns a supervisor on the real sandbox, and a workspace
// holding testdata/app.py that the sandbox user may use.
func newSupervisor(t *testing.T) (*runtime.Supervisor, string) {
	t.Helper()
	sb := sandboxtest.Require(t, sandbox.Config{})
	dir, err := os.MkdirTemp("", "gantry-runtime-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	app, err := os.ReadFile("testdata/app.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "app.py"), app, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sb.PrepareWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	s := &runtime.Supervisor{Sandbox: sb, StartTimeout: 20 * time.Second, StopGrace: 2 * time.Second,
		BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond}
	t.Cleanup(func() { s.Close() })
	return s, ws
}

func get(t *testing.T, addr, path string) (int, string, error) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestAppStartsWithItsEnvironmentAndStops(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	ev := newEvents()
	app, err := s.New(runtime.Spec{Name: "t1", Dir: ws, Command: "python3 app.py",
		Env: []string{"GREETING=the sandbox", "PORT=1", "HOST=evil"}, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatalf("start: %v\n%s", err, ev.dump())
	}
	code, body, err := get(t, app.Addr(), "/")
	if err != nil || code != 200 || body != "hello from the sandbox" {
		t.Fatalf("got %d %q %v, want 200 hello from the sandbox", code, body, err)
	}
	for k, want := range map[string]string{"HOST": "0.0.0.0", "NODE_ENV": "production", "PYTHONUNBUFFERED": "1"} {
		if _, got, _ := get(t, app.Addr(), "/env/"+k); got != want {
			t.Errorf("%s: got %q, want %q", k, got, want)
		}
	}
	if _, got, _ := get(t, app.Addr(), "/env/PORT"); got == "1" || got == "" {
		t.Errorf("PORT: got %q, want the supervisor's port", got)
	}
	if _, got, _ := get(t, app.Addr(), "/env/USER"); got != "" {
		t.Errorf("USER leaked into the app: %q", got)
	}
	if !ev.has(&ev.lines, "stdout: listening on") {
		t.Errorf("the app's output was not reported:\n%s", ev.dump())
	}

	start := time.Now()
	app.Stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stop took %s", d)
	}
	select {
	case <-app.Done():
	default:
		t.Fatal("Done is not closed after Stop")
	}
	if _, _, err := get(t, app.Addr(), "/"); err == nil {
		t.Fatal("the app still answers after Stop")
	}
	app.Stop() // again: harmless
}

func TestAppThatExitsDuringStartup(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	app, err := s.New(runtime.Spec{Name: "t2", Dir: ws, Command: "echo loading config; sleep 0.2; echo 'Error: DATABASE_URL is not set' >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = app.Start(context.Background())
	var se *runtime.StartError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a *StartError", err)
	}
	if se.Message != "App exited with code 3 during start-up" {
		t.Errorf("got message %q", se.Message)
	}
	if strings.Join(se.Output, "|") != "loading config|Error: DATABASE_URL is not set" {
		t.Errorf("got output %q", se.Output)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("failing took %s: an app that exits must fail at once", d)
	}
	<-app.Done()
}

func TestAppThatNeverListens(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	s.StartTimeout = 1500 * time.Millisecond
	app, err := s.New(runtime.Spec{Name: "t3", Dir: ws, Command: "echo working; sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	err = app.Start(context.Background())
	var se *runtime.StartError
	if !errors.As(err, &se) || !strings.HasPrefix(se.Message, "App did not answer on port ") ||
		!strings.HasSuffix(se.Message, " within 2s: make sure it listens on the PORT environment variable") {
		t.Fatalf("got %v", err)
	}
	<-app.Done()
}

func TestCrashedAppRestarts(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	ev := newEvents()
	app, err := s.New(runtime.Spec{Name: "t4", Dir: ws, Command: "python3 app.py", Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Stop()
	get(t, app.Addr(), "/crash")
	deadline := time.Now().Add(20 * time.Second)
	for !ev.has(&ev.logs, "App restarted and answering") {
		if time.Now().After(deadline) {
			t.Fatalf("the app did not come back:\n%s", ev.dump())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _, err := get(t, app.Addr(), "/"); err != nil || code != 200 {
		t.Fatalf("after the restart: got %d %v", code, err)
	}
	if !ev.has(&ev.logs, "error: App exited with code 1; restarting in 50ms (crash 1 of 4 allowed within 10 minutes)") {
		t.Fatalf("no crash line:\n%s", ev.dump())
	}
	if !ev.has(&ev.lines, "stderr: crashing on purpose") {
		t.Fatalf("no crash output:\n%s", ev.dump())
	}
}

func TestCrashLoopGivesUp(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	s.CrashLimit = 3
	ev := newEvents()
	// The app answers, then dies a moment later, every time (after its
	// first answer: a start slowed by a busy machine still answers first).
	app, err := s.New(runtime.Spec{Name: "t5", Dir: ws, Command: "python3 app.py", Env: []string{"EXIT_AFTER_ANSWER=2"}, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatalf("start: %v\n%s", err, ev.dump())
	}
	select {
	case reason := <-ev.failed:
		if reason != "exited with code 2" || ev.crashes != 3 {
			t.Fatalf("got %d crashes, reason %q", ev.crashes, reason)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the supervisor never gave up:\n%s", ev.dump())
	}
	select {
	case <-app.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done is not closed after giving up")
	}
	if !ev.has(&ev.logs, "App exited with code 2; it crashed 3 times within 10 minutes, so it was stopped") {
		t.Fatalf("no give-up line:\n%s", ev.dump())
	}
	app.Stop()
}

func TestStopDuringStart(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	app, err := s.New(runtime.Spec{Name: "t6", Dir: ws, Command: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Start(context.Background()) }()
	time.Sleep(500 * time.Millisecond)
	app.Stop()
	if err := <-errc; !errors.Is(err, runtime.ErrStopped) {
		t.Fatalf("got %v, want ErrStopped", err)
	}
}

func TestCancelledStart(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	app, err := s.New(runtime.Spec{Name: "t7", Dir: ws, Command: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := app.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
	// Its port is free again.
	ln, err := net.Listen("tcp", app.Addr())
	if err != nil {
		t.Fatalf("port still held: %v", err)
	}
	ln.Close()
}

func TestStopIsGracefulThenForceful(t *testing.T) {
	t.Parallel()
	s, ws := newSupervisor(t)
	s.StopGrace = time.Second
	// A server that finishes its work on SIGTERM.
	graceful := `python3 -c "
import os, signal, sys, time, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
def stop(*a):
    print('draining', flush=True)
    time.sleep(0.2)
    print('bye', flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
ThreadingHTTPServer(('0.0.0.0', int(os.environ['PORT'])), BaseHTTPRequestHandler).serve_forever()
"`
	ev := newEvents()
	app, err := s.New(runtime.Spec{Name: "g", Dir: ws, Command: graceful, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatalf("start: %v\n%s", err, ev.dump())
	}
	app.Stop()
	if !ev.has(&ev.lines, "stdout: bye") {
		t.Fatalf("the app was not let finish:\n%s", ev.dump())
	}

	// One that ignores SIGTERM is killed after the grace period.
	stubborn := `python3 -c "
import os, signal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
signal.signal(signal.SIGTERM, signal.SIG_IGN)
ThreadingHTTPServer(('0.0.0.0', int(os.environ['PORT'])), BaseHTTPRequestHandler).serve_forever()
"`
	app, err = s.New(runtime.Spec{Name: "s", Dir: ws, Command: stubborn})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	app.Stop()
	if d := time.Since(start); d < time.Second || d > 8*time.Second {
		t.Fatalf("stop took %s, want the 1s grace period and a kill", d)
	}
	if _, _, err := get(t, app.Addr(), "/"); err == nil {
		t.Fatal("the stubborn app still answers")
	}
}
