package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/google/go-cmp/cmp"
)

// mustSandbox returns a bwrap-mode Sandbox, skipping the test where
// bubblewrap cannot run (not root, not installed).
func mustSandbox(tb testing.TB) *sandbox.Sandbox {
	tb.Helper()
	return sandboxtest.Require(tb, sandbox.Config{})
}

// platformDir returns a folder laid out like the platform's data folder
// (mode 0711, as the platform creates it): a database and a secret key only
// root may read, and a builds folder.
func platformDir(tb testing.TB) string {
	tb.Helper()
	base := tb.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(base, "builds"), 0o711); err != nil {
		tb.Fatal(err)
	}
	for name, content := range map[string]string{"gantry.db": "SQLite format 3", "secret.key": "s3cr3t-k3y"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return base
}

// workspace creates and prepares a workspace under data/builds.
func workspace(tb testing.TB, s *sandbox.Sandbox, data, name string) string {
	tb.Helper()
	dir := filepath.Join(data, "builds", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := s.PrepareWorkspace(dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// capture collects a run's output lines.
type capture struct {
	mu    sync.Mutex
	lines []string
}

func (c *capture) fn(stream sandbox.Stream, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, string(stream)+": "+line)
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

func (c *capture) has(line string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.lines {
		if l == line {
			return true
		}
	}
	return false
}

func run(tb testing.TB, s *sandbox.Sandbox, dir string, l sandbox.Limits, script string, env ...string) (*capture, sandbox.Result, error) {
	tb.Helper()
	c := &capture{}
	res, err := s.Run(context.Background(), sandbox.Command{
		Args: []string{"sh", "-c", script}, Dir: dir, Env: env, Limits: l, Output: c.fn,
	})
	return c, res, err
}

func TestRunsAsUnprivilegedUser(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	c, _, err := run(t, s, ws, sandbox.Limits{}, `id -u; id -g; id -G; hostname; pwd; touch /workspace/ok && echo wrote; touch /usr/x 2>/dev/null || echo usr-ro`)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	want := "stdout: 10001\nstdout: 10001\nstdout: 10001\nstdout: sandbox\nstdout: /workspace\nstdout: wrote\nstdout: usr-ro"
	if diff := cmp.Diff(want, c.String()); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(ws, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 10001 || st.Gid != 10001 {
		t.Errorf("got a file owned by %d:%d, want 10001:10001", st.Uid, st.Gid)
	}
}

func TestCannotSeePlatformOrOtherWorkspaces(t *testing.T) {
	s := mustSandbox(t)
	data := platformDir(t)
	ws := workspace(t, s, data, "a")
	other := workspace(t, s, data, "b")
	if err := os.WriteFile(filepath.Join(other, "private.txt"), []byte("other deployment"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GANTRY_SECRET_KEY", "platform-secret")
	paths := []string{
		filepath.Join(data, "gantry.db"),
		filepath.Join(data, "secret.key"),
		filepath.Join(other, "private.txt"),
		other,
		data,
		"/root",
		"/home",
		"/var",
		"/etc/passwd",
		"/etc/shadow",
		"/sys",
	}
	script := `for p in "$@"; do if [ -e "$p" ]; then echo "visible: $p"; fi; done
ls -A / | tr '\n' ' '; echo
cat ../workspace/../../etc/hostname 2>/dev/null
env | sort | grep -v '^PWD=' | grep -v '^SHLVL=' | grep -v '^_='
cat /proc/1/cmdline | tr '\0' ' '; echo`
	c := &capture{}
	_, err := s.Run(context.Background(), sandbox.Command{
		Args:   append([]string{"sh", "-c", script, "sh"}, paths...),
		Dir:    ws,
		Env:    []string{"API_TOKEN=user-secret-value"},
		Output: c.fn,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	out := c.String()
	if strings.Contains(out, "stdout: visible: ") {
		t.Fatalf("the sandbox sees platform paths:\n%s", out)
	}
	if !c.has("stdout: bin dev etc lib lib64 proc sbin tmp usr workspace ") {
		t.Errorf("got root listing %q, want only bin dev etc lib lib64 proc sbin tmp usr workspace", out)
	}
	for _, want := range []string{
		"stdout: API_TOKEN=user-secret-value",
		"stdout: HOME=/workspace",
		"stdout: PATH=/usr/local/bin:/usr/bin:/bin",
		"stdout: npm_config_cache=/tmp/.npm",
	} {
		if !c.has(want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "platform-secret") || strings.Contains(out, "GANTRY_") {
		t.Errorf("the platform's environment leaked:\n%s", out)
	}
	// The bubblewrap process (pid 1 inside) carries the environment in
	// --args, never in its command line.
	for _, l := range c.lines {
		if strings.Contains(l, "bwrap") && strings.Contains(l, "user-secret-value") {
			t.Errorf("a secret is visible in a command line: %q", l)
		}
	}
}

func TestStreamsLinesAsProduced(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	first := make(chan time.Time, 1)
	start := time.Now()
	var c capture
	_, err := s.Run(context.Background(), sandbox.Command{
		Args: []string{"sh", "-c", `echo one; echo two >&2; sleep 2; printf 'a\rb\r100%%\n'; printf 'last'`},
		Dir:  ws,
		Output: func(st sandbox.Stream, line string) {
			if line == "one" {
				first <- time.Now()
			}
			c.fn(st, line)
		},
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := (<-first).Sub(start); got > 1500*time.Millisecond {
		t.Errorf("first line arrived after %v, want it before the command ends", got)
	}
	for _, want := range []string{"stdout: one", "stderr: two", "stdout: 100%", "stdout: last"} {
		if !c.has(want) {
			t.Errorf("missing %q in\n%s", want, c.String())
		}
	}
}

func TestOutputCapAndLongLines(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	c, res, err := run(t, s, ws, sandbox.Limits{OutputLines: 10}, `head -c 20000 /dev/zero | tr '\0' x; echo; for i in $(seq 50); do echo line $i; done`)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(c.lines) != 10 || res.DroppedLines != 41 {
		t.Fatalf("got %d lines and %d dropped, want 10 and 41", len(c.lines), res.DroppedLines)
	}
	if got := len(c.lines[0]); got > sandbox.MaxLineLength+20 || !strings.HasSuffix(c.lines[0], "…") {
		t.Errorf("got a first line of %d bytes, want it cut at %d with …", got, sandbox.MaxLineLength)
	}
	if c.lines[1] != "stdout: line 1" {
		t.Errorf("got %q, want the line after the long one intact", c.lines[1])
	}
}

func TestExitCode(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	_, res, err := run(t, s, ws, sandbox.Limits{}, `echo failing >&2; exit 3`)
	var ee *sandbox.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || res.ExitCode != 3 {
		t.Fatalf("got %v (exit %d), want exit code 3", err, res.ExitCode)
	}
	if err.Error() != "exited with code 3" {
		t.Errorf("got %q", err.Error())
	}
}

func TestMemoryLimit(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	node, err := exec.LookPath("node")
	if err != nil || !strings.HasPrefix(node, "/usr/") {
		t.Skip("node is not installed under /usr")
	}
	start := time.Now()
	c, _, err := run(t, s, ws, sandbox.Limits{Memory: 128 << 20},
		`node -e 'const a = []; for (let i = 0; i < 64; i++) { a.push(Buffer.alloc(16 << 20, 1)); } console.log("survived")'`)
	var me *sandbox.MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a MemoryError\n%s", err, c)
	}
	if got, want := err.Error(), "ran out of memory (limit 128 MiB)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if c.has("stdout: survived") {
		t.Error("the hog survived")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestPidsLimit(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	start := time.Now()
	c, _, err := run(t, s, ws, sandbox.Limits{Pids: 32},
		`i=0; while [ $i -lt 200 ]; do sleep 3107 & i=$((i+1)); done; wait`)
	var pe *sandbox.PidsError
	if !errors.As(err, &pe) || pe.Limit != 32 {
		t.Fatalf("got %v, want a PidsError with limit 32\n%s", err, c)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v, want the run to end soon after the fork failure", d)
	}
	if got := processesMatching(t, "sleep 3107"); len(got) > 0 {
		t.Errorf("processes left: %v", got)
	}
}

func TestFileSizeLimit(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	_, _, err := run(t, s, ws, sandbox.Limits{FileSize: 1 << 20}, `head -c 3000000 /dev/zero > big`)
	var fe *sandbox.FileSizeError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a FileSizeError", err)
	}
}

func TestTimeoutKillsTree(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	start := time.Now()
	_, res, err := run(t, s, ws, sandbox.Limits{Timeout: time.Second},
		`sleep 1001 & (sleep 1002 &) ; setsid sleep 1003 & sleep 1000`)
	var te *sandbox.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a TimeoutError", err)
	}
	if got, want := err.Error(), "timed out after 1s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("Run returned after %v, want within seconds of the 1s timeout", d)
	}
	if res.ExitCode != -1 {
		t.Errorf("got exit code %d, want -1", res.ExitCode)
	}
	for _, sleeper := range []string{"sleep 1000", "sleep 1001", "sleep 1002", "sleep 1003"} {
		if got := processesMatching(t, sleeper); len(got) > 0 {
			t.Errorf("processes left: %v", got)
		}
	}
}

func TestCancelKillsTree(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started time.Time
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, sandbox.Command{
			Args: []string{"sh", "-c", `sleep 2001 & sh -c 'sleep 2002 & wait' & echo ready; wait`},
			Dir:  ws,
			Output: func(_ sandbox.Stream, line string) {
				if line == "ready" {
					started = time.Now()
					cancel()
				}
			},
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if d := time.Since(started); d > 5*time.Second {
			t.Errorf("stop took %v", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The exact command lines of this test's sleeps (not any "sleep 200…"
	// of another program on the machine).
	for _, cmd := range []string{"sleep 2001", "sleep 2002"} {
		for _, p := range processesMatching(t, cmd) {
			if strings.HasSuffix(p, ": "+cmd) {
				t.Errorf("process left: %v", p)
			}
		}
	}
}

func TestModeNone(t *testing.T) {
	s := sandbox.New(sandbox.Config{Mode: sandbox.ModeNone})
	if err := s.Available(); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	t.Setenv("GANTRY_SECRET_KEY", "platform-secret")
	c, _, err := run(t, s, ws, sandbox.Limits{}, `pwd; echo "$HOME"; echo "x${GANTRY_SECRET_KEY}x"; echo "$FOO"`, "FOO=bar")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	want := fmt.Sprintf("stdout: %s\nstdout: %s\nstdout: xx\nstdout: bar", ws, ws)
	if diff := cmp.Diff(want, c.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	start := time.Now()
	_, _, err = run(t, s, ws, sandbox.Limits{Timeout: 500 * time.Millisecond}, `sleep 3201 & sleep 3200`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if got := processesMatching(t, "sleep 320"); len(got) > 0 {
		t.Errorf("processes left: %v", got)
	}
}

func TestPrepareWorkspaceUnreachable(t *testing.T) {
	s := mustSandbox(t)
	base := t.TempDir() // mode 0700 parents: the sandbox user cannot pass
	if err := os.Chmod(filepath.Dir(base), 0o700); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	err := s.PrepareWorkspace(ws)
	if err == nil || !strings.Contains(err.Error(), "must be searchable") {
		t.Fatalf("got %v, want an unreachable-workspace error", err)
	}
}

func TestUnavailable(t *testing.T) {
	s := sandbox.New(sandbox.Config{Bwrap: "/nonexistent/bwrap"})
	err := s.Available()
	if !errors.Is(err, sandbox.ErrNotInstalled) {
		t.Fatalf("got %v, want ErrNotInstalled", err)
	}
	if want := "bubblewrap is not installed: run `apt-get install bubblewrap`, or set GANTRY_SANDBOX=none for development only"; err.Error() != want {
		t.Errorf("got %q, want %q", err.Error(), want)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		900: "900 B", 1 << 10: "1 KiB", 128 << 20: "128 MiB", 1 << 30: "1 GiB", 3 << 29: "1.5 GiB",
	} {
		if got := sandbox.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d): got %q, want %q", n, got, want)
		}
	}
}

// processesMatching lists host processes whose command line contains s.
func processesMatching(tb testing.TB, s string) []string {
	tb.Helper()
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		if strings.Contains(cmdline, s) {
			found = append(found, e.Name()+": "+cmdline)
		}
	}
	return found
}

func TestConcurrentRuns(t *testing.T) {
	s := mustSandbox(t)
	data := platformDir(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		ws := workspace(t, s, data, fmt.Sprint("w", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Run(context.Background(), sandbox.Command{
				Args: []string{"sh", "-c", "echo hi > out; sleep 0.5; cat out"}, Dir: ws,
				Limits: sandbox.Limits{Memory: 64 << 20, Pids: 16},
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestUnavailableTun: on a machine without udev the tun device is 0600 and
// pasta, as the sandbox user, cannot open it. The platform says so in one
// line with the command that fixes it, before trying a run.
func TestUnavailableTun(t *testing.T) {
	mustSandbox(t) // root, bubblewrap and pasta are here
	dev := filepath.Join(t.TempDir(), "tun")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := sandbox.New(sandbox.Config{TunDevice: dev}).Available()
	if err == nil {
		t.Fatal("a 0600 tun device was accepted")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "chmod 0666 "+dev) || strings.Contains(msg, "syslog") {
		t.Fatalf("got %q, want one line naming `chmod 0666 %s`", msg, dev)
	}
}
