package githost

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/netpolicy"
	"github.com/gantryhq/gantry/internal/sandbox"
)

// Defaults of Git.
const (
	DefaultTimeout      = 60 * time.Second // ls-remote, branch heads, lookups
	DefaultCloneTimeout = 10 * time.Minute // Clone for builds
	DefaultMaxSize      = 500 << 20        // 500 MiB on disk per clone or fetch for a build
	DefaultLookupSize   = 100 << 20        // 100 MiB on disk per lookup's clone
	DefaultMaxOutput    = 1 << 20          // bytes of stdout and of stderr kept per command
	defaultPollInterval = 200 * time.Millisecond
)

// Git runs the git binary against user-supplied remote repositories.
//
// With a Sandbox in bwrap mode, every git command (ls-remote, clones, and
// the git log that reads a clone's head commit) runs inside it, as the
// sandbox's unprivileged user, with /usr/bin/git, in a folder of its own
// mounted at /workspace: the build's workspace for Clone, else a fresh
// folder under LookupDir that is removed afterwards. HOME is the run's
// private /tmp, so nothing of a cloned repository is read as
// configuration. The run's network is the sandbox's isolated one; a host
// on the Checker's allow list that resolves to loopback is reached through
// that one port of the host's loopback (sandbox.Command.HostLoopbackPorts),
// and one that resolves to another private address through
// sandbox.Command.Allow. Without a Sandbox, or in mode none, git runs
// directly on the host as the platform's user (development only).
//
// Every command gets: a time limit; an environment built from an
// allow-list (PATH, HOME set to a fresh temporary folder, LC_ALL=C,
// GIT_TERMINAL_PROMPT=0, GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null,
// GIT_ALLOW_PROTOCOL=http:https, GIT_PROTOCOL_FROM_USER=0, and the CA
// settings GIT_SSL_CAINFO, GIT_SSL_CAPATH, SSL_CERT_FILE, SSL_CERT_DIR when
// set, in the sandbox only those under the folders it sees) so no proxy,
// credential helper, askpass or user config is used;
// "-c protocol.allow=never -c protocol.{http,https}.allow=always
// -c http.followRedirects=false -c core.hooksPath=/dev/null
// -c credential.helper="; the host's addresses, resolved once and checked,
// pinned with http.curloptResolve so git cannot resolve the name
// differently (DNS rebinding); a cap on captured output; and, for clones,
// a cap on the size of the target folder (MaxSize for builds, LookupMaxSize
// for lookups: git is killed when it grows past it).
// A token is passed as an http.extraHeader through GIT_CONFIG_COUNT/KEY/VALUE
// environment variables, never in argv or the URL.
//
// Before git runs, the URL is parsed with ParseRepoURL, its host checked with
// Checker, and the smart-HTTP endpoint probed over Checker's HTTP client: that
// probe follows (checked) redirects, gives the clear errors (not found,
// private, not a git repository) that git itself words poorly, and tells a
// smart host from one that speaks only dumb HTTP (no shallow clones there).
// Whatever git itself then fails on is translated into a sentence
// (translate); git's own lines go to Logger only.
//
// The zero Git is usable: git from PATH run on the host, DefaultTimeout,
// DefaultCloneTimeout, DefaultMaxSize, DefaultLookupSize, DefaultMaxOutput,
// lookups in the system temp folder, and a Checker with an empty allow list.
type Git struct {
	Path          string        // git binary outside the sandbox; "" looks up "git" in PATH
	Timeout       time.Duration // LsRemoteHead, BranchHead and lookups; 0 means DefaultTimeout
	CloneTimeout  time.Duration // Clone; 0 means DefaultCloneTimeout
	MaxSize       int64         // bytes on disk per build clone; 0 means DefaultMaxSize
	LookupMaxSize int64         // bytes on disk per lookup clone; 0 means DefaultLookupSize
	MaxOutput     int           // bytes kept of each output stream; 0 means DefaultMaxOutput
	Checker       *Checker      // nil means NewChecker() (nothing private allowed)

	// Sandbox runs git (see above); nil runs it on the host.
	Sandbox *sandbox.Sandbox
	// LookupDir holds the folders lookups and ls-remote work in, one per
	// call, removed when it ends (<data>/lookups, created 0711 if
	// missing); "" means the system temp folder.
	LookupDir string

	// PollInterval is how often the size of a clone's folder is measured;
	// 0 means 200ms.
	PollInterval time.Duration

	// Logger gets every failed git command with git's own stderr, which
	// users never see (they get a sentence instead); nil means
	// slog.Default().
	Logger *slog.Logger
}

func (g *Git) timeout() time.Duration      { return orDuration(g.Timeout, DefaultTimeout) }
func (g *Git) cloneTimeout() time.Duration { return orDuration(g.CloneTimeout, DefaultCloneTimeout) }

func (g *Git) maxSize() int64 {
	if g.MaxSize > 0 {
		return g.MaxSize
	}
	return DefaultMaxSize
}

func (g *Git) lookupMaxSize() int64 {
	if g.LookupMaxSize > 0 {
		return g.LookupMaxSize
	}
	return DefaultLookupSize
}

// sandboxed reports whether git runs in the sandbox.
func (g *Git) sandboxed() bool {
	return g.Sandbox != nil && g.Sandbox.Mode() != sandbox.ModeNone
}

// SweepLookups removes the lookup folders an earlier process left under
// LookupDir when it died mid-lookup. Call it at start-up, before lookups
// run; without a LookupDir it does nothing.
func (g *Git) SweepLookups() error {
	if g.LookupDir == "" {
		return nil
	}
	entries, err := os.ReadDir(g.LookupDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	for _, e := range entries {
		// Volumes (sandboxed lookups) are unmounted first; their images go
		// with them.
		if err := sandbox.RemoveVolume(filepath.Join(g.LookupDir, strings.TrimSuffix(e.Name(), ".img"))); err != nil {
			return err
		}
	}
	return nil
}

// newLookupDir creates an empty folder for one lookup's git commands
// under LookupDir (or the system temp folder), owned by the sandbox user
// when git runs sandboxed, and returns it with the function that removes
// it. It is the one place lookups get their folder.
func (g *Git) newLookupDir() (string, func(), error) {
	base := g.LookupDir
	if base == "" {
		base = os.TempDir()
	} else if err := os.MkdirAll(base, 0o711); err != nil {
		return "", nil, fmt.Errorf("lookup folder: %w", err)
	}
	dir, err := os.MkdirTemp(base, "lookup-")
	if err != nil {
		return "", nil, fmt.Errorf("lookup folder: %w", err)
	}
	remove := func() { os.RemoveAll(dir) }
	if g.sandboxed() {
		// A volume of its own: the kernel caps what a lookup may write at
		// twice its size limit (the size watcher, which says "too large",
		// normally stops it first), and at lookupInodes files.
		v, err := g.Sandbox.OpenVolume(dir, sandbox.Disk{Bytes: max(2*g.lookupMaxSize(), 16<<20), Inodes: lookupInodes}, 0, 0)
		if err != nil {
			remove()
			return "", nil, fmt.Errorf("lookup folder: %w", err)
		}
		return v.Workspace, func() { _ = sandbox.RemoveVolume(v.Path) }, nil
	}
	return dir, remove, nil
}

// lookupInodes caps the files a lookup's clone may create.
const lookupInodes = 100_000

func (g *Git) checker() *Checker {
	if g.Checker != nil {
		return g.Checker
	}
	return &Checker{}
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// remote is a checked repository URL ready for git.
type remote struct {
	ref       *RepoRef
	url       string         // what git is given (the canonical clone URL, or where it redirected)
	pin       []string       // "-c http.curloptResolve=…" arguments
	token     string         //
	loopPorts []int          // host loopback ports the sandboxed git may reach (allow-listed host on loopback)
	allow     []netip.Prefix // private addresses the sandboxed git may reach (allow-listed host)
	dumb      bool           // the host speaks only dumb HTTP: no shallow clones
}

// LsRemoteHead returns the default branch of the public repository at
// rawURL, from "git ls-remote --symref URL HEAD". An empty repository is
// EINVALID "Repository is empty: <url>".
func (g *Git) LsRemoteHead(ctx context.Context, rawURL string) (string, error) {
	return g.lsRemoteHead(ctx, rawURL, "", g.timeout())
}

func (g *Git) lsRemoteHead(ctx context.Context, rawURL, token string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := g.prepare(ctx, rawURL, token, timeout)
	if err != nil {
		return "", err
	}
	dir, remove, err := g.newLookupDir()
	if err != nil {
		return "", err
	}
	defer remove()
	out, err := g.run(ctx, r, runOpts{timeout: timeout, dir: dir}, "ls-remote", "--symref", "--", r.url, "HEAD")
	if err != nil {
		return "", err
	}
	var headSHA string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			if b, ok := strings.CutSuffix(rest, "\tHEAD"); ok && b != "" {
				return b, nil
			}
		}
		if sha, ok := strings.CutSuffix(line, "\tHEAD"); ok {
			headSHA = sha
		}
	}
	if headSHA == "" {
		return "", gantry.Errorf(gantry.EINVALID, "Repository is empty: %s", shown(r.ref.WebURL))
	}
	// No symref (dumb HTTP or an old server): pick the branch at HEAD.
	out, err = g.run(ctx, r, runOpts{timeout: timeout, dir: dir}, "ls-remote", "--heads", "--", r.url)
	if err != nil {
		return "", err
	}
	var found []string
	for _, line := range strings.Split(string(out), "\n") {
		sha, name, ok := strings.Cut(line, "\trefs/heads/")
		if ok && sha == headSHA {
			found = append(found, name)
		}
	}
	for _, pref := range []string{"main", "master"} {
		for _, b := range found {
			if b == pref {
				return b, nil
			}
		}
	}
	if len(found) > 0 {
		return found[0], nil
	}
	return "", gantry.Errorf(gantry.EINVALID, "Could not determine the default branch of %s", shown(r.ref.WebURL))
}

// LsRemoteBranch returns the commit hash branch points at in the public
// repository at rawURL, from "git ls-remote --heads URL refs/heads/<branch>"
// (sandboxed, as every git command): what the commit watcher polls. A
// branch the repository does not have is ENOTFOUND "Branch not found".
func (g *Git) LsRemoteBranch(ctx context.Context, rawURL, branch string) (string, error) {
	if !validBranch(branch) {
		return "", gantry.Errorf(gantry.EINVALID, "Invalid branch name: %q", branch)
	}
	timeout := g.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := g.prepare(ctx, rawURL, "", timeout)
	if err != nil {
		return "", err
	}
	dir, remove, err := g.newLookupDir()
	if err != nil {
		return "", err
	}
	defer remove()
	out, err := g.run(ctx, r, runOpts{timeout: timeout, dir: dir, branch: branch}, "ls-remote", "--heads", "--", r.url, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if sha, ok := strings.CutSuffix(line, "\trefs/heads/"+branch); ok && validCommit(sha) {
			return sha, nil
		}
	}
	return "", gantry.Errorf(gantry.ENOTFOUND, "Branch not found")
}

// BranchHead returns the head commit of branch in the public repository at
// rawURL, from a shallow bare clone of that one branch (depth 1, no tags,
// trees and blobs filtered out where the server supports it; a full bare
// clone of the branch from a host that speaks only dumb HTTP), capped at
// LookupMaxSize, in a lookup folder that is removed afterwards. A missing
// branch is ENOTFOUND "Branch '<b>' not found in <repo>".
func (g *Git) BranchHead(ctx context.Context, rawURL, branch string) (*gantry.Commit, error) {
	return g.branchHead(ctx, rawURL, branch, "", g.timeout())
}

func (g *Git) branchHead(ctx context.Context, rawURL, branch, token string, timeout time.Duration) (*gantry.Commit, error) {
	if !validBranch(branch) {
		return nil, gantry.Errorf(gantry.EINVALID, "Invalid branch name: %q", branch)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := g.prepare(ctx, rawURL, token, timeout)
	if err != nil {
		return nil, err
	}
	dir, remove, err := g.newLookupDir()
	if err != nil {
		return nil, err
	}
	defer remove()
	o := runOpts{timeout: timeout, dir: dir, maxSize: g.lookupMaxSize(), branch: branch}
	err = g.cloneAdapting(ctx, r, o, func(shallow bool) []string {
		args := []string{"clone", "--quiet", "--bare"}
		if shallow {
			args = append(args, "--depth=1", "--filter=tree:0")
		}
		return append(args, "--single-branch", "--branch", branch, "--no-tags", "--", r.url, ".")
	})
	if err != nil {
		return nil, err
	}
	return g.headCommit(ctx, r, o)
}

// Clone makes a shallow clone (depth 1, that branch only, no tags) of
// the repository at rawURL into dir and returns its head commit; from a
// host that speaks only dumb HTTP, which cannot make shallow clones, a
// full clone of that branch, within the same limits. dir must
// be empty; in the sandbox it must belong to uid and gid (0 meaning the
// sandbox's own ids, as sandbox.Sandbox.PrepareWorkspace leaves it), and
// a missing dir is created and prepared that way. branch "" clones the
// default branch. token, when set, is sent as GitHub-style HTTP basic
// authentication (x-access-token:<token>) through git's environment. The
// clone, and the git log after it, run as uid and gid in the sandbox,
// limited to CloneTimeout (or ctx's deadline, if sooner) and MaxSize; on
// failure what was cloned into dir is removed, and dir is left empty.
func (g *Git) Clone(ctx context.Context, rawURL, branch, dir, token string, uid, gid uint32) (*gantry.Commit, error) {
	return g.clone(ctx, rawURL, branch, "", dir, token, runOpts{timeout: g.cloneTimeout(), maxSize: g.maxSize(), uid: uid, gid: gid})
}

// CloneCommit is Clone that then checks out commit (a full SHA): when the
// branch's head is another commit (the branch moved on since commit was
// pushed), that one commit is fetched on its own (git protocol v2 serves
// any commit reachable from the repository's refs, as git-http-backend and
// the large hosts do) and checked out, detached. From a dumb-HTTP host the
// clone is full, so a commit of the branch's history is there already. A
// host that refuses to serve a single commit fails the clone with
// "Commit … is no longer available from …": deploy the branch's head
// again instead. A branch the repository does not have (a pull request
// from a fork) clones the default branch and fetches the commit.
func (g *Git) CloneCommit(ctx context.Context, rawURL, branch, commit, dir, token string, uid, gid uint32) (*gantry.Commit, error) {
	if !validCommit(commit) {
		return nil, gantry.Errorf(gantry.EINVALID, "Invalid commit: %q", commit)
	}
	o := runOpts{timeout: g.cloneTimeout(), maxSize: g.maxSize(), uid: uid, gid: gid}
	c, err := g.clone(ctx, rawURL, branch, commit, dir, token, o)
	var f *gitFailure
	if branch != "" && errors.As(err, &f) && f.kind == failBranch {
		// A pull request from a fork: its branch is not in this
		// repository, its commit is (refs/pull/<n>/head). Clone the
		// default branch and fetch the commit.
		return g.clone(ctx, rawURL, "", commit, dir, token, o)
	}
	return c, err
}

// validCommit reports whether s is a full lower-case hex commit hash.
func validCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkoutCommit makes commit (not the clone's head) the checked-out
// commit of the clone in o.dir, fetched on its own first unless the clone
// is full.
func (g *Git) checkoutCommit(ctx context.Context, r *remote, o runOpts, commit string) error {
	local := o
	local.local, local.maxSize = true, 0
	if !r.dumb { // a dumb host's clone is full: the branch's history is there
		args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth=1", "--", r.url, commit}
		if _, err := g.run(ctx, r, o, args...); err != nil {
			if gantry.ErrorCode(err) == gantry.EINTERNAL || gantry.ErrorCode(err) == gantry.ETIMEOUT {
				return err
			}
			return gantry.Errorf(gantry.ENOTFOUND, "Commit %s is no longer available from %s (%s): deploy the branch's latest commit instead",
				commit[:7], shown(r.ref.WebURL), gantry.ErrorMessage(err))
		}
	}
	if _, err := g.run(ctx, r, local, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit); err != nil {
		return gantry.Errorf(gantry.ENOTFOUND, "Commit %s is not on this branch of %s: deploy the branch's latest commit instead",
			commit[:7], shown(r.ref.WebURL))
	}
	return nil
}

// clone clones into dir with o's limits and identity (o.dir is set here),
// then checks out commit when it is set.
func (g *Git) clone(ctx context.Context, rawURL, branch, commit, dir, token string, o runOpts) (_ *gantry.Commit, err error) {
	if branch != "" && !validBranch(branch) {
		return nil, gantry.Errorf(gantry.EINVALID, "Invalid branch name: %q", branch)
	}
	if dir == "" {
		return nil, errors.New("clone: no target folder")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("clone: %w", err)
		}
		if g.sandboxed() {
			if err := g.Sandbox.PrepareWorkspace(dir); err != nil {
				return nil, fmt.Errorf("clone: %w", err)
			}
		}
	case err != nil:
		return nil, fmt.Errorf("clone: %w", err)
	case len(entries) > 0:
		return nil, fmt.Errorf("clone: target folder %s is not empty", dir)
	}
	o.dir = dir
	o.branch = branch
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	r, err := g.prepare(ctx, rawURL, token, o.timeout)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			emptyDir(dir)
		}
	}()
	err = g.cloneAdapting(ctx, r, o, func(shallow bool) []string {
		args := []string{"clone", "--quiet"}
		if shallow {
			args = append(args, "--depth=1")
		}
		args = append(args, "--single-branch", "--no-tags")
		if branch != "" {
			args = append(args, "--branch", branch)
		}
		return append(args, "--", r.url, ".")
	})
	if err != nil {
		return nil, err
	}
	c, err := g.headCommit(ctx, r, o)
	if err != nil || commit == "" || c.SHA == commit {
		return c, err
	}
	if err := g.checkoutCommit(ctx, r, o, commit); err != nil {
		return nil, err
	}
	return g.headCommit(ctx, r, o)
}

// cloneAdapting runs the git clone that args makes into o.dir: shallow,
// unless the host speaks only dumb HTTP (the probe saw a plain ref list),
// for dumb HTTP cannot make shallow clones; a dumb host's clone is a full
// clone of the branch, bounded by the same size and time limits. When git
// itself finds the host dumb where the probe did not (git says "dumb http
// transport does not support shallow capabilities"), the folder is
// emptied and the clone run again in full, once.
func (g *Git) cloneAdapting(ctx context.Context, r *remote, o runOpts, args func(shallow bool) []string) error {
	_, err := g.run(ctx, r, o, args(!r.dumb)...)
	var f *gitFailure
	if errors.As(err, &f) && f.kind == failShallow && !r.dumb {
		r.dumb = true
		emptyDir(o.dir)
		_, err = g.run(ctx, r, o, args(false)...)
	}
	return err
}

// emptyDir removes everything in dir, leaving dir itself.
func emptyDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// headCommit reads HEAD of the repository git just cloned into o.dir,
// running git the way the clone ran (in the sandbox, as o's uid): git run
// by root in a folder the sandbox user could have written to is what it
// must never do.
func (g *Git) headCommit(ctx context.Context, r *remote, o runOpts) (*gantry.Commit, error) {
	o.timeout, o.maxSize, o.local = g.timeout(), 0, true
	out, err := g.run(ctx, r, o, "log", "-1", "--format=%H%x00%an%x00%cI%x00%B", "HEAD")
	if err != nil {
		return nil, err
	}
	parts := strings.SplitN(string(out), "\x00", 4)
	if len(parts) != 4 {
		return nil, fmt.Errorf("git log: unexpected output %q", out)
	}
	date, err := time.Parse(time.RFC3339, parts[2])
	if err != nil {
		return nil, fmt.Errorf("git log: commit date: %w", err)
	}
	return &gantry.Commit{
		SHA:     parts[0],
		Author:  parts[1],
		Date:    date.UTC(),
		Message: strings.TrimSpace(parts[3]),
	}, nil
}

// prepare parses rawURL, checks its host, probes it, and pins its addresses.
func (g *Git) prepare(ctx context.Context, rawURL, token string, timeout time.Duration) (*remote, error) {
	ref, err := ParseRepoURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := g.checker()
	addrs, err := c.Check(ctx, ref.Hostname(), ref.Port())
	if err != nil {
		return nil, timeoutOr(ctx, err, ref.Host, timeout)
	}
	if addrs == nil { // allow-listed: resolved here, once, to pin it too
		if addrs, err = resolveAllowed(ctx, c, ref.Hostname()); err != nil {
			return nil, timeoutOr(ctx, err, ref.Host, timeout)
		}
	}
	r := &remote{ref: ref, url: ref.CloneURL, token: token}
	pr, err := probe(ctx, c, ref, token, timeout)
	if err != nil {
		return nil, err
	}
	r.dumb = pr.dumb
	final := pr.final
	if final != nil && (final.Host != ref.Host || final.Scheme != ref.Scheme) {
		// Redirected to another host: check and pin that one instead.
		if addrs, err = c.Check(ctx, final.Hostname(), final.Port()); err != nil {
			return nil, timeoutOr(ctx, err, final.Host, timeout)
		}
		if addrs == nil {
			if addrs, err = resolveAllowed(ctx, c, final.Hostname()); err != nil {
				return nil, timeoutOr(ctx, err, final.Host, timeout)
			}
		}
		r.url = final.CloneURL
		ref = final
	} else if final != nil {
		r.url = final.CloneURL
	}
	r.pin = pinArgs(ref, addrs)
	r.loopPorts, r.allow = reachable(ref, addrs)
	return r, nil
}

// resolveAllowed returns the addresses of an allow-listed host (Check
// returns none for those): the IP itself, or the name resolved once.
func resolveAllowed(ctx context.Context, c *Checker, host string) ([]netip.Addr, error) {
	h := canonicalName(host)
	if ip, err := netip.ParseAddr(h); err == nil {
		return []netip.Addr{ip}, nil
	}
	res := c.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", h)
	if err != nil || len(addrs) == 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, gantry.Errorf(gantry.EINVALID, "Could not resolve host: %s", shown(h))
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// reachable returns what a sandboxed git needs to reach addrs (the checked
// addresses of ref's host) from its isolated network: the port of ref on
// the host's loopback when an address is loopback, and the other
// restricted (private) addresses as single-address prefixes. Only an
// allow-listed host can have such addresses: Check refuses them otherwise.
func reachable(ref *RepoRef, addrs []netip.Addr) (loopPorts []int, allow []netip.Prefix) {
	port, _ := strconv.Atoi(ref.Port())
	for _, a := range addrs {
		switch {
		case a.IsLoopback():
			if len(loopPorts) == 0 && port > 0 {
				loopPorts = []int{port}
			}
		case netpolicy.Restricted(a):
			allow = append(allow, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return loopPorts, allow
}

// pinArgs pins a host name to the addresses Checker approved.
func pinArgs(ref *RepoRef, addrs []netip.Addr) []string {
	if len(addrs) == 0 {
		return nil
	}
	if _, err := netip.ParseAddr(ref.Hostname()); err == nil {
		return nil // an IP literal needs no resolution
	}
	ips := make([]string, len(addrs))
	for i, a := range addrs {
		if a.Is6() {
			ips[i] = "[" + a.String() + "]"
		} else {
			ips[i] = a.String()
		}
	}
	return []string{"-c", "http.curloptResolve=" + ref.Hostname() + ":" + ref.Port() + ":" + strings.Join(ips, ",")}
}

type runOpts struct {
	timeout  time.Duration // the limit, also for the "Timed out after" message
	dir      string        // the folder git works in (the sandbox's /workspace)
	maxSize  int64         // cap on the size of dir; 0 for none
	branch   string        // for the "Branch not found" message
	local    bool          // no network: failures are internal
	uid, gid uint32        // sandbox identity; 0 means the sandbox's own
}

// baseConfig is passed to every git command.
var baseConfig = []string{
	"-c", "protocol.allow=never",
	"-c", "protocol.https.allow=always",
	"-c", "protocol.http.allow=always",
	"-c", "http.followRedirects=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "credential.helper=",
	"-c", "core.fsmonitor=false",
	"-c", "submodule.recurse=false",
}

// passEnv are environment variables copied to git when set.
var passEnv = []string{"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// sandboxVisible are the folders whose files a sandboxed git sees at the
// same paths (the sandbox mounts them read-only): CA settings pointing
// elsewhere are not passed to it.
var sandboxVisible = []string{"/usr/", "/etc/ssl/", "/etc/ca-certificates/"}

// gitEnv is git's whole environment: PATH, HOME, no prompts, no system or
// global configuration, http(s) only, the CA settings, and the token as an
// Authorization header through GIT_CONFIG_COUNT/KEY/VALUE, never argv.
func gitEnv(path, home, token string, inSandbox bool) []string {
	env := []string{
		"PATH=" + path,
		"HOME=" + home,
		"LC_ALL=C",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ALLOW_PROTOCOL=http:https",
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_NO_LAZY_FETCH=1",
	}
	for _, k := range passEnv {
		v, ok := os.LookupEnv(k)
		if !ok {
			continue
		}
		if inSandbox && !slices.ContainsFunc(sandboxVisible, func(p string) bool { return strings.HasPrefix(v, p) }) {
			continue
		}
		env = append(env, k+"="+v)
	}
	if token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}
	return env
}

// sandboxGit is the git binary inside the sandbox.
const sandboxGit = "/usr/bin/git"

// run executes git with args in o.dir and returns its stdout, or a
// classified error. o.timeout bounds it (and ctx's deadline, if sooner).
func (g *Git) run(ctx context.Context, r *remote, o runOpts, args ...string) ([]byte, error) {
	limit := g.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	stdout, stderr := &cappedBuffer{max: limit}, &cappedBuffer{max: limit}
	argv := append(append(append([]string{}, baseConfig...), r.pin...), args...)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var tooLarge atomic.Bool
	if o.maxSize > 0 {
		done := make(chan struct{})
		defer close(done)
		go g.watchSize(o.dir, o.maxSize, done, func() { tooLarge.Store(true); cancel() })
	}
	var err error
	if g.sandboxed() {
		err = g.runSandboxed(runCtx, r, o, argv, stdout, stderr)
	} else {
		err = g.runHost(runCtx, r, o, argv, stdout, stderr)
	}
	if o.maxSize > 0 && dirSize(o.dir) > o.maxSize {
		tooLarge.Store(true) // finished between two measurements
	}
	var (
		te *sandbox.TimeoutError
		me *sandbox.MemoryError
		ee *sandbox.ExitError
		se *sandbox.SetupError
		xe *exec.ExitError
	)
	switch {
	case tooLarge.Load():
		return nil, errTooLarge(o.maxSize)
	case err == nil:
		return stdout.Bytes(), nil
	case ctx.Err() != nil:
		return nil, timeoutOr(ctx, ctx.Err(), r.ref.Host, o.timeout)
	case errors.As(err, &te):
		return nil, timeoutOr(ctx, err, r.ref.Host, o.timeout)
	case errors.As(err, &me):
		return nil, gantry.Errorf(gantry.EINVALID, "git %s while working on %s", me.Error(), shown(r.ref.WebURL))
	case o.local:
		err = fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		g.logger().Error("git failed", "cmd", args[0], "dir", o.dir, "err", err)
		return nil, err
	case errors.As(err, &se):
		g.logger().Error("git failed: the sandbox could not be set up", "cmd", args[0], "url", r.url, "err", err)
		return nil, &setupFailure{setup: se, user: errSandboxSetup()}
	case sandboxFault(stderr.String()):
		err = fmt.Errorf("git %s: the sandbox failed: %w: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
		g.logger().Error("git failed", "cmd", args[0], "url", r.url, "err", err)
		return nil, err
	case errors.As(err, &ee), errors.As(err, &xe):
		code := 0
		if ee != nil {
			code = ee.Code
		} else {
			code = xe.ExitCode()
		}
		f := translate(r.ref, o.branch, args[0], code, stderr.String(), diskLimit(o.dir, o.maxSize))
		level := slog.LevelInfo
		if f.kind == failOther {
			level = slog.LevelWarn
		}
		g.logger().Log(ctx, level, "git failed", "cmd", args[0], "url", r.url, "exit", code,
			"sentence", f.user.Message, "stderr", lastBytes(strings.TrimSpace(f.stderr), maxLoggedStderr))
		return nil, f
	}
	err = fmt.Errorf("git %s: %w: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
	g.logger().Error("git failed", "cmd", args[0], "url", r.url, "err", err)
	return nil, err
}

// errSandboxSetup is what users are told when git's sandbox could not be
// set up, after the sandbox's own retries (pasta failing to open its tun
// device under load): the platform failed, and trying again is safe.
func errSandboxSetup() *gantry.Error {
	return gantry.Errorf(gantry.EUNAVAILABLE, "The platform could not set up the sandbox git runs in (its network did not start): this is the platform's fault, not your repository's, and trying again in a minute is safe")
}

// setupFailure is a git command whose sandbox could not be set up. It
// unwraps to the sentence users see and to the *sandbox.SetupError, by
// which the build pipeline knows the failure is the platform's.
type setupFailure struct {
	setup *sandbox.SetupError
	user  *gantry.Error
}

func (e *setupFailure) Error() string   { return "git: " + e.setup.Error() }
func (e *setupFailure) Unwrap() []error { return []error{e.user, e.setup} }

// sandboxFault reports whether stderr says the sandbox itself failed to set
// up (bubblewrap's own lines start with "bwrap: "; git's, and what a remote
// makes git print, never do): the platform's fault, not the repository's.
func sandboxFault(stderr string) bool {
	return strings.HasPrefix(stderr, "bwrap: ") || strings.Contains(stderr, "\nbwrap: ")
}

// maxLoggedStderr is how much of a failed git's stderr is logged: its end,
// where git says why it stopped.
const maxLoggedStderr = 4 << 10

// lastBytes returns the last n bytes of s.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// diskLimit is what "too large" names when git ran out of disk space in
// dir: max, or the size of dir's filesystem (a build's volume) when that is
// smaller.
func diskLimit(dir string, max int64) int64 {
	if fs := fsSize(dir); fs > 0 && (max <= 0 || fs < max) {
		return fs
	}
	return max
}

func (g *Git) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

// runHost runs git directly on the host, as the platform's user, in o.dir
// with a fresh HOME.
func (g *Git) runHost(ctx context.Context, r *remote, o runOpts, argv []string, stdout, stderr io.Writer) error {
	path := g.Path
	if path == "" {
		p, err := exec.LookPath("git")
		if err != nil {
			return gantry.Errorf(gantry.EUNAVAILABLE, "git is not installed on the server")
		}
		path = p
	}
	home, err := os.MkdirTemp("", "gantry-git-home-")
	if err != nil {
		return fmt.Errorf("git: %w", err)
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, argv...)
	cmd.Env = gitEnv(envOr("PATH", "/usr/local/bin:/usr/bin:/bin"), home, r.token, false)
	cmd.Dir = o.dir
	if cmd.Dir == "" {
		cmd.Dir = home
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git: start: %w", err)
	}
	return cmd.Wait()
}

// runSandboxed runs /usr/bin/git in the sandbox as o's uid, in o.dir
// (/workspace there), with HOME in the run's private /tmp, the sandbox's
// network, and what it needs to reach an allow-listed private host.
func (g *Git) runSandboxed(ctx context.Context, r *remote, o runOpts, argv []string, stdout, stderr io.Writer) error {
	timeout := o.timeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return &sandbox.TimeoutError{After: o.timeout}
	}
	_, err := g.Sandbox.Run(ctx, sandbox.Command{
		Args:   append([]string{sandboxGit}, argv...),
		Dir:    o.dir,
		Env:    gitEnv("/usr/bin:/bin", "/tmp", r.token, true),
		Limits: sandbox.Limits{Timeout: timeout, OutputLines: 10000},
		Output: func(stream sandbox.Stream, line string) {
			w := stderr
			if stream == sandbox.Stdout {
				w = stdout
			}
			_, _ = io.WriteString(w, line+"\n")
		},
		HostLoopbackPorts: r.loopPorts,
		Allow:             r.allow,
		UID:               o.uid,
		GID:               o.gid,
	})
	return err
}

// watchSize calls over when the size of dir exceeds max.
func (g *Git) watchSize(dir string, max int64, done <-chan struct{}, over func()) {
	t := time.NewTicker(orDuration(g.PollInterval, defaultPollInterval))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if dirSize(dir) > max {
				over()
				return
			}
		}
	}
}

func errTooLarge(max int64) *gantry.Error {
	return gantry.Errorf(gantry.EINVALID, "Repository is too large (limit %s)", sandbox.FormatBytes(max))
}

// dirSize sums the sizes of the regular files under dir; errors (files that
// vanish mid-walk) are ignored.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// timeoutOr returns the "Timed out" error when ctx's deadline passed (or err
// is a timeout), and err otherwise.
func timeoutOr(ctx context.Context, err error, host string, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return gantry.Errorf(gantry.EINVALID, "Timed out after %s while contacting %s", formatSeconds(timeout), shown(host))
	}
	return err
}

func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Round(time.Millisecond).Seconds())
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// cappedBuffer keeps the first max bytes written to it and discards the
// rest, so a chatty or hostile remote cannot exhaust memory.
type cappedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *cappedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *cappedBuffer) String() string { return b.buf.String() }
