package platform

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gantryhq/gantry/bench/internal/load"
	"github.com/gantryhq/gantry/internal/gittest"
)

// GitServer serves bare repositories over smart HTTP on loopback.
type GitServer struct {
	root, base string
}

// StartGit serves the bare repositories under root with git's
// git-http-backend behind net/http/cgi (gittest.SmartHandler), on
// 127.0.0.1, until RunExit.
func StartGit(root string) *GitServer {
	load.Must(os.MkdirAll(root, 0o755))
	h, err := gittest.SmartHandler(root)
	load.Must(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	load.Must(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	load.AtExit(func() { srv.Close() })
	return &GitServer{root: root, base: "http://" + ln.Addr().String()}
}

// Repo makes the bare repository fullName ("owner/name") with files
// committed on main and returns its clone URL.
func (s *GitServer) Repo(fullName string, files map[string]string) string {
	work, err := os.MkdirTemp("", "gantry-bench-repo-")
	load.Must(err)
	defer os.RemoveAll(work)
	for name, content := range files {
		load.Must(os.WriteFile(filepath.Join(work, name), []byte(content), 0o644))
	}
	bare := filepath.Join(s.root, fullName+".git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bench files"},
		{"init", "-q", "--bare", "-b", "main", bare},
		{"push", "-q", bare, "HEAD:refs/heads/main"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			load.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return s.base + "/" + fullName + ".git"
}
