package githost

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/gittest"
)

// testGit returns a Git that may contact 127.0.0.1 (the test servers).
func testGit() *Git {
	return &Git{Checker: NewChecker("127.0.0.1"), Timeout: 20 * time.Second, CloneTimeout: 20 * time.Second}
}

func TestGitAgainstGitServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	s := gittest.NewServer(t)
	url := seedSite(t, s)
	ctx := context.Background()
	g := testGit()
	testReads(t, g, s, url, 1) // shallow: one commit
	if got, err := g.LsRemoteHead(ctx, strings.TrimSuffix(url, ".git")+"/"); err != nil || got != "main" {
		t.Errorf("LsRemoteHead(as pasted) = %q, %v; want main", got, err)
	}
	if c, err := g.Clone(ctx, s.URL+"/alice/trunk", "", filepath.Join(t.TempDir(), "x"), "", 0, 0); err != nil || c.Message != "trunk commit" {
		t.Errorf("Clone(without .git) = %+v, %v", c, err)
	}

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name string
			run  func() error
			code string
			msg  string
		}{
			{"missing repository", func() error {
				_, err := g.LsRemoteHead(ctx, s.URL+"/alice/nope.git")
				return err
			}, gantry.ENOTFOUND, "Repository not found: " + s.URL + "/alice/nope"},
			{"missing branch (head)", func() error {
				_, err := g.BranchHead(ctx, url, "gh-pages")
				return err
			}, gantry.ENOTFOUND, "Branch 'gh-pages' not found in alice/site"},
			{"missing branch (clone)", func() error {
				_, err := g.Clone(ctx, url, "gh-pages", filepath.Join(t.TempDir(), "x"), "", 0, 0)
				return err
			}, gantry.ENOTFOUND, "Branch 'gh-pages' not found in alice/site"},
			{"invalid branch", func() error {
				_, err := g.BranchHead(ctx, url, "--upload-pack=touch /tmp/x")
				return err
			}, gantry.EINVALID, `Invalid branch name: "--upload-pack=touch /tmp/x"`},
			{"host not allowed", func() error {
				_, err := (&Git{}).LsRemoteHead(ctx, url)
				return err
			}, gantry.EINVALID, "Host not allowed: 127.0.0.1 resolves to a private address"},
			{"name resolving to loopback", func() error {
				_, err := g.LsRemoteHead(ctx, strings.Replace(url, "127.0.0.1", "localhost", 1))
				return err
			}, gantry.EINVALID, "Host not allowed: localhost resolves to a private address"},
			{"metadata address", func() error {
				_, err := g.Clone(ctx, "http://169.254.169.254/latest/meta-data.git", "", filepath.Join(t.TempDir(), "x"), "", 0, 0)
				return err
			}, gantry.EINVALID, "Host not allowed: 169.254.169.254 resolves to a private address"},
			{"file url", func() error {
				_, err := g.LsRemoteHead(ctx, "file://"+s.Root+"/alice/site.git")
				return err
			}, gantry.EINVALID, msgOnlyHTTP},
			{"local path", func() error {
				_, err := g.Clone(ctx, s.Root+"/alice/site.git", "", filepath.Join(t.TempDir(), "x"), "", 0, 0)
				return err
			}, gantry.EINVALID, msgOnlyHTTP},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.run()
				if code, msg := gantry.ErrorCode(err), gantry.ErrorMessage(err); code != tc.code || msg != tc.msg {
					t.Errorf("got %s %q (%v), want %s %q", code, msg, err, tc.code, tc.msg)
				}
			})
		}
	})
}

// seedSite pushes the repositories the git tests read to s and returns the
// clone URL of alice/site: main with two commits, dev with one more, and
// alice/trunk, whose only branch is trunk.
func seedSite(t *testing.T, s *gittest.Server) string {
	t.Helper()
	s.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "<h1>v1</h1>"})
	url := s.Repo(t, "alice/site", "main", "Second commit\n\nWith a body.", map[string]string{"about.html": "about"})
	s.Repo(t, "alice/site", "dev", "on dev", map[string]string{"dev.html": "dev"})
	s.Repo(t, "alice/trunk", "trunk", "trunk commit", map[string]string{"index.html": "x"})
	return url
}

// testReads checks LsRemoteHead, BranchHead and Clone against what seedSite
// pushed to s (url is alice/site's); history is how many commits a clone of
// main holds (1 when shallow).
func testReads(t *testing.T, g *Git, s *gittest.Server, url string, history int) {
	t.Helper()
	ctx := context.Background()
	out, err := exec.Command("git", "-C", filepath.Join(s.Root, "alice/site.git"), "rev-parse", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantSHA := strings.TrimSpace(string(out))

	t.Run("LsRemoteHead", func(t *testing.T) {
		for url, want := range map[string]string{url: "main", s.URL + "/alice/trunk.git": "trunk"} {
			if got, err := g.LsRemoteHead(ctx, url); err != nil || got != want {
				t.Errorf("LsRemoteHead(%s) = %q, %v; want %q", url, got, err, want)
			}
		}
	})
	t.Run("BranchHead", func(t *testing.T) {
		c, err := g.BranchHead(ctx, url, "main")
		if err != nil {
			t.Fatal(err)
		}
		if c.SHA != wantSHA || c.Message != "Second commit\n\nWith a body." || c.Author != "Test Author" {
			t.Errorf("got %+v, want the second commit %s by Test Author", c, wantSHA)
		}
		if time.Since(c.Date) > time.Hour || c.Date.Location() != time.UTC {
			t.Errorf("got date %v, want a recent UTC time", c.Date)
		}
		if dev, err := g.BranchHead(ctx, url, "dev"); err != nil || dev.Message != "on dev" {
			t.Errorf("BranchHead(dev) = %+v, %v; want the dev commit", dev, err)
		}
	})
	t.Run("LsRemoteBranch", func(t *testing.T) {
		if got, err := g.LsRemoteBranch(ctx, url, "main"); err != nil || got != wantSHA {
			t.Errorf("LsRemoteBranch(main) = %q, %v; want %s", got, err, wantSHA)
		}
		if _, err := g.LsRemoteBranch(ctx, url, "nope"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
			t.Errorf("LsRemoteBranch(nope): %v, want ENOTFOUND", err)
		}
	})
	t.Run("CloneCommit", func(t *testing.T) {
		out, err := exec.Command("git", "-C", filepath.Join(s.Root, "alice/site.git"), "rev-parse", "main~1").Output()
		if err != nil {
			t.Fatal(err)
		}
		first := strings.TrimSpace(string(out))
		// The branch moved on: the first commit is fetched on its own (a
		// dumb host's full clone has it already).
		dir := filepath.Join(t.TempDir(), "work")
		c, err := g.CloneCommit(ctx, url, "main", first, dir, "", 0, 0)
		if err != nil || c.SHA != first || c.Message != "first" {
			t.Fatalf("CloneCommit(first) = %+v, %v", c, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "about.html")); !os.IsNotExist(err) {
			t.Errorf("the second commit's file is in a clone of the first: %v", err)
		}
		// The head itself: no fetch.
		if c, err := g.CloneCommit(ctx, url, "main", wantSHA, filepath.Join(t.TempDir(), "head"), "", 0, 0); err != nil || c.SHA != wantSHA {
			t.Errorf("CloneCommit(head) = %+v, %v", c, err)
		}
		// A branch this repository does not have (a fork's pull request):
		// the default branch is cloned and the commit fetched.
		out, err = exec.Command("git", "-C", filepath.Join(s.Root, "alice/site.git"), "rev-parse", "dev").Output()
		if err != nil {
			t.Fatal(err)
		}
		dev := strings.TrimSpace(string(out))
		// (A dumb host cannot serve one commit: only smart hosts.)
		if c, err := g.CloneCommit(ctx, url, "fork-branch", dev, filepath.Join(t.TempDir(), "fork"), "", 0, 0); history == 1 && (err != nil || c.SHA != dev) {
			t.Errorf("CloneCommit(fork-branch, dev) = %+v, %v", c, err)
		}
		missing := strings.Repeat("ab", 20)
		_, err = g.CloneCommit(ctx, url, "main", missing, filepath.Join(t.TempDir(), "missing"), "", 0, 0)
		if gantry.ErrorCode(err) != gantry.ENOTFOUND || !strings.HasPrefix(gantry.ErrorMessage(err), "Commit ababab") {
			t.Errorf("CloneCommit(missing) = %v", err)
		}
		if _, err := g.CloneCommit(ctx, url, "main", "HEAD", filepath.Join(t.TempDir(), "x"), "", 0, 0); gantry.ErrorCode(err) != gantry.EINVALID {
			t.Errorf("CloneCommit(HEAD) = %v, want EINVALID", err)
		}
	})
	t.Run("Clone", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "work")
		c, err := g.Clone(ctx, url, "main", dir, "", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.SHA != wantSHA || c.Message != "Second commit\n\nWith a body." {
			t.Errorf("got head %+v, want the second commit %s", c, wantSHA)
		}
		for _, f := range []string{"index.html", "about.html"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s missing from clone: %v", f, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "dev.html")); err == nil {
			t.Error("dev.html present in a clone of main")
		}
		out, err := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").Output()
		if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(history) {
			t.Errorf("rev-list --count = %q, %v; want %d", out, err, history)
		}
		// The default branch when none is given.
		if c, err := g.Clone(ctx, s.URL+"/alice/trunk.git", "", filepath.Join(t.TempDir(), "trunk"), "", 0, 0); err != nil || c.Message != "trunk commit" {
			t.Errorf("Clone(default branch) = %+v, %v", c, err)
		}
	})
}

// TestGitHostileServers runs each failure against a real server.
func TestGitHostileServers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	gs := gittest.NewServer(t)
	gs.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "hi"})
	big := make([]byte, 1<<20)
	rand.Read(big)
	gs.Repo(t, "alice/big", "main", "big", map[string]string{"blob.bin": string(big)})
	gitURL, _ := url.Parse(gs.URL)
	proxy := httputil.NewSingleHostReverseProxy(gitURL)

	var slowCalls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/html/"):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!doctype html><html><body><h1>Welcome to my homepage</h1></body></html>")
		case strings.HasPrefix(r.URL.Path, "/404/"):
			http.NotFound(w, r)
		case strings.HasPrefix(r.URL.Path, "/401/"):
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "auth required", http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/403/"):
			http.Error(w, "forbidden", http.StatusForbidden)
		case strings.HasPrefix(r.URL.Path, "/503/"):
			http.Error(w, "down", http.StatusServiceUnavailable)
		case strings.HasPrefix(r.URL.Path, "/slow/"):
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case strings.HasPrefix(r.URL.Path, "/stall-after-probe/"):
			// The probe passes; git's own requests hang.
			if slowCalls.Add(1) == 1 {
				r.URL.Path = strings.TrimPrefix(r.URL.Path, "/stall-after-probe")
				proxy.ServeHTTP(w, r)
				return
			}
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case strings.HasPrefix(r.URL.Path, "/redirect-private/"):
			http.Redirect(w, r, "http://localhost"+gs.URL[strings.LastIndex(gs.URL, ":"):]+"/alice/site.git/info/refs?service=git-upload-pack", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, "/redirect-metadata/"):
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/info/refs", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			// A renamed repository: redirect to the git server's real path.
			http.Redirect(w, r, gs.URL+"/alice/site.git/info/refs?"+r.URL.RawQuery, http.StatusMovedPermanently)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	ctx := context.Background()
	g := testGit()
	short := &Git{Checker: NewChecker("127.0.0.1"), Timeout: 500 * time.Millisecond, CloneTimeout: 500 * time.Millisecond}
	small := &Git{Checker: NewChecker("127.0.0.1"), MaxSize: 256 << 10, LookupMaxSize: 256 << 10, PollInterval: 20 * time.Millisecond}

	tests := []struct {
		name string
		run  func() error
		code string
		msg  string
	}{
		{"web page", func() error {
			_, err := g.LsRemoteHead(ctx, srv.URL+"/html/alice/site")
			return err
		}, gantry.EINVALID, "Not a git repository: " + srv.URL + "/html/alice/site"},
		{"404", func() error {
			_, err := g.BranchHead(ctx, srv.URL+"/404/alice/site.git", "main")
			return err
		}, gantry.ENOTFOUND, "Repository not found: " + srv.URL + "/404/alice/site"},
		{"401", func() error {
			_, err := g.Clone(ctx, srv.URL+"/401/alice/site.git", "", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Repository is private or requires authentication"},
		{"403", func() error {
			_, err := g.LsRemoteHead(ctx, srv.URL+"/403/alice/site.git")
			return err
		}, gantry.EINVALID, "Repository is private or requires authentication"},
		{"503", func() error {
			_, err := g.LsRemoteHead(ctx, srv.URL+"/503/alice/site.git")
			return err
		}, gantry.EUNAVAILABLE, "The git host 127.0.0.1:" + port + " is not answering properly (HTTP 503); try again later"},
		{"slow server", func() error {
			_, err := short.LsRemoteHead(ctx, srv.URL+"/slow/alice/site.git")
			return err
		}, gantry.EINVALID, "Timed out after 0.5s while contacting 127.0.0.1:" + port},
		{"git itself stalls", func() error {
			_, err := short.Clone(ctx, srv.URL+"/stall-after-probe/alice/site.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Timed out after 0.5s while contacting 127.0.0.1:" + port},
		{"too large", func() error {
			_, err := small.Clone(ctx, gs.URL+"/alice/big.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Repository is too large (limit 256 KiB)"},
		{"too large (branch head)", func() error {
			_, err := small.BranchHead(ctx, gs.URL+"/alice/big.git", "main")
			return err
		}, gantry.EINVALID, "Repository is too large (limit 256 KiB)"},
		{"redirect to a name resolving to loopback", func() error {
			_, err := g.LsRemoteHead(ctx, srv.URL+"/redirect-private/alice/site.git")
			return err
		}, gantry.EINVALID, "Host not allowed: localhost resolves to a private address"},
		{"redirect to metadata", func() error {
			_, err := g.Clone(ctx, srv.URL+"/redirect-metadata/alice/site.git", "", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Host not allowed: 169.254.169.254 resolves to a private address"},
		{"connection refused", func() error {
			_, err := g.LsRemoteHead(ctx, "http://127.0.0.1:1/alice/site.git")
			return err
		}, gantry.EINVALID, "Could not connect to 127.0.0.1:1: check the URL, or try again later if the host is down"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if code, msg := gantry.ErrorCode(err), gantry.ErrorMessage(err); code != tc.code || msg != tc.msg {
				t.Errorf("got %s %q (%v), want %s %q", code, msg, err, tc.code, tc.msg)
			}
		})
	}

	t.Run("redirect to an allowed host is followed", func(t *testing.T) {
		c, err := g.Clone(ctx, srv.URL+"/moved/alice/site.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
		if err != nil || c.Message != "first" {
			t.Errorf("Clone(moved) = %+v, %v; want the first commit", c, err)
		}
	})

	t.Run("clone target emptied after failure", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x")
		if _, err := small.Clone(ctx, gs.URL+"/alice/big.git", "main", dir, "", 0, 0); err == nil {
			t.Fatal("want an error")
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
			t.Errorf("%s after a failed clone: %d entries, %v; want it empty", dir, len(entries), err)
		}
	})
}

// TestGitTokenNeverInArgv runs a stand-in git that records its argv and
// environment.
func TestGitTokenNeverInArgv(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	s := gittest.NewServer(t)
	url := s.Repo(t, "alice/private", "main", "secret work", map[string]string{"index.html": "x"})
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "calls")
	wrapper := filepath.Join(dir, "git")
	script := "#!/bin/sh\n{ printf 'ARGV'; printf ' %s' \"$@\"; echo; env | sed 's/^/ENV /'; } >> " + record + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := testGit()
	g.Path = wrapper
	const token = "gho_s3cr3tT0ken"
	if _, err := g.Clone(context.Background(), url, "main", filepath.Join(dir, "clone"), token, 0, 0); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var argv, env []string
	for _, line := range strings.Split(string(data), "\n") {
		if a, ok := strings.CutPrefix(line, "ARGV"); ok {
			argv = append(argv, a)
		} else if e, ok := strings.CutPrefix(line, "ENV "); ok {
			env = append(env, e)
		}
	}
	for _, a := range argv {
		if strings.Contains(a, token) || strings.Contains(a, "Authorization") {
			t.Errorf("token in argv: %s", a)
		}
		for _, want := range []string{"protocol.allow=never", "http.followRedirects=false", "core.hooksPath=/dev/null"} {
			if !strings.Contains(a, want) {
				t.Errorf("argv %q lacks %s", a, want)
			}
		}
	}
	envs := strings.Join(env, "\n")
	for _, want := range []string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ALLOW_PROTOCOL=http:https", "GIT_PROTOCOL_FROM_USER=0", "LC_ALL=C",
		"GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "} {
		if !strings.Contains(envs, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	for _, leaked := range []string{"GOPATH=", "GOFLAGS=", "http_proxy="} {
		if strings.Contains(envs, "\n"+leaked) {
			t.Errorf("environment leaks %s", leaked)
		}
	}
}

// TestTranslate runs git's own failure lines (LC_ALL=C, as git 2.39 with
// its curl writes them) through the translator.
func TestTranslate(t *testing.T) {
	t.Parallel()
	ref, _ := ParseRepoURL("https://git.example.org/alice/site.git")
	const msgDamaged = "Could not fetch https://git.example.org/alice/site: its host is missing some of the repository's objects or sent damaged ones; if it serves the repository as plain files, run git update-server-info there after every push"
	tests := []struct {
		stderr, code, msg string
	}{
		{"fatal: repository 'https://git.example.org/alice/site.git/' not found", gantry.ENOTFOUND, "Repository not found: https://git.example.org/alice/site"},
		{"fatal: could not read Username for 'https://git.example.org': terminal prompts disabled", gantry.EINVALID, "Repository is private or requires authentication"},
		{"remote: Invalid username or password.\nfatal: Authentication failed for 'https://git.example.org/alice/site.git/'", gantry.EINVALID, "Repository is private or requires authentication"},
		{"fatal: unable to access 'https://git.example.org/alice/site.git/': The requested URL returned error: 403", gantry.EINVALID, "Repository is private or requires authentication"},
		{"fatal: https://git.example.org/alice/site.git/info/refs not valid: is this a git repository?", gantry.EINVALID, "Not a git repository: https://git.example.org/alice/site"},
		{"warning: Could not find remote branch x to clone.\nfatal: Remote branch x not found in upstream origin", gantry.ENOTFOUND, "Branch 'x' not found in alice/site"},
		{"fatal: couldn't find remote ref refs/heads/x", gantry.ENOTFOUND, "Branch 'x' not found in alice/site"},
		{"fatal: unable to access 'https://git.example.org/alice/site.git/': Could not resolve host: git.example.org", gantry.EINVALID, "Could not resolve host: git.example.org"},
		{"fatal: unable to access 'x': Failed to connect to git.example.org port 443 after 3 ms: Couldn't connect to server", gantry.EINVALID, "Could not connect to git.example.org: check the URL, or try again later if the host is down"},
		{"fatal: unable to access 'x': Failed to connect to git.example.org port 443 after 0 ms: Network is unreachable", gantry.EINVALID, "Could not connect to git.example.org: check the URL, or try again later if the host is down"},
		{"fatal: unable to access 'x': Failed to connect to git.example.org port 443 after 129000 ms: Connection timed out", gantry.EINVALID, "Could not connect to git.example.org: check the URL, or try again later if the host is down"},
		{"fatal: unable to access 'x': Operation timed out after 300000 milliseconds with 0 out of 0 bytes received", gantry.EINVALID, "Timed out while contacting git.example.org; try again later"},
		{"fatal: unable to access 'x': SSL certificate problem: self-signed certificate", gantry.EINVALID, "Could not establish a secure connection to git.example.org"},
		{"fatal: unable to access 'x': The requested URL returned error: 502", gantry.EUNAVAILABLE, "The git host git.example.org is not answering properly; try again later"},
		{"error: RPC failed; HTTP 500 curl 22 The requested URL returned error: 500\nfatal: the remote end hung up unexpectedly", gantry.EUNAVAILABLE, "The git host git.example.org is not answering properly; try again later"},
		{"error: RPC failed; curl 18 transfer closed with outstanding read data remaining\nfatal: early EOF\nfatal: index-pack failed", gantry.EUNAVAILABLE, "The git host git.example.org closed the connection before the repository was received; try again later"},
		{"fatal: unable to access 'x': The requested URL returned error: 301", gantry.EINVALID, "Repository URL redirects elsewhere: https://git.example.org/alice/site"},
		{"fatal: dumb http transport does not support shallow capabilities", gantry.EINVALID, "Could not clone https://git.example.org/alice/site: its host speaks only the basic (dumb) HTTP protocol and refused a shallow clone; try again"},
		// A dumb host missing a loose object, and one missing a pack.
		{"error: Unable to find f719efd430d52bcfc8566a43b2eb655688d38871 under https://git.example.org/alice/site.git\nCannot obtain needed blob f719efd430d52bcfc8566a43b2eb655688d38871\nwhile processing commit f9ccec5327fdb8f331d3d21f6db42ff035c99e47.\nerror: fetch failed.", gantry.EINVALID, msgDamaged},
		{"error: Unable to get pack file https://git.example.org/alice/site.git/objects/pack/pack-ab79.pack\nThe requested URL returned error: 404\nerror: Unable to find dc7ca330 under https://git.example.org/alice/site.git\nCannot obtain needed object dc7ca330\nerror: fetch failed.", gantry.EINVALID, msgDamaged},
		{"fatal: write error: No space left on device\nfatal: fetch-pack: invalid index-pack output", gantry.EINVALID, "Repository is too large (limit 256 KiB)"},
		{"error: unable to write file x: Disk quota exceeded", gantry.EINVALID, "Repository is too large (limit 256 KiB)"},
		// Words in the URL are the repository owner's, not git's.
		{"fatal: unable to access 'https://git.example.org/tls-timed-out/not found/site.git/': The requested URL returned error: 418", gantry.EINVALID, "Could not clone https://git.example.org/alice/site: git failed (exit 128); check that the URL is a git repository and try again"},
		{"fatal: something new", gantry.EINVALID, "Could not clone https://git.example.org/alice/site: git failed (exit 128); check that the URL is a git repository and try again"},
	}
	for _, tc := range tests {
		err := translate(ref, "x", "clone", 128, tc.stderr, 256<<10)
		if code, msg := gantry.ErrorCode(err), gantry.ErrorMessage(err); code != tc.code || msg != tc.msg {
			t.Errorf("translate(%q) = %s %q, want %s %q", tc.stderr, code, msg, tc.code, tc.msg)
		}
		// git's words stay in the error, for the server log.
		if !strings.Contains(err.Error(), strings.TrimSpace(tc.stderr)) {
			t.Errorf("translate(%q).Error() = %q, want git's stderr in it", tc.stderr, err.Error())
		}
	}
	if msg := gantry.ErrorMessage(translate(ref, "", "ls-remote", 2, "fatal: odd", 0)); msg != "Could not read https://git.example.org/alice/site: git failed (exit 2); check that the URL is a git repository and try again" {
		t.Errorf("ls-remote failure: got %q", msg)
	}
	// A long URL is repeated cut, never whole (messages quote at most 100
	// characters of what a client sent).
	long, err := ParseRepoURL("https://git.example.org/alice/" + strings.Repeat("a", 1500) + ".git")
	if err != nil {
		t.Fatal(err)
	}
	for _, stderr := range []string{"fatal: repository 'x' not found", "fatal: something new", "fatal: dumb http transport does not support shallow capabilities"} {
		msg := gantry.ErrorMessage(translate(long, "x", "clone", 128, stderr, 256<<10))
		if n := utf8.RuneCountInString(msg); n > 250 || !strings.Contains(msg, "…") {
			t.Errorf("translate(%q) with a long URL: %d characters: %q", stderr, n, msg)
		}
	}
}

func TestPinArgs(t *testing.T) {
	t.Parallel()
	ref, _ := ParseRepoURL("https://git.example.org/alice/site")
	got := pinArgs(ref, []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:2800:220:1::248")})
	want := []string{"-c", "http.curloptResolve=git.example.org:443:93.184.216.34,[2606:2800:220:1::248]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pinArgs = %q, want %q", got, want)
	}
	ip, _ := ParseRepoURL("http://93.184.216.34:8080/alice/site")
	if got := pinArgs(ip, []netip.Addr{netip.MustParseAddr("93.184.216.34")}); got != nil {
		t.Errorf("pinArgs(IP literal) = %q, want nil", got)
	}
}

// dumbHostile serves gs's repositories as files, the way a static web host
// does, with failures by path prefix: /stall/ answers info/refs and then
// hangs on every other file (objects, packs); /vanish/ answers the probe
// and then stops listening; /two-faced/ answers the probe as a smart-HTTP
// host would and git as a dumb one.
func dumbHostile(t *testing.T, gs *gittest.Server) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(gs.Root))
	var srv *httptest.Server
	var vanished atomic.Bool
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		r.URL.Path = "/" + rest
		probe := r.Header.Get("User-Agent") == "git/2 (gantry)"
		switch prefix {
		case "stall":
			if !strings.HasSuffix(r.URL.Path, "/info/refs") && !strings.HasSuffix(r.URL.Path, "/HEAD") {
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
				return
			}
		case "vanish":
			if vanished.Swap(true) {
				return
			}
			files.ServeHTTP(w, r)
			srv.Listener.Close() // every later connection is refused
			return
		case "two-faced":
			if probe {
				w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
				io.WriteString(w, "001e# service=git-upload-pack\n0000")
				return
			}
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// noRawGit fails when a user-facing message carries git's own words.
func noRawGit(t *testing.T, msg string) {
	t.Helper()
	for _, raw := range []string{"fatal:", "error:", "warning:", "remote:", "curl", "exit status"} {
		if strings.Contains(strings.ToLower(msg), raw) {
			t.Errorf("message %q carries git's own words (%s)", msg, raw)
		}
	}
}

// TestGitAgainstDumbServer runs git against a host that speaks only the
// dumb HTTP protocol (a bare repository served as files).
func TestGitAgainstDumbServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	t.Parallel()
	ds := gittest.NewDumbServer(t)
	url := seedSite(t, ds)
	big := make([]byte, 1<<20)
	rand.Read(big)
	ds.Repo(t, "alice/big", "main", "big", map[string]string{"blob.bin": string(big)})
	ds.Repo(t, "alice/broken", "main", "broken", map[string]string{"index.html": "gone"})
	// A blob lost on the host: the commit and tree are there, its file not.
	blob, err := exec.Command("git", "-C", filepath.Join(ds.Root, "alice/broken.git"), "rev-parse", "main:index.html").Output()
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.TrimSpace(string(blob))
	if err := os.Remove(filepath.Join(ds.Root, "alice/broken.git/objects", sha[:2], sha[2:])); err != nil {
		t.Fatal(err)
	}
	hostile := dumbHostile(t, ds)
	ctx := context.Background()
	g := testGit()
	// Full, not shallow: a dumb host cannot make shallow clones.
	testReads(t, g, ds, url, 2)

	t.Run("probe says smart, git finds dumb", func(t *testing.T) {
		head, err := g.BranchHead(ctx, url, "main")
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.Clone(ctx, hostile.URL+"/two-faced/alice/site.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
		if err != nil || c.SHA != head.SHA {
			t.Errorf("Clone = %+v, %v; want %s after a full clone", c, err, head.SHA)
		}
		c, err = g.BranchHead(ctx, hostile.URL+"/two-faced/alice/site.git", "main")
		if err != nil || c.SHA != head.SHA {
			t.Errorf("BranchHead = %+v, %v; want %s", c, err, head.SHA)
		}
	})

	port := hostile.URL[strings.LastIndex(hostile.URL, ":")+1:]
	short := &Git{Checker: NewChecker("127.0.0.1"), Timeout: 500 * time.Millisecond, CloneTimeout: 500 * time.Millisecond}
	small := &Git{Checker: NewChecker("127.0.0.1"), MaxSize: 256 << 10, LookupMaxSize: 256 << 10, PollInterval: 20 * time.Millisecond}
	for _, tc := range []struct {
		name      string
		run       func() error
		code, msg string
	}{
		{"missing branch", func() error {
			_, err := g.Clone(ctx, url, "gh-pages", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.ENOTFOUND, "Branch 'gh-pages' not found in alice/site"},
		{"missing branch (head)", func() error {
			_, err := g.BranchHead(ctx, url, "gh-pages")
			return err
		}, gantry.ENOTFOUND, "Branch 'gh-pages' not found in alice/site"},
		{"missing repository", func() error {
			_, err := g.BranchHead(ctx, ds.URL+"/alice/nope.git", "main")
			return err
		}, gantry.ENOTFOUND, "Repository not found: " + ds.URL + "/alice/nope"},
		{"too large", func() error {
			_, err := small.Clone(ctx, ds.URL+"/alice/big.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Repository is too large (limit 256 KiB)"},
		{"too large (branch head)", func() error {
			_, err := small.BranchHead(ctx, ds.URL+"/alice/big.git", "main")
			return err
		}, gantry.EINVALID, "Repository is too large (limit 256 KiB)"},
		{"objects stall", func() error {
			_, err := short.Clone(ctx, hostile.URL+"/stall/alice/site.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Timed out after 0.5s while contacting 127.0.0.1:" + port},
		{"object missing on the host", func() error {
			_, err := g.Clone(ctx, ds.URL+"/alice/broken.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
			return err
		}, gantry.EINVALID, "Could not fetch " + ds.URL + "/alice/broken: its host is missing some of the repository's objects or sent damaged ones; if it serves the repository as plain files, run git update-server-info there after every push"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if code, msg := gantry.ErrorCode(err), gantry.ErrorMessage(err); code != tc.code || msg != tc.msg {
				t.Errorf("got %s %q (%v), want %s %q", code, msg, err, tc.code, tc.msg)
			}
			noRawGit(t, gantry.ErrorMessage(err))
		})
	}
	// Last: it stops the hostile server's listener.
	t.Run("host gone after the probe", func(t *testing.T) {
		_, err := g.Clone(ctx, hostile.URL+"/vanish/alice/site.git", "main", filepath.Join(t.TempDir(), "x"), "", 0, 0)
		want := "Could not connect to 127.0.0.1:" + port + ": check the URL, or try again later if the host is down"
		if code, msg := gantry.ErrorCode(err), gantry.ErrorMessage(err); code != gantry.EINVALID || msg != want {
			t.Errorf("got %s %q (%v), want invalid %q", code, msg, err, want)
		}
	})
}
