package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

// TestPrivatePreviewNeedsOwner mounts issue 24's point 20: a preview of a
// private repository sits at a guessable address (<sub>--<branch>--<hash>,
// or <sub>--pr-<n>). Without its owner's cookie it shows nothing: a
// browser is sent to the platform's sign-in hand-off, anything else gets
// 401; another account cannot get the hand-off; forged or misplaced
// tickets are refused; the owner gets in, and the app never sees the
// cookie. Once the owner opens the project's previews, anyone with the
// address sees them.
func TestPrivatePreviewNeedsOwner(t *testing.T) {
	t.Parallel()
	p := withPushToDeployRepo(t, true)
	p.gh.Push(t, "alice-gh/site", "feature/secret", "Secret plans", map[string]string{"index.html": "<h1>secret plans</h1>"})
	p.deliver(t, "push", p.gh.PushPayload(t, "alice-gh/site", "feature/secret", ""))
	preview := p.wait(t, p.deployments(t)[0].ID)
	label := preview.Subdomain
	if preview.Status != gantry.DeploymentLive || !gantry.IsPreviewLabel(label) {
		t.Fatalf("preview %+v\n%s", preview, p.logs(t, preview.ID))
	}
	host := label + ".localhost:8080"
	const secretPage = "<h1>secret plans</h1>"

	// A stranger's browser: sent to sign in, never shown the page.
	if code, body := p.site(label); code == http.StatusOK || strings.Contains(body, "secret plans") {
		t.Fatalf("a stranger sees the private preview: %d %q", code, body)
	}
	rec := p.do(request{method: "GET", url: "/docs?x=1", host: host})
	loc, _ := url.Parse(rec.Header().Get("Location"))
	if rec.Code != http.StatusFound || loc == nil || loc.Path != "/preview-access" || loc.Query().Get("host") != host ||
		loc.Query().Get("to") != "/docs?x=1" || strings.Contains(rec.Body.String(), "secret plans") {
		t.Fatalf("stranger GET: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	if rec := p.do(request{method: "POST", url: "/", host: host, body: "{}"}); rec.Code != http.StatusUnauthorized ||
		strings.Contains(rec.Body.String(), "secret plans") || !strings.Contains(rec.Body.String(), "This preview is private") {
		t.Fatalf("stranger POST: %d %s", rec.Code, rec.Body.String())
	}
	// A forged ticket, or a made-up cookie, gets nothing.
	if rec := p.do(request{method: "GET", url: "/.gantry/preview-access?ticket=AAAA&to=/", host: host}); rec.Code != http.StatusForbidden ||
		rec.Header().Get("Set-Cookie") != "" {
		t.Fatalf("forged ticket: %d %v", rec.Code, rec.Header())
	}
	if rec := p.do(request{method: "GET", url: "/", host: host, headers: map[string]string{"Cookie": "__Host-gantry_preview=" + strings.Repeat("A", 54)}}); rec.Code != http.StatusFound {
		t.Fatalf("made-up cookie: %d %s", rec.Code, rec.Body.String())
	}

	// Another account cannot get the hand-off, nor open the previews.
	bob := p.otherToken(t)
	hand := func(token, host, to string) (int, string) {
		rec := p.do(request{method: "POST", url: "/api/previews/access", headers: bearer(token),
			body: `{"host":"` + host + `","to":"` + to + `"}`})
		if rec.Code != http.StatusOK {
			return rec.Code, decodeAnswer(t, rec).Message
		}
		return rec.Code, dataField[string](t, rec, "url")
	}
	if code, msg := hand(bob, host, "/"); code != http.StatusNotFound || !strings.Contains(msg, "only its project's owner") {
		t.Fatalf("bob's hand-off: %d %q", code, msg)
	}
	if code, msg := hand(p.token, "my-site.localhost:8080", "/"); code != http.StatusBadRequest {
		t.Fatalf("hand-off for production: %d %q", code, msg)
	}
	access := "/api/projects/" + p.project.ID + "/preview-access"
	if rec := p.do(request{method: "PUT", url: access, headers: bearer(bob), body: `{"open":true}`}); rec.Code != http.StatusNotFound {
		t.Fatalf("bob opens alice's previews: %d %s", rec.Code, rec.Body.String())
	}

	// The owner: the ticket sets the cookie on the preview's host and
	// shows the page asked for; the cookie lets her in, and only there.
	code, to := hand(p.token, host, "/docs?x=1")
	ticketURL, err := url.Parse(to)
	if code != http.StatusOK || err != nil || ticketURL.Host != host || ticketURL.Path != "/.gantry/preview-access" {
		t.Fatalf("alice's hand-off: %d %q", code, to)
	}
	rec = p.do(request{method: "GET", url: ticketURL.RequestURI(), host: host})
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		cookie = c
	}
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/docs?x=1" || cookie == nil ||
		cookie.Name != "__Host-gantry_preview" || !cookie.Secure || !cookie.HttpOnly || cookie.Path != "/" || cookie.Domain != "" {
		t.Fatalf("ticket: %d %q cookie %+v", rec.Code, rec.Header().Get("Location"), cookie)
	}
	withCookie := map[string]string{"Cookie": "other=1; " + cookie.Name + "=" + cookie.Value}
	rec = p.do(request{method: "GET", url: "/", host: host, headers: withCookie})
	if rec.Code != http.StatusOK || rec.Body.String() != secretPage || rec.Header().Get("X-Robots-Tag") != "noindex, nofollow" {
		t.Fatalf("alice with the cookie: %d %v %q", rec.Code, rec.Header(), rec.Body.String())
	}
	// The same ticket and cookie are no key to another preview.
	other := gantry.PreviewLabel(p.project.ID, "my-site", "other", 0) + ".localhost:8080"
	if rec := p.do(request{method: "GET", url: ticketURL.RequestURI(), host: other}); rec.Code != http.StatusForbidden {
		t.Fatalf("ticket on another preview: %d", rec.Code)
	}
	if rec := p.do(request{method: "GET", url: "/", host: other, headers: withCookie}); rec.Code != http.StatusFound {
		t.Fatalf("cookie on another preview: %d", rec.Code)
	}

	// Opened by its owner, the preview is anyone's; closed again, it is not.
	rec = p.do(request{method: "GET", url: access, headers: bearer(p.token)})
	if a := dataField[gantry.PreviewAccess](t, rec, "access"); !a.Private || a.Open {
		t.Fatalf("access %+v", a)
	}
	if rec := p.do(request{method: "PUT", url: access, headers: bearer(p.token), body: `{}`}); rec.Code != http.StatusBadRequest {
		t.Fatalf("PUT without open: %d", rec.Code)
	}
	rec = p.do(request{method: "PUT", url: access, headers: bearer(p.token), body: `{"open":true}`})
	if a := dataField[gantry.PreviewAccess](t, rec, "access"); rec.Code != http.StatusOK || !a.Open {
		t.Fatalf("open: %d %s", rec.Code, rec.Body.String())
	}
	if code, body := p.site(label); code != http.StatusOK || body != secretPage {
		t.Fatalf("opened preview: %d %q", code, body)
	}
	p.do(request{method: "PUT", url: access, headers: bearer(p.token), body: `{"open":false}`})
	if code, body := p.site(label); code != http.StatusFound || strings.Contains(body, "secret plans") {
		t.Fatalf("closed again: %d %q", code, body)
	}
	// Production is the project's public site, as before.
	if code, _ := p.site("my-site"); code == http.StatusFound {
		t.Fatalf("production asks for a sign-in")
	}
}
