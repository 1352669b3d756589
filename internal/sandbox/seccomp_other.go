//go:build !amd64 && !arm64

package sandbox

// auditArch is zero where Gantry has no seccomp filter: bwrap-mode runs
// fail with an error saying so.
const auditArch = 0

const x32SyscallBit = 0

var archDeniedCalls []deniedCall
