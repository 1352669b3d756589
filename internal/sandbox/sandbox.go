// Package sandbox runs untrusted commands (install scripts, builds, apps)
// under bubblewrap as an unprivileged user, with limits on wall time,
// memory, processes, file size, open files and captured output.
//
// In the default mode ("bwrap") a command sees a read-only /usr (with the
// usual /bin, /lib, /lib64 and /sbin symlinks), read-only copies of
// /etc/resolv.conf, /etc/ssl, /etc/ca-certificates, /etc/hosts,
// /etc/nsswitch.conf and /usr/etc/npmrc (each only if it exists), a fresh
// /proc and /dev, a private /tmp, and its workspace read-write at
// /workspace. It never sees the platform's data folder, database, secret
// key, /root or another workspace. It runs in its own user, pid, ipc, uts,
// mount and cgroup namespaces, with no capabilities, and starts with an
// empty environment plus an explicit list. It can make no namespace of its
// own, and a seccomp filter refuses it the system calls that lead into the
// kernel's less-travelled code (see deniedCalls).
//
// Its network is, by default (NetworkIsolated), a network namespace of its
// own connected to the outside by pasta (Debian package passt), which
// reaches the public internet only. The host's loopback services — the
// platform's API, a local database, other apps — are out of reach, and so
// are the host's own addresses on every interface, the cloud metadata
// services on every port, and every loopback, private, shared (CGNAT),
// link-local, unique local, multicast, reserved, benchmarking and
// documentation range of IPv4 and IPv6 (netpolicy.Prefixes, the list the
// git URL checker uses): the operator's other machines, a database in a
// container, Kubernetes services. Policy-routing rules, set up with
// iproute2's ip before the command starts, make the kernel refuse such
// connections with EACCES. Two exceptions: the nameservers of the
// resolv.conf the command gets stay reachable on port 53 (UDP and TCP),
// and Config.AllowNets and Command.Allow open named addresses and prefixes
// (a campus package mirror). A Command may forward host loopback ports to
// ports inside (Command.Forward), which is how a sandboxed server app is
// reached; a clone from a git host the operator allow-listed on the host's
// loopback may reach that one port outward (Command.HostLoopbackPorts). NetworkHost shares the host's network instead (loopback
// included) and NetworkNone gives no network at all.
//
// Memory, process, CPU and disk IO limits are enforced with a cgroup
// created per run under the platform's own cgroup (v1 or v2): a CPU quota
// (one CPU by default) and a CPU weight a tenth of a platform process's,
// caps on the IO of the devices its workspace lies on and an IO weight a
// tenth of the platform's, so that the platform, the sites it serves and
// other tenants keep the CPU and the disk whatever a run does. The
// command's first process is placed in it before it
// executes pasta or bubblewrap, so nothing the command starts escapes the
// limits. Stopping a run (cancelling its
// context or reaching its timeout) kills every process in that cgroup,
// pasta included.
//
// Mode "none" (GANTRY_SANDBOX=none) runs commands directly on the host with
// the same environment, timeout, rlimits and output cap; it isolates
// nothing and exists for development only.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Modes of a Sandbox.
const (
	ModeBwrap = "bwrap" // bubblewrap, an unprivileged uid and cgroup limits (the default)
	ModeNone  = "none"  // run directly on the host: development only
)

// Networks of a bwrap-mode Sandbox.
const (
	// NetworkIsolated gives each run a network namespace of its own,
	// connected through pasta: connections to the public internet and DNS
	// work; the host's loopback services, its own addresses, the metadata
	// services and every non-public range do not, unless allow-listed
	// (the default).
	NetworkIsolated = "isolated"
	// NetworkHost shares the host's network, loopback services included.
	NetworkHost = "host"
	// NetworkNone gives a run no network at all, only its own loopback.
	NetworkNone = "none"
)

// DefaultUID and DefaultGID are the unprivileged user and group sandboxed
// commands run as.
const (
	DefaultUID = 10001
	DefaultGID = 10001
)

// Config configures a Sandbox. The zero value is usable: bwrap mode, an
// isolated network, uid and gid 10001, bwrap and pasta found on the PATH,
// cgroups under /sys/fs/cgroup.
type Config struct {
	// Mode is ModeBwrap (default, also for "") or ModeNone.
	Mode string
	// Network is NetworkIsolated (default, also for ""), NetworkHost or
	// NetworkNone. It applies to bwrap mode; mode none always runs on the
	// host's network.
	Network string
	// UID and GID are the unprivileged ids commands run as in bwrap mode.
	// Zero means DefaultUID/DefaultGID; root (0) is never used.
	UID, GID uint32
	// Bwrap is the bubblewrap binary; default: "bwrap" looked up on the PATH.
	Bwrap string
	// Pasta is the pasta binary (package passt) that connects isolated
	// networks; default: "pasta" looked up on the PATH.
	Pasta string
	// CgroupRoot is where the cgroup filesystems are mounted; default
	// /sys/fs/cgroup.
	CgroupRoot string
	// AllowNets lists destinations every isolated run may reach although
	// they lie in restricted ranges (GANTRY_SANDBOX_ALLOW), e.g. a package
	// mirror at 10.20.0.5/32. The host's own addresses and the metadata
	// services stay shut unless named alone (a /32 or /128), even inside
	// an allowed prefix. Default: none.
	AllowNets []netip.Prefix
	// TunDevice is the tun device pasta opens; default /dev/net/tun.
	TunDevice string
}

// Limits bound one run. A zero field takes its value from DefaultLimits; a
// negative one means "no limit" (not recommended outside tests).
type Limits struct {
	// Timeout is the wall-clock limit of the run (default 10m). When it is
	// reached every process of the run is killed and Run returns a
	// *TimeoutError.
	Timeout time.Duration
	// Memory is the cgroup memory limit in bytes, page cache and the
	// private /tmp included (default 1 GiB). With an isolated network,
	// pasta counts against it too (about 32 MiB). A run killed by the
	// kernel's OOM killer returns a *MemoryError.
	Memory int64
	// Pids is the cgroup limit on processes and threads (default 1024).
	Pids int64
	// EndAtPids ends the run as soon as the kernel has refused it a fork
	// or clone at the Pids limit, and Run returns a *PidsError; otherwise
	// the refused call fails with EAGAIN and the run goes on. For builds:
	// a fork bomb stays at the limit until Timeout, its shells retrying
	// their forks together at 1, 2, 4 and 8 s, and a build tool refused a
	// process or thread fails anyway.
	EndAtPids bool
	// FileSize is RLIMIT_FSIZE, the largest file a process may write, in
	// bytes (default 1 GiB).
	FileSize int64
	// OpenFiles is RLIMIT_NOFILE (default 4096).
	OpenFiles int64
	// OutputLines caps the lines passed to Command.Output (default 10000);
	// further lines are read and dropped, and Result.DroppedLines counts them.
	OutputLines int
	// CPUs is the run's CPU quota, in CPUs (default 1): its processes
	// together get at most CPUs × 100 ms of CPU time in every 100 ms
	// period and are throttled for the rest of the period once they have
	// used it (cgroup v2 cpu.max, v1 cpu.cfs_quota_us and
	// cpu.cfs_period_us). 0.5 is half of one CPU, 2 two CPUs' worth; the
	// smallest quota the kernel takes is 0.01. A run spinning on every
	// core, or a fork bomb, gets no more.
	CPUs float64
	// CPUWeight is the run's share of the CPU when it competes for it, on
	// cgroup v2's scale of 1 to 10000 where a process of the platform
	// counts 100 (default 10: the run weighs what one process at
	// niceness 10 does beside the platform's, whatever it starts). It is
	// cpu.weight on v2 and cpu.shares = CPUWeight × 1024 / 100 on v1
	// (default 102; the platform's threads keep 1024). On v1, where the
	// platform sits at the root of the cpu hierarchy, runs are made in a
	// "gantry" folder there that weighs as one run at the default weight,
	// and CPUWeight only shares that out between runs. It counts only on
	// kernels without the idle CPU class (before 5.15): where the class
	// exists every run is in it (see cgroup.limit) and gets only the CPU
	// the platform and the machine's other work leave.
	CPUWeight int64
	// Nice is the scheduling niceness of the run's processes (default
	// 10). The CPU weight above is what sets a run's place beside the
	// platform; niceness orders the run's own processes and lowers their
	// I/O priority (schedulers that honour it derive it from niceness).
	Nice int
	// IOWeight is the run's share of disk time when it competes for it,
	// on cgroup v2's scale of 1 to 10000 where the platform counts 100
	// (default 10): io.weight on v2 (io.bfq.weight under BFQ), blkio.weight
	// = IOWeight × 5 on v1 (10–1000, the platform's 500), blkio.bfq.weight
	// under BFQ. Schedulers that weigh (BFQ, v2's io.cost) honour it.
	IOWeight int64
	// IOReadBPS and IOWriteBPS cap the bytes per second the run reads
	// and writes on the devices its workspace and /tmp lie on (a volume's
	// loop device, and the disk its image lies on): default 256 MiB/s and
	// 64 MiB/s. IOReadIOPS and IOWriteIOPS cap the operations per second
	// there (default 4000 and 1000). cgroup v2 io.max, v1
	// blkio.throttle.*. On v2 buffered writes are throttled as they are
	// written back (cgroup writeback), so a build writing gigabytes, or
	// hundreds of thousands of files, fills the disk's queue and the
	// machine's dirty memory no faster; on v1, where the kernel charges
	// writeback to no cgroup, the caps hold the run's direct and
	// synchronous IO only.
	IOReadBPS, IOWriteBPS, IOReadIOPS, IOWriteIOPS int64
}

// Path is the PATH runs get: the host's programs (node, npm, python, git)
// are found in these folders, in this order.
const Path = "/usr/local/bin:/usr/bin:/bin"

// DefaultLimits are the limits used for every zero field of Limits.
var DefaultLimits = Limits{
	Timeout:     10 * time.Minute,
	Memory:      1 << 30,
	Pids:        1024,
	FileSize:    1 << 30,
	OpenFiles:   4096,
	OutputLines: 10000,
	CPUs:        1,
	CPUWeight:   10,
	Nice:        10,
	IOWeight:    10,
	IOReadBPS:   256 << 20,
	IOWriteBPS:  64 << 20,
	IOReadIOPS:  4000,
	IOWriteIOPS: 1000,
}

// withDefaults fills l's zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.Memory == 0 {
		l.Memory = d.Memory
	}
	if l.Pids == 0 {
		l.Pids = d.Pids
	}
	if l.FileSize == 0 {
		l.FileSize = d.FileSize
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = d.OpenFiles
	}
	if l.OutputLines == 0 {
		l.OutputLines = d.OutputLines
	}
	if l.CPUs == 0 {
		l.CPUs = d.CPUs
	}
	if l.CPUWeight == 0 {
		l.CPUWeight = d.CPUWeight
	}
	if l.Nice == 0 {
		l.Nice = d.Nice
	}
	if l.IOWeight == 0 {
		l.IOWeight = d.IOWeight
	}
	if l.IOReadBPS == 0 {
		l.IOReadBPS = d.IOReadBPS
	}
	if l.IOWriteBPS == 0 {
		l.IOWriteBPS = d.IOWriteBPS
	}
	if l.IOReadIOPS == 0 {
		l.IOReadIOPS = d.IOReadIOPS
	}
	if l.IOWriteIOPS == 0 {
		l.IOWriteIOPS = d.IOWriteIOPS
	}
	return l
}

// Stream names the output stream a line came from.
type Stream string

// The two streams of a command.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// TmpSize is the size of a run's private /tmp when Command.Tmp is unset.
const TmpSize = 256 << 20

// MaxLineLength is the longest line passed to Command.Output, in bytes;
// longer lines are cut there and end with "…".
const MaxLineLength = 8 << 10

// Command is one run of an untrusted command.
type Command struct {
	// Args is the command and its arguments, e.g. {"sh", "-c", "npm ci"}.
	// Args[0] is looked up on the sandbox's PATH.
	Args []string
	// Dir is the workspace on the host. In bwrap mode it is the only
	// writable folder the command sees, mounted at /workspace, and it must
	// be owned by the sandbox user (see PrepareWorkspace).
	Dir string
	// Env holds extra "KEY=VALUE" variables, added after the base
	// environment: HOME (/workspace), PATH
	// (/usr/local/bin:/usr/bin:/bin) and npm_config_cache (/tmp/.npm).
	// Nothing of the platform's own environment is passed.
	Env []string
	// Limits bound the run; zero fields take DefaultLimits.
	Limits Limits
	// Output, when set, receives every line of stdout and stderr as it is
	// produced, without its line ending, one call at a time. It must not
	// block for long: the command's output waits while it runs.
	Output func(stream Stream, line string)
	// Forward lists TCP ports of the host's loopback interface that lead
	// to ports inside the command's network: with an isolated network,
	// pasta listens on 127.0.0.1:HostPort for as long as the run lasts and
	// passes each connection to port Port of the command's loopback
	// interface (a command listening on 0.0.0.0, :: or 127.0.0.1 gets
	// it). A host port that is taken makes the run fail at once. On the host's network (mode
	// none, NetworkHost) only HostPort == Port is possible, and nothing is
	// done for it; with NetworkNone forwarding is refused.
	Forward []Forward
	// Allow lists destinations this run may reach, with an isolated
	// network, besides the public internet and Config.AllowNets (a git host
	// on the operator's network for a clone, its address pinned when it
	// was checked), on the same terms. Prefixes are masked; an invalid one
	// makes Run fail. Default: none. Set only for clones, never for user
	// code.
	Allow []netip.Prefix
	// Tmp, when set, is a host folder mounted at /tmp (a Volume's Tmp, so
	// that /tmp counts against the volume's disk limit). Unset, /tmp is a
	// private tmpfs of at most TmpSize bytes, which also counts against
	// the memory limit.
	Tmp string
	// Data, when set, is a host folder mounted read-write at /data, named
	// by DATA_DIR in the command's environment: a server app's persistent
	// data folder (a Volume of its own, kept across deployments). In mode
	// none DATA_DIR names the host folder itself.
	Data string
	// HostLoopbackPorts lists TCP ports of the host's loopback interface
	// the command may reach: with an isolated network, a connection to
	// 127.0.0.1:PORT (or [::1]:PORT) inside the command's network is passed
	// by pasta to the same port of the host's loopback. Everything else of
	// the host's loopback stays out of reach. It exists for the
	// operator's own services on the host's loopback only: a git host
	// allow-listed for clones (GANTRY_GIT_ALLOW_HOSTS), and the package
	// registries builds install from (GANTRY_NPM_REGISTRY,
	// GANTRY_PIP_INDEX_URL: verdaccio, devpi); never a port of the
	// platform's or an app's. On the host's network (mode none,
	// NetworkHost) it does nothing; with NetworkNone it is refused.
	HostLoopbackPorts []int
	// UID and GID, when not zero, are the ids this run uses instead of the
	// sandbox's default: each account's builds and apps run under a uid of
	// their own, so that no tenant can signal, trace or read another's
	// processes or files. Root (0) is never used.
	UID, GID uint32
	// Terminate, when closed, asks the command to stop: its processes get
	// SIGTERM once, except the sandbox's own (pasta, bubblewrap) and
	// shells, which end when the processes they wait for do (a shell that
	// died first would take the command's pid namespace, and everything
	// still shutting down in it, with it). Run keeps waiting for the
	// command to exit; cancelling ctx then kills whatever is left. Nil
	// never asks.
	Terminate <-chan struct{}
}

// Forward is one port forwarded from the host's loopback interface into a
// command's network.
type Forward struct {
	HostPort int // TCP port on the host's 127.0.0.1
	Port     int // TCP port inside the command's network
}

// Result describes a finished run.
type Result struct {
	ExitCode     int           // -1 when the run was killed
	Duration     time.Duration // wall time from start to exit
	DroppedLines int           // output lines beyond Limits.OutputLines
}

// Sandbox runs commands. It is safe for concurrent use.
type Sandbox struct {
	mode       string
	network    string
	uid, gid   uint32
	bwrap      string
	pasta      string
	cgroupRoot string
	allow      []netip.Prefix
	allowErr   error // an invalid Config.AllowNets, reported by Available and Run
	tun        string
	noFilter   bool // tests only: run without the seccomp filter
}

// New returns a Sandbox for cfg. It does not check that bubblewrap and
// pasta work: call Available for that.
func New(cfg Config) *Sandbox {
	s := &Sandbox{mode: cfg.Mode, network: cfg.Network, uid: cfg.UID, gid: cfg.GID, bwrap: cfg.Bwrap, pasta: cfg.Pasta, cgroupRoot: cfg.CgroupRoot, tun: cfg.TunDevice}
	s.allow, s.allowErr = cleanPrefixes(cfg.AllowNets)
	if s.mode == "" {
		s.mode = ModeBwrap
	}
	if s.network == "" {
		s.network = NetworkIsolated
	}
	if s.pasta == "" {
		s.pasta = "pasta"
	}
	if s.uid == 0 {
		s.uid = DefaultUID
	}
	if s.gid == 0 {
		s.gid = DefaultGID
	}
	if s.bwrap == "" {
		s.bwrap = "bwrap"
	}
	if s.cgroupRoot == "" {
		s.cgroupRoot = "/sys/fs/cgroup"
	}
	if s.tun == "" {
		s.tun = tunDevice
	}
	return s
}

// Mode returns ModeBwrap or ModeNone.
func (s *Sandbox) Mode() string { return s.mode }

// Network returns the network of bwrap-mode runs: NetworkIsolated,
// NetworkHost or NetworkNone. Runs in mode none use the host's network
// whatever it says.
func (s *Sandbox) Network() string { return s.network }

// UID returns the uid sandboxed commands run as (bwrap mode).
func (s *Sandbox) UID() uint32 { return s.uid }

// GID returns the gid sandboxed commands run as (bwrap mode).
func (s *Sandbox) GID() uint32 { return s.gid }

// ErrNotInstalled is returned (wrapped) by Available when bubblewrap is
// missing.
var ErrNotInstalled = errors.New("bubblewrap is not installed: run `apt-get install bubblewrap`, or set GANTRY_SANDBOX=none for development only")

// ErrPastaNotInstalled is returned (wrapped) by Available when the network
// is isolated and pasta is missing.
var ErrPastaNotInstalled = errors.New("pasta is not installed: run `apt-get install passt` to give builds and apps a network of their own, or set the sandbox network to \"host\" to let them reach the host's loopback services (not recommended)")

// Available reports whether the sandbox can run commands, with a message
// saying how to fix it when it cannot: bubblewrap must be installed, the
// platform must run as root (to switch to the sandbox uid), a cgroup must
// be creatable for the limits, and a trivial command must run under bwrap.
// With an isolated network pasta and iproute2's ip must be installed too,
// and the host must name a nameserver isolated commands can reach (see
// resolvConf). In mode none it only checks the mode is known.
func (s *Sandbox) Available() error {
	switch s.mode {
	case ModeNone:
		return nil
	case ModeBwrap:
	default:
		return fmt.Errorf("unknown sandbox mode %q: use %q or %q", s.mode, ModeBwrap, ModeNone)
	}
	switch s.network {
	case NetworkIsolated, NetworkHost, NetworkNone:
	default:
		return fmt.Errorf("unknown sandbox network %q: use %q, %q or %q", s.network, NetworkIsolated, NetworkHost, NetworkNone)
	}
	if s.allowErr != nil {
		return fmt.Errorf("sandbox allow list: %w", s.allowErr)
	}
	path, err := exec.LookPath(s.bwrap)
	if err != nil {
		return ErrNotInstalled
	}
	s.bwrap = path
	if s.network == NetworkIsolated {
		path, err := exec.LookPath(s.pasta)
		if err != nil {
			return ErrPastaNotInstalled
		}
		s.pasta = path
		if _, err := lookIP(); err != nil {
			return err
		}
		if _, _, err := resolvConf(hostResolvConfs...); err != nil {
			return err
		}
		if err := tunUsable(s.tun, s.uid); err != nil {
			return err
		}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the sandbox must start as root to run builds as uid %d: run gantry as root, or set GANTRY_SANDBOX=none for development only", s.uid)
	}
	dir, err := os.MkdirTemp("", "gantry-sandbox-check-")
	if err != nil {
		return fmt.Errorf("sandbox check: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("sandbox check: %w", err)
	}
	// A tiny volume, as every build gets: loop devices and mkfs.ext4 work.
	vol, err := s.OpenVolume(filepath.Join(dir, "v"), Disk{Bytes: 4 << 20, Inodes: 64}, 0, 0)
	if err != nil {
		return fmt.Errorf("build workspaces cannot be made here: %w", err)
	}
	defer RemoveVolume(vol.Path)
	var out strings.Builder
	_, err = s.Run(context.Background(), Command{
		Args:   []string{"true"},
		Dir:    vol.Workspace,
		Tmp:    vol.Tmp,
		Limits: Limits{Timeout: 30 * time.Second, Memory: 64 << 20, Pids: 16},
		Output: func(_ Stream, line string) { out.WriteString(line + "\n") },
	})
	if err != nil {
		detail := ""
		var se *SetupError
		if line := lastMeaningfulLine(out.String()); line != "" && !errors.As(err, &se) {
			detail = " (" + line + ")"
		}
		return fmt.Errorf("bubblewrap cannot run builds here: %w%s; set GANTRY_SANDBOX=none for development only", err, detail)
	}
	return nil
}

// tunDevice is the device pasta opens to give a run a network of its own.
const tunDevice = "/dev/net/tun"

// tunUsable checks that the sandbox user uid can open the tun device at
// path for reading and writing, as pasta must: Debian's udev rules make it
// 0666, but machines without udev (containers, minimal VMs) leave it 0600,
// and pasta then fails with "Failed to open tun socket in namespace". The
// message names the command that fixes it (`make run` and `make test` run
// it as root: scripts/sandbox-ensure).
func tunUsable(path string, uid uint32) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("isolated builds need %s, which is missing: run `mkdir -p /dev/net && mknod -m 0666 /dev/net/tun c 10 200` as root", path)
	}
	m := fi.Mode().Perm()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == uid && m&0o600 == 0o600 {
		return nil
	}
	if m&0o006 == 0o006 {
		return nil
	}
	return fmt.Errorf("the sandbox user cannot open %s (mode %04o), which isolated builds need: run `chmod 0666 %s` as root (as Debian's udev rules do)", path, m, path)
}

// lastMeaningfulLine returns the last line of a failed check's output that
// says something, leaving out noise such as pasta's "Failed to send N bytes
// to syslog" (no syslog daemon on the machine).
func lastMeaningfulLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.Contains(l, "to syslog") {
			continue
		}
		return l
	}
	return ""
}

// lookIP finds iproute2's ip, which shuts the host's own addresses out of
// isolated networks: on the PATH, else in /usr/sbin or /sbin.
func lookIP() (string, error) {
	if path := sbin("ip"); filepath.IsAbs(path) {
		return path, nil
	}
	return "", errors.New("ip (iproute2) is not installed: run `apt-get install iproute2`; isolated networks need it")
}

// hostResolvConfs are the resolver configurations resolvConf picks from:
// the host's own, then systemd-resolved's list of upstream servers.
var hostResolvConfs = []string{"/etc/resolv.conf", "/run/systemd/resolve/resolv.conf"}

// resolvConf returns the first of files naming a nameserver outside
// loopback, and the nameservers outside loopback it names: the file an
// isolated command gets as /etc/resolv.conf, and the servers its network
// rules let through on port 53 (zones dropped). Such a nameserver is
// reached through pasta like any other address, whereas a loopback one
// (systemd-resolved's stub at 127.0.0.53, a local dnsmasq) is the host's
// and out of reach; systemd-resolved's second file names its upstream
// servers instead. A file without nameserver lines means localhost to the
// C library and does not qualify.
func resolvConf(files ...string) (string, []netip.Addr, error) {
	var seen []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var servers []netip.Addr
		for line := range strings.SplitSeq(string(b), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "nameserver" {
				continue
			}
			a, err := netip.ParseAddr(fields[1])
			if err != nil {
				continue
			}
			if a = a.Unmap().WithZone(""); a.IsLoopback() {
				seen = append(seen, fields[1])
				continue
			}
			servers = append(servers, a)
		}
		if len(servers) > 0 {
			return f, servers, nil
		}
	}
	what := "names no nameserver"
	if len(seen) > 0 {
		what = "names only loopback nameservers (" + strings.Join(seen, ", ") + ")"
	}
	return "", nil, fmt.Errorf("isolated builds cannot resolve names: %s %s, which a network of its own cannot reach; point it at a reachable nameserver, or set the sandbox network to %q (not recommended)", files[0], what, NetworkHost)
}

// PrepareWorkspace makes dir usable as a Command.Dir: in bwrap mode it
// gives dir and everything under it to the sandbox user (symlinks are
// re-owned themselves, never followed), sets dir's mode to 0700, and
// checks that every parent folder lets the sandbox user pass through (the
// execute bit), since bubblewrap opens dir as that user. In mode none it
// does nothing.
func (s *Sandbox) PrepareWorkspace(dir string) error {
	return s.PrepareWorkspaceAs(dir, 0, 0)
}

// PrepareWorkspaceAs is PrepareWorkspace for the sandbox user uid:gid
// (zero: the sandbox's default), an account's own.
func (s *Sandbox) PrepareWorkspaceAs(dir string, uid, gid uint32) error {
	if s.mode == ModeNone {
		return nil
	}
	uid, gid = s.owner(uid, gid)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	err = filepath.WalkDir(abs, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(uid), int(gid))
	})
	if err != nil {
		return fmt.Errorf("prepare workspace: %w", err)
	}
	if err := os.Chmod(abs, 0o700); err != nil {
		return fmt.Errorf("prepare workspace: %w", err)
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("prepare workspace: %w", err)
		}
		if !canSearch(fi, uid, gid) {
			return fmt.Errorf("workspace %s is not reachable by the sandbox user %d: folder %s must be searchable (chmod o+x %s)", abs, uid, p, p)
		}
		if p == "/" {
			return nil
		}
	}
}

// canSearch reports whether the user uid:gid may traverse the folder fi.
func canSearch(fi os.FileInfo, uid, gid uint32) bool {
	m := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case ok && st.Uid == uid:
		return m&0o100 != 0
	case ok && st.Gid == gid:
		return m&0o010 != 0
	}
	return m&0o001 != 0
}

// Sweep ends the runs an earlier platform process left behind when it died
// mid-build: whatever is still running in their cgroups is killed and the
// cgroups removed. Only "gantry-*" cgroups next to the ones Run creates,
// of platform processes no longer alive, are touched. In mode none it does
// nothing. Call it at start-up.
func (s *Sandbox) Sweep() error {
	if s.mode == ModeNone {
		return nil
	}
	return sweepCgroups(s.cgroupRoot)
}

// TimeoutError is returned by Run when the run reached Limits.Timeout.
type TimeoutError struct {
	After time.Duration
}

func (e *TimeoutError) Error() string { return fmt.Sprintf("timed out after %s", e.After) }

// Is makes errors.Is(err, context.DeadlineExceeded) true for a timeout.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// MemoryError is returned by Run when the kernel killed a process of the
// run for exceeding Limits.Memory.
type MemoryError struct {
	Limit int64 // bytes
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("ran out of memory (limit %s)", FormatBytes(e.Limit))
}

// PidsError is returned by Run when the command failed after reaching
// Limits.Pids.
type PidsError struct {
	Limit int64
}

func (e *PidsError) Error() string {
	return fmt.Sprintf("reached the limit of %d processes", e.Limit)
}

// FileSizeError is returned by Run when the command was killed for writing
// a file larger than Limits.FileSize (SIGXFSZ).
type FileSizeError struct {
	Limit int64 // bytes
}

func (e *FileSizeError) Error() string {
	return fmt.Sprintf("wrote a file larger than the limit (%s)", FormatBytes(e.Limit))
}

// SetupError is returned by Run when the sandbox itself could not be set
// up and the command never started: pasta could not open its tun device
// ("Failed to open tun socket in namespace", seen under load), a network
// rule or one of bubblewrap's mounts failed. Run has tried Attempts times.
// It is the platform's fault, never the command's or its input's, and
// running the command again is safe: nothing of it ran.
type SetupError struct {
	Attempts int
	Code     int    // the exit code of the last attempt
	Detail   string // the last line the set-up printed, for the server log
}

func (e *SetupError) Error() string {
	msg := fmt.Sprintf("the sandbox could not be set up (%d attempts, exit code %d)", e.Attempts, e.Code)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// ExitError is returned by Run when the command exited with a non-zero code
// for no reason the sandbox knows. Code is 128+N when a signal N ended it.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exited with code %d", e.Code) }

// FormatBytes writes n in binary units the way limits are usually spoken:
// "1 GiB", "512 MiB", "1.5 GiB", "900 B".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// UIDRange is a range of host uids (and gids of the same numbers) reserved
// for sandboxed accounts: account slot n (1, 2, …) runs as First+n-1.
// Nothing else on the machine may use these ids.
type UIDRange struct {
	First, Count uint32
}

// UID returns the uid of account slot n, or an error once the range is
// used up.
func (r UIDRange) UID(slot int64) (uint32, error) {
	if slot < 1 || slot > int64(r.Count) {
		return 0, fmt.Errorf("sandbox: account slot %d is outside the %d sandbox uids from %d: widen GANTRY_SANDBOX_UIDS", slot, r.Count, r.First)
	}
	return r.First + uint32(slot-1), nil
}
