package config_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry/internal/config"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Load(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"addr": c.Addr, "dataDir": c.DataDir, "db": c.DatabaseURL, "public": c.PublicURL.String(),
		"live": c.LiveDomain, "api": c.GitHubAPIURL.String(), "web": c.GitHubWebURL.String(),
		"sandbox": c.Sandbox, "timeout": c.BuildTimeout, "concurrency": c.BuildConcurrency,
		"pending": c.MaxPendingBuilds, "cost": c.PasswordCost, "ttl": c.TokenTTL, "proxy": c.TrustProxy, "allow": len(c.GitAllowHosts),
		"secret": c.SecretKey, "gh": c.GitHubClientID,
		"appMemory": c.AppMemory, "appPids": c.AppPids, "appStart": c.AppStartTimeout,
		"buildCPUs": c.BuildCPUs, "appCPUs": c.AppCPUs, "edgeLoops": c.EdgeLoops,
		"body": c.BodyTimeout, "upload": c.UploadTimeout, "idle": c.IdleTimeout,
		"appIdle": c.AppIdle, "wakePage": c.WakePageAfter,
	}
	want := map[string]any{
		"addr": ":8080", "dataDir": "./data", "db": "data/gantry.db", "public": "http://localhost:8080/",
		"live": "localhost", "api": "https://api.github.com/", "web": "https://github.com/",
		"sandbox": "bwrap", "timeout": 10 * time.Minute, "concurrency": 1,
		"pending": 3, "cost": 19, "ttl": 7 * 24 * time.Hour, "proxy": false, "allow": 0,
		"secret": "", "gh": "",
		"appMemory": int64(512 << 20), "appPids": int64(256), "appStart": time.Minute,
		"buildCPUs": 1.0, "appCPUs": 1.0, "edgeLoops": true,
		"body": 30 * time.Second, "upload": 5 * time.Minute, "idle": time.Minute,
		"appIdle": 15 * time.Minute, "wakePage": 3 * time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if got, want := c.LiveURL("blog"), "http://blog.localhost:8080"; got != want {
		t.Errorf("LiveURL = %q, want %q", got, want)
	}
}

func TestFlagsOverrideEnv(t *testing.T) {
	t.Parallel()
	c, err := config.Load(
		[]string{"--addr", "127.0.0.1:9000", "--sandbox=none", "--trust-proxy", "--git-allow-hosts", " Git.Campus.EDU , 10.0.0.5,"},
		env(map[string]string{
			"GANTRY_ADDR":               ":1",
			"GANTRY_DATA_DIR":           "/srv/gantry",
			"GANTRY_DATABASE_URL":       "postgres://u:p@db:5432/gantry?sslmode=disable",
			"GANTRY_PUBLIC_URL":         "https://gantry.example.com",
			"GANTRY_LIVE_DOMAIN":        "Apps.Example.NET.",
			"GANTRY_BUILD_TIMEOUT":      "90s",
			"GANTRY_BUILD_CONCURRENCY":  "4",
			"GANTRY_MAX_PENDING_BUILDS": "10",
			"GANTRY_BUILD_CPUS":         "0.5",
			"GANTRY_APP_CPUS":           "2",
			"GANTRY_SANDBOX":            "bwrap",
			"GANTRY_SANDBOX_ALLOW":      "10.20.0.5, fd12:3456::/48,10.30.0.0/16",
			"GANTRY_NPM_REGISTRY":       "http://10.20.0.5:4873",
			"GANTRY_PIP_INDEX_URL":      "https://pypi.campus.edu/simple",
			"GANTRY_SECRET_KEY":         strings.Repeat("k", 32),
			"GANTRY_BODY_TIMEOUT":       "1m",
			"GANTRY_UPLOAD_TIMEOUT":     "20m",
			"GANTRY_IDLE_TIMEOUT":       "15s",
		}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" || c.Sandbox != "none" || !c.TrustProxy || c.DataDir != "/srv/gantry" ||
		c.DatabaseURL != "postgres://u:p@db:5432/gantry?sslmode=disable" || c.LiveDomain != "apps.example.net" ||
		c.BuildTimeout != 90*time.Second || c.BuildConcurrency != 4 || c.MaxPendingBuilds != 10 || c.SecretKey != strings.Repeat("k", 32) ||
		c.BuildCPUs != 0.5 || c.AppCPUs != 2 ||
		c.BodyTimeout != time.Minute || c.UploadTimeout != 20*time.Minute || c.IdleTimeout != 15*time.Second {
		t.Errorf("got %+v", c)
	}
	if diff := cmp.Diff([]string{"git.campus.edu", "10.0.0.5"}, c.GitAllowHosts); diff != "" {
		t.Errorf("allow hosts (-want +got):\n%s", diff)
	}
	if c.NpmRegistry.String() != "http://10.20.0.5:4873/" || c.PipIndexURL.String() != "https://pypi.campus.edu/simple/" {
		t.Errorf("registries: got %s and %s", c.NpmRegistry, c.PipIndexURL)
	}
	if got, want := fmt.Sprint(c.SandboxAllow), "[10.20.0.5/32 fd12:3456::/48 10.30.0.0/16]"; got != want {
		t.Errorf("sandbox allow: got %s, want %s", got, want)
	}
	if got, want := c.PublicHost(), "gantry.example.com"; got != want {
		t.Errorf("PublicHost = %q, want %q", got, want)
	}
	if got, want := c.LiveURL("blog"), "https://blog.apps.example.net"; got != want {
		t.Errorf("LiveURL = %q, want %q", got, want)
	}
}

func TestLiveURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		public, scheme, port, want string
	}{
		{"http://localhost:8080", "", "", "http://a.localhost:8080"},
		{"https://gantry.dev", "", "", "https://a.localhost"},
		{"https://gantry.dev:443", "", "", "https://a.localhost"},
		{"http://localhost:8080", "https", "none", "https://a.localhost"},
		{"http://localhost:8080", "https", "8443", "https://a.localhost:8443"},
		{"http://localhost:80", "", "", "http://a.localhost"},
		{"http://localhost:8080", "", "80", "http://a.localhost"},
	} {
		c, err := config.Load([]string{"--public-url", tc.public, "--live-url-scheme", tc.scheme, "--live-url-port", tc.port}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.LiveURL("a"); got != tc.want {
			t.Errorf("public %s scheme %q port %q: LiveURL = %q, want %q", tc.public, tc.scheme, tc.port, got, tc.want)
		}
	}
}

// TestEdgeLoops: GANTRY_EDGE_LOOPS turns the loops off (any case), and
// the flag wins over it.
func TestCustomDomainSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(nil, env(map[string]string{
		"GANTRY_PUBLIC_IPV4": " 203.0.113.7, 203.0.113.8", "GANTRY_PUBLIC_IPV6": "2001:db8::7", "GANTRY_DNS_RESOLVER": "127.0.0.1:5353",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintln(c.PublicIPv4, c.PublicIPv6, c.DNSResolver); got != "[203.0.113.7 203.0.113.8] [2001:db8::7] 127.0.0.1:5353\n" {
		t.Errorf("got %s", got)
	}
}

func TestEdgeLoops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "Off", false},
		{nil, "on", true},
		{[]string{"--edge-loops=on"}, "off", true},
		{[]string{"--edge-loops", "off"}, "", false},
	} {
		c, err := config.Load(tc.args, env(map[string]string{"GANTRY_EDGE_LOOPS": tc.env}), io.Discard)
		if err != nil || c.EdgeLoops != tc.want {
			t.Errorf("%q with GANTRY_EDGE_LOOPS=%q: got %v, %v; want %v", tc.args, tc.env, c != nil && c.EdgeLoops, err, tc.want)
		}
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad duration", []string{"--build-timeout", "ten minutes"}, nil, `--build-timeout (GANTRY_BUILD_TIMEOUT): "ten minutes" is not a duration`},
		{"negative duration", nil, map[string]string{"GANTRY_BUILD_TIMEOUT": "-1s"}, "--build-timeout (GANTRY_BUILD_TIMEOUT): must be positive"},
		{"concurrency zero", []string{"--build-concurrency=0"}, nil, "--build-concurrency (GANTRY_BUILD_CONCURRENCY): must be at least 1"},
		{"concurrency text", nil, map[string]string{"GANTRY_BUILD_CONCURRENCY": "two"}, `"two" is not a whole number`},
		{"pending zero", nil, map[string]string{"GANTRY_MAX_PENDING_BUILDS": "0"}, "--max-pending-builds (GANTRY_MAX_PENDING_BUILDS): must be at least 1"},
		{"pending text", []string{"--max-pending-builds=many"}, nil, `--max-pending-builds (GANTRY_MAX_PENDING_BUILDS): "many" is not a whole number`},
		{"app memory", []string{"--app-memory=8"}, nil, "--app-memory (GANTRY_APP_MEMORY): must be from 16 to 1048576 (MiB)"},
		{"app memory text", nil, map[string]string{"GANTRY_APP_MEMORY": "1G"}, `"1G" is not a whole number of MiB`},
		{"build cpus", []string{"--build-cpus=0"}, nil, "--build-cpus (GANTRY_BUILD_CPUS): must be from 0.01 to 1024 (CPUs)"},
		{"app cpus text", nil, map[string]string{"GANTRY_APP_CPUS": "one"}, `--app-cpus (GANTRY_APP_CPUS): "one" is not a number of CPUs`},
		{"app pids", []string{"--app-pids=2"}, nil, "--app-pids (GANTRY_APP_PIDS): must be at least 8"},
		{"app start timeout", []string{"--app-start-timeout=100ms"}, nil, "--app-start-timeout (GANTRY_APP_START_TIMEOUT): must be at least 1s"},
		{"app idle", nil, map[string]string{"GANTRY_APP_IDLE": "500ms"}, "--app-idle (GANTRY_APP_IDLE): must be 0 (apps never sleep) or at least 1s"},
		{"app idle text", nil, map[string]string{"GANTRY_APP_IDLE": "soon"}, `--app-idle (GANTRY_APP_IDLE): "soon" is not a duration`},
		{"wake page", []string{"--wake-page-after=-1s"}, nil, "--wake-page-after (GANTRY_WAKE_PAGE_AFTER): must be positive"},
		{"sandbox", []string{"--sandbox", "docker"}, nil, `--sandbox (GANTRY_SANDBOX): "docker" must be bwrap or none`},
		{"public url scheme", []string{"--public-url", "ftp://x"}, nil, `--public-url (GANTRY_PUBLIC_URL): "ftp://x" must start with http:// or https://`},
		{"public url no host", []string{"--public-url", "http://"}, nil, "has no host"},
		{"public url path", []string{"--public-url", "http://x/gantry"}, nil, "must not have a path"},
		{"public url query", []string{"--public-url", "http://x/?a=b"}, nil, "must not carry a query"},
		{"github url", []string{"--github-api-url", "api.github.com"}, nil, "--github-api-url (GANTRY_GITHUB_API_URL)"},
		{"live domain", []string{"--live-domain", "bad_domain"}, nil, `--live-domain (GANTRY_LIVE_DOMAIN): "bad_domain" is not a domain name`},
		{"live domain empty label", []string{"--live-domain", "a..b"}, nil, "is not a domain name"},
		{"live scheme", []string{"--live-url-scheme", "ftp"}, nil, `"ftp" must be http or https`},
		{"live port", []string{"--live-url-port", "99999"}, nil, "must be a port number"},
		{"addr", []string{"--addr", "8080"}, nil, `--addr (GANTRY_ADDR): "8080" is not a host:port listen address`},
		{"short secret", nil, map[string]string{"GANTRY_SECRET_KEY": "short"}, "must be at least 32 bytes long"},
		{"github half", []string{"--github-client-id", "abc"}, nil, "must be set together"},
		{"allow hosts", []string{"--git-allow-hosts", "http://x/"}, nil, "is not a host name or IP address"},
		{"sandbox allow", nil, map[string]string{"GANTRY_SANDBOX_ALLOW": "10.0.0.1,mirror.campus.edu"}, `--sandbox-allow (GANTRY_SANDBOX_ALLOW): "mirror.campus.edu" is not an IP address or CIDR prefix`},
		{"npm registry", nil, map[string]string{"GANTRY_NPM_REGISTRY": "ftp://mirror"}, `--npm-registry (GANTRY_NPM_REGISTRY): "ftp://mirror" must start with http:// or https://`},
		{"pip index", []string{"--pip-index-url", "https://u:p@mirror/simple"}, nil, `--pip-index-url (GANTRY_PIP_INDEX_URL): "https://u:p@mirror/simple" must not carry a query, fragment or user name`},
		{"sandbox allow bits", []string{"--sandbox-allow", "10.20.0.5/16"}, nil, `--sandbox-allow (GANTRY_SANDBOX_ALLOW): "10.20.0.5/16" has bits set beyond its length: did you mean 10.20.0.0/16?`},
		{"password cost", []string{"--password-cost", "0"}, nil, "must be from 1 to 1024"},
		{"token ttl", []string{"--token-ttl", "1s"}, nil, "must be at least 1m"},
		{"trust proxy", []string{"--trust-proxy=maybe"}, nil, `"maybe" must be true or false`},
		{"edge loops", nil, map[string]string{"GANTRY_EDGE_LOOPS": "false"}, `--edge-loops (GANTRY_EDGE_LOOPS): "false" must be on or off`},
		{"body timeout", []string{"--body-timeout=30"}, nil, `--body-timeout (GANTRY_BODY_TIMEOUT): "30" is not a duration`},
		{"upload timeout", nil, map[string]string{"GANTRY_UPLOAD_TIMEOUT": "500ms"}, "--upload-timeout (GANTRY_UPLOAD_TIMEOUT): must be at least 1s"},
		{"idle timeout", nil, map[string]string{"GANTRY_IDLE_TIMEOUT": "-1m"}, "--idle-timeout (GANTRY_IDLE_TIMEOUT): must be at least 1s"},
		{"database scheme", []string{"--database-url", "mysql://x"}, nil, `scheme "mysql" is not supported`},
		{"database url", nil, map[string]string{"GANTRY_DATABASE_URL": "postgres://u:hunter2@%zz/db"}, "--database-url (GANTRY_DATABASE_URL): is not a valid URL"},
		{"log format", []string{"--log-format", "xml"}, nil, "must be text or json"},
		{"public ipv4", nil, map[string]string{"GANTRY_PUBLIC_IPV4": "203.0.113.7,2001:db8::1"}, `--public-ipv4 (GANTRY_PUBLIC_IPV4): "2001:db8::1" is not an IPv4 address`},
		{"public ipv6", []string{"--public-ipv6", "gantry.example"}, nil, `--public-ipv6 (GANTRY_PUBLIC_IPV6): "gantry.example" is not an IP address`},
		{"dns resolver", nil, map[string]string{"GANTRY_DNS_RESOLVER": "127.0.0.1"}, `--dns-resolver (GANTRY_DNS_RESOLVER): "127.0.0.1" must be host:port`},
		{"node id", []string{"--node-id", "Node_1"}, nil, `--node-id (GANTRY_NODE_ID): "node_1" must be 1 to 63 lowercase letters`},
		{"peer addr", []string{"--peer-addr", "10.0.0.5", "--database-url", "postgres://u@db/g"}, map[string]string{"GANTRY_SECRET_KEY": strings.Repeat("k", 32)}, `--peer-addr (GANTRY_PEER_ADDR): "10.0.0.5" must be host:port`},
		{"replica on sqlite", []string{"--peer-addr", "10.0.0.5:8081"}, map[string]string{"GANTRY_SECRET_KEY": strings.Repeat("k", 32)}, "--peer-addr (GANTRY_PEER_ADDR): makes this a replica, and replicas share one PostgreSQL database: set GANTRY_DATABASE_URL=postgres://…"},
		{"replica without a shared key", []string{"--peer-addr", "10.0.0.5:8081", "--database-url", "postgres://u@db/g"}, nil, "--secret-key (GANTRY_SECRET_KEY): must be set, the same on every replica"},
		{"roles unknown", nil, map[string]string{"GANTRY_ROLES": "api,edge,runner,worker"}, `--roles (GANTRY_ROLES): "worker" is not a role`},
		{"roles without runner", nil, map[string]string{"GANTRY_ROLES": "api,edge,builder"}, "--roles (GANTRY_ROLES): must include runner for now"},
		{"lease", []string{"--lease", "100ms"}, nil, "--lease (GANTRY_LEASE): must be from 1s to 10m"},
		{"extra argument", []string{"now"}, nil, `unexpected argument "now"`},
		{"unknown flag", []string{"--nope"}, nil, "flag provided but not defined: -nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(tc.args, env(tc.env), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	t.Parallel()
	_, err := config.Load([]string{"--sandbox=x", "--build-concurrency=0"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--sandbox") || !strings.Contains(err.Error(), "--build-concurrency") {
		t.Errorf("got %v, want both errors", err)
	}
}

func TestSecretKeyGeneratedOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	load := func() *config.Config {
		t.Helper()
		c, err := config.Load([]string{"--data-dir", dir}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Prepare(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := load()
	if len(first.SecretKey) != 64 {
		t.Errorf("got a key of %d characters, want 64", len(first.SecretKey))
	}
	info, err := os.Stat(filepath.Join(dir, config.SecretKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("got key file mode %o, want 600", mode)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("data folder: %v, mode %v; want 700", err, info.Mode().Perm())
	}
	if second := load(); second.SecretKey != first.SecretKey {
		t.Errorf("the key changed between starts")
	}

	// A folder and key an older version (or a hand) left open to others
	// are tightened at the next start; the folder keeps its search bits.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, config.SecretKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	load()
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o711 {
		t.Errorf("data folder left 0777: %v, mode %v; want 711", err, info.Mode().Perm())
	}
	if info, err := os.Stat(filepath.Join(dir, config.SecretKeyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file left 0644: %v, mode %v; want 600", err, info.Mode().Perm())
	}

	// A configured key wins and is not written.
	dir2 := t.TempDir()
	c, err := config.Load([]string{"--data-dir", dir2}, env(map[string]string{"GANTRY_SECRET_KEY": strings.Repeat("s", 40)}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	if c.SecretKey != strings.Repeat("s", 40) {
		t.Errorf("configured key replaced")
	}
	if _, err := os.Stat(filepath.Join(dir2, config.SecretKeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key file was written although a key was configured: %v", err)
	}

	// A truncated key file is an error, not silently replaced.
	dir3 := t.TempDir()
	os.WriteFile(filepath.Join(dir3, config.SecretKeyFile), []byte("short\n"), 0o600)
	c, _ = config.Load([]string{"--data-dir", dir3}, env(nil), io.Discard)
	if err := c.Prepare(); err == nil || !strings.Contains(err.Error(), "shorter than 32 bytes") {
		t.Errorf("got %v, want a short-key error", err)
	}
}

func TestHelpHidesConfiguredValues(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	_, err := config.Load([]string{"-h"}, env(map[string]string{
		"GANTRY_SECRET_KEY":           "configured-secret-configured-secret",
		"GANTRY_GITHUB_CLIENT_SECRET": "gh-client-secret",
	}), &out)
	if err == nil {
		t.Fatal("-h did not stop")
	}
	if !strings.Contains(out.String(), "--secret-key") || !strings.Contains(out.String(), "[GANTRY_BUILD_TIMEOUT] (default \"10m0s\")") {
		t.Errorf("usage: %s", out.String())
	}
	if strings.Contains(out.String(), "configured-secret") || strings.Contains(out.String(), "gh-client-secret") {
		t.Errorf("usage shows a configured secret: %s", out.String())
	}
}

// TestTLS: the HTTPS settings, each mistake reported with its remedy.
func TestTLS(t *testing.T) {
	t.Parallel()
	c, err := config.Load(nil, env(nil), io.Discard)
	if err != nil || c.TLS != config.TLSOff || c.TLSOn() || c.HTTPSAddr != ":443" || c.ACMECA != config.DefaultACMECA {
		t.Fatalf("defaults: got %q %q %q, %v", c.TLS, c.HTTPSAddr, c.ACMECA, err)
	}
	acme := map[string]string{
		"GANTRY_TLS": "acme", "GANTRY_PUBLIC_URL": "https://gantry.example.com", "GANTRY_LIVE_DOMAIN": "apps.example.com",
		"GANTRY_DNS_PROVIDER": "cloudflare", "GANTRY_CLOUDFLARE_API_TOKEN": "tok",
	}
	c, err = config.Load(nil, env(acme), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.LiveURL("blog"), "https://blog.apps.example.com"; got != want {
		t.Errorf("LiveURL = %q, want %q", got, want)
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range acme {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"bad mode", with("GANTRY_TLS", "on"), `--tls (GANTRY_TLS): "on" must be off, acme or files`},
		{"http public URL", with("GANTRY_PUBLIC_URL", "http://gantry.example.com"), "--public-url (GANTRY_PUBLIC_URL): must start with https:// when --tls is acme"},
		{"no provider", with("GANTRY_DNS_PROVIDER", ""), "set GANTRY_DNS_PROVIDER to rfc2136, cloudflare or route53"},
		{"unknown provider", with("GANTRY_DNS_PROVIDER", "godaddy"), `"godaddy" must be rfc2136, cloudflare or route53`},
		{"cloudflare without token", with("GANTRY_CLOUDFLARE_API_TOKEN", ""), "cloudflare needs GANTRY_CLOUDFLARE_API_TOKEN"},
		{"rfc2136 without key", with("GANTRY_DNS_PROVIDER", "rfc2136", "GANTRY_RFC2136_SERVER", "ns1.example.com:53"), "rfc2136 needs GANTRY_RFC2136_SERVER"},
		{"rfc2136 bad server", with("GANTRY_DNS_PROVIDER", "rfc2136", "GANTRY_RFC2136_SERVER", "ns1", "GANTRY_RFC2136_KEY_NAME", "k", "GANTRY_RFC2136_SECRET", "cw=="), `"ns1" is not host:port`},
		{"rfc2136 bad algorithm", with("GANTRY_DNS_PROVIDER", "rfc2136", "GANTRY_RFC2136_SERVER", "ns1:53", "GANTRY_RFC2136_KEY_NAME", "k", "GANTRY_RFC2136_SECRET", "cw==", "GANTRY_RFC2136_KEY_ALG", "md5"), `"md5" must be hmac-sha256`},
		{"localhost live domain", with("GANTRY_LIVE_DOMAIN", "localhost"), `"localhost" cannot get a public certificate`},
		{"plain CA", with("GANTRY_ACME_CA", "http://ca.example/dir"), "must be an https:// ACME directory URL"},
		{"bad https addr", with("GANTRY_HTTPS_ADDR", "443"), `"443" is not a host:port listen address`},
		{"http live URLs", with("GANTRY_LIVE_URL_SCHEME", "http"), "must be https (or unset)"},
		{"files without key", with("GANTRY_TLS", "files", "GANTRY_TLS_CERT", "/etc/cert.pem"), "files needs --tls-cert and --tls-key"},
	} {
		_, err := config.Load(nil, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, ok := range []map[string]string{
		with("GANTRY_DNS_PROVIDER", "route53"),
		with("GANTRY_DNS_PROVIDER", "rfc2136", "GANTRY_RFC2136_SERVER", "ns1.example.com:53", "GANTRY_RFC2136_KEY_NAME", "gantry", "GANTRY_RFC2136_SECRET", "cw=="),
		with("GANTRY_TLS", "files", "GANTRY_TLS_CERT", "/c.pem", "GANTRY_TLS_KEY", "/k.pem", "GANTRY_DNS_PROVIDER", "", "GANTRY_LIVE_DOMAIN", "localhost"),
	} {
		if _, err := config.Load(nil, env(ok), io.Discard); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}

// A replica's settings: the node id is generated once into the data
// folder (the same on every start), --node-id names it instead; a replica
// on PostgreSQL with a shared key loads, and may leave out the builder role.
func TestReplicaSettings(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	load := func(args ...string) *config.Config {
		t.Helper()
		c, err := config.Load(append([]string{"--data-dir", dir}, args...), env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Prepare(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := load()
	if !strings.HasPrefix(first.NodeID, "node-") || first.Replica() || !first.HasRole(config.RoleBuilder) || first.Lease != config.DefaultLease {
		t.Fatalf("defaults: node %q replica %v roles %v lease %v", first.NodeID, first.Replica(), first.Roles, first.Lease)
	}
	if again := load(); again.NodeID != first.NodeID {
		t.Fatalf("node id changed across starts: %q then %q", first.NodeID, again.NodeID)
	}
	if named := load("--node-id", "web-2"); named.NodeID != "web-2" {
		t.Fatalf("--node-id: %q", named.NodeID)
	}
	c, err := config.Load([]string{"--data-dir", dir, "--peer-addr", "10.0.0.5:8081", "--database-url", "postgres://u@db/g",
		"--roles", "api,edge,runner", "--lease", "3s"}, env(map[string]string{"GANTRY_SECRET_KEY": strings.Repeat("k", 32)}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Replica() || c.HasRole(config.RoleBuilder) || !c.HasRole(config.RoleRunner) || c.Lease != 3*time.Second {
		t.Fatalf("replica: %v roles %v lease %v", c.Replica(), c.Roles, c.Lease)
	}
}
