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
	GitHubClientID   string         // OAuth app; unset means GitHub connect is not configured
	GitHubSecret     string         // OAuth app secret
	GitHubAPIURL     *url.URL       // default https://api.github.com/
	GitHubWebURL     *url.URL       // default https://github.com/
	GitAllowHosts    []string       // hosts allowed although they resolve to private or loopback addresses
	Sandbox          string         // SandboxBwrap (default) or SandboxNone
	SandboxAllow     []netip.Prefix // restricted destinations sandboxed builds and apps may reach anyway; default none
	BuildTimeout     time.Duration  // default 10m
	NpmRegistry      *url.URL       // the npm registry builds install from (npm_config_registry); nil: npm's own
	PipIndexURL      *url.URL       // the Python package index builds install from (PIP_INDEX_URL); nil: pip's own
	BuildConcurrency int            // builds at once, default 1
	BuildCPUs        float64        // CPU quota of each build (install and build steps), in CPUs, default 1
	AppCPUs          float64        // CPU quota of each server app, in CPUs, default 1
	MaxPendingBuilds int            // builds one user may have waiting, default 3
	AppMemory        int64          // memory limit of each server app in bytes, default 512 MiB
	AppPids          int64          // process limit of each server app, default 256
	AppStartTimeout  time.Duration  // how long a server app may take to answer HTTP, default 60s
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
	LogFormat        string         // "text" (default) or "json"
	LogLevel         string         // "debug", "info" (default), "warn", "error"

	// secretKeySet records that the key came from the environment or a flag.
	secretKeySet bool
}

// Defaults of the settings that have one.
const (
	DefaultAddr             = ":8080"
	DefaultDataDir          = "./data"
	DefaultPublicURL        = "http://localhost:8080"
	DefaultLiveDomain       = "localhost"
	DefaultGitHubAPIURL     = "https://api.github.com/"
	DefaultGitHubWebURL     = "https://github.com/"
	DefaultBuildTimeout     = 10 * time.Minute
	DefaultBuildConcurrency = 1
	DefaultMaxPendingBuilds = 3
	DefaultBuildCPUs        = 1
	DefaultAppCPUs          = 1
	DefaultAppMemoryMiB     = 512
	DefaultAppPids          = 256
	DefaultAppStartTimeout  = 60 * time.Second
	DefaultBuildDiskMiB     = 4096
	DefaultBuildInodes      = 200_000
	DefaultAppDiskMiB       = 1024
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
	{"npm-registry", "", "npm registry builds install packages from, e.g. a campus mirror (default: npm's own); its addresses are added to the sandbox allow list"},
	{"pip-index-url", "", "Python package index builds install packages from, e.g. a campus mirror's /simple/ (default: pip's own); its addresses are added to the sandbox allow list"},
	{"build-concurrency", strconv.Itoa(DefaultBuildConcurrency), "builds run at once"},
	{"max-pending-builds", strconv.Itoa(DefaultMaxPendingBuilds), "builds one user may have waiting; one more deploy is refused (429)"},
	{"build-cpus", strconv.Itoa(DefaultBuildCPUs), "CPU quota of each build, in CPUs (0.5: half of one)"},
	{"app-cpus", strconv.Itoa(DefaultAppCPUs), "CPU quota of each server app, in CPUs (0.5: half of one)"},
	{"app-memory", strconv.Itoa(DefaultAppMemoryMiB), "memory limit of each server app, in MiB"},
	{"app-pids", strconv.Itoa(DefaultAppPids), "limit on processes and threads of each server app"},
	{"app-start-timeout", DefaultAppStartTimeout.String(), "how long a server app may take to answer HTTP after it starts"},
	{"build-disk", strconv.Itoa(DefaultBuildDiskMiB), "disk space a build may write (repository, dependencies, output, /tmp), in MiB"},
	{"build-inodes", strconv.Itoa(DefaultBuildInodes), "files and folders a build may create"},
	{"app-disk", strconv.Itoa(DefaultAppDiskMiB), "writable disk space of each server app beyond what its build left, in MiB"},
	{"sandbox-uids", DefaultSandboxUIDs, "range of uids reserved for accounts' builds and apps, one per account (FIRST-LAST)"},
	{"password-cost", strconv.Itoa(DefaultPasswordCost), "argon2id memory per password hash, in MiB (1–1024)"},
	{"token-ttl", DefaultTokenTTL.String(), "lifetime of sign-in tokens"},
	{"trust-proxy", "false", "take client IPs from X-Forwarded-For (only behind a reverse proxy that sets it)"},
	{"edge-loops", "on", "the edge's event loops answer common live-site requests in front of net/http: on, or off (net/http and the edge's reverse proxy serve everything)"},
	{"body-timeout", DefaultBodyTimeout.String(), "how long the whole body of an API request may take to arrive"},
	{"upload-timeout", DefaultUploadTimeout.String(), "how long the whole body of a request to a live site (an upload to an app) may take to arrive"},
	{"idle-timeout", DefaultIdleTimeout.String(), "how long a keep-alive connection may stay idle between requests"},
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
	}
	c.secretKeySet = c.SecretKey != ""

	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s (%s): %s", name, EnvName(name), fmt.Sprintf(format, args...)))
	}
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
	if c.BuildTimeout, err = time.ParseDuration(v("build-timeout")); err != nil {
		bad("build-timeout", "%q is not a duration (e.g. 10m, 90s)", v("build-timeout"))
	} else if c.BuildTimeout <= 0 {
		bad("build-timeout", "must be positive")
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
	if mib, err := strconv.ParseInt(v("build-disk"), 10, 64); err != nil {
		bad("build-disk", "%q is not a whole number of MiB", v("build-disk"))
	} else if mib < 16 || mib > 1<<24 {
		bad("build-disk", "must be from 16 to 16777216 (MiB)")
	} else {
		c.BuildDisk = mib << 20
	}
	if c.BuildInodes, err = strconv.ParseInt(v("build-inodes"), 10, 64); err != nil {
		bad("build-inodes", "%q is not a whole number", v("build-inodes"))
	} else if c.BuildInodes < 100 || c.BuildInodes > 1<<31 {
		bad("build-inodes", "must be from 100 to 2147483648")
	}
	if mib, err := strconv.ParseInt(v("app-disk"), 10, 64); err != nil {
		bad("app-disk", "%q is not a whole number of MiB", v("app-disk"))
	} else if mib < 1 || mib > 1<<24 {
		bad("app-disk", "must be from 1 to 16777216 (MiB)")
	} else {
		c.AppDisk = mib << 20
	}
	if first, last, ok := parseUIDRange(v("sandbox-uids")); !ok {
		bad("sandbox-uids", "%q is not a uid range FIRST-LAST between 1000 and 4294967293 (e.g. %s)", v("sandbox-uids"), DefaultSandboxUIDs)
	} else {
		c.SandboxUIDFirst, c.SandboxUIDCount = first, last-first+1
	}
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
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration:\n  %w", joinLines(errs))
	}
	return c, nil
}

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
	if c.secretKeySet {
		return nil
	}
	path := filepath.Join(c.DataDir, SecretKeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c.generateSecretKey(path)
	} else if err != nil {
		return fmt.Errorf("read secret key: %w", err)
	}
	if err := tighten(path, 0o077); err != nil {
		return fmt.Errorf("secret key: %w", err)
	}
	c.SecretKey = strings.TrimSpace(string(key))
	if len(c.SecretKey) < MinSecretKeyLen {
		return fmt.Errorf("secret key in %s is shorter than %d bytes: fix or delete it (deleting signs everyone out)", path, MinSecretKeyLen)
	}
	return nil
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

// generateSecretKey writes a new random key to path, failing rather than
// overwriting a file another process created meanwhile.
func (c *Config) generateSecretKey(path string) error {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("generate secret key: %w", err)
	}
	key := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return c.Prepare() // another process won the race: use its key
	} else if err != nil {
		return fmt.Errorf("write secret key: %w", err)
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write secret key: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write secret key: %w", err)
	}
	c.SecretKey = key
	return nil
}

// PublicHost returns the public URL's host name, lowercased, without port.
func (c *Config) PublicHost() string { return strings.ToLower(c.PublicURL.Hostname()) }

// LiveURL returns the URL of a deployment served on subdomain:
// scheme://<subdomain>.<live-domain>[:port], with no trailing slash. Scheme and port follow the
// public URL unless --live-url-scheme or --live-url-port say otherwise; a
// port that is the scheme's default (80 for http, 443 for https) or "none"
// is left out.
func (c *Config) LiveURL(subdomain string) string {
	scheme := c.LiveURLScheme
	if scheme == "" {
		scheme = c.PublicURL.Scheme
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
