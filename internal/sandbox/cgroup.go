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

	"golang.org/x/sys/unix"
)

// cgroup2Magic is CGROUP2_SUPER_MAGIC, the statfs type of a cgroup v2 mount.
const cgroup2Magic = 0x63677270

// runsFolder is the folder runs' cgroups are made in, in a v1 hierarchy
// where the platform itself sits at the root (its own cgroup there is "/"):
// runs never lie loose at a hierarchy's root, beside every other process of
// the machine. In the cpu hierarchy this folder is in the idle class (or,
// on kernels without it, weighs as one run at the default CPUWeight), so
// all runs together never outweigh one busy thread of the platform,
// however many there are.
const runsFolder = "gantry"

// cgroup is one run's cgroup: on v1 a folder in each of the memory, pids
// and cpu hierarchies (and cpuacct, where it is mounted on its own), on v2
// a single folder. It is created nested under the cgroup the platform
// itself runs in, never at a hierarchy's root.
type cgroup struct {
	v2      bool
	mem     string    // folder holding the memory controller's files
	pids    string    // folder holding the pids controller's files (== mem on v2)
	cpu     string    // folder holding the cpu controller's files (== mem on v2)
	cpuacct string    // v1: the cpuacct controller's folder; == cpu when co-mounted with it, "" when not mounted
	io      string    // folder holding the io controller's files (v1 blkio); "" where the kernel has none
	oom     *oomGuard // v1 with a memory limit: kills in place of the kernel's OOM killer (nil: the kernel's)
}

// dirs lists the cgroup's distinct folders.
func (c *cgroup) dirs() []string {
	var out []string
	for _, d := range []string{c.mem, c.pids, c.cpu, c.cpuacct, c.io} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// cgroupLayout finds how cgroups are mounted under root: a unified (v2)
// hierarchy at root, or v1 memory, pids and cpu hierarchies at
// root/memory, root/pids and root/cpu (legacy and hybrid layouts), or,
// failing those, a v2 hierarchy at root/unified that has the memory, pids
// and cpu controllers.
func cgroupLayout(root string) (v2 bool, base string, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return false, "", fmt.Errorf("cgroups: %w", err)
	}
	if st.Type == cgroup2Magic {
		return true, root, nil
	}
	if exists(filepath.Join(root, "memory", "cgroup.procs")) && exists(filepath.Join(root, "pids", "cgroup.procs")) &&
		exists(filepath.Join(root, "cpu", "cgroup.procs")) {
		return false, root, nil
	}
	unified := filepath.Join(root, "unified")
	if b, err := os.ReadFile(filepath.Join(unified, "cgroup.controllers")); err == nil {
		f := strings.Fields(string(b))
		if slices.Contains(f, "memory") && slices.Contains(f, "pids") && slices.Contains(f, "cpu") {
			return true, unified, nil
		}
	}
	return false, "", fmt.Errorf("cgroups: no memory, pids and cpu controllers found under %s", root)
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

// cgroupParents returns the folders under which runs' cgroups are made, as
// a cgroup whose folders are those parents: on v2 the platform's own
// cgroup; on v1, in each hierarchy, the platform's own cgroup there, or
// runsFolder under it when that is the hierarchy's root. With create set,
// a missing runsFolder is made (its cpu.shares that of a run at the
// default weight); without, it is named anyway.
func cgroupParents(root string, create bool) (*cgroup, error) {
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
		p := filepath.Join(base, own[""])
		c := &cgroup{v2: true, mem: p, pids: p, cpu: p, cpuacct: p}
		if b, err := os.ReadFile(filepath.Join(p, "cgroup.controllers")); err == nil && slices.Contains(strings.Fields(string(b)), "io") {
			c.io = p
		}
		return c, nil
	}
	parent := func(controller string) (string, error) {
		path, ok := own[controller]
		if !ok {
			return "", fmt.Errorf("cgroups: this process is in no %s cgroup (see /proc/self/cgroup)", controller)
		}
		dir := filepath.Join(base, controller, path)
		if path != "/" {
			return dir, nil
		}
		dir = filepath.Join(dir, runsFolder)
		if !create {
			return dir, nil
		}
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cgroups: %w", err)
		}
		if controller == "cpu" {
			f, v := cpuClass(dir, false, DefaultLimits.CPUWeight)
			if err := writeFile(dir, f, v); err != nil {
				return "", err
			}
		}
		return dir, nil
	}
	p := &cgroup{}
	if p.mem, err = parent("memory"); err != nil {
		return nil, err
	}
	if p.pids, err = parent("pids"); err != nil {
		return nil, err
	}
	if p.cpu, err = parent("cpu"); err != nil {
		return nil, err
	}
	// blkio bounds the run's disk IO; missing, the run goes without.
	if exists(filepath.Join(base, "blkio", "cgroup.procs")) {
		if p.io, err = parent("blkio"); err != nil {
			return nil, err
		}
	}
	// cpuacct counts the run's CPU time. Co-mounted with cpu (cpu,cpuacct)
	// it is the cpu folder; mounted on its own it needs a folder of its
	// own; missing, the run goes without.
	cpuMount, acctMount := filepath.Join(base, "cpu"), filepath.Join(base, "cpuacct")
	if fc, err := os.Stat(cpuMount); err == nil {
		if fa, err := os.Stat(acctMount); err == nil && os.SameFile(fc, fa) {
			p.cpuacct = p.cpu
		} else if exists(filepath.Join(acctMount, "cgroup.procs")) {
			if p.cpuacct, err = parent("cpuacct"); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// child returns the cgroup name under the parents p.
func (p *cgroup) child(name string) *cgroup {
	c := &cgroup{v2: p.v2}
	for _, f := range []struct {
		dst *string
		src string
	}{{&c.mem, p.mem}, {&c.pids, p.pids}, {&c.cpu, p.cpu}, {&c.cpuacct, p.cpuacct}, {&c.io, p.io}} {
		if f.src != "" {
			*f.dst = filepath.Join(f.src, name)
		}
	}
	return c
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
	parents, err := cgroupParents(root, false)
	if err != nil {
		return err
	}
	var dead []string
	for _, p := range parents.dirs() {
		entries, err := os.ReadDir(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // no runs folder yet: no run was ever made here
		} else if err != nil {
			return fmt.Errorf("cgroups: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "gantry-") && !ownerAlive(e.Name()) && !slices.Contains(dead, e.Name()) {
				dead = append(dead, e.Name())
			}
		}
	}
	for _, name := range dead {
		_ = parents.child(name).destroy() // kills what is left, then removes the folders
	}
	return nil
}

// cpuShares converts a CPU weight on cgroup v2's scale (1–10000, default
// 100) to v1's cpu.shares (2–262144, default 1024).
func cpuShares(weight int64) int64 {
	return max(weight*1024/100, 2)
}

// cfsPeriod is the CPU quota's accounting period in microseconds: the
// kernel's default, 100 ms.
const cfsPeriod = 100000

// cpuQuota converts a quota in CPUs to microseconds of CPU time per
// cfsPeriod; the kernel takes no less than 1 ms.
func cpuQuota(cpus float64) int64 {
	return max(int64(cpus*cfsPeriod+0.5), 1000)
}

// newCgroup creates the cgroup name for one run with l's memory, pids and
// CPU limits (zero or negative: unlimited).
func newCgroup(root, name string, l Limits) (*cgroup, error) {
	parents, err := cgroupParents(root, true)
	if err != nil {
		return nil, err
	}
	cg := parents.child(name)
	if cg.v2 {
		if err := enableControllers(parents.mem, parents.io != ""); err != nil {
			return nil, err
		}
		if parents.io != "" && !controllerOn(parents.mem, "io") {
			cg.io = "" // the io controller could not be delegated: runs go without
		}
		if err := os.Mkdir(cg.mem, 0o755); err != nil {
			return nil, fmt.Errorf("cgroups: %w", err)
		}
		if err := cg.limit(l); err != nil {
			cg.destroy()
			return nil, err
		}
		return cg, nil
	}
	var made []string
	for _, d := range cg.dirs() {
		if err := os.Mkdir(d, 0o755); err != nil {
			for _, m := range made {
				_ = os.Remove(m)
			}
			return nil, fmt.Errorf("cgroups: %w", err)
		}
		made = append(made, d)
	}
	if err := cg.limit(l); err != nil {
		cg.destroy()
		return nil, err
	}
	if l.Memory > 0 {
		_ = cg.guardOOM() // failing, the kernel's OOM killer stays on
	}
	return cg, nil
}

// cpuClass returns the file and value that put the cpu cgroup dir in the
// idle CPU class (see cgroup.limit), or, on kernels without it (before
// 5.15), give it weight (v2's scale; v1's cpu.shares). For a run's cgroup
// and v1's runsFolder (at the default CPUWeight: one run's weight). An
// idle cgroup's weight cannot be written, so it is one or the other.
func cpuClass(dir string, v2 bool, weight int64) (file, value string) {
	switch {
	case exists(filepath.Join(dir, "cpu.idle")):
		return "cpu.idle", "1"
	case v2:
		return "cpu.weight", strconv.FormatInt(weight, 10)
	}
	return "cpu.shares", strconv.FormatInt(cpuShares(weight), 10)
}

// limit writes l's memory, pids and CPU limits into the cgroup's files.
//
// The run's cgroup is put in the idle CPU class where the kernel has one
// (cpu.idle, Linux 5.15 and later; on v1 its runsFolder too): any thread
// outside the runs that wakes (the edge's loops, the API, the machine's
// other work) takes the CPU from a run at once. In the normal class the
// scheduler lets a run it has picked finish its time slice first, and the
// woken thread waits for the next tick (up to 4 ms at 250 Hz): beside a
// build of eight spinners that got 0.03 CPUs a bystander's p99 went from
// 1.2 to 2.7 ms (bench/hostile). The price: runs get only the CPU the
// rest leaves, so builds and apps slow down on a machine kept busy by
// other work. Among themselves runs share as usual, and CPUWeight still
// counts where the class is missing.
func (c *cgroup) limit(l Limits) error {
	var files [][3]string // folder, file, value; the ones marked optional may be missing
	optional := map[string]bool{"memory.swap.max": true, "memory.memsw.limit_in_bytes": true, "memory.oom.group": true}
	if l.Memory > 0 {
		m := strconv.FormatInt(l.Memory, 10)
		if c.v2 {
			// memory.swap.max is absent without swap accounting.
			// memory.oom.group: an OOM kill ends the whole run (see oomGuard).
			files = append(files, [3]string{c.mem, "memory.max", m}, [3]string{c.mem, "memory.swap.max", "0"},
				[3]string{c.mem, "memory.oom.group", "1"})
		} else {
			// Memory+swap, where swap accounting exists, so the limit
			// cannot be dodged by swapping.
			files = append(files, [3]string{c.mem, "memory.limit_in_bytes", m}, [3]string{c.mem, "memory.memsw.limit_in_bytes", m})
		}
	}
	if l.Pids > 0 {
		files = append(files, [3]string{c.pids, "pids.max", strconv.FormatInt(l.Pids, 10)})
	}
	if l.CPUWeight > 0 {
		f, v := cpuClass(c.cpu, c.v2, l.CPUWeight)
		files = append(files, [3]string{c.cpu, f, v})
	}
	if l.CPUs > 0 {
		q := strconv.FormatInt(cpuQuota(l.CPUs), 10)
		if c.v2 {
			files = append(files, [3]string{c.cpu, "cpu.max", q + " " + strconv.Itoa(cfsPeriod)})
		} else {
			files = append(files, [3]string{c.cpu, "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)}, [3]string{c.cpu, "cpu.cfs_quota_us", q})
		}
	}
	for _, f := range files {
		if err := writeFile(f[0], f[1], f[2]); err != nil && !optional[f[1]] {
			return err
		}
	}
	return nil
}

// limitIO bounds the run's disk IO on devices ("MAJ:MIN" of whole
// disks, see ioDevices) with l's IO limits, and gives it l.IOWeight: v2
// io.max and io.weight (or io.bfq.weight), v1 blkio.throttle.* and
// blkio.weight (or blkio.bfq.weight). A kernel without the io controller
// (c.io empty), or a file or device it refuses, leaves the run without
// that bound: the writes are best effort, and TestRunIOBounds checks they
// take where the controller is.
func (c *cgroup) limitIO(l Limits, devices []string) {
	if c.io == "" {
		return
	}
	if l.IOWeight > 0 {
		if c.v2 {
			_ = writeFile(c.io, "io.weight", "default "+strconv.FormatInt(l.IOWeight, 10))
			_ = writeFile(c.io, "io.bfq.weight", strconv.FormatInt(min(max(l.IOWeight, 1), 1000), 10))
		} else {
			_ = writeFile(c.io, "blkio.weight", strconv.FormatInt(min(max(l.IOWeight*5, 10), 1000), 10))
			_ = writeFile(c.io, "blkio.bfq.weight", strconv.FormatInt(min(max(l.IOWeight, 1), 1000), 10))
		}
	}
	caps := []struct {
		v1, v2 string
		n      int64
	}{
		{"blkio.throttle.read_bps_device", "rbps", l.IOReadBPS},
		{"blkio.throttle.write_bps_device", "wbps", l.IOWriteBPS},
		{"blkio.throttle.read_iops_device", "riops", l.IOReadIOPS},
		{"blkio.throttle.write_iops_device", "wiops", l.IOWriteIOPS},
	}
	for _, dev := range devices {
		var line []string
		for _, k := range caps {
			if k.n <= 0 {
				continue
			}
			if c.v2 {
				line = append(line, k.v2+"="+strconv.FormatInt(k.n, 10))
			} else {
				_ = writeFile(c.io, k.v1, dev+" "+strconv.FormatInt(k.n, 10))
			}
		}
		if c.v2 && len(line) > 0 {
			_ = writeFile(c.io, "io.max", dev+" "+strings.Join(line, " "))
		}
	}
}

// ioDevices returns the block devices ("MAJ:MIN", whole disks, which is
// what the io controller takes) that files under dirs are read from and
// written to: the filesystem's own device (a volume's loop device), and
// for a loop device the disk its backing image lies on, which its IO
// reaches in the end. Folders on no block device (tmpfs) add none.
func ioDevices(dirs ...string) []string {
	var out []string
	add := func(dev uint64) {
		d := wholeDisk(dev)
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err != nil {
			continue
		}
		add(st.Dev)
		sys := fmt.Sprintf("/sys/dev/block/%d:%d/loop/backing_file", unix.Major(st.Dev), unix.Minor(st.Dev))
		if b, err := os.ReadFile(sys); err == nil {
			var bst syscall.Stat_t
			if syscall.Stat(strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)"), &bst) == nil {
				add(bst.Dev)
			}
		}
	}
	return out
}

// wholeDisk returns "MAJ:MIN" of the disk holding device dev (itself, or
// the disk a partition is part of), or "" when dev is no block device.
func wholeDisk(dev uint64) string {
	sys, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(dev), unix.Minor(dev)))
	if err != nil {
		return ""
	}
	if exists(filepath.Join(sys, "partition")) {
		sys = filepath.Dir(sys)
	}
	b, err := os.ReadFile(filepath.Join(sys, "dev"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cpuUsage is the CPU time the cgroup's processes have used, or -1 where
// the kernel does not count it (v1 without cpuacct).
func (c *cgroup) cpuUsage() time.Duration {
	if c.v2 {
		if us := counter(filepath.Join(c.cpu, "cpu.stat"), "usage_usec"); us >= 0 {
			return time.Duration(us) * time.Microsecond
		}
		return -1
	}
	if c.cpuacct == "" {
		return -1
	}
	if ns := readInt(filepath.Join(c.cpuacct, "cpuacct.usage")); ns >= 0 {
		return time.Duration(ns)
	}
	return -1
}

// controllerOn reports whether the v2 cgroup parent delegates controller
// to its children.
func controllerOn(parent, controller string) bool {
	b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	return err == nil && slices.Contains(strings.Fields(string(b)), controller)
}

// enableControllers makes memory, pids and cpu (and io, with withIO, as
// far as the kernel lets it) available to the children of the v2 cgroup
// parent. A v2 cgroup that holds processes cannot delegate controllers
// ("no internal processes"), so when enabling fails with EBUSY the
// platform's own processes are first moved into a leaf parent/gantry.
func enableControllers(parent string, withIO bool) error {
	b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	f := strings.Fields(string(b))
	if slices.Contains(f, "memory") && slices.Contains(f, "pids") && slices.Contains(f, "cpu") && (!withIO || slices.Contains(f, "io")) {
		return nil
	}
	if withIO {
		_ = writeFile(parent, "cgroup.subtree_control", "+io") // best effort: runs go without IO bounds
	}
	err = writeFile(parent, "cgroup.subtree_control", "+memory +pids +cpu")
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
	if withIO {
		_ = writeFile(parent, "cgroup.subtree_control", "+io")
	}
	return writeFile(parent, "cgroup.subtree_control", "+memory +pids +cpu")
}

// add moves process pid (and the threads of it) into the cgroup, in every
// hierarchy.
func (c *cgroup) add(pid int) error {
	s := strconv.Itoa(pid)
	for _, d := range c.dirs() {
		if err := writeFile(d, "cgroup.procs", s); err != nil {
			return err
		}
	}
	return nil
}

// oomKilled reports whether the run's OOM guard or the kernel's OOM killer
// ended a process of the cgroup. On v1 kernels without the oom_kill counter it falls back to "the
// limit was hit and the run died of SIGKILL" (exit 137).
func (c *cgroup) oomKilled(exitCode int) bool {
	if c.oom != nil && c.oom.kills.Load() > 0 {
		return true
	}
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
	for _, dir := range c.dirs() {
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
	if c.oom != nil {
		c.oom.stop()
	}
	var last error
	for _, d := range c.dirs() {
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
