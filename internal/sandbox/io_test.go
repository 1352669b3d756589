package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// TestRunIOBounds: a run in a volume (a build flooding its disk) gets its
// IO bounded by its cgroup on the volume's loop device — read and write
// bytes and operations per second, as the kernel's io controller reads
// them (v1 blkio.throttle.*, v2 io.max) — and the low IO weight where the
// scheduler has one.
func TestRunIOBounds(t *testing.T) {
	s := mustSandbox(t)
	v := volume(t, s, sandbox.Disk{Bytes: 64 << 20, Inodes: 500}, 0)
	var st syscall.Stat_t
	if err := syscall.Stat(v.Workspace, &st); err != nil {
		t.Fatal(err)
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	mark := marker("iobounds")
	done, cancel := startCommand(t, s, sandbox.Command{
		Args: []string{"sh", "-c", "echo ready; while :; do sleep 1; done", mark}, Dir: v.Workspace, Tmp: v.Tmp,
	})
	// The command's shell itself ($0 is the mark): the sandbox's own
	// processes name it in their arguments too, and some are short-lived.
	var pid string
	for deadline := time.Now().Add(5 * time.Second); pid == ""; time.Sleep(20 * time.Millisecond) {
		for _, p := range processesMatching(t, mark) {
			if id, cmdline, _ := strings.Cut(p, ": "); strings.HasPrefix(cmdline, "sh -c echo ready") {
				pid = id
			}
		}
		if pid == "" && time.Now().After(deadline) {
			t.Fatalf("the run's command is not running: %q", processesMatching(t, mark))
		}
	}
	d := sandbox.DefaultLimits
	want := map[string]int64{"rbps": d.IOReadBPS, "wbps": d.IOWriteBPS, "riops": d.IOReadIOPS, "wiops": d.IOWriteIOPS}
	if dir, v2, ok := cgroupOf(t, pid, "blkio"); ok && !v2 {
		for file, key := range map[string]string{
			"blkio.throttle.read_bps_device": "rbps", "blkio.throttle.write_bps_device": "wbps",
			"blkio.throttle.read_iops_device": "riops", "blkio.throttle.write_iops_device": "wiops",
		} {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if line := fmt.Sprintf("%s %d", dev, want[key]); !strings.Contains(string(b), line) {
				t.Errorf("%s holds %q, want %q", file, b, line)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "blkio.bfq.weight")); err == nil && strings.TrimSpace(string(b)) != "10" {
			t.Errorf("blkio.bfq.weight = %q, want 10", b)
		}
	} else {
		dir, _, ok := cgroupOf(t, pid, "io")
		if !ok {
			t.Fatal("the run's process is gone")
		}
		b, err := os.ReadFile(filepath.Join(dir, "io.max"))
		if err != nil {
			t.Fatalf("the run's cgroup has no io controller: %v", err)
		}
		line := fmt.Sprintf("%s rbps=%d wbps=%d riops=%d wiops=%d", dev, want["rbps"], want["wbps"], want["riops"], want["wiops"])
		if !strings.Contains(string(b), line) {
			t.Errorf("io.max holds %q, want %q", b, line)
		}
	}
	cancel()
	<-done
}

// TestRemoveVolumeInIdleClass: a workspace a run has just filled is
// removed from a thread in the idle I/O class (its CPU class stays the
// platform's: see inIdleClass).
func TestRemoveVolumeInIdleClass(t *testing.T) {
	s := mustSandbox(t)
	data := platformDir(t)
	v, err := s.OpenVolume(filepath.Join(data, "builds", "v"), sandbox.Disk{Bytes: 64 << 20, Inodes: 2000}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, s, v, 0, `head -c 32M /dev/urandom > big && mkdir f && cd f && seq 1 1000 | xargs touch`); err != nil {
		t.Fatalf("write: %v\n%s", err, out)
	}
	class, calls := -1, 0
	sandbox.SetIdleHook(t, func() {
		calls++
		if prio, _, errno := syscall.Syscall(unix.SYS_IOPRIO_GET, 1, 0, 0); errno == 0 {
			class = int(prio) >> 13
		}
	})
	if err := sandbox.RemoveVolume(v.Path); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || class != 3 {
		t.Errorf("removal ran %d times in I/O class %d; want once, in the idle class (3)", calls, class)
	}
	if _, err := os.Stat(v.Path + ".img"); !os.IsNotExist(err) {
		t.Errorf("the image is still there: %v", err)
	}
	if _, err := os.Stat(v.Path); !os.IsNotExist(err) {
		t.Errorf("the folder is still there: %v", err)
	}
}

// TestRemoveVolumeLeavesRunsAlone: removing workspaces while runs go on
// kills none of them. Each removal takes an OS thread of the Go runtime
// into the idle I/O class; a run's bubblewrap dies with the thread that
// forked it (Pdeathsig), so a removal that let its thread end (as it once
// did, to shed the class) killed the builds and apps started from that
// thread: clones and installs ended with exit 137 beside a deletion.
func TestRemoveVolumeLeavesRunsAlone(t *testing.T) {
	s := mustSandbox(t)
	data := platformDir(t)
	const runs = 6
	results := make(chan string, runs)
	for i := range runs {
		go func() {
			dir := filepath.Join(data, fmt.Sprintf("run%d", i))
			if err := os.MkdirAll(dir, 0o777); err != nil {
				results <- err.Error()
				return
			}
			res, err := s.Run(context.Background(), sandbox.Command{
				Args: []string{"sh", "-c", "sleep 3; echo fine"}, Dir: dir,
				Limits: sandbox.Limits{Timeout: time.Minute},
			})
			switch {
			case err != nil:
				results <- fmt.Sprintf("run %d: %v", i, err)
			case res.ExitCode != 0:
				results <- fmt.Sprintf("run %d ended with exit code %d", i, res.ExitCode)
			default:
				results <- ""
			}
		}()
	}
	// While they run, remove folders from many goroutines at once, so that
	// removals land on the threads the runs were forked from.
	deadline := time.Now().Add(2500 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		var wg sync.WaitGroup
		for j := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir := filepath.Join(data, fmt.Sprintf("gone-%d-%d", n, j))
				if err := os.Mkdir(dir, 0o755); err == nil {
					_ = sandbox.RemoveVolume(dir)
				}
			}()
		}
		wg.Wait()
	}
	for range runs {
		if msg := <-results; msg != "" {
			t.Error(msg)
		}
	}
}
