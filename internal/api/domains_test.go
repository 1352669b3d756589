package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/domains/dnstest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// domainEnv adds custom domains to e: the service over a real DNS server on
// loopback, and the edge serving alice's project "blog" (a static site on
// its subdomain) for the live domain "localhost".
type domainEnv struct {
	*testEnv
	svc     *domains.Service
	dns     *dnstest.Server
	project *gantry.Project
}

func withDomains(t *testing.T, e *testEnv) *domainEnv {
	t.Helper()
	p, dep := storetest.MustCreateApp(t, e.db, storetest.App{Owner: e.alice, Name: "blog"})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>alice's blog</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	table := edge.NewTable()
	table.Set(p.Subdomain, edge.Site{DeploymentID: dep.ID, Dir: dir, Status: gantry.DeploymentLive})
	live := edge.New("localhost", table, "http://localhost:8080")
	d := &domainEnv{testEnv: e, dns: dnstest.NewServer(t), project: p}
	d.svc = &domains.Service{Store: e.db.Domains(), Routes: live, LiveDomain: "localhost", PublicHost: "localhost",
		IPv4: []netip.Addr{netip.MustParseAddr("203.0.113.7")}, Resolver: d.dns.Addr, Now: func() time.Time { return e.now }}
	if err := d.svc.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.srv.Domains, e.srv.LiveHandler = d.svc, live
	return d
}

// addDomain adds name to alice's project through the API and returns it.
func (d *domainEnv) addDomain(t *testing.T, name string) *gantry.Domain {
	t.Helper()
	rec := d.do(request{method: "POST", url: "/api/projects/" + d.project.ID + "/domains", headers: bearer(d.token),
		body: fmt.Sprintf(`{"name":%q}`, name)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("add %s: %d %s", name, rec.Code, rec.Body.String())
	}
	return ptr(dataField[gantry.Domain](t, rec, "domain"))
}

// point creates name's records in DNS and verifies it through the API.
func (d *domainEnv) point(t *testing.T, dom *gantry.Domain) {
	t.Helper()
	d.dns.Set("_gantry-challenge."+dom.Name, "TXT", dom.Token)
	if dom.Apex {
		d.dns.Set(dom.Name, "A", "203.0.113.7")
	} else {
		d.dns.Set(dom.Name, "CNAME", d.project.Subdomain+".localhost")
	}
	rec := d.do(request{method: "POST", url: "/api/projects/" + d.project.ID + "/domains/" + dom.ID + "/verify", headers: bearer(d.token)})
	if got := dataField[gantry.Domain](t, rec, "domain"); got.Status != gantry.DomainVerified {
		t.Fatalf("verify %s: %s", dom.Name, rec.Body.String())
	}
}

func ptr[T any](v T) *T { return &v }

func TestDomainsAPI(t *testing.T) {
	t.Parallel()
	base := func(t *testing.T, e *testEnv) *domainEnv { return withDomains(t, e) }
	var d *domainEnv
	var first *gantry.Domain
	url := func(rest string) string { return "/api/projects/" + d.project.ID + "/domains" + rest }
	// In turn: setup and prepare share d and first.
	runScenariosInTurn(t, []scenario{
		{name: "add answers the records", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"  WWW.Example.COM. "}`}
				sc.wantContains = []string{`"type":"CNAME","name":"www.example.com","value":"` + d.project.Subdomain + `.localhost"`,
					`"type":"TXT","name":"_gantry-challenge.www.example.com","value":"gantry-verify=`}
			},
			wantStatus: 201,
			wantData:   map[string]string{"domain.name": `"www.example.com"`, "domain.status": `"waiting_dns"`, "domain.primary": "true", "domain.apex": "false"},
		},
		{name: "add an apex answers A records", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"example.org"}`}
			},
			wantStatus:   201,
			wantContains: []string{`"type":"A","name":"example.org","value":"203.0.113.7"`},
			wantData:     map[string]string{"domain.apex": "true"},
		},
		{name: "unicode name is stored in punycode", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"www.bücher.example"}`}
			},
			wantStatus: 201, wantData: map[string]string{"domain.name": `"www.xn--bcher-kva.example"`},
		},
		{name: "an IP address is refused", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"192.0.2.1"}`}
			},
			wantStatus: 400, wantMessage: "Domain must be a name, not an IP address",
		},
		{name: "the platform's own domain is refused", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"blog.localhost"}`}
			},
			wantStatus: 400, wantMessage: "localhost and its subdomains belong to the platform: add a domain of your own",
		},
		{name: "unknown field", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"a.example","tls":true}`}
			},
			wantStatus: 400, wantMessage: `Unknown field "tls"`,
		},
		{name: "free plan allows one domain", auth: true,
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); d.addDomain(t, "www.one.example"); return "" },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"www.two.example"}`}
			},
			wantStatus: 403, wantMessage: "Your Free plan allows 1 custom domain per project. Upgrade to add more.",
		},
		{name: "list", auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				d = base(t, e)
				first = d.addDomain(t, "www.one.example")
				return ""
			},
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "GET", url: url("")}
				sc.wantContains = []string{`"_id":"` + first.ID + `"`, `"records":[{"type":"CNAME"`}
			},
			wantStatus: 200,
		},
		{name: "set primary", auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				d = base(t, e)
				first = d.addDomain(t, "www.one.example")
				return ""
			},
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url("/" + first.ID + "/primary")}
			},
			wantStatus: 200, wantData: map[string]string{"domain.primary": "true"},
		},
		{name: "redirect needs its pair", auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				d = base(t, e)
				first = d.addDomain(t, "example.org")
				return ""
			},
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "PUT", url: url("/" + first.ID), body: `{"redirect":"to-www"}`}
			},
			wantStatus: 400, wantMessage: "Add www.example.org to this project first: example.org would redirect to it",
		},
		{name: "verify tells what is missing", auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				d = base(t, e)
				first = d.addDomain(t, "www.one.example")
				return ""
			},
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				d.dns.Set("_gantry-challenge.www.one.example", "TXT", first.Token)
				d.dns.Set("www.one.example", "CNAME", "elsewhere.example")
				sc.request = request{method: "POST", url: url("/" + first.ID + "/verify")}
				sc.wantData = map[string]string{"domain.status": `"waiting_dns"`,
					"domain.error": `"www.one.example points to elsewhere.example, not ` + d.project.Subdomain + `.localhost"`}
			},
			wantStatus: 200,
		},
		{name: "remove", auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				d = base(t, e)
				first = d.addDomain(t, "www.one.example")
				return ""
			},
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "DELETE", url: url("/" + first.ID)}
			},
			wantStatus: 200, wantData: map[string]string{"deleted": "true"},
			after: func(t *testing.T, e *testEnv, _ *httptest.ResponseRecorder) {
				if ds, _ := d.svc.Domains(context.Background(), e.alice.ID, d.project.ID); len(ds) != 0 {
					t.Errorf("got %d domains after removal", len(ds))
				}
			},
		},
		{name: "another user's project is 404",
			setup: func(t *testing.T, e *testEnv) string { d = base(t, e); return e.otherToken(t) },
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "POST", url: url(""), body: `{"name":"www.bob.example"}`}
			},
			wantStatus: 404, wantMessage: "Project not found",
		},
		{name: "another user's domain is 404",
			setup: func(t *testing.T, e *testEnv) string {
				d = base(t, e)
				first = d.addDomain(t, "www.one.example")
				return e.otherToken(t)
			},
			prepare: func(t *testing.T, e *testEnv, sc *scenario) {
				sc.request = request{method: "DELETE", url: url("/" + first.ID)}
			},
			wantStatus: 404,
		},
		{name: "no token", request: request{method: "GET", url: "/api/projects/x/domains"}, wantStatus: 401},
	})
}

func TestDomainServing(t *testing.T) {
	t.Parallel()
	d := withDomains(t, newEnv(t))
	get := func(host, path string) *httptest.ResponseRecorder {
		return d.do(request{method: "GET", url: path, host: host})
	}

	dom := d.addDomain(t, "www.example.com")
	// Waiting for DNS: the edge's 404 page, not the platform's app.
	if rec := get("www.example.com", "/"); rec.Code != 404 || !strings.Contains(rec.Body.String(), "No app lives at www.example.com") {
		t.Fatalf("unverified: %d %s", rec.Code, rec.Body.String())
	}
	// An unknown name gets the edge's plain 404, never the platform's app.
	if rec := get("unknown.example", "/"); rec.Code != 404 || !strings.Contains(rec.Body.String(), "No site here") {
		t.Fatalf("unknown host: %d %s", rec.Code, rec.Body.String())
	}

	d.point(t, dom)
	if rec := get("WWW.example.com.", "/"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "alice's blog") {
		t.Fatalf("verified: %d %s", rec.Code, rec.Body.String())
	}
	// The API is not on custom domains.
	if rec := get("www.example.com", "/api/health"); strings.Contains(rec.Body.String(), "test-version") {
		t.Fatalf("API answered on a custom domain: %s", rec.Body.String())
	}

	// Apex → www redirect.
	// (a second domain: on a Pro account's terms, through the service)
	pro := *d.alice
	pro.Subscription.Plan = gantry.PlanPro
	apex, err := d.svc.Add(context.Background(), &pro, d.project.ID, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	d.point(t, apex)
	if rec := get("example.com", "/"); rec.Code != 200 {
		t.Fatalf("apex without redirect: %d", rec.Code)
	}
	rec := d.do(request{method: "PUT", url: "/api/projects/" + d.project.ID + "/domains/" + apex.ID, headers: bearer(d.token),
		body: `{"redirect":"to-www"}`})
	if rec.Code != 200 {
		t.Fatalf("set redirect: %d %s", rec.Code, rec.Body.String())
	}
	if rec := get("example.com", "/about?x=1"); rec.Code != http.StatusPermanentRedirect || rec.Header().Get("Location") != "http://www.example.com/about?x=1" {
		t.Fatalf("redirect: %d %q", rec.Code, rec.Header().Get("Location"))
	}

	// Removal stops serving at once.
	rec = d.do(request{method: "DELETE", url: "/api/projects/" + d.project.ID + "/domains/" + dom.ID, headers: bearer(d.token)})
	if rec.Code != 200 {
		t.Fatalf("remove: %d %s", rec.Code, rec.Body.String())
	}
	if rec := get("www.example.com", "/"); strings.Contains(rec.Body.String(), "alice's blog") {
		t.Fatalf("removed domain still served: %d", rec.Code)
	}
	// With www gone, the apex serves the site again rather than redirecting
	// to a name the platform no longer answers for.
	if rec := get("example.com", "/"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "alice's blog") {
		t.Fatalf("apex after www removal: %d %s", rec.Code, rec.Body.String())
	}
}
