package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroup2Magic is CGROUP2_SUPER_MAGIC, the statfs type of a cgroup v2 mount.
const cgroup2Magic = 0x63677270

// cgroup is one run's cgroup: on v1 a folder in each of the memory and pids
// hierarchies, on v2 a single folder. It is created nested under the
// cgroup the platform itself runs in, never at a hierarchy's root.
type cgroup struct {
	v2   bool
	mem  string // folder holding the memory controller's files
	pids string // folder holding the pids controller's files (== mem on v2)
}

// cgroupLayout finds how cgroups are mounted under root: a unified (v2)
// hierarchy at root, or v1 memory and pids hierarchies at root/memory and
// root/pids (legacy and hybrid layouts), or, failing those, a v2 hierarchy
// at root/unified that has the memory and pids controllers.
func cgroupLayout(root string) (v2 bool, base string, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return false, "", fmt.Errorf("cgroups: %w", err)
	}
	if st.Type == cgroup2Magic {
		return true, root, nil
	}
	if exists(filepath.Join(root, "memory", "cgroup.procs")) && exists(filepath.Join(root, "pids", "cgroup.procs")) {
		return false, root, nil
	}
	unified := filepath.Join(root, "unified")
	if b, err := os.ReadFile(filepath.Join(unified, "cgroup.controllers")); err == nil {
		f := strings.Fields(string(b))
		if slices.Contains(f, "memory") && slices.Contains(f, "pids") {
			return true, unified, nil
		}
	}
	return false, "", fmt.Errorf("cgroups: no memory and pids controllers found under %s", root)
}

// ownCgroups parses /proc/self/cgroup content into the path of each v1
// controller ("memory", "pids", …) and of the v2 hierarchy (key "").
func ownCgroups(data string) map[string]string {
	m := make(map[string]string)
	for line := range strings.SplitSeq(data, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			m[""] = parts[2]
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			m[c] = parts[2]
		}
	}
	return m
}

// cgroupParents returns the folders under which runs' cgroups are created:
// one per hierarchy (memory and pids on v1, the unified one on v2).
func cgroupParents(root string) ([]string, error) {
	v2, base, err := cgroupLayout(root)
	if err != nil {
		return nil, err
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	own := ownCgroups(string(self))
	if v2 {
		return []string{filepath.Join(base, own[""])}, nil
	}
	return []string{filepath.Join(base, "memory", own["memory"]), filepath.Join(base, "pids", own["pids"])}, nil
}

// sweepCgroups ends the runs ("gantry-*" cgroups under the parents) of
// platform processes that are gone: it kills what is left in them and
// removes them. Runs name their cgroups "gantry-<pid>-<random>" after the
// platform process that made them, so a sweep never touches another
// living process's runs — tests and replicas start side by side. A run's
// processes normally die with the platform (Pdeathsig, bubblewrap's
// --die-with-parent), but a pasta process (which sets up its namespaces
// on its own terms) was seen outliving a platform killed mid-build.
func sweepCgroups(root string) error {
	parents, err := cgroupParents(root)
	if err != nil {
		return err
	}
	var dead []string
	for _, p := range parents {
		entries, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("cgroups: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "gantry-") && !ownerAlive(e.Name()) && !slices.Contains(dead, e.Name()) {
				dead = append(dead, e.Name())
			}
		}
	}
	for _, name := range dead {
		// One parent on v2; memory and pids on v1 (cgroupParents).
		c := &cgroup{v2: len(parents) == 1, mem: filepath.Join(parents[0], name)}
		c.pids = c.mem
		if !c.v2 {
			c.pids = filepath.Join(parents[1], name)
		}
		_ = c.destroy() // kills what is left, then removes the folders
	}
	return nil
}

// newCgroup creates the cgroup name for one run with l's memory and pids
// limits (negative: unlimited).
func newCgroup(root, name string, l Limits) (*cgroup, error) {
	v2, base, err := cgroupLayout(root)
	if err != nil {
		return nil, err
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	own := ownCgroups(string(self))
	cg := &cgroup{v2: v2}
	if v2 {
		parent := filepath.Join(base, own[""])
		if err := enableControllers(parent); err != nil {
			return nil, err
		}
		cg.mem = filepath.Join(parent, name)
		cg.pids = cg.mem
		if err := os.Mkdir(cg.mem, 0o755); err != nil {
			return nil, fmt.Errorf("cgroups: %w", err)
		}
		if l.Memory > 0 {
			if err := writeFile(cg.mem, "memory.max", strconv.FormatInt(l.Memory, 10)); err != nil {
				cg.destroy()
				return nil, err
			}
			_ = writeFile(cg.mem, "memory.swap.max", "0") // absent without swap accounting
		}
		if l.Pids > 0 {
			if err := writeFile(cg.pids, "pids.max", strconv.FormatInt(l.Pids, 10)); err != nil {
				cg.destroy()
				return nil, err
			}
		}
		return cg, nil
	}
	memOwn, ok1 := own["memory"]
	pidsOwn, ok2 := own["pids"]
	if !ok1 || !ok2 {
		return nil, errors.New("cgroups: this process is in no memory or pids cgroup (see /proc/self/cgroup)")
	}
	cg.mem = filepath.Join(base, "memory", memOwn, name)
	cg.pids = filepath.Join(base, "pids", pidsOwn, name)
	if err := os.Mkdir(cg.mem, 0o755); err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	if err := os.Mkdir(cg.pids, 0o755); err != nil {
		_ = os.Remove(cg.mem)
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	if l.Memory > 0 {
		if err := writeFile(cg.mem, "memory.limit_in_bytes", strconv.FormatInt(l.Memory, 10)); err != nil {
			cg.destroy()
			return nil, err
		}
		// Memory+swap, where swap accounting exists, so the limit cannot
		// be dodged by swapping.
		_ = writeFile(cg.mem, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.Memory, 10))
	}
	if l.Pids > 0 {
		if err := writeFile(cg.pids, "pids.max", strconv.FormatInt(l.Pids, 10)); err != nil {
			cg.destroy()
			return nil, err
		}
	}
	return cg, nil
}

// enableControllers makes memory and pids available to the children of the
// v2 cgroup parent. A v2 cgroup that holds processes cannot delegate
// controllers ("no internal processes"), so when enabling fails with EBUSY
// the platform's own processes are first moved into a leaf parent/gantry.
func enableControllers(parent string) error {
	b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	f := strings.Fields(string(b))
	if slices.Contains(f, "memory") && slices.Contains(f, "pids") {
		return nil
	}
	err = writeFile(parent, "cgroup.subtree_control", "+memory +pids")
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EBUSY) {
		return err
	}
	leaf := filepath.Join(parent, "gantry")
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cgroups: %w", err)
	}
	procs, err := os.ReadFile(filepath.Join(parent, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	for p := range strings.FieldsSeq(string(procs)) {
		_ = writeFile(leaf, "cgroup.procs", p) // processes may have exited meanwhile
	}
	return writeFile(parent, "cgroup.subtree_control", "+memory +pids")
}

// add moves process pid (and the threads of it) into the cgroup.
func (c *cgroup) add(pid int) error {
	s := strconv.Itoa(pid)
	if err := writeFile(c.mem, "cgroup.procs", s); err != nil {
		return err
	}
	if c.pids != c.mem {
		return writeFile(c.pids, "cgroup.procs", s)
	}
	return nil
}

// oomKilled reports whether the kernel's OOM killer ended a process of the
// cgroup. On v1 kernels without the oom_kill counter it falls back to "the
// limit was hit and the run died of SIGKILL" (exit 137).
func (c *cgroup) oomKilled(exitCode int) bool {
	if c.v2 {
		return counter(filepath.Join(c.mem, "memory.events"), "oom_kill") > 0
	}
	ctl := filepath.Join(c.mem, "memory.oom_control")
	if n := counter(ctl, "oom_kill"); n >= 0 {
		return n > 0
	}
	return exitCode == 128+int(syscall.SIGKILL) && readInt(filepath.Join(c.mem, "memory.failcnt")) > 0
}

// pidsHit reports whether a fork or clone failed for the pids limit.
func (c *cgroup) pidsHit() bool {
	return counter(filepath.Join(c.pids, "pids.events"), "max") > 0
}

// kill SIGKILLs every process in the cgroup until none is left (or 5 s
// have passed). Forking is first forbidden (pids.max 0) so that a fork
// bomb cannot outrun it; on v2 cgroup.kill does it all at once.
func (c *cgroup) kill() {
	_ = writeFile(c.pids, "pids.max", "0")
	if c.v2 {
		_ = writeFile(c.mem, "cgroup.kill", "1")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := c.procs()
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procs lists the processes in the cgroup.
func (c *cgroup) procs() []int {
	var pids []int
	seen := make(map[int]bool)
	for _, dir := range []string{c.mem, c.pids} {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			continue
		}
		for f := range strings.FieldsSeq(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && !seen[p] {
				seen[p] = true
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// destroy kills what is left in the cgroup and removes its folders,
// retrying for up to 5 s while killed processes are being reaped.
func (c *cgroup) destroy() error {
	c.kill()
	dirs := []string{c.mem}
	if c.pids != c.mem {
		dirs = append(dirs, c.pids)
	}
	var last error
	for _, d := range dirs {
		deadline := time.Now().Add(5 * time.Second)
		for {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if time.Now().After(deadline) {
				last = fmt.Errorf("cgroups: remove %s: %w", d, err)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return last
}

// writeFile writes s to the existing cgroup file dir/name.
func writeFile(dir, name, s string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cgroups: write %s to %s: %w", s, filepath.Join(dir, name), err)
	}
	return nil
}

// counter returns the value of key in a "key value" per line cgroup file,
// or -1 when the file or the key is missing.
func counter(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// readInt returns the integer held by a cgroup file, or -1.
func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// cgroupName is the name of a new run cgroup of this process.
func cgroupName() string {
	return fmt.Sprintf("gantry-%d-%s", os.Getpid(), randomHex(8))
}

// ownerAlive reports whether the process that named a run cgroup
// ("gantry-<pid>-…") still runs. Names without a pid have no owner.
func ownerAlive(name string) bool {
	rest := strings.TrimPrefix(name, "gantry-")
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil || syscall.Kill(pid, 0) == syscall.EPERM
}
