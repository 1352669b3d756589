package edge_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/edge"
)

// The loops' threads ask the scheduler for the shortest time slice and,
// as root, niceness -10, so a loop woken by a request preempts a
// sandboxed run at once: each loop thread shows se.slice 100000 (ns) in
// /proc and, as root, niceness -10 in its stat. Kernels before 6.12 have
// no custom slices, and no se.slice line: the slice is not checked there.
func TestLoopThreadsAskForShortSlicesAndPriority(t *testing.T) {
	e := edge.New("localhost", edge.NewTable(), "")
	startLoop(t, e, func(o *edge.LoopOptions) { o.Loops = 3 })
	root := os.Geteuid() == 0
	deadline := time.Now().Add(5 * time.Second)
	for {
		short, ahead, slices := 0, 0, false
		tasks, _ := filepath.Glob("/proc/self/task/*")
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join(task, "sched"))
			if err != nil {
				continue
			}
			slice := ""
			for _, l := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "se.slice" {
					slices, slice = true, strings.TrimSpace(v)
				}
			}
			if slice == "100000" {
				short++
			}
			if nice(t, task) == -10 {
				ahead++
			}
		}
		if (short >= 3 || !slices) && (ahead >= 3 || !root) {
			if !slices {
				t.Log("this kernel shows no se.slice (custom slices came in Linux 6.12): the slices were not checked")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads with a 0.1 ms slice and %d at niceness -10, want the 3 loops' at least (running as root: %v)", short, ahead, root)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nice is a thread's niceness, the 19th field of its /proc stat.
func nice(t *testing.T, task string) int {
	b, err := os.ReadFile(filepath.Join(task, "stat"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 17 {
		t.Fatalf("%s/stat: %q", task, b)
	}
	n, _ := strconv.Atoi(f[16]) // field 19 counted from pid; f[0] is field 3
	return n
}
