package tlsedge_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/tlsedge"
)

// writePair writes a self-signed certificate for names, with serial, to
// certFile and keyFile, and returns it.
func writePair(t *testing.T, certFile, keyFile string, serial int64, names ...string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func TestFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePair(t, certFile, keyFile, 1, "*.apps.test", "gantry.test")

	m, err := tlsedge.New(tlsedge.Config{Mode: tlsedge.ModeFiles, LiveDomain: "apps.test", PublicHost: "gantry.test",
		HTTPSPort: "8443", CertFile: certFile, KeyFile: keyFile, ReloadInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })}
	go srv.Serve(tls.NewListener(ln, m.TLSConfig()))
	defer srv.Close()

	serial := func() int64 {
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: "blog.apps.test", InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if v := conn.ConnectionState().Version; v < tls.VersionTLS12 {
			t.Errorf("got TLS version %x, want 1.2 or 1.3", v)
		}
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 1 {
		t.Fatalf("got serial %d, want 1", got)
	}
	if _, ok := m.Certificate("blog.apps.test"); !ok {
		t.Error("Certificate(blog.apps.test): got none, want the files' wildcard")
	}
	if _, ok := m.Certificate("other.example"); ok {
		t.Error("Certificate(other.example): got one, want none")
	}

	// A half-written pair (garbage key) keeps the previous certificate.
	os.WriteFile(keyFile, []byte("not a key"), 0o600)
	time.Sleep(100 * time.Millisecond)
	if got := serial(); got != 1 {
		t.Errorf("after a broken key: got serial %d, want 1 (the previous pair)", got)
	}

	// A new pair is picked up without a restart.
	time.Sleep(10 * time.Millisecond) // a different mtime
	writePair(t, certFile, keyFile, 2, "*.apps.test", "gantry.test")
	deadline := time.Now().Add(5 * time.Second)
	for serial() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the new certificate files were not reloaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFilesUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := tlsedge.New(tlsedge.Config{Mode: tlsedge.ModeFiles, CertFile: filepath.Join(dir, "missing.pem"),
		KeyFile: filepath.Join(dir, "missing.key")})
	if err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("got %v, want an error naming the missing file", err)
	}
}

func TestRedirectAndHSTS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePair(t, certFile, keyFile, 1, "gantry.test")
	for _, tc := range []struct {
		port, host, target, want string
	}{
		{"443", "gantry.test", "/a?b=1", "https://gantry.test/a?b=1"},
		{"", "gantry.test:80", "/", "https://gantry.test/"},
		{"8443", "blog.apps.test:8080", "/x/y", "https://blog.apps.test:8443/x/y"},
		{"443", "[::1]:80", "/", "https://[::1]/"},
	} {
		m, err := tlsedge.New(tlsedge.Config{Mode: tlsedge.ModeFiles, HTTPSPort: tc.port, CertFile: certFile, KeyFile: keyFile})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, "http://"+tc.host+tc.target, nil)
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusPermanentRedirect || rec.Header().Get("Location") != tc.want {
			t.Errorf("%s%s: got %d %q, want 308 %q", tc.host, tc.target, rec.Code, rec.Header().Get("Location"), tc.want)
		}
	}

	h := tlsedge.WithHSTS("gantry.test", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for host, want := range map[string]string{"gantry.test": tlsedge.HSTS, "GANTRY.test:443": tlsedge.HSTS, "blog.apps.test": ""} {
		req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("Strict-Transport-Security"); got != want {
			t.Errorf("%s: got HSTS %q, want %q", host, got, want)
		}
	}
}
