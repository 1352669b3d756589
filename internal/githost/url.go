package githost

import (
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gantryhq/gantry"
)

// User-facing messages of ParseRepoURL.
const (
	msgEmptyURL      = "Please enter a repository URL"
	msgOnlyHTTP      = "Only http(s) repository URLs are supported"
	msgCredentials   = "Repository URLs must not contain credentials"
	msgNotRepoURL    = "Not a repository URL: expected https://host/owner/repo"
	msgInvalidBranch = "Invalid branch name in repository URL"
	maxRepoURLLength = 2048
	maxPathSegments  = 20
)

// RepoRef is a parsed, canonical repository URL.
type RepoRef struct {
	Scheme   string // "https" or "http", as given
	Host     string // lowercase host name or IP, with ":port" when one was given
	Owner    string // everything before the name: "owner", or "group/subgroup" on GitLab
	Name     string // repository name without ".git"
	FullName string // Owner + "/" + Name, or Name alone for a repository at the host's root
	CloneURL string // Scheme://Host/FullName.git; without ".git" when it was not given and the host is not a known forge
	WebURL   string // Scheme://Host/FullName
	Branch   string // from a /tree/<branch> (or /-/tree/, /blob/, /src/branch/) suffix; "" otherwise
}

// Hostname returns the host without its port.
func (r *RepoRef) Hostname() string {
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		return h
	}
	return strings.Trim(r.Host, "[]")
}

// Port returns the explicit port, or the scheme's default (443 or 80).
func (r *RepoRef) Port() string {
	if _, p, err := net.SplitHostPort(r.Host); err == nil {
		return p
	}
	if r.Scheme == "http" {
		return "80"
	}
	return "443"
}

var (
	// scpLike matches git's scp-style SSH syntax: [user@]host:path.
	scpLike = regexp.MustCompile(`^[A-Za-z0-9._~-]+@[^/]+:`)
	// transportRE matches git's "<transport>::<address>" syntax.
	transportRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*::`)
	// segmentRE is what a path segment of a repository may hold.
	segmentRE = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
	// hostRE is a DNS name (IP literals are checked separately).
	hostRE = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$`)
)

// ParseRepoURL parses what people paste as a repository address and
// returns its canonical form. It accepts:
//
//	https://host/owner/repo, with or without ".git" and a trailing slash
//	http://host/owner/repo (kept as http)
//	host/owner/repo without a scheme (https is assumed)
//	…/tree/<branch>, GitLab's …/-/tree/<branch>, …/blob/<branch>/…,
//	Gitea's …/src/branch/<branch>
//	a port after the host
//
// Queries and fragments are dropped. CloneURL ends in ".git" when the
// URL did or the host is a known forge (github.com, gitlab.com,
// codeberg.org, gitea.com, bitbucket.org), which serve every repository
// there; on other hosts (cgit, a campus server) the path is kept as given.
// Everything else is refused with an
// EINVALID *gantry.Error before any network access: schemes other than http
// and https (file:, ssh:, git:, ext::), scp-style "git@host:path", local
// paths, user names or passwords in the URL, "." and ".." segments, and
// characters outside [A-Za-z0-9._~-] in path segments. The host is not
// resolved here: that is Checker's job.
func ParseRepoURL(raw string) (*RepoRef, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return nil, gantry.Errorf(gantry.EINVALID, msgEmptyURL)
	case len(s) > maxRepoURLLength:
		return nil, gantry.Errorf(gantry.EINVALID, "Repository URL is too long")
	case transportRE.MatchString(s), // git's transport::address (ext::, fd::)
		strings.HasPrefix(s, "/"), strings.HasPrefix(s, "."), strings.HasPrefix(s, "~"),
		!strings.Contains(s, "://") && scpLike.MatchString(s):
		return nil, gantry.Errorf(gantry.EINVALID, msgOnlyHTTP)
	case strings.ContainsAny(s, " \t\r\n\x00\\"):
		return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	if i := strings.Index(s, "://"); i < 0 {
		if strings.Contains(strings.SplitN(s, "/", 2)[0], ":") && !hasPort(s) {
			// "file:x", "ssh:host", "c:/path" and friends.
			return nil, gantry.Errorf(gantry.EINVALID, msgOnlyHTTP)
		}
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		if strings.Contains(err.Error(), "invalid port") {
			return nil, gantry.Errorf(gantry.EINVALID, "Invalid port in repository URL")
		}
		return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return nil, gantry.Errorf(gantry.EINVALID, msgOnlyHTTP)
	}
	if u.User != nil {
		return nil, gantry.Errorf(gantry.EINVALID, msgCredentials)
	}
	if u.Opaque != "" {
		return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	host, err := canonicalHost(u)
	if err != nil {
		return nil, err
	}

	var segs []string
	for _, seg := range strings.Split(u.Path, "/") {
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	if len(segs) > maxPathSegments {
		return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	repo, branch := splitBranch(segs)
	if len(repo) == 0 {
		return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	if isGitHubHost(host) {
		if len(repo) < 2 {
			return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
		}
		repo = repo[:2] // /owner/repo/issues, /owner/repo/pulls, …
	}
	last := len(repo) - 1
	hadGit := false
	if n := len(repo[last]); n > 4 && strings.EqualFold(repo[last][n-4:], ".git") {
		repo[last] = repo[last][:n-4]
		hadGit = true
	}
	for _, seg := range repo {
		if seg == "." || seg == ".." || !segmentRE.MatchString(seg) || strings.HasPrefix(seg, "-") {
			return nil, gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
		}
	}
	if branch != "" && !validBranch(branch) {
		return nil, gantry.Errorf(gantry.EINVALID, msgInvalidBranch)
	}

	ref := &RepoRef{
		Scheme:   scheme,
		Host:     host,
		Owner:    strings.Join(repo[:last], "/"),
		Name:     repo[last],
		FullName: strings.Join(repo, "/"),
		Branch:   branch,
	}
	ref.WebURL = scheme + "://" + host + "/" + ref.FullName
	ref.CloneURL = ref.WebURL
	if hadGit || knownForges[host] {
		ref.CloneURL += ".git"
	}
	return ref, nil
}

// hasPort reports whether a scheme-less s starts with host:port/.
func hasPort(s string) bool {
	hostport := strings.SplitN(s, "/", 2)[0]
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	_, err = strconv.Atoi(port)
	return err == nil
}

// canonicalHost lowercases and validates u's host and port; it drops a
// trailing dot and "www." in front of github.com.
func canonicalHost(u *url.URL) (string, error) {
	name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if name == "" {
		return "", gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", gantry.Errorf(gantry.EINVALID, "Invalid port in repository URL")
		}
		port = strconv.Itoa(n)
	}
	if name == "www.github.com" {
		name = "github.com"
	}
	if ip := net.ParseIP(name); ip != nil {
		if strings.Contains(name, "%") {
			return "", gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
		}
		name = ip.String()
		if port == "" && strings.Contains(name, ":") {
			return "[" + name + "]", nil
		}
	} else if !hostRE.MatchString(name) {
		return "", gantry.Errorf(gantry.EINVALID, msgNotRepoURL)
	}
	if port == "" {
		return name, nil
	}
	return net.JoinHostPort(name, port), nil
}

// splitBranch separates the repository's path segments from a branch named
// by a web-UI suffix: /tree/<b>, /-/tree/<b>, /blob/<b>/…, /src/branch/<b>.
// A branch after /tree/ may contain slashes ("feature/x").
func splitBranch(segs []string) (repo []string, branch string) {
	for i, seg := range segs {
		if seg == "-" { // GitLab: everything after "-" is UI.
			if i+2 < len(segs) && (segs[i+1] == "tree" || segs[i+1] == "blob") {
				if segs[i+1] == "tree" {
					return segs[:i], strings.Join(segs[i+2:], "/")
				}
				return segs[:i], segs[i+2]
			}
			return segs[:i], ""
		}
		if i < 2 {
			continue
		}
		switch {
		case seg == "tree" && i+1 < len(segs):
			return segs[:i], strings.Join(segs[i+1:], "/")
		case seg == "blob" && i+1 < len(segs):
			return segs[:i], segs[i+1]
		case seg == "src" && i+2 < len(segs) && segs[i+1] == "branch":
			return segs[:i], strings.Join(segs[i+2:], "/")
		}
	}
	return segs, ""
}

// validBranch reports whether b is acceptable as a branch name for git
// commands: gantry.ValidateBranch's rules, the same for a branch typed into
// a form, taken from a URL's /tree/<branch> or named by a code host.
func validBranch(b string) bool { return gantry.ValidBranch(b) }

// knownForges serve every repository at "<path>.git"; on other hosts (cgit,
// a campus server) the path is kept as given.
var knownForges = map[string]bool{
	"github.com": true, "gitlab.com": true, "codeberg.org": true, "gitea.com": true, "bitbucket.org": true,
}

// isGitHubHost reports whether host is github.com itself. Service also
// treats its configured web host as GitHub.
func isGitHubHost(host string) bool { return host == "github.com" }
