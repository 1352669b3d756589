package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/acmedns/acmednstest"
	"github.com/gantryhq/gantry/internal/tlsedge"
)

// selfSigned writes a certificate for names and its key into dir.
func selfSigned(t *testing.T, dir string, names ...string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// TestServeTLSFiles runs `gantry serve` with GANTRY_TLS=files: the API and
// live sites over HTTPS (HTTP/2, HSTS on the public host only), plain HTTP
// redirected.
func TestServeTLSFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	dir := reachableDir(t)
	certFile, keyFile, pool := selfSigned(t, dir, "gantry.test", "*.apps.test")
	var logs lockedBuffer
	ready, readyTLS := make(chan net.Addr, 1), make(chan net.Addr, 1)
	m := &Main{
		Stdout: io.Discard, Stderr: &logs,
		Getenv: testEnv(map[string]string{
			"GANTRY_DATA_DIR": filepath.Join(dir, "data"), "GANTRY_PASSWORD_COST": "1",
			"GANTRY_TLS": "files", "GANTRY_TLS_CERT": certFile, "GANTRY_TLS_KEY": keyFile,
			"GANTRY_PUBLIC_URL": "https://gantry.test", "GANTRY_LIVE_DOMAIN": "apps.test",
		}),
		Ready:      func(a net.Addr) { ready <- a },
		ReadyHTTPS: func(a net.Addr) { readyTLS <- a },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--https-addr", "127.0.0.1:0", "--log-format", "json"})
	}()
	var plainAddr, tlsAddr net.Addr
	for plainAddr == nil || tlsAddr == nil {
		select {
		case plainAddr = <-ready:
		case tlsAddr = <-readyTLS:
		case code := <-exit:
			t.Fatalf("serve exited with %d:\n%s", code, logs.String())
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not start:\n%s", logs.String())
		}
	}
	client := &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if strings.HasSuffix(addr, ":443") {
					addr = tlsAddr.String()
				} else {
					addr = plainAddr.String()
				}
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	res, err := client.Get("https://gantry.test/api/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 || res.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
		t.Errorf("health over HTTPS: got %d %s HSTS %q, want 200 HTTP/2 with HSTS", res.StatusCode, res.Proto, res.Header.Get("Strict-Transport-Security"))
	}
	res, err = client.Get("https://blog.apps.test/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(string(body), "No app lives at blog.apps.test") || res.Header.Get("Strict-Transport-Security") != "" {
		t.Errorf("live host over HTTPS: got %d HSTS %q %.200s", res.StatusCode, res.Header.Get("Strict-Transport-Security"), body)
	}
	res, err = client.Get("http://blog.apps.test/x?y=1")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "https://blog.apps.test/x?y=1" {
		t.Errorf("plain HTTP: got %d %q, want 308 to https://blog.apps.test/x?y=1", res.StatusCode, res.Header.Get("Location"))
	}

	// One line at start-up says whether HTTPS has kernel TLS, and without
	// it what is missing and what that costs.
	var ktls []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "kernel TLS") {
			ktls = append(ktls, line)
		}
	}
	if k := tlsedge.KernelTLS(); len(ktls) != 1 || !k.Available && (!strings.Contains(ktls[0], "without kernel TLS") ||
		!strings.Contains(ktls[0], k.Missing[:min(20, len(k.Missing))]) || !strings.Contains(ktls[0], "CPU per request")) {
		t.Errorf("want one start-up line on kernel TLS (available %v, missing %q); got %d:\n%s", k.Available, k.Missing, len(ktls), strings.Join(ktls, "\n"))
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("serve exited with %d:\n%s", code, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestServeTLSMisconfigured: serve refuses to start with one line saying
// what to fix.
func TestServeTLSMisconfigured(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GANTRY_TLS": "files", "GANTRY_TLS_CERT": filepath.Join(dir, "none.pem"), "GANTRY_TLS_KEY": filepath.Join(dir, "none.key"),
			"GANTRY_PUBLIC_URL": "https://gantry.test"}, "set GANTRY_TLS_CERT and GANTRY_TLS_KEY to readable PEM files"},
		{map[string]string{"GANTRY_TLS": "acme", "GANTRY_PUBLIC_URL": "https://gantry.test", "GANTRY_LIVE_DOMAIN": "apps.test",
			"GANTRY_DNS_PROVIDER": "cloudflare"}, "cloudflare needs GANTRY_CLOUDFLARE_API_TOKEN"},
	} {
		var stderr lockedBuffer
		tc.env["GANTRY_DATA_DIR"] = filepath.Join(dir, "data")
		tc.env["GANTRY_SANDBOX"] = "none"
		m := &Main{Stdout: io.Discard, Stderr: &stderr, Getenv: testEnv(tc.env)}
		code := m.Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--https-addr", "127.0.0.1:0"})
		if code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("got exit %d, stderr:\n%s\nwant a line with %q", code, stderr.String(), tc.want)
		}
	}
}

// TestServeACME runs `gantry serve` with GANTRY_TLS=acme against pebble:
// the wildcard of the live domain by DNS-01 through the rfc2136 provider
// (acmednstest's DNS server applies the updates to challtestsrv), the
// public host by HTTP-01 on the plain listener, a site served over HTTPS
// with the wildcard, HSTS on the public host, and a custom name refused
// (no decision function is wired).
func TestServeACME(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pebble")
	}
	httpPort, httpsPort := acmednstest.FreePort(t), acmednstest.FreePort(t)
	ca := acmednstest.Start(t, acmednstest.Options{HTTPPort: httpPort})
	dnsAddr := ca.DNSServer(t, "apps.test")
	dir := reachableDir(t)
	srv := startACMEServe(t, ca, dnsAddr, httpPort, httpsPort, map[string]string{
		"GANTRY_DATA_DIR": filepath.Join(dir, "data"), "GANTRY_PASSWORD_COST": "1",
	})
	logs, client := srv.logs, srv.client
	get := func(url string) *http.Response {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			res, err := client.Get(url)
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v\n%s", url, err, logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	res := get(fmt.Sprintf("https://blog.apps.test:%d/", httpsPort))
	if leaf := res.TLS.PeerCertificates[0]; res.StatusCode != 404 || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "*.apps.test" {
		t.Errorf("site: got %d with a certificate for %v, want the placeholder 404 with *.apps.test", res.StatusCode, leaf.DNSNames)
	}
	res = get(fmt.Sprintf("https://gantry.test:%d/api/health", httpsPort))
	if res.StatusCode != 200 || res.Header.Get("Strict-Transport-Security") == "" || res.TLS.PeerCertificates[0].DNSNames[0] != "gantry.test" {
		t.Errorf("public host: got %d HSTS %q cert %v", res.StatusCode, res.Header.Get("Strict-Transport-Security"), res.TLS.PeerCertificates[0].DNSNames)
	}
	if _, err := client.Get(fmt.Sprintf("https://custom.example.org:%d/", httpsPort)); err == nil {
		t.Error("custom.example.org: served over HTTPS, want the handshake refused (no decision function)")
	}
	res, err := client.Get(fmt.Sprintf("http://blog.apps.test:%d/p", httpPort))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := fmt.Sprintf("https://blog.apps.test:%d/p", httpsPort); res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
		t.Errorf("plain HTTP: got %d %q, want 308 %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	if out := logs.String(); !strings.Contains(out, `"msg":"certificate obtained"`) {
		t.Errorf("logs lack certificate obtained:\n%s", out)
	}
	srv.stop(t)
}

// acmeServe is a `gantry serve` with GANTRY_TLS=acme against pebble
// (startACMEServe).
type acmeServe struct {
	logs   *lockedBuffer
	client *http.Client // HTTPS to any name, dialled on loopback, trusting pebble's issuer; no redirects followed
	cancel context.CancelFunc
	exit   chan int
}

// startACMEServe runs `gantry serve` on httpPort and httpsPort (JSON logs)
// with the ACME settings the ACME tests share — pebble (ca), the rfc2136
// DNS provider on dnsAddr (challtestsrv behind it), the public URL
// https://gantry.test:httpsPort, the live domain apps.test — and env's,
// and waits until it serves HTTPS.
func startACMEServe(t *testing.T, ca *acmednstest.CA, dnsAddr string, httpPort, httpsPort int, env map[string]string) *acmeServe {
	t.Helper()
	all := map[string]string{
		"GANTRY_TLS": "acme", "GANTRY_ACME_CA": ca.DirectoryURL, "GANTRY_ACME_CA_ROOT": ca.APIRootFile,
		"GANTRY_ACME_RESOLVERS": dnsAddr, "GANTRY_DNS_PROVIDER": "rfc2136", "GANTRY_RFC2136_SERVER": dnsAddr,
		"GANTRY_RFC2136_KEY_NAME": acmednstest.TSIGKeyName, "GANTRY_RFC2136_SECRET": acmednstest.TSIGSecret,
		"GANTRY_PUBLIC_URL": fmt.Sprintf("https://gantry.test:%d", httpsPort), "GANTRY_LIVE_DOMAIN": "apps.test",
	}
	maps.Copy(all, env)
	s := &acmeServe{logs: new(lockedBuffer), exit: make(chan int, 1)}
	readyTLS := make(chan net.Addr, 1)
	m := &Main{Stdout: io.Discard, Stderr: s.logs, Getenv: testEnv(all), ReadyHTTPS: func(a net.Addr) { readyTLS <- a }}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	t.Cleanup(cancel)
	go func() {
		s.exit <- m.Run(ctx, []string{"serve", "--addr", fmt.Sprintf("127.0.0.1:%d", httpPort),
			"--https-addr", fmt.Sprintf("127.0.0.1:%d", httpsPort), "--log-format", "json"})
	}()
	select {
	case <-readyTLS:
	case code := <-s.exit:
		t.Fatalf("serve exited with %d:\n%s", code, s.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", s.logs.String())
	}
	s.client = ca.LoopbackClient(t)
	return s
}

// stop ends serve and checks that it exits 0.
func (s *acmeServe) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.exit:
		if code != 0 {
			t.Errorf("serve exited with %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
