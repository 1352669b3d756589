package githost_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Both clone for the build pipeline.
var (
	_ build.Cloner = (*githost.Service)(nil)
	_ build.Cloner = (*githost.Git)(nil)
)

var reactApp = map[string]string{
	"package.json":      `{"name":"site","scripts":{"dev":"vite","build":"vite build"},"dependencies":{"react":"^18.2.0"},"devDependencies":{"vite":"^5.2.0"}}`,
	"package-lock.json": "{}",
	"index.html":        `<div id="root"></div>`,
}

// newService returns a Service on the fake GitHub, allowing 127.0.0.1.
func newService(t *testing.T, gh *githubtest.Server, mod func(*githost.Config)) *githost.Service {
	t.Helper()
	cfg := githost.Config{
		AllowHosts:   []string{"127.0.0.1"},
		GitHubAPIURL: gh.APIURL(),
		GitHubWebURL: gh.URL,
		ClientID:     gh.ClientID,
		ClientSecret: gh.ClientSecret,
		RedirectURL:  "http://gantry.test/api/auth/github/callback",
		Timeout:      20 * time.Second,
		Detect:       build.Suggest,
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := githost.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLookupGitHub(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	gh := githubtest.NewServer(t)
	alice := gh.AddUser("alice")
	site := gh.AddRepo(t, githubtest.Repo{Owner: "alice", Name: "site", Description: "My portfolio"}, reactApp)
	gh.Push(t, "alice/site", "main", "Add about page\n\nLonger body.", map[string]string{"about.md": "about"})
	gh.Push(t, "alice/site", "docs", "Docs branch", map[string]string{"index.html": "<h1>docs</h1>", "package.json": "{}"})
	secret := gh.AddRepo(t, githubtest.Repo{Owner: "alice", Name: "secret", Private: true}, map[string]string{"index.html": "<h1>secret</h1>"})
	s := newService(t, gh, nil)
	ctx := context.Background()

	got, err := s.Lookup(ctx, gh.URL+"/alice/site")
	if err != nil {
		t.Fatal(err)
	}
	want := &githost.LookupResult{
		Repository: gantry.Repository{
			ID: strconv.FormatInt(site.ID, 10), Name: "site", FullName: "alice/site", Description: "My portfolio",
			DefaultBranch: "main", URL: gh.URL + "/alice/site", CloneURL: gh.URL + "/alice/site.git",
			LastCommit: &gantry.Commit{Message: "Add about page\n\nLonger body.", Author: "Test Author"},
		},
		Branch: "main", SuggestedName: "site", SuggestedDescription: "My portfolio", Framework: "react",
		BuildConfig: gantry.BuildConfig{InstallCommand: "npm ci", BuildCommand: "npm run build", OutputDirectory: "dist"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(gantry.Commit{}, "SHA", "Date")); diff != "" {
		t.Errorf("Lookup mismatch (-want +got):\n%s", diff)
	}
	if c := got.Repository.LastCommit; len(c.SHA) != 40 || time.Since(c.Date) > time.Hour {
		t.Errorf("last commit %+v: want a SHA and a recent date", c)
	}

	t.Run("tree branch", func(t *testing.T) {
		got, err := s.Lookup(ctx, gh.URL+"/alice/site/tree/docs")
		if err != nil {
			t.Fatal(err)
		}
		if got.Branch != "docs" || got.Repository.DefaultBranch != "main" || got.Repository.LastCommit.Message != "Docs branch" {
			t.Errorf("got branch %q default %q commit %q; want docs, main, Docs branch",
				got.Branch, got.Repository.DefaultBranch, got.Repository.LastCommit.Message)
		}
		if got.Framework != "static" || got.BuildConfig.OutputDirectory != "." {
			t.Errorf("got %q %+v; want static site detected on the docs branch", got.Framework, got.BuildConfig)
		}
	})

	t.Run("branch with a slash", func(t *testing.T) {
		gh.Push(t, "alice/site", "feature/login#2", "Login form", map[string]string{"login.html": "form"})
		got, err := s.Lookup(ctx, gh.URL+"/alice/site/tree/feature/login%232")
		if err != nil {
			t.Fatal(err)
		}
		if got.Branch != "feature/login#2" || got.Repository.LastCommit.Message != "Login form" {
			t.Errorf("got branch %q commit %q", got.Branch, got.Repository.LastCommit.Message)
		}
	})

	t.Run("private with the owner's token", func(t *testing.T) {
		got, err := s.LookupAs(ctx, gh.URL+"/alice/secret.git", alice.Token)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Repository.Private || got.Repository.ID != strconv.FormatInt(secret.ID, 10) || got.Framework != "static" {
			t.Errorf("got %+v; want the private repository, detected as static", got)
		}
		byID, err := s.LookupGitHubID(ctx, alice.Token, secret.ID, "")
		if err != nil || byID.Repository.FullName != "alice/secret" || byID.Framework != "static" {
			t.Errorf("LookupGitHubID = %+v, %v", byID, err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name, url, token, code, msg string
		}{
			{"missing repository", gh.URL + "/alice/nope", "", gantry.ENOTFOUND, "Repository not found: " + gh.URL + "/alice/nope"},
			{"private without token", gh.URL + "/alice/secret", "", gantry.ENOTFOUND, "Repository not found: " + gh.URL + "/alice/secret"},
			{"missing branch", gh.URL + "/alice/site/tree/gh-pages", "", gantry.ENOTFOUND, "Branch 'gh-pages' not found in alice/site"},
			{"bad token", gh.URL + "/alice/site", "gho_revoked", gantry.EINVALID, "GitHub rejected the access token; connect your GitHub account again"},
			{"ssh", "git@127.0.0.1:alice/site.git", "", gantry.EINVALID, "Only http(s) repository URLs are supported"},
			{"credentials", strings.Replace(gh.URL, "http://", "http://alice:pw@", 1) + "/alice/site", "", gantry.EINVALID, "Repository URLs must not contain credentials"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.LookupAs(ctx, tc.url, tc.token)
				if code, msg := gantry.ErrorCode(err), gantry.ErrorMessage(err); code != tc.code || msg != tc.msg {
					t.Errorf("got %s %q (%v), want %s %q", code, msg, err, tc.code, tc.msg)
				}
			})
		}
	})

	t.Run("rate limited falls back to git", func(t *testing.T) {
		gh := githubtest.NewServer(t)
		gh.AddUser("bob")
		gh.AddRepo(t, githubtest.Repo{Owner: "bob", Name: "app"}, reactApp)
		gh.SetRateLimited(true)
		s := newService(t, gh, nil)
		got, err := s.Lookup(ctx, gh.URL+"/bob/app")
		if err != nil {
			t.Fatal(err)
		}
		if got.Repository.DefaultBranch != "main" || got.Repository.LastCommit == nil || got.Framework != "react" {
			t.Errorf("got %+v; want the git answer", got)
		}
	})

	t.Run("LatestCommit", func(t *testing.T) {
		gh.Push(t, "alice/site", "main", "Fix typo", map[string]string{"about.md": "About"})
		c, err := s.LatestCommit(ctx, want.Repository, "", "")
		if err != nil || c.Message != "Fix typo" {
			t.Errorf("LatestCommit = %+v, %v; want Fix typo", c, err)
		}
		c, err = s.LatestCommit(ctx, got.Repository, "docs", "")
		if err != nil || c.Message != "Docs branch" {
			t.Errorf("LatestCommit(docs) = %+v, %v; want Docs branch", c, err)
		}
		_, err = s.LatestCommit(ctx, got.Repository, "nope", "")
		if msg := gantry.ErrorMessage(err); msg != "Branch 'nope' not found in alice/site" {
			t.Errorf("LatestCommit(nope): got %q", msg)
		}
	})
}

func TestLookupAnyGitHost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	gh := githubtest.NewServer(t)
	host := gittest.NewServer(t)
	url := host.Repo(t, "bob/flask-app", "trunk", "Hello Flask", map[string]string{
		"requirements.txt": "flask\ngunicorn\n",
		"app.py":           "from flask import Flask\napp = Flask(__name__)\n",
	})
	host.Repo(t, "bob/notes", "main", "notes", map[string]string{"README.md": "nothing to deploy"})
	s := newService(t, gh, nil)
	ctx := context.Background()

	got, err := s.Lookup(ctx, strings.TrimSuffix(url, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	r := got.Repository
	if !strings.HasPrefix(r.ID, "git-") || r.Name != "flask-app" || r.FullName != "bob/flask-app" || r.DefaultBranch != "trunk" ||
		r.URL != host.URL+"/bob/flask-app" || r.Private || r.LastCommit == nil || r.LastCommit.Message != "Hello Flask" {
		t.Errorf("got repository %+v", r)
	}
	if got.Framework != "flask" || !strings.Contains(got.BuildConfig.StartCommand, "gunicorn --bind 0.0.0.0:$PORT app:app") {
		t.Errorf("got %q %+v; want flask served by gunicorn", got.Framework, got.BuildConfig)
	}
	again, err := s.Lookup(ctx, url+"/")
	if err != nil || again.Repository.ID != r.ID {
		t.Errorf("id not stable: %v vs %q (%v)", again, r.ID, err)
	}

	notes, err := s.Lookup(ctx, host.URL+"/bob/notes")
	if err != nil {
		t.Fatal(err)
	}
	if notes.Framework != "" || notes.DetectError != build.ErrNoFramework.Error() {
		t.Errorf("got framework %q, detect error %q; want the no-framework message", notes.Framework, notes.DetectError)
	}

	c, err := s.LatestCommit(ctx, r, "", "")
	if err != nil || c.SHA != r.LastCommit.SHA {
		t.Errorf("LatestCommit = %+v, %v; want %s", c, err, r.LastCommit.SHA)
	}

	// Without an allow list, the loopback git host is refused (the fake
	// GitHub's own host and port stay allowed).
	strict := newService(t, gh, func(c *githost.Config) { c.AllowHosts = nil })
	_, err = strict.Lookup(ctx, url)
	if msg := gantry.ErrorMessage(err); msg != "Host not allowed: 127.0.0.1 resolves to a private address" {
		t.Errorf("strict lookup: got %q (%v)", msg, err)
	}
	_, err = s.Lookup(ctx, strings.Replace(url, "127.0.0.1", "localhost", 1))
	if msg := gantry.ErrorMessage(err); msg != "Host not allowed: localhost resolves to a private address" {
		t.Errorf("localhost lookup: got %q (%v)", msg, err)
	}
}

// TestCloneTokenStaysOnGitHub proves Service.Clone sends a token to the
// GitHub host only.
func TestCloneTokenStaysOnGitHub(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	gh := githubtest.NewServer(t)
	alice := gh.AddUser("alice")
	gh.AddRepo(t, githubtest.Repo{Owner: "alice", Name: "secret", Private: true}, map[string]string{"index.html": "x"})
	other := gittest.NewServer(t)
	other.Repo(t, "eve/trap", "main", "trap", map[string]string{"index.html": "x"})
	target, _ := url.Parse(other.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var seen []string
	recorder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer recorder.Close()
	s := newService(t, gh, nil)
	ctx := context.Background()

	if _, err := s.Clone(ctx, recorder.URL+"/eve/trap.git", "main", filepath.Join(t.TempDir(), "a"), alice.Token, 0, 0); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, h := range seen {
		if h != "" {
			t.Errorf("another host received an Authorization header: %q", h)
		}
	}
	mu.Unlock()

	c, err := s.Clone(ctx, gh.URL+"/alice/secret.git", "main", filepath.Join(t.TempDir(), "b"), alice.Token, 0, 0)
	if err != nil || c.Message != "Initial commit" {
		t.Errorf("private clone with token = %+v, %v", c, err)
	}
	_, err = s.Clone(ctx, gh.URL+"/alice/secret.git", "main", filepath.Join(t.TempDir(), "c"), "", 0, 0)
	if msg := gantry.ErrorMessage(err); msg != "Repository is private or requires authentication" {
		t.Errorf("private clone without token: got %q (%v)", msg, err)
	}
}

func TestOAuthFlow(t *testing.T) {
	t.Parallel()
	gh := githubtest.NewServer(t)
	alice := gh.AddUser("alice")
	for i := range 130 {
		gh.AddRepo(t, githubtest.Repo{Owner: "alice", Name: fmt.Sprintf("repo-%03d", i), Private: i%10 == 0,
			UpdatedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i*7%130) * time.Hour)}, nil)
	}
	gh.AddUser("bob")
	gh.AddRepo(t, githubtest.Repo{Owner: "bob", Name: "not-alices"}, nil)
	s := newService(t, gh, nil)
	ctx := context.Background()
	if s.OAuth == nil {
		t.Fatal("OAuth not configured")
	}

	// The browser goes to the authorize page and comes back with a code.
	authorize := func(state, verifier string) string {
		t.Helper()
		authURL := s.OAuth.AuthURL(state, verifier)
		u, _ := url.Parse(authURL)
		q := u.Query()
		if u.Path != "/login/oauth/authorize" || q.Get("client_id") != gh.ClientID || q.Get("state") != state ||
			q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
			q.Get("redirect_uri") != "http://gantry.test/api/auth/github/callback" || q.Get("scope") != "repo read:user" {
			t.Fatalf("AuthURL = %s", authURL)
		}
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || back.Query().Get("state") != state {
			t.Fatalf("authorize redirected to %q", resp.Header.Get("Location"))
		}
		return back.Query().Get("code")
	}

	verifier := githost.GenerateVerifier()
	code := authorize("state-1", verifier)
	token, err := s.OAuth.Exchange(ctx, code, verifier)
	if err != nil || token != alice.Token {
		t.Fatalf("Exchange = %q, %v; want alice's token", token, err)
	}
	if _, err := s.OAuth.Exchange(ctx, code, verifier); gantry.ErrorMessage(err) != "GitHub sign-in failed: the authorization code is invalid or has expired" {
		t.Errorf("reused code: got %v", err)
	}
	code = authorize("state-2", verifier)
	if _, err := s.OAuth.Exchange(ctx, code, githost.GenerateVerifier()); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Errorf("wrong verifier: got %v, want EINVALID", err)
	}

	u, err := s.GitHub.User(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&githost.User{ID: alice.ID, Login: "alice", AvatarURL: alice.AvatarURL}, u); diff != "" {
		t.Errorf("User mismatch (-want +got):\n%s", diff)
	}

	repos, err := s.GitHub.Repos(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 130 {
		t.Fatalf("got %d repositories, want all 130 across pages", len(repos))
	}
	for i := 1; i < len(repos); i++ {
		if repos[i].UpdatedAt.After(repos[i-1].UpdatedAt) {
			t.Fatalf("repositories not sorted by update: %v before %v", repos[i-1].UpdatedAt, repos[i].UpdatedAt)
		}
	}
	r0 := repos[0]
	if r0.FullName != "alice/"+r0.Name || r0.DefaultBranch != "main" || r0.URL != gh.URL+"/"+r0.FullName || r0.ID == 0 {
		t.Errorf("first repository %+v", r0)
	}
	private := 0
	for _, r := range repos {
		if r.Private {
			private++
		}
		if r.Name == "not-alices" {
			t.Error("bob's repository listed for alice")
		}
	}
	if private != 13 {
		t.Errorf("got %d private repositories, want 13", private)
	}

	for _, bad := range []string{"", "gho_revoked"} {
		if _, err := s.GitHub.User(ctx, bad); gantry.ErrorMessage(err) != "GitHub rejected the access token; connect your GitHub account again" {
			t.Errorf("User(%q): got %v", bad, err)
		}
		if _, err := s.GitHub.Repos(ctx, bad); gantry.ErrorCode(err) != gantry.EINVALID {
			t.Errorf("Repos(%q): got %v", bad, err)
		}
	}
}

func TestOAuthNotConfigured(t *testing.T) {
	t.Parallel()
	gh := githubtest.NewServer(t)
	s := newService(t, gh, func(c *githost.Config) { c.ClientID, c.ClientSecret = "", "" })
	if s.OAuth != nil {
		t.Error("OAuth configured without a client id")
	}
	_, err := githost.NewOAuth("", "", "", "", nil, nil)
	if gantry.ErrorCode(err) != gantry.EUNAVAILABLE {
		t.Errorf("NewOAuth without app: got %v, want EUNAVAILABLE", err)
	}
	if _, err := githost.New(githost.Config{ClientID: "only-id"}); err == nil {
		t.Error("New with a client id but no secret: want an error")
	}
}
