package githubtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gantryhq/gantry/internal/githost/githubtest"
)

// TestControlPush: a push through the control endpoint commits and reaches
// the repository's webhook, signed with its secret.
func TestControlPush(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	u := s.AddUser("maya")
	s.AddRepo(t, githubtest.Repo{Owner: "maya", Name: "site"}, map[string]string{"index.html": "v1"})
	var (
		mu  sync.Mutex
		got []*http.Request
		bod [][]byte
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bod = append(got, r), append(bod, b)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer recv.Close()
	req, _ := http.NewRequest("POST", s.APIURL()+"repos/maya/site/hooks",
		strings.NewReader(`{"config":{"url":"`+recv.URL+`","content_type":"json","secret":"k"},"events":["push"]}`))
	req.Header.Set("Authorization", "Bearer "+u.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create hook: %v %v", resp, err)
	}
	post := func(body string) *http.Response {
		resp, err := http.Post(s.URL+"/_githubtest/push", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := post(`{"repo":"maya/site","files":{"index.html":"v2"}}`); resp.StatusCode != 404 {
		t.Fatalf("control is off by default: %d", resp.StatusCode)
	}
	s.EnableControl(t)
	if resp := post(`{"repo":"maya/site","branch":"nope"}`); resp.StatusCode != 400 {
		t.Fatalf("unknown branch: %d", resp.StatusCode)
	}
	resp := post(`{"repo":"maya/site","message":"Second","files":{"index.html":"v2"}}`)
	var ds []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ds); err != nil || len(ds) != 1 || ds[0]["status"] != float64(202) {
		t.Fatalf("deliveries %v %v", ds, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Header.Get("X-GitHub-Event") != "push" ||
		got[0].Header.Get("X-Hub-Signature-256") != githubtest.Sign("k", bod[0]) ||
		!bytes.Contains(bod[0], []byte(`"message":"Second"`)) {
		t.Fatalf("delivery %v %s", got, bod)
	}
}

// TestPullRequestRef: a pull request's head, from a fork too, is fetchable
// from the base repository as refs/pull/<n>/head.
func TestPullRequestRef(t *testing.T) {
	t.Parallel()
	s := githubtest.NewServer(t)
	s.AddUser("maya")
	s.AddUser("sam")
	s.AddRepo(t, githubtest.Repo{Owner: "maya", Name: "site"}, map[string]string{"index.html": "v1"})
	s.AddRepo(t, githubtest.Repo{Owner: "sam", Name: "site"}, map[string]string{"index.html": "fork"})
	s.Push(t, "sam/site", "idea", "Idea", map[string]string{"index.html": "idea"})
	p := s.PullRequestPayload(t, "maya/site", githubtest.PullRequest{Number: 4, Action: "opened", Author: "sam",
		HeadRepo: "sam/site", HeadBranch: "idea"})
	sha := p["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	out, err := exec.Command("git", "ls-remote", s.URL+"/maya/site.git", "refs/pull/4/head").Output()
	if err != nil || !strings.HasPrefix(string(out), sha) {
		t.Fatalf("ls-remote: %q %v, want %s", out, err, sha)
	}
}
