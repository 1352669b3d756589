package sandbox

import "testing"

// SetResolvConfs makes isolated runs take their /etc/resolv.conf, and the
// nameservers their rules let through, from the first usable of files
// until tb's test ends. Tests that call it must not run in parallel.
func SetResolvConfs(tb testing.TB, files ...string) {
	tb.Helper()
	old := hostResolvConfs
	hostResolvConfs = files
	tb.Cleanup(func() { hostResolvConfs = old })
}

// WithoutSeccomp returns a copy of s whose runs load no seccomp filter
// (bubblewrap's other options unchanged), for tests that show what the
// filter changes.
func WithoutSeccomp(s *Sandbox) *Sandbox {
	c := *s
	c.noFilter = true
	return &c
}

// DeniedCall is a system call the seccomp filter refuses with EPERM
// whatever its arguments.
type DeniedCall struct {
	Name string
	Nr   uint32
}

// DeniedCalls lists the system calls the seccomp filter refuses with EPERM
// whatever their arguments.
func DeniedCalls() []DeniedCall {
	out := make([]DeniedCall, len(deniedCalls))
	for i, c := range deniedCalls {
		out[i] = DeniedCall{c.name, c.nr}
	}
	return out
}

// SetIdleHook makes f run on the idle thread of every RemoveVolume until
// tb's test ends.
func SetIdleHook(tb testing.TB, f func()) {
	idleHook = f
	tb.Cleanup(func() { idleHook = nil })
}
