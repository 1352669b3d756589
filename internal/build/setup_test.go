package build_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
)

// TestSandboxSetupFailureIsThePlatforms makes pasta fail, every time, as
// it did under load ("Failed to open tun socket in namespace"), first for
// the clone and then for the install: the build fails saying the platform
// failed and that deploying again is safe, and "Why it failed" says it is
// the platform's fault, never to check the repository.
func TestSandboxSetupFailureIsThePlatforms(t *testing.T) {
	e := newEnv(t)
	broken := sandbox.New(sandbox.Config{Pasta: sandboxtest.FlakyPasta(t, -1)})
	check := func(t *testing.T, job build.Job, message string) {
		t.Helper()
		_, l, err := e.run(t, job)
		var be *build.Error
		if !errors.As(err, &be) {
			t.Fatalf("got %v, want a build error\nlog:\n%s", err, l)
		}
		if be.Message != message {
			t.Errorf("message %q; want %q", be.Message, message)
		}
		if d := be.Diagnosis; d == nil || !strings.Contains(d.Detail, "fault of the platform") || strings.Contains(d.Text(), "Check the project's repository") || strings.Contains(d.Text(), "check that the URL") {
			t.Errorf("diagnosis %+v; want the platform's fault", d)
		}
		if strings.Contains(l.String(), "Failed to open tun socket") {
			t.Errorf("pasta's line reached the build log:\n%s", l)
		}
	}
	t.Run("clone", func(t *testing.T) {
		hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: broken, DataDir: e.data})
		if err != nil {
			t.Fatal(err)
		}
		saved := e.p.Cloner
		e.p.Cloner = hosts
		defer func() { e.p.Cloner = saved }()
		check(t, e.job(t, "setup-clone", map[string]string{"index.html": "hi"}),
			"Could not clone alice/setup-clone (branch main): The platform could not set up the sandbox git runs in (its network did not start): this is the platform's fault, not your repository's, and trying again in a minute is safe")
	})
	t.Run("install", func(t *testing.T) {
		saved := e.p.Sandbox
		e.p.Sandbox = broken
		defer func() { e.p.Sandbox = saved }()
		job := e.job(t, "setup-install", map[string]string{"index.html": "hi"})
		job.Project.InstallCommand, job.Project.OutputDirectory = "true", "."
		check(t, job, "Install could not start: the platform could not set up its sandbox (its network did not start); this is the platform's fault, not your project's, and deploying again is safe")
	})
}
