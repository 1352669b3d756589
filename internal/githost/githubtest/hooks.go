package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hookPart is the fake's repository webhooks: creating them, delivering
// events to them (Deliver, the payload builders), and the commit statuses
// and comments Gantry writes back. Server embeds it.
type hookPart struct{ s *Server }

// Hook is a repository webhook of the fake (POST /repos/{o}/{r}/hooks).
type Hook struct {
	ID          int64
	Repo        string // owner/name
	URL         string
	Secret      string
	ContentType string
	Events      []string
	Active      bool
}

// Status is a commit status (POST /repos/{o}/{r}/statuses/{sha}).
type Status struct {
	Repo, SHA                              string
	State, TargetURL, Description, Context string
	Creator                                string // login of the token's account
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID        int64
	Repo      string
	Number    int
	Body      string
	User      string
	CreatedAt time.Time
	UpdatedAt time.Time
	Edits     int // PATCHes so far
}

// Delivery is one webhook delivery the fake made and what the receiver
// answered.
type Delivery struct {
	HookID int64
	ID     string // X-GitHub-Delivery
	Event  string
	Body   []byte
	Status int    // the receiver's HTTP status (0: it could not be reached)
	Answer string // the receiver's body
}

// Hooks returns the webhooks of repository fullName, oldest first.
func (hp hookPart) Hooks(fullName string) []Hook {
	s := hp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Hook
	for _, h := range s.hooks {
		if strings.EqualFold(h.Repo, fullName) {
			out = append(out, *h)
		}
	}
	sortHooks(out)
	return out
}

// Statuses returns the commit statuses set on fullName's sha, oldest
// first.
func (hp hookPart) Statuses(fullName, sha string) []Status {
	s := hp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, st := range s.statuses {
		if strings.EqualFold(st.Repo, fullName) && st.SHA == sha {
			out = append(out, st)
		}
	}
	return out
}

// Comments returns the comments of issue or pull request number of
// fullName, oldest first.
func (hp hookPart) Comments(fullName string, number int) []Comment {
	s := hp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if strings.EqualFold(c.Repo, fullName) && c.Number == number {
			out = append(out, *c)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ID < out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Deliveries returns every delivery made so far, in order.
func (hp hookPart) Deliveries() []Delivery {
	s := hp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// FailHooks makes hook creation and deletion answer status (e.g. 404, as
// GitHub does for an account without admin rights, or 500); 0 restores
// normal answers.
func (hp hookPart) FailHooks(status int) {
	s := hp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hookFail = status
}

func sortHooks(h []Hook) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].ID < h[j-1].ID; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// Sign returns the X-Hub-Signature-256 of body under secret:
// "sha256=" and the hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// NewDeliveryID returns a random UUID (version 4), as X-GitHub-Delivery
// carries.
func NewDeliveryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Deliver sends event with payload (marshalled to JSON) to every active
// hook of fullName that subscribes to it (a "ping" goes to all), each with
// a fresh X-GitHub-Delivery and the body signed with the hook's secret, as
// GitHub does, and returns the deliveries. A receiver that cannot be
// reached is a Delivery with Status 0, not a failure.
func (hp hookPart) Deliver(tb testing.TB, fullName, event string, payload any) []Delivery {
	s := hp.s
	tb.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		tb.Fatalf("githubtest: payload: %v", err)
	}
	var out []Delivery
	for _, h := range s.Hooks(fullName) {
		if !h.Active || (event != "ping" && !contains(h.Events, event) && !contains(h.Events, "*")) {
			continue
		}
		d := s.deliverOne(h, event, NewDeliveryID(), body)
		out = append(out, d)
	}
	return out
}

// Redeliver sends delivery d again, as GitHub's "Redeliver" button does
// (same X-GitHub-Delivery, same body, same signature).
func (hp hookPart) Redeliver(tb testing.TB, d Delivery) Delivery {
	s := hp.s
	tb.Helper()
	s.mu.Lock()
	h, ok := s.hooks[d.HookID]
	var hook Hook
	if ok {
		hook = *h
	}
	s.mu.Unlock()
	if !ok {
		tb.Fatalf("githubtest: hook %d is gone", d.HookID)
	}
	return s.deliverOne(hook, d.Event, d.ID, d.Body)
}

func (hp hookPart) deliverOne(h Hook, event, id string, body []byte) Delivery {
	s := hp.s
	d := Delivery{HookID: h.ID, ID: id, Event: event, Body: body}
	req, err := http.NewRequest(http.MethodPost, h.URL, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("X-GitHub-Hook-ID", strconv.FormatInt(h.ID, 10))
		req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "repository")
		if r := s.repo(h.Repo); r != nil {
			req.Header.Set("X-GitHub-Hook-Installation-Target-ID", strconv.FormatInt(r.ID, 10))
		}
		if h.Secret != "" {
			req.Header.Set("X-Hub-Signature-256", Sign(h.Secret, body))
		}
		client := &http.Client{Timeout: 10 * time.Second} // GitHub gives receivers 10 s
		if resp, err := client.Do(req); err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			d.Status, d.Answer = resp.StatusCode, string(b)
		}
	}
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	return d
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// repositoryPayload is the "repository" object of events.
func (hp hookPart) repositoryPayload(r *Repo) map[string]any {
	s := hp.s
	return map[string]any{
		"id": r.ID, "node_id": "R_" + strconv.FormatInt(r.ID, 10), "name": r.Name, "full_name": r.FullName(),
		"private": r.Private, "owner": map[string]any{"login": r.Owner, "name": r.Owner},
		"html_url": s.URL + "/" + r.FullName(), "clone_url": s.URL + "/" + r.FullName() + ".git",
		"default_branch": r.DefaultBranch, "fork": false,
	}
}

// headCommit reads branch's last commit of fullName from the bare
// repository: sha, message, author name and email, and time.
func (hp hookPart) headCommit(tb testing.TB, fullName, branch string) (sha, message, name, email, date string) {
	s := hp.s
	tb.Helper()
	bare := filepath.Join(s.Git.Root, fullName+".git")
	out, err := exec.Command("git", "-C", bare, "log", "-1", "--format=%H%x00%an%x00%ae%x00%aI%x00%B",
		"refs/heads/"+branch, "--").Output()
	if err != nil {
		tb.Fatalf("githubtest: no branch %s in %s: %v", branch, fullName, err)
	}
	f := strings.SplitN(string(out), "\x00", 5)
	if len(f) != 5 {
		tb.Fatalf("githubtest: bad git output %q", out)
	}
	return f[0], strings.TrimRight(f[4], "\n"), f[1], f[2], f[3]
}

// PushPayload is the payload of a push of branch's current head to
// fullName, by pusher (the repository's owner when ""), shaped as GitHub's
// push event.
func (hp hookPart) PushPayload(tb testing.TB, fullName, branch, pusher string) map[string]any {
	s := hp.s
	tb.Helper()
	r := s.repo(fullName)
	if r == nil {
		tb.Fatalf("githubtest: no repository %s", fullName)
	}
	if pusher == "" {
		pusher = r.Owner
	}
	sha, msg, name, email, date := s.headCommit(tb, r.FullName(), branch)
	commit := map[string]any{
		"id": sha, "tree_id": "", "distinct": true, "message": msg, "timestamp": date,
		"url":    s.URL + "/" + r.FullName() + "/commit/" + sha,
		"author": map[string]any{"name": name, "email": email}, "committer": map[string]any{"name": name, "email": email},
	}
	return map[string]any{
		"ref": "refs/heads/" + branch, "before": strings.Repeat("0", 40), "after": sha,
		"created": false, "deleted": false, "forced": false,
		"compare":     s.URL + "/" + r.FullName() + "/compare",
		"commits":     []any{commit},
		"head_commit": commit,
		"pusher":      map[string]any{"name": pusher, "email": pusher + "@users.noreply.example"},
		"sender":      map[string]any{"login": pusher},
		"repository":  s.repositoryPayload(r),
	}
}

// DeleteBranchPayload is the push event of deleting branch of fullName.
func (hp hookPart) DeleteBranchPayload(tb testing.TB, fullName, branch string) map[string]any {
	s := hp.s
	tb.Helper()
	r := s.repo(fullName)
	if r == nil {
		tb.Fatalf("githubtest: no repository %s", fullName)
	}
	return map[string]any{
		"ref": "refs/heads/" + branch, "before": strings.Repeat("1", 40), "after": strings.Repeat("0", 40),
		"created": false, "deleted": true, "forced": false, "commits": []any{}, "head_commit": nil,
		"pusher": map[string]any{"name": r.Owner}, "sender": map[string]any{"login": r.Owner},
		"repository": s.repositoryPayload(r),
	}
}

// PullRequest describes a pull request event of the fake.
type PullRequest struct {
	Number     int
	Action     string // opened, synchronize, reopened, closed
	Title      string
	Author     string // login; the base repository's owner when ""
	HeadRepo   string // owner/name holding the head branch; the base repository when ""
	HeadBranch string
	BaseBranch string // the base repository's default branch when ""
	Merged     bool
}

// PullRequestPayload is the pull_request event pr makes on base
// repository fullName, with the head branch's current commit as head.sha.
// Unless pr is closed, it also points the base repository's
// refs/pull/<n>/head at that commit, as GitHub does.
func (hp hookPart) PullRequestPayload(tb testing.TB, fullName string, pr PullRequest) map[string]any {
	s := hp.s
	tb.Helper()
	base := s.repo(fullName)
	if base == nil {
		tb.Fatalf("githubtest: no repository %s", fullName)
	}
	headName := pr.HeadRepo
	if headName == "" {
		headName = base.FullName()
	}
	head := s.repo(headName)
	if head == nil {
		tb.Fatalf("githubtest: no repository %s", headName)
	}
	if pr.Author == "" {
		pr.Author = base.Owner
	}
	if pr.BaseBranch == "" {
		pr.BaseBranch = base.DefaultBranch
	}
	sha, _, _, _, _ := s.headCommit(tb, head.FullName(), pr.HeadBranch)
	if pr.Action != "closed" {
		// GitHub keeps every pull request's head in the base repository as
		// refs/pull/<n>/head, forks' included: that is how they are fetched.
		baseGit := filepath.Join(s.Git.Root, base.FullName()+".git")
		headGit := filepath.Join(s.Git.Root, head.FullName()+".git")
		ref := fmt.Sprintf("refs/pull/%d/head", pr.Number)
		if out, err := exec.Command("git", "-C", baseGit, "fetch", "--quiet", "--force", headGit,
			"refs/heads/"+pr.HeadBranch+":"+ref).CombinedOutput(); err != nil {
			tb.Fatalf("githubtest: %s: %v: %s", ref, err, out)
		}
	}
	state := "open"
	if pr.Action == "closed" {
		state = "closed"
	}
	headRepo := s.repositoryPayload(head)
	headRepo["fork"] = !strings.EqualFold(head.FullName(), base.FullName())
	return map[string]any{
		"action": pr.Action, "number": pr.Number,
		"pull_request": map[string]any{
			"number": pr.Number, "title": pr.Title, "state": state, "merged": pr.Merged,
			"html_url": fmt.Sprintf("%s/%s/pull/%d", s.URL, base.FullName(), pr.Number),
			"user":     map[string]any{"login": pr.Author},
			"head": map[string]any{"ref": pr.HeadBranch, "sha": sha, "label": head.Owner + ":" + pr.HeadBranch,
				"repo": headRepo},
			"base": map[string]any{"ref": pr.BaseBranch, "label": base.Owner + ":" + pr.BaseBranch,
				"repo": s.repositoryPayload(base)},
		},
		"repository": s.repositoryPayload(base),
		"sender":     map[string]any{"login": pr.Author},
	}
}

// ---- REST: hooks, statuses, comments ----

// serveRepoWrite serves the hooks, statuses and comments endpoints of
// repository parts[1]/parts[2] (parts[3:] is the rest of the path) and
// reports whether the path was one of them. Only the repository's owner
// may use them (GitHub asks for admin rights for hooks and push rights for
// the others; the fake has no collaborators).
func (hp hookPart) serveRepoWrite(w http.ResponseWriter, r *http.Request, viewer *User, parts []string) bool {
	s := hp.s
	if len(parts) < 4 || parts[0] != "repos" {
		return false
	}
	rest := parts[3:]
	known := (rest[0] == "hooks" && len(rest) <= 2) ||
		(rest[0] == "statuses" && len(rest) == 2) ||
		(rest[0] == "issues" && len(rest) == 3 && (rest[2] == "comments" || rest[1] == "comments"))
	if !known {
		return false
	}
	const doc = "https://docs.github.com/rest"
	repo := s.repo(parts[1] + "/" + parts[2])
	if repo == nil || viewer == nil || viewer.Login != repo.Owner {
		if repo != nil && viewer != nil && !repo.Private && r.Method == http.MethodGet && rest[0] == "issues" {
			// anyone may read a public repository's comments
		} else {
			apiError(w, http.StatusNotFound, "Not Found", doc)
			return true
		}
	}
	switch {
	case rest[0] == "hooks" && len(rest) == 1 && r.Method == http.MethodPost:
		s.createHook(w, r, repo)
	case rest[0] == "hooks" && len(rest) == 1 && r.Method == http.MethodGet:
		list := []map[string]any{}
		for _, h := range s.Hooks(repo.FullName()) {
			list = append(list, s.hookJSON(h))
		}
		writeJSON(w, http.StatusOK, list)
	case rest[0] == "hooks" && len(rest) == 2 && (r.Method == http.MethodDelete || r.Method == http.MethodGet):
		id, _ := strconv.ParseInt(rest[1], 10, 64)
		s.mu.Lock()
		h, ok := s.hooks[id]
		ok = ok && strings.EqualFold(h.Repo, repo.FullName())
		fail := s.hookFail
		if ok && r.Method == http.MethodDelete && fail == 0 {
			delete(s.hooks, id)
		}
		var hook Hook
		if ok {
			hook = *h
		}
		s.mu.Unlock()
		switch {
		case fail != 0 && r.Method == http.MethodDelete:
			apiError(w, fail, http.StatusText(fail), doc)
		case !ok:
			apiError(w, http.StatusNotFound, "Not Found", doc)
		case r.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, s.hookJSON(hook))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	case rest[0] == "statuses" && r.Method == http.MethodPost:
		s.createStatus(w, r, repo, viewer, rest[1])
	case rest[0] == "issues" && rest[2] == "comments" && r.Method == http.MethodPost:
		n, err := strconv.Atoi(rest[1])
		if err != nil {
			apiError(w, http.StatusNotFound, "Not Found", doc)
			return true
		}
		var body struct {
			Body string `json:"body"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.Body == "" {
			apiError(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"body\" wasn't supplied.", doc)
			return true
		}
		now := time.Now().UTC().Truncate(time.Second)
		s.mu.Lock()
		s.nextID++
		c := &Comment{ID: s.nextID, Repo: repo.FullName(), Number: n, Body: body.Body, User: viewer.Login,
			CreatedAt: now, UpdatedAt: now}
		s.comments[c.ID] = c
		out := *c
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, s.commentJSON(out))
	case rest[0] == "issues" && rest[2] == "comments" && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(rest[1])
		list := []map[string]any{}
		for _, c := range s.Comments(repo.FullName(), n) {
			list = append(list, s.commentJSON(c))
		}
		writeJSON(w, http.StatusOK, list)
	case rest[0] == "issues" && rest[1] == "comments" && r.Method == http.MethodPatch:
		id, _ := strconv.ParseInt(rest[2], 10, 64)
		var body struct {
			Body string `json:"body"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.Body == "" {
			apiError(w, http.StatusUnprocessableEntity, "Invalid request.\n\n\"body\" wasn't supplied.", doc)
			return true
		}
		s.mu.Lock()
		c, ok := s.comments[id]
		var out Comment
		if ok && strings.EqualFold(c.Repo, repo.FullName()) {
			c.Body, c.UpdatedAt = body.Body, time.Now().UTC().Truncate(time.Second)
			c.Edits++
			out = *c
		} else {
			ok = false
		}
		s.mu.Unlock()
		if !ok {
			apiError(w, http.StatusNotFound, "Not Found", doc)
			return true
		}
		writeJSON(w, http.StatusOK, s.commentJSON(out))
	default:
		apiError(w, http.StatusNotFound, "Not Found", doc)
	}
	return true
}

func (hp hookPart) createHook(w http.ResponseWriter, r *http.Request, repo *Repo) {
	s := hp.s
	const doc = "https://docs.github.com/rest/repos/webhooks#create-a-repository-webhook"
	var body struct {
		Name   string   `json:"name"`
		Active *bool    `json:"active"`
		Events []string `json:"events"`
		Config struct {
			URL         string `json:"url"`
			ContentType string `json:"content_type"`
			Secret      string `json:"secret"`
		} `json:"config"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, "Problems parsing JSON", doc)
		return
	}
	if !strings.HasPrefix(body.Config.URL, "http://") && !strings.HasPrefix(body.Config.URL, "https://") {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
			"errors":            []map[string]any{{"resource": "Hook", "code": "custom", "message": "Config must contain URL for webhooks"}},
			"documentation_url": doc, "status": "422"})
		return
	}
	s.mu.Lock()
	if s.hookFail != 0 {
		fail := s.hookFail
		s.mu.Unlock()
		apiError(w, fail, http.StatusText(fail), doc)
		return
	}
	s.nextID++
	h := &Hook{ID: s.nextID, Repo: repo.FullName(), URL: body.Config.URL, Secret: body.Config.Secret,
		ContentType: body.Config.ContentType, Events: body.Events, Active: body.Active == nil || *body.Active}
	if h.ContentType == "" {
		h.ContentType = "form"
	}
	if len(h.Events) == 0 {
		h.Events = []string{"push"}
	}
	s.hooks[h.ID] = h
	out := *h
	ping := s.pingOnCreate
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.hookJSON(out))
	if ping {
		body, _ := json.Marshal(map[string]any{"zen": "Design for failure.", "hook_id": out.ID, "hook": s.hookJSON(out),
			"repository": s.repositoryPayload(repo), "sender": map[string]any{"login": repo.Owner}})
		go s.deliverOne(out, "ping", NewDeliveryID(), body)
	}
}

// SetPingOnCreate makes every new hook receive a ping event right after it
// is created, as on GitHub (off by default, so tests see only the
// deliveries they make).
func (hp hookPart) SetPingOnCreate(on bool) {
	s := hp.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingOnCreate = on
}

func (hp hookPart) hookJSON(h Hook) map[string]any {
	s := hp.s
	cfg := map[string]any{"url": h.URL, "content_type": h.ContentType, "insecure_ssl": "0"}
	if h.Secret != "" {
		cfg["secret"] = "********" // GitHub never shows it back
	}
	u := s.APIURL() + "repos/" + h.Repo + "/hooks/" + strconv.FormatInt(h.ID, 10)
	return map[string]any{"type": "Repository", "id": h.ID, "name": "web", "active": h.Active, "events": h.Events,
		"config": cfg, "url": u, "test_url": u + "/test", "ping_url": u + "/pings",
		"updated_at": time.Now().UTC().Format(time.RFC3339), "created_at": time.Now().UTC().Format(time.RFC3339)}
}

func (hp hookPart) createStatus(w http.ResponseWriter, r *http.Request, repo *Repo, viewer *User, sha string) {
	s := hp.s
	const doc = "https://docs.github.com/rest/commits/statuses#create-a-commit-status"
	var body struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, "Problems parsing JSON", doc)
		return
	}
	switch body.State {
	case "pending", "success", "failure", "error":
	default:
		apiError(w, http.StatusUnprocessableEntity, "Validation Failed", doc)
		return
	}
	if len([]rune(body.Description)) > 140 {
		apiError(w, http.StatusUnprocessableEntity, "Validation Failed: description is too long (maximum is 140 characters)", doc)
		return
	}
	bare := filepath.Join(s.Git.Root, repo.FullName()+".git")
	if err := exec.Command("git", "-C", bare, "cat-file", "-e", sha+"^{commit}").Run(); err != nil {
		apiError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha, doc)
		return
	}
	if body.Context == "" {
		body.Context = "default"
	}
	st := Status{Repo: repo.FullName(), SHA: sha, State: body.State, TargetURL: body.TargetURL,
		Description: body.Description, Context: body.Context, Creator: viewer.Login}
	s.mu.Lock()
	s.statuses = append(s.statuses, st)
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "state": st.State, "target_url": st.TargetURL,
		"description": st.Description, "context": st.Context, "creator": map[string]any{"login": viewer.Login},
		"created_at": time.Now().UTC().Format(time.RFC3339), "updated_at": time.Now().UTC().Format(time.RFC3339)})
}

func (hp hookPart) commentJSON(c Comment) map[string]any {
	s := hp.s
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.User},
		"html_url":   fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", s.URL, c.Repo, c.Number, c.ID),
		"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.UpdatedAt.Format(time.RFC3339)}
}
