//go:build unix

package githost

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts cmd in its own process group and makes cancelling
// it kill the whole group (git spawns git-remote-http, index-pack, …).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}
