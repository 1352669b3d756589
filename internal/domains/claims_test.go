package domains_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// notes records the notifications the service sends.
type notes struct {
	mu  sync.Mutex
	all []*gantry.Notification
}

func (n *notes) Notify(_ context.Context, x *gantry.Notification) {
	n.mu.Lock()
	n.all = append(n.all, x)
	n.mu.Unlock()
}

// of returns the titles of userID's notifications.
func (n *notes) of(userID string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.all {
		if x.UserID == userID {
			out = append(out, x.Title+": "+x.Message)
		}
	}
	return out
}

// point sets the DNS records that prove d for the project with subdomain
// sub, replacing the name's earlier TXT and CNAME records.
func (e *env) point(d *gantry.Domain, sub string) {
	e.dns.Set("_gantry-challenge."+d.Name, "TXT", d.Token)
	e.dns.Set(d.Name, "CNAME", sub+".gantry.test")
}

// TestSquatterDoesNotBlockOwner: mallory claims www.shop.example first and
// never proves it. The real owner adds the name all the same (before, 409
// "already added to a project", for ever, telling anyone which names other
// customers use), proves it with DNS and is served; mallory's claim stays
// unverified and serves nothing.
func TestSquatterDoesNotBlockOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	mallory := storetest.MustCreateUser(t, e.db, "mallory", "Mallory")
	squat, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: mallory, Name: "squat"})
	claim, err := e.svc.Add(ctx, mallory, squat.ID, "www.shop.example")
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.Add(ctx, e.owner, e.proj.ID, "www.shop.example")
	if err != nil {
		t.Fatalf("the owner adds a name another account claimed: %v, want it added", err)
	}
	if d.Token == claim.Token {
		t.Fatal("two claims share a token")
	}
	e.point(d, e.proj.Subdomain)
	e.svc.CheckDue(ctx)
	if got := e.find(t, d.ID); got.Status != gantry.DomainVerified {
		t.Fatalf("owner's domain: %s %q, want verified", got.Status, got.Error)
	}
	if r, ok := e.svc.Lookup("www.shop.example"); !ok || !r.Serve || r.Subdomain != e.proj.Subdomain {
		t.Fatalf("route %+v, want the owner's project served", r)
	}
	if err := e.svc.AllowCertificate(ctx, "www.shop.example"); err != nil {
		t.Fatalf("certificate for the owner's verified domain: %v", err)
	}
	got, err := e.svc.Domain(ctx, mallory.ID, squat.ID, claim.ID)
	if err != nil || got.Serving() {
		t.Fatalf("mallory's claim: %+v %v, want it unverified", got, err)
	}
	// Adding it again is refused only for the account that has it, and
	// names only that account's project.
	if _, err := e.svc.Add(ctx, mallory, squat.ID, "www.shop.example"); gantry.ErrorCode(err) != gantry.ECONFLICT ||
		gantry.ErrorMessage(err) != `www.shop.example is already added to your project "squat"` {
		t.Fatalf("mallory adds it again: %v", err)
	}
}

// TestTakeOverByDNS: alice's domain is verified and served; the name
// changes hands and its new holder, bob, proves it with his own TXT record
// and CNAME. Bob's project is served from then on, alice's domain is no
// longer (status error, saying why) and alice is told.
func TestTakeOverByDNS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := &notes{}
	e.svc.Notify = n
	ctx := context.Background()
	a := e.add(t, "www.sold.example")
	e.point(a, e.proj.Subdomain)
	e.svc.CheckDue(ctx)
	if got := e.find(t, a.ID); !got.Serving() {
		t.Fatalf("alice's domain: %s %q", got.Status, got.Error)
	}

	bob := storetest.MustCreateUser(t, e.db, "bob", "Bob")
	shop, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: bob, Name: "shop"})
	b, err := e.svc.Add(ctx, bob, shop.ID, "www.sold.example")
	if err != nil {
		t.Fatalf("bob adds the name alice serves: %v", err)
	}
	// Until bob's records are in place, alice keeps it.
	e.svc.CheckDue(ctx)
	if r, _ := e.svc.Lookup("www.sold.example"); r.Subdomain != e.proj.Subdomain || !r.Serve {
		t.Fatalf("before bob's records: route %+v, want alice's", r)
	}
	e.point(b, shop.Subdomain)
	if got, err := e.svc.Verify(ctx, bob.ID, shop.ID, b.ID); err != nil || got.Status != gantry.DomainVerified {
		t.Fatalf("bob verifies: %+v %v", got, err)
	}
	if r, _ := e.svc.Lookup("www.sold.example"); r.Subdomain != shop.Subdomain || !r.Serve {
		t.Fatalf("route %+v, want bob's project", r)
	}
	got := e.find(t, a.ID)
	if got.Serving() || got.Status != gantry.DomainError || !strings.Contains(got.Error, "Another account proved with its DNS records") {
		t.Fatalf("alice's domain after bob's proof: %s %q", got.Status, got.Error)
	}
	if msgs := n.of(e.owner.ID); len(msgs) != 1 || !strings.Contains(msgs[0], "no longer served") {
		t.Fatalf("alice's notifications: %q", msgs)
	}
	if strings.Contains(strings.Join(n.of(e.owner.ID), " "), "bob") {
		t.Error("alice is told who took the name")
	}
}

// TestClaimExpires: a claim never verified is removed after 7 days, and
// its owner told; a verified domain of the same age stays.
func TestClaimExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := &notes{}
	e.svc.Notify = n
	ctx := context.Background()
	mallory := storetest.MustCreateUser(t, e.db, "mallory", "Mallory")
	squat, _ := storetest.MustCreateApp(t, e.db, storetest.App{Owner: mallory, Name: "squat"})
	claim, err := e.svc.Add(ctx, mallory, squat.ID, "www.squat.example")
	if err != nil {
		t.Fatal(err)
	}
	kept := e.add(t, "www.kept.example")
	e.point(kept, e.proj.Subdomain)
	e.svc.CheckDue(ctx)

	e.now = e.now.Add(domains.ClaimExpiresAfter - time.Minute)
	e.svc.ExpireClaims(ctx)
	if _, err := e.svc.Domain(ctx, mallory.ID, squat.ID, claim.ID); err != nil {
		t.Fatalf("claim before 7 days: %v", err)
	}
	e.now = e.now.Add(2 * time.Minute)
	e.svc.ExpireClaims(ctx)
	if _, err := e.svc.Domain(ctx, mallory.ID, squat.ID, claim.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("claim after 7 days: %v, want it removed", err)
	}
	if msgs := n.of(mallory.ID); len(msgs) != 1 || !strings.Contains(msgs[0], "not verified within 7 days") {
		t.Fatalf("mallory's notifications: %q", msgs)
	}
	if got := e.find(t, kept.ID); !got.Serving() {
		t.Fatalf("verified domain: %s", got.Status)
	}
}

// TestRecheckStopsServing: a verified domain whose DNS changes hands keeps
// being served for 3 days of failing daily re-checks (its owner warned at
// the first), then is no longer served nor certified, and its owner told.
// Before, a verified domain was never checked again.
func TestRecheckStopsServing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := &notes{}
	e.svc.Notify = n
	ctx := context.Background()
	d := e.add(t, "www.former.example")
	e.point(d, e.proj.Subdomain)
	e.svc.CheckDue(ctx)
	if got := e.find(t, d.ID); !got.Serving() {
		t.Fatalf("%s %q", got.Status, got.Error)
	}
	// A day on, with the records in place: still served, nothing said.
	e.now = e.now.Add(domains.RecheckEvery)
	e.svc.CheckDue(ctx)
	if got := e.find(t, d.ID); !got.Serving() || got.Error != "" || len(n.of(e.owner.ID)) > 0 {
		t.Fatalf("passing re-check: %s %q %q", got.Status, got.Error, n.of(e.owner.ID))
	}
	// The name's new holder points it elsewhere.
	e.dns.Set("_gantry-challenge."+d.Name, "TXT")
	e.dns.Set(d.Name, "CNAME", "elsewhere.example.net")
	start := e.now.Add(domains.RecheckEvery)
	e.now = start
	for i := 0; ; i++ {
		e.svc.CheckDue(ctx)
		got := e.find(t, d.ID)
		if !got.Serving() {
			if elapsed := e.now.Sub(start); elapsed < domains.StopServingAfter || elapsed > domains.StopServingAfter+domains.RecheckFailingEvery {
				t.Errorf("stopped serving after %v of failing checks, want %v", elapsed, domains.StopServingAfter)
			}
			if got.Status != gantry.DomainError || !strings.Contains(got.Error, "no longer served") {
				t.Errorf("got %s %q", got.Status, got.Error)
			}
			break
		}
		if i == 0 && (got.FailingSince == nil || !strings.Contains(got.Error, "It is still served until")) {
			t.Fatalf("first failing re-check: %+v", got)
		}
		if i > 100 {
			t.Fatal("never stopped serving")
		}
		e.now = got.NextCheckAt
	}
	if r, ok := e.svc.Lookup(d.Name); !ok || r.Serve {
		t.Errorf("route %+v, want not served", r)
	}
	if err := e.svc.AllowCertificate(ctx, d.Name); err == nil {
		t.Error("certificate still allowed for a domain no longer served")
	}
	msgs := n.of(e.owner.ID)
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], "Custom domain check failing") || !strings.HasPrefix(msgs[1], "Custom domain no longer served") {
		t.Errorf("owner's notifications: %q", msgs)
	}
}
