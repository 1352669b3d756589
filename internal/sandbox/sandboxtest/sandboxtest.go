// Package sandboxtest gives tests a working sandbox, or ends them.
//
// A test that needs the sandbox (bubblewrap, pasta, cgroups, root) fails
// when the sandbox is unavailable: under `make test` and in CI a missing
// sandbox is a broken machine set-up, never a reason to pass quietly. A
// developer who knows the sandbox cannot work on a machine asks for skips
// explicitly with GANTRY_TEST_SKIP_SANDBOX=1.
package sandboxtest

import (
	"os"
	"testing"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// SkipVar is the environment variable that turns the failures into skips.
const SkipVar = "GANTRY_TEST_SKIP_SANDBOX"

// Require returns a bwrap-mode Sandbox for cfg that Available accepts.
// Otherwise the test fails, or is skipped when SkipVar is "1".
func Require(tb testing.TB, cfg sandbox.Config) *sandbox.Sandbox {
	tb.Helper()
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
