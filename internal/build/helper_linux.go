package build

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runHelper starts the platform's binary (/proc/self/exe, which still
// works when the file was replaced by an upgrade) as the helper, gives it
// job and reads its result.
func runHelper(ctx context.Context, job helperJob) (helperResult, error) {
	in, err := json.Marshal(job)
	if err != nil {
		return helperResult{}, err
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Env = []string{helperEnv + "=1", "GOMAXPROCS=1", "PATH=/usr/bin:/bin"}
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return helperResult{}, ctx.Err()
		}
		return helperResult{}, fmt.Errorf("build helper: %w: %s", err, strings.TrimSpace(errOut.String()))
	}
	var res helperResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return helperResult{}, fmt.Errorf("build helper: %w: %q", err, out.String())
	}
	return res, nil
}

// idleProcess puts every thread of this process in the idle scheduling
// classes (threads started later are made from these and inherit them)
// and on one core. Best effort: a kernel that refuses leaves it as it is.
func idleProcess() {
	runtime.GOMAXPROCS(1)
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if attr, err := unix.SchedGetAttr(tid, 0); err == nil {
			attr.Policy, attr.Nice, attr.Priority = unix.SCHED_IDLE, 0, 0
			_ = unix.SchedSetAttr(tid, attr, 0)
		}
		const ioprioWhoProcess, ioprioClassIdle, ioprioClassShift = 1, 3, 13
		_, _, _ = unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), ioprioClassIdle<<ioprioClassShift)
	}
}
