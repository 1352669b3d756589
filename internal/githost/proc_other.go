//go:build !unix

package githost

import (
	"os/exec"
	"time"
)

// setProcessGroup bounds how long Wait waits for git's children after a
// cancel on systems without process groups.
func setProcessGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

// fsSize is unknown here.
func fsSize(string) int64 { return 0 }
