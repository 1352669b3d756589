package sandbox_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// probe is one system call a sandboxed Python program makes through
// ctypes; args are integers or strings (passed as C strings).
type probe struct {
	name string
	nr   uint32
	args []any
}

// probeScript returns a Python program (Debian's /usr/bin/python3: the
// PATH's may be a build the sandbox cannot see) that makes each call and
// prints "NAME OK" or "NAME ERRNO" (EPERM, ENOSYS…) per line. A clone that
// succeeds forks: the child exits at once and the parent reaps it.
func probeScript(probes []probe) string {
	var list strings.Builder
	for _, p := range probes {
		fmt.Fprintf(&list, "    (%q, %d, [", p.name, p.nr)
		for _, a := range p.args {
			switch a := a.(type) {
			case string:
				fmt.Fprintf(&list, "%q, ", a)
			default:
				fmt.Fprintf(&list, "%d, ", a)
			}
		}
		list.WriteString("]),\n")
	}
	return `/usr/bin/python3 - <<'EOF'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def arg(a):
    return ctypes.c_char_p(a.encode()) if isinstance(a, str) else ctypes.c_long(a)
probes = [
` + list.String() + `]
for name, nr, args in probes:
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[arg(a) for a in args])
    if name.startswith("clone") and r == 0:
        os._exit(0)
    if name.startswith("clone") and r > 0:
        os.waitpid(r, 0)
    e = ctypes.get_errno() if r == -1 else 0
    print(name, errno.errorcode.get(e, e) if e else "OK", flush=True)
EOF`
}

// runProbes runs probes in s and returns each one's outcome.
func runProbes(t *testing.T, s *sandbox.Sandbox, probes []probe) map[string]string {
	t.Helper()
	ws := workspace(t, s, platformDir(t), "probe")
	c, _, err := run(t, s, ws, sandbox.Limits{}, probeScript(probes))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	got := map[string]string{}
	for _, l := range c.lines {
		name, outcome, ok := strings.Cut(strings.TrimPrefix(l, "stdout: "), " ")
		if !ok || strings.HasPrefix(l, "stderr: ") {
			t.Fatalf("unexpected output line %q\n%s", l, c)
		}
		got[name] = outcome
	}
	return got
}

// Signal number a forking clone passes in its flags, and personality
// values.
const (
	sigchld          = int(unix.SIGCHLD)
	addrNoRandomize  = 0x0040000
	personalityQuery = 0xffffffff
)

// The filter's targeted probes: each call's arguments are chosen so that
// without the filter the kernel answers something else than the filter
// does (succeeds, or fails its own way), which TestSeccompProbesMeanSomething
// shows, so that these tests fail if the filter stops refusing them.
var targetedProbes = []probe{
	{"keyctl", unix.SYS_KEYCTL, []any{unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0}},
	{"add_key", unix.SYS_ADD_KEY, []any{"no-such-key-type", "gantry", 0, 0, unix.KEY_SPEC_SESSION_KEYRING}},
	{"request_key", unix.SYS_REQUEST_KEY, []any{"user", "gantry-no-such-key", 0, 0}},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, []any{0, 0, -1, -1, 0}},
	{"mount", unix.SYS_MOUNT, []any{0, 0, 0, 0, 0}},
	{"umount2", unix.SYS_UMOUNT2, []any{"/", -1}},
	{"setns", unix.SYS_SETNS, []any{-1, 0}},
	{"userfaultfd", unix.SYS_USERFAULTFD, []any{1}}, // UFFD_USER_MODE_ONLY: unprivileged
	{"io_uring_setup", unix.SYS_IO_URING_SETUP, []any{1, 0}},
	{"open_tree", unix.SYS_OPEN_TREE, []any{unix.AT_FDCWD, "/", 0}},
	{"unshare:newuser", unix.SYS_UNSHARE, []any{unix.CLONE_NEWUSER}},
	{"clone:newuser", unix.SYS_CLONE, []any{unix.CLONE_NEWUSER | sigchld, 0, 0, 0, 0}},
	{"clone3", unix.SYS_CLONE3, []any{0, 0}},
	{"personality:addr_no_randomize", unix.SYS_PERSONALITY, []any{addrNoRandomize}},
	{"sched_setattr", unix.SYS_SCHED_SETATTR, []any{0, longSliceAttr, 0}},
}

// longSliceAttr is a struct sched_attr (its first version, 48 bytes,
// little-endian) asking for SCHED_OTHER at niceness 19 with a time slice
// of 0x02020202 ns (33.7 ms; every byte below 0x80, for the probe's
// Python string): allowed to an unprivileged process, refused by the
// filter.
var longSliceAttr = "\x30\x00\x00\x00" + // size
	"\x00\x00\x00\x00" + // policy: SCHED_OTHER
	"\x00\x00\x00\x00\x00\x00\x00\x00" + // flags
	"\x13\x00\x00\x00" + // nice 19
	"\x00\x00\x00\x00" + // priority
	"\x02\x02\x02\x02\x00\x00\x00\x00" + // runtime: the slice
	"\x00\x00\x00\x00\x00\x00\x00\x00" + // deadline
	"\x00\x00\x00\x00\x00\x00\x00\x00" // period

// TestSeccompRefusesCalls runs the calls the filter exists to refuse in a
// real sandbox and checks the kernel refuses each: EPERM (like Docker, so
// that programs probing for a feature carry on), ENOSYS for clone3 (so
// that the C library falls back to clone, whose flags the filter reads).
// Forks, threads and allowed personalities still work.
func TestSeccompRefusesCalls(t *testing.T) {
	s := mustSandbox(t)
	probes := append([]probe(nil), targetedProbes...)
	want := map[string]string{}
	for _, p := range targetedProbes {
		want[p.name] = "EPERM"
	}
	want["clone3"] = "ENOSYS"
	// Every call of the list, with arguments that would do nothing.
	for _, c := range sandbox.DeniedCalls() {
		name := "any:" + c.Name
		probes = append(probes, probe{name, c.Nr, []any{0, 0, 0, 0, 0, 0}})
		want[name] = "EPERM"
	}
	for _, f := range []struct {
		name string
		flag int
	}{
		{"newns", unix.CLONE_NEWNS}, {"newuts", unix.CLONE_NEWUTS}, {"newipc", unix.CLONE_NEWIPC},
		{"newpid", unix.CLONE_NEWPID}, {"newnet", unix.CLONE_NEWNET}, {"newcgroup", unix.CLONE_NEWCGROUP},
	} {
		probes = append(probes, probe{"clone:" + f.name, unix.SYS_CLONE, []any{f.flag | sigchld, 0, 0, 0, 0}})
		want["clone:"+f.name] = "EPERM"
	}
	probes = append(probes,
		probe{"clone:fork", unix.SYS_CLONE, []any{sigchld, 0, 0, 0, 0}},
		probe{"personality:query", unix.SYS_PERSONALITY, []any{personalityQuery}},
		probe{"getpid", unix.SYS_GETPID, nil},
	)
	want["clone:fork"], want["personality:query"], want["getpid"] = "OK", "OK", "OK"

	if diff := cmp.Diff(want, runProbes(t, s, probes)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// TestSeccompProbesMeanSomething runs the targeted probes without the
// filter (bubblewrap's other options unchanged) and checks that the kernel
// does not refuse them the filter's way on its own: so it is the filter
// that refuses them in TestSeccompRefusesCalls. It also shows
// --disable-userns holding by itself: without the filter a new user
// namespace fails on bubblewrap's limit (ENOSPC).
func TestSeccompProbesMeanSomething(t *testing.T) {
	s := sandbox.WithoutSeccomp(mustSandbox(t))
	got := runProbes(t, s, targetedProbes)
	for _, p := range targetedProbes {
		filtered := "EPERM"
		if p.name == "clone3" {
			filtered = "ENOSYS"
		}
		if got[p.name] == "" || got[p.name] == filtered {
			t.Errorf("%s without the filter: got %q, want another outcome than %s", p.name, got[p.name], filtered)
		}
	}
	for _, name := range []string{"unshare:newuser", "clone:newuser"} {
		if got[name] != "ENOSPC" {
			t.Errorf("%s without the filter: got %s, want ENOSPC (bubblewrap's --disable-userns)", name, got[name])
		}
	}
}

// TestNoUserNamespaces tries what an exploit's first step looks like from
// a shell: unshare(1) making a user namespace, with and without mapping
// itself to root. Both must fail.
func TestNoUserNamespaces(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "userns")
	c, _, err := run(t, s, ws, sandbox.Limits{},
		`unshare -U true 2>&1 && echo made-userns; unshare -r id -u 2>&1 && echo made-root-userns; unshare -m true 2>&1 && echo made-mountns; echo done`)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	out := c.String()
	if strings.Contains(out, "made-") || !c.has("stdout: done") {
		t.Fatalf("a namespace was made in the sandbox:\n%s", out)
	}
	if n := strings.Count(out, "Operation not permitted"); n != 3 {
		t.Errorf("got %d refusals saying \"Operation not permitted\", want 3:\n%s", n, out)
	}
}

// TestSeccompEverydayWork checks that what builds and apps do still works
// under the filter and without user namespaces: Node (with worker
// threads), npm, git, shell pipelines, Python with threads and
// subprocesses. It also checks the filter is in force in the command
// (/proc/self/status) and that its file descriptor (10) did not leak into
// it.
func TestSeccompEverydayWork(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "work")
	script := `set -e
grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status | tr -s '\t ' ' '
[ -e /proc/self/fd/10 ] && echo filter-fd-leaked
node -e 'const {Worker}=require("worker_threads"); new Worker("require(\"worker_threads\").parentPort.postMessage(6*7)",{eval:true}).on("message",m=>console.log("node", m))'
npm --version >/dev/null && echo npm
git --version | cut -d' ' -f1-2
seq 1 100 | sort -rn | head -1
/usr/bin/python3 -c 'import threading, subprocess; t=threading.Thread(target=print, args=("thread",)); t.start(); t.join(); print(subprocess.run(["echo","child"],capture_output=True,text=True).stdout.strip())'
`
	c, _, err := run(t, s, ws, sandbox.Limits{Timeout: 2 * time.Minute}, script)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	want := "stdout: NoNewPrivs: 1\nstdout: Seccomp: 2\nstdout: node 42\nstdout: npm\nstdout: git version\nstdout: 100\nstdout: thread\nstdout: child"
	if diff := cmp.Diff(want, c.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestSeccompCoversEveryProcess checks what makes allowing ptrace safe:
// every process a command can see in its pid namespace, bubblewrap's own
// init (pid 1) included, runs under the filter, with no_new_privs and no
// capabilities, so tracing one and making it call something gains
// nothing the command itself lacks.
func TestSeccompCoversEveryProcess(t *testing.T) {
	s := mustSandbox(t)
	ws := workspace(t, s, platformDir(t), "ps")
	c, _, err := run(t, s, ws, sandbox.Limits{}, `sleep 5 & ls -d /proc/[0-9]* | wc -l; grep -h -E '^(Seccomp|NoNewPrivs|CapEff|CapPrm):' /proc/[0-9]*/status | tr -s '\t' ' ' | sort -u; kill $!`)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, c)
	}
	if len(c.lines) == 0 {
		t.Fatal("no output")
	}
	if n, _ := strconv.Atoi(strings.TrimPrefix(c.lines[0], "stdout: ")); n < 3 {
		t.Fatalf("got %v, want at least 3 processes (bubblewrap's init, the shell, sleep)", c.lines)
	}
	want := "stdout: CapEff: 0000000000000000\nstdout: CapPrm: 0000000000000000\nstdout: NoNewPrivs: 1\nstdout: Seccomp: 2"
	if diff := cmp.Diff(want, strings.Join(c.lines[1:], "\n")); diff != "" {
		t.Errorf("processes' status (-want +got):\n%s", diff)
	}
}
