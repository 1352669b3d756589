// Package config reads Gantry's configuration from environment variables
// and command-line flags and validates it at start-up.
//
// Every setting has an environment variable GANTRY_<NAME> and a flag
// --<name> in kebab-case (GANTRY_DATA_DIR and --data-dir); a flag wins over
// its variable. The table in docs/operations.md lists them with their
// defaults.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gantryhq/gantry/internal/netpolicy"
)

// Sandbox modes.
const (
	SandboxBwrap = "bwrap" // bubblewrap, the default
	SandboxNone  = "none"  // development only: user code runs unconfined
)

// MinSecretKeyLen is the shortest secret key accepted, in bytes.
const MinSecretKeyLen = 32

// SecretKeyFile is the name, inside the data folder, of the secret key
// generated when none is configured.
const SecretKeyFile = "secret.key"

// Config is Gantry's validated configuration.
type Config struct {
	Addr             string         // listen address, default ":8080"
	DataDir          string         // database, sites, builds, generated secrets; default "./data"
	DatabaseURL      string         // postgres://… or a SQLite path; default <data-dir>/gantry.db
	PublicURL        *url.URL       // where the UI and API are reached; default http://localhost:8080
	LiveDomain       string         // deployments live on <sub>.<live-domain>; default "localhost"
	LiveURLScheme    string         // scheme of live URLs; default: the public URL's
	LiveURLPort      string         // port of live URLs, "" for none; default: the public URL's
	SecretKey        string         // signs tokens, encrypts secrets; default: generated into <data-dir>/secret.key
	NodeID           string         // this replica's name; default: generated into <data-dir>/node-id
	PeerAddr         string         // where other replicas reach this one; set: this is a replica
	Roles            []string       // RoleAPI, RoleEdge, RoleBuilder, RoleRunner; default all
	Lease            time.Duration  // how long a claimed build is held without renewal; default 30s
	ObjectStore      *ObjectStore   // where artifacts are shared between replicas; nil: local folders only
	SiteCache        int64          // bytes of sites an edge keeps fetched from the object store, default 2 GiB
	GitHubClientID   string         // OAuth app; unset means GitHub connect is not configured
	GitHubSecret     string         // OAuth app secret
	GitHubAPIURL     *url.URL       // default https://api.github.com/
	GitHubWebURL     *url.URL       // default https://github.com/
	GitAllowHosts    []string       // hosts allowed although they resolve to private or loopback addresses
	Sandbox          string         // SandboxBwrap (default) or SandboxNone
	SandboxAllow     []netip.Prefix // restricted destinations sandboxed builds and apps may reach anyway; default none
	BuildTimeout     time.Duration  // default 10m
	WatchInterval    time.Duration  // how often the commit watcher polls a branch; default 1m
	NpmRegistry      *url.URL       // the npm registry builds install from (npm_config_registry); nil: npm's own
	PipIndexURL      *url.URL       // the Python package index builds install from (PIP_INDEX_URL); nil: pip's own
	BuildConcurrency int            // builds at once, default 1
	BuildCPUs        float64        // CPU quota of each build (install and build steps), in CPUs, default 1
	AppCPUs          float64        // CPU quota of each server app, in CPUs, default 1
	MaxPendingBuilds int            // builds one user may have waiting, default 3
	AppMemory        int64          // memory limit of each server app in bytes, default 512 MiB
	AppPids          int64          // process limit of each server app, default 256
	AppStartTimeout  time.Duration  // how long a server app may take to answer HTTP, default 60s
	AppIdle          time.Duration  // a server app that served no request this long is put to sleep, default 15m; 0: never
	PreviewIdle      time.Duration  // the same for a preview's server app, default 5m; 0: never
	WakePageAfter    time.Duration  // how long a browser waits for a sleeping app before the "Waking up" page, default 3s
	BuildDisk        int64          // bytes a build may write (its volume), default 4 GiB
	BuildInodes      int64          // files a build may create, default 200,000
	AppDisk          int64          // writable space of a server app beyond its build, default 1 GiB
	SandboxUIDFirst  uint32         // first uid of the range accounts' code runs under, default 200000
	SandboxUIDCount  uint32         // size of that range (one uid per account), default 65536
	PasswordCost     int            // argon2id memory in MiB, default 19; 1 in tests
	TokenTTL         time.Duration  // bearer token lifetime, default 168h (7 days)
	TrustProxy       bool           // take client IPs from X-Forwarded-For (behind one reverse proxy)
	EdgeLoops        bool           // the edge's event loops in front of net/http, default on; off: net/http serves everything
	BodyTimeout      time.Duration  // how long an API request's whole body may take to arrive, default 30s
	UploadTimeout    time.Duration  // how long the whole body of a request to a live site may take, default 5m
	IdleTimeout      time.Duration  // how long a keep-alive connection may stay idle, default 1m
	PublicIPv4       []netip.Addr   // the platform's public IPv4 addresses: apex custom domains' A records; default none
	PublicIPv6       []netip.Addr   // the platform's public IPv6 addresses: apex custom domains' AAAA records; default none
	DNSResolver      string         // host:port of the DNS server custom domains are checked against; default the system's
	LogFormat        string         // "text" (default) or "json"
	LogLevel         string         // "debug", "info" (default), "warn", "error"

	// HTTPS (see docs/operations.md "HTTPS and domains").
	TLS                 string   // TLSOff (default), TLSACME or TLSFiles
	HTTPSAddr           string   // HTTPS listen address when TLS is on, default ":443"
	ACMECA              string   // ACME directory URL, default Let's Encrypt production
	ACMEEmail           string   // contact address given to the CA; optional
	ACMECARoot          string   // PEM file of an extra root trusted for the CA's API (a test CA); optional
	ACMEResolvers       []string // DNS servers (host:port) for DNS-01 zone lookups and propagation checks; default the system's
	DNSProvider         string   // DNS-01 provider for the wildcard certificate: rfc2136, cloudflare or route53
	RFC2136Server       string   // host:port of the DNS server taking dynamic updates
	RFC2136KeyName      string   // TSIG key name
	RFC2136KeyAlg       string   // TSIG algorithm, default hmac-sha256
	RFC2136Secret       string   // TSIG secret, base64
	CloudflareAPIToken  string   // Cloudflare API token with Zone:DNS:Edit
	Route53HostedZoneID string   // Route 53 hosted zone; default: looked up by name
	TLSCert             string   // certificate chain (PEM) for TLSFiles
	TLSKey              string   // private key (PEM) for TLSFiles

	acmeResolvers string // as given, parsed by checkTLS

	// BuildCacheAccount bounds one account's build caches, default 2 GiB;
	// BuildCacheTotal every account's together, default 0: a tenth of the
	// data disk. Neither counts in an account's storage budget.
	BuildCacheAccount int64
	BuildCacheTotal   int64

	// secretKeySet records that the key came from the environment or a flag.
	secretKeySet bool
}

// TLS modes.
const (
	TLSOff   = "off"   // plain HTTP only, the default
	TLSACME  = "acme"  // certificates from an ACME CA (Let's Encrypt)
	TLSFiles = "files" // the operator's certificate and key files
)

// DNS-01 providers.
const (
	DNSRFC2136    = "rfc2136"
	DNSCloudflare = "cloudflare"
	DNSRoute53    = "route53"
)

// Defaults of the settings that have one.
const (
	DefaultHTTPSAddr        = ":443"
	DefaultACMECA           = "https://acme-v02.api.letsencrypt.org/directory"
	DefaultRFC2136KeyAlg    = "hmac-sha256"
	DefaultAddr             = ":8080"
	DefaultDataDir          = "./data"
	DefaultPublicURL        = "http://localhost:8080"
	DefaultLiveDomain       = "localhost"
	DefaultGitHubAPIURL     = "https://api.github.com/"
	DefaultGitHubWebURL     = "https://github.com/"
	DefaultBuildTimeout     = 10 * time.Minute
	DefaultWatchInterval    = time.Minute
	DefaultBuildConcurrency = 1
	DefaultMaxPendingBuilds = 3
	DefaultBuildCPUs        = 1
	DefaultAppCPUs          = 1
	DefaultAppMemoryMiB     = 512
	DefaultAppPids          = 256
	DefaultAppStartTimeout  = 60 * time.Second
	DefaultAppIdle          = 15 * time.Minute
	DefaultPreviewIdle      = 5 * time.Minute
	DefaultWakePageAfter    = 3 * time.Second
	DefaultBuildDiskMiB     = 4096
	DefaultBuildInodes      = 200_000
	DefaultAppDiskMiB       = 1024
	DefaultBuildCacheMiB    = 2048
	DefaultSandboxUIDs      = "200000-265535"
	DefaultPasswordCost     = 19
	DefaultTokenTTL         = 7 * 24 * time.Hour
	DefaultBodyTimeout      = 30 * time.Second
	DefaultUploadTimeout    = 5 * time.Minute
	DefaultIdleTimeout      = time.Minute
)

// setting is one configuration entry: its flag name, its variable and help.
type setting struct {
	name, def, help string
}

// settings lists every setting in the order --help shows them. The
// variable of a setting is GANTRY_ + its name upper-cased with _ for -.
var settings = []setting{
	{"addr", DefaultAddr, "listen address"},
	{"data-dir", DefaultDataDir, "folder for the database, sites, build workspaces and generated secrets"},
	{"database-url", "", "postgres://… selects PostgreSQL; otherwise a SQLite file path (default <data-dir>/gantry.db)"},
	{"public-url", DefaultPublicURL, "where the UI and API are reached (OAuth redirects, links)"},
	{"live-domain", DefaultLiveDomain, "deployments are served on <subdomain>.<live-domain>"},
	{"live-url-scheme", "", "scheme of live URLs, http or https (default: the public URL's)"},
	{"live-url-port", "", "port of live URLs; \"none\" for no port (default: the public URL's)"},
	{"secret-key", "", "signs tokens and encrypts secrets, at least 32 bytes (default: generated once into <data-dir>/secret.key)"},
	{"github-client-id", "", "GitHub OAuth app client id"},
	{"github-client-secret", "", "GitHub OAuth app client secret"},
	{"github-api-url", DefaultGitHubAPIURL, "GitHub REST API base URL"},
	{"github-web-url", DefaultGitHubWebURL, "GitHub web base URL (OAuth pages)"},
	{"git-allow-hosts", "", "comma-separated hosts allowed although they resolve to private or loopback addresses"},
	{"sandbox", SandboxBwrap, "how user code is confined: bwrap, or none (development only)"},
	{"sandbox-allow", "", "comma-separated IPs and CIDR prefixes sandboxed builds and apps may reach although they are private, loopback, link-local or otherwise not public (a package mirror)"},
	{"build-timeout", DefaultBuildTimeout.String(), "longest a build may run"},
	{"watch-interval", DefaultWatchInterval.String(), "how often the commit watcher polls a watched branch (backing off to 15m while nothing changes)"},
	{"npm-registry", "", "npm registry builds install packages from, e.g. a campus mirror (default: npm's own); its addresses are added to the sandbox allow list"},
	{"pip-index-url", "", "Python package index builds install packages from, e.g. a campus mirror's /simple/ (default: pip's own); its addresses are added to the sandbox allow list"},
	{"build-concurrency", strconv.Itoa(DefaultBuildConcurrency), "builds run at once"},
	{"max-pending-builds", strconv.Itoa(DefaultMaxPendingBuilds), "builds one user may have waiting; one more deploy is refused (429)"},
	{"build-cpus", strconv.Itoa(DefaultBuildCPUs), "CPU quota of each build, in CPUs (0.5: half of one)"},
	{"app-cpus", strconv.Itoa(DefaultAppCPUs), "CPU quota of each server app, in CPUs (0.5: half of one)"},
	{"app-memory", strconv.Itoa(DefaultAppMemoryMiB), "memory limit of each server app, in MiB"},
	{"app-pids", strconv.Itoa(DefaultAppPids), "limit on processes and threads of each server app"},
	{"app-start-timeout", DefaultAppStartTimeout.String(), "how long a server app may take to answer HTTP after it starts"},
	{"app-idle", DefaultAppIdle.String(), "a server app that served no request this long is stopped and sleeps until the next one (0: apps never sleep)"},
	{"preview-idle", DefaultPreviewIdle.String(), "the same for the server app of a preview (always on or not; 0: previews never sleep)"},
	{"wake-page-after", DefaultWakePageAfter.String(), "how long a browser waits for a sleeping app to wake before it gets the \"Waking up\" page that reloads itself"},
	{"build-disk", strconv.Itoa(DefaultBuildDiskMiB), "disk space a build may write (repository, dependencies, output, /tmp), in MiB"},
	{"build-inodes", strconv.Itoa(DefaultBuildInodes), "files and folders a build may create"},
	{"app-disk", strconv.Itoa(DefaultAppDiskMiB), "writable disk space of each server app beyond what its build left, in MiB"},
	{"build-cache-account", strconv.Itoa(DefaultBuildCacheMiB), "disk space one account's build caches may take, in MiB (not counted in its storage budget; least recently used evicted first)"},
	{"build-cache-total", "0", "disk space every account's build caches may take together, in MiB (0: a tenth of the data folder's disk)"},
	{"sandbox-uids", DefaultSandboxUIDs, "range of uids reserved for accounts' builds and apps, one per account (FIRST-LAST)"},
	{"password-cost", strconv.Itoa(DefaultPasswordCost), "argon2id memory per password hash, in MiB (1–1024)"},
	{"token-ttl", DefaultTokenTTL.String(), "lifetime of sign-in tokens"},
	{"trust-proxy", "false", "take client IPs from X-Forwarded-For (only behind a reverse proxy that sets it)"},
	{"edge-loops", "on", "the edge's event loops answer common live-site requests in front of net/http: on, or off (net/http and the edge's reverse proxy serve everything)"},
	{"body-timeout", DefaultBodyTimeout.String(), "how long the whole body of an API request may take to arrive"},
	{"upload-timeout", DefaultUploadTimeout.String(), "how long the whole body of a request to a live site (an upload to an app) may take to arrive"},
	{"idle-timeout", DefaultIdleTimeout.String(), "how long a keep-alive connection may stay idle between requests"},
	{"tls", TLSOff, "HTTPS: off (plain HTTP), acme (certificates from an ACME CA: a wildcard for the live domain by DNS-01, the public host, custom domains on demand) or files (--tls-cert and --tls-key)"},
	{"https-addr", DefaultHTTPSAddr, "HTTPS listen address when --tls is acme or files (plain HTTP on --addr then redirects to it)"},
	{"acme-ca", DefaultACMECA, "ACME directory URL of the certificate authority"},
	{"acme-email", "", "contact address given to the certificate authority (expiry warnings)"},
	{"acme-ca-root", "", "PEM file of an extra root certificate to trust for the CA's API (a test CA such as pebble)"},
	{"acme-resolvers", "", "comma-separated DNS servers (host:port) asked for the live domain's zone and whether the DNS-01 record is visible (default: the system's resolvers and the zone's own servers)"},
	{"dns-provider", "", "DNS provider that answers the DNS-01 challenge for the live domain's wildcard certificate: rfc2136, cloudflare or route53"},
	{"rfc2136-server", "", "rfc2136: host:port of the DNS server accepting dynamic updates"},
	{"rfc2136-key-name", "", "rfc2136: TSIG key name"},
	{"rfc2136-key-alg", DefaultRFC2136KeyAlg, "rfc2136: TSIG algorithm (hmac-sha256, hmac-sha512, hmac-sha1)"},
	{"rfc2136-secret", "", "rfc2136: TSIG secret, base64"},
	{"cloudflare-api-token", "", "cloudflare: API token with Zone:DNS:Edit on the live domain's zone"},
	{"route53-hosted-zone-id", "", "route53: hosted zone of the live domain (default: found by name); credentials come from the standard AWS variables or files"},
	{"tls-cert", "", "files: certificate chain (PEM), reloaded when it changes"},
	{"tls-key", "", "files: private key (PEM), reloaded when it changes"},
	{"public-ipv4", "", "comma-separated public IPv4 addresses of this platform: the A records apex custom domains point at"},
	{"public-ipv6", "", "comma-separated public IPv6 addresses of this platform: the AAAA records apex custom domains point at"},
	{"dns-resolver", "", "host:port of the DNS server custom domains' records are checked against (default: the system's, from /etc/resolv.conf)"},
	{"node-id", "", "this replica's name among those sharing the database (default: generated once into <data-dir>/node-id)"},
	{"peer-addr", "", "host:port where the other replicas reach this one; setting it makes this a replica (PostgreSQL and a shared secret key required)"},
	{"roles", DefaultRoles, "what this replica does, comma-separated: api, edge, builder, runner"},
	{"lease", DefaultLease.String(), "how long a replica holds a build it claimed without renewing it"},
	{"object-store", "", "S3-compatible object store replicas share artifacts through: s3://bucket/prefix?endpoint=…&region=…&path_style=1 (credentials from the standard AWS variables; unset: local folders only)"},
	{"site-cache", strconv.Itoa(DefaultSiteCacheMiB), "disk space, in MiB, for the sites an edge fetched from the object store (least recently served evicted first)"},
	{"log-format", "text", "log format: text or json"},
	{"log-level", "info", "log level: debug, info, warn or error"},
}

// EnvName returns the environment variable of the flag name, e.g.
// "data-dir" → "GANTRY_DATA_DIR".
func EnvName(flagName string) string {
	return "GANTRY_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Load parses args (the arguments after the command name) over the
// environment read with getenv, and validates the result. Errors name the
// flag and variable at fault. Load touches no files: call Prepare next.
func Load(args []string, getenv func(string) string, usage io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("gantry", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		fmt.Fprintln(usage, "usage: gantry serve|migrate [flags]")
		Usage(usage)
	}
	values := make(map[string]*string, len(settings))
	for _, s := range settings {
		def := s.def
		if v, ok := lookup(getenv, EnvName(s.name)); ok {
			def = v
		}
		values[s.name] = &def
		fs.Var(&stringFlag{p: values[s.name], isBool: s.def == "false"}, s.name, s.help+" ["+EnvName(s.name)+"]")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	v := func(name string) string { return strings.TrimSpace(*values[name]) }

	c := &Config{
		Addr:           v("addr"),
		DataDir:        v("data-dir"),
		DatabaseURL:    v("database-url"),
		LiveDomain:     strings.ToLower(strings.TrimSuffix(v("live-domain"), ".")),
		LiveURLScheme:  strings.ToLower(v("live-url-scheme")),
		LiveURLPort:    v("live-url-port"),
		SecretKey:      *values["secret-key"],
		GitHubClientID: v("github-client-id"),
		GitHubSecret:   v("github-client-secret"),
		Sandbox:        strings.ToLower(v("sandbox")),
		LogFormat:      strings.ToLower(v("log-format")),
		LogLevel:       strings.ToLower(v("log-level")),

		TLS:                 strings.ToLower(v("tls")),
		HTTPSAddr:           v("https-addr"),
		ACMECA:              v("acme-ca"),
		ACMEEmail:           v("acme-email"),
		ACMECARoot:          v("acme-ca-root"),
		acmeResolvers:       v("acme-resolvers"),
		DNSProvider:         strings.ToLower(v("dns-provider")),
		RFC2136Server:       v("rfc2136-server"),
		RFC2136KeyName:      v("rfc2136-key-name"),
		RFC2136KeyAlg:       strings.ToLower(v("rfc2136-key-alg")),
		RFC2136Secret:       v("rfc2136-secret"),
		CloudflareAPIToken:  v("cloudflare-api-token"),
		Route53HostedZoneID: v("route53-hosted-zone-id"),
		TLSCert:             v("tls-cert"),
		TLSKey:              v("tls-key"),
	}
	c.secretKeySet = c.SecretKey != ""

	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s (%s): %s", name, EnvName(name), fmt.Sprintf(format, args...)))
	}
	c.checkAddrs(v, bad)
	c.checkSandbox(v, bad)
	c.checkLimits(v, bad)
	c.checkHTTP(v, bad)
	c.checkReplica(v, bad)
	c.checkObjectStore(v, bad)
	c.checkTLS(bad)
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration:\n  %w", joinLines(errs))
	}
	return c, nil
}

// checkAddrs validates where Gantry listens, keeps its data and is reached, its keys, and the outside services it talks to.
func (c *Config) checkAddrs(v func(string) string, bad badSetting) {
	var err error
	if c.Addr == "" {
		bad("addr", "must not be empty")
	} else if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("addr", "%q is not a host:port listen address (e.g. :8080)", c.Addr)
	}
	if c.DataDir == "" {
		bad("data-dir", "must not be empty")
	}
	if c.DatabaseURL == "" && c.DataDir != "" {
		c.DatabaseURL = filepath.Join(c.DataDir, "gantry.db")
	} else if strings.Contains(c.DatabaseURL, "://") {
		if u, err := url.Parse(c.DatabaseURL); err != nil {
			bad("database-url", "is not a valid URL") // the error would echo the password
		} else if u.Scheme != "postgres" && u.Scheme != "postgresql" && u.Scheme != "sqlite" {
			bad("database-url", "scheme %q is not supported: use postgres:// or a SQLite file path", u.Scheme)
		}
	}

	if c.PublicURL, err = parseBaseURL(v("public-url")); err != nil {
		bad("public-url", "%v", err)
	} else if c.PublicURL.Path != "/" {
		bad("public-url", "%q must not have a path: Gantry is served at the root of its host", v("public-url"))
	}
	if err := checkDomain(c.LiveDomain); err != nil {
		bad("live-domain", "%v", err)
	}
	switch c.LiveURLScheme {
	case "", "http", "https":
	default:
		bad("live-url-scheme", "%q must be http or https", c.LiveURLScheme)
	}
	if p := c.LiveURLPort; p != "" && p != "none" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			bad("live-url-port", "%q must be a port number from 1 to 65535, or none", p)
		}
	}
	if c.secretKeySet && len(c.SecretKey) < MinSecretKeyLen {
		bad("secret-key", "must be at least %d bytes long (e.g. openssl rand -hex 32)", MinSecretKeyLen)
	}
	if (c.GitHubClientID == "") != (c.GitHubSecret == "") {
		bad("github-client-id", "the GitHub client id and client secret must be set together")
	}
	if c.GitHubAPIURL, err = parseBaseURL(v("github-api-url")); err != nil {
		bad("github-api-url", "%v", err)
	}
	if c.GitHubWebURL, err = parseBaseURL(v("github-web-url")); err != nil {
		bad("github-web-url", "%v", err)
	}
	for _, h := range strings.Split(v("git-allow-hosts"), ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h == "" {
			continue
		} else if strings.ContainsAny(h, "/ @") {
			bad("git-allow-hosts", "%q is not a host name or IP address", h)
		} else {
			c.GitAllowHosts = append(c.GitAllowHosts, h)
		}
	}
	c.PublicIPv4 = parseAddrs(v("public-ipv4"), true, func(format string, args ...any) { bad("public-ipv4", format, args...) })
	c.PublicIPv6 = parseAddrs(v("public-ipv6"), false, func(format string, args ...any) { bad("public-ipv6", format, args...) })
	if c.DNSResolver = v("dns-resolver"); c.DNSResolver != "" {
		if host, port, err := net.SplitHostPort(c.DNSResolver); err != nil || host == "" || port == "" {
			bad("dns-resolver", "%q must be host:port (e.g. 127.0.0.1:53)", c.DNSResolver)
		}
	}
}

// checkSandbox validates how user code is isolated and which package registries it uses.
func (c *Config) checkSandbox(v func(string) string, bad badSetting) {
	var err error
	switch c.Sandbox {
	case SandboxBwrap, SandboxNone:
	default:
		bad("sandbox", "%q must be bwrap or none", c.Sandbox)
	}
	if c.SandboxAllow, err = netpolicy.ParsePrefixes(v("sandbox-allow")); err != nil {
		bad("sandbox-allow", "%v", err)
	}
	for _, r := range []struct {
		name string
		dst  **url.URL
	}{{"npm-registry", &c.NpmRegistry}, {"pip-index-url", &c.PipIndexURL}} {
		if s := strings.TrimSpace(v(r.name)); s != "" {
			if *r.dst, err = parseBaseURL(s); err != nil {
				bad(r.name, "%v", err)
			}
		}
	}
}

// checkLimits validates the bounds of builds and apps: time, concurrency, CPU, memory, processes, disk, sleep and uids.
func (c *Config) checkLimits(v func(string) string, bad badSetting) {
	var err error
	if c.BuildTimeout, err = time.ParseDuration(v("build-timeout")); err != nil {
		bad("build-timeout", "%q is not a duration (e.g. 10m, 90s)", v("build-timeout"))
	} else if c.BuildTimeout <= 0 {
		bad("build-timeout", "must be positive")
	}
	if c.WatchInterval, err = time.ParseDuration(v("watch-interval")); err != nil {
		bad("watch-interval", "%q is not a duration (e.g. 1m, 30s)", v("watch-interval"))
	} else if c.WatchInterval < time.Second {
		bad("watch-interval", "must be at least 1s")
	}
	if c.BuildConcurrency, err = strconv.Atoi(v("build-concurrency")); err != nil {
		bad("build-concurrency", "%q is not a whole number", v("build-concurrency"))
	} else if c.BuildConcurrency < 1 {
		bad("build-concurrency", "must be at least 1")
	}
	if c.MaxPendingBuilds, err = strconv.Atoi(v("max-pending-builds")); err != nil {
		bad("max-pending-builds", "%q is not a whole number", v("max-pending-builds"))
	} else if c.MaxPendingBuilds < 1 {
		bad("max-pending-builds", "must be at least 1")
	}
	c.BuildCPUs = parseCPUs(v("build-cpus"), func(format string, args ...any) { bad("build-cpus", format, args...) })
	c.AppCPUs = parseCPUs(v("app-cpus"), func(format string, args ...any) { bad("app-cpus", format, args...) })
	if mib, err := strconv.ParseInt(v("app-memory"), 10, 64); err != nil {
		bad("app-memory", "%q is not a whole number of MiB", v("app-memory"))
	} else if mib < 16 || mib > 1<<20 {
		bad("app-memory", "must be from 16 to 1048576 (MiB)")
	} else {
		c.AppMemory = mib << 20
	}
	if c.AppPids, err = strconv.ParseInt(v("app-pids"), 10, 64); err != nil {
		bad("app-pids", "%q is not a whole number", v("app-pids"))
	} else if c.AppPids < 8 {
		bad("app-pids", "must be at least 8")
	}
	if c.AppStartTimeout, err = time.ParseDuration(v("app-start-timeout")); err != nil {
		bad("app-start-timeout", "%q is not a duration (e.g. 60s, 2m)", v("app-start-timeout"))
	} else if c.AppStartTimeout < time.Second {
		bad("app-start-timeout", "must be at least 1s")
	}
	if c.AppIdle, err = time.ParseDuration(v("app-idle")); err != nil {
		bad("app-idle", "%q is not a duration (e.g. 15m, 1h, or 0 to keep apps running)", v("app-idle"))
	} else if c.AppIdle != 0 && c.AppIdle < time.Second {
		bad("app-idle", "must be 0 (apps never sleep) or at least 1s")
	}
	if c.PreviewIdle, err = time.ParseDuration(v("preview-idle")); err != nil {
		bad("preview-idle", "%q is not a duration (e.g. 5m, or 0 to keep previews running)", v("preview-idle"))
	} else if c.PreviewIdle != 0 && c.PreviewIdle < time.Second {
		bad("preview-idle", "must be 0 (previews never sleep) or at least 1s")
	}
	if c.WakePageAfter, err = time.ParseDuration(v("wake-page-after")); err != nil {
		bad("wake-page-after", "%q is not a duration (e.g. 3s)", v("wake-page-after"))
	} else if c.WakePageAfter <= 0 {
		bad("wake-page-after", "must be positive")
	}
	for _, m := range []struct {
		name string
		min  int64
		p    *int64
	}{{"build-disk", 16, &c.BuildDisk}, {"app-disk", 1, &c.AppDisk}, {"build-cache-account", 1, &c.BuildCacheAccount}, {"build-cache-total", 0, &c.BuildCacheTotal}} {
		if mib, err := strconv.ParseInt(v(m.name), 10, 64); err != nil {
			bad(m.name, "%q is not a whole number of MiB", v(m.name))
		} else if mib < m.min || mib > 1<<24 {
			bad(m.name, "must be from %d to 16777216 (MiB)", m.min)
		} else {
			*m.p = mib << 20
		}
	}
	if c.BuildInodes, err = strconv.ParseInt(v("build-inodes"), 10, 64); err != nil {
		bad("build-inodes", "%q is not a whole number", v("build-inodes"))
	} else if c.BuildInodes < 100 || c.BuildInodes > 1<<31 {
		bad("build-inodes", "must be from 100 to 2147483648")
	}
	if first, last, ok := parseUIDRange(v("sandbox-uids")); !ok {
		bad("sandbox-uids", "%q is not a uid range FIRST-LAST between 1000 and 4294967293 (e.g. %s)", v("sandbox-uids"), DefaultSandboxUIDs)
	} else {
		c.SandboxUIDFirst, c.SandboxUIDCount = first, last-first+1
	}
}

// checkHTTP validates sign-in, the HTTP servers' timeouts and logging.
func (c *Config) checkHTTP(v func(string) string, bad badSetting) {
	var err error
	if c.PasswordCost, err = strconv.Atoi(v("password-cost")); err != nil {
		bad("password-cost", "%q is not a whole number", v("password-cost"))
	} else if c.PasswordCost < 1 || c.PasswordCost > 1024 {
		bad("password-cost", "must be from 1 to 1024 (MiB)")
	}
	if c.TokenTTL, err = time.ParseDuration(v("token-ttl")); err != nil {
		bad("token-ttl", "%q is not a duration (e.g. 168h)", v("token-ttl"))
	} else if c.TokenTTL < time.Minute {
		bad("token-ttl", "must be at least 1m")
	}
	if c.TrustProxy, err = strconv.ParseBool(v("trust-proxy")); err != nil {
		bad("trust-proxy", "%q must be true or false", v("trust-proxy"))
	}
	switch strings.ToLower(v("edge-loops")) {
	case "on":
		c.EdgeLoops = true
	case "off":
	default:
		bad("edge-loops", "%q must be on or off", v("edge-loops"))
	}
	for _, t := range []struct {
		name string
		p    *time.Duration
	}{{"body-timeout", &c.BodyTimeout}, {"upload-timeout", &c.UploadTimeout}, {"idle-timeout", &c.IdleTimeout}} {
		if *t.p, err = time.ParseDuration(v(t.name)); err != nil {
			bad(t.name, "%q is not a duration (e.g. 30s, 5m)", v(t.name))
		} else if *t.p < time.Second {
			bad(t.name, "must be at least 1s")
		}
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		bad("log-format", "%q must be text or json", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log-level", "%q must be debug, info, warn or error", c.LogLevel)
	}
}

// badSetting records that the setting name is invalid, with the reason.
type badSetting = func(name, format string, args ...any)

// checkTLS validates the HTTPS settings, each fault with its remedy.
func (c *Config) checkTLS(bad badSetting) {
	switch c.TLS {
	case TLSOff:
		return
	case TLSACME, TLSFiles:
	default:
		bad("tls", "%q must be off, acme or files", c.TLS)
		return
	}
	if _, _, err := net.SplitHostPort(c.HTTPSAddr); err != nil {
		bad("https-addr", "%q is not a host:port listen address (e.g. :443)", c.HTTPSAddr)
	}
	if c.PublicURL != nil && c.PublicURL.Scheme != "https" {
		bad("public-url", "must start with https:// when --tls is %s (e.g. https://%s)", c.TLS, c.PublicURL.Host)
	}
	if c.LiveURLScheme == "http" {
		bad("live-url-scheme", "must be https (or unset) when --tls is %s", c.TLS)
	}
	for _, r := range strings.Split(c.acmeResolvers, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		} else if _, _, err := net.SplitHostPort(r); err != nil {
			bad("acme-resolvers", "%q is not host:port (e.g. 1.1.1.1:53)", r)
		} else {
			c.ACMEResolvers = append(c.ACMEResolvers, r)
		}
	}
	if c.TLS == TLSFiles {
		if c.TLSCert == "" || c.TLSKey == "" {
			bad("tls", "files needs --tls-cert and --tls-key (GANTRY_TLS_CERT, GANTRY_TLS_KEY): the PEM certificate chain and its private key")
		}
		return
	}
	if u, err := url.Parse(c.ACMECA); err != nil || u.Scheme != "https" || u.Host == "" {
		bad("acme-ca", "%q must be an https:// ACME directory URL", c.ACMECA)
	}
	if c.LiveDomain == "localhost" || !strings.Contains(c.LiveDomain, ".") {
		bad("live-domain", "%q cannot get a public certificate: set a domain you own (e.g. apps.example.com)", c.LiveDomain)
	}
	switch c.DNSProvider {
	case DNSRFC2136:
		if c.RFC2136Server == "" || c.RFC2136KeyName == "" || c.RFC2136Secret == "" {
			bad("dns-provider", "rfc2136 needs GANTRY_RFC2136_SERVER (host:port), GANTRY_RFC2136_KEY_NAME and GANTRY_RFC2136_SECRET (the TSIG key allowed to update the zone)")
		} else if _, _, err := net.SplitHostPort(c.RFC2136Server); err != nil {
			bad("rfc2136-server", "%q is not host:port (e.g. ns1.example.com:53)", c.RFC2136Server)
		}
		switch c.RFC2136KeyAlg {
		case "hmac-sha256", "hmac-sha512", "hmac-sha1", "hmac-sha224", "hmac-sha384":
		default:
			bad("rfc2136-key-alg", "%q must be hmac-sha256, hmac-sha512 or hmac-sha1", c.RFC2136KeyAlg)
		}
	case DNSCloudflare:
		if c.CloudflareAPIToken == "" {
			bad("dns-provider", "cloudflare needs GANTRY_CLOUDFLARE_API_TOKEN: an API token with Zone:DNS:Edit on the live domain's zone")
		}
	case DNSRoute53:
	case "":
		bad("dns-provider", "--tls acme needs a DNS provider for the live domain's wildcard certificate: set GANTRY_DNS_PROVIDER to rfc2136, cloudflare or route53 with its credentials")
	default:
		bad("dns-provider", "%q must be rfc2136, cloudflare or route53", c.DNSProvider)
	}
}

// TLSOn reports whether Gantry serves HTTPS.
func (c *Config) TLSOn() bool { return c.TLS == TLSACME || c.TLS == TLSFiles }

// parseCPUs reads a CPU quota in CPUs, from 0.01 (the kernel's smallest)
// to 1024, reporting a bad value with bad.
func parseCPUs(s string, bad func(format string, args ...any)) float64 {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(n) {
		bad("%q is not a number of CPUs (e.g. 1, 0.5)", s)
		return 0
	}
	if n < 0.01 || n > 1024 {
		bad("must be from 0.01 to 1024 (CPUs)")
		return 0
	}
	return n
}

// lookup returns the value of the variable name when it is set and not
// blank.
func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, strings.TrimSpace(v) != ""
}

// joinLines joins errs one per line, indented under "invalid configuration".
func joinLines(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "\n  "))
}

// parseBaseURL accepts an absolute http or https URL with a host and no
// query or fragment, and returns it with its path ending in "/".
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q must start with http:// or https://", s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%q must not carry a query, fragment or user name", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q has a bad port", s)
		}
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// checkDomain accepts a DNS name of dot-separated labels of letters,
// digits and hyphens.
func checkDomain(d string) error {
	if d == "" {
		return errors.New("must not be empty")
	}
	if len(d) > 253 {
		return fmt.Errorf("%q is too long", d)
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not a domain name (e.g. localhost, apps.example.com)", d)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Errorf("%q is not a domain name (e.g. localhost, apps.example.com)", d)
			}
		}
	}
	return nil
}

// Prepare creates the data folder (0700) and, when no secret key was
// configured, reads it from <data-dir>/secret.key, generating that file
// (32 random bytes, hex, mode 0600) on first start. A data folder that
// others may list or write to loses those permissions (keeping the search
// bit the sandbox user needs to reach its workspace, see
// deploy.PrepareDataDir), and a key file others may read becomes 0600:
// older versions and hand-made folders are tightened at every start.
func (c *Config) Prepare() error {
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	if err := tighten(c.DataDir, 0o066); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	if err := c.prepareNodeID(); err != nil {
		return err
	}
	if c.secretKeySet {
		return nil
	}
	path := filepath.Join(c.DataDir, SecretKeyFile)
	key, err := readOrCreate(path, "secret key", func() (string, error) {
		var b [32]byte
		_, err := rand.Read(b[:])
		return hex.EncodeToString(b[:]), err
	})
	if err != nil {
		return err
	}
	c.SecretKey = key
	if len(c.SecretKey) < MinSecretKeyLen {
		return fmt.Errorf("secret key in %s is shorter than %d bytes: fix or delete it (deleting signs everyone out)", path, MinSecretKeyLen)
	}
	return nil
}

// readOrCreate returns the trimmed content of the private file path (its
// group and other bits taken off), first writing it (mode 0600) with
// generate's value when it does not exist. Of processes starting at once,
// the one that creates the file wins and the others read its value.
// what names the value in errors.
func readOrCreate(path, what string, generate func() (string, error)) (string, error) {
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if err := tighten(path, 0o077); err != nil {
				return "", fmt.Errorf("%s: %w", what, err)
			}
			return strings.TrimSpace(string(b)), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("read %s: %w", what, err)
		}
		v, err := generate()
		if err != nil {
			return "", fmt.Errorf("generate %s: %w", what, err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another process won the race: read its value
		} else if err != nil {
			return "", fmt.Errorf("write %s: %w", what, err)
		}
		_, werr := f.WriteString(v + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return "", fmt.Errorf("write %s: %w", what, werr)
		}
		return v, nil
	}
}

// tighten takes the permission bits in drop off path when it has any of
// them. Only files and folders of this process's user are changed, never
// a folder with the sticky bit (a shared one such as /tmp).
func tighten(path string, drop fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&drop == 0 || fi.Mode()&fs.ModeSticky != 0 {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return nil
	}
	return os.Chmod(path, fi.Mode().Perm()&^drop|fi.Mode()&(fs.ModeSetgid|fs.ModeSetuid))
}

// PublicHost returns the public URL's host name, lowercased, without port.
func (c *Config) PublicHost() string { return strings.ToLower(c.PublicURL.Hostname()) }

// LiveURL returns the URL of a deployment served on subdomain:
// scheme://<subdomain>.<live-domain>[:port], with no trailing slash. Scheme and port follow the
// public URL unless --live-url-scheme or --live-url-port say otherwise (with
// TLS on the scheme is https whatever the public URL says); a
// port that is the scheme's default (80 for http, 443 for https) or "none"
// is left out.
func (c *Config) LiveURL(subdomain string) string {
	scheme := c.LiveURLScheme
	if scheme == "" {
		scheme = c.PublicURL.Scheme
	}
	if c.TLSOn() {
		scheme = "https"
	}
	port := c.LiveURLPort
	if port == "" {
		port = c.PublicURL.Port()
	}
	host := subdomain + "." + c.LiveDomain
	if port != "" && port != "none" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host = net.JoinHostPort(host, port)
	}
	return scheme + "://" + host
}

// Usage writes the list of flags, their variables and their built-in
// defaults to w. It never prints configured values, which may be secret.
func Usage(w io.Writer) {
	for _, s := range settings {
		line := fmt.Sprintf("  --%-21s %s [%s]", s.name, s.help, EnvName(s.name))
		if s.def != "" {
			line += fmt.Sprintf(" (default %q)", s.def)
		}
		fmt.Fprintln(w, line)
	}
}

// stringFlag is a flag kept as text until validation; boolean settings
// may be given without a value (--trust-proxy).
type stringFlag struct {
	p      *string
	isBool bool
}

func (f *stringFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f *stringFlag) Set(s string) error { *f.p = s; return nil }

func (f *stringFlag) IsBoolFlag() bool { return f.isBool }

// parseUIDRange reads "FIRST-LAST" with 1000 <= FIRST <= LAST < 2^32-2:
// no root, no system user, no overflow.
func parseUIDRange(s string) (first, last uint32, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "-")
	f, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 32)
	l, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	if !found || err1 != nil || err2 != nil || f < 1000 || l < f || l >= 1<<32-2 {
		return 0, 0, false
	}
	return uint32(f), uint32(l), true
}

// parseAddrs parses a comma-separated list of IPv4 (v4) or IPv6 addresses,
// calling bad for each entry that is not one.
func parseAddrs(list string, v4 bool, bad func(format string, args ...any)) []netip.Addr {
	var out []netip.Addr
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		a, err := netip.ParseAddr(f)
		switch {
		case err != nil:
			bad("%q is not an IP address", f)
		case v4 && !a.Is4():
			bad("%q is not an IPv4 address", f)
		case !v4 && (!a.Is6() || a.Is4In6()):
			bad("%q is not an IPv6 address", f)
		default:
			out = append(out, a)
		}
	}
	return out
}
