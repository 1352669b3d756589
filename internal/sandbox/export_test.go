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
