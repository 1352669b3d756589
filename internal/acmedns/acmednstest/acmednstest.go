// Package acmednstest runs a real ACME certificate authority for tests:
// pebble (github.com/letsencrypt/pebble/v2) with pebble-challtestsrv
// answering its DNS queries, both on loopback, built from the module cache
// (go.mod lists them as tools, so a clean clone builds them). It also
// provides the DNS-01 provider that writes challenge records through
// challtestsrv's management API. Tests only.
package acmednstest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

// PebbleVersion is the version go.mod pins (the tool directive).
const PebbleVersion = "v2.10.1"

// Options configure a CA.
type Options struct {
	// HTTPPort is where pebble sends HTTP-01 validation requests (on
	// 127.0.0.1, which challtestsrv answers for every name): the plain
	// HTTP listener under test. 0: HTTP-01 is not used.
	HTTPPort int
	// Validity is the lifetime of issued certificates; default 90 days.
	Validity time.Duration
}

// CA is a running pebble with its challtestsrv.
type CA struct {
	DirectoryURL string         // ACME directory
	APIRoots     *x509.CertPool // trusts pebble's API certificate
	APIRootFile  string         // the same root, a PEM file (GANTRY_ACME_CA_ROOT)
	DNSAddr      string         // challtestsrv's DNS server, host:port
	mgmt         string         // challtestsrv's management API
	pebbleMgmt   string         // pebble's management API (roots)
	client       *http.Client   // for pebbleMgmt
}

var buildOnce sync.Once
var buildDir string
var buildErr error

// binaries builds pebble and pebble-challtestsrv once per machine and
// version, into a folder of the system's temporary folder (rebuilt when
// missing; each binary is built under a temporary name and renamed, so
// test binaries running side by side never see half a file).
func binaries(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "gantry-pebble-"+PebbleVersion)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		for _, cmd := range []string{"pebble", "pebble-challtestsrv"} {
			target := filepath.Join(dir, cmd)
			if _, err := os.Stat(target); err == nil {
				continue
			}
			tmp := fmt.Sprintf("%s.%d.tmp", target, os.Getpid())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			out, err := exec.CommandContext(ctx, "go", "build", "-o", tmp,
				"github.com/letsencrypt/pebble/v2/cmd/"+cmd).CombinedOutput()
			cancel()
			if err == nil {
				err = os.Rename(tmp, target)
			}
			if err != nil {
				os.Remove(tmp)
				buildErr = fmt.Errorf("go build %s: %v\n%s", cmd, err, out)
				return
			}
		}
		buildDir = dir
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// FreePort returns a loopback TCP port free at the time of the call, for
// a server started later (pebble's ports, gantry's listeners, which pebble
// is told of before they exist). It is taken at random below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range), and never twice in one
// process: a port from bind(0) is an ephemeral one, which the kernel may
// give to the next bind(0) of another test package or to an outgoing
// connection before the server binds it — "address already in use" in
// TestACME and TestACMERenewal when packages ran side by side.
func FreePort(t testing.TB) int {
	t.Helper()
	low, _ := ephemeralRange()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		port := 10000 + mrand.IntN(max(low-10000, 1000))
		if portsGiven[port] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		ln.Close()
		// UDP too: challtestsrv's DNS serves both on its port.
		pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		pc.Close()
		portsGiven[port] = true
		return port
	}
	t.Fatal("no free port below the ephemeral range")
	return 0
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralRange is the kernel's range for bind(0) and outgoing
// connections (32768–60999 unless configured), or that default.
func ephemeralRange() (low, high int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		low, _ = strconv.Atoi(f[0])
		high, _ = strconv.Atoi(f[1])
	}
	if low <= 11000 {
		return 32768, 60999
	}
	return low, high
}

func moduleDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/letsencrypt/pebble/v2").Output()
	if err != nil {
		t.Fatalf("locate pebble's module (run inside the repository: go list -m needs its go.mod): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Start runs challtestsrv and pebble until the test ends.
func Start(t testing.TB, o Options) *CA {
	t.Helper()
	bin := binaries(t)
	mod := moduleDir(t)
	dir := t.TempDir()

	dnsPort, mgmtPort := FreePort(t), FreePort(t)
	ca := &CA{
		DNSAddr: fmt.Sprintf("127.0.0.1:%d", dnsPort),
		mgmt:    fmt.Sprintf("http://127.0.0.1:%d", mgmtPort),
	}
	start(t, dir, "challtestsrv", exec.Command(filepath.Join(bin, "pebble-challtestsrv"),
		"-dnsserver", ca.DNSAddr, "-management", fmt.Sprintf("127.0.0.1:%d", mgmtPort),
		"-http01", "", "-https01", "", "-doh", "", "-tlsalpn01", "",
		"-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""))
	waitHTTP(t, ca.mgmt+"/", nil)

	validity := o.Validity
	if validity == 0 {
		validity = 90 * 24 * time.Hour
	}
	httpPort := o.HTTPPort
	if httpPort == 0 {
		httpPort = FreePort(t) // nothing listens: HTTP-01 fails
	}
	apiPort, pMgmtPort := FreePort(t), FreePort(t)
	conf := map[string]any{"pebble": map[string]any{
		"listenAddress":                  fmt.Sprintf("127.0.0.1:%d", apiPort),
		"managementListenAddress":        fmt.Sprintf("127.0.0.1:%d", pMgmtPort),
		"certificate":                    filepath.Join(mod, "test/certs/localhost/cert.pem"),
		"privateKey":                     filepath.Join(mod, "test/certs/localhost/key.pem"),
		"httpPort":                       httpPort,
		"tlsPort":                        FreePort(t),
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
		"retryAfter":                     map[string]int{"authz": 1, "order": 1},
		"keyAlgorithm":                   "ecdsa",
		"profiles": map[string]any{"default": map[string]any{
			"description": "test", "validityPeriod": int(validity.Seconds())}},
	}}
	b, _ := json.Marshal(conf)
	confPath := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(confPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "pebble"), "-config", confPath, "-dnsserver", ca.DNSAddr, "-strict=false")
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	start(t, dir, "pebble", cmd)

	ca.APIRootFile = filepath.Join(mod, "test/certs/pebble.minica.pem")
	root, err := os.ReadFile(ca.APIRootFile)
	if err != nil {
		t.Fatal(err)
	}
	ca.APIRoots = x509.NewCertPool()
	ca.APIRoots.AppendCertsFromPEM(root)
	ca.client = &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.APIRoots}}}
	ca.DirectoryURL = fmt.Sprintf("https://127.0.0.1:%d/dir", apiPort)
	ca.pebbleMgmt = fmt.Sprintf("https://127.0.0.1:%d", pMgmtPort)
	waitHTTP(t, ca.DirectoryURL, ca.client)
	return ca
}

// start runs cmd with its output in dir/name.log, shown when the test
// fails, and kills it when the test ends.
func start(t testing.TB, dir, name string, cmd *exec.Cmd) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("%s log (tail):\n%s", name, b)
		}
	})
}

func waitHTTP(t testing.TB, url string, c *http.Client) {
	t.Helper()
	if c == nil {
		c = &http.Client{Timeout: time.Second}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ManagementURL is challtestsrv's management API (/set-txt, /set-cname,
// /add-a, …).
func (ca *CA) ManagementURL() string { return ca.mgmt }

// IssuerRootPEM returns the root of the certificates pebble issues (it
// changes on every start), PEM-encoded.
func (ca *CA) IssuerRootPEM(t testing.TB) []byte {
	t.Helper()
	resp, err := ca.client.Get(ca.pebbleMgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// IssuerRoots returns a pool trusting the certificates pebble issues.
func (ca *CA) IssuerRoots(t testing.TB) *x509.CertPool {
	t.Helper()
	b := ca.IssuerRootPEM(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble's root: not PEM: %.200s", b)
	}
	return pool
}

// LoopbackClient returns an HTTP client as a browser on this machine
// would be for names pointed at 127.0.0.1: it trusts the certificates
// pebble issues, dials 127.0.0.1 at the port asked for whatever the host,
// opens a connection per request (each handshake is seen) and follows no
// redirect.
func (ca *CA) LoopbackClient(t testing.TB) *http.Client {
	t.Helper()
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: ca.IssuerRoots(t)},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				_, port, _ := net.SplitHostPort(addr)
				return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// post calls challtestsrv's management API.
func (ca *CA) post(ctx context.Context, path string, body any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ca.mgmt+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("challtestsrv %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}

// SetCNAME points host at target in challtestsrv's DNS.
func (ca *CA) SetCNAME(ctx context.Context, host, target string) error {
	return ca.post(ctx, "/set-cname", map[string]string{"host": dnsName(host), "target": dnsName(target)})
}

// SetA answers host's A queries with addrs rather than 127.0.0.1: with
// an address nothing listens on (127.0.0.2), its HTTP-01 validation fails.
func (ca *CA) SetA(ctx context.Context, host string, addrs ...string) error {
	return ca.post(ctx, "/add-a", map[string]any{"host": dnsName(host), "addresses": addrs})
}

// SetTXT adds a TXT value to host.
func (ca *CA) SetTXT(ctx context.Context, host, value string) error {
	return ca.post(ctx, "/set-txt", map[string]string{"host": dnsName(host), "value": value})
}

// ClearTXT removes every TXT value of host.
func (ca *CA) ClearTXT(ctx context.Context, host string) error {
	return ca.post(ctx, "/clear-txt", map[string]string{"host": dnsName(host)})
}

func dnsName(s string) string { return strings.TrimSuffix(s, ".") + "." }

// Provider is the DNS-01 provider writing to challtestsrv.
func (ca *CA) Provider() *Provider { return &Provider{ca: ca, values: map[string][]string{}} }

// Provider writes TXT records through challtestsrv's management API
// (/set-txt, /clear-txt). challtestsrv clears every value of a name at
// once, so the provider keeps the values and puts back the others.
type Provider struct {
	ca     *CA
	mu     sync.Mutex
	values map[string][]string
	Calls  []string // "append NAME" / "delete NAME", for assertions
}

// AppendRecords adds TXT records.
func (p *Provider) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range recs {
		rr := r.RR()
		if rr.Type != "TXT" {
			return nil, fmt.Errorf("type %s: TXT only", rr.Type)
		}
		name := libdns.AbsoluteName(rr.Name, zone)
		if err := p.ca.SetTXT(ctx, name, rr.Data); err != nil {
			return nil, err
		}
		p.values[name] = append(p.values[name], rr.Data)
		p.Calls = append(p.Calls, "append "+name)
	}
	return recs, nil
}

// DeleteRecords removes TXT records.
func (p *Provider) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range recs {
		rr := r.RR()
		name := libdns.AbsoluteName(rr.Name, zone)
		var keep []string
		for _, v := range p.values[name] {
			if v != rr.Data {
				keep = append(keep, v)
			}
		}
		p.values[name] = keep
		if err := p.ca.ClearTXT(ctx, name); err != nil {
			return nil, err
		}
		for _, v := range keep {
			if err := p.ca.SetTXT(ctx, name, v); err != nil {
				return nil, err
			}
		}
		p.Calls = append(p.Calls, "delete "+name)
	}
	return recs, nil
}

// CallLog returns a copy of Calls.
func (p *Provider) CallLog() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.Calls...)
}
