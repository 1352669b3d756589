package edge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/edge"
)

// The loops' threads ask the scheduler for the shortest time slice, so a
// loop woken by a request preempts a sandboxed run at once: each loop
// thread shows se.slice 100000 (ns) in /proc. Kernels before 6.12 have
// no custom slices, and no se.slice line: the test is skipped there.
func TestLoopThreadsAskForShortSlices(t *testing.T) {
	e := edge.New("localhost", edge.NewTable(), "")
	startLoop(t, e, func(o *edge.LoopOptions) { o.Loops = 3 })
	deadline := time.Now().Add(5 * time.Second)
	for {
		short, seen := 0, false
		tasks, _ := filepath.Glob("/proc/self/task/*/sched")
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "se.slice" {
					seen = true
					if strings.TrimSpace(v) == "100000" {
						short++
					}
				}
			}
		}
		if !seen {
			t.Skip("this kernel shows no se.slice (custom slices came in Linux 6.12)")
		}
		if short >= 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads with a 0.1 ms slice, want the 3 loops' at least", short)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
