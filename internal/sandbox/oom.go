package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// oomGuard ends a v1 run that outgrows its memory limit in place of the
// kernel's OOM killer, which is turned off for the run's memory cgroup
// (memory.oom_control's oom_kill_disable). Why: a kernel OOM kill does
// work no cgroup pays for — the OOM reaper, a kernel thread at the
// platform's priority, frees the victim's memory, and the "Killed process"
// line goes synchronously to the console, a serial port on many virtual
// machines. Here the kernel only pauses the run's allocating processes
// (under_oom) and signals an eventfd; the guard ends the whole run, as
// cgroup v2's memory.oom.group does (set there instead): its processes'
// memory is freed by their own exits, in their own cgroup, at the run's
// CPU weight and quota. A run that outgrows its memory ends as a whole —
// an app then counts one crash and restarts after its backoff, rather
// than one of its processes dying over and over while the rest lives on.
type oomGuard struct {
	ctl   string   // memory.oom_control
	ev    *os.File // the eventfd, non-blocking: reads wait in the poller
	kills atomic.Int64
	once  sync.Once
}

// guardOOM turns the kernel's OOM killer off for the v1 cgroup c and
// starts its guard; on error the kernel's killer stays on.
func (c *cgroup) guardOOM() error {
	if c.v2 {
		return nil
	}
	ctlPath := filepath.Join(c.mem, "memory.oom_control")
	ctl, err := os.Open(ctlPath)
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	defer ctl.Close() // the registration keeps what it needs
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("cgroups: eventfd: %w", err)
	}
	ev := os.NewFile(uintptr(efd), "oom-eventfd")
	if err := writeFile(c.mem, "cgroup.event_control", fmt.Sprintf("%d %d", efd, ctl.Fd())); err != nil {
		ev.Close()
		return err
	}
	if err := writeFile(c.mem, "memory.oom_control", "1"); err != nil {
		ev.Close()
		return err
	}
	g := &oomGuard{ctl: ctlPath, ev: ev}
	c.oom = g
	go g.watch(c)
	return nil
}

// watch relieves each OOM the kernel reports until the guard stops (its
// eventfd closed). Removing the cgroup signals the eventfd once more.
func (g *oomGuard) watch(c *cgroup) {
	buf := make([]byte, 8)
	for {
		if _, err := g.ev.Read(buf); err != nil {
			return
		}
		g.relieve(c)
	}
}

// relieve ends the run when its cgroup is under OOM: it forbids forks and
// SIGKILLs every process of it (the kill of Run's own clean-up).
func (g *oomGuard) relieve(c *cgroup) {
	if counter(g.ctl, "under_oom") != 1 {
		return
	}
	g.kills.Add(1)
	c.kill()
}

// stop ends the guard; it may be called more than once.
func (g *oomGuard) stop() {
	g.once.Do(func() { _ = g.ev.Close() })
}
