// Package tlsedge serves Gantry over HTTPS: it obtains and renews
// certificates through ACME (github.com/caddyserver/certmagic) or serves an
// operator's certificate files, and provides the crypto/tls configuration
// of the HTTPS listener and the handler of the plain HTTP one (ACME HTTP-01
// challenges, then a redirect to HTTPS).
//
// With ACME, three kinds of names get certificates:
//   - the live domain's wildcard, *.<live-domain>: one certificate for every
//     site, by the DNS-01 challenge through the configured DNS provider, so
//     thousands of sites never meet the CA's per-domain rate limits;
//   - the public host, by the HTTP-01 challenge on port 80 (unless the
//     wildcard already covers it);
//   - any other name (custom domains) on demand, at its first TLS handshake,
//     by HTTP-01 — only when Config.Allow accepts the name, so nobody can
//     make Gantry request certificates for names it does not serve. A nil
//     Allow refuses every such name. Only a new certificate's order is
//     rate limited (Config.AllowIssue and OnDemandEvery/Burst): loading a
//     stored certificate (after a restart) and renewing one are not, so
//     neither a restart with many custom domains nor a tenant whose orders
//     fail can leave other names without their certificates.
//
// Certificates, keys and the ACME account live in Config.Storage (a folder
// of the data folder), folders 0700 and files 0600.
package tlsedge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3/acme"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/time/rate"

	"github.com/gantryhq/gantry/internal/acmedns"
)

// Modes.
const (
	ModeACME  = "acme"
	ModeFiles = "files"
)

// Defaults.
const (
	DefaultReloadInterval = 10 * time.Second
	DefaultOnDemandEvery  = 3 * time.Second // one on-demand issuance per this, on average
	DefaultOnDemandBurst  = 20
	HSTS                  = "max-age=31536000"
)

// Config configures a Manager.
type Config struct {
	Mode       string // ModeACME or ModeFiles
	LiveDomain string // sites are <sub>.<live-domain>
	PublicHost string // host of the UI and API
	HTTPSPort  string // port plain HTTP redirects to; "" or "443" for none in the URL

	// ACME.
	Storage string // folder of certificates, keys and the account, e.g. <data>/certs
	// Shared, when set, holds certificates, keys, the account and
	// certmagic's locks instead of Storage's folder: every replica on it
	// serves the same certificates, answers any HTTP-01 challenge, and
	// one orders each certificate (cmd/gantry sets it on PostgreSQL).
	Shared    *SharedStorage
	CA        string         // ACME directory URL
	Email     string         // contact address, optional
	CARoots   *x509.CertPool // roots trusted for the CA's API; nil: the system's
	DNS       acmedns.Provider
	Resolvers []string // DNS servers (host:port) for DNS-01 zone lookups and propagation checks; default the system's
	// HTTPPort is the port HTTP-01 challenges arrive on (the plain HTTP
	// listener, which must route them to Handler); default 80.
	HTTPPort int
	// Allow decides whether a name that is neither the public host nor
	// under the live domain may have a certificate on demand: nil error
	// means yes. It is asked before a stored certificate is loaded (the
	// first handshake after a restart), before each renewal (a refusal
	// drops the certificate) and before a new one is ordered; it must not
	// spend a rate limit. Nil refuses every name. A refusal stands for
	// 10 s (the same name is not asked about again meanwhile).
	Allow func(ctx context.Context, name string) error
	// AllowIssue, when set, is asked right before a new certificate (not
	// a renewal) is ordered from the CA for an on-demand name, after
	// Allow accepted it: this is where budgets are spent. A refusal ends
	// that attempt (no retry); the next handshake may try again.
	AllowIssue func(ctx context.Context, name string) error
	// OnDemandEvery and OnDemandBurst limit the orders of new on-demand
	// certificates (a token bucket): defaults DefaultOnDemandEvery and
	// DefaultOnDemandBurst.
	OnDemandEvery time.Duration
	OnDemandBurst int
	// RenewalWindowRatio is the fraction of a certificate's lifetime left
	// when it is renewed; default certmagic's (1/3).
	RenewalWindowRatio float64
	// RenewCheckInterval is how often certificates are checked for
	// renewal; default certmagic's (10 minutes).
	RenewCheckInterval time.Duration

	// Files.
	CertFile, KeyFile string
	ReloadInterval    time.Duration // how often the files are checked for changes; default DefaultReloadInterval

	// OnEvent, when set, is told of every certificate obtained or renewed
	// and every failed attempt (e.g. to record a custom domain's
	// "Certificate issued" or its error). It is called on certmagic's
	// goroutines and must return quickly.
	OnEvent func(Event)

	Logger *slog.Logger
	Debug  bool // certmagic's debug log on stderr
}

// Event is a certificate obtained (Err nil) or an attempt that failed.
type Event struct {
	Name    string // the name requested: "*.<live-domain>", the public host, a custom domain
	Renewal bool
	Err     error
}

// Manager provides the TLS configuration and the plain HTTP handler.
type Manager struct {
	cfg     Config
	logger  *slog.Logger
	cache   *certmagic.Cache
	dnsCfg  *certmagic.Config // the wildcard, by DNS-01
	pubCfg  *certmagic.Config // the public host, by HTTP-01
	httpCfg *certmagic.Config // on-demand names, by HTTP-01
	httpIss *certmagic.ACMEIssuer
	limiter *rate.Limiter
	issueMu sync.Mutex // one order's admission (issue) at a time

	refusedMu sync.Mutex
	refused   map[string]time.Time // name → until when Allow's refusal stands

	files *fileCert

	storage *gatedStorage
	ctx     context.Context // of the background work; cancelled by Stop
	cancel  context.CancelFunc
	stop    chan struct{}
	done    sync.WaitGroup
}

// New checks cfg and prepares a Manager; Open starts it.
func New(cfg Config) (*Manager, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.LiveDomain = strings.ToLower(strings.TrimSuffix(cfg.LiveDomain, "."))
	cfg.PublicHost = strings.ToLower(cfg.PublicHost)
	m := &Manager{cfg: cfg, logger: cfg.Logger, stop: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	switch cfg.Mode {
	case ModeFiles:
		if cfg.ReloadInterval <= 0 {
			m.cfg.ReloadInterval = DefaultReloadInterval
		}
		fc, err := loadFileCert(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		m.files = fc
		return m, nil
	case ModeACME:
	default:
		return nil, fmt.Errorf("tls mode %q: must be %s or %s", cfg.Mode, ModeACME, ModeFiles)
	}
	if cfg.DNS == nil {
		return nil, errors.New("tls acme: no DNS provider for the wildcard certificate")
	}
	if cfg.Storage == "" || cfg.CA == "" || cfg.LiveDomain == "" {
		return nil, errors.New("tls acme: storage folder, CA and live domain are required")
	}
	if err := os.MkdirAll(cfg.Storage, 0o700); err != nil {
		return nil, fmt.Errorf("certificate folder: %w", err)
	}
	if err := os.Chmod(cfg.Storage, 0o700); err != nil {
		return nil, fmt.Errorf("certificate folder: %w", err)
	}
	every, burst := cfg.OnDemandEvery, cfg.OnDemandBurst
	if every <= 0 {
		every = DefaultOnDemandEvery
	}
	if burst <= 0 {
		burst = DefaultOnDemandBurst
	}
	m.limiter = rate.NewLimiter(rate.Every(every), burst)
	httpPort := cfg.HTTPPort
	if httpPort == 0 {
		httpPort = 80
	}

	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(c certmagic.Certificate) (*certmagic.Config, error) {
			for _, n := range c.Names {
				if n == "*."+m.cfg.LiveDomain {
					return m.dnsCfg, nil
				}
				if n == m.cfg.PublicHost {
					return m.pubCfg, nil
				}
			}
			return m.httpCfg, nil
		},
		RenewCheckInterval: cfg.RenewCheckInterval,
		Logger:             m.zapLogger(),
	})
	var b backend = &certmagic.FileStorage{Path: cfg.Storage}
	if cfg.Shared != nil {
		b = cfg.Shared
	}
	m.storage = newGatedStorage(b)
	base := certmagic.Config{
		Storage:            m.storage,
		RenewalWindowRatio: cfg.RenewalWindowRatio,
		OnEvent:            m.onEvent,
		ShouldEmitFunc:     func(event string) bool { return slices.Contains(certEvents, event) },
		Logger:             m.zapLogger(),
	}
	// On a failed attempt certmagic retries against its test CA (Let's
	// Encrypt staging, to spare the production rate limits): keep that for
	// Let's Encrypt, and any other CA (pebble in tests) as its own.
	testCA := ""
	if cfg.CA != certmagic.LetsEncryptProductionCA {
		testCA = cfg.CA
	}
	// What every issuer shares: the CA, the account's contact, the logger.
	account := certmagic.ACMEIssuer{
		CA: cfg.CA, TestCA: testCA, Email: cfg.Email, Agreed: true, TrustedRoots: cfg.CARoots,
		NewAccountFunc: m.accountContact,
		Logger:         m.zapLogger(),
	}
	dnsIssuer := account
	dnsIssuer.DNS01Solver = &certmagic.DNS01Solver{DNSManager: certmagic.DNSManager{
		DNSProvider: cfg.DNS, Resolvers: cfg.Resolvers, Logger: m.zapLogger(),
	}}
	m.dnsCfg = certmagic.New(m.cache, base)
	m.dnsCfg.Issuers = []certmagic.Issuer{certmagic.NewACMEIssuer(m.dnsCfg, dnsIssuer)}

	// HTTP-01 only: the plain listener answers the challenges (Handler);
	// certmagic finds httpPort taken and starts no server of its own.
	httpIssuer := func(c *certmagic.Config) *certmagic.ACMEIssuer {
		iss := account
		iss.AltHTTPPort = httpPort
		iss.DisableTLSALPNChallenge = true
		return certmagic.NewACMEIssuer(c, iss)
	}
	// A config with OnDemand set only defers names given to Manage, so the
	// public host has a config of its own.
	m.pubCfg = certmagic.New(m.cache, base)
	m.pubCfg.Issuers = []certmagic.Issuer{httpIssuer(m.pubCfg)}
	onDemand := base
	onDemand.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: m.decide}
	m.httpCfg = certmagic.New(m.cache, onDemand)
	m.httpIss = httpIssuer(m.httpCfg)
	m.httpCfg.Issuers = []certmagic.Issuer{m.httpIss}
	return m, nil
}

// accountContact is certmagic's last word on a new account before it is
// registered: with no Email configured, the account has no contact. For
// certmagic, no address means the newest account's in storage, and when
// it reads one that another issuer is still saving (the wildcard's and
// the public host's issuers obtain at once on a first start) it makes up
// the address "default", keeps it for the whole process, and registers
// mailto:default, which CAs refuse (400 invalidContact): no certificate
// until a restart.
func (m *Manager) accountContact(_ context.Context, _ *certmagic.ACMEIssuer, acct acme.Account) (acme.Account, error) {
	if m.cfg.Email == "" {
		acct.Contact = nil
	}
	return acct, nil
}

// Open starts obtaining (or loading) the certificates in the background,
// or watching the certificate files. Failures are logged and retried
// until ctx is done or Stop.
func (m *Manager) Open(ctx context.Context) error {
	if m.files != nil {
		m.done.Add(1)
		go m.watchFiles()
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(m.ctx, cancel)
	if err := m.dnsCfg.ManageAsync(ctx, []string{"*." + m.cfg.LiveDomain}); err != nil {
		return fmt.Errorf("manage the wildcard certificate: %w", err)
	}
	if h := m.cfg.PublicHost; h != "" && !m.underWildcard(h) && net.ParseIP(h) == nil {
		if err := m.pubCfg.ManageAsync(ctx, []string{h}); err != nil {
			return fmt.Errorf("manage the certificate of %s: %w", h, err)
		}
	}
	return nil
}

// Stop ends the Manager's work and waits for it: the file watcher, the
// renewal checks, and every read or write of the certificate folder in
// flight (orders waiting to retry are cancelled). certmagic's own
// goroutines may still be winding down, but from Stop's return on none of
// them can write to the folder or reach Config.Allow, AllowIssue or
// OnEvent, so the folder may be removed or handed to another Manager.
// Handshakes after Stop fail. Stop may be called more than once.
func (m *Manager) Stop() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	m.cancel()
	if m.cache != nil {
		m.cache.Stop()
	}
	if m.storage != nil {
		m.storage.close()
	}
	m.done.Wait()
}

// underWildcard reports whether name is one label under the live domain.
func (m *Manager) underWildcard(name string) bool {
	sub, ok := strings.CutSuffix(name, "."+m.cfg.LiveDomain)
	return ok && sub != "" && !strings.Contains(sub, ".")
}

// Refusals of Config.Allow are remembered this long, for at most
// maxRefused names, so that handshakes naming unknown hosts (scanners,
// stale DNS) do not each cost a call to Allow.
const (
	refusalTTL = 10 * time.Second
	maxRefused = 10_000
)

// decide is the on-demand decision, asked before a stored certificate is
// loaded, before a renewal and before a new order: Config.Allow alone.
// Orders are rate limited when they start (issue).
func (m *Manager) decide(ctx context.Context, name string) error {
	if m.cfg.Allow == nil {
		return fmt.Errorf("%s: on-demand certificates are off", name)
	}
	ctx, done, ok := m.storage.enter(ctx) // Stop waits for the call
	if !ok {
		return fmt.Errorf("%s: %w", name, errStopped)
	}
	defer done()
	now := time.Now()
	m.refusedMu.Lock()
	until, ok := m.refused[name]
	m.refusedMu.Unlock()
	if ok && now.Before(until) {
		return fmt.Errorf("%s: not a name Gantry serves (refused in the last %s)", name, refusalTTL)
	}
	if err := m.cfg.Allow(ctx, name); err != nil {
		m.refusedMu.Lock()
		if m.refused == nil || len(m.refused) >= maxRefused {
			m.refused = map[string]time.Time{}
		}
		m.refused[name] = now.Add(refusalTTL)
		m.refusedMu.Unlock()
		return err
	}
	return nil
}

// issue is asked when certmagic starts ordering a new certificate for an
// on-demand name (not a renewal): the rate limit, then Config.AllowIssue.
// A refusal is certmagic.ErrNoRetry: the handshake that asked fails at
// once rather than waiting for retries, and nothing is retried behind it.
//
// An order AllowIssue refuses takes no token: the bucket is looked at
// first and taken from after AllowIssue's yes, one order at a time (a
// reservation given back later restores less than it took once others
// were made meanwhile, so refusals under load emptied the bucket).
func (m *Manager) issue(ctx context.Context, name string) error {
	m.issueMu.Lock()
	defer m.issueMu.Unlock()
	tooMany := certmagic.ErrNoRetry{Err: fmt.Errorf("%s: too many on-demand certificate requests, try again shortly", name)}
	if m.limiter.Tokens() < 1 {
		return tooMany
	}
	if m.cfg.AllowIssue != nil {
		if err := m.cfg.AllowIssue(ctx, name); err != nil {
			return certmagic.ErrNoRetry{Err: err}
		}
	}
	if !m.limiter.Allow() {
		return tooMany
	}
	return nil
}

// onDemandName reports whether name is one the on-demand configuration
// serves (neither the wildcard nor the public host).
func (m *Manager) onDemandName(name string) bool {
	return name != "*."+m.cfg.LiveDomain && name != m.cfg.PublicHost
}

// ForgetRefusals drops the remembered refusals of Config.Allow, so the
// next handshake for any name asks it again. Call it when the answer may
// have changed (a custom domain just verified), or a name refused moments
// before would stay refused for up to 10 s after it became allowed.
func (m *Manager) ForgetRefusals() {
	m.refusedMu.Lock()
	m.refused = nil
	m.refusedMu.Unlock()
}

// certEvents are the certmagic events onEvent handles (others, such as one
// per handshake, are not even built).
var certEvents = []string{"cert_obtaining", "cert_obtained", "cert_failed"}

func (m *Manager) onEvent(ctx context.Context, event string, data map[string]any) error {
	ctx, done, ok := m.storage.enter(ctx) // Stop waits for the call
	if !ok {
		return certmagic.ErrNoRetry{Err: errStopped}
	}
	defer done()
	name, _ := data["identifier"].(string)
	renewal, _ := data["renewal"].(bool)
	var ev Event
	switch event {
	case "cert_obtaining":
		// A new order (a renewal says so): the only step that spends the
		// rate limits.
		if !renewal && m.onDemandName(name) {
			return m.issue(ctx, name)
		}
		return nil
	case "cert_obtained":
		m.logger.Info("certificate obtained", "name", name, "renewal", renewal)
		ev = Event{Name: name, Renewal: renewal}
	case "cert_failed":
		err, _ := data["error"].(error)
		if err == nil {
			err = fmt.Errorf("%v", data["error"])
		}
		m.logger.Error("certificate request failed", "name", name, "renewal", renewal, "err", err)
		ev = Event{Name: name, Renewal: renewal, Err: err}
	default:
		return nil
	}
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(ev)
	}
	return nil
}

// Certificate returns the certificate in memory that serves name (its
// own, or the wildcard that covers it), if there is one that has not
// expired.
func (m *Manager) Certificate(name string) (*x509.Certificate, bool) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if m.files != nil {
		c := m.files.current()
		if c.Leaf != nil && c.Leaf.VerifyHostname(name) == nil && time.Now().Before(c.Leaf.NotAfter) {
			return c.Leaf, true
		}
		return nil, false
	}
	for _, c := range m.cache.AllMatchingCertificates(name) {
		if c.Expired() || len(c.Certificate.Certificate) == 0 {
			continue
		}
		leaf := c.Leaf
		if leaf == nil {
			var err error
			if leaf, err = x509.ParseCertificate(c.Certificate.Certificate[0]); err != nil {
				continue
			}
		}
		return leaf, true
	}
	return nil, false
}

// TLSConfig returns the configuration of the HTTPS listener: TLS 1.2 and
// 1.3 only, HTTP/2 and HTTP/1.1, certificates picked by server name.
func (m *Manager) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: m.GetCertificate,
	}
}

// GetCertificate answers a TLS handshake with the certificate of its server
// name: the wildcard or the public host's when they are ready, an
// on-demand one when Config.Allow accepts the name, else an error (the
// handshake fails).
func (m *Manager) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if m.files != nil {
		return m.files.current(), nil
	}
	select {
	case <-m.stop:
		return nil, errStopped
	default:
	}
	name := strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
	// Managed names are never obtained during a handshake (their configs
	// have no on-demand), only served once ready.
	if m.underWildcard(name) {
		return m.dnsCfg.GetCertificate(hello)
	}
	if name == m.cfg.PublicHost {
		return m.pubCfg.GetCertificate(hello)
	}
	// An order made for this handshake ends with Stop: certmagic keeps
	// the name's order to itself (process-wide) while it waits to retry,
	// and would hold up every other handshake for the name meanwhile.
	ctx, cancel := context.WithCancel(hello.Context())
	defer cancel()
	defer context.AfterFunc(m.ctx, cancel)()
	return m.httpCfg.GetCertificateWithContext(ctx, hello)
}

// Handler returns the handler of the plain HTTP listener: ACME HTTP-01
// challenges (/.well-known/acme-challenge/) are answered, every other
// request is redirected to the same URL over HTTPS (308, which keeps the
// method and body).
func (m *Manager) Handler() http.Handler {
	redirect := http.HandlerFunc(m.redirect)
	if m.httpIss == nil {
		return redirect
	}
	return m.httpIss.HTTPChallengeHandler(redirect)
}

func (m *Manager) redirect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || strings.ContainsAny(host, "/\\@ ") {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	if p := m.cfg.HTTPSPort; p != "" && p != "443" {
		host = net.JoinHostPort(host, p)
	} else if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	w.Header().Set("Connection", "close")
	http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
}

// WithHSTS adds Strict-Transport-Security (max-age one year) to the
// answers for host (the public host) and passes every request to next.
// Live sites do not get it: their names may also be opened over plain HTTP
// elsewhere (custom domains before their certificate, previews), and a
// year-long pin set for one is a pin the student cannot take back.
func WithHSTS(host string, next http.Handler) http.Handler {
	host = strings.ToLower(host)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Host
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		if strings.EqualFold(h, host) {
			w.Header().Set("Strict-Transport-Security", HSTS)
		}
		next.ServeHTTP(w, r)
	})
}

// StorageDir returns the certificate folder under dataDir.
func StorageDir(dataDir string) string { return filepath.Join(dataDir, "certs") }

// zapLogger is certmagic's logger: its errors (a certificate it could not
// obtain or renew, and why) go to Config.Logger as "certmagic" lines;
// with Config.Debug, certmagic's own account of every step goes to stderr,
// to diagnose a CA or DNS provider.
func (m *Manager) zapLogger() *zap.Logger {
	if m.cfg.Debug {
		if l, err := zap.NewDevelopment(); err == nil {
			return l
		}
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "" // slog stamps the line
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(slogWriter{m.logger}), zapcore.ErrorLevel))
}

// slogWriter logs each line zap writes as an error of l.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Error("certmagic", "detail", strings.TrimSpace(string(p)))
	return len(p), nil
}
