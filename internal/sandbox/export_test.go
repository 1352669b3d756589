package sandbox

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
