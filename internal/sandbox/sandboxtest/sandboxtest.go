// Package sandboxtest gives tests a working sandbox, or ends them.
//
// A test that needs the sandbox (bubblewrap, pasta, cgroups, root) fails
// when the sandbox is unavailable: under `make test` and in CI a missing
// sandbox is a broken machine set-up, never a reason to pass quietly. A
// developer who knows the sandbox cannot work on a machine asks for skips
// explicitly with GANTRY_TEST_SKIP_SANDBOX=1.
package sandboxtest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gantryhq/gantry/internal/netpolicy"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// SkipVar is the environment variable that turns the failures into skips.
const SkipVar = "GANTRY_TEST_SKIP_SANDBOX"

// Require returns a bwrap-mode Sandbox for cfg that Available accepts.
// Otherwise the test fails, or is skipped when SkipVar is "1". The npm
// registry's restricted addresses (RegistryAllow) are added to
// cfg.AllowNets, as `make` does for `gantry serve`, so that sandboxed
// installs work on machines whose registry sits behind such a proxy.
func Require(tb testing.TB, cfg sandbox.Config) *sandbox.Sandbox {
	tb.Helper()
	cfg.AllowNets = append(cfg.AllowNets, RegistryAllow(tb)...)
	s := sandbox.New(cfg)
	if os.Geteuid() != 0 {
		Unavailable(tb, "the sandbox needs root")
	}
	if err := s.Available(); err != nil {
		Unavailable(tb, err.Error())
	}
	return s
}

// Unavailable ends a test that cannot have the sandbox: a failure, or a
// skip when SkipVar is "1".
func Unavailable(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv(SkipVar) == "1" {
		tb.Skipf("sandbox unavailable (skipped: %s=1): %s", SkipVar, why)
	}
	tb.Fatalf("sandbox unavailable: %s\n(run `make deps` as root to set the machine up, or set %s=1 to skip the tests that need it)", why, SkipVar)
}

// RegistryAllow returns, as /32 or /128 prefixes, the restricted addresses
// (netpolicy.Restricted) at which this machine reaches npm's registry. A
// machine that reaches the internet through a proxy at such an address
// (some CI farms answer every name with one in 203.0.113.0/24) must
// allow-list it for sandboxed installs, as its operator would with
// GANTRY_SANDBOX_ALLOW (scripts/registry-allow); elsewhere the list is
// empty, and so it is when npm or the name cannot be resolved.
func RegistryAllow(tb testing.TB) []netip.Prefix {
	tb.Helper()
	registryOnce.Do(func() { registryAllow = lookUpRegistry() })
	return slices.Clone(registryAllow)
}

var (
	registryOnce  sync.Once
	registryAllow []netip.Prefix
)

func lookUpRegistry() []netip.Prefix {
	host := RegistryHost()
	if host == "" {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil {
		return nil
	}
	var allow []netip.Prefix
	for _, a := range addrs {
		if a = a.Unmap(); netpolicy.Restricted(a) {
			allow = append(allow, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return allow
}

// RegistryHost returns the host name of the registry npm is configured
// with on this machine, or "" when npm cannot say.
func RegistryHost() string {
	out, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(string(out)))
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// FlakyPasta returns a pasta for Config.Pasta that fails as pasta does
// under load, printing "Failed to open tun socket in namespace: …" and
// exiting 1 before it starts anything, the first failures times it is run
// (every time when failures is negative), and then runs the real pasta.
// It counts its runs in a folder of tb's, which the sandbox user may
// write.
func FlakyPasta(tb testing.TB, failures int) string {
	tb.Helper()
	real, err := exec.LookPath("pasta")
	if err != nil {
		Unavailable(tb, "pasta is not installed")
	}
	dir := tb.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			tb.Fatal(err)
		}
	}
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o777); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(runs, 0o777); err != nil { // past the umask
		tb.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
n=0
while :; do
  n=$((n+1))
  if mkdir %[1]s/$n 2>/dev/null; then break; fi
done
if [ %[2]d -lt 0 ] || [ "$n" -le %[2]d ]; then
  echo "Failed to open tun socket in namespace: Operation not permitted" >&2
  exit 1
fi
exec %[3]s "$@"
`, runs, failures, real)
	path := filepath.Join(dir, "pasta")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

// PastaRuns returns how many times the FlakyPasta at path has run.
func PastaRuns(tb testing.TB, path string) int {
	tb.Helper()
	entries, err := os.ReadDir(filepath.Join(filepath.Dir(path), "runs"))
	if err != nil {
		tb.Fatal(err)
	}
	return len(entries)
}
