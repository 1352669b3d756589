package sandbox_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// graceful is a server-like command that finishes its work when asked to
// stop: on SIGTERM it prints, waits a moment (a shell that died at once
// would end its pid namespace and kill it here) and exits 3.
const graceful = `python3 -c "
import signal, sys, time
def stop(*a):
    print('got SIGTERM', flush=True)
    time.sleep(0.3)
    print('cleaned up', flush=True)
    sys.exit(3)
signal.signal(signal.SIGTERM, stop)
print('ready', flush=True)
time.sleep(60)
"`

func TestTerminate(t *testing.T) {
	for _, mode := range []string{sandbox.ModeBwrap, sandbox.ModeNone} {
		t.Run(mode, func(t *testing.T) {
			var s *sandbox.Sandbox
			var dir string
			if mode == sandbox.ModeBwrap {
				s = mustSandbox(t)
				dir = workspace(t, s, platformDir(t), "term")
			} else {
				s = sandbox.New(sandbox.Config{Mode: sandbox.ModeNone})
				dir = t.TempDir()
			}
			c := &capture{}
			term := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				_, err := s.Run(context.Background(), sandbox.Command{
					Args: []string{"sh", "-c", graceful}, Dir: dir, Output: c.fn, Terminate: term,
					Limits: sandbox.Limits{Timeout: 30 * time.Second},
				})
				done <- err
			}()
			deadline := time.Now().Add(10 * time.Second)
			for !c.has("stdout: ready") {
				if time.Now().After(deadline) {
					t.Fatalf("never ready:\n%s", c)
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // not in the middle of printing "ready"
			close(term)
			select {
			case err := <-done:
				var ee *sandbox.ExitError
				if !errors.As(err, &ee) || ee.Code != 3 {
					t.Fatalf("got %v, want exit code 3\n%s", err, c)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the command did not stop:\n%s", c)
			}
			if !c.has("stdout: cleaned up") {
				t.Fatalf("the command was cut short:\n%s", c)
			}
		})
	}
}

func TestTerminateThenKill(t *testing.T) {
	s := mustSandbox(t)
	dir := workspace(t, s, platformDir(t), "stubborn")
	term := make(chan struct{})
	close(term) // asked at once: a command that ignores SIGTERM keeps running
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := s.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "trap '' TERM; sleep 60"}, Dir: dir, Terminate: term})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("got %v after %s, want the context's deadline", err, time.Since(start))
	}
	_ = os.Remove(dir)
}
