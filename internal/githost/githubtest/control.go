package githubtest

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ControlPrefix is where the control endpoints of EnableControl live.
const ControlPrefix = "/_githubtest/"

// EnableControl lets other processes drive the fake over HTTP (ghserve
// does, for browser journeys): tb runs the git commands. The endpoints,
// which answer JSON lists of the deliveries made:
//
//	POST /_githubtest/push {"repo":"owner/name","branch":"main","message":"…","files":{"index.html":"…"}}
//	  commits files to branch (without files: nothing is committed) and
//	  delivers the push event of the branch's head to the repository's hooks;
//	POST /_githubtest/pull_request {"repo":"owner/name","number":1,"action":"opened",
//	  "title":"…","author":"login","headRepo":"owner/name","headBranch":"…"}
//	  delivers that pull_request event.
//
// Nothing here is authenticated: never enable it outside tests.
func (s *Server) EnableControl(tb testing.TB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.control = tb
}

func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	tb := s.control
	s.mu.Unlock()
	if tb == nil || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var in struct {
		Repo       string            `json:"repo"`
		Branch     string            `json:"branch"`
		Message    string            `json:"message"`
		Files      map[string]string `json:"files"`
		Number     int               `json:"number"`
		Action     string            `json:"action"`
		Title      string            `json:"title"`
		Author     string            `json:"author"`
		HeadRepo   string            `json:"headRepo"`
		HeadBranch string            `json:"headBranch"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || s.repo(in.Repo) == nil {
		http.Error(w, "bad request: a JSON body naming an existing repo is required", http.StatusBadRequest)
		return
	}
	var ds []Delivery
	switch strings.TrimPrefix(r.URL.Path, ControlPrefix) {
	case "push":
		if in.Branch == "" {
			in.Branch = s.repo(in.Repo).DefaultBranch
		}
		if len(in.Files) > 0 {
			s.Push(tb, in.Repo, in.Branch, cmpOr(in.Message, "Update"), in.Files)
		}
		if !s.hasBranch(in.Repo, in.Branch) {
			http.Error(w, "no such branch", http.StatusBadRequest)
			return
		}
		ds = s.Deliver(tb, in.Repo, "push", s.PushPayload(tb, in.Repo, in.Branch, ""))
	case "pull_request":
		head := cmpOr(in.HeadRepo, in.Repo)
		if in.Number <= 0 || s.repo(head) == nil || !s.hasBranch(head, in.HeadBranch) {
			http.Error(w, "a number and an existing head branch are required", http.StatusBadRequest)
			return
		}
		ds = s.Deliver(tb, in.Repo, "pull_request", s.PullRequestPayload(tb, in.Repo, PullRequest{
			Number: in.Number, Action: cmpOr(in.Action, "opened"), Title: in.Title, Author: in.Author,
			HeadRepo: in.HeadRepo, HeadBranch: in.HeadBranch}))
	default:
		http.NotFound(w, r)
		return
	}
	out := []map[string]any{}
	for _, d := range ds {
		out = append(out, map[string]any{"hookId": d.HookID, "id": d.ID, "event": d.Event, "status": d.Status, "answer": d.Answer})
	}
	writeJSON(w, http.StatusOK, out)
}

// hasBranch reports whether branch exists in fullName's bare repository.
func (s *Server) hasBranch(fullName, branch string) bool {
	r := s.repo(fullName)
	if r == nil || branch == "" || strings.HasPrefix(branch, "-") {
		return false
	}
	bare := filepath.Join(s.Git.Root, r.FullName()+".git")
	return exec.Command("git", "-C", bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
