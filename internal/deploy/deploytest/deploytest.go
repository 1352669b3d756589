// Package deploytest builds the deployment stack for tests: the deploy
// service, the project service beside it, the secret boxes, the events hub,
// the edge's site table and a data folder, wired as cmd/gantry wires them.
package deploytest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store"
)

// DefaultKey is the secret key of the stack's boxes when Options.Key is
// empty.
const DefaultKey = "0123456789abcdef0123456789abcdef-deploytest"

// Options says what the stack is made of. The zero value (with a DB) is a
// service that never builds and whose workers do not run.
type Options struct {
	// DB is the database of both services.
	DB *store.DB
	// Sandbox runs builds and, with Apps, server apps. With a sandbox the
	// data folder is one the sandbox's users can reach (t.TempDir's parents
	// are private); without one it is t.TempDir().
	Sandbox *sandbox.Sandbox
	// Repos looks repositories up for the project service and, with a
	// Sandbox, clones for the build pipeline.
	Repos *githost.Service
	// Builder replaces the build pipeline (by default one over Sandbox and
	// Repos, or none without a Sandbox).
	Builder deploy.Builder
	// Apps gives the deploy service a supervisor of server apps in Sandbox,
	// with short start timeout, stop grace and back-offs.
	Apps bool
	// Workers opens the deploy service (its build workers start) and closes
	// it at the test's end.
	Workers bool
	// UIDs are the sandbox uids of accounts (none by default).
	UIDs sandbox.UIDRange
	// Poll is how often idle workers look at the queue (50 ms by default).
	Poll time.Duration
	// Notify receives both services' notifications (none by default).
	Notify gantry.Notifier
	// Key is the secret key of the boxes (DefaultKey by default).
	Key string
}

// Stack is the deployment stack New builds. Tests that need an unusual
// setting set it on Deploys or Projects before using them.
type Stack struct {
	Deploys  *deploy.Service
	Projects *project.Service // its Deployments is Deploys
	// Tokens seals GitHub tokens (secret.GitHubTokens); both services open
	// them with it. Secrets seals environment secrets (secret.EnvSecrets).
	Tokens, Secrets *secret.Box
	// Hooks seals deploy hook tokens (secret.DeployHooks).
	Hooks   *secret.Box
	Hub     *events.Hub
	Table   *edge.Table // the deploy service's sites
	DataDir string
}

// New builds a stack as opts says and registers its cleanup with tb.
func New(tb testing.TB, opts Options) *Stack {
	tb.Helper()
	key := opts.Key
	if key == "" {
		key = DefaultKey
	}
	s := &Stack{Hub: events.NewHub(), Table: edge.NewTable()}
	var err error
	if s.Tokens, err = secret.New(key, secret.GitHubTokens); err != nil {
		tb.Fatal(err)
	}
	if s.Secrets, err = secret.New(key, secret.EnvSecrets); err != nil {
		tb.Fatal(err)
	}
	if s.Hooks, err = secret.New(key, secret.DeployHooks); err != nil {
		tb.Fatal(err)
	}
	if opts.Sandbox != nil {
		data, err := os.MkdirTemp("", "gantry-deploytest-")
		if err != nil {
			tb.Fatal(err)
		}
		os.Chmod(data, 0o755)
		tb.Cleanup(func() { _ = sandbox.RemoveTree(data) })
		s.DataDir = data
	} else {
		s.DataDir = tb.TempDir()
	}
	poll := opts.Poll
	if poll == 0 {
		poll = 50 * time.Millisecond
	}
	builder := opts.Builder
	if builder == nil && opts.Sandbox != nil {
		builder = &build.Pipeline{Sandbox: opts.Sandbox, Cloner: opts.Repos}
	}
	c := deploy.Config{
		SharedConfig: deploy.SharedConfig{
			Store:       opts.DB,
			Hub:         s.Hub,
			Sites:       deploy.EdgeSites{Table: s.Table},
			Notify:      opts.Notify,
			Decrypt:     s.Tokens.Open,
			Secrets:     s.Secrets,
			SandboxUIDs: opts.UIDs,
			DataDir:     s.DataDir,
			LiveURL:     func(sub string) string { return "http://" + sub + ".localhost:8080" },
		},
		BuildsConfig: deploy.BuildsConfig{Builder: builder, Poll: poll},
	}
	if opts.Apps {
		c.Apps = &runtime.Supervisor{Sandbox: opts.Sandbox, StartTimeout: 30 * time.Second,
			StopGrace: 2 * time.Second, BackoffMin: 100 * time.Millisecond, BackoffMax: time.Second}
	}
	if opts.Repos != nil {
		c.Heads, c.Branches = opts.Repos, opts.Repos.Git
	}
	s.Deploys = deploy.New(c)
	s.Projects = &project.Service{Store: opts.DB, Deployments: s.Deploys, Notify: opts.Notify,
		Decrypt: s.Tokens.Open, Secrets: s.Secrets, Hooks: s.Hooks, PublicURL: "http://localhost:8080"}
	if opts.Repos != nil {
		s.Projects.Repos = opts.Repos
	}
	if opts.Workers {
		if err := s.Deploys.Open(context.Background()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Deploys.Close() })
	}
	return s
}

// Restarted returns a deploy service configured as old, as the platform
// makes one when it starts again, publishing its sites to table. It is not
// open yet.
func Restarted(old *deploy.Service, table *edge.Table) *deploy.Service {
	c := old.Config()
	c.Sites = deploy.EdgeSites{Table: table}
	return deploy.New(c)
}
