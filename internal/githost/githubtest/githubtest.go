// Package githubtest is a fake GitHub for tests: on one loopback server it
// serves the REST API under /api/v3/ (as GitHub Enterprise does), the OAuth
// web flow under /login/oauth/ (with PKCE), the OAuth app's grant
// revocation (DELETE /applications/{client_id}/grant), and git smart HTTP
// for every repository (git's own http-backend, through internal/gittest).
// Answers follow GitHub's JSON shapes, status codes and Link pagination, so
// go-github and golang.org/x/oauth2 talk to it unchanged.
//
// It also keeps repository webhooks (Hooks; Deliver sends them events
// signed with their secrets, shaped by PushPayload and PullRequestPayload),
// commit statuses (Statuses) and issue comments (Comments).
//
// Point Gantry at it with GANTRY_GITHUB_API_URL=s.APIURL() and
// GANTRY_GITHUB_WEB_URL=s.URL, and allow 127.0.0.1.
package githubtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/gittest"
)

// Server is the fake. Its fields may be changed between requests.
type Server struct {
	*httptest.Server
	// hookPart is the repositories' webhooks, commit statuses, comments
	// and the events delivered to the webhooks (hooks.go).
	hookPart
	Git *gittest.Server // holds the bare repositories

	ClientID, ClientSecret string // the OAuth app; requests with others fail

	mu           sync.Mutex
	users        map[string]*User // by login
	repos        map[string]*Repo // by lowercase full name
	codes        map[string]grant // OAuth codes not yet exchanged
	revoked      []string         // tokens named by successful revocations, in order
	revokeFail   int              // status every revocation answers; 0: work
	nextID       int64
	authorizeAs  string // login that consents at /login/oauth/authorize
	rateLimited  bool
	requests     []string
	hooks        map[int64]*Hook
	hookFail     int // status hook creation and deletion answer; 0: work
	statuses     []Status
	comments     map[int64]*Comment
	deliveries   []Delivery
	control      testing.TB // set by EnableControl
	pingOnCreate bool
}

// User is an account of the fake.
type User struct {
	ID        int64
	Login     string
	AvatarURL string
	// Token is the account's valid access token, which the OAuth flow
	// hands out. Revoking the OAuth app's grant replaces it with a fresh
	// one (under the server's lock: read it after another call of the
	// Server's, e.g. AuthorizeAs), so the revoked token gets 401 from then
	// on and the next sign-in brings a new token, as on GitHub.
	Token string
}

// Repo is a repository of the fake.
type Repo struct {
	ID            int64
	Owner         string
	Name          string
	Description   string
	Private       bool
	DefaultBranch string
	UpdatedAt     time.Time
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

type grant struct {
	login, redirectURI, challenge string
}

// NewServer starts the fake on 127.0.0.1:0 with the OAuth app
// "test-client-id"/"test-client-secret"; it is closed when the test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{
		Git:          gittest.NewServer(tb),
		ClientID:     "test-client-id",
		ClientSecret: "test-client-secret",
		users:        map[string]*User{},
		repos:        map[string]*Repo{},
		codes:        map[string]grant{},
		hooks:        map[int64]*Hook{},
		comments:     map[int64]*Comment{},
		nextID:       1000,
	}
	s.hookPart = hookPart{s}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// APIURL is the REST API's base URL (GANTRY_GITHUB_API_URL).
func (s *Server) APIURL() string { return s.URL + "/api/v3/" }

// AddUser creates an account with a fresh token and makes it the one that
// consents to OAuth requests if none was chosen.
func (s *Server) AddUser(login string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	u := &User{ID: s.nextID, Login: login, AvatarURL: s.URL + "/avatars/" + login + ".png",
		Token: "gho_" + login + "_" + randomHex(8)}
	s.users[login] = u
	if s.authorizeAs == "" {
		s.authorizeAs = login
	}
	return u
}

// AuthorizeAs makes login the account that consents at the authorize page.
func (s *Server) AuthorizeAs(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorizeAs = login
}

// SetRateLimited makes every API request answer GitHub's rate-limit 403.
func (s *Server) SetRateLimited(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimited = on
}

// Revoked returns the access tokens named by successful grant revocations
// (DELETE /applications/{client_id}/grant with the app's client id and
// secret), in order.
func (s *Server) Revoked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.revoked...)
}

// FailRevoke makes every grant revocation answer status (e.g. 500) without
// revoking anything; 0 restores normal answers.
func (s *Server) FailRevoke(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revokeFail = status
}

// Requests returns "METHOD path" of every request so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// AddRepo creates owner/name (owner must exist) with files committed on
// its default branch ("main" unless r.DefaultBranch is set) and returns it
// with its ID set. With files nil the repository exists in the API only
// (enough for listings), without git content.
func (s *Server) AddRepo(tb testing.TB, r Repo, files map[string]string) *Repo {
	tb.Helper()
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	s.mu.Lock()
	if _, ok := s.users[r.Owner]; !ok {
		s.mu.Unlock()
		tb.Fatalf("githubtest: no user %q", r.Owner)
	}
	s.nextID++
	r.ID = s.nextID
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = time.Now().UTC().Truncate(time.Second)
	}
	repo := &r
	s.repos[strings.ToLower(r.FullName())] = repo
	s.mu.Unlock()
	if files != nil {
		s.Git.Repo(tb, r.FullName(), r.DefaultBranch, "Initial commit", files)
	}
	return repo
}

// Push commits files to branch of an existing repository.
func (s *Server) Push(tb testing.TB, fullName, branch, message string, files map[string]string) {
	tb.Helper()
	s.Git.Repo(tb, fullName, branch, message, files)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/api/v3/"):
		s.serveAPI(w, r, strings.TrimPrefix(p, "/api/v3"))
	case strings.HasPrefix(p, ControlPrefix):
		s.serveControl(w, r)
	case p == "/login/oauth/authorize":
		s.authorize(w, r)
	case p == "/login/oauth/access_token":
		s.accessToken(w, r)
	case strings.Contains(p, ".git/") || strings.HasSuffix(p, "/info/refs") || strings.HasSuffix(p, "/git-upload-pack"):
		s.serveGit(w, r)
	default:
		http.NotFound(w, r)
	}
}

// ---- REST API ----

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	limited := s.rateLimited
	s.mu.Unlock()
	if limited {
		w.Header().Set("X-RateLimit-Limit", "60")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		apiError(w, http.StatusForbidden, "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)",
			"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting")
		return
	}
	w.Header().Set("X-RateLimit-Limit", "5000")
	w.Header().Set("X-RateLimit-Remaining", "4999")
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) == 3 && parts[0] == "applications" && parts[2] == "grant" && r.Method == http.MethodDelete {
		s.deleteGrant(w, r, parts[1])
		return
	}
	viewer, ok := s.viewer(r)
	if !ok {
		apiError(w, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
		return
	}
	if s.serveRepoWrite(w, r, viewer, parts) {
		return
	}
	if r.Method != http.MethodGet {
		apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
		return
	}
	switch {
	case p == "/user":
		if viewer == nil {
			apiError(w, http.StatusUnauthorized, "Requires authentication", "https://docs.github.com/rest/users/users#get-the-authenticated-user")
			return
		}
		writeJSON(w, http.StatusOK, s.userJSON(viewer))
	case p == "/user/repos":
		if viewer == nil {
			apiError(w, http.StatusUnauthorized, "Requires authentication", "https://docs.github.com/rest/repos/repos#list-repositories-for-the-authenticated-user")
			return
		}
		s.listRepos(w, r, viewer)
	case len(parts) == 2 && parts[0] == "repositories":
		id, _ := strconv.ParseInt(parts[1], 10, 64)
		repo := s.repoByID(id)
		if repo == nil || !canRead(viewer, repo) {
			apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
			return
		}
		writeJSON(w, http.StatusOK, s.repoJSON(repo))
	case len(parts) == 3 && parts[0] == "repos":
		repo := s.repo(parts[1] + "/" + parts[2])
		if repo == nil || !canRead(viewer, repo) {
			apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/repos/repos#get-a-repository")
			return
		}
		writeJSON(w, http.StatusOK, s.repoJSON(repo))
	case len(parts) >= 5 && parts[0] == "repos" && parts[3] == "commits":
		repo := s.repo(parts[1] + "/" + parts[2])
		if repo == nil || !canRead(viewer, repo) {
			apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/commits/commits#get-a-commit")
			return
		}
		ref, _ := url.PathUnescape(strings.Join(parts[4:], "/"))
		s.commit(w, repo, ref)
	default:
		apiError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
	}
}

// viewer returns the user of the request's token: nil without one, ok
// false for an unknown token.
func (s *Server) viewer(r *http.Request) (*User, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, true
	}
	tok := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(h, "Bearer "), "token "))
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userOf(tok)
	return u, u != nil
}

// userOf returns the account of token, or nil; s.mu is held.
func (s *Server) userOf(tok string) *User {
	if tok == "" {
		return nil
	}
	for _, u := range s.users {
		if u.Token == tok {
			return u
		}
	}
	return nil
}

func canRead(u *User, r *Repo) bool { return !r.Private || (u != nil && u.Login == r.Owner) }

func (s *Server) repo(fullName string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)]
}

func (s *Server) repoByID(id int64) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.repos {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func (s *Server) userJSON(u *User) map[string]any {
	return map[string]any{
		"login": u.Login, "id": u.ID, "node_id": "U_" + strconv.FormatInt(u.ID, 10),
		"avatar_url": u.AvatarURL, "html_url": s.URL + "/" + u.Login, "type": "User",
		"url": s.APIURL() + "users/" + u.Login, "site_admin": false, "name": u.Login,
	}
}

func (s *Server) repoJSON(r *Repo) map[string]any {
	s.mu.Lock()
	owner := s.users[r.Owner]
	s.mu.Unlock()
	visibility := "public"
	if r.Private {
		visibility = "private"
	}
	var desc any
	if r.Description != "" {
		desc = r.Description
	}
	return map[string]any{
		"id": r.ID, "node_id": "R_" + strconv.FormatInt(r.ID, 10),
		"name": r.Name, "full_name": r.FullName(), "private": r.Private,
		"owner": s.userJSON(owner), "html_url": s.URL + "/" + r.FullName(),
		"description": desc, "fork": false, "url": s.APIURL() + "repos/" + r.FullName(),
		"clone_url": s.URL + "/" + r.FullName() + ".git", "git_url": "git://127.0.0.1/" + r.FullName() + ".git",
		"ssh_url": "git@127.0.0.1:" + r.FullName() + ".git", "default_branch": r.DefaultBranch,
		"visibility": visibility, "created_at": r.UpdatedAt.Add(-time.Hour).Format(time.RFC3339),
		"updated_at": r.UpdatedAt.Format(time.RFC3339), "pushed_at": r.UpdatedAt.Format(time.RFC3339),
		"archived": false, "disabled": false,
	}
}

// listRepos serves GET /user/repos with sort=updated|full_name, direction,
// page and per_page (default 30, at most 100), and a Link header.
func (s *Server) listRepos(w http.ResponseWriter, r *http.Request, u *User) {
	q := r.URL.Query()
	s.mu.Lock()
	var list []*Repo
	for _, repo := range s.repos {
		if repo.Owner == u.Login {
			list = append(list, repo)
		}
	}
	s.mu.Unlock()
	sortBy, dir := q.Get("sort"), q.Get("direction")
	sort.Slice(list, func(i, j int) bool {
		if sortBy == "updated" || sortBy == "pushed" || sortBy == "created" {
			if !list[i].UpdatedAt.Equal(list[j].UpdatedAt) {
				after := list[i].UpdatedAt.After(list[j].UpdatedAt)
				if dir == "asc" {
					return !after
				}
				return after
			}
		}
		return strings.ToLower(list[i].FullName()) < strings.ToLower(list[j].FullName())
	})
	perPage, _ := strconv.Atoi(q.Get("per_page"))
	if perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(list)+perPage-1)/perPage, 1)
	start := min((page-1)*perPage, len(list))
	end := min(start+perPage, len(list))
	link := func(p int, rel string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(p))
		v.Set("per_page", strconv.Itoa(perPage))
		return fmt.Sprintf(`<%suser/repos?%s>; rel="%s"`, s.APIURL(), v.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := []map[string]any{}
	for _, repo := range list[start:end] {
		out = append(out, s.repoJSON(repo))
	}
	writeJSON(w, http.StatusOK, out)
}

// commit serves GET /repos/{owner}/{repo}/commits/{ref} from the bare
// repository: 422 "No commit found for SHA: <ref>" for an unknown ref, as
// GitHub answers.
func (s *Server) commit(w http.ResponseWriter, repo *Repo, ref string) {
	bare := filepath.Join(s.Git.Root, repo.FullName()+".git")
	if ref == "" || strings.HasPrefix(ref, "-") {
		apiError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+ref, "https://docs.github.com/rest/commits/commits#get-a-commit")
		return
	}
	out, err := exec.Command("git", "-C", bare, "log", "-1",
		"--format=%H%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%T%x00%P%x00%B", ref, "--").Output()
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+ref, "https://docs.github.com/rest/commits/commits#get-a-commit")
		return
	}
	f := strings.SplitN(string(out), "\x00", 10)
	if len(f) != 10 {
		http.Error(w, "bad git output", http.StatusInternalServerError)
		return
	}
	utc := func(s string) string {
		t, _ := time.Parse(time.RFC3339, s)
		return t.UTC().Format(time.RFC3339)
	}
	parents := []map[string]any{}
	for _, p := range strings.Fields(f[8]) {
		parents = append(parents, map[string]any{"sha": p, "url": s.APIURL() + "repos/" + repo.FullName() + "/commits/" + p})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"sha": f[0], "node_id": "C_" + f[0],
		"commit": map[string]any{
			"author":    map[string]any{"name": f[1], "email": f[2], "date": utc(f[3])},
			"committer": map[string]any{"name": f[4], "email": f[5], "date": utc(f[6])},
			"message":   strings.TrimRight(f[9], "\n"),
			"tree":      map[string]any{"sha": f[7]},
		},
		"url":      s.APIURL() + "repos/" + repo.FullName() + "/commits/" + f[0],
		"html_url": s.URL + "/" + repo.FullName() + "/commit/" + f[0],
		"author":   nil, "committer": nil, "parents": parents,
	})
}

func apiError(w http.ResponseWriter, status int, msg, doc string) {
	writeJSON(w, status, map[string]any{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)})
}

// deleteGrant serves DELETE /applications/{client_id}/grant: HTTP Basic
// authentication with the OAuth app's client id and secret (else 401 "Bad
// credentials"), a client id in the path that is the app's (else 404), and
// the JSON body {"access_token": "..."} (none: 422). An unknown or already
// revoked token is 404. Otherwise the account's token is replaced by a
// fresh one (see User.Token), so requests with the revoked token get 401
// from then on, and the answer is 204.
func (s *Server) deleteGrant(w http.ResponseWriter, r *http.Request, clientID string) {
	const doc = "https://docs.github.com/rest/apps/oauth-applications#delete-an-app-authorization"
	id, secret, ok := r.BasicAuth()
	if !ok || id != s.ClientID || secret != s.ClientSecret {
		apiError(w, http.StatusUnauthorized, "Bad credentials", doc)
		return
	}
	if clientID != s.ClientID {
		apiError(w, http.StatusNotFound, "Not Found", doc)
		return
	}
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.AccessToken == "" {
		apiError(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"access_token\" wasn't supplied.", doc)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revokeFail != 0 {
		apiError(w, s.revokeFail, http.StatusText(s.revokeFail), doc)
		return
	}
	u := s.userOf(body.AccessToken)
	if u == nil {
		apiError(w, http.StatusNotFound, "Not Found", doc)
		return
	}
	u.Token = "gho_" + u.Login + "_" + randomHex(8)
	s.revoked = append(s.revoked, body.AccessToken)
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ---- OAuth ----

// authorize plays the user who is signed in as AuthorizeAs and clicks
// "Authorize": it redirects to redirect_uri with a one-time code and the
// state. An unknown client_id gets a 404 page, as on GitHub.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.ClientID {
		http.NotFound(w, r)
		return
	}
	redirect := q.Get("redirect_uri")
	u, err := url.Parse(redirect)
	if err != nil || redirect == "" || (u.Scheme != "http" && u.Scheme != "https") {
		http.Error(w, "The redirect_uri MUST match the registered callback URL for this application.", http.StatusBadRequest)
		return
	}
	if m := q.Get("code_challenge_method"); q.Get("code_challenge") != "" && m != "S256" {
		http.Error(w, "code_challenge_method must be S256", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	login := s.authorizeAs
	code := randomHex(10)
	s.codes[code] = grant{login: login, redirectURI: redirect, challenge: q.Get("code_challenge")}
	s.mu.Unlock()
	v := u.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// accessToken exchanges a code as GitHub does: errors are 200 answers with
// an "error" field; JSON when the client accepts it, else form-encoded.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if bid, bsecret, ok := r.BasicAuth(); ok {
		id, secret = bid, bsecret
	}
	reply := func(v map[string]string) {
		if strings.Contains(r.Header.Get("Accept"), "application/json") {
			writeJSON(w, http.StatusOK, v)
			return
		}
		form := url.Values{}
		for k, val := range v {
			form.Set(k, val)
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		_, _ = w.Write([]byte(form.Encode()))
	}
	if id != s.ClientID || secret != s.ClientSecret {
		reply(map[string]string{"error": "incorrect_client_credentials",
			"error_description": "The client_id and/or client_secret passed are incorrect."})
		return
	}
	code := r.PostForm.Get("code")
	s.mu.Lock()
	g, ok := s.codes[code]
	delete(s.codes, code) // one use only
	user := s.users[g.login]
	s.mu.Unlock()
	badCode := map[string]string{"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}
	switch {
	case !ok || user == nil:
		reply(badCode)
		return
	case r.PostForm.Get("redirect_uri") != "" && r.PostForm.Get("redirect_uri") != g.redirectURI:
		reply(map[string]string{"error": "redirect_uri_mismatch", "error_description": "The redirect_uri MUST match the registered callback URL for this application."})
		return
	case g.challenge != "":
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			reply(badCode)
			return
		}
	}
	s.mu.Lock()
	token := user.Token
	s.mu.Unlock()
	reply(map[string]string{"access_token": token, "token_type": "bearer", "scope": "read:user,repo"})
}

// ---- git ----

// serveGit hands git smart-HTTP requests to git-http-backend. Private
// repositories need HTTP basic authentication with the owner's token as the
// password (any user name, e.g. x-access-token); everything else unknown or
// unreadable answers 401, as GitHub does.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) {
	full := r.URL.Path
	if i := strings.Index(full, ".git/"); i >= 0 {
		full = full[:i]
	} else {
		full = strings.TrimSuffix(strings.TrimSuffix(full, "/info/refs"), "/git-upload-pack")
	}
	full = strings.Trim(full, "/")
	repo := s.repo(full)
	var u *User
	if _, pass, ok := r.BasicAuth(); ok {
		s.mu.Lock()
		u = s.userOf(pass)
		s.mu.Unlock()
	}
	if repo == nil || !canRead(u, repo) {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Repository not found.", http.StatusUnauthorized)
		return
	}
	if !strings.Contains(r.URL.Path, ".git/") { // GitHub serves both forms
		r.URL.Path = strings.Replace(r.URL.Path, "/"+full+"/", "/"+full+".git/", 1)
	}
	s.Git.Config.Handler.ServeHTTP(w, r)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
