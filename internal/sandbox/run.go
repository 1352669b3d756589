package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantryhq/gantry/internal/netpolicy"
)

// Paths inside the sandbox.
const (
	workspaceDir = "/workspace"
	// dataDir is where Command.Data is mounted.
	dataDir     = "/data"
	sandboxPath = Path
)

// gateScript returns the shell script that holds the command until the
// platform has put it into its cgroup: it waits for "go" on fd 3 (and exits
// 125 if the platform went away instead), closes fd 3, lowers its rlimits
// (file size, open files, core dumps; inherited by everything it starts)
// and execs its arguments. The rlimits are set from inside because
// prlimit(2) on another user's process needs CAP_SYS_RESOURCE, which root
// does not always hold (containers). A limit that is already lower stays.
func gateScript(l Limits) string {
	var b strings.Builder
	b.WriteString(`read -r g <&3 && [ "$g" = go ] || exit 125; exec 3<&-; `)
	if l.FileSize > 0 {
		fmt.Fprintf(&b, "ulimit -f %d 2>/dev/null; ", (l.FileSize+511)/512) // 512-byte blocks
	}
	if l.OpenFiles > 0 {
		fmt.Fprintf(&b, "ulimit -n %d 2>/dev/null; ", l.OpenFiles)
	}
	b.WriteString(`ulimit -c 0; exec "$@"`)
	return b.String()
}

// Run runs c and waits for it to end, streaming its output to c.Output.
//
// It returns a nil error only when the command exited 0. Otherwise the
// error is a *TimeoutError (Limits.Timeout reached), a *MemoryError (OOM
// killed), a *PidsError (failed at the process limit), a *FileSizeError
// (SIGXFSZ), an *ExitError (any other non-zero exit), or ctx's error
// wrapped when ctx was cancelled or its deadline passed. In every case no
// process of the run is left alive when Run returns: the whole tree is
// SIGKILLed within a few seconds of the timeout or cancellation.
//
// A run whose sandbox could not be set up (pasta could not open its tun
// device under load, a network rule or a mount failed: the command never
// started) is tried again, up to setupAttempts times in all, and then
// returns a *SetupError. The lines such an attempt printed (pasta's,
// bubblewrap's) never reach c.Output: they are the platform's, and go into
// the SetupError.
func (s *Sandbox) Run(ctx context.Context, c Command) (Result, error) {
	for attempt := 1; ; attempt++ {
		res, err := s.run(ctx, c)
		var se *SetupError
		if !errors.As(err, &se) {
			return res, err
		}
		se.Attempts = attempt
		if attempt >= setupAttempts || ctx.Err() != nil {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, err
		case <-time.After(setupBackoff << (attempt - 1)):
		}
	}
}

// setupAttempts is how many times Run tries a run whose sandbox could not
// be set up, waiting setupBackoff, then twice as long, between attempts.
const (
	setupAttempts = 3
	setupBackoff  = 250 * time.Millisecond
)

// infoFD is the descriptor on which bubblewrap reports that it started
// the command (--info-fd: its pid, as JSON). pasta and the network script
// pass it on untouched, and the command does not inherit it: a run that
// ends without a word on it never started its command.
const infoFD = 11

// run is one attempt of Run: it checks the command (prepare), makes the
// run's cgroup and pipes, starts the gate script under bubblewrap
// (command), hands the child its options and waits for it (supervise),
// then says how it ended (outcome).
func (s *Sandbox) run(ctx context.Context, c Command) (Result, error) {
	res := Result{ExitCode: -1}
	pr, err := s.prepare(ctx, c)
	if err != nil {
		return res, err
	}
	runCtx := ctx
	if pr.l.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, pr.l.Timeout)
		defer cancel()
	}

	var cg *cgroup
	if pr.bwrap {
		WarmRuntimes() // node's pages stay the platform's, out of the run's reclaim
		cg, err = newCgroup(s.cgroupRoot, cgroupName(), pr.l)
		if err != nil {
			return res, fmt.Errorf("sandbox: %w", err)
		}
		defer cg.destroy()
		cg.limitIO(pr.l, ioDevices(pr.dir, c.Tmp, c.Data))
	}

	var filter []byte
	if pr.bwrap && !s.noFilter {
		if filter, err = seccompFilter(); err != nil {
			return res, err
		}
	}

	p, err := newPipes(pr.bwrap, filter != nil)
	if err != nil {
		return res, fmt.Errorf("sandbox: %w", err)
	}
	defer p.closeAll()

	cmd, argData, cleanup, err := s.command(c, pr, p, filter)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return res, err
	}
	return s.supervise(ctx, runCtx, c, pr, cg, p, cmd, argData, filter)
}

// prepared is what prepare found out about a command before it runs.
type prepared struct {
	dir      string // the workspace, absolute
	l        Limits // with defaults
	bwrap    bool   // under bubblewrap (not ModeNone)
	network  string
	uid, gid uint32
}

// prepare checks a command before anything is made for it.
func (s *Sandbox) prepare(ctx context.Context, c Command) (prepared, error) {
	var pr prepared
	if len(c.Args) == 0 {
		return pr, errors.New("sandbox: empty command")
	}
	if c.Dir == "" {
		return pr, errors.New("sandbox: no workspace folder")
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return pr, fmt.Errorf("sandbox: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return pr, fmt.Errorf("sandbox: %w", err)
	} else if !fi.IsDir() {
		return pr, fmt.Errorf("sandbox: workspace %s is not a folder", dir)
	}
	pr.dir = dir
	pr.l = c.Limits.withDefaults()
	if pr.l.CPUWeight > 10000 {
		return pr, fmt.Errorf("sandbox: CPU weight %d is over 10000", pr.l.CPUWeight)
	}
	pr.bwrap = s.mode != ModeNone
	pr.network = s.network
	if !pr.bwrap {
		pr.network = NetworkHost
	}
	if err := checkForwards(c.Forward, pr.network); err != nil {
		return pr, err
	}
	if err := checkLoopbackPorts(c.HostLoopbackPorts, pr.network); err != nil {
		return pr, err
	}
	pr.uid, pr.gid = s.owner(c.UID, c.GID)
	if pr.bwrap && os.Geteuid() != 0 {
		return pr, fmt.Errorf("sandbox: must run as root to switch to uid %d", pr.uid)
	}
	if err := ctx.Err(); err != nil {
		return pr, fmt.Errorf("sandbox: %w", err)
	}
	return pr, nil
}

// command makes the process that runs c: the gate script, then (under
// bubblewrap) the network wrapper and bubblewrap itself, whose options
// (argData) are written to it once it started. cleanup, when not nil,
// removes what command made (the temporary folder of ModeNone).
func (s *Sandbox) command(c Command, pr prepared, p *pipes, filter []byte) (cmd *exec.Cmd, argData []byte, cleanup func(), err error) {
	l := pr.l
	cmd = &exec.Cmd{
		Path:   "/bin/sh",
		Stdout: p.outW,
		Stderr: p.errW,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if !pr.bwrap {
		tmp := c.Tmp
		if tmp == "" {
			tmp, err = os.MkdirTemp("", "gantry-run-")
			if err != nil {
				return nil, nil, nil, fmt.Errorf("sandbox: %w", err)
			}
			cleanup = func() { os.RemoveAll(tmp) }
		}
		cmd.Args = append([]string{"sh", "-c", gateScript(l), "gantry-sandbox"}, c.Args...)
		env := s.env(pr.dir, filepath.Join(tmp, ".npm"), dataEnv(c.Env, c.Data, c.Data))
		cmd.Env = append(env, "TMPDIR="+tmp)
		cmd.Dir = pr.dir
		cmd.ExtraFiles = []*os.File{p.gateR}
		return cmd, nil, cleanup, nil
	}
	bin, err := exec.LookPath(s.bwrap)
	if err != nil {
		return nil, nil, nil, ErrNotInstalled
	}
	args := []string{"sh", "-c", gateScript(l), "gantry-sandbox"}
	resolv := "/etc/resolv.conf"
	if pr.network == NetworkIsolated {
		var nameservers []netip.Addr
		if f, ns, err := resolvConf(hostResolvConfs...); err == nil {
			resolv, nameservers = f, ns
		}
		if s.allowErr != nil {
			return nil, nil, nil, fmt.Errorf("sandbox: Config.AllowNets: %w", s.allowErr)
		}
		allow, err := cleanPrefixes(append(slices.Clone(c.Allow), s.allow...))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("sandbox: Command.Allow: %w", err)
		}
		wrap, err := s.isolation(c.Forward, c.HostLoopbackPorts, nameservers, allow)
		if err != nil {
			return nil, nil, nil, err
		}
		args = append(args, wrap...)
	}
	args = append(args, bin, "--args", "4", "--")
	cmd.Args = append(args, c.Args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	// fds 3 and 4 the gate and bubblewrap's options, 5 to 9 closed,
	// the filter on filterFD (or closed), bubblewrap's report on infoFD.
	cmd.ExtraFiles = make([]*os.File, infoFD-2)
	cmd.ExtraFiles[0], cmd.ExtraFiles[1] = p.gateR, p.argsR
	if filter != nil {
		cmd.ExtraFiles[filterFD-3] = p.filterR
	}
	cmd.ExtraFiles[infoFD-3] = p.infoW
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: pr.uid, Gid: pr.gid, Groups: []uint32{}}
	argData = nulJoin(bwrapArgs(bwrapOptions{
		workspace: pr.dir,
		env:       s.env(workspaceDir, "/tmp/.npm", dataEnv(c.Env, c.Data, dataDir)),
		uid:       pr.uid,
		gid:       pr.gid,
		tmp:       c.Tmp,
		data:      c.Data,
		shareNet:  pr.network != NetworkNone,
		resolv:    resolv,
		seccomp:   filter != nil,
		info:      true,
	}))
	return cmd, argData, nil, nil
}

// supervise starts cmd, puts it in its cgroup (setup), hands bubblewrap
// its options and the filter, opens the gate, and waits for the run to
// end: by itself, by Terminate, by reaching its pids limit (EndAtPids) or
// by runCtx (the timeout, or ctx cancelled).
func (s *Sandbox) supervise(ctx, runCtx context.Context, c Command, pr prepared, cg *cgroup, p *pipes, cmd *exec.Cmd, argData, filter []byte) (Result, error) {
	res := Result{ExitCode: -1}
	l := pr.l
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("sandbox: start: %w", err)
	}
	p.closeChildEnds()
	pid := cmd.Process.Pid
	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()

	if err := s.setup(pid, cg, l); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-waitc
		return res, fmt.Errorf("sandbox: %w", err)
	}
	if pr.bwrap {
		feed(&p.argsW, argData)
		if filter != nil {
			feed(&p.filterW, filter)
		}
	}
	sink := &lineSink{fn: c.Output, max: l.OutputLines, holding: pr.bwrap}
	started := make(chan bool, 1)
	if pr.bwrap {
		go func() { started <- waitStarted(p.infoR, sink) }()
	} else {
		started <- true
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); readLines(p.outR, Stdout, sink) }()
	go func() { defer readers.Done(); readLines(p.errR, Stderr, sink) }()
	if _, err := p.gateW.Write([]byte("go\n")); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	_ = p.gateW.Close()
	p.gateW = nil

	waitErr, killed := s.await(runCtx, c.Terminate, pid, cg, l, waitc)
	res.Duration = time.Since(start)

	// Read the limit counters before cleaning up, which forbids forks.
	var ended ending
	ended.code = exitCode(cmd.ProcessState)
	if cg != nil {
		ended.oom = cg.oomKilled(ended.code)
		ended.pidsHit = cg.pidsHit()
	}
	// Whatever outlived the first process (none mode, races) goes now.
	s.killTree(pid, cg)
	waitReaders(&readers, p)
	ended.began = waitStart(started, p)
	if ended.began {
		sink.release()
	}
	res.DroppedLines = sink.dropped

	if killed {
		if ctx.Err() != nil {
			return res, fmt.Errorf("sandbox: %w", ctx.Err())
		}
		return res, &TimeoutError{After: l.Timeout}
	}
	ended.waitErr = waitErr
	res.ExitCode = ended.code
	return res, ended.err(l, sink)
}

// feed writes data to the pipe *w in the background and closes it; *w is
// then nil, so that closeAll leaves it to the writer.
func feed(w **os.File, data []byte) {
	f := *w
	*w = nil
	go func() {
		_, _ = f.Write(data)
		_ = f.Close()
	}()
}

// await waits for the run's first process to end, terminating its tree
// when terminate fires, killing it when its cgroup reached its pids limit
// (Limits.EndAtPids) or when runCtx ends (killed).
func (s *Sandbox) await(runCtx context.Context, terminate <-chan struct{}, pid int, cg *cgroup, l Limits, waitc <-chan error) (waitErr error, killed bool) {
	var pidsTick <-chan time.Time
	if cg != nil && l.EndAtPids {
		t := time.NewTicker(pidsPoll)
		defer t.Stop()
		pidsTick = t.C
	}
	term := terminate
	for {
		select {
		case waitErr = <-waitc:
			return waitErr, false
		case <-term:
			term = nil
			s.termTree(pid, cg)
		case <-pidsTick:
			if cg.pidsHit() {
				pidsTick = nil
				s.killTree(pid, cg)
			}
		case <-runCtx.Done():
			s.killTree(pid, cg)
			return <-waitc, true
		}
	}
}

// ending is how a run that was not killed ended.
type ending struct {
	code                int
	waitErr             error
	oom, pidsHit, began bool
}

// err is the run's error: nil for exit 0, else why it ended.
func (e ending) err(l Limits, sink *lineSink) error {
	switch {
	case e.waitErr == nil && e.code == 0:
		return nil
	case !e.began:
		return &SetupError{Code: e.code, Detail: lastMeaningfulLine(sink.heldText())}
	case e.oom:
		return &MemoryError{Limit: l.Memory}
	case e.pidsHit:
		return &PidsError{Limit: l.Pids}
	case e.code == 128+int(syscall.SIGXFSZ):
		return &FileSizeError{Limit: l.FileSize}
	case e.code < 0:
		return fmt.Errorf("sandbox: %w", e.waitErr)
	}
	return &ExitError{Code: e.code}
}

// pidsPoll is how often a run with Limits.EndAtPids reads its cgroup's
// pids.events. The kernel enforces the limit itself; this only ends the
// run that reached it.
const pidsPoll = 50 * time.Millisecond

// runSlice is the time slice every run's processes ask the scheduler for
// (sched_setattr's sched_runtime; the kernel's default is 0.75-3 ms by the
// number of CPUs). On kernels with EEVDF (6.6 and later) a process the
// scheduler has picked keeps the CPU until it has run its slice, unless
// the one that wakes asks for a shorter slice still (the edge's loops ask
// for 0.1 ms, internal/edge) or the current one is in the idle CPU class
// (see cgroup.limit): any other thread that wakes meanwhile waits for the
// next tick, up to 4 ms at 250 Hz. Runs are idle to the platform, but not
// to each other: an app woken by a request waits so for another tenant's
// build, and so does the platform where the kernel has no idle class. A
// short slice makes that wait rare; it stays longer than the loops' so
// that they still cut it short.
const runSlice = 200 * time.Microsecond

// setup puts the held process pid into its cgroup, lowers its scheduling
// priority and shortens its time slice (runSlice); everything it starts
// inherits both, and the seccomp filter keeps sched_setattr, the only call
// that could lengthen the slice, from the run. Niceness and slice are best
// effort: lowering niceness needs CAP_SYS_NICE, and kernels before 6.12
// have no slices to set.
func (s *Sandbox) setup(pid int, cg *cgroup, l Limits) error {
	if cg != nil {
		if err := cg.add(pid); err != nil {
			return err
		}
	}
	if l.Nice > 0 {
		_ = unix.Setpriority(unix.PRIO_PROCESS, pid, l.Nice)
	}
	if attr, err := unix.SchedGetAttr(pid, 0); err == nil && attr.Policy == unix.SCHED_NORMAL {
		attr.Runtime = uint64(runSlice)
		_ = unix.SchedSetAttr(pid, attr, 0)
	}
	return nil
}

// killTree SIGKILLs the run's process group and every process of its cgroup.
func (s *Sandbox) killTree(pid int, cg *cgroup) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if cg != nil {
		cg.kill()
	}
}

// env returns the base environment (HOME, PATH, npm_config_cache) followed
// by the caller's variables; later entries win.
func (s *Sandbox) env(home, npmCache string, extra []string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + sandboxPath,
		"npm_config_cache=" + npmCache,
	}
	return dedupEnv(append(env, extra...))
}

// dedupEnv keeps the last value of each key, in first-seen order, and drops
// malformed entries.
func dedupEnv(env []string) []string {
	idx := make(map[string]int, len(env))
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(kv, 0) {
			continue
		}
		if i, seen := idx[k]; seen {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// bwrapOptions describe one bubblewrap invocation.
type bwrapOptions struct {
	workspace string   // host folder mounted at /workspace
	env       []string // the command's whole environment
	uid, gid  uint32   // ids inside the sandbox
	shareNet  bool     // keep the network namespace bubblewrap starts in
	resolv    string   // host file mounted at /etc/resolv.conf, if it exists
	tmp       string   // host folder mounted at /tmp; "": a tmpfs of TmpSize
	data      string   // host folder mounted at /data; "": none
	seccomp   bool     // load the seccomp filter bubblewrap reads from filterFD
	info      bool     // report the command's start on infoFD
}

// bwrapArgs returns bubblewrap's options (everything before "--") for a
// run. They travel through --args so that the environment, which may hold
// secrets, never shows in a process list. The command gets a user
// namespace of its own, where it is o.uid and o.gid and holds no
// capability (none in its bounding set either), whether bubblewrap starts
// as the sandbox user on the host or as root in pasta's user namespace;
// the network namespace it runs in is never its to change. It can make no
// user namespace of its own (--disable-userns: bubblewrap caps the count
// at the one the command is in), and with o.seccomp the kernel refuses it
// the system calls seccompProgram lists (--seccomp filterFD), namespaces
// among them: two locks on the door most kernel exploits come through.
func bwrapArgs(o bwrapOptions) []string {
	a := []string{"--unshare-all", "--unshare-user", "--disable-userns"}
	if o.shareNet {
		a = append(a, "--share-net")
	}
	if o.seccomp {
		a = append(a, "--seccomp", strconv.Itoa(filterFD))
	}
	if o.info {
		a = append(a, "--info-fd", strconv.Itoa(infoFD))
	}
	a = append(a,
		"--die-with-parent", "--new-session",
		"--uid", strconv.FormatUint(uint64(o.uid), 10),
		"--gid", strconv.FormatUint(uint64(o.gid), 10),
		"--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin",
		"--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/sbin", "/sbin",
		"--ro-bind-try", o.resolv, "/etc/resolv.conf",
		"--ro-bind-try", "/etc/ssl", "/etc/ssl",
		"--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates",
		"--ro-bind-try", "/etc/hosts", "/etc/hosts",
		"--ro-bind-try", "/etc/nsswitch.conf", "/etc/nsswitch.conf",
		"--ro-bind-try", "/usr/etc/npmrc", "/usr/etc/npmrc",
		"--proc", "/proc",
		"--dev", "/dev",
	)
	if o.tmp != "" {
		a = append(a, "--bind", o.tmp, "/tmp")
	} else {
		a = append(a, "--size", strconv.Itoa(TmpSize), "--tmpfs", "/tmp")
	}
	if o.data != "" {
		a = append(a, "--bind", o.data, dataDir)
	}
	a = append(a,
		"--bind", o.workspace, workspaceDir,
		"--chdir", workspaceDir,
		"--hostname", "sandbox",
		"--clearenv",
	)
	for _, kv := range o.env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	return a
}

// checkForwards validates fw for a run on network.
func checkForwards(fw []Forward, network string) error {
	for _, f := range fw {
		if f.HostPort < 1 || f.HostPort > 65535 || f.Port < 1 || f.Port > 65535 {
			return fmt.Errorf("sandbox: forward %d to %d: ports run from 1 to 65535", f.HostPort, f.Port)
		}
		switch network {
		case NetworkNone:
			return fmt.Errorf("sandbox: forward %d to %d: the command has no network", f.HostPort, f.Port)
		case NetworkHost:
			if f.HostPort != f.Port {
				return fmt.Errorf("sandbox: forward %d to %d: on the host's network a command's port is the host's", f.HostPort, f.Port)
			}
		}
	}
	return nil
}

// checkLoopbackPorts validates Command.HostLoopbackPorts for a run on
// network.
func checkLoopbackPorts(ports []int, network string) error {
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("sandbox: host loopback port %d: ports run from 1 to 65535", p)
		}
		if network == NetworkNone {
			return fmt.Errorf("sandbox: host loopback port %d: the command has no network", p)
		}
	}
	return nil
}

// isolation returns the command line that runs bubblewrap (appended to it)
// in a network namespace of its own: pasta, which connects the namespace
// to the outside, then a shell that, as root of pasta's user namespace,
// shuts everything but the public internet out of it (netScript): the
// nameservers stay reachable on port 53, and so do the destinations in
// allow.
func (s *Sandbox) isolation(fw []Forward, loopPorts []int, nameservers []netip.Addr, allow []netip.Prefix) ([]string, error) {
	pasta, err := exec.LookPath(s.pasta)
	if err != nil {
		return nil, ErrPastaNotInstalled
	}
	ip, err := lookIP()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	addrs, err := hostAddrs()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p := netPolicy{dns: nameservers, host: addrs, allow: allow}
	args := append([]string{pasta}, pastaArgs(fw, loopPorts)...)
	return append(args, "--", "/bin/sh", "-c", netScript(ip, p), "gantry-net"), nil
}

// pastaArgs returns pasta's options for a run forwarding fw. pasta
// configures the namespace's interface like the host's (--config-net:
// same addresses and routes), runs in the foreground (exiting with the
// command's status) and quietly. Nothing of the host's loopback is mapped
// in: not the gateway address (--no-map-gw, which would otherwise reach
// the host's 127.0.0.1), nor any port of it (-T none, -U none) except the
// TCP ports loopPorts names (-T PORT,…: the namespace's loopback port
// leads to the host's); and nothing is forwarded inward but fw's TCP ports
// (-t, -u none). The DNS information pasta would hand out through DHCP and
// NDP is off (-D none): commands read /etc/resolv.conf.
func pastaArgs(fw []Forward, loopPorts []int) []string {
	toHost := "none"
	if len(loopPorts) > 0 {
		ps := make([]string, len(loopPorts))
		for i, p := range loopPorts {
			ps[i] = strconv.Itoa(p)
		}
		toHost = strings.Join(ps, ",")
	}
	a := []string{"--config-net", "--no-map-gw", "--quiet", "--foreground", "-T", toHost, "-U", "none", "-u", "none", "-D", "none"}
	if len(fw) == 0 {
		return append(a, "-t", "none")
	}
	for _, f := range fw {
		a = append(a, "-t", fmt.Sprintf("127.0.0.1/%d:%d", f.HostPort, f.Port))
	}
	return a
}

// hostAddrs lists the host's own addresses outside loopback
// (netpolicy.HostAddrs). pasta carries a connection from an isolated
// command to any address by opening one from the host, so without rules
// against them these addresses would lead to the host's services as surely
// as 127.0.0.1 (the ones pasta copies into the namespace are local there,
// and unaffected by the rules).
func hostAddrs() ([]netip.Addr, error) { return netpolicy.HostAddrs() }

// Priorities of the policy-routing rules of an isolated network, in the
// order the kernel tries them. The local table (priority 0) comes first, so
// the namespace's own addresses (its loopback, and the host's addresses
// pasta copies in) stay its own; the main table (32766), with the route to
// pasta's gateway, serves whatever no rule here decided.
const (
	prefDNS        = 1000 // the nameservers, port 53 over UDP and TCP: lookup main
	prefShut       = 1100 // the host's own addresses and the metadata services: prohibit
	prefAllow      = 1200 // the allow lists: lookup main
	prefRestricted = 1300 // every range of netpolicy.Prefixes: prohibit
)

// netPolicy is what an isolated network lets through besides the public
// internet.
type netPolicy struct {
	dns   []netip.Addr   // nameservers, reachable on port 53 only
	host  []netip.Addr   // the host's own addresses: shut unless allowed one by one
	allow []netip.Prefix // destinations reachable although restricted
}

// rules returns the ip rules of p for one family (IPv4 when v6 is false),
// one per line in ip's batch syntax. A connection whose destination a
// "prohibit" rule matches fails with EACCES ("Permission denied"), even to
// a link-local address with an interface given; one a "lookup main" rule
// matches takes the main table's route out through pasta.
//
// The order is: the nameservers on port 53; then the host's own addresses
// (pasta would carry a connection to them back to the host's services)
// and the cloud metadata services (netpolicy.Metadata), on every port;
// then the allow list; then every restricted range (netpolicy.Prefixes).
// A host or metadata address stays shut even when an allow-list prefix
// encloses it, unless the list names it alone (a /32 or /128).
func (p netPolicy) rules(v6 bool) string {
	var b strings.Builder
	family := func(a netip.Addr) bool { return a.Is6() == v6 }
	for _, a := range p.dns {
		if a = a.Unmap().WithZone(""); family(a) {
			fmt.Fprintf(&b, "rule add pref %d to %s ipproto udp dport 53 lookup main\n", prefDNS, a)
			fmt.Fprintf(&b, "rule add pref %d to %s ipproto tcp dport 53 lookup main\n", prefDNS, a)
		}
	}
	seen := map[netip.Addr]bool{}
	for _, a := range append(append([]netip.Addr(nil), p.host...), netpolicy.Metadata()...) {
		a = a.Unmap().WithZone("")
		if !family(a) || seen[a] || p.allowsAlone(a) {
			continue
		}
		seen[a] = true
		fmt.Fprintf(&b, "rule add pref %d to %s prohibit\n", prefShut, a)
	}
	for _, n := range p.allow {
		if family(n.Addr()) {
			fmt.Fprintf(&b, "rule add pref %d to %s lookup main\n", prefAllow, n)
		}
	}
	for _, n := range netpolicy.Prefixes() {
		if family(n.Addr()) {
			fmt.Fprintf(&b, "rule add pref %d to %s prohibit\n", prefRestricted, n)
		}
	}
	return b.String()
}

// allowsAlone reports whether the allow list names a by itself.
func (p netPolicy) allowsAlone(a netip.Addr) bool {
	for _, n := range p.allow {
		if n.IsSingleIP() && n.Addr() == a {
			return true
		}
	}
	return false
}

// netScript returns the shell script pasta starts in the new namespace: it
// adds p's policy-routing rules (netPolicy.rules) with ip as root of
// pasta's user namespace, in one batch per family; then it closes the
// listening sockets pasta leaves open to its child (fds 3 and 5 to 9; 4
// carries bubblewrap's options) and execs its arguments, bubblewrap. A
// rule that cannot be made ends the run with code 125 before the command
// starts.
func netScript(ip string, p netPolicy) string {
	var b strings.Builder
	for _, family := range []string{"-4", "-6"} {
		fmt.Fprintf(&b, "%s %s -batch - <<'EOF' || { echo \"sandbox: cannot set up the network rules\" >&2; exit 125; }\n%sEOF\n",
			shellQuote(ip), family, p.rules(family == "-6"))
	}
	b.WriteString(`exec 3<&- 5<&- 6<&- 7<&- 8<&- 9<&-; exec "$@"`)
	return b.String()
}

// cleanPrefixes returns ps with every prefix masked and IPv4-mapped ones
// turned into IPv4, or an error for an invalid one.
func cleanPrefixes(ps []netip.Prefix) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(ps))
	for _, n := range ps {
		if !n.IsValid() || n.Addr().Zone() != "" {
			return nil, fmt.Errorf("%q is not a valid prefix", n.String())
		}
		if a := n.Addr(); a.Is4In6() && n.Bits() >= 96 {
			n = netip.PrefixFrom(a.Unmap(), n.Bits()-96)
		}
		if n = n.Masked(); !slices.Contains(out, n) { // ip refuses a rule twice
			out = append(out, n)
		}
	}
	return out, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func nulJoin(args []string) []byte {
	var b bytes.Buffer
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// exitCode returns the shell-style exit code of ps: the code, 128+signal
// when a signal ended it, or -1.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// pipes are the run's file descriptors: stdout, stderr, the gate (fd 3),
// bubblewrap's --args (fd 4) and its --seccomp (filterFD).
type pipes struct {
	outR, outW       *os.File
	errR, errW       *os.File
	gateR, gateW     *os.File
	argsR, argsW     *os.File
	filterR, filterW *os.File
	infoR, infoW     *os.File
	closeOnce        sync.Once
	childEndsFiles   []*os.File
}

func newPipes(withArgs, withFilter bool) (*pipes, error) {
	p := &pipes{}
	var err error
	mk := func(r, w **os.File) {
		if err != nil {
			return
		}
		*r, *w, err = os.Pipe()
	}
	mk(&p.outR, &p.outW)
	mk(&p.errR, &p.errW)
	mk(&p.gateR, &p.gateW)
	if withArgs {
		mk(&p.argsR, &p.argsW)
	}
	if withFilter {
		mk(&p.filterR, &p.filterW)
	}
	if withArgs {
		mk(&p.infoR, &p.infoW)
	}
	p.childEndsFiles = []*os.File{p.outW, p.errW, p.gateR, p.argsR, p.filterR, p.infoW}
	if err != nil {
		p.closeAll()
		return nil, err
	}
	return p, nil
}

// closeChildEnds closes the parent's copies of the ends the child holds,
// so that readers see EOF once every process of the run has exited.
func (p *pipes) closeChildEnds() {
	p.closeOnce.Do(func() {
		for _, f := range p.childEndsFiles {
			if f != nil {
				_ = f.Close()
			}
		}
	})
}

func (p *pipes) closeAll() {
	p.closeChildEnds()
	for _, f := range []*os.File{p.outR, p.errR, p.gateW, p.argsW, p.filterW, p.infoR} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// waitReaders waits for the output readers to reach EOF; if something
// still holds the pipes after 2 s (a process that escaped, in none mode),
// the read ends are closed to unblock them.
func waitReaders(wg *sync.WaitGroup, p *pipes) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = p.outR.Close()
		_ = p.errR.Close()
		<-done
	}
}

// waitStarted reads bubblewrap's report from r (infoFD) and reports
// whether it came: then the command has started, and sink's held lines are
// released. It returns false at EOF without a word, when every process of
// the run that held the descriptor has exited.
func waitStarted(r io.Reader, sink *lineSink) bool {
	var b [1]byte
	if n, _ := r.Read(b[:]); n == 0 {
		return false
	}
	sink.release()
	_, _ = io.Copy(io.Discard, r)
	return true
}

// waitStart returns waitStarted's answer once the run has ended. Nothing
// of the run is alive by then, so the report or EOF is there; after 2 s
// (a descriptor held elsewhere) the read end is closed and the run counts
// as started, so that nothing is taken for a set-up failure by mistake.
func waitStart(started <-chan bool, p *pipes) bool {
	select {
	case ok := <-started:
		return ok
	case <-time.After(2 * time.Second):
		if p.infoR != nil {
			_ = p.infoR.Close()
		}
		<-started
		return true
	}
}

// lineSink delivers lines to the caller's callback one at a time, up to a
// cap.
//
// While holding, lines are kept back instead (up to maxHeld): until
// bubblewrap has said it started the command, whatever is printed is the
// sandbox's own (pasta's, bubblewrap's), which the caller gets only once
// the command has started (release), and never when it did not.
type lineSink struct {
	mu      sync.Mutex
	fn      func(Stream, string)
	max     int
	lines   int
	dropped int
	holding bool
	held    []heldLine
}

// heldLine is a line kept back while the sandbox is being set up.
type heldLine struct {
	stream Stream
	line   string
}

// maxHeld is how many lines a sink keeps back while holding; later ones
// are dropped (the set-up prints a few at most).
const maxHeld = 100

// release ends holding: the lines kept back are delivered, in order,
// before any later one.
func (s *lineSink) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holding {
		return
	}
	s.holding = false
	for _, h := range s.held {
		s.deliver(h.stream, h.line)
	}
	s.held = nil
}

// heldText returns the lines kept back, one per line.
func (s *lineSink) heldText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, h := range s.held {
		b.WriteString(h.line + "\n")
	}
	return b.String()
}

// deliver passes one cleaned line on, or counts it as dropped past the
// cap. s.mu is held.
func (s *lineSink) deliver(stream Stream, line string) {
	if s.max > 0 && s.lines >= s.max {
		s.dropped++
		return
	}
	s.lines++
	if s.fn != nil {
		s.fn(stream, line)
	}
}

// emit delivers the raw line b, cleaned (cleanLine) and ending in "…" when
// cut, or counts it as dropped once the cap is reached; it reports whether
// the cap is reached now. No string is made of a dropped line.
func (s *lineSink) emit(stream Stream, b []byte, cut bool) (full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holding {
		if len(s.held) < maxHeld {
			line := cleanLine(b)
			if cut {
				line += "…"
			}
			s.held = append(s.held, heldLine{stream, line})
		}
		return false
	}
	if s.max > 0 && s.lines >= s.max {
		s.dropped++
		return true
	}
	s.lines++
	if s.fn != nil {
		line := cleanLine(b)
		if cut {
			line += "…"
		}
		s.fn(stream, line)
	}
	return s.max > 0 && s.lines >= s.max
}

// drop counts n more dropped lines.
func (s *lineSink) drop(n int) {
	s.mu.Lock()
	s.dropped += n
	s.mu.Unlock()
}

// readLines reads r line by line until EOF, cutting lines longer than
// MaxLineLength and keeping only the last part of lines redrawn with
// carriage returns (progress bars). Once the sink's cap is reached the
// rest is only counted (drainLines): a command printing hundreds of
// megabytes costs the platform little more than reading them.
func readLines(r io.Reader, stream Stream, sink *lineSink) {
	br := bufio.NewReaderSize(r, MaxLineLength)
	long := false // discarding the rest of an over-long line
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !long {
				long = true
				if sink.emit(stream, b, true) {
					drainLines(br, sink, true)
					return
				}
			}
			continue
		}
		if len(b) > 0 {
			if !long && sink.emit(stream, b, false) && err == nil {
				drainLines(br, sink, false)
				return
			}
			long = false
		}
		if err != nil { // EOF, or the read end was closed by waitReaders
			return
		}
	}
}

// drainLines reads r to its end and counts its lines as dropped, as
// readLines would have, without looking at them: newlines end lines, and
// so does the end of the output after a partial one. counted says the
// line being read was counted already (an over-long line cut off), so the
// newline that ends it starts no new one.
func drainLines(r io.Reader, sink *lineSink, counted bool) {
	buf := make([]byte, 64<<10)
	n := 0
	open := false // a line not yet counted has begun
	for {
		k, err := r.Read(buf)
		if c := buf[:k]; k > 0 {
			if nl := bytes.Count(c, []byte{'\n'}); nl > 0 {
				n += nl
				if counted {
					n--
					counted = false
				}
				open = c[k-1] != '\n'
			} else if !counted {
				open = true
			}
		}
		if err != nil { // EOF, or the read end was closed by waitReaders
			break
		}
	}
	if open {
		n++
	}
	sink.drop(n)
}

// cleanLine turns raw output into one log line: no line ending, only the
// text after the last carriage return, valid UTF-8.
func cleanLine(b []byte) string {
	b = bytes.TrimRight(b, "\r\n")
	if i := bytes.LastIndexByte(b, '\r'); i >= 0 {
		b = b[i+1:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dataEnv is env with DATA_DIR=at added when the run has a data folder
// (data); an app's own DATA_DIR never overrides it.
func dataEnv(env []string, data, at string) []string {
	if data == "" {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DATA_DIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "DATA_DIR="+at)
}
