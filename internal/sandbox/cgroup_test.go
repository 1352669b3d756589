package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOwnCgroups(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       map[string]string
	}{
		{"hybrid", "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/ee75\n2:cpu,cpuacct:/x\n0::/\n",
			map[string]string{"name=systemd": "/", "pids": "/", "memory": "/process_api/ee75", "cpu": "/x", "cpuacct": "/x", "": "/"}},
		{"unified", "0::/system.slice/gantry.service\n", map[string]string{"": "/system.slice/gantry.service"}},
		{"path with colon", "4:memory:/a:b\n", map[string]string{"memory": "/a:b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ownCgroups(tc.data)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCounter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memory.events")
	if err := os.WriteFile(p, []byte("low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := counter(p, "oom_kill"); got != 2 {
		t.Errorf("got oom_kill %d, want 2", got)
	}
	if got := counter(p, "oom_group_kill"); got != -1 {
		t.Errorf("got %d for a missing key, want -1", got)
	}
	if got := counter(filepath.Join(dir, "nope"), "max"); got != -1 {
		t.Errorf("got %d for a missing file, want -1", got)
	}
}

func TestCgroupLayoutHere(t *testing.T) {
	v2, base, err := cgroupLayout("/sys/fs/cgroup")
	if err != nil {
		unavailable(t, "no usable cgroups here: "+err.Error())
	}
	t.Logf("cgroup v2: %v, base %s", v2, base)
}

func TestGateScript(t *testing.T) {
	got := gateScript(Limits{FileSize: 1 << 20, OpenFiles: 100})
	want := `read -r g <&3 && [ "$g" = go ] || exit 125; exec 3<&-; ulimit -f 2048 2>/dev/null; ulimit -n 100 2>/dev/null; ulimit -c 0; exec "$@"`
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDedupEnv(t *testing.T) {
	got := dedupEnv([]string{"HOME=/workspace", "PATH=/bin", "BAD", "=x", "HOME=/other", "NUL=a\x00b", "A=1=2"})
	want := []string{"HOME=/other", "PATH=/bin", "A=1=2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSweep(t *testing.T) {
	parents := runsParents(t)
	stale := filepath.Join(parents.mem, "gantry-stale-test")
	other := filepath.Join(parents.mem, "not-ours-test")
	for _, d := range []string{stale, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(other)
	if err := New(Config{}).Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale cgroup %s was not removed", stale)
		os.Remove(stale)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("Sweep removed a cgroup that is not Gantry's")
	}
}

func TestSweepKeepsLivingOwners(t *testing.T) {
	parents := runsParents(t)
	mine := filepath.Join(parents.mem, cgroupName()) // this process lives: another run is being set up
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(mine)
	// A pid that cannot be running (above the kernel's maximum).
	dead := filepath.Join(parents.mem, "gantry-99999999-0123456789abcdef")
	if err := os.Mkdir(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dead)
	if err := New(Config{}).Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("Sweep removed the cgroup of a living process: %v", err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("Sweep kept the cgroup of a dead process")
	}
}

// A run left behind by a platform process that died mid-build still has a
// process in its cgroup: Sweep kills it and removes the cgroup.
func TestSweepKillsLeftovers(t *testing.T) {
	runsParents(t)
	// A cgroup named after a pid that cannot be running, holding a sleeper.
	cg, err := newCgroup("/sys/fs/cgroup", "gantry-99999998-0123456789abcdef", Limits{Memory: -1, Pids: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.destroy()
	sleeper := exec.Command("sleep", "7777") // a duration no other test looks for
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	defer sleeper.Process.Kill()
	if err := cg.add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := New(Config{}).Sweep(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Sweep left the dead platform's process running")
	}
	for _, d := range cg.dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("Sweep kept %s", d)
		}
	}
}

// unavailable ends a test that cannot have what the sandbox needs: a
// failure, or a skip when GANTRY_TEST_SKIP_SANDBOX=1 (sandboxtest.SkipVar,
// which this internal test cannot import).
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("GANTRY_TEST_SKIP_SANDBOX") == "1" {
		t.Skip(why)
	}
	t.Fatalf("%s (set GANTRY_TEST_SKIP_SANDBOX=1 to skip)", why)
}

// On v1 a run that allocates past its memory limit is ended by the run's
// OOM guard, not by the kernel's OOM killer (whose reaper and console line
// no cgroup pays for): the kernel's oom_kill counter stays at 0, and the
// whole run ends — the allocating process and the small one beside it
// die of SIGKILL — and counts as out of memory.
func TestOOMGuardEndsTheRunInPlaceOfTheKernel(t *testing.T) {
	parents := runsParents(t)
	if parents.v2 {
		t.Skip("cgroup v2 has no oom_kill_disable: the kernel's OOM killer acts")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	cg, err := newCgroup("/sys/fs/cgroup", cgroupName(), Limits{Memory: 96 << 20, Pids: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.destroy()
	if cg.oom == nil {
		t.Fatal("no OOM guard on a v1 cgroup with a memory limit")
	}
	start := func(args ...string) (*exec.Cmd, chan error) {
		cmd := exec.Command(args[0], args[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := cg.add(cmd.Process.Pid); err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, done
	}
	_, bystanderDone := start("sleep", "7776") // a duration no other test looks for
	// The hog waits a moment so that it is in the cgroup before it allocates.
	hog, hogDone := start(node, "-e", `setTimeout(() => { const a = []; for (;;) a.push(Buffer.alloc(8 << 20, 1)) }, 300)`)
	select {
	case err := <-hogDone:
		if ws, ok := hog.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("the hog ended with %v, want SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hog was not killed within 30 s")
	}
	if n := counter(filepath.Join(cg.mem, "memory.oom_control"), "oom_kill"); n > 0 {
		t.Errorf("the kernel's OOM killer killed %d processes, want the guard to", n)
	}
	if got := cg.oom.kills.Load(); got != 1 {
		t.Errorf("the guard killed %d processes, want 1", got)
	}
	if !cg.oomKilled(137) {
		t.Error("the run does not count as out of memory")
	}
	select {
	case <-bystanderDone:
	case <-time.After(10 * time.Second):
		t.Error("the small process beside the hog lives on: the run did not end as a whole")
	}
}

// runsParents returns the folders runs' cgroups are made under (made when
// missing), or ends the test as unavailable without root or cgroups.
func runsParents(t *testing.T) *cgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "needs root")
	}
	parents, err := cgroupParents("/sys/fs/cgroup", true)
	if err != nil {
		unavailable(t, "no usable cgroups here: "+err.Error())
	}
	return parents
}
