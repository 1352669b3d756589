package githost

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gantryhq/gantry"
)

// failure is a kind of git failure, read from git's stderr.
type failure int

const (
	failOther       failure = iota // nothing recognised: git failed (exit N)
	failShallow                    // a dumb-HTTP host refused --depth
	failBranch                     // the branch is not on the remote
	failAuth                       // 401, 403, credentials asked for
	failDisk                       // the clone filled its folder's disk
	failResolve                    // the name does not resolve
	failUnreachable                // refused, no route, the sandbox's network policy
	failTimeout                    // curl's own timeouts
	failHostError                  // 5xx, 429
	failDropped                    // the host hung up mid-transfer
	failDamaged                    // objects or packs missing or corrupt on the host
	failNotGit                     // the answer is not git's
	failNotFound                   // 404, 410
	failRedirect                   // 3xx (git is told not to follow)
	failTLS                        // certificate or handshake
)

// failures says which stderr lines (LC_ALL=C, lowercased, URLs blanked)
// mean which failure. The first kind with a match wins, so the order
// matters: a transfer cut short also ends in "index-pack failed", a dumb
// host's missing pack also says "returned error: 404", and a 500 comes as
// "RPC failed; HTTP 500".
var failures = []struct {
	kind failure
	subs []string // any of these
}{
	{failShallow, []string{"does not support shallow"}},
	{failBranch, []string{"not found in upstream", "could not find remote branch", "couldn't find remote ref"}},
	{failAuth, []string{"could not read username", "could not read password", "authentication failed",
		"returned error: 401", "returned error: 403"}},
	{failDisk, []string{"no space left on device", "disk quota exceeded", "out of diskspace", "file too large",
		"failure writing output to destination"}}, // the dumb walker's curl, on a full disk
	{failResolve, []string{"could not resolve host"}},
	// Reset before the first answer: what a closed port looks like through
	// the sandbox's port forwarding.
	{failUnreachable, []string{"failed to connect", "couldn't connect", "connection refused", "no route to host",
		"network is unreachable", "host is unreachable", "unable to access URL: recv failure",
		"unable to access URL: empty reply from server"}},
	{failTimeout, []string{"timed out", "timeout was reached"}},
	{failHostError, []string{"returned error: 5", "returned error: 429"}},
	{failDropped, []string{"connection reset", "empty reply from server", "recv failure", "transfer closed",
		"early eof", "remote end hung up", "rpc failed", "unexpected disconnect"}},
	{failDamaged, []string{"unable to find", "unable to get pack", "cannot obtain needed", "fetch failed",
		"did not send all necessary objects", "index-pack failed", "bad object", "corrupt", "packfile"}},
	{failNotGit, []string{"not valid: is this a git repository", "does not appear to be a git repository",
		"not a git repository", "invalid server response", "protocol error: bad"}},
	{failNotFound, []string{"not found", "returned error: 404", "returned error: 410"}},
	{failRedirect, []string{"returned error: 30"}},
	{failTLS, []string{"ssl certificate", "certificate verification", "ssl_connect", "gnutls", "tls"}},
}

// urlish matches what stderr quotes of URLs and paths, which the remote's
// owner chooses ("…/timed-out-tls.git"): blanked before matching.
var urlish = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[^\s']*|'[^'\n]*'`)

// kindOf reads git's stderr. Quoted text and URLs are blanked to "URL".
func kindOf(stderr string) failure {
	s := urlish.ReplaceAllString(strings.ToLower(stderr), "URL")
	for _, f := range failures {
		for _, sub := range f.subs {
			if strings.Contains(s, sub) {
				return f.kind
			}
		}
	}
	return failOther
}

// gitFailure is a git command that exited with an error. Its Unwrap is the
// sentence users see (a *gantry.Error, never a server error: whatever a
// remote host makes git do is said in words); its Error keeps git's own
// lines, for the server log only.
type gitFailure struct {
	kind   failure
	cmd    string // git's subcommand: clone, ls-remote
	exit   int
	stderr string
	user   *gantry.Error
}

func (e *gitFailure) Error() string {
	return fmt.Sprintf("git %s exited with %d: %s", e.cmd, e.exit, strings.TrimSpace(e.stderr))
}

// Unwrap returns the user-facing error.
func (e *gitFailure) Unwrap() error { return e.user }

// translate turns git's exit code and stderr (LC_ALL=C) for a command
// against r into a gitFailure with the sentence for its kind. limit is the
// size limit of the folder git wrote to (0 for none), for "too large".
func translate(r *RepoRef, branch, cmd string, exit int, stderr string, limit int64) *gitFailure {
	f := &gitFailure{kind: kindOf(stderr), cmd: cmd, exit: exit, stderr: stderr}
	f.user = sentence(f.kind, r, branch, cmd, exit, limit)
	return f
}

// sentence is what users are told of a failure of kind.
func sentence(kind failure, ref *RepoRef, branch, cmd string, exit int, limit int64) *gantry.Error {
	switch kind {
	case failShallow:
		return gantry.Errorf(gantry.EINVALID, "Could not clone %s: its host speaks only the basic (dumb) HTTP protocol and refused a shallow clone; try again", shown(ref.WebURL))
	case failBranch:
		return errBranchNotFound(branch, ref)
	case failAuth:
		return errPrivate()
	case failDisk:
		if limit > 0 {
			return errTooLarge(limit)
		}
		return gantry.Errorf(gantry.EINVALID, "Repository is too large: it filled the disk space available to it")
	case failDamaged:
		return gantry.Errorf(gantry.EINVALID, "Could not fetch %s: its host is missing some of the repository's objects or sent damaged ones; if it serves the repository as plain files, run git update-server-info there after every push", shown(ref.WebURL))
	case failNotGit:
		return errNotGit(ref)
	case failNotFound:
		return errNotFound(ref)
	case failRedirect:
		return gantry.Errorf(gantry.EINVALID, "Repository URL redirects elsewhere: %s", shown(ref.WebURL))
	case failResolve:
		return gantry.Errorf(gantry.EINVALID, "Could not resolve host: %s", shown(ref.Hostname()))
	case failUnreachable:
		return errUnreachable(ref.Host)
	case failTimeout:
		return gantry.Errorf(gantry.EINVALID, "Timed out while contacting %s; try again later", shown(ref.Host))
	case failTLS:
		return gantry.Errorf(gantry.EINVALID, "Could not establish a secure connection to %s", shown(ref.Host))
	case failHostError:
		return gantry.Errorf(gantry.EUNAVAILABLE, "The git host %s is not answering properly; try again later", shown(ref.Host))
	case failDropped:
		return gantry.Errorf(gantry.EUNAVAILABLE, "The git host %s closed the connection before the repository was received; try again later", shown(ref.Host))
	}
	what := "clone"
	if cmd != "clone" {
		what = "read"
	}
	return gantry.Errorf(gantry.EINVALID, "Could not %s %s: git failed (exit %d); check that the URL is a git repository and try again", what, shown(ref.WebURL), exit)
}

func errNotFound(ref *RepoRef) *gantry.Error {
	return gantry.Errorf(gantry.ENOTFOUND, "Repository not found: %s", shown(ref.WebURL))
}

func errPrivate() *gantry.Error {
	return gantry.Errorf(gantry.EINVALID, "Repository is private or requires authentication")
}

func errNotGit(ref *RepoRef) *gantry.Error {
	return gantry.Errorf(gantry.EINVALID, "Not a git repository: %s", shown(ref.WebURL))
}

func errUnreachable(host string) *gantry.Error {
	return gantry.Errorf(gantry.EINVALID, "Could not connect to %s: check the URL, or try again later if the host is down", shown(host))
}

func errBranchNotFound(branch string, ref *RepoRef) *gantry.Error {
	if branch == "" {
		return gantry.Errorf(gantry.EINVALID, "Repository is empty: %s", shown(ref.WebURL))
	}
	return gantry.Errorf(gantry.ENOTFOUND, "Branch '%s' not found in %s", branch, ref.FullName)
}
