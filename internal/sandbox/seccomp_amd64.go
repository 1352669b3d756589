package sandbox

import "golang.org/x/sys/unix"

// auditArch is the architecture the seccomp filter's rules are written for.
const auditArch = unix.AUDIT_ARCH_X86_64

// x32SyscallBit marks the system calls of the x32 ABI, which share
// x86-64's audit architecture: the filter refuses them all.
const x32SyscallBit = 0x40000000

// archDeniedCalls are x86-64's own refused calls (see deniedCalls): I/O
// port access (iopl, ioperm) and the obsolete calls Docker refuses too
// (uselib, ustat, sysfs, _sysctl, nfsservctl, create_module,
// get_kernel_syms, query_module). vm86 and vm86old exist only for 32-bit
// x86, whose calls the filter refuses as a whole.
var archDeniedCalls = []deniedCall{
	{"iopl", unix.SYS_IOPL},
	{"ioperm", unix.SYS_IOPERM},
	{"uselib", unix.SYS_USELIB},
	{"ustat", unix.SYS_USTAT},
	{"sysfs", unix.SYS_SYSFS},
	{"_sysctl", unix.SYS__SYSCTL},
	{"nfsservctl", unix.SYS_NFSSERVCTL},
	{"create_module", unix.SYS_CREATE_MODULE},
	{"get_kernel_syms", unix.SYS_GET_KERNEL_SYMS},
	{"query_module", unix.SYS_QUERY_MODULE},
}
