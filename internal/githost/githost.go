// Package githost reaches the code hosts Gantry deploys from: any public git
// repository over http(s) through the git binary, and GitHub through its
// REST API and OAuth. It parses and checks what users paste (ParseRepoURL,
// Checker), runs git safely (Git), looks repositories up with the
// framework detected (Service.Lookup), and lists a connected account's
// repositories (GitHub, OAuth). It keeps no state and never sees the
// database.
package githost

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Detector inspects a checked-out repository and suggests how to build it.
// build.Suggest implements it; cmd wires it in (githost does not import
// build, whose pipeline clones through githost).
type Detector func(dir string) (framework string, cfg gantry.BuildConfig, err error)

// Config configures a Service. Zero fields take the defaults named.
type Config struct {
	// AllowHosts are hosts that may be contacted although they resolve to
	// private or loopback addresses (GANTRY_GIT_ALLOW_HOSTS, comma
	// separated; see NewChecker for the syntax). The hosts of GitHubAPIURL
	// and GitHubWebURL (with their ports) are always allowed: they are the
	// operator's own configuration.
	AllowHosts []string
	// GitHubAPIURL is GitHub's REST API (GANTRY_GITHUB_API_URL, default
	// https://api.github.com/; GitHub Enterprise: https://HOST/api/v3/).
	GitHubAPIURL string
	// GitHubWebURL is GitHub's web site (GANTRY_GITHUB_WEB_URL, default
	// https://github.com): repository URLs on its host are looked up through
	// the API, clones are made from it, and OAuth runs on it.
	GitHubWebURL string
	// GitHubToken is an optional server token used for anonymous API
	// lookups (60 requests an hour per IP without one). It is never sent to
	// git or to other hosts.
	GitHubToken string
	// ClientID and ClientSecret are the GitHub OAuth app
	// (GANTRY_GITHUB_CLIENT_ID, GANTRY_GITHUB_CLIENT_SECRET); without them
	// Service.OAuth is nil. RedirectURL is Gantry's callback URL, e.g.
	// <GANTRY_PUBLIC_URL>/api/auth/github/callback. Scopes nil means
	// DefaultScopes.
	ClientID, ClientSecret, RedirectURL string
	Scopes                              []string
	// Timeout bounds each lookup, ls-remote, branch head and GitHub API
	// call (default DefaultTimeout, 60 s); CloneTimeout bounds Clone for
	// builds (default DefaultCloneTimeout, 10 min).
	Timeout, CloneTimeout time.Duration
	// MaxRepoSize caps a build clone's size on disk (default
	// DefaultMaxSize, 500 MiB); LookupMaxSize caps a lookup's clone
	// (default DefaultLookupSize, 100 MiB).
	MaxRepoSize, LookupMaxSize int64
	// GitPath is the git binary when git runs on the host (default: "git"
	// from PATH); in the sandbox it is always /usr/bin/git.
	GitPath string
	// Sandbox runs every git command as its unprivileged user (see Git);
	// nil runs git on the host as the platform's user (tests and
	// development only).
	Sandbox *sandbox.Sandbox
	// DataDir is the platform's data folder: lookups clone into fresh
	// folders under DataDir/lookups, removed afterwards. "" means the
	// system temp folder.
	DataDir string
	// Detect runs on a clone during lookups (shallow where the host can
	// make one); nil skips the clone, and lookups then carry no framework
	// or build settings.
	Detect Detector
	// Logger gets every failed git command with git's own lines (users are
	// told a sentence instead); nil means slog.Default().
	Logger *slog.Logger
}

// Service looks repositories up on any git host and on GitHub. It holds no
// per-request state and is safe for concurrent use.
type Service struct {
	Checker *Checker
	Git     *Git
	GitHub  *GitHub
	OAuth   *OAuth // nil when no OAuth app is configured

	detect      Detector
	githubHost  string // hostname of GitHubWebURL
	githubPort  string
	serverToken string
	timeout     time.Duration
}

// New returns a Service for cfg.
func New(cfg Config) (*Service, error) {
	timeout := orDuration(cfg.Timeout, DefaultTimeout)
	checker := NewChecker(cfg.AllowHosts...)
	apiURL := cmp.Or(cfg.GitHubAPIURL, DefaultGitHubAPIURL)
	webURL := strings.TrimSuffix(cmp.Or(cfg.GitHubWebURL, DefaultGitHubWebURL), "/")
	var webHost, webPort string
	for i, raw := range []string{apiURL, webURL} {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, errors.New("githost: invalid GitHub URL " + raw)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		checker.Allow(net.JoinHostPort(u.Hostname(), port))
		if i == 1 {
			webHost, webPort = canonicalName(u.Hostname()), port
		}
	}
	gh, err := NewGitHub(apiURL, webURL, checker.HTTPClient(timeout))
	if err != nil {
		return nil, err
	}
	s := &Service{
		Checker: checker,
		Git: &Git{
			Path:          cfg.GitPath,
			Timeout:       timeout,
			CloneTimeout:  cfg.CloneTimeout,
			MaxSize:       cfg.MaxRepoSize,
			LookupMaxSize: cfg.LookupMaxSize,
			Checker:       checker,
			Sandbox:       cfg.Sandbox,
			Logger:        cfg.Logger,
		},
		GitHub:      gh,
		detect:      cfg.Detect,
		githubHost:  webHost,
		githubPort:  webPort,
		serverToken: cfg.GitHubToken,
		timeout:     timeout,
	}
	if cfg.DataDir != "" {
		s.Git.LookupDir = filepath.Join(cfg.DataDir, "lookups")
	}
	if cfg.ClientID != "" || cfg.ClientSecret != "" {
		s.OAuth, err = NewOAuth(cfg.ClientID, cfg.ClientSecret, webURL, cfg.RedirectURL, cfg.Scopes, checker.HTTPClient(timeout))
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// IsGitHub reports whether ref is on the configured GitHub host.
func (s *Service) IsGitHub(ref *RepoRef) bool {
	return canonicalName(ref.Hostname()) == s.githubHost && ref.Port() == s.githubPort
}

// LookupResult is the answer to a public repository lookup (SPEC §3
// "Public repository lookup result", plus the detected framework).
type LookupResult struct {
	Repository           gantry.Repository  `json:"repository"`
	Branch               string             `json:"branch"` // to deploy: the URL's /tree/<branch>, else the default branch
	SuggestedName        string             `json:"suggestedName"`
	SuggestedDescription string             `json:"suggestedDescription"`
	BuildConfig          gantry.BuildConfig `json:"buildConfig"`
	Framework            string             `json:"framework"`             // SPEC §3 project type; "" when detection failed or was skipped
	DetectError          string             `json:"detectError,omitempty"` // why detection failed, shown as is
}

// Lookup describes the public repository at rawURL (anything ParseRepoURL
// accepts). Repositories on the GitHub host come from the REST API (id,
// name, full name, description, default branch, visibility, web URL, and
// the last commit of the URL's branch or the default branch); any other
// host is asked through git (default branch from ls-remote --symref, last
// commit from the clone). Then, when a Detector is configured, the branch is
// cloned (shallow where the host can; in the sandbox, capped at
// LookupMaxSize, within Timeout) into a folder under DataDir/lookups that
// is removed afterwards, and the detector's framework and build settings
// are returned. A failed detection does not fail the lookup: it is
// reported in DetectError. If GitHub's API is rate-limited the lookup falls
// back to git.
func (s *Service) Lookup(ctx context.Context, rawURL string) (*LookupResult, error) {
	return s.LookupAs(ctx, rawURL, "")
}

// LookupAs is Lookup with the caller's GitHub token, so a connected user can
// look up their private GitHub repositories. The token is used only for the
// GitHub host, never sent to other hosts.
func (s *Service) LookupAs(ctx context.Context, rawURL, token string) (*LookupResult, error) {
	ref, err := ParseRepoURL(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if !s.IsGitHub(ref) {
		return s.lookupGit(ctx, ref, "")
	}
	owner, name, _ := strings.Cut(ref.FullName, "/")
	name, _, _ = strings.Cut(name, "/")
	repo, err := s.GitHub.Repo(ctx, cmp.Or(token, s.serverToken), owner, name)
	if errors.Is(err, errRateLimited) {
		return s.lookupGit(ctx, ref, token)
	} else if err != nil {
		return nil, err
	}
	return s.lookupGitHubRepo(ctx, repo, ref.Branch, token)
}

// LookupGitHubID is Lookup for a repository of a connected account, by
// GitHub's numeric id, seen with the account's token; branch "" means the
// default branch.
func (s *Service) LookupGitHubID(ctx context.Context, token string, id int64, branch string) (*LookupResult, error) {
	if branch != "" {
		if err := gantry.ValidateBranch(branch); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	repo, err := s.GitHub.RepoByID(ctx, cmp.Or(token, s.serverToken), id)
	if err != nil {
		return nil, err
	}
	return s.lookupGitHubRepo(ctx, repo, branch, token)
}

func (s *Service) lookupGitHubRepo(ctx context.Context, repo *gantry.Repository, branch, token string) (*LookupResult, error) {
	if branch == "" {
		branch = repo.DefaultBranch
	}
	owner, name, _ := strings.Cut(repo.FullName, "/")
	commit, err := s.GitHub.Commit(ctx, cmp.Or(token, s.serverToken), owner, name, branch)
	switch {
	case errors.Is(err, errRateLimited):
		commit = nil // the clone below gives it
	case err != nil:
		return nil, err
	}
	repo.LastCommit = commit
	return s.finish(ctx, repo, branch, token)
}

// lookupGit asks git itself; ref is never on the GitHub host unless the API
// was rate-limited (then token is the user's GitHub token).
func (s *Service) lookupGit(ctx context.Context, ref *RepoRef, token string) (*LookupResult, error) {
	def, err := s.Git.lsRemoteHead(ctx, ref.CloneURL, token, s.timeout)
	if err != nil {
		return nil, err
	}
	branch := cmp.Or(ref.Branch, def)
	repo := &gantry.Repository{
		ID:            repoID(ref),
		Name:          ref.Name,
		FullName:      ref.FullName,
		DefaultBranch: def,
		URL:           ref.WebURL,
		CloneURL:      ref.CloneURL,
	}
	return s.finish(ctx, repo, branch, token)
}

// finish clones branch for detection (or, without a Detector, reads its
// head commit) and assembles the result.
func (s *Service) finish(ctx context.Context, repo *gantry.Repository, branch, token string) (*LookupResult, error) {
	res := &LookupResult{Branch: branch, SuggestedName: repo.Name, SuggestedDescription: repo.Description}
	if s.detect == nil {
		if repo.LastCommit == nil {
			c, err := s.Git.branchHead(ctx, repo.CloneURL, branch, token, s.timeout)
			if err != nil {
				return nil, err
			}
			repo.LastCommit = c
		}
		res.Repository = *repo
		return res, nil
	}
	dir, remove, err := s.Git.newLookupDir()
	if err != nil {
		return nil, err
	}
	defer remove()
	c, err := s.Git.clone(ctx, repo.CloneURL, branch, "", dir, token, runOpts{timeout: s.timeout, maxSize: s.Git.lookupMaxSize()})
	if err != nil {
		return nil, err
	}
	if repo.LastCommit == nil {
		repo.LastCommit = c
	}
	res.Repository = *repo
	fw, cfg, err := s.detect(dir)
	if err != nil {
		res.DetectError = err.Error()
		return res, nil
	}
	res.Framework, res.BuildConfig = fw, cfg
	return res, nil
}

// LatestCommit returns the head commit of branch ("" means the default
// branch) of a stored repository: through GitHub's API for the GitHub host
// (with token, else the server token; falling back to git when
// rate-limited), through git for any other host. Use it for Sync.
func (s *Service) LatestCommit(ctx context.Context, repo gantry.Repository, branch, token string) (*gantry.Commit, error) {
	ref, err := ParseRepoURL(cmp.Or(repo.CloneURL, repo.URL))
	if err != nil {
		return nil, err
	}
	branch = cmp.Or(branch, repo.DefaultBranch)
	if err := gantry.ValidateBranch(branch); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if !s.IsGitHub(ref) {
		return s.Git.branchHead(ctx, ref.CloneURL, branch, "", s.timeout)
	}
	full := cmp.Or(repo.FullName, ref.FullName)
	owner, name, _ := strings.Cut(full, "/")
	c, err := s.GitHub.Commit(ctx, cmp.Or(token, s.serverToken), owner, name, branch)
	if errors.Is(err, errRateLimited) {
		return s.Git.branchHead(ctx, ref.CloneURL, branch, token, s.timeout)
	}
	return c, err
}

// Clone is Git.Clone for builds (it satisfies build.Cloner): git runs
// in the sandbox as uid and gid, in the build's workspace dir. token is
// dropped unless rawURL is on the GitHub host, so a user's GitHub token
// can never be sent to another server.
func (s *Service) Clone(ctx context.Context, rawURL, branch, dir, token string, uid, gid uint32) (*gantry.Commit, error) {
	if token != "" {
		if ref, err := ParseRepoURL(rawURL); err != nil || !s.IsGitHub(ref) {
			token = ""
		}
	}
	return s.Git.Clone(ctx, rawURL, branch, dir, token, uid, gid)
}

// repoID is a stable id for a repository outside GitHub: "git-" and 16 hex
// digits of the SHA-256 of its web URL (the same with or without ".git").
func repoID(ref *RepoRef) string {
	sum := sha256.Sum256([]byte(ref.WebURL))
	return "git-" + hex.EncodeToString(sum[:8])
}

// CloneCommit is Git.CloneCommit for builds of a given commit (it
// satisfies build.CommitCloner), with Clone's rule for token.
func (s *Service) CloneCommit(ctx context.Context, rawURL, branch, commit, dir, token string, uid, gid uint32) (*gantry.Commit, error) {
	if token != "" {
		if ref, err := ParseRepoURL(rawURL); err != nil || !s.IsGitHub(ref) {
			token = ""
		}
	}
	return s.Git.CloneCommit(ctx, rawURL, branch, commit, dir, token, uid, gid)
}
