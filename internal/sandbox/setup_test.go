package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// TestSetupFailuresAreRetried makes pasta fail as it does under load
// ("Failed to open tun socket in namespace") before the command starts: a
// run whose set-up fails twice is tried again and succeeds, and its output
// holds only the command's lines; one whose set-up keeps failing ends
// with a SetupError after three attempts, its command never run and
// pasta's line kept for the server log; a command that fails on its own is
// run once, as before.
func TestSetupFailuresAreRetried(t *testing.T) {
	sandboxtest.Require(t, sandbox.Config{})
	data := platformDir(t)
	run := func(t *testing.T, pasta, script string) (*capture, string, error) {
		t.Helper()
		s := sandbox.New(sandbox.Config{Pasta: pasta})
		ws := workspace(t, s, data, strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
		c := &capture{}
		_, err := s.Run(context.Background(), sandbox.Command{
			Args:   []string{"sh", "-c", "echo ran >> runs; " + script},
			Dir:    ws,
			Output: c.fn,
		})
		b, _ := os.ReadFile(filepath.Join(ws, "runs"))
		return c, string(b), err
	}

	t.Run("transient", func(t *testing.T) {
		pasta := sandboxtest.FlakyPasta(t, 2)
		c, runs, err := run(t, pasta, "echo hello")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, c)
		}
		if got := c.String(); got != "stdout: hello" {
			t.Errorf("output %q; want the command's line alone", got)
		}
		if n := sandboxtest.PastaRuns(t, pasta); n != 3 || runs != "ran\n" {
			t.Errorf("pasta ran %d times and the command %d; want 3 and 1", n, strings.Count(runs, "ran"))
		}
	})
	t.Run("persistent", func(t *testing.T) {
		pasta := sandboxtest.FlakyPasta(t, -1)
		c, runs, err := run(t, pasta, "echo hello")
		var se *sandbox.SetupError
		if !errors.As(err, &se) {
			t.Fatalf("got %v, want a SetupError\n%s", err, c)
		}
		if se.Attempts != 3 || !strings.Contains(se.Detail, "Failed to open tun socket in namespace") {
			t.Errorf("got %+v; want 3 attempts and pasta's line", se)
		}
		if got := c.String(); got != "" || runs != "" {
			t.Errorf("output %q, command runs %q; want nothing", got, runs)
		}
		if n := sandboxtest.PastaRuns(t, pasta); n != 3 {
			t.Errorf("pasta ran %d times; want 3", n)
		}
	})
	t.Run("the command's own failure", func(t *testing.T) {
		c, runs, err := run(t, "", "echo no >&2; exit 3")
		var ee *sandbox.ExitError
		if !errors.As(err, &ee) || ee.Code != 3 {
			t.Fatalf("got %v, want exit code 3\n%s", err, c)
		}
		if runs != "ran\n" || c.String() != "stderr: no" {
			t.Errorf("command runs %q, output %q; want one run and its line", runs, c)
		}
	})
}
