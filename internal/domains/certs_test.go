package domains_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/acmedns/acmednstest"
	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/store/storetest"
	"github.com/gantryhq/gantry/internal/tlsedge"
)

// edge is a tlsedge.Manager wired to the domains service as cmd/gantry
// wires them (Allow: AllowCertificate, AllowIssue: AllowIssue), serving
// HTTPS on a loopback port and HTTP-01 challenges on the port pebble
// validates on.
type edge struct {
	m         *tlsedge.Manager
	servers   []*http.Server
	httpsPort int
	roots     *x509.CertPool
}

func startEdge(t *testing.T, ca *acmednstest.CA, httpPort int, storage string, svc *domains.Service, tune ...func(*tlsedge.Config)) *edge {
	t.Helper()
	e := &edge{httpsPort: acmednstest.FreePort(t), roots: ca.IssuerRoots(t)}
	cfg := tlsedge.Config{
		Mode: tlsedge.ModeACME, LiveDomain: "gantry.test", PublicHost: "app.gantry.test",
		HTTPSPort: strconv.Itoa(e.httpsPort), Storage: storage, CA: ca.DirectoryURL, CARoots: ca.APIRoots,
		DNS: ca.Provider(), Resolvers: []string{ca.DNSServer(t, "gantry.test")}, HTTPPort: httpPort,
		Allow: svc.AllowCertificate, AllowIssue: svc.AllowIssue,
	}
	// What the TLS layer and certmagic log, shown when the test fails.
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tlsedge log (tail):\n%s", logs.tail(8000))
		}
	})
	for _, f := range tune {
		f(&cfg)
	}
	m, err := tlsedge.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	plain, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", httpPort))
	if err != nil {
		t.Fatal(err)
	}
	secure, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", e.httpsPort))
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: m.Handler()}
	ts := &http.Server{Handler: http.NotFoundHandler()}
	go hs.Serve(plain)
	go ts.Serve(tls.NewListener(secure, m.TLSConfig()))
	e.servers = []*http.Server{hs, ts}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stop)
	return e
}

// syncBuffer is an io.Writer for loggers of several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

// tail returns the last n bytes written, at most.
func (l *syncBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b[max(len(l.b)-n, 0):])
}

// stop ends the edge as a restart would: its listeners, then the Manager.
func (e *edge) stop() {
	for _, s := range e.servers {
		s.Close()
	}
	e.m.Stop()
}

// handshake returns the certificate served for name, or the error, within
// timeout.
func (e *edge) handshake(name string, timeout time.Duration) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", fmt.Sprintf("127.0.0.1:%d", e.httpsPort),
		&tls.Config{ServerName: name, RootCAs: e.roots})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// each runs f for every name, four at a time.
func each(names []string, f func(string)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() { defer wg.Done(); defer func() { <-sem }(); f(n) }()
	}
	wg.Wait()
}

// verifiedDomains adds n domains <prefix>-<i>.example.com to a project of
// owner and verifies them (their TXT and CNAME records in the test DNS).
func (e *env) verifiedDomains(t *testing.T, owner *gantry.User, p *gantry.Project, prefix string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	for i := range n {
		d, err := e.svc.Add(ctx, owner, p.ID, fmt.Sprintf("%s-%d.example.com", prefix, i))
		if err != nil {
			t.Fatal(err)
		}
		e.dns.Set("_gantry-challenge."+d.Name, "TXT", d.Token)
		e.dns.Set(d.Name, "CNAME", p.Subdomain+".gantry.test")
		if got, err := e.svc.Verify(ctx, owner.ID, p.ID, d.ID); err != nil || got.Status != gantry.DomainVerified {
			t.Fatalf("verify %s: %+v %v", d.Name, got, err)
		}
		names = append(names, d.Name)
	}
	return names
}

// TestCertificatesSurviveRestart gets certificates for 32 custom domains
// (more than the platform's hourly budget of new orders), restarts the TLS
// layer and the domains service on the same storage, and opens every
// domain again: each is served its stored certificate. Loading a stored
// certificate spent the budget before, so after a restart every domain
// past the 30th (past the 20th: the TLS layer's own burst) failed its
// handshakes.
func TestCertificatesSurviveRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pebble")
	}
	t.Parallel()
	e := newEnv(t)
	names := e.verifiedDomains(t, e.owner, e.proj, "site", domains.CertsTotal+2)
	httpPort := acmednstest.FreePort(t)
	ca := acmednstest.Start(t, acmednstest.Options{HTTPPort: httpPort})
	storage := tlsedge.StorageDir(t.TempDir())

	// First run: budgets wide enough to order them all at once.
	e.svc.CertNames, e.svc.CertAccounts, e.svc.CertAll = auth.NewLimiter(100, time.Hour), auth.NewLimiter(100, time.Hour),
		auth.NewLimiter(100, time.Hour)
	first := startEdge(t, ca, httpPort, storage, e.svc, func(c *tlsedge.Config) { c.OnDemandBurst = 100 })
	serials := map[string]string{}
	var mu sync.Mutex
	each(names, func(n string) {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			leaf, err := first.handshake(n, 90*time.Second)
			if err == nil {
				mu.Lock()
				serials[n] = leaf.SerialNumber.String()
				mu.Unlock()
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("first run, %s: %v", n, err)
				return
			}
			time.Sleep(time.Second)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	first.stop()

	// The restart: a new service with the default budgets, a new TLS
	// layer on the same storage.
	svc := &domains.Service{Store: e.db.Domains(), LiveDomain: "gantry.test", PublicHost: "app.gantry.test", Resolver: e.dns.Addr}
	if err := svc.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := startEdge(t, ca, httpPort, storage, svc)
	var failed []string
	each(names, func(n string) {
		leaf, err := second.handshake(n, 30*time.Second)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", n, err))
		case leaf.SerialNumber.String() != serials[n]:
			failed = append(failed, fmt.Sprintf("%s: a new certificate %s, want the stored %s", n, leaf.SerialNumber, serials[n]))
		}
	})
	if len(failed) > 0 {
		t.Errorf("after a restart, %d of %d domains were not served their stored certificate:\n%v", len(failed), len(names), failed)
	}
}

// TestFailingAccountDoesNotBlockOthers has one account with 31 verified
// domains whose certificate orders fail (their A record, as the CA sees
// it, points where nothing answers the HTTP-01 challenge), each opened
// over HTTPS: the orders it may make stop at its own budget, and another
// account's domain opened next still gets its certificate. Before, every
// handshake of the first account spent the platform's one budget.
func TestFailingAccountDoesNotBlockOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pebble")
	}
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	httpPort := acmednstest.FreePort(t)
	ca := acmednstest.Start(t, acmednstest.Options{HTTPPort: httpPort})
	bad := e.verifiedDomains(t, e.owner, e.proj, "failing", domains.CertsTotal+1)
	for _, n := range bad {
		if err := ca.SetA(ctx, n, "127.0.0.2"); err != nil {
			t.Fatal(err)
		}
	}
	bob := storetest.MustCreateUser(t, e.db, "bob", "Bob")
	shop, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: bob, Name: "shop"})
	good := e.verifiedDomains(t, bob, shop, "shop", 1)[0]

	edge := startEdge(t, ca, httpPort, tlsedge.StorageDir(t.TempDir()), e.svc)
	each(bad, func(n string) {
		if _, err := edge.handshake(n, 3*time.Second); err == nil {
			t.Errorf("%s: served over HTTPS, want its order to fail", n)
		}
	})
	leaf, err := edge.handshake(good, 90*time.Second)
	if err != nil {
		t.Fatalf("%s (another account) after %d failing names: %v", good, len(bad), err)
	}
	if leaf.DNSNames[0] != good {
		t.Errorf("%s: certificate for %v", good, leaf.DNSNames)
	}
}
