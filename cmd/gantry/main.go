// Command gantry is the whole platform in one binary.
//
//	gantry serve [flags]    serve the UI, the API and the live sites
//	gantry migrate [flags]  apply database migrations and exit
//	gantry version          print the version
//
// Every flag has an environment variable: --data-dir is GANTRY_DATA_DIR.
// `gantry serve -h` lists them; docs/operations.md explains them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/config"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store"
	"golang.org/x/sys/unix"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// shutdownTimeout is how long serve waits for requests in flight after
// SIGINT or SIGTERM before closing their connections.
const shutdownTimeout = 15 * time.Second

func main() {
	// Descriptors this process inherited without close-on-exec would reach
	// every sandboxed command it starts: mark them all (3 and up) so.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the process at once
	}()
	m := &Main{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(m.Run(ctx, os.Args[1:]))
}

// Main runs one gantry command. Tests create it with their own outputs and
// environment.
type Main struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	// Ready, when set, is called with the listening address once serve
	// accepts connections.
	Ready func(addr net.Addr)
	// ReadyHTTPS, when set and TLS is on, is called with the HTTPS
	// listening address once serve accepts connections.
	ReadyHTTPS func(addr net.Addr)
}

// Run runs the command in args and returns the exit status: 0 on success,
// 1 on a failure at run time, 2 on a usage or configuration error. serve
// runs until ctx is cancelled, then shuts down gracefully.
func (m *Main) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		m.usage()
		return 2
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintln(m.Stdout, "gantry", version)
		return 0
	case "serve", "migrate":
	case "help", "-h", "--help":
		m.usage()
		return 0
	default:
		fmt.Fprintf(m.Stderr, "gantry: unknown command %q\n", args[0])
		m.usage()
		return 2
	}

	cfg, err := config.Load(args[1:], m.Getenv, m.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		fmt.Fprintln(m.Stderr, "gantry:", err)
		return 2
	}
	logger := newLogger(m.Stderr, cfg)
	if err := cfg.Prepare(); err != nil {
		logger.Error("cannot prepare the data folder", "err", err)
		return 1
	}
	if args[0] == "migrate" {
		err = m.migrate(ctx, cfg, logger)
	} else {
		err = m.serve(ctx, cfg, logger)
	}
	if err != nil {
		logger.Error("gantry "+args[0]+" failed", "err", err)
		return 1
	}
	return 0
}

func (m *Main) usage() {
	fmt.Fprint(m.Stderr, `usage:
  gantry serve [flags]    serve the UI, the API and the live sites
  gantry migrate [flags]  apply database migrations and exit
  gantry version          print the version

flags (each also read from the environment variable in brackets):
`)
	config.Usage(m.Stderr)
}

// newLogger returns the structured logger the configuration asks for.
func newLogger(w io.Writer, cfg *config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(api.NewTextHandler(w, opts))
}

// openStore opens the database and applies pending migrations.
func openStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*store.DB, error) {
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	logger.Info("database ready", "database", db.Dialect(), "location", redact(cfg.DatabaseURL), "schema_version", v)
	return db, nil
}

// migrate applies pending migrations and exits.
func (m *Main) migrate(ctx context.Context, cfg *config.Config, logger *slog.Logger) error {
	db, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	return db.Close()
}

// openDeploys wires the build pipeline (git host, sandbox), the edge's site
// table and the deployment service, recovers from the last run and starts
// the build workers. Without a usable sandbox it refuses to start. decrypt
// opens users' sealed GitHub tokens for lookups and clones; notifier tells
// owners about their projects and deployments; logged, when set (PostgreSQL),
// hears of every log entry stored, for other replicas' followers.
func (m *Main) openDeploys(ctx context.Context, cfg *config.Config, db *store.DB, logger *slog.Logger,
	decrypt func(string) (string, error), notifier gantry.Notifier, logged func(string, int64)) (*deploy.Service, *edge.Table, *githost.Service, error) {
	// Builds reach the package registries the operator named although they
	// sit on private addresses (a campus mirror).
	allow := append(slices.Clone(cfg.SandboxAllow), registryPrefixes(ctx, logger, cfg.NpmRegistry, cfg.PipIndexURL)...)
	sb := sandbox.New(sandbox.Config{Mode: cfg.Sandbox, AllowNets: allow})
	if err := sb.Available(); err != nil {
		return nil, nil, nil, err
	}
	if len(allow) > 0 && cfg.Sandbox == config.SandboxBwrap {
		logger.Info("sandboxed builds and apps may also reach", "allow", fmt.Sprint(allow))
	}
	if err := sb.Sweep(); err != nil {
		logger.Warn("could not remove cgroups left by an earlier run", "err", err)
	}
	if cfg.Sandbox == config.SandboxBwrap {
		if err := deploy.PrepareDataDir(cfg.DataDir); err != nil {
			return nil, nil, nil, err
		}
	}
	hosts, err := githost.New(githost.Config{
		AllowHosts:   cfg.GitAllowHosts,
		GitHubAPIURL: cfg.GitHubAPIURL.String(),
		GitHubWebURL: cfg.GitHubWebURL.String(),
		ClientID:     cfg.GitHubClientID,
		ClientSecret: cfg.GitHubSecret,
		RedirectURL:  cfg.PublicURL.JoinPath("/api/auth/github/callback").String(),
		CloneTimeout: cfg.BuildTimeout,
		Detect:       build.Suggest,
		Sandbox:      sb,
		DataDir:      cfg.DataDir,
		Logger:       logger,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := hosts.Git.SweepLookups(); err != nil {
		logger.Warn("could not remove lookup folders left by an earlier run", "err", err)
	}
	envSecrets, err := secret.New(cfg.SecretKey, secret.EnvSecrets)
	if err != nil {
		return nil, nil, nil, err
	}
	table := edge.NewTable()
	remote, siteCache, err := openSiteStore(ctx, cfg, logger, table)
	if err != nil {
		return nil, nil, nil, err
	}
	svc := deploy.New(deploy.Config{
		SharedConfig: deploy.SharedConfig{
			Store:       db,
			Hub:         events.NewHub(),
			Sites:       deploy.EdgeSites{Table: table, Cache: siteCache},
			Notify:      notifier,
			Decrypt:     decrypt,
			Secrets:     envSecrets,
			SandboxUIDs: sandbox.UIDRange{First: cfg.SandboxUIDFirst, Count: cfg.SandboxUIDCount},
			DataDir:     cfg.DataDir,
			LiveURL:     cfg.LiveURL,
			NodeID:      cfg.NodeID,
			Logger:      logger,
			Logged:      logged,
		},
		BuildsConfig: deploy.BuildsConfig{
			Builder:      &build.Pipeline{Sandbox: sb, Cloner: hosts, Limits: sandbox.Limits{CPUs: cfg.BuildCPUs}},
			Concurrency:  cfg.BuildConcurrency,
			NoBuilds:     !cfg.HasRole(config.RoleBuilder),
			Lease:        cfg.Lease,
			MaxPending:   cfg.MaxPendingBuilds,
			BuildTimeout: cfg.BuildTimeout,
			BuildDisk:    sandbox.Disk{Bytes: cfg.BuildDisk, Inodes: cfg.BuildInodes},
			AppDisk:      cfg.AppDisk,
			NpmRegistry:  urlString(cfg.NpmRegistry),
			PipIndexURL:  urlString(cfg.PipIndexURL),
		},
		AppsConfig: deploy.AppsConfig{
			Apps: &runtime.Supervisor{Sandbox: sb, Memory: cfg.AppMemory, Pids: cfg.AppPids, CPUs: cfg.AppCPUs,
				StartTimeout: cfg.AppStartTimeout, Logger: logger},
			AppIdle:     cfg.AppIdle,
			PreviewIdle: cfg.PreviewIdle,
		},
		TriggersConfig: deploy.TriggersConfig{Heads: hosts, Branches: hosts.Git, WatchInterval: cfg.WatchInterval},
		StorageConfig: deploy.StorageConfig{Remote: remote, SiteCache: siteCache, Caches: cacheSync(remote),
			BuildCacheAccount: cfg.BuildCacheAccount, BuildCacheTotal: cfg.BuildCacheTotal},
	})
	if cfg.Replica() {
		// Each server app has one home replica; the others forward to it
		// (peer.go).
		svc.Placements, svc.PeerAddr, svc.PlacementLease = db.Placements(), cfg.PeerAddr, cfg.Lease
	}
	if err := svc.Open(ctx); err != nil {
		return nil, nil, nil, err
	}
	return svc, table, hosts, nil
}

// registryPrefixes resolves the hosts of the package registries builds
// use into single-address prefixes for the sandbox's allow list (a public
// address is reachable anyway; a private one, a campus mirror, needs it).
// A name that does not resolve is logged and left out. A registry on the
// host's loopback (localhost:4873) needs none: builds reach its one port
// through pasta (build.LoopbackPort).
func registryPrefixes(ctx context.Context, logger *slog.Logger, urls ...*url.URL) []netip.Prefix {
	var out []netip.Prefix
	for _, u := range urls {
		if u == nil {
			continue
		}
		if _, ok := build.LoopbackPort(u.String()); ok {
			continue
		}
		host := u.Hostname()
		if a, err := netip.ParseAddr(host); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil {
			logger.Warn("package registry does not resolve: builds may not reach it", "host", host, "err", err)
			continue
		}
		for _, a := range addrs {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out
}

func urlString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}

// redact hides the password of a database URL for logs.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}

// routesThen hands the routes of custom domains to a router, then calls
// after.
type routesThen struct {
	domains.Router
	after func()
}

func (r routesThen) SetDomains(routes []gantry.DomainRoute) {
	r.Router.SetDomains(routes)
	r.after()
}
