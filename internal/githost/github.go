package githost

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/google/go-github/v92/github"
)

// Defaults of GitHub.
const (
	DefaultGitHubAPIURL = "https://api.github.com/"
	DefaultGitHubWebURL = "https://github.com"
	maxRepoPages        = 30 // 3,000 repositories at 100 per page
)

// GitHub reads repositories, commits and users from GitHub's REST API (or
// GitHub Enterprise's) with github.com/google/go-github. Requests go
// through the given http.Client; a token, when given, is sent as a bearer
// token and never logged or put in a URL.
type GitHub struct {
	apiURL string
	webURL string
	http   *http.Client
}

// NewGitHub returns a GitHub client for the REST API at apiURL (default
// DefaultGitHubAPIURL; GitHub Enterprise serves it at <host>/api/v3/) and
// the web site at webURL (default DefaultGitHubWebURL), from which clone URLs
// are made. client nil means a client with a 60 s timeout.
func NewGitHub(apiURL, webURL string, client *http.Client) (*GitHub, error) {
	if apiURL == "" {
		apiURL = DefaultGitHubAPIURL
	}
	if webURL == "" {
		webURL = DefaultGitHubWebURL
	}
	for _, u := range []string{apiURL, webURL} {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return nil, errors.New("githost: GitHub URLs must be absolute http(s) URLs: " + u)
		}
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	return &GitHub{apiURL: apiURL, webURL: strings.TrimSuffix(webURL, "/"), http: client}, nil
}

// WebURL returns the configured web base URL without a trailing slash.
func (g *GitHub) WebURL() string { return g.webURL }

// client returns a go-github client, authenticated when token is set.
func (g *GitHub) client(token string) (*github.Client, error) {
	opts := []github.ClientOptionsFunc{
		github.WithHTTPClient(g.http),
		github.WithURLs(&g.apiURL, &g.apiURL),
		github.WithUserAgent("gantry"),
	}
	if token != "" {
		opts = append(opts, github.WithAuthToken(token))
	}
	return github.NewClient(opts...)
}

// Repo returns owner/name's metadata (not its last commit). CloneURL is
// made from the web URL and the repository's canonical full name, so a
// renamed repository clones from its new name.
func (g *GitHub) Repo(ctx context.Context, token, owner, name string) (*gantry.Repository, error) {
	c, err := g.client(token)
	if err != nil {
		return nil, err
	}
	r, _, err := c.Repositories.Get(ctx, owner, name)
	if err != nil {
		return nil, g.apiError(ctx, err, g.webURL+"/"+owner+"/"+name, "")
	}
	return g.repository(r), nil
}

// RepoByID returns the repository with GitHub's numeric id, as seen with
// token (private repositories need the token of someone who may read them).
func (g *GitHub) RepoByID(ctx context.Context, token string, id int64) (*gantry.Repository, error) {
	c, err := g.client(token)
	if err != nil {
		return nil, err
	}
	r, _, err := c.Repositories.GetByID(ctx, id)
	if err != nil {
		return nil, g.apiError(ctx, err, "repository #"+strconv.FormatInt(id, 10), "")
	}
	return g.repository(r), nil
}

func (g *GitHub) repository(r *github.Repository) *gantry.Repository {
	return &gantry.Repository{
		ID:            strconv.FormatInt(r.GetID(), 10),
		Name:          r.GetName(),
		FullName:      r.GetFullName(),
		Description:   r.GetDescription(),
		DefaultBranch: r.GetDefaultBranch(),
		Private:       r.GetPrivate(),
		URL:           cmp.Or(r.GetHTMLURL(), g.webURL+"/"+r.GetFullName()),
		CloneURL:      g.webURL + "/" + r.GetFullName() + ".git",
	}
}

// Commit returns the commit ref (a branch, tag or SHA) points at in
// owner/name: message, author name, committer date (UTC) and SHA. A ref
// that does not exist is ENOTFOUND "Branch '<ref>' not found in
// <owner/name>".
func (g *GitHub) Commit(ctx context.Context, token, owner, name, ref string) (*gantry.Commit, error) {
	c, err := g.client(token)
	if err != nil {
		return nil, err
	}
	segs := strings.Split(ref, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	rc, _, err := c.Repositories.GetCommit(ctx, owner, name, strings.Join(segs, "/"), nil)
	if err != nil {
		return nil, g.apiError(ctx, err, g.webURL+"/"+owner+"/"+name, ref)
	}
	cm := rc.GetCommit()
	date := cm.GetCommitter().GetDate().Time
	if date.IsZero() {
		date = cm.GetAuthor().GetDate().Time
	}
	return &gantry.Commit{
		SHA:     rc.GetSHA(),
		Message: cm.GetMessage(),
		Author:  cmp.Or(cm.GetAuthor().GetName(), rc.GetAuthor().GetLogin()),
		Date:    date.UTC(),
	}, nil
}

// User is the GitHub account a token belongs to.
type User struct {
	ID        int64
	Login     string
	AvatarURL string
}

// User returns the account token belongs to. An invalid or revoked token is
// EINVALID "GitHub rejected the access token; connect your GitHub account
// again".
func (g *GitHub) User(ctx context.Context, token string) (*User, error) {
	if token == "" {
		return nil, errBadToken()
	}
	c, err := g.client(token)
	if err != nil {
		return nil, err
	}
	u, _, err := c.Users.Get(ctx, "")
	if err != nil {
		return nil, g.apiError(ctx, err, "", "")
	}
	return &User{ID: u.GetID(), Login: u.GetLogin(), AvatarURL: u.GetAvatarURL()}, nil
}

// Repos returns every repository the token's account can read (owned,
// collaborator and organisation member; all pages, up to 3,000), most
// recently updated first.
func (g *GitHub) Repos(ctx context.Context, token string) ([]gantry.GitHubRepo, error) {
	if token == "" {
		return nil, errBadToken()
	}
	c, err := g.client(token)
	if err != nil {
		return nil, err
	}
	opt := &github.RepositoryListByAuthenticatedUserOptions{
		Sort: "updated", Direction: "desc",
		ListOptions: github.ListOptions{PerPage: 100},
	}
	var out []gantry.GitHubRepo
	for page := 0; page < maxRepoPages; page++ {
		repos, resp, err := c.Repositories.ListByAuthenticatedUser(ctx, opt)
		if err != nil {
			return nil, g.apiError(ctx, err, "", "")
		}
		for _, r := range repos {
			out = append(out, gantry.GitHubRepo{
				ID:            r.GetID(),
				Name:          r.GetName(),
				FullName:      r.GetFullName(),
				Description:   r.GetDescription(),
				Private:       r.GetPrivate(),
				DefaultBranch: r.GetDefaultBranch(),
				UpdatedAt:     r.GetUpdatedAt().Time.UTC(),
				URL:           r.GetHTMLURL(),
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// RevokeGrant deletes the grant of the OAuth app clientID/clientSecret for
// the account token belongs to, as GitHub documents it for OAuth apps:
// DELETE <api>/applications/{client_id}/grant with HTTP Basic
// authentication by the app's client id and secret and the JSON body
// {"access_token": token}. GitHub then forgets every token of the app for
// that account, and the app leaves the user's authorized applications.
// GitHub answers 204; 404 (the token or grant is already gone) and 422
// count as done too. GitHub refusing the app's credentials (401) is
// EUNAVAILABLE "GitHub rejected the OAuth app's client id or secret";
// other failures are mapped as for the other calls (unreachable, timed
// out, rate limited, GitHub errors). Redirects are not followed, so the
// client secret goes to the API URL only; neither the secret nor the token
// appears in an error.
func (g *GitHub) RevokeGrant(ctx context.Context, clientID, clientSecret, token string) error {
	if clientID == "" || clientSecret == "" {
		return ErrOAuthNotConfigured
	}
	if token == "" {
		return nil // nothing to revoke
	}
	hc := *g.http
	hc.Transport = &github.BasicAuthTransport{Username: clientID, Password: clientSecret, Transport: g.http.Transport}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c, err := github.NewClient(
		github.WithHTTPClient(&hc),
		github.WithURLs(&g.apiURL, &g.apiURL),
		github.WithUserAgent("gantry"),
	)
	if err != nil {
		return err
	}
	_, err = c.Authorizations.DeleteGrant(ctx, clientID, token)
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusNotFound, http.StatusUnprocessableEntity:
			return nil
		case http.StatusUnauthorized:
			return gantry.Errorf(gantry.EUNAVAILABLE, "GitHub rejected the OAuth app's client id or secret")
		}
	}
	if err != nil {
		return g.apiError(ctx, err, "", "")
	}
	return nil
}

// errRateLimited marks GitHub API rate limiting, so lookups can fall back
// to git.
var errRateLimited = gantry.Errorf(gantry.EUNAVAILABLE, "GitHub's API rate limit was reached; try again later")

// msgBadToken is the message of an invalid or revoked token.
const msgBadToken = "GitHub rejected the access token; connect your GitHub account again"

func errBadToken() error { return gantry.Errorf(gantry.EINVALID, msgBadToken) }

// TokenRejected reports whether err says GitHub refused the access token
// (401: invalid, expired or revoked), as User, Repos, RepoByID and the
// lookups return it.
func TokenRejected(err error) bool {
	return gantry.ErrorCode(err) == gantry.EINVALID && gantry.ErrorMessage(err) == msgBadToken
}

// apiError maps a go-github error: 404 → "Repository not found: <what>"
// (GitHub also answers 404 for private repositories the caller cannot
// see), 422 on a commit → branch not found, 401 → bad token, 403 / 429
// rate limits → errRateLimited, other 403 → private, timeouts → "Timed out".
func (g *GitHub) apiError(ctx context.Context, err error, what, ref string) error {
	var ge *gantry.Error
	if errors.As(err, &ge) {
		return ge
	}
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &rl) || errors.As(err, &abuse) {
		return errRateLimited
	}
	host := g.apiURL
	if u, perr := url.Parse(g.apiURL); perr == nil {
		host = u.Host
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch code := er.Response.StatusCode; {
		case code == http.StatusNotFound && ref != "" && strings.Contains(er.Response.Request.URL.Path, "/commits/"):
			return gantry.Errorf(gantry.ENOTFOUND, "Branch '%s' not found in %s", ref, fullNameOf(what))
		case code == http.StatusNotFound:
			if what == "" {
				return gantry.Errorf(gantry.ENOTFOUND, "Not found on GitHub")
			}
			return gantry.Errorf(gantry.ENOTFOUND, "Repository not found: %s", shown(what))
		case code == http.StatusUnprocessableEntity && ref != "":
			return gantry.Errorf(gantry.ENOTFOUND, "Branch '%s' not found in %s", ref, fullNameOf(what))
		case code == http.StatusConflict && ref != "": // "Git Repository is empty."
			return gantry.Errorf(gantry.EINVALID, "Repository is empty: %s", shown(what))
		case code == http.StatusUnauthorized:
			return errBadToken()
		case code == http.StatusForbidden || code == http.StatusTooManyRequests:
			if er.Response.Header.Get("X-RateLimit-Remaining") == "0" || code == http.StatusTooManyRequests {
				return errRateLimited
			}
			return errPrivate()
		case code >= 500:
			return gantry.Errorf(gantry.EUNAVAILABLE, "GitHub is not answering properly (HTTP %d); try again later", code)
		}
		return err
	}
	if terr := timeoutOr(ctx, err, host, g.http.Timeout); terr != err {
		return terr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return gantry.Errorf(gantry.EUNAVAILABLE, "Could not reach GitHub at %s", shown(host))
}

// fullNameOf returns "owner/name" of a web URL.
func fullNameOf(webURL string) string {
	if u, err := url.Parse(webURL); err == nil && u.Path != "" {
		return strings.Trim(u.Path, "/")
	}
	return webURL
}
