package githost

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry"
)

// Defaults of Git.
const (
	DefaultTimeout      = 60 * time.Second // ls-remote, branch heads, lookups
	DefaultCloneTimeout = 10 * time.Minute // Clone for builds
	DefaultMaxSize      = 500 << 20        // 500 MiB on disk per clone or fetch
	DefaultMaxOutput    = 1 << 20          // bytes of stdout and of stderr kept per command
	defaultPollInterval = 200 * time.Millisecond
)

// Git runs the git binary against user-supplied remote repositories.
//
// Every command gets: a context timeout; an environment built from an
// allow-list (PATH, HOME set to a fresh temporary folder, LC_ALL=C,
// GIT_TERMINAL_PROMPT=0, GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null,
// GIT_ALLOW_PROTOCOL=http:https, GIT_PROTOCOL_FROM_USER=0, and the CA
// settings GIT_SSL_CAINFO, GIT_SSL_CAPATH, SSL_CERT_FILE, SSL_CERT_DIR when
// set) so no proxy, credential helper, askpass or user config is used;
// "-c protocol.allow=never -c protocol.{http,https}.allow=always
// -c http.followRedirects=false -c core.hooksPath=/dev/null
// -c credential.helper="; the host's checked addresses pinned with
// http.curloptResolve so git cannot resolve the name differently; a cap on
// captured output; and, for clones and fetches, a cap on the size of the
// target folder (git's whole process group is killed when it grows past it).
// A token is passed as an http.extraHeader through GIT_CONFIG_COUNT/KEY/VALUE
// environment variables, never in argv or the URL.
//
// Before git runs, the URL is parsed with ParseRepoURL, its host checked with
// Checker, and the smart-HTTP endpoint probed over Checker's HTTP client: that
// probe follows (checked) redirects and gives the clear errors (not found,
// private, not a git repository) that git itself words poorly.
//
// The zero Git is usable: git from PATH, DefaultTimeout, DefaultCloneTimeout,
// DefaultMaxSize, DefaultMaxOutput, and a Checker with an empty allow list.
type Git struct {
	Path         string        // git binary; "" looks up "git" in PATH
	Timeout      time.Duration // LsRemoteHead and BranchHead; 0 means DefaultTimeout
	CloneTimeout time.Duration // Clone; 0 means DefaultCloneTimeout
	MaxSize      int64         // bytes on disk per clone or fetch; 0 means DefaultMaxSize
	MaxOutput    int           // bytes kept of each output stream; 0 means DefaultMaxOutput
	Checker      *Checker      // nil means NewChecker() (nothing private allowed)

	// PollInterval is how often the size of a clone's folder is measured;
	// 0 means 200ms.
	PollInterval time.Duration
}

func (g *Git) timeout() time.Duration      { return orDuration(g.Timeout, DefaultTimeout) }
func (g *Git) cloneTimeout() time.Duration { return orDuration(g.CloneTimeout, DefaultCloneTimeout) }

func (g *Git) maxSize() int64 {
	if g.MaxSize > 0 {
		return g.MaxSize
	}
	return DefaultMaxSize
}

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
	ref   *RepoRef
	url   string   // what git is given (the canonical clone URL, or where it redirected)
	pin   []string // "-c http.curloptResolve=…" arguments
	token string
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
	out, err := g.run(ctx, r, runOpts{timeout: timeout}, "ls-remote", "--symref", "--", r.url, "HEAD")
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
		return "", gantry.Errorf(gantry.EINVALID, "Repository is empty: %s", r.ref.WebURL)
	}
	// No symref (dumb HTTP or an old server): pick the branch at HEAD.
	out, err = g.run(ctx, r, runOpts{timeout: timeout}, "ls-remote", "--heads", "--", r.url)
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
	return "", gantry.Errorf(gantry.EINVALID, "Could not determine the default branch of %s", r.ref.WebURL)
}

// BranchHead returns the head commit of branch in the public repository at
// rawURL, from a size-capped shallow bare clone of that one branch (depth 1,
// no tags, trees and blobs filtered out where the server supports it) in a
// temporary folder that is removed afterwards. A missing branch is
// ENOTFOUND "Branch '<b>' not found in <repo>".
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
	tmp, err := os.MkdirTemp("", "gantry-head-")
	if err != nil {
		return nil, fmt.Errorf("branch head: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "repo.git")
	if _, err := g.run(ctx, r, runOpts{timeout: timeout, watch: dir, branch: branch},
		"clone", "--quiet", "--bare", "--depth=1", "--filter=tree:0", "--single-branch",
		"--branch", branch, "--no-tags", "--", r.url, dir); err != nil {
		return nil, err
	}
	return g.headCommit(ctx, r, dir)
}

// Clone makes a shallow clone (depth 1, that branch only, no tags) of the
// repository at rawURL into dir, which must not exist or be empty, and
// returns its head commit. branch "" clones the default branch. token, when
// set, is sent as GitHub-style HTTP basic authentication
// (x-access-token:<token>) through git's environment. The clone is limited
// to CloneTimeout and MaxSize; on failure dir is removed.
func (g *Git) Clone(ctx context.Context, rawURL, branch, dir, token string) (*gantry.Commit, error) {
	return g.clone(ctx, rawURL, branch, dir, token, g.cloneTimeout())
}

func (g *Git) clone(ctx context.Context, rawURL, branch, dir, token string, timeout time.Duration) (_ *gantry.Commit, err error) {
	if branch != "" && !validBranch(branch) {
		return nil, gantry.Errorf(gantry.EINVALID, "Invalid branch name: %q", branch)
	}
	if dir == "" {
		return nil, errors.New("clone: no target folder")
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("clone: target folder %s is not empty", dir)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := g.prepare(ctx, rawURL, token, timeout)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	args := []string{"clone", "--quiet", "--depth=1", "--single-branch", "--no-tags"}
	if branch != "" {
		args = append(args, "--branch", branch)
	}
	args = append(args, "--", r.url, dir)
	if _, err := g.run(ctx, r, runOpts{timeout: timeout, watch: dir, branch: branch}, args...); err != nil {
		return nil, err
	}
	return g.headCommit(ctx, r, dir)
}

// headCommit reads HEAD of the local repository dir.
func (g *Git) headCommit(ctx context.Context, r *remote, dir string) (*gantry.Commit, error) {
	out, err := g.run(ctx, r, runOpts{timeout: g.timeout(), local: true},
		"-C", dir, "log", "-1", "--format=%H%x00%an%x00%cI%x00%B", "HEAD")
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
	r := &remote{ref: ref, url: ref.CloneURL, token: token}
	final, err := probe(ctx, c, ref, token, timeout)
	if err != nil {
		return nil, err
	}
	if final != nil && (final.Host != ref.Host || final.Scheme != ref.Scheme) {
		// Redirected to another host: check and pin that one instead.
		if addrs, err = c.Check(ctx, final.Hostname(), final.Port()); err != nil {
			return nil, timeoutOr(ctx, err, final.Host, timeout)
		}
		r.url = final.CloneURL
		ref = final
	} else if final != nil {
		r.url = final.CloneURL
	}
	r.pin = pinArgs(ref, addrs)
	return r, nil
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
	timeout time.Duration // for the "Timed out after" message
	watch   string        // folder whose size is capped; "" for none
	branch  string        // for the "Branch not found" message
	local   bool          // no network: failures are internal
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

// run executes git with args and returns its stdout, or a classified error.
func (g *Git) run(ctx context.Context, r *remote, o runOpts, args ...string) ([]byte, error) {
	path := g.Path
	if path == "" {
		p, err := exec.LookPath("git")
		if err != nil {
			return nil, gantry.Errorf(gantry.EUNAVAILABLE, "git is not installed on the server")
		}
		path = p
	}
	home, err := os.MkdirTemp("", "gantry-git-home-")
	if err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	defer os.RemoveAll(home)

	env := []string{
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
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
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if r.token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + r.token))
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	argv := append(append(append([]string{}, baseConfig...), r.pin...), args...)
	cmd := exec.CommandContext(runCtx, path, argv...)
	cmd.Env = env
	cmd.Dir = home
	limit := g.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	stdout, stderr := &cappedBuffer{max: limit}, &cappedBuffer{max: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)

	var tooLarge atomic.Bool
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git: start: %w", err)
	}
	if o.watch != "" {
		done := make(chan struct{})
		defer close(done)
		go g.watchSize(o.watch, done, func() { tooLarge.Store(true); cancel() })
	}
	err = cmd.Wait()
	if o.watch != "" && dirSize(o.watch) > g.maxSize() {
		tooLarge.Store(true) // finished between two measurements
	}
	switch {
	case tooLarge.Load():
		return nil, g.errTooLarge()
	case err == nil:
		return stdout.Bytes(), nil
	case ctx.Err() != nil:
		return nil, timeoutOr(ctx, ctx.Err(), r.ref.Host, o.timeout)
	case o.local:
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil, classify(r.ref, o.branch, stderr.String(), err)
}

// watchSize calls over when the size of dir exceeds MaxSize.
func (g *Git) watchSize(dir string, done <-chan struct{}, over func()) {
	t := time.NewTicker(orDuration(g.PollInterval, defaultPollInterval))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if dirSize(dir) > g.maxSize() {
				over()
				return
			}
		}
	}
}

func (g *Git) errTooLarge() error {
	return gantry.Errorf(gantry.EINVALID, "Repository is too large (limit %s)", formatBytes(g.maxSize()))
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

// classify turns git's stderr (LC_ALL=C) into a user-facing error.
func classify(ref *RepoRef, branch, stderr string, err error) error {
	s := strings.ToLower(stderr)
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("remote branch") && has("not found"), has("couldn't find remote ref"):
		return errBranchNotFound(branch, ref)
	case has("could not read username", "could not read password", "authentication failed",
		"returned error: 401", "returned error: 403"):
		return errPrivate()
	case has("not valid: is this a git repository", "does not appear to be a git repository",
		"not a git repository", "invalid server response", "protocol error: bad"):
		return errNotGit(ref)
	case has("not found", "returned error: 404", "returned error: 410"):
		return errNotFound(ref)
	case has("returned error: 30"):
		return gantry.Errorf(gantry.EINVALID, "Repository URL redirects elsewhere: %s", ref.WebURL)
	case has("could not resolve host"):
		return gantry.Errorf(gantry.EINVALID, "Could not resolve host: %s", ref.Hostname())
	case has("failed to connect", "couldn't connect", "connection refused", "connection reset",
		"no route to host"):
		return gantry.Errorf(gantry.EINVALID, "Could not connect to %s", ref.Host)
	case has("ssl certificate", "certificate verification", "ssl_connect", "tls"):
		return gantry.Errorf(gantry.EINVALID, "Could not establish a secure connection to %s", ref.Host)
	case has("returned error: 5", "returned error: 429"):
		return gantry.Errorf(gantry.EUNAVAILABLE, "The git host %s is not answering properly; try again later", ref.Host)
	}
	return fmt.Errorf("git: %w: %s", err, strings.TrimSpace(stderr))
}

func errNotFound(ref *RepoRef) error {
	return gantry.Errorf(gantry.ENOTFOUND, "Repository not found: %s", ref.WebURL)
}

func errPrivate() error {
	return gantry.Errorf(gantry.EINVALID, "Repository is private or requires authentication")
}

func errNotGit(ref *RepoRef) error {
	return gantry.Errorf(gantry.EINVALID, "Not a git repository: %s", ref.WebURL)
}

func errBranchNotFound(branch string, ref *RepoRef) error {
	if branch == "" {
		return gantry.Errorf(gantry.EINVALID, "Repository is empty: %s", ref.WebURL)
	}
	return gantry.Errorf(gantry.ENOTFOUND, "Branch '%s' not found in %s", branch, ref.FullName)
}

// timeoutOr returns the "Timed out" error when ctx's deadline passed (or err
// is a timeout), and err otherwise.
func timeoutOr(ctx context.Context, err error, host string, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return gantry.Errorf(gantry.EINVALID, "Timed out after %s while contacting %s", formatSeconds(timeout), host)
	}
	return err
}

func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Round(time.Millisecond).Seconds())
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
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
