package sandbox

import "golang.org/x/sys/unix"

// auditArch is the architecture the seccomp filter's rules are written for.
const auditArch = unix.AUDIT_ARCH_AARCH64

// x32SyscallBit is zero: arm64 has no second ABI under its own audit
// architecture (arm32 compat calls carry AUDIT_ARCH_ARM and are refused
// as a whole).
const x32SyscallBit = 0

// archDeniedCalls are arm64's own refused calls (see deniedCalls):
// nfsservctl, the only obsolete one its table still numbers.
var archDeniedCalls = []deniedCall{
	{"nfsservctl", unix.SYS_NFSSERVCTL},
}
