package domains_test

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/domains/dnstest"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// routes records what the service hands the edge.
type routes struct {
	mu sync.Mutex
	m  map[string]gantry.DomainRoute
}

func (r *routes) SetDomains(rs []gantry.DomainRoute) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = map[string]gantry.DomainRoute{}
	for _, x := range rs {
		r.m[x.Name] = x
	}
}

func (r *routes) get(name string) (gantry.DomainRoute, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	x, ok := r.m[name]
	return x, ok
}

// env is a service over a real database and a real DNS server, with a
// clock the test moves.
type env struct {
	svc    *domains.Service
	db     *store.DB
	dns    *dnstest.Server
	routes *routes
	now    time.Time
	owner  *gantry.User
	proj   *gantry.Project
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := storetest.MustOpenDB(t)
	e := &env{db: db, dns: dnstest.NewServer(t), routes: &routes{}, now: time.Now().UTC().Truncate(time.Millisecond)}
	db.Now = func() time.Time { return e.now }
	e.owner = storetest.MustCreateUser(t, db, "alice", "Alice")
	e.proj, _ = storetest.MustCreateApp(t, db, storetest.App{Owner: e.owner, Name: "blog"})
	e.svc = &domains.Service{Store: db.Domains(), Routes: e.routes, LiveDomain: "gantry.test", PublicHost: "app.gantry.test",
		IPv4: []netip.Addr{netip.MustParseAddr("203.0.113.7")}, IPv6: []netip.Addr{netip.MustParseAddr("2001:db8::7")},
		Resolver: e.dns.Addr, Now: func() time.Time { return e.now }}
	if err := e.svc.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) add(t *testing.T, name string) *gantry.Domain {
	t.Helper()
	d, err := e.svc.Add(context.Background(), e.owner, e.proj.ID, name)
	if err != nil {
		t.Fatalf("add %s: %v", name, err)
	}
	return d
}

// find reloads a domain.
func (e *env) find(t *testing.T, id string) *gantry.Domain {
	t.Helper()
	d, err := e.svc.Domain(context.Background(), e.owner.ID, e.proj.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for i, w := range want {
		if got := domains.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
}

func TestVerifySubdomain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	d := e.add(t, "WWW.Example.com")
	target := e.proj.Subdomain + ".gantry.test"
	wantRecords := []gantry.DNSRecord{
		{Type: "CNAME", Name: "www.example.com", Value: target},
		{Type: "TXT", Name: "_gantry-challenge.www.example.com", Value: d.Token},
	}
	if len(d.Records) != 2 || d.Records[0] != wantRecords[0] || d.Records[1] != wantRecords[1] {
		t.Fatalf("got records %+v, want %+v", d.Records, wantRecords)
	}
	if !strings.HasPrefix(d.Token, domains.TokenPrefix) || d.Status != gantry.DomainWaitingDNS || !d.Primary {
		t.Fatalf("got %+v", d)
	}

	// Nothing in DNS yet.
	e.svc.CheckDue(ctx)
	got := e.find(t, d.ID)
	wantErr := "The TXT record _gantry-challenge.www.example.com was not found: create it with the value " + d.Token +
		". No CNAME record was found for www.example.com: create one pointing to " + target
	if got.Status != gantry.DomainWaitingDNS || got.Error != wantErr || got.Attempts != 1 || !got.NextCheckAt.Equal(e.now.Add(30*time.Second)) {
		t.Fatalf("got status %s error %q attempts %d next %v; want waiting, %q, 1, +30s", got.Status, got.Error, got.Attempts, got.NextCheckAt.Sub(e.now), wantErr)
	}
	if r, ok := e.routes.get("www.example.com"); !ok || r.Serve {
		t.Fatalf("route %+v %v: want known, not served", r, ok)
	}
	// Not due yet: nothing changes.
	e.dns.Set("_gantry-challenge.www.example.com", "TXT", d.Token)
	e.svc.CheckDue(ctx)
	if got := e.find(t, d.ID); got.Attempts != 1 {
		t.Fatalf("checked before due: attempts %d", got.Attempts)
	}

	// The token, but a CNAME elsewhere.
	e.dns.Set("www.example.com", "CNAME", "other.host")
	e.now = e.now.Add(30 * time.Second)
	e.svc.CheckDue(ctx)
	got = e.find(t, d.ID)
	if want := "www.example.com points to other.host, not " + target; got.Error != want || got.Attempts != 2 ||
		!got.NextCheckAt.Equal(e.now.Add(time.Minute)) {
		t.Fatalf("got error %q attempts %d next %v, want %q 2 +1m", got.Error, got.Attempts, got.NextCheckAt.Sub(e.now), want)
	}

	// Right: verified, routed, and a certificate may be asked for.
	e.dns.Set("www.example.com", "CNAME", strings.ToUpper(target))
	e.now = e.now.Add(time.Minute)
	e.svc.CheckDue(ctx)
	got = e.find(t, d.ID)
	if got.Status != gantry.DomainVerified || got.Error != "" || got.VerifiedAt == nil {
		t.Fatalf("got %+v, want verified", got)
	}
	if r, ok := e.routes.get("www.example.com"); !ok || !r.Serve || r.Subdomain != e.proj.Subdomain || r.RedirectTo != "" {
		t.Fatalf("route %+v %v", r, ok)
	}
	if err := e.svc.AllowCertificate(ctx, "WWW.example.com."); err != nil {
		t.Fatalf("AllowCertificate: %v", err)
	}
	if err := e.svc.CertificateIssued(ctx, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	if got := e.find(t, d.ID); got.Status != gantry.DomainCertificateIssued {
		t.Fatalf("got %s, want certificate_issued", got.Status)
	}

	// Removal takes the route away at once.
	if err := e.svc.Remove(ctx, e.owner.ID, e.proj.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.routes.get("www.example.com"); ok {
		t.Fatal("removed domain still routed")
	}
	if err := e.svc.AllowCertificate(ctx, "www.example.com"); err == nil {
		t.Fatal("certificate allowed for a removed domain")
	}
}

func TestVerifyApex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	d := e.add(t, "example.org")
	if !d.Apex || len(d.Records) != 3 || d.Records[0] != (gantry.DNSRecord{Type: "A", Name: "example.org", Value: "203.0.113.7"}) ||
		d.Records[1] != (gantry.DNSRecord{Type: "AAAA", Name: "example.org", Value: "2001:db8::7"}) || d.Records[2].Type != "TXT" {
		t.Fatalf("got %+v", d)
	}
	e.dns.Set("_gantry-challenge.example.org", "TXT", "something else")
	e.dns.Set("example.org", "A", "198.51.100.9")
	got, err := e.svc.Verify(ctx, e.owner.ID, e.proj.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := `The TXT record _gantry-challenge.example.org holds "something else", not ` + d.Token +
		". example.org points to 198.51.100.9, not 203.0.113.7 (A record)"
	if got.Status != gantry.DomainWaitingDNS || got.Error != want {
		t.Fatalf("got %s %q, want %q", got.Status, got.Error, want)
	}
	e.dns.Set("_gantry-challenge.example.org", "TXT", d.Token)
	e.dns.Set("example.org", "A", "203.0.113.7")
	if got, err = e.svc.Verify(ctx, e.owner.ID, e.proj.ID, d.ID); err != nil || got.Status != gantry.DomainVerified {
		t.Fatalf("got %+v %v, want verified", got, err)
	}
}

func TestGiveUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	d := e.add(t, "www.example.net")
	start := e.now
	for i := 0; i < 200; i++ {
		e.svc.CheckDue(ctx)
		got := e.find(t, d.ID)
		if got.Status == gantry.DomainError {
			if elapsed := e.now.Sub(start); elapsed < domains.GiveUpAfter || elapsed > domains.GiveUpAfter+2*time.Hour {
				t.Errorf("gave up after %v, want about %v", elapsed, domains.GiveUpAfter)
			}
			if !strings.Contains(got.Error, "The TXT record _gantry-challenge.www.example.net was not found") {
				t.Errorf("got reason %q", got.Error)
			}
			// A check asked for starts over.
			got, err := e.svc.Verify(ctx, e.owner.ID, e.proj.ID, d.ID)
			if err != nil || got.Status != gantry.DomainWaitingDNS || got.Attempts != 1 {
				t.Fatalf("after Verify: %+v %v", got, err)
			}
			return
		}
		e.now = got.NextCheckAt
	}
	t.Fatal("never gave up")
}

func TestAddRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	free := *e.owner
	free.Subscription.Plan = gantry.PlanFree
	if _, err := e.svc.Add(ctx, &free, e.proj.ID, "www.one.example"); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Add(ctx, &free, e.proj.ID, "www.two.example")
	if gantry.ErrorCode(err) != gantry.EFORBIDDEN || gantry.ErrorMessage(err) != "Your Free plan allows 1 custom domain per project. Upgrade to add more." {
		t.Fatalf("second domain on Free: %v", err)
	}
	if _, err := e.svc.Add(ctx, e.owner, e.proj.ID, "WWW.ONE.example"); gantry.ErrorCode(err) != gantry.ECONFLICT ||
		gantry.ErrorMessage(err) != `www.one.example is already added to your project "blog"` {
		t.Fatalf("taken name: %v", err)
	}
	if _, err := e.svc.Add(ctx, e.owner, e.proj.ID, "blog.gantry.test"); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Fatalf("platform name: %v", err)
	}
	bob := storetest.MustCreateUser(t, e.db, "bob", "Bob")
	if _, err := e.svc.Add(ctx, bob, e.proj.ID, "www.bob.example"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("another user's project: %v", err)
	}
}

func TestRedirectAndPrimary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	apex := e.add(t, "example.com")
	www := e.add(t, "www.example.com")
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, www.ID, gantry.RedirectToWWW); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Fatalf("to-www on a www name: %v", err)
	}
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, apex.ID, "sideways"); gantry.ErrorMessage(err) != "Redirect must be one of none, to-www, to-apex" {
		t.Fatalf("bad value: %v", err)
	}
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, apex.ID, gantry.RedirectToWWW); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*gantry.Domain{apex, www} {
		e.dns.Set("_gantry-challenge."+d.Name, "TXT", d.Token)
	}
	e.dns.Set("example.com", "A", "203.0.113.7")
	e.dns.Set("www.example.com", "CNAME", e.proj.Subdomain+".gantry.test")
	e.svc.CheckDue(ctx)
	if r, _ := e.routes.get("example.com"); !r.Serve || r.RedirectTo != "www.example.com" {
		t.Fatalf("apex route %+v, want a redirect to www", r)
	}
	got, err := e.svc.SetPrimary(ctx, e.owner.ID, e.proj.ID, www.ID)
	if err != nil || !got.Primary {
		t.Fatalf("SetPrimary: %+v %v", got, err)
	}
	if a := e.find(t, apex.ID); a.Primary {
		t.Fatal("two primary domains")
	}
}

func TestAllowCertificate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	d := e.add(t, "www.live.example")
	waiting := e.add(t, "www.waiting.example")
	e.dns.Set("_gantry-challenge.www.live.example", "TXT", d.Token)
	e.dns.Set("www.live.example", "CNAME", e.proj.Subdomain+".gantry.test")
	e.svc.CheckDue(ctx)

	if err := e.svc.AllowCertificate(ctx, "unknown.example"); err == nil {
		t.Error("allowed an unknown name")
	}
	if err := e.svc.AllowCertificate(ctx, waiting.Name); err == nil {
		t.Error("allowed an unverified domain")
	}
	if err := e.svc.AllowCertificate(ctx, "x.gantry.test"); err == nil {
		t.Error("allowed a platform name")
	}
	if err := e.svc.AllowIssue(ctx, waiting.Name); err == nil {
		t.Error("AllowIssue: allowed an unverified domain")
	}
	// New orders spend the name's budget; loads and renewals of a verified
	// domain (AllowCertificate) never do.
	for i := 0; i < domains.CertsPerName; i++ {
		if err := e.svc.AllowIssue(ctx, d.Name); err != nil {
			t.Fatalf("order %d: %v", i+1, err)
		}
	}
	if err := e.svc.AllowIssue(ctx, d.Name); gantry.ErrorCode(err) != gantry.ETOOMANY {
		t.Fatalf("order %d: got %v, want rate limited", domains.CertsPerName+1, err)
	}
	for i := 0; i < 2*domains.CertsTotal; i++ {
		if err := e.svc.AllowCertificate(ctx, d.Name); err != nil {
			t.Fatalf("load %d: %v", i+1, err)
		}
	}

	// A verified domain of a project without a live deployment keeps its
	// stored certificate, and gets no new one.
	idle, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: e.owner, Name: "idle", Inactive: true})
	o, err := e.svc.Add(ctx, e.owner, idle.ID, "www.idle.example")
	if err != nil {
		t.Fatal(err)
	}
	e.dns.Set("_gantry-challenge.www.idle.example", "TXT", o.Token)
	e.dns.Set("www.idle.example", "CNAME", idle.Subdomain+".gantry.test")
	if got, err := e.svc.Verify(ctx, e.owner.ID, idle.ID, o.ID); err != nil || got.Status != gantry.DomainVerified {
		t.Fatalf("verify: %+v %v", got, err)
	}
	if err := e.svc.AllowCertificate(ctx, "www.idle.example"); err != nil {
		t.Fatalf("AllowCertificate of a verified domain of an idle project: %v", err)
	}
	if err := e.svc.AllowIssue(ctx, "www.idle.example"); err == nil || !strings.Contains(err.Error(), "no live deployment") {
		t.Fatalf("got %v, want refused for no live deployment", err)
	}

	// The store decides, not the routes the service last cached: a domain
	// removed from the database behind the service's back is refused.
	gone := e.add(t, "www.gone.example")
	e.dns.Set("_gantry-challenge.www.gone.example", "TXT", gone.Token)
	e.dns.Set("www.gone.example", "CNAME", e.proj.Subdomain+".gantry.test")
	if got, err := e.svc.Verify(ctx, e.owner.ID, e.proj.ID, gone.ID); err != nil || got.Status != gantry.DomainVerified {
		t.Fatalf("verify: %+v %v", got, err)
	}
	if err := e.db.Domains().DeleteDomain(ctx, e.owner.ID, e.proj.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.AllowCertificate(ctx, "www.gone.example"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("got %v, want ENOTFOUND for a domain no longer in the database", err)
	}
}

// TestRedirectLoopRefused sets example.com → www and then www → apex: the
// second would send every visitor back and forth (a 308 loop), and is
// refused with what to do, in either order.
func TestRedirectLoopRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	apex := e.add(t, "example.com")
	www := e.add(t, "www.example.com")
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, apex.ID, gantry.RedirectToWWW); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, www.ID, gantry.RedirectToApex)
	if want := "example.com already redirects to www.example.com: a redirect back would loop. " +
		"Set the redirect of example.com to none first"; gantry.ErrorCode(err) != gantry.EINVALID || gantry.ErrorMessage(err) != want {
		t.Fatalf("www → apex after apex → www: got %v, want EINVALID %q", err, want)
	}
	if got := e.find(t, www.ID); got.Redirect != gantry.RedirectNone {
		t.Fatalf("refused redirect stored: %q", got.Redirect)
	}
	// The other order: none on the apex first, then www → apex is fine and
	// apex → www is refused.
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, apex.ID, gantry.RedirectNone); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, www.ID, gantry.RedirectToApex); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SetRedirect(ctx, e.owner.ID, e.proj.ID, apex.ID, gantry.RedirectToWWW); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Fatalf("apex → www after www → apex: got %v, want EINVALID", err)
	}
}

// TestCertificateBudgetPerAccount spends one account's budget of new
// orders over many names: its next order is refused, another account's
// goes ahead, and refused orders spend nothing.
func TestCertificateBudgetPerAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	names := e.verifiedDomains(t, e.owner, e.proj, "many", domains.CertsPerAccount+1)
	for _, n := range names[:domains.CertsPerAccount] {
		if err := e.svc.AllowIssue(ctx, n); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	last := names[domains.CertsPerAccount]
	for range 3 {
		if err := e.svc.AllowIssue(ctx, last); gantry.ErrorCode(err) != gantry.ETOOMANY {
			t.Fatalf("%s past the account's budget: got %v, want ETOOMANY", last, err)
		}
	}
	bob := storetest.MustCreateUser(t, e.db, "bob", "Bob")
	shop, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: bob, Name: "shop"})
	other := e.verifiedDomains(t, bob, shop, "shop", 1)[0]
	if err := e.svc.AllowIssue(ctx, other); err != nil {
		t.Fatalf("another account's %s: %v", other, err)
	}
	// The refusals above spent neither the name's budget nor the
	// platform's: once the account's window has passed, the name orders.
	e.svc.CertAccounts.Reset("user:" + e.owner.ID)
	if err := e.svc.AllowIssue(ctx, last); err != nil {
		t.Fatalf("%s after the account's window: %v", last, err)
	}
}
