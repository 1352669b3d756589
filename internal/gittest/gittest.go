// Package gittest serves real git repositories over HTTP on loopback for
// tests: over smart HTTP with git's own git-http-backend behind
// net/http/cgi (NewServer), so clones, ls-remote and shallow fetches behave
// exactly as against a real host; or over the "dumb" HTTP protocol, as
// plain files (NewDumbServer), the way a static web host serves a bare
// repository.
package gittest

import (
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Server is a loopback git host. Repositories live under Root as bare
// repositories named "<owner>/<name>.git".
type Server struct {
	Root string
	*httptest.Server

	dumb bool // Repo runs git update-server-info after every push
}

// NewServer starts a git smart-HTTP server on 127.0.0.1:0; it is closed
// when the test ends. It skips the test when git is not installed.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not installed")
	}
	root := tb.TempDir()
	h, err := SmartHandler(root)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Root: root, Server: httptest.NewServer(h)}
	tb.Cleanup(s.Close)
	return s
}

// SmartHandler serves the bare repositories under root
// (root/<owner>/<name>.git) over smart HTTP: git's own git-http-backend
// behind net/http/cgi. NewServer, the gitserve command and the benchmarks'
// git host use it.
func SmartHandler(root string) (http.Handler, error) {
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return nil, fmt.Errorf("git --exec-path: %w", err)
	}
	return &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}, nil
}

// NewDumbServer starts a git host on 127.0.0.1:0 that speaks only the
// "dumb" HTTP protocol: net/http's FileServer over Root, with no
// git-http-backend, so info/refs is a plain file (no smart content type),
// shallow clones are impossible and git fetches objects and packs one file
// at a time. Repo runs git update-server-info after each push, as a
// post-update hook would on such a host. It is closed when the test ends,
// and skips the test when git is not installed.
func NewDumbServer(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not installed")
	}
	root := tb.TempDir()
	s := &Server{Root: root, Server: httptest.NewServer(http.FileServer(http.Dir(root))), dumb: true}
	tb.Cleanup(s.Close)
	return s
}

// Repo creates (or adds a commit to) the bare repository owner/name with the
// given files on branch, committed with message, and returns its clone URL.
// File modes: a path ending in "@symlink" is written as a symlink whose
// target is the content; everything else is a regular file.
func (s *Server) Repo(tb testing.TB, fullName, branch, message string, files map[string]string) string {
	tb.Helper()
	bare := filepath.Join(s.Root, fullName+".git")
	if _, err := os.Stat(bare); os.IsNotExist(err) {
		run(tb, "", "git", "init", "-q", "--bare", "-b", branch, bare)
	}
	work := tb.TempDir()
	run(tb, work, "git", "init", "-q", "-b", branch)
	// Continue from the branch's head when it exists.
	if out, err := exec.Command("git", "-C", bare, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Output(); err == nil && len(out) > 0 {
		run(tb, work, "git", "fetch", "-q", bare, branch)
		run(tb, work, "git", "reset", "-q", "--hard", "FETCH_HEAD")
	}
	for name, content := range files {
		if target, ok := strings.CutSuffix(name, "@symlink"); ok {
			p := filepath.Join(work, target)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			_ = os.Remove(p)
			if err := os.Symlink(content, p); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	run(tb, work, "git", "add", "-A")
	run(tb, work, "git", "-c", "user.name=Test Author", "-c", "user.email=author@example.com",
		"commit", "-q", "--allow-empty", "-m", message)
	run(tb, work, "git", "push", "-q", bare, "HEAD:refs/heads/"+branch)
	if s.dumb {
		run(tb, bare, "git", "update-server-info")
	}
	return s.URL + "/" + fullName + ".git"
}

// Head returns the commit hash branch of owner/name points at.
func (s *Server) Head(tb testing.TB, fullName, branch string) string {
	tb.Helper()
	bare := filepath.Join(s.Root, fullName+".git")
	out, err := exec.Command("git", "-C", bare, "rev-parse", "--verify", "refs/heads/"+branch).Output()
	if err != nil {
		tb.Fatalf("git rev-parse %s of %s: %v", branch, fullName, err)
	}
	return strings.TrimSpace(string(out))
}

func run(tb testing.TB, dir string, name string, args ...string) {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
