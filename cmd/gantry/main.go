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
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/config"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/events"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/notify"
	"github.com/gantryhq/gantry/internal/previewaccess"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/runtime"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/tlsedge"
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

// serve wires the store, the accounts service and the HTTP server, serves
// until ctx is done, then stops accepting connections and waits up to
// shutdownTimeout for requests in flight.
func (m *Main) serve(ctx context.Context, cfg *config.Config, logger *slog.Logger) error {
	logger.Info("gantry starting", "version", version, "public_url", cfg.PublicURL.String(),
		"live_domain", cfg.LiveDomain, "live_url_example", cfg.LiveURL("example"), "data_dir", cfg.DataDir)
	if cfg.Sandbox == config.SandboxNone {
		logger.Warn("SANDBOX DISABLED (--sandbox=none): user code runs unconfined with this process's rights. " +
			"Use this only for development on a machine you do not mind losing.")
	}
	if cfg.GitHubClientID == "" {
		logger.Info("GitHub connect is not configured (set GANTRY_GITHUB_CLIENT_ID and GANTRY_GITHUB_CLIENT_SECRET)")
	}

	if cfg.TLSOn() {
		if err := checkTLS(ctx, cfg); err != nil {
			return err
		}
	}
	db, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()

	passwords, err := auth.NewPasswords(cfg.PasswordCost)
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens(cfg.SecretKey, cfg.TokenTTL)
	if err != nil {
		return err
	}
	// Every event that concerns a user lands in their notifications.
	notifier := &notify.Service{Store: db, Logger: logger}
	accounts := auth.NewService(db, passwords, tokens)
	accounts.Notify = notifier
	// GitHub access tokens are sealed at rest, and OAuth states in transit,
	// each under its own key derived from the secret key.
	githubTokens, err := secret.New(cfg.SecretKey, secret.GitHubTokens)
	if err != nil {
		return err
	}
	githubStates, err := secret.New(cfg.SecretKey, secret.GitHubStates)
	if err != nil {
		return err
	}

	deploys, sites, hosts, err := m.openDeploys(ctx, cfg, db, logger, githubTokens.Open, notifier)
	if err != nil {
		return err
	}
	defer deploys.Close()

	// Push to deploy from GitHub: each project made from a connected
	// repository gets a webhook with a secret of its own, sealed at rest.
	githubHooks, err := secret.New(cfg.SecretKey, secret.GitHubHooks)
	if err != nil {
		return err
	}
	hooks := &ghhook.Service{Store: db, GitHub: hosts.GitHub, Deployer: deploys, Secrets: githubHooks,
		Decrypt: githubTokens.Open, PublicURL: strings.TrimSuffix(cfg.PublicURL.String(), "/"), Logger: logger}
	defer hooks.Close()
	// Pull requests' commit statuses and comments follow their previews.
	deploys.Finished = hooks.DeploymentFinished

	srv := api.NewServer()
	srv.Deploys = deploys
	deployHooks, err := secret.New(cfg.SecretKey, secret.DeployHooks)
	if err != nil {
		return err
	}
	projects := &project.Service{Store: db, Repos: hosts, Deployments: deploys, Notify: notifier,
		Decrypt: githubTokens.Open, Secrets: deploys.Secrets, Webhooks: hooks, Hooks: deployHooks, PublicURL: cfg.PublicURL.String()}
	srv.Projects = projects
	srv.Webhooks = hooks
	srv.GitHub = &ghlink.Accounts{Users: db, Host: hosts, Tokens: githubTokens, States: githubStates,
		Notify: notifier, Logger: logger}
	liveEdge := edge.New(cfg.LiveDomain, sites, cfg.PublicURL.String())
	liveEdge.ConfigureProxy(edge.ProxyConfig{TrustForwarded: cfg.TrustProxy, UploadTimeout: cfg.UploadTimeout})
	liveEdge.ConfigureWake(edge.WakeConfig{Wake: deploys.Wake, PageAfter: cfg.WakePageAfter, Timeout: cfg.AppStartTimeout})
	srv.LiveHandler = liveEdge
	// Previews of private repositories are their owner's (issue 24, point
	// 20): the edge asks for a cookie the platform hands over.
	previews, err := previewaccess.New(cfg.SecretKey, db, cfg.PublicURL.String(), cfg.LiveURL, logger)
	if err != nil {
		return err
	}
	if err := previews.Refresh(ctx); err != nil {
		return fmt.Errorf("load preview labels: %w", err)
	}
	liveEdge.ConfigurePreviews(previews)
	srv.PreviewAccess = previews
	// Custom domains: the edge answers for them (verified ones show their
	// project's site), the API adds and checks them, and a background loop
	// verifies their DNS records. customDomains.AllowCertificate is the
	// decision function of on-demand TLS.
	// The TLS layer, once open, forgets its refusals of on-demand
	// certificates whenever the routes change, so a domain verified a
	// moment after a refused handshake gets its certificate at once.
	var tlsRefusals atomic.Pointer[tlsedge.Manager]
	domainRoutes := routesThen{liveEdge, func() {
		if m := tlsRefusals.Load(); m != nil {
			m.ForgetRefusals()
		}
	}}
	customDomains := &domains.Service{Store: db, Routes: domainRoutes, Notify: notifier, LiveDomain: cfg.LiveDomain, PublicHost: cfg.PublicHost(),
		IPv4: cfg.PublicIPv4, IPv6: cfg.PublicIPv6, Resolver: cfg.DNSResolver, Logger: logger}
	if err := customDomains.Open(ctx); err != nil {
		return fmt.Errorf("load custom domains: %w", err)
	}
	domainsCtx, stopDomains := context.WithCancel(ctx)
	defer stopDomains()
	go customDomains.Run(domainsCtx)
	srv.Domains = customDomains
	projects.Deleted = func(ctx context.Context) { customDomains.RefreshAfterChange(ctx) }
	srv.Accounts = accounts
	srv.Users = db
	srv.Notifications, srv.Dashboards = db, db
	srv.Gallery = db
	srv.Database = db
	srv.Version = version
	srv.PublicHost = cfg.PublicHost()
	srv.LiveDomain = cfg.LiveDomain
	srv.TrustProxy = cfg.TrustProxy
	srv.BodyTimeout = cfg.BodyTimeout
	srv.Logger = logger

	// No ReadTimeout or WriteTimeout: they would cut off log streams and
	// apps' long answers. Bodies have deadlines of their own (the API's
	// BodyTimeout, the edge's UploadTimeout).
	httpServer := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    api.ReadHeaderBytes, // ServeHTTP refuses heads over api.MaxHeaderBytes
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// Lets the edge cork connections while it sends large files.
		ConnContext: edge.ConnContext,
	}
	httpServer.RegisterOnShutdown(srv.Shutdown)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	addr := ln.Addr()
	served := make(chan error, 2)
	servers := 1
	var loop *edge.Loop
	var plain *http.Server
	if cfg.TLSOn() {
		// HTTPS: net/http through crypto/tls serves every request (the
		// event loops speak plain HTTP only); plain HTTP answers ACME
		// challenges and redirects everything else to HTTPS.
		// Custom domains get certificates on demand only when the domains
		// service allows them (a verified domain; a new order also needs a
		// live project and spends the budgets per name, per account and in
		// all), and their status follows what the CA answered.
		certIssued := func(ev tlsedge.Event) {
			if ev.Err != nil {
				return
			}
			go func() { // certmagic's goroutine must not wait on the store
				if err := customDomains.CertificateIssued(context.WithoutCancel(ctx), ev.Name); err != nil {
					logger.Warn("custom domain: recording its certificate failed", "domain", ev.Name, "err", err)
				}
			}()
		}
		tlsMgr, err := openTLS(ctx, cfg, logger, addr.(*net.TCPAddr).Port, customDomains.AllowCertificate,
			customDomains.AllowIssue, certIssued)
		if err != nil {
			ln.Close()
			return err
		}
		defer tlsMgr.Stop()
		tlsRefusals.Store(tlsMgr)
		httpsLn, err := net.Listen("tcp", cfg.HTTPSAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen (HTTPS): %w", err)
		}
		httpServer.Handler = tlsedge.WithHSTS(cfg.PublicHost(), srv)
		httpServer.TLSConfig = tlsMgr.TLSConfig()
		httpServer.ErrorLog = httpsErrorLog(logger)
		plain = &http.Server{
			Handler:           tlsMgr.Handler(),
			ReadHeaderTimeout: httpServer.ReadHeaderTimeout,
			IdleTimeout:       httpServer.IdleTimeout,
			MaxHeaderBytes:    api.MaxHeaderBytes,
			ErrorLog:          httpServer.ErrorLog,
		}
		servers = 2
		go func() { served <- httpServer.Serve(tls.NewListener(httpsLn, httpServer.TLSConfig)) }()
		go func() { served <- plain.Serve(ln) }()
		logger.Info("listening", "addr", addr.String(), "https_addr", httpsLn.Addr().String(),
			"url", cfg.PublicURL.String(), "tls", cfg.TLS)
		if m.ReadyHTTPS != nil {
			m.ReadyHTTPS(httpsLn.Addr())
		}
	} else {
		// The edge's event loops take the listener: they answer the common
		// requests of live sites themselves and hand every other connection to
		// httpServer (see edge.Loop). With GANTRY_EDGE_LOOPS=off, httpServer
		// (with the edge's reverse proxy) serves the listener alone: the
		// reference the loops are tested against, and the remedy should they
		// misbehave.
		loopOpts := edge.LoopOptions{
			// Previews go to net/http, where the edge checks who may see them.
			IsLive:            func(h string) bool { return srv.IsLiveHost(h) && !liveEdge.GuardsPreview(h) },
			Log:               api.WriteRequestLine,
			NewLogHandler:     func(w io.Writer) slog.Handler { return newLogger(w, cfg).Handler() },
			LogOutput:         api.RequestLogWriter(logger.Handler(), m.Stderr), // the loops never wait for the disk
			Errorf:            func(format string, args ...any) { logger.Error(fmt.Sprintf(format, args...)) },
			ClientIP:          srv.ClientIP,
			ReadHeaderTimeout: httpServer.ReadHeaderTimeout,
			IdleTimeout:       httpServer.IdleTimeout,
			MaxHeaderBytes:    api.MaxHeaderBytes,
		}
		if cfg.EdgeLoops {
			loopOpts.Loops = edge.ReserveLoopProcs()
			if loop, err = liveEdge.NewLoop(ln, loopOpts); err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			loop.Serve()
			go func() { served <- httpServer.Serve(loop.Listener()) }()
		} else {
			logger.Info("edge loops off (GANTRY_EDGE_LOOPS=off): net/http serves every request")
			go func() { served <- httpServer.Serve(ln) }()
		}
		logger.Info("listening", "addr", addr.String(), "url", cfg.PublicURL.String(), "edge_loops", cfg.EdgeLoops)
	}
	if m.Ready != nil {
		m.Ready(addr)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight", "timeout", shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if loop != nil {
		if err := loop.Shutdown(shutdownCtx); err != nil {
			logger.Warn("live-site answers still being sent at the shutdown timeout were cut off")
		}
	}
	if plain != nil {
		plain.Shutdown(shutdownCtx)
	}
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		logger.Warn("requests still running at the shutdown timeout were cut off", "err", err)
		httpServer.Close()
	}
	for range servers {
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	logger.Info("stopped")
	api.FlushLog(logger.Handler())
	return nil
}

// openDeploys wires the build pipeline (git host, sandbox), the edge's site
// table and the deployment service, recovers from the last run and starts
// the build workers. Without a usable sandbox it refuses to start. decrypt
// opens users' sealed GitHub tokens for lookups and clones; notifier tells
// owners about their projects and deployments.
func (m *Main) openDeploys(ctx context.Context, cfg *config.Config, db *store.DB, logger *slog.Logger,
	decrypt func(string) (string, error), notifier gantry.Notifier) (*deploy.Service, *edge.Table, *githost.Service, error) {
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
	svc := &deploy.Service{
		Store:         db,
		Builder:       &build.Pipeline{Sandbox: sb, Cloner: hosts, Limits: sandbox.Limits{CPUs: cfg.BuildCPUs}},
		Decrypt:       decrypt,
		Notify:        notifier,
		Secrets:       envSecrets,
		Heads:         hosts,
		Branches:      hosts.Git,
		WatchInterval: cfg.WatchInterval,
		Hub:           events.NewHub(),
		Sites:         deploy.EdgeSites{Table: table},
		DataDir:       cfg.DataDir,
		NpmRegistry:   urlString(cfg.NpmRegistry),
		PipIndexURL:   urlString(cfg.PipIndexURL),
		LiveURL:       cfg.LiveURL,
		Concurrency:   cfg.BuildConcurrency,
		MaxPending:    cfg.MaxPendingBuilds,
		BuildTimeout:  cfg.BuildTimeout,
		BuildDisk:     sandbox.Disk{Bytes: cfg.BuildDisk, Inodes: cfg.BuildInodes},
		AppDisk:       cfg.AppDisk,
		SandboxUIDs:   sandbox.UIDRange{First: cfg.SandboxUIDFirst, Count: cfg.SandboxUIDCount},
		Apps: &runtime.Supervisor{Sandbox: sb, Memory: cfg.AppMemory, Pids: cfg.AppPids, CPUs: cfg.AppCPUs,
			StartTimeout: cfg.AppStartTimeout, Logger: logger},
		AppIdle:     cfg.AppIdle,
		PreviewIdle: cfg.PreviewIdle,
		Logger:      logger,
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
