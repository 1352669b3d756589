package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// spared are the process names termTree leaves alone: the sandbox's own
// processes, and shells, which exit with the commands they run.
var spared = map[string]bool{"pasta": true, "passt": true, "pasta.avx2": true, "passt.avx2": true,
	"bwrap": true, "sh": true, "dash": true, "bash": true}

// termTree sends SIGTERM to the run's processes but the spared ones: those
// of its cgroup in bwrap mode, of its process group in mode none.
func (s *Sandbox) termTree(pid int, cg *cgroup) {
	var pids []int
	if cg != nil {
		pids = cg.procs()
	} else {
		pids = groupProcs(pid)
	}
	for _, p := range pids {
		if !spared[procName(p)] {
			_ = syscall.Kill(p, syscall.SIGTERM)
		}
	}
}

// procName returns the command name of process pid ("" once it is gone).
func procName(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// groupProcs lists the processes of process group pgid.
func groupProcs(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pg, err := syscall.Getpgid(pid); err == nil && pg == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}
