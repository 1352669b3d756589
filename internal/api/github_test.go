package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/secret"
)

const callbackURL = "http://localhost:8080/api/auth/github/callback"

// githubEnv is testEnv wired to a fake GitHub on loopback, where alice
// owns the GitHub account "alice-gh" with a public and a private
// repository, and bob owns "bob-gh" with one repository.
type githubEnv struct {
	*testEnv
	gh             *githubtest.Server
	aliceGH, bobGH *githubtest.User
	site, private  *githubtest.Repo // alice-gh's
	bobRepo        *githubtest.Repo
	tokens         *secret.Box
	link           *ghlink.Accounts // the server's GitHub
	lastCookie     *http.Cookie     // of the last mustStart
}

func withGitHub(t *testing.T, e *testEnv, configured bool) *githubEnv {
	t.Helper()
	g := &githubEnv{testEnv: e, gh: githubtest.NewServer(t)}
	g.aliceGH = g.gh.AddUser("alice-gh")
	g.bobGH = g.gh.AddUser("bob-gh")
	g.site = g.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "site", Description: "My site"},
		map[string]string{"index.html": "<h1>public</h1>"})
	g.private = g.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "secret-site", Private: true,
		UpdatedAt: time.Now().UTC().Add(time.Hour).Truncate(time.Second)},
		map[string]string{"index.html": "<h1>private</h1>"})
	g.bobRepo = g.gh.AddRepo(t, githubtest.Repo{Owner: "bob-gh", Name: "bobs"}, map[string]string{"index.html": "bob"})
	cfg := githost.Config{
		AllowHosts:   []string{"127.0.0.1"},
		GitHubAPIURL: g.gh.APIURL(),
		GitHubWebURL: g.gh.URL,
		RedirectURL:  callbackURL,
		Timeout:      10 * time.Second,
		Detect:       build.Suggest,
	}
	if configured {
		cfg.ClientID, cfg.ClientSecret = g.gh.ClientID, g.gh.ClientSecret
	}
	hosts, err := githost.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stack := deploytest.New(t, deploytest.Options{DB: e.db, Repos: hosts, Key: testSecret})
	g.tokens = stack.Tokens
	g.link = &ghlink.Accounts{
		Users: e.db, Host: hosts, Tokens: g.tokens, States: mustBox(t, secret.GitHubStates),
		Now: func() time.Time { return e.now }, Logger: e.srv.Logger,
	}
	e.srv.GitHub = g.link
	e.srv.Deploys, e.srv.Projects = stack.Deploys, stack.Projects
	return g
}

func mustBox(t *testing.T, purpose secret.Purpose) *secret.Box {
	t.Helper()
	b, err := secret.New(testSecret, purpose)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start calls GET /api/auth/github/url as token's user and returns the
// authorize URL and the nonce cookie.
func (g *githubEnv) start(t *testing.T, token string) (*url.URL, *http.Cookie) {
	t.Helper()
	rec := g.do(request{method: "GET", url: "/api/auth/github/url", headers: bearer(token)})
	if rec.Code != http.StatusOK {
		t.Fatalf("github url: %d %s", rec.Code, rec.Body.String())
	}
	auth, err := url.Parse(dataField[string](t, rec, "authUrl"))
	if err != nil {
		t.Fatal(err)
	}
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "__Host-gantry_github_oauth" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("no nonce cookie in %v", rec.Header())
	}
	return auth, cookie
}

// authorize follows the authorize URL as the fake's consenting user and
// returns GitHub's redirect to Gantry's callback.
func (g *githubEnv) authorize(t *testing.T, auth *url.URL) *url.URL {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(auth.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: got %d, want 302", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Scheme + "://" + back.Host + back.Path; got != callbackURL {
		t.Fatalf("GitHub redirected to %s, want the callback", got)
	}
	return back
}

// callback lands the browser on Gantry's callback with GitHub's query and
// returns the web page it is sent to (checking the redirect: no referrer,
// no token, no cookie).
func (g *githubEnv) callback(t *testing.T, query string) *url.URL {
	t.Helper()
	rec := g.do(request{method: "GET", url: "/api/auth/github/callback?" + query})
	if rec.Code != http.StatusFound {
		t.Fatalf("callback: got %d, want 302; body %s", rec.Code, rec.Body.String())
	}
	if got := rec.Header().Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("callback answered Referrer-Policy %q, want no-referrer", got)
	}
	if c := rec.Header().Values("Set-Cookie"); len(c) != 0 {
		t.Errorf("callback set cookies %v", c)
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if loc.Path != "/github-callback" || loc.Host != "" || loc.Query().Has("token") {
		t.Fatalf("callback redirected to %s, want /github-callback without a token", loc)
	}
	return loc
}

// finish is the web app on /github-callback: it sends the page's code and
// state as token's session, with the cookie when set, and returns the
// answer (checking that the nonce cookie is forgotten).
func (g *githubEnv) finish(t *testing.T, token string, page *url.URL, cookie *http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	rec := g.do(finishRequest(token, page, cookie))
	cleared := false
	for _, c := range rec.Result().Cookies() {
		cleared = cleared || (c.Name == "__Host-gantry_github_oauth" && c.MaxAge < 0 && c.Secure && c.Path == "/")
	}
	if !cleared {
		t.Errorf("finishing did not clear the nonce cookie: %v", rec.Header().Values("Set-Cookie"))
	}
	return rec
}

// finishRequest is the web app's POST /api/auth/github/callback.
func finishRequest(token string, page *url.URL, cookie *http.Cookie) request {
	body, _ := json.Marshal(map[string]string{"code": page.Query().Get("code"), "state": page.Query().Get("state")})
	req := request{method: "POST", url: "/api/auth/github/callback", body: string(body), headers: bearer(token)}
	if cookie != nil {
		req.headers["Cookie"] = cookie.Name + "=" + cookie.Value
	}
	return req
}

// connect runs the whole flow for token's user (as GitHub account login)
// and returns the answer of finishing it.
func (g *githubEnv) connect(t *testing.T, token, login string) *httptest.ResponseRecorder {
	t.Helper()
	g.gh.AuthorizeAs(login)
	auth, cookie := g.start(t, token)
	return g.finish(t, token, g.callback(t, g.authorize(t, auth).RawQuery), cookie)
}

func (g *githubEnv) me(t *testing.T, token string) *gantry.User {
	t.Helper()
	rec := g.do(request{method: "GET", url: "/api/auth/me", headers: bearer(token)})
	if rec.Code != http.StatusOK {
		t.Fatalf("me: %d %s", rec.Code, rec.Body.String())
	}
	for _, secret := range []string{g.aliceGH.Token, g.bobGH.Token, "v1:", "accessToken", "access_token"} {
		if strings.Contains(rec.Body.String(), secret) {
			t.Fatalf("GET /api/auth/me reveals %q: %s", secret, rec.Body.String())
		}
	}
	u := dataField[*gantry.User](t, rec, "user")
	return u
}

// noSecrets fails when the server log holds a GitHub token or OAuth secret.
func (g *githubEnv) noSecrets(t *testing.T, extra ...string) {
	t.Helper()
	logs := g.logs.String()
	for _, s := range append([]string{g.aliceGH.Token, g.bobGH.Token, g.gh.ClientSecret}, extra...) {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("the server log holds %q:\n%s", s, logs)
		}
	}
}

func TestGitHubConnectFlow(t *testing.T) {
	t.Parallel()
	g := withGitHub(t, newEnv(t), true)
	ctx := context.Background()

	auth, cookie := g.start(t, g.token)
	q := auth.Query()
	if got := auth.Scheme + "://" + auth.Host + auth.Path; got != g.gh.URL+"/login/oauth/authorize" {
		t.Errorf("authUrl is on %s, want the configured GitHub web URL", got)
	}
	if q.Get("client_id") != g.gh.ClientID || q.Get("redirect_uri") != callbackURL || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || q.Get("scope") != "repo read:user" {
		t.Errorf("authUrl query %v", q)
	}
	if state := q.Get("state"); !strings.HasPrefix(state, "v1:") || strings.Contains(state, g.alice.ID) {
		t.Errorf("state %q is not sealed", state)
	}
	// A platform cookie: __Host-, so Secure, Path=/ and no Domain (on
	// localhost, which browsers treat as secure, as over https).
	if cookie.Name != "__Host-gantry_github_oauth" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode ||
		cookie.Path != "/" || cookie.Domain != "" || cookie.MaxAge != 600 || !cookie.Secure {
		t.Errorf("nonce cookie %+v: want __Host-, HttpOnly, SameSite=Strict, Path=/, 10 minutes, Secure", cookie)
	}

	back := g.authorize(t, auth)
	code := back.Query().Get("code")
	page := g.callback(t, back.RawQuery)
	if page.Query().Get("code") != code || page.Query().Get("state") != q.Get("state") {
		t.Fatalf("callback page %s, want GitHub's code and state", page)
	}
	rec := g.finish(t, g.token, page, cookie)
	if rec.Code != http.StatusOK || dataField[*gantry.User](t, rec, "user").GitHub.Username != "alice-gh" {
		t.Fatalf("finish: %d %s", rec.Code, rec.Body.String())
	}
	token := g.token

	u := g.me(t, token)
	if !u.GitHub.Connected || u.GitHub.Username != "alice-gh" || u.GitHub.Avatar != g.aliceGH.AvatarURL || u.GitHub.ID != g.aliceGH.ID {
		t.Fatalf("me.github = %+v", u.GitHub)
	}
	if len(u.GitHub.Repos) != 2 {
		t.Fatalf("got %d repos, want alice-gh's 2: %+v", len(u.GitHub.Repos), u.GitHub.Repos)
	}
	first := u.GitHub.Repos[0] // most recently updated first
	if first.ID != g.private.ID || first.FullName != "alice-gh/secret-site" || !first.Private || first.DefaultBranch != "main" ||
		first.URL != g.gh.URL+"/alice-gh/secret-site" || first.UpdatedAt.IsZero() {
		t.Errorf("first repo %+v", first)
	}
	if second := u.GitHub.Repos[1]; second.Name != "site" || second.Private || second.Description != "My site" {
		t.Errorf("second repo %+v", second)
	}

	// The token is stored sealed, and opens to GitHub's token.
	stored, _ := g.db.FindUserByID(ctx, g.alice.ID)
	if stored.GitHub.AccessToken == g.aliceGH.Token || !strings.HasPrefix(stored.GitHub.AccessToken, "v1:") {
		t.Fatalf("stored token %q is not sealed", stored.GitHub.AccessToken)
	}
	if plain, err := g.tokens.Open(stored.GitHub.AccessToken); err != nil || plain != g.aliceGH.Token {
		t.Fatalf("stored token opens to %q, %v", plain, err)
	}

	// The code is single-use: the same redirect again fails, and links nothing new.
	again := g.finish(t, g.token, g.callback(t, back.RawQuery), cookie)
	if a := decodeAnswer(t, again); again.Code != 400 || !strings.Contains(a.Message, "GitHub refused the sign-in code") {
		t.Errorf("replayed callback: %d %q, want 400 bad code", again.Code, a.Message)
	}
	g.noSecrets(t, code, q.Get("state"), token, stored.GitHub.AccessToken)
}

func TestGitHubRefreshAndDisconnect(t *testing.T) {
	t.Parallel()
	g := withGitHub(t, newEnv(t), true)
	ctx := context.Background()
	g.connect(t, g.token, "alice-gh")
	fresh := g.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "brand-new",
		UpdatedAt: time.Now().UTC().Add(2 * time.Hour).Truncate(time.Second)}, nil)

	rec := g.do(request{method: "POST", url: "/api/auth/github/refresh", headers: bearer(g.token)})
	if rec.Code != http.StatusOK {
		t.Fatalf("refresh: %d %s", rec.Code, rec.Body.String())
	}
	repos := dataField[[]gantry.GitHubRepo](t, rec, "repos")
	if len(repos) != 3 || repos[0].ID != fresh.ID || repos[0].Name != "brand-new" {
		t.Fatalf("refreshed repos %+v, want brand-new first of 3", repos)
	}
	if u := dataField[*gantry.User](t, rec, "user"); len(u.GitHub.Repos) != 3 {
		t.Errorf("refresh answered user with %d repos", len(u.GitHub.Repos))
	}
	if strings.Contains(rec.Body.String(), g.aliceGH.Token) || strings.Contains(rec.Body.String(), "v1:") {
		t.Fatalf("refresh answer reveals the token: %s", rec.Body.String())
	}
	if u := g.me(t, g.token); len(u.GitHub.Repos) != 3 {
		t.Errorf("stored repos not updated: %d", len(u.GitHub.Repos))
	}

	token := g.aliceGH.Token // revoking it makes the fake replace it
	rec = g.do(request{method: "POST", url: "/api/auth/github/disconnect", headers: bearer(g.token)})
	if rec.Code != http.StatusOK {
		t.Fatalf("disconnect: %d %s", rec.Code, rec.Body.String())
	}
	if u := dataField[*gantry.User](t, rec, "user"); u.GitHub.Connected || u.GitHub.Username != "" || len(u.GitHub.Repos) != 0 || u.GitHub.ID != 0 {
		t.Errorf("after disconnect github = %+v", u.GitHub)
	}
	if stored, _ := g.db.FindUserByID(ctx, g.alice.ID); stored.GitHub.AccessToken != "" {
		t.Errorf("the token was kept after disconnect")
	}
	// The grant was revoked at GitHub with the OAuth app's credentials (the
	// fake records only revocations with the right client id and secret), so
	// the token no longer works there.
	if got := g.gh.Revoked(); len(got) != 1 || got[0] != token {
		t.Errorf("GitHub revoked %d tokens, want alice-gh's only", len(got))
	}
	if !slices.Contains(g.gh.Requests(), "DELETE /api/v3/applications/"+g.gh.ClientID+"/grant") {
		t.Errorf("disconnect did not ask GitHub to delete the grant: %q", g.gh.Requests())
	}
	if _, err := g.link.Host.GitHub.User(ctx, token); !githost.TokenRejected(err) {
		t.Errorf("GitHub still accepts the disconnected token: %v", err)
	}
	if strings.Contains(g.logs.String(), "could not revoke") {
		t.Errorf("a successful revocation logged a warning:\n%s", g.logs.String())
	}
	rec = g.do(request{method: "POST", url: "/api/auth/github/refresh", headers: bearer(g.token)})
	if a := decodeAnswer(t, rec); rec.Code != 400 || a.Message != "Connect your GitHub account first" {
		t.Errorf("refresh when disconnected: %d %q", rec.Code, a.Message)
	}
	// Disconnected, the same GitHub account may go to another Gantry account.
	bob := g.otherToken(t)
	if rec := g.connect(t, bob, "alice-gh"); rec.Code != http.StatusOK {
		t.Errorf("bob could not link alice-gh after alice let go: %d %s", rec.Code, rec.Body.String())
	}
	g.noSecrets(t)
}

// TestGitHubDisconnectRevokeFails checks that a user can always disconnect:
// when GitHub refuses or cannot be reached to revoke the grant, the account
// is still forgotten locally and the user told, with a warning in the log.
func TestGitHubDisconnectRevokeFails(t *testing.T) {
	t.Parallel()
	var scenarios []scenario
	for _, tc := range []struct {
		name string
		fail func(g *githubEnv)
	}{
		{"GitHub answers 500", func(g *githubEnv) { g.gh.FailRevoke(http.StatusInternalServerError) }},
		{"GitHub unreachable", func(g *githubEnv) { g.gh.Close() }},
	} {
		var g *githubEnv
		var token string
		scenarios = append(scenarios, scenario{name: tc.name, auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				g = withGitHub(t, e, true)
				g.link.Notify = g.accounts.Notify
				g.connect(t, g.token, "alice-gh")
				token = g.aliceGH.Token
				tc.fail(g)
				return ""
			},
			request:    request{method: "POST", url: "/api/auth/github/disconnect"},
			wantStatus: http.StatusOK,
			after: func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
				if u := dataField[*gantry.User](t, rec, "user"); u.GitHub.Connected || u.GitHub.Username != "" || len(u.GitHub.Repos) != 0 {
					t.Errorf("after disconnect github = %+v", u.GitHub)
				}
				if stored, _ := g.db.FindUserByID(context.Background(), g.alice.ID); stored.GitHub.AccessToken != "" {
					t.Errorf("the token was kept after disconnect")
				}
				if got := g.gh.Revoked(); len(got) != 0 {
					t.Errorf("the fake revoked %d tokens", len(got))
				}
				found := false
				for _, n := range g.notifications(t, g.token, "").Notifications {
					found = found || n.Title == "GitHub disconnected"
				}
				if !found {
					t.Errorf("the user was not told of the disconnection")
				}
				if logs := g.logs.String(); !strings.Contains(logs, "could not revoke the grant at GitHub") || !strings.Contains(logs, `"level":"WARN"`) {
					t.Errorf("no warning logged:\n%s", logs)
				}
				g.noSecrets(t, token)
			}})
	}
	runScenarios(t, scenarios)
}

func TestGitHubRefreshRevokedToken(t *testing.T) {
	t.Parallel()
	g := withGitHub(t, newEnv(t), true)
	g.connect(t, g.token, "alice-gh")
	g.aliceGH.Token = "gho_revoked"
	g.gh.AuthorizeAs("alice-gh") // orders the change before the server reads it

	rec := g.do(request{method: "POST", url: "/api/auth/github/refresh", headers: bearer(g.token)})
	if a := decodeAnswer(t, rec); rec.Code != http.StatusBadRequest || a.Message != "GitHub access was revoked: connect your GitHub account again" {
		t.Fatalf("got %d %q", rec.Code, a.Message)
	}
	if u := g.me(t, g.token); u.GitHub.Connected || len(u.GitHub.Repos) != 0 {
		t.Errorf("a revoked account stays connected: %+v", u.GitHub)
	}
}

// TestGitHubCallbackErrors: GitHub's own error, or a redirect without code
// or state, is handed to the web app as a short code; nothing is linked.
func TestGitHubCallbackErrors(t *testing.T) {
	t.Parallel()
	g := withGitHub(t, newEnv(t), true)
	for query, want := range map[string]string{
		"error=access_denied&error_description=The+user+has+denied": "access_denied",
		"error=%3Cscript%3E": "github_error",
		"state=abc":          "invalid_request",
		"code=abc":           "invalid_request",
		"":                   "invalid_request",
	} {
		page := g.callback(t, query)
		if got := page.Query().Get("error"); got != want || page.Query().Has("code") {
			t.Errorf("callback?%s: page %s, want error=%s", query, page, want)
		}
	}
	if u, _ := g.db.FindUserByID(context.Background(), g.alice.ID); u.GitHub.Connected {
		t.Errorf("alice got connected: %+v", u.GitHub)
	}
}

// TestGitHubCallbackRefusals: finishing a sign-in is refused, and links
// nothing, unless the state is intact, fresh, and was started by the very
// session finishing it in the browser holding its nonce cookie. The
// cookie-tossing attack of issue 24 (point 13) is among them: an app on a
// sibling domain plants the attacker's nonce in the victim's browser and
// sends the victim through GitHub with the attacker's state; the victim's
// GitHub account must not end up linked to the attacker's Gantry account.
func TestGitHubCallbackRefusals(t *testing.T) {
	t.Parallel()
	var scenarios []scenario
	for _, tc := range []struct {
		name string
		// flow returns who finishes (a token), GitHub's page and the cookie sent.
		flow        func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie)
		wantStatus  int
		wantMessage string
	}{
		{"forged state", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			_, cookie := g.start(t, g.token)
			return g.token, pageWith("abc", `{"u":"`+g.alice.ID+`"}`), cookie
		}, 400, "This GitHub sign-in is not valid"},
		{"altered state", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			back := g.authorize(t, mustStart(t, g))
			st := []byte(back.Query().Get("state"))
			st[10] ^= 1
			return g.token, pageWith(back.Query().Get("code"), string(st)), g.lastCookie
		}, 400, "This GitHub sign-in is not valid"},
		{"expired state", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			page := g.callback(t, g.authorize(t, mustStart(t, g)).RawQuery)
			g.now = g.now.Add(10*time.Minute + time.Second)
			return g.token, page, g.lastCookie
		}, 400, "took longer than 10 minutes"},
		{"no cookie: started in another browser", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			return g.token, g.callback(t, g.authorize(t, mustStart(t, g)).RawQuery), nil
		}, 400, "started in another browser, tab or account"},
		{"the nonce under its unprefixed name, as a sibling domain can set it", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			page := g.callback(t, g.authorize(t, mustStart(t, g)).RawQuery)
			return g.token, page, &http.Cookie{Name: "gantry_github_oauth", Value: g.lastCookie.Value}
		}, 400, "started in another browser, tab or account"},
		{"another user's state with alice's cookie", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			_, aliceCookie := g.start(t, g.token)
			bobAuth, _ := g.start(t, g.otherToken(t))
			return g.token, g.callback(t, g.authorize(t, bobAuth).RawQuery), aliceCookie
		}, 400, "started in another browser, tab or account"},
		{"cookie tossing: the attacker's state and nonce in alice's browser", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			bobAuth, bobCookie := g.start(t, g.otherToken(t))
			// alice consents on GitHub as herself; her browser carries bob's
			// nonce and bob's state, and her own session.
			return g.token, g.callback(t, g.authorize(t, bobAuth).RawQuery), bobCookie
		}, 400, "started in another browser, tab or account"},
		{"another session of the same user", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			page := g.callback(t, g.authorize(t, mustStart(t, g)).RawQuery)
			_, other, err := g.accounts.Login(context.Background(), "198.51.100.7", "alice@example.com", alicePass)
			if err != nil {
				t.Fatal(err)
			}
			return other, page, g.lastCookie
		}, 400, "started in another browser, tab or account"},
		{"GitHub account linked to another Gantry account", func(t *testing.T, g *githubEnv) (string, *url.URL, *http.Cookie) {
			if rec := g.connect(t, g.otherToken(t), "alice-gh"); rec.Code != 200 {
				t.Fatalf("bob's connect: %d %s", rec.Code, rec.Body.String())
			}
			g.gh.AuthorizeAs("alice-gh")
			return g.token, g.callback(t, g.authorize(t, mustStart(t, g)).RawQuery), g.lastCookie
		}, 409, "already connected to another Gantry account"},
	} {
		var g *githubEnv
		scenarios = append(scenarios, scenario{name: tc.name,
			setup: func(t *testing.T, e *testEnv) string { g = withGitHub(t, e, true); return "" },
			prepare: func(t *testing.T, _ *testEnv, sc *scenario) {
				token, page, cookie := tc.flow(t, g)
				sc.request = finishRequest(token, page, cookie)
			},
			wantStatus: tc.wantStatus,
			after: func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
				if a := decodeAnswer(t, rec); !strings.Contains(a.Message, tc.wantMessage) {
					t.Errorf("got %q, want it to say %q", a.Message, tc.wantMessage)
				}
				if u, _ := g.db.FindUserByID(context.Background(), g.alice.ID); u.GitHub.Connected {
					t.Errorf("alice got connected: %+v", u.GitHub)
				}
				if u, _ := g.db.FindUserByEmail(context.Background(), "bob@example.com"); u != nil && u.GitHub.Connected && u.GitHub.Username == "alice-gh" &&
					tc.wantStatus != 409 {
					t.Errorf("bob got alice's GitHub account: %+v", u.GitHub)
				}
				g.noSecrets(t)
			}})
	}
	runScenarios(t, scenarios)
}

// pageWith is the web app's /github-callback with code and state.
func pageWith(code, state string) *url.URL {
	return &url.URL{Path: "/github-callback", RawQuery: url.Values{"code": {code}, "state": {state}}.Encode()}
}

// mustStart is start for alice, keeping the cookie in g.lastCookie.
func mustStart(t *testing.T, g *githubEnv) *url.URL {
	t.Helper()
	auth, cookie := g.start(t, g.token)
	g.lastCookie = cookie
	return auth
}

func TestGitHubNotConfigured(t *testing.T) {
	t.Parallel()
	const msg = "GitHub is not configured on this server: set GANTRY_GITHUB_CLIENT_ID and GANTRY_GITHUB_CLIENT_SECRET"
	runScenarios(t, []scenario{
		{name: "url answers 503 with what to set", auth: true,
			setup:   func(t *testing.T, e *testEnv) string { withGitHub(t, e, false); return "" },
			request: request{method: "GET", url: "/api/auth/github/url"}, wantStatus: 503, wantMessage: msg},
		{name: "url without any GitHub wiring", auth: true,
			request: request{method: "GET", url: "/api/auth/github/url"}, wantStatus: 503, wantMessage: msg},
		{name: "callback redirects with not_configured",
			request: request{method: "GET", url: "/api/auth/github/callback?code=x&state=y"}, wantStatus: 302,
			wantHeaders: map[string]string{"Location": "/github-callback?error=not_configured"}},
		{name: "finishing needs a signed-in user",
			setup:   func(t *testing.T, e *testEnv) string { withGitHub(t, e, true); return "" },
			request: request{method: "POST", url: "/api/auth/github/callback", body: `{"code":"x","state":"y"}`}, wantStatus: 401},
		{name: "finishing answers 503 with what to set", auth: true,
			setup:   func(t *testing.T, e *testEnv) string { withGitHub(t, e, false); return "" },
			request: request{method: "POST", url: "/api/auth/github/callback", body: `{"code":"x","state":"y"}`}, wantStatus: 503, wantMessage: msg},
		{name: "url needs a signed-in user",
			setup:   func(t *testing.T, e *testEnv) string { withGitHub(t, e, true); return "" },
			request: request{method: "GET", url: "/api/auth/github/url"}, wantStatus: 401, wantMessage: "Not authorized: please sign in"},
		{name: "refresh needs a signed-in user",
			request: request{method: "POST", url: "/api/auth/github/refresh"}, wantStatus: 401},
		{name: "disconnect needs a signed-in user",
			request: request{method: "POST", url: "/api/auth/github/disconnect"}, wantStatus: 401},
		{name: "disconnect when not connected is fine", auth: true,
			setup:   func(t *testing.T, e *testEnv) string { withGitHub(t, e, true); return "" },
			request: request{method: "POST", url: "/api/auth/github/disconnect"}, wantStatus: 200,
			wantContains: []string{`"connected":false`}},
	})
}

func TestCreateProjectFromGitHub(t *testing.T) {
	t.Parallel()
	body := func(id any, extra string) string {
		b, _ := json.Marshal(id)
		return fmt.Sprintf(`{"repositoryId":%s,"name":"My Site","description":"demo","branch":""%s}`, b, extra)
	}
	type check func(t *testing.T, g *githubEnv, p *gantry.Project)
	var scenarios []scenario
	for _, tc := range []struct {
		name       string
		connect    bool
		body       func(g *githubEnv) string
		wantStatus int
		wantMsg    string
		check      check
	}{
		{name: "not connected", body: func(g *githubEnv) string { return body(g.site.ID, "") },
			wantStatus: 400, wantMsg: "Connect your GitHub account first"},
		{name: "public repository", connect: true, body: func(g *githubEnv) string { return body(g.site.ID, "") },
			wantStatus: 201, check: func(t *testing.T, g *githubEnv, p *gantry.Project) {
				r := p.Repository
				if p.Name != "My Site" || p.Description != "demo" || p.Branch != "main" || p.Status != gantry.ProjectDraft ||
					r.ID != strconv.FormatInt(g.site.ID, 10) || r.FullName != "alice-gh/site" || r.Private ||
					r.CloneURL != g.gh.URL+"/alice-gh/site.git" || r.LastCommit == nil || len(r.LastCommit.SHA) != 40 ||
					!p.ShowInDiscover {
					t.Errorf("project %+v, repository %+v", p, r)
				}
			}},
		{name: "private repository, id as a string", connect: true,
			body:       func(g *githubEnv) string { return body(strconv.FormatInt(g.private.ID, 10), "") },
			wantStatus: 201, check: func(t *testing.T, g *githubEnv, p *gantry.Project) {
				r := p.Repository
				if !r.Private || r.FullName != "alice-gh/secret-site" || r.LastCommit == nil || p.Type != "static" ||
					p.ShowInDiscover {
					t.Errorf("project %+v, repository %+v", p, r)
				}
			}},
		{name: "build settings given", connect: true,
			body: func(g *githubEnv) string {
				return body(g.site.ID, `,"buildConfig":{"installCommand":"","buildCommand":"","outputDirectory":"public"}`)
			},
			wantStatus: 201, check: func(t *testing.T, g *githubEnv, p *gantry.Project) {
				if p.BuildConfig.OutputDirectory != "public" {
					t.Errorf("buildConfig %+v", p.BuildConfig)
				}
			}},
		{name: "another account's repository", connect: true, body: func(g *githubEnv) string { return body(g.bobRepo.ID, "") },
			wantStatus: 404, wantMsg: project.MsgGitHubRepoUnseen},
		{name: "unknown id", connect: true, body: func(g *githubEnv) string { return body(987654, "") },
			wantStatus: 404, wantMsg: project.MsgGitHubRepoUnseen},
		{name: "no repository", connect: true, body: func(g *githubEnv) string { return `{"name":"x"}` },
			wantStatus: 400, wantMsg: "Please select a repository"},
		{name: "id that is not a number", connect: true, body: func(g *githubEnv) string { return body("abc", "") },
			wantStatus: 400, wantMsg: `Invalid value for field "repositoryId": expected number`},
		{name: "branch that does not exist", connect: true,
			body: func(g *githubEnv) string {
				return fmt.Sprintf(`{"repositoryId":%d,"name":"x","description":"","branch":"nope"}`, g.site.ID)
			},
			wantStatus: 404, wantMsg: "Branch 'nope' not found in alice-gh/site"},
		{name: "unknown field", connect: true, body: func(g *githubEnv) string { return body(g.site.ID, `,"token":"x"`) },
			wantStatus: 400, wantMsg: `Unknown field "token"`},
	} {
		var g *githubEnv
		scenarios = append(scenarios, scenario{name: tc.name, auth: true,
			setup: func(t *testing.T, e *testEnv) string {
				g = withGitHub(t, e, true)
				if tc.connect {
					g.connect(t, g.token, "alice-gh")
				}
				return ""
			},
			prepare:    func(_ *testing.T, _ *testEnv, sc *scenario) { sc.body = tc.body(g) },
			request:    request{method: "POST", url: "/api/projects"},
			wantStatus: tc.wantStatus, wantMessage: tc.wantMsg,
			after: func(t *testing.T, _ *testEnv, rec *httptest.ResponseRecorder) {
				if strings.Contains(rec.Body.String(), g.aliceGH.Token) {
					t.Fatalf("the answer reveals the token: %s", rec.Body.String())
				}
				if tc.check != nil {
					p := dataField[*gantry.Project](t, rec, "project")
					tc.check(t, g, p)
					if stored, err := g.db.FindProject(context.Background(), g.alice.ID, p.ID); err != nil {
						t.Fatal(err)
					} else if raw, _ := json.Marshal(stored); strings.Contains(string(raw), g.aliceGH.Token) {
						t.Fatalf("the stored project holds the token")
					}
				}
				g.noSecrets(t)
			}})
	}
	runScenarios(t, scenarios)
}

// TestPublicCreateOfPrivateGitHubRepo: POST /api/projects/public learns
// from GitHub that a repository is private, whatever the body says, and
// keeps its app out of Discover unless asked.
func TestPublicCreateOfPrivateGitHubRepo(t *testing.T) {
	t.Parallel()
	g := withGitHub(t, newEnv(t), true)
	g.connect(t, g.token, "alice-gh")
	create := func(token string, extra map[string]any) (int, *gantry.Project) {
		body := map[string]any{"repository": map[string]any{"url": g.gh.URL + "/alice-gh/secret-site", "private": false}, "name": "Secret"}
		for k, v := range extra {
			body[k] = v
		}
		b, _ := json.Marshal(body)
		rec := g.do(request{method: "POST", url: "/api/projects/public", headers: bearer(token), body: string(b)})
		if rec.Code != 201 {
			return rec.Code, nil
		}
		return rec.Code, dataField[*gantry.Project](t, rec, "project")
	}
	if code, p := create(g.token, nil); code != 201 || !p.Repository.Private || p.ShowInDiscover {
		t.Fatalf("got %d %+v, want a private repository hidden from Discover", code, p)
	}
	if code, p := create(g.token, map[string]any{"showInDiscover": true}); code != 201 || !p.Repository.Private || !p.ShowInDiscover {
		t.Fatalf("asked to show: got %d %+v", code, p)
	}
	// Someone who cannot see the repository cannot make a project of it.
	bob := g.otherToken(t)
	if code, _ := create(bob, nil); code == 201 || code == 500 {
		t.Fatalf("bob: got %d", code)
	}
	if n, _ := g.db.CountProjects(context.Background(), g.alice.ID); n != 2 {
		t.Fatalf("alice has %d projects, want 2", n)
	}
}
