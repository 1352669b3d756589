package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry/internal/api"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/config"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/notify"
	"github.com/gantryhq/gantry/internal/previewaccess"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/tlsedge"
)

// serve wires the store, the services and the HTTP server (wire), listens
// (listen: HTTPS, or the edge's event loops), serves until ctx is done,
// then stops accepting connections and waits up to shutdownTimeout for
// requests in flight.
func (m *Main) serve(ctx context.Context, cfg *config.Config, logger *slog.Logger) error {
	logger.Info("gantry starting", "version", version, "public_url", cfg.PublicURL.String(),
		"live_domain", cfg.LiveDomain, "live_url_example", cfg.LiveURL("example"), "data_dir", cfg.DataDir,
		"node", cfg.NodeID, "replica", cfg.Replica(), "roles", strings.Join(cfg.Roles, ","))
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

	p := &platform{}
	defer p.close()
	if err := m.wire(ctx, cfg, db, logger, p); err != nil {
		return err
	}

	// No ReadTimeout or WriteTimeout: they would cut off log streams and
	// apps' long answers. Bodies have deadlines of their own (the API's
	// BodyTimeout, the edge's UploadTimeout).
	httpServer := &http.Server{
		Handler:           p.srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    api.ReadHeaderBytes, // ServeHTTP refuses heads over api.MaxHeaderBytes
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// Lets the edge cork connections while it sends large files.
		ConnContext: edge.ConnContext,
	}
	httpServer.RegisterOnShutdown(p.srv.Shutdown)

	ls, err := m.listen(ctx, cfg, logger, p, httpServer)
	if err != nil {
		return err
	}
	if m.Ready != nil {
		m.Ready(ls.addr)
	}

	select {
	case err := <-ls.served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if err := ls.shutdown(ctx, logger, httpServer); err != nil {
		return err
	}
	logger.Info("stopped")
	api.FlushLog(logger.Handler())
	return nil
}

// platform is what serve wires: the API server with its services, the live
// edge and the custom domains, and what to close (in reverse order) when
// serve returns.
type platform struct {
	srv           *api.Server
	liveEdge      *edge.Edge
	customDomains *domains.Service
	// tlsRefusals is the TLS layer once open: it forgets its refusals of
	// on-demand certificates whenever the routes change, so a domain
	// verified a moment after a refused handshake gets its certificate at
	// once.
	tlsRefusals atomic.Pointer[tlsedge.Manager]
	// certs is the certificate storage shared by replicas (PostgreSQL);
	// nil keeps certificates in the data folder.
	certs   *tlsedge.SharedStorage
	closers []func()
}

func (p *platform) onClose(f func()) { p.closers = append(p.closers, f) }

func (p *platform) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// wire builds the accounts, deployments, GitHub, projects, previews and
// custom domains services on db, and the API server and live edge in
// front of them, into p.
func (m *Main) wire(ctx context.Context, cfg *config.Config, db *store.DB, logger *slog.Logger, p *platform) error {
	passwords, err := auth.NewPasswords(cfg.PasswordCost)
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens(cfg.SecretKey, cfg.TokenTTL)
	if err != nil {
		return err
	}
	// Every event that concerns a user lands in their notifications.
	notifier := &notify.Service{Store: db.Notifications(), Logger: logger}
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

	replicas, err := newReplicaFeed(ctx, db, logger) // nil on SQLite
	if err != nil {
		return err
	}
	deploys, sites, hosts, err := m.openDeploys(ctx, cfg, db, logger, githubTokens.Open, notifier, replicas.logged())
	if err != nil {
		return err
	}
	p.onClose(func() { deploys.Close() })

	// Push to deploy from GitHub: each project made from a connected
	// repository gets a webhook with a secret of its own, sealed at rest.
	githubHooks, err := secret.New(cfg.SecretKey, secret.GitHubHooks)
	if err != nil {
		return err
	}
	hooks := &ghhook.Service{Store: db, GitHub: hosts.GitHub, Deployer: deploys, Secrets: githubHooks,
		Decrypt: githubTokens.Open, PublicURL: strings.TrimSuffix(cfg.PublicURL.String(), "/"), Logger: logger}
	p.onClose(hooks.Close)
	// Pull requests' commit statuses and comments follow their previews.
	deploys.Finished = hooks.DeploymentFinished

	srv := api.NewServer()
	p.srv = srv
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
	p.liveEdge = liveEdge
	liveEdge.ConfigureProxy(edge.ProxyConfig{TrustForwarded: cfg.TrustProxy, UploadTimeout: cfg.UploadTimeout})
	liveEdge.ConfigureWake(edge.WakeConfig{Wake: deploys.Wake, PageAfter: cfg.WakePageAfter, Timeout: cfg.AppStartTimeout})
	if deploys.SiteCache != nil {
		liveEdge.ConfigureFetch(deploys.SiteCache)
	}
	srv.LiveHandler = liveEdge
	srv.NoAPI, srv.NoEdge = !cfg.HasRole(config.RoleAPI), !cfg.HasRole(config.RoleEdge)
	if cfg.Replica() {
		if err := servePeer(cfg, logger, p); err != nil {
			return err
		}
	}
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
	domainRoutes := routesThen{liveEdge, func() {
		if m := p.tlsRefusals.Load(); m != nil {
			m.ForgetRefusals()
		}
	}}
	customDomains := &domains.Service{Store: db.Domains(), Routes: domainRoutes, Notify: notifier, LiveDomain: cfg.LiveDomain, PublicHost: cfg.PublicHost(),
		IPv4: cfg.PublicIPv4, IPv6: cfg.PublicIPv6, Resolver: cfg.DNSResolver, Logger: logger}
	shareLimits(db, accounts, srv, customDomains, previews, logger)
	if db.Dialect() == store.Postgres {
		p.certs = tlsedge.NewSharedStorage(db.TLSObjects())
	}
	if err := customDomains.Open(ctx); err != nil {
		return fmt.Errorf("load custom domains: %w", err)
	}
	p.customDomains = customDomains
	domainsCtx, stopDomains := context.WithCancel(ctx)
	p.onClose(stopDomains)
	go customDomains.Run(domainsCtx)
	srv.Domains = customDomains
	projects.Deleted = func(ctx context.Context) { customDomains.RefreshAfterChange(ctx) }
	replicas.follow(ctx, cfg.DatabaseURL, deploys, customDomains, previews, logger, p)
	srv.Accounts = accounts
	srv.Users = db
	srv.Notifications, srv.Dashboards = db.Notifications(), db
	srv.Gallery = db.Gallery()
	srv.Database = db
	srv.Unreachable = store.Unreachable
	srv.Version = version
	srv.PublicHost = cfg.PublicHost()
	srv.LiveDomain = cfg.LiveDomain
	srv.TrustProxy = cfg.TrustProxy
	srv.BodyTimeout = cfg.BodyTimeout
	srv.Logger = logger
	return nil
}

// shareLimits moves the rate limits that must hold across replicas into
// the database when it is PostgreSQL (store.RateBuckets, GCRA; SCALING.md
// §3): sign-in failures and the known addresses that skip them, password
// checks, sign-ups per address, deploy hooks per token, on-demand
// certificates per name, per account and in all, and the preview-access
// tickets already traded (each is traded once, on any replica). On SQLite, which one
// process owns, they stay in memory. The per-request limits of Discover,
// wake hints and repository lookups stay per process by design.
func shareLimits(db *store.DB, accounts *auth.Service, srv *api.Server, customDomains *domains.Service, previews *previewaccess.Service, logger *slog.Logger) {
	if db.Dialect() != store.Postgres {
		return
	}
	b := db.RateBuckets()
	accounts.LoginByIP.Share(b, "login-ip", logger)
	accounts.LoginByPair.Share(b, "login-pair", logger)
	accounts.LoginByAccount.Share(b, "login-account", logger)
	accounts.PasswordChecks.Share(b, "password-checks", logger)
	accounts.RegisterByIP.Share(b, "register-ip", logger)
	accounts.KnownAddresses.Share(b, "known-address", logger)
	srv.DeployHooks.Share(b, "deploy-hook", logger)
	customDomains.CertNames = auth.NewLimiter(domains.CertsPerName, domains.CertWindow)
	customDomains.CertAccounts = auth.NewLimiter(domains.CertsPerAccount, domains.CertWindow)
	customDomains.CertAll = auth.NewLimiter(domains.CertsTotal, domains.CertWindow)
	customDomains.CertNames.Share(b, "cert-name", logger)
	customDomains.CertAccounts.Share(b, "cert-account", logger)
	customDomains.CertAll.Share(b, "cert-all", logger)
	previews.Redeemed.Share(b, "preview-ticket", logger)
}

// listening is what serve listens with: its servers report on served when
// they stop (servers of them).
type listening struct {
	addr    net.Addr
	served  chan error
	servers int
	loop    *edge.Loop   // the edge's event loops, when they serve
	plain   *http.Server // plain HTTP beside HTTPS
}

// listen opens cfg.Addr and starts serving on it: with HTTPS (listenTLS),
// or through the edge's event loops, or with httpServer alone
// (GANTRY_EDGE_LOOPS=off).
func (m *Main) listen(ctx context.Context, cfg *config.Config, logger *slog.Logger, p *platform, httpServer *http.Server) (*listening, error) {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ls := &listening{addr: ln.Addr(), served: make(chan error, 2), servers: 1}
	if cfg.TLSOn() {
		if err := m.listenTLS(ctx, cfg, logger, p, httpServer, ln, ls); err != nil {
			ln.Close()
			return nil, err
		}
		return ls, nil
	}
	// The edge's event loops take the listener: they answer the common
	// requests of live sites themselves and hand every other connection to
	// httpServer (see edge.Loop). With GANTRY_EDGE_LOOPS=off, httpServer
	// (with the edge's reverse proxy) serves the listener alone: the
	// reference the loops are tested against, and the remedy should they
	// misbehave.
	srv, liveEdge := p.srv, p.liveEdge
	loopOpts := edge.LoopOptions{
		// Previews go to net/http, where the edge checks who may see them.
		IsLive:            func(h string) bool { return !srv.NoEdge && srv.IsLiveHost(h) && !liveEdge.GuardsPreview(h) },
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
		if ls.loop, err = liveEdge.NewLoop(ln, loopOpts); err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
		ls.loop.Serve()
		go func() { ls.served <- httpServer.Serve(ls.loop.Listener()) }()
	} else {
		logger.Info("edge loops off (GANTRY_EDGE_LOOPS=off): net/http serves every request")
		go func() { ls.served <- httpServer.Serve(ln) }()
	}
	logger.Info("listening", "addr", ls.addr.String(), "url", cfg.PublicURL.String(), "edge_loops", cfg.EdgeLoops)
	return ls, nil
}

// listenTLS serves HTTPS: net/http through crypto/tls serves every request
// (the event loops speak plain HTTP only); plain HTTP on ln answers ACME
// challenges and redirects everything else to HTTPS. Custom domains get
// certificates on demand only when the domains service allows them (a
// verified domain; a new order also needs a live project and spends the
// budgets per name, per account and in all), and their status follows
// what the CA answered.
func (m *Main) listenTLS(ctx context.Context, cfg *config.Config, logger *slog.Logger, p *platform, httpServer *http.Server, ln net.Listener, ls *listening) error {
	customDomains := p.customDomains
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
	tlsMgr, err := openTLS(ctx, cfg, logger, ls.addr.(*net.TCPAddr).Port, p.certs, customDomains.AllowCertificate,
		customDomains.AllowIssue, certIssued)
	if err != nil {
		return err
	}
	p.onClose(tlsMgr.Stop)
	p.tlsRefusals.Store(tlsMgr)
	httpsLn, err := net.Listen("tcp", cfg.HTTPSAddr)
	if err != nil {
		return fmt.Errorf("listen (HTTPS): %w", err)
	}
	httpServer.Handler = tlsedge.WithHSTS(cfg.PublicHost(), p.srv)
	httpServer.TLSConfig = tlsMgr.TLSConfig()
	httpServer.ErrorLog = httpsErrorLog(logger)
	ls.plain = &http.Server{
		Handler:           tlsMgr.Handler(),
		ReadHeaderTimeout: httpServer.ReadHeaderTimeout,
		IdleTimeout:       httpServer.IdleTimeout,
		MaxHeaderBytes:    api.MaxHeaderBytes,
		ErrorLog:          httpServer.ErrorLog,
	}
	ls.servers = 2
	go func() { ls.served <- httpServer.Serve(tls.NewListener(httpsLn, httpServer.TLSConfig)) }()
	go func() { ls.served <- ls.plain.Serve(ln) }()
	logger.Info("listening", "addr", ls.addr.String(), "https_addr", httpsLn.Addr().String(),
		"url", cfg.PublicURL.String(), "tls", cfg.TLS)
	if m.ReadyHTTPS != nil {
		m.ReadyHTTPS(httpsLn.Addr())
	}
	return nil
}

// shutdown stops the servers: they finish the requests in flight, for up
// to shutdownTimeout.
func (ls *listening) shutdown(ctx context.Context, logger *slog.Logger, httpServer *http.Server) error {
	logger.Info("shutting down: finishing requests in flight", "timeout", shutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if ls.loop != nil {
		if err := ls.loop.Shutdown(shutdownCtx); err != nil {
			logger.Warn("live-site answers still being sent at the shutdown timeout were cut off")
		}
	}
	if ls.plain != nil {
		ls.plain.Shutdown(shutdownCtx)
	}
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		logger.Warn("requests still running at the shutdown timeout were cut off", "err", err)
		httpServer.Close()
	}
	for range ls.servers {
		if err := <-ls.served; !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	return nil
}
