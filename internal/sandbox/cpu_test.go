package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
	"golang.org/x/sys/unix"
)

// cgroupOf returns the host folder of process pid's cgroup that holds
// controller's files ("cpu", "cpuacct"), as a user would find it from
// /proc/PID/cgroup: /sys/fs/cgroup/<controllers>/<path> on v1, the unified
// hierarchy's folder on v2. ok is false when pid is gone.
func cgroupOf(tb testing.TB, pid, controller string) (dir string, v2, ok bool) {
	tb.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		return "", false, false
	}
	unified := ""
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				return filepath.Join("/sys/fs/cgroup", parts[1], parts[2]), false, true
			}
		}
	}
	var st syscall.Statfs_t
	if syscall.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == 0x63677270 {
		return filepath.Join("/sys/fs/cgroup", unified), true, true
	}
	return filepath.Join("/sys/fs/cgroup/unified", unified), true, true
}

// cpuUsage reads the CPU time a cgroup has used: cpuacct.usage on v1,
// usage_usec of cpu.stat on v2.
func cpuUsage(tb testing.TB, dir string, v2 bool) time.Duration {
	tb.Helper()
	if v2 {
		b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, _ := strconv.ParseInt(v, 10, 64)
				return time.Duration(us) * time.Microsecond
			}
		}
		tb.Fatalf("no usage_usec in %s/cpu.stat", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
	if err != nil {
		tb.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ns)
}

// startRun starts script in the sandbox and waits until it prints
// "ready"; it returns the channel Run's error arrives on and the cancel
// that stops it.
func startRun(tb testing.TB, s *sandbox.Sandbox, l sandbox.Limits, script string) (<-chan error, context.CancelFunc) {
	tb.Helper()
	ws := workspace(tb, s, platformDir(tb), "a")
	return startCommand(tb, s, sandbox.Command{Args: []string{"sh", "-c", script}, Dir: ws, Limits: l})
}

// startCommand runs c in the sandbox and waits until it prints "ready";
// it returns the channel Run's error arrives on and the cancel that stops
// it (also called when tb's test ends).
func startCommand(tb testing.TB, s *sandbox.Sandbox, c sandbox.Command) (<-chan error, context.CancelFunc) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	ready := make(chan struct{})
	done := make(chan error, 1)
	out := &capture{}
	c.Output = func(stream sandbox.Stream, line string) {
		if line == "ready" {
			close(ready)
		}
		out.fn(stream, line)
	}
	go func() {
		_, err := s.Run(ctx, c)
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		tb.Fatalf("the run ended early: %v\n%s", err, out)
	case <-time.After(30 * time.Second):
		cancel()
		tb.Fatal("the run did not start within 30 s")
	}
	return done, cancel
}

// pidOf waits up to 5 s for a process whose command line contains s
// (what, for the failure message) and returns its pid.
func pidOf(tb testing.TB, s, what string) string {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if procs := processesMatching(tb, s); len(procs) > 0 {
			pid, _, _ := strings.Cut(procs[0], ": ")
			return pid
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no %s process found", what)
		}
	}
}

// marker returns a string unique to this test run, for process lists.
func marker(name string) string {
	return fmt.Sprintf("%s%d", name, time.Now().UnixNano()%1000000)
}

// statCounter reads key of a cgroup's cpu.stat (nr_throttled, …); -1
// when missing.
func statCounter(tb testing.TB, dir, key string) int64 {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// TestCPUQuota runs the attack of a build that spins on every core (four
// busy loops) under a quota of a fifth of a CPU, and measures what the
// kernel counts for the run's cgroup over three seconds of wall time: it
// must stay near 0.2 CPU. Without the quota the loops take what the
// machine has free (two CPUs on an idle two-core machine) and fail the
// check. On a machine so busy that the run's low weight gets it less than
// its quota anyway, the kernel never throttles it and the check proves
// nothing: the test then skips, saying so, rather than pass.
func TestCPUQuota(t *testing.T) {
	s := mustSandbox(t)
	mark := marker("cpuspin")
	done, cancel := startRun(t, s, sandbox.Limits{CPUs: 0.2, Timeout: time.Minute},
		fmt.Sprintf(`for i in 1 2 3 4; do sh -c 'while :; do :; done; : %s' & done; echo ready; wait`, mark))
	defer cancel()
	pid := pidOf(t, "while :; do :; done; : "+mark, "spinning")
	time.Sleep(300 * time.Millisecond) // let the other loops start
	acct, v2, ok := cgroupOf(t, pid, "cpuacct")
	cpu, _, ok2 := cgroupOf(t, pid, "cpu")
	if !ok || !ok2 {
		t.Fatal("the spinning process is gone")
	}
	if !strings.Contains(acct, "gantry-") || !strings.Contains(cpu, "gantry-") {
		t.Fatalf("the spinner's cgroups are %s and %s, want the run's own", acct, cpu)
	}
	th0 := statCounter(t, cpu, "nr_throttled")
	u0, t0 := cpuUsage(t, acct, v2), time.Now()
	time.Sleep(3 * time.Second)
	u1, t1 := cpuUsage(t, acct, v2), time.Now()
	throttled := statCounter(t, cpu, "nr_throttled") - th0
	cpus := float64(u1-u0) / float64(t1.Sub(t0))
	t.Logf("four spinners under a 0.2-CPU quota used %.3f CPUs over %v, throttled in %d periods (cgroup %s)",
		cpus, t1.Sub(t0).Round(time.Millisecond), throttled, acct)
	// 30 periods of 100 ms allow 0.6 s of CPU, plus at most one period's
	// 20 ms across the window's edges: 0.21 CPU. 0.3 leaves room for
	// timer slack and cannot be reached by a run held to its quota.
	if cpus > 0.3 {
		t.Errorf("the run used %.2f CPUs, want at most about 0.2", cpus)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if left := processesMatching(t, mark); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	if throttled <= 0 && !t.Failed() {
		t.Skipf("the machine was too busy for the run to reach its quota (%.2f CPUs, never throttled): the quota was not tested", cpus)
	}
}

// TestCPUDefaults checks the CPU limits a run gets by default, in the
// files an operator would read: a quota of one CPU per 100 ms period and
// the idle CPU class (cpu.idle 1; on v1 its folder's too, since the
// scheduler compares the platform's threads with that folder), or, on
// kernels without the class, a weight a tenth of the platform's (v1
// cpu.shares 102 against 1024, v2 cpu.weight 10 against 100).
func TestCPUDefaults(t *testing.T) {
	s := mustSandbox(t)
	mark := marker("sleep 3")
	done, cancel := startRun(t, s, sandbox.Limits{}, "echo ready; "+mark)
	defer cancel()
	pid := pidOf(t, mark, "sleeping")
	dir, v2, ok := cgroupOf(t, pid, "cpu")
	if !ok {
		t.Fatal("the process is gone")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	_, err := os.Stat(filepath.Join(dir, "cpu.idle"))
	idle := err == nil
	want := map[string]string{"cpu.max": "100000 100000", "cpu.weight": "10"}
	if !v2 {
		want = map[string]string{"cpu.cfs_quota_us": "100000", "cpu.cfs_period_us": "100000", "cpu.shares": "102"}
		// Never loose at the hierarchy's root, beside every process of
		// the machine.
		if filepath.Dir(dir) == "/sys/fs/cgroup/cpu" {
			t.Errorf("the run's cpu cgroup %s is at the hierarchy's root", dir)
		}
	}
	if idle {
		delete(want, "cpu.weight")
		delete(want, "cpu.shares")
		want["cpu.idle"] = "1"
		if !v2 && filepath.Base(filepath.Dir(dir)) == "gantry" {
			want["../cpu.idle"] = "1"
		}
	} else {
		t.Log("this kernel has no idle CPU class (cpu.idle): runs are weighted instead")
	}
	for f, w := range want {
		if got := read(f); got != w {
			t.Errorf("%s: got %q, want %q", f, got, w)
		}
	}
	cancel()
	<-done
}

// TestForkBomb runs the classic fork bomb under a process limit of 64 and
// half a CPU: it is held there and the run still ends cleanly, at its
// timeout, with nothing left running.
func TestForkBomb(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	mark := marker("bomb")
	start := time.Now()
	c, _, err := run(t, s, ws, sandbox.Limits{Pids: 64, CPUs: 0.5, Timeout: 5 * time.Second},
		fmt.Sprintf(`bomb() { bomb | bomb & }; bomb; while :; do sleep 1 2>/dev/null; done; : %s`, mark))
	var te *sandbox.TimeoutError
	var pe *sandbox.PidsError
	if !errors.As(err, &te) && !errors.As(err, &pe) {
		t.Errorf("got %v, want a TimeoutError or a PidsError\n%.2000s", err, c)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run returned after %v, want within seconds of the 5 s timeout", d)
	}
	if left := processesMatching(t, mark); len(left) > 0 {
		t.Errorf("%d processes left, e.g. %v", len(left), left[0])
	}
}

// TestEndAtPidsEndsAForkBomb runs the fork bomb of TestForkBomb with
// Limits.EndAtPids, as builds run: the run must end with a PidsError long
// before its timeout, and leave no process behind.
func TestEndAtPidsEndsAForkBomb(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	mark := marker("bomb")
	start := time.Now()
	c, _, err := run(t, s, ws, sandbox.Limits{Pids: 64, EndAtPids: true, Timeout: 60 * time.Second},
		fmt.Sprintf(`echo started; bomb() { bomb | bomb & }; bomb; while :; do sleep 1 2>/dev/null; done; : %s`, mark))
	var pe *sandbox.PidsError
	if !errors.As(err, &pe) || pe.Limit != 64 {
		t.Fatalf("got %v, want a PidsError with limit 64\n%.2000s", err, c)
	}
	if !c.has("stdout: started") {
		t.Errorf("the command did not run:\n%.2000s", c)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run returned after %v, want the bomb ended within moments of reaching the limit", d)
	}
	if left := processesMatching(t, mark); len(left) > 0 {
		t.Errorf("%d processes left, e.g. %v", len(left), left[0])
	}

	// Below the limit, a run that forks and ends processes goes on.
	c, _, err = run(t, s, ws, sandbox.Limits{Pids: 64, EndAtPids: true},
		`for i in $(seq 1 200); do (sleep 0.01 &) ; done; wait; echo finished`)
	if err != nil || !c.has("stdout: finished") {
		t.Errorf("200 short-lived processes, 2 at a time: %v\n%.2000s", err, c)
	}
}

// TestRunsTakeShortSlices reads the time slice the scheduler gives a
// run's processes (se.slice in /proc/PID/sched, in ns) from inside the
// run: every process the command starts must have the sandbox's 0.2 ms,
// also after changing its scheduling policy the ways that stay allowed,
// and sched_setattr, which could lengthen it, must be refused.
func TestRunsTakeShortSlices(t *testing.T) {
	if b, err := os.ReadFile("/proc/self/sched"); err != nil || !strings.Contains(string(b), "se.slice") {
		t.Skip("this kernel has no custom time slices (se.slice in /proc/self/sched): Linux 6.12 or later")
	}
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "a")
	c, _, err := run(t, s, ws, sandbox.Limits{}, `slice() { sed -n 's/^se.slice *: *//p' /proc/$1/sched; }
echo "shell $(slice $$)"
sh -c 'echo "child $(sed -n "s/^se.slice *: *//p" /proc/self/sched)"'
/usr/bin/python3 -c '
import os, ctypes
os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
print("batch", [l.split(":")[1].strip() for l in open("/proc/self/sched") if l.startswith("se.slice")][0])
'`)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	for _, want := range []string{"stdout: shell 200000", "stdout: child 200000", "stdout: batch 200000"} {
		if !c.has(want) {
			t.Errorf("no line %q:\n%s", want, c)
		}
	}
}

// TestRunsYieldTheCPUToThePlatform pins a spinning run and a spinning
// thread of this process (standing for the platform) to the same CPU for
// a second: in the idle CPU class the run gets only what the thread
// leaves, which is nothing (the kernel still gives an idle group a
// sliver: 3/1027 of the CPU); in the normal class at a tenth of the
// platform's weight it got 9%. Other work on the machine can only lower
// the run's share, so a busy machine cannot make this fail.
func TestRunsYieldTheCPUToThePlatform(t *testing.T) {
	s := mustSandbox(t)
	mark := marker("cpuyield")
	done, cancel := startRun(t, s, sandbox.Limits{Timeout: time.Minute},
		fmt.Sprintf(`taskset -c 0 sh -c 'while :; do :; done; : %s' & echo ready; wait`, mark))
	defer cancel()
	pid := pidOf(t, "while :; do :; done; : "+mark, "spinning")
	cpu, _, ok := cgroupOf(t, pid, "cpu")
	if !ok {
		t.Fatal("the spinning process is gone")
	}
	if _, err := os.Stat(filepath.Join(cpu, "cpu.idle")); err != nil {
		t.Skip("this kernel has no idle CPU class (cpu.idle, Linux 5.15 and later)")
	}
	acct, v2, _ := cgroupOf(t, pid, "cpuacct")

	used := make(chan float64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var set unix.CPUSet
		set.Set(0)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			t.Error(err)
		}
		u0, t0 := cpuUsage(t, acct, v2), time.Now()
		for time.Since(t0) < time.Second {
		}
		u1, t1 := cpuUsage(t, acct, v2), time.Now()
		used <- float64(u1-u0) / float64(t1.Sub(t0))
	}()
	share := <-used
	t.Logf("the run, pinned to CPU 0 beside a spinning platform thread, used %.3f of it", share)
	if share > 0.03 {
		t.Errorf("the run used %.1f%% of the platform thread's CPU, want under 3%% (the idle class)", share*100)
	}
	cancel()
	<-done
}
