package gittest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gantryhq/gantry/internal/gittest"
)

func TestServerClone(t *testing.T) {
	s := gittest.NewServer(t)
	url := s.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "<h1>hi</h1>"})
	url = s.Repo(t, "alice/site", "main", "second", map[string]string{"about.html": "about"})
	out, err := exec.Command("git", "ls-remote", "--symref", url, "HEAD").CombinedOutput()
	if err != nil {
		t.Fatalf("ls-remote: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ref: refs/heads/main\tHEAD") {
		t.Fatalf("got %q, want HEAD pointing at main", out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--depth=1", url, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	log, _ := exec.Command("git", "-C", dir, "log", "--format=%s").Output()
	if got := strings.TrimSpace(string(log)); got != "second" {
		t.Fatalf("got head %q, want second", got)
	}
	for _, f := range []string{"index.html", "about.html"} {
		if err := exec.Command("test", "-f", dir+"/"+f).Run(); err != nil {
			t.Fatalf("%s missing from clone", f)
		}
	}
}
