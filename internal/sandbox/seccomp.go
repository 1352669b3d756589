package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// filterFD is the file descriptor bubblewrap reads the seccomp filter from
// (--seccomp). It sits above the descriptors the sandbox's shell scripts
// use or close (0 to 9: the gate on 3, bubblewrap's options on 4, and the
// sockets pasta leaves open, which netScript closes), so it reaches
// bubblewrap untouched whether pasta starts it or not. bubblewrap reads it
// to the end before the command starts, and the command does not inherit
// it.
const filterFD = 10

// deniedCall is a system call the seccomp filter refuses.
type deniedCall struct {
	name string
	nr   uint32
}

// deniedCalls are the system calls refused with EPERM whatever their
// arguments, after Docker's default profile (which allows a list and
// refuses the rest; this filter refuses a list and allows the rest, since
// the command already holds no capability and runs in namespaces of its
// own). They are the doors to the kernel's less-travelled code that a
// build or a web app never needs:
//
//   - namespaces: unshare, setns (and clone with a namespace flag, see
//     cloneNamespaceFlags) — a user namespace hands back capabilities over
//     new namespaces, the usual first step of a kernel exploit;
//   - mounts: mount, umount2, pivot_root and the new mount API (fsopen,
//     fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr);
//   - the kernel keyring: keyctl, add_key, request_key;
//   - bpf, perf_event_open, userfaultfd (a tool for winning kernel races),
//     fanotify_init, and io_uring_setup, io_uring_enter, io_uring_register
//     (a large and often-patched surface that Docker refuses since 25.0;
//     libuv and others fall back to threads);
//   - the machine's own state: kexec_load, kexec_file_load, init_module,
//     finit_module, delete_module, reboot, swapon, swapoff, acct, syslog,
//     settimeofday, clock_settime, adjtimex, clock_adjtime, quotactl,
//     quotactl_fd, lookup_dcookie;
//   - file handles: open_by_handle_at (the "shocker" escape from
//     containers), name_to_handle_at;
//   - sched_setattr, which Docker allows: with it a run could lengthen
//     the short time slice the sandbox gives it (runSlice) and keep the
//     CPU from the platform for up to 100 ms at a time. Niceness
//     (setpriority, nice) and policies (sched_setscheduler, which keeps
//     the slice) stay open;
//   - and, where the architecture has them (archDeniedCalls), I/O port
//     access and obsolete calls.
//
// ptrace, process_vm_readv and process_vm_writev stay allowed, as in
// Docker on kernels since 4.8 (where ptrace can no longer be used to get
// around a seccomp filter): a command can only trace its own processes,
// since the pid namespace holds nothing else and every account runs as a
// uid of its own; every one of them, bubblewrap's init (pid 1) included,
// runs under this filter with no capabilities, so a traced process can do
// nothing its tracer cannot; and debuggers and crash reporters need it.
var deniedCalls = append([]deniedCall{
	{"unshare", unix.SYS_UNSHARE},
	{"setns", unix.SYS_SETNS},
	{"mount", unix.SYS_MOUNT},
	{"umount2", unix.SYS_UMOUNT2},
	{"pivot_root", unix.SYS_PIVOT_ROOT},
	{"fsopen", unix.SYS_FSOPEN},
	{"fsconfig", unix.SYS_FSCONFIG},
	{"fsmount", unix.SYS_FSMOUNT},
	{"fspick", unix.SYS_FSPICK},
	{"move_mount", unix.SYS_MOVE_MOUNT},
	{"open_tree", unix.SYS_OPEN_TREE},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR},
	{"keyctl", unix.SYS_KEYCTL},
	{"add_key", unix.SYS_ADD_KEY},
	{"request_key", unix.SYS_REQUEST_KEY},
	{"bpf", unix.SYS_BPF},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
	{"userfaultfd", unix.SYS_USERFAULTFD},
	{"fanotify_init", unix.SYS_FANOTIFY_INIT},
	{"io_uring_setup", unix.SYS_IO_URING_SETUP},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER},
	{"kexec_load", unix.SYS_KEXEC_LOAD},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD},
	{"init_module", unix.SYS_INIT_MODULE},
	{"finit_module", unix.SYS_FINIT_MODULE},
	{"delete_module", unix.SYS_DELETE_MODULE},
	{"reboot", unix.SYS_REBOOT},
	{"swapon", unix.SYS_SWAPON},
	{"swapoff", unix.SYS_SWAPOFF},
	{"acct", unix.SYS_ACCT},
	{"syslog", unix.SYS_SYSLOG},
	{"settimeofday", unix.SYS_SETTIMEOFDAY},
	{"clock_settime", unix.SYS_CLOCK_SETTIME},
	{"adjtimex", unix.SYS_ADJTIMEX},
	{"clock_adjtime", unix.SYS_CLOCK_ADJTIME},
	{"quotactl", unix.SYS_QUOTACTL},
	{"quotactl_fd", unix.SYS_QUOTACTL_FD},
	{"lookup_dcookie", unix.SYS_LOOKUP_DCOOKIE},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
	{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT},
	{"sched_setattr", unix.SYS_SCHED_SETATTR},
}, archDeniedCalls...)

// cloneNamespaceFlags are the clone(2) flags that make new namespaces
// (CLONE_NEWNS, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWCGROUP): clone
// with any of them fails with EPERM, as in Docker; threads and fork work.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// allowedPersonalities are the personality(2) values a command may set or
// query, Docker's list: PER_LINUX, PER_LINUX32, either with UNAME26, and
// 0xffffffff (query). Others (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE,
// MMAP_PAGE_ZERO, foreign execution domains) fail with EPERM: they weaken
// the memory layout the kernel's defences count on.
var allowedPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// Byte offsets in struct seccomp_data (little-endian architectures).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of the first argument
)

// Filter return values.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// seccompProgram returns the filter as classic BPF instructions. In order:
//
//   - a system call of another architecture than the platform's (32-bit
//     x86 through int 0x80, arm32 compat) fails with ENOSYS, and so does
//     one of the x32 ABI on x86-64 (numbers with bit 30 set): the rules
//     below are written for the native numbers, and those ABIs would get
//     around them;
//   - clone3 fails with ENOSYS, as in Docker: its flags live in memory a
//     filter cannot read, and ENOSYS makes the C library fall back to
//     clone, whose flags it can;
//   - deniedCalls fail with EPERM;
//   - clone with a namespace flag and personality with a value outside
//     allowedPersonalities fail with EPERM;
//   - everything else is allowed.
//
// EPERM rather than killing the process, as in Docker, so that programs
// probing for a feature carry on without it.
func seccompProgram() ([]bpf.Instruction, error) {
	if auditArch == 0 {
		return nil, errors.New("sandbox: no seccomp filter for this architecture")
	}
	var p program
	p.add(bpf.LoadAbsolute{Off: offArch, Size: 4})
	p.jumpIf(bpf.JumpNotEqual, auditArch, "enosys", "")
	p.add(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if x32SyscallBit != 0 {
		p.jumpIf(bpf.JumpGreaterOrEqual, x32SyscallBit, "enosys", "")
	}
	p.jumpIf(bpf.JumpEqual, unix.SYS_CLONE3, "enosys", "")
	for _, c := range deniedCalls {
		p.jumpIf(bpf.JumpEqual, c.nr, "eperm", "")
	}

	p.jumpIf(bpf.JumpNotEqual, unix.SYS_CLONE, "personality", "")
	p.add(bpf.LoadAbsolute{Off: offArg0, Size: 4})
	p.jumpIf(bpf.JumpBitsSet, cloneNamespaceFlags, "eperm", "allow")

	p.label("personality")
	p.jumpIf(bpf.JumpNotEqual, unix.SYS_PERSONALITY, "allow", "")
	p.add(bpf.LoadAbsolute{Off: offArg0, Size: 4})
	for _, v := range allowedPersonalities {
		p.jumpIf(bpf.JumpEqual, v, "allow", "")
	}
	p.jump("eperm")

	p.label("allow")
	p.add(bpf.RetConstant{Val: retAllow})
	p.label("eperm")
	p.add(bpf.RetConstant{Val: retEPERM})
	p.label("enosys")
	p.add(bpf.RetConstant{Val: retENOSYS})
	return p.resolve()
}

// seccompFilter returns the filter in the form bubblewrap reads from
// --seccomp: struct sock_filter records in native byte order. It is the
// same for every run and made once.
var seccompFilter = sync.OnceValues(func() ([]byte, error) {
	insts, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	b := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		b = binary.NativeEndian.AppendUint16(b, r.Op)
		b = append(b, r.Jt, r.Jf)
		b = binary.NativeEndian.AppendUint32(b, r.K)
	}
	return b, nil
})

// program builds a BPF program whose jumps name labels; resolve turns them
// into the forward offsets BPF wants.
type program struct {
	insts  []bpf.Instruction
	labels map[string]int
	jumps  []pendingJump
}

// pendingJump is a jump at insts[at] to labels; "" means the next
// instruction.
type pendingJump struct {
	at                  int
	cond                bpf.JumpTest
	val                 uint32
	always              bool
	ifTrue, ifFalse, to string
}

func (p *program) add(i bpf.Instruction) { p.insts = append(p.insts, i) }

func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.insts)
}

func (p *program) jumpIf(cond bpf.JumpTest, val uint32, ifTrue, ifFalse string) {
	p.jumps = append(p.jumps, pendingJump{at: len(p.insts), cond: cond, val: val, ifTrue: ifTrue, ifFalse: ifFalse})
	p.add(nil)
}

func (p *program) jump(to string) {
	p.jumps = append(p.jumps, pendingJump{at: len(p.insts), always: true, to: to})
	p.add(nil)
}

func (p *program) resolve() ([]bpf.Instruction, error) {
	skip := func(from int, label string) (int, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := p.labels[label]
		if !ok || to <= from {
			return 0, fmt.Errorf("sandbox: seccomp filter: no label %q after instruction %d", label, from)
		}
		return to - from - 1, nil
	}
	for _, j := range p.jumps {
		if j.always {
			n, err := skip(j.at, j.to)
			if err != nil {
				return nil, err
			}
			p.insts[j.at] = bpf.Jump{Skip: uint32(n)}
			continue
		}
		t, err := skip(j.at, j.ifTrue)
		if err != nil {
			return nil, err
		}
		f, err := skip(j.at, j.ifFalse)
		if err != nil {
			return nil, err
		}
		if t > 255 || f > 255 {
			return nil, fmt.Errorf("sandbox: seccomp filter: jump from instruction %d too long", j.at)
		}
		p.insts[j.at] = bpf.JumpIf{Cond: j.cond, Val: j.val, SkipTrue: uint8(t), SkipFalse: uint8(f)}
	}
	return p.insts, nil
}
