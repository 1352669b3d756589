package gittest_test

import (
	"net/http"
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

func TestDumbServer(t *testing.T) {
	s := gittest.NewDumbServer(t)
	s.Repo(t, "alice/site", "main", "first", map[string]string{"index.html": "<h1>hi</h1>"})
	url := s.Repo(t, "alice/site", "main", "second", map[string]string{"about.html": "about"})

	// info/refs is a plain file: no smart-HTTP advertisement.
	resp, err := http.Get(url + "/info/refs?service=git-upload-pack")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || strings.HasPrefix(ct, "application/x-git-") {
		t.Fatalf("info/refs: got %d %q, want 200 without a smart content type", resp.StatusCode, ct)
	}
	// A shallow clone is refused, as by any dumb host; a full one works.
	out, err := exec.Command("git", "clone", "-q", "--depth=1", url, t.TempDir()+"/shallow").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "dumb http transport does not support shallow") {
		t.Fatalf("shallow clone: %v %s; want git's dumb-transport refusal", err, out)
	}
	dir := t.TempDir() + "/full"
	if out, err := exec.Command("git", "clone", "-q", url, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	log, _ := exec.Command("git", "-C", dir, "log", "--format=%s").Output()
	if got := strings.TrimSpace(string(log)); got != "second\nfirst" {
		t.Fatalf("got history %q, want second then first", got)
	}
}
