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

// fsSize returns the size in bytes of the filesystem holding dir (a build's
// or a lookup's volume), or 0 when it cannot be told.
func fsSize(dir string) int64 {
	var st syscall.Statfs_t
	if dir == "" || syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return int64(st.Blocks) * int64(st.Bsize)
}
