package ghhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

const testKey = "test-secret-key-0123456789abcdef0123456789"

// fakeDeployer records what it is asked and hands out deployments
// dep-1, dep-2…; Err, when set, is every answer.
type fakeDeployer struct {
	mu       sync.Mutex
	triggers []gantry.DeployTrigger
	removed  []string // "pr=N" or "branch=B"
	err      error
	block    chan struct{} // when set, Trigger waits for it
	entered  chan string   // when set, Trigger sends the branch on it first
	// during, when set, runs inside Trigger (as the deploy service calls
	// Finished there for a build the new one supersedes).
	during func(t gantry.DeployTrigger)
}

func (f *fakeDeployer) Trigger(_ context.Context, t gantry.DeployTrigger) (*gantry.Deployment, error) {
	if f.entered != nil {
		f.entered <- t.Branch
	}
	if f.block != nil {
		<-f.block
	}
	if f.during != nil {
		f.during(t)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.triggers = append(f.triggers, t)
	return &gantry.Deployment{ID: fmt.Sprintf("dep-%d", len(f.triggers)), ProjectID: t.ProjectID, Status: gantry.DeploymentPending}, nil
}

func (f *fakeDeployer) RemovePreviews(_ context.Context, _ string, pr int, branch string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if pr > 0 {
		f.removed = append(f.removed, "pr="+strconv.Itoa(pr))
	} else {
		f.removed = append(f.removed, "branch="+branch)
	}
	return nil
}

func (f *fakeDeployer) Triggers() []gantry.DeployTrigger {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gantry.DeployTrigger(nil), f.triggers...)
}

func (f *fakeDeployer) Removed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.removed...)
}

// env is a service over a real SQLite store, the fake GitHub and a
// receiver that hands deliveries to Receive, with alice (alice-gh on
// GitHub, owner of alice-gh/site) and her project of that repository.
type env struct {
	svc     *ghhook.Service
	db      *store.DB
	gh      *githubtest.Server
	dep     *fakeDeployer
	alice   *gantry.User
	bob     *gantry.User
	aliceGH *githubtest.User
	repo    *githubtest.Repo
	project *gantry.Project
	logs    *strings.Builder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{db: storetest.MustOpenDB(t), gh: githubtest.NewServer(t), dep: &fakeDeployer{}, logs: &strings.Builder{}}
	e.aliceGH = e.gh.AddUser("alice-gh")
	e.gh.AddUser("bob-gh")
	e.repo = e.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "site"}, map[string]string{"index.html": "v1"})
	tokens := mustBox(t, secret.GitHubTokens)
	sealed, err := tokens.Seal(e.aliceGH.Token)
	if err != nil {
		t.Fatal(err)
	}
	e.alice = storetest.MustCreateUser(t, e.db, "alice", "Alice")
	e.bob = storetest.MustCreateUser(t, e.db, "bob", "Bob")
	if err := e.db.SetGitHubLink(ctx, e.alice.ID, gantry.GitHubLink{ID: e.aliceGH.ID, Username: "alice-gh", AccessToken: sealed}); err != nil {
		t.Fatal(err)
	}
	if e.alice, err = e.db.FindUserByID(ctx, e.alice.ID); err != nil {
		t.Fatal(err)
	}
	e.project = &gantry.Project{UserID: e.alice.ID, Name: "site", Type: "static", Branch: "main",
		Repository: gantry.Repository{ID: strconv.FormatInt(e.repo.ID, 10), Name: "site", FullName: "alice-gh/site",
			DefaultBranch: "main", CloneURL: e.gh.URL + "/alice-gh/site.git"}}
	if err := e.db.CreateProject(ctx, e.project); err != nil {
		t.Fatal(err)
	}
	client, err := githost.NewGitHub(e.gh.APIURL(), e.gh.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = &ghhook.Service{Store: e.db, GitHub: client, Deployer: e.dep, Secrets: mustBox(t, secret.GitHubHooks),
		Decrypt: tokens.Open, Logger: slog.New(slog.NewTextHandler(&syncWriter{b: e.logs}, nil))}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, err := e.svc.Receive(r.Context(), ghhook.Delivery{Event: r.Header.Get("X-GitHub-Event"),
			ID: r.Header.Get("X-GitHub-Delivery"), HookID: r.Header.Get("X-GitHub-Hook-ID"),
			RepoID:    r.Header.Get("X-GitHub-Hook-Installation-Target-ID"),
			Signature: r.Header.Get("X-Hub-Signature-256"), Body: body})
		switch gantry.ErrorCode(err) {
		case "":
			if msg == ghhook.MsgQueued {
				w.WriteHeader(http.StatusAccepted)
			}
			_, _ = io.WriteString(w, msg)
		case gantry.EUNAUTHORIZED:
			http.Error(w, gantry.ErrorMessage(err), http.StatusUnauthorized)
		case gantry.EUNAVAILABLE:
			http.Error(w, gantry.ErrorMessage(err), http.StatusServiceUnavailable)
		default:
			http.Error(w, gantry.ErrorMessage(err), http.StatusBadRequest)
		}
	}))
	t.Cleanup(receiver.Close)
	e.svc.PublicURL = receiver.URL
	t.Cleanup(e.svc.Close)
	return e
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func mustBox(t *testing.T, p secret.Purpose) *secret.Box {
	t.Helper()
	b, err := secret.New(testKey, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deliver sends event to the repository's hooks, waits for the work and
// returns the one delivery.
func (e *env) deliver(t *testing.T, event string, payload any) githubtest.Delivery {
	t.Helper()
	ds := e.gh.Deliver(t, "alice-gh/site", event, payload)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	e.svc.Wait()
	return ds[0]
}

func (e *env) view(t *testing.T) *ghhook.View {
	t.Helper()
	v, err := e.svc.Status(context.Background(), e.alice.ID, e.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRegisterAndPush(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Register(ctx, e.alice, e.project)
	hooks := e.gh.Hooks("alice-gh/site")
	if len(hooks) != 1 || hooks[0].URL != e.svc.PublicURL+"/api/webhooks/github" || hooks[0].ContentType != "json" ||
		strings.Join(hooks[0].Events, ",") != "push,pull_request" || len(hooks[0].Secret) != 64 {
		t.Fatalf("hooks %+v", hooks)
	}
	stored, err := e.db.FindGitHubHook(ctx, e.project.ID)
	if err != nil || stored.HookID != hooks[0].ID || strings.Contains(stored.Secret, hooks[0].Secret) {
		t.Fatalf("stored hook %+v %v (the secret must be sealed)", stored, err)
	}
	if v := e.view(t); v.Webhook == nil || !v.Webhook.Active || v.Webhook.Error != nil || v.Webhook.LastDelivery != nil {
		t.Fatalf("view %+v", v.Webhook)
	}

	// ping
	if d := e.deliver(t, "ping", map[string]any{"zen": "Keep it simple.", "hook_id": hooks[0].ID,
		"repository": map[string]any{"id": e.repo.ID, "full_name": "alice-gh/site"}}); d.Status != 200 || d.Answer != ghhook.MsgPong {
		t.Fatalf("ping: %d %s", d.Status, d.Answer)
	}

	// A push to the production branch.
	e.gh.Push(t, "alice-gh/site", "main", "Update the home page", map[string]string{"index.html": "v2"})
	payload := e.gh.PushPayload(t, "alice-gh/site", "main", "")
	d := e.deliver(t, "push", payload)
	if d.Status != http.StatusAccepted {
		t.Fatalf("push: %d %s", d.Status, d.Answer)
	}
	tr := e.dep.Triggers()
	if len(tr) != 1 || tr[0].ProjectID != e.project.ID || tr[0].Trigger != gantry.TriggerPush || tr[0].Branch != "main" ||
		tr[0].PullRequest != 0 || tr[0].Commit == nil || tr[0].Commit.SHA != payload["after"] ||
		tr[0].Commit.Message != "Update the home page" || tr[0].Commit.Author != "Test Author" {
		t.Fatalf("triggers %+v commit %+v", tr, tr[0].Commit)
	}
	last := e.view(t).Webhook.LastDelivery
	if last == nil || last.Event != "push" || last.Result != gantry.DeliveryOK || !strings.Contains(last.Message, "Production") {
		t.Fatalf("last delivery %+v", last)
	}

	// The same delivery again does nothing.
	if again := e.gh.Redeliver(t, d); again.Status != 200 || again.Answer != ghhook.MsgAlreadyHandled {
		t.Fatalf("replay: %d %s", again.Status, again.Answer)
	}
	e.svc.Wait()
	if n := len(e.dep.Triggers()); n != 1 {
		t.Fatalf("the replay triggered: %d", n)
	}

	// Another branch: a preview of it.
	e.gh.Push(t, "alice-gh/site", "feature/x", "Try a new layout", map[string]string{"index.html": "v3"})
	e.deliver(t, "push", e.gh.PushPayload(t, "alice-gh/site", "feature/x", ""))
	if tr := e.dep.Triggers(); len(tr) != 2 || tr[1].Branch != "feature/x" || tr[1].Trigger != gantry.TriggerPush {
		t.Fatalf("triggers %+v", tr)
	}
	// Deleting it removes its preview.
	e.deliver(t, "push", e.gh.DeleteBranchPayload(t, "alice-gh/site", "feature/x"))
	if r := e.dep.Removed(); len(r) != 1 || r[0] != "branch=feature/x" {
		t.Fatalf("removed %v", r)
	}
	// A tag is ignored.
	tag := e.gh.PushPayload(t, "alice-gh/site", "main", "")
	tag["ref"] = "refs/tags/v1"
	e.deliver(t, "push", tag)
	if n := len(e.dep.Triggers()); n != 2 {
		t.Fatalf("a tag triggered")
	}
	if last := e.view(t).Webhook.LastDelivery; last.Result != gantry.DeliveryIgnored {
		t.Fatalf("tag: %+v", last)
	}
	// The deploy service refusing (auto-deploy off) is recorded as ignored.
	e.dep.err = gantry.Errorf(gantry.EINVALID, "Auto-deploy is off for this project")
	e.gh.Push(t, "alice-gh/site", "main", "Another change", map[string]string{"index.html": "v4"})
	e.deliver(t, "push", e.gh.PushPayload(t, "alice-gh/site", "main", ""))
	if last := e.view(t).Webhook.LastDelivery; last.Result != gantry.DeliveryIgnored || last.Message != "Auto-deploy is off for this project" {
		t.Fatalf("refused: %+v", last)
	}

	// Unregister removes it at GitHub.
	e.svc.Unregister(ctx, e.project)
	if n := len(e.gh.Hooks("alice-gh/site")); n != 0 {
		t.Fatalf("%d hooks left", n)
	}
}

func TestBadDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Register(ctx, e.alice, e.project)
	secretOf := e.gh.Hooks("alice-gh/site")[0].Secret
	body := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","after":"%s","head_commit":{"id":"%s","message":"m","author":{"name":"a"}},"repository":{"id":%d}}`,
		strings.Repeat("a", 40), strings.Repeat("a", 40), e.repo.ID))
	id := githubtest.NewDeliveryID()
	hook := strconv.FormatInt(e.gh.Hooks("alice-gh/site")[0].ID, 10)
	for _, tc := range []struct {
		name, event, id, hook, sig string
		body                       []byte
		code                       string
	}{
		{"wrong signature", "push", id, hook, githubtest.Sign("not-the-secret", body), body, gantry.EUNAUTHORIZED},
		{"missing signature", "push", id, hook, "", body, gantry.EUNAUTHORIZED},
		{"sha1 signature", "push", id, hook, "sha1=" + strings.Repeat("0", 40), body, gantry.EUNAUTHORIZED},
		{"signature of another body", "push", id, hook, githubtest.Sign(secretOf, []byte("{}")), body, gantry.EUNAUTHORIZED},
		{"unknown webhook", "push", id, "1", githubtest.Sign(secretOf, body), body, gantry.EUNAUTHORIZED},
		{"no webhook id", "push", id, "", githubtest.Sign(secretOf, body), body, gantry.EINVALID},
		{"webhook id not a number", "push", id, "x", githubtest.Sign(secretOf, body), body, gantry.EINVALID},
		// The body is read only once its signature holds: unsigned junk is
		// 401, not a JSON error.
		{"not JSON, not signed", "push", id, hook, githubtest.Sign("guess", []byte("a=b")), []byte("a=b"), gantry.EUNAUTHORIZED},
		{"another repository", "push", id, hook, githubtest.Sign(secretOf, []byte(`{"repository":{"id":1}}`)), []byte(`{"repository":{"id":1}}`), gantry.EINVALID},
		{"no event", "", id, hook, githubtest.Sign(secretOf, body), body, gantry.EINVALID},
		{"bad delivery id", "push", "x\ny", hook, githubtest.Sign(secretOf, body), body, gantry.EINVALID},
		{"not JSON", "push", id, hook, githubtest.Sign(secretOf, []byte("a=b")), []byte("a=b"), gantry.EINVALID},
	} {
		_, err := e.svc.Receive(ctx, ghhook.Delivery{Event: tc.event, ID: tc.id, HookID: tc.hook, Signature: tc.sig, Body: tc.body})
		if gantry.ErrorCode(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.code)
		}
	}
	e.svc.Wait()
	if n := len(e.dep.Triggers()); n != 0 {
		t.Fatalf("bad deliveries triggered %d deployments", n)
	}
	// None of them used up the delivery.
	msg, err := e.svc.Receive(ctx, ghhook.Delivery{Event: "push", ID: id, HookID: hook, Signature: githubtest.Sign(secretOf, body), Body: body})
	if err != nil || msg != ghhook.MsgQueued {
		t.Fatalf("good delivery: %q %v", msg, err)
	}
	e.svc.Wait()
	if n := len(e.dep.Triggers()); n != 1 {
		t.Fatalf("%d triggers", n)
	}
}

func TestPullRequestPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Register(ctx, e.alice, e.project)
	e.gh.Push(t, "alice-gh/site", "fix-typo", "Fix a typo", map[string]string{"index.html": "fixed"})
	pr := githubtest.PullRequest{Number: 12, Action: "opened", Title: "Fix a typo", HeadBranch: "fix-typo"}
	payload := e.gh.PullRequestPayload(t, "alice-gh/site", pr)
	sha := payload["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	e.deliver(t, "pull_request", payload)
	tr := e.dep.Triggers()
	if len(tr) != 1 || tr[0].Trigger != gantry.TriggerPullRequest || tr[0].PullRequest != 12 || tr[0].Branch != "fix-typo" ||
		tr[0].Commit == nil || tr[0].Commit.SHA != sha {
		t.Fatalf("triggers %+v", tr)
	}
	if tr[0].Fork {
		t.Fatal("a pull request from the repository itself was marked a fork's")
	}
	st := e.gh.Statuses("alice-gh/site", sha)
	if len(st) != 1 || st[0].State != "pending" || st[0].Context != "gantry/preview" || st[0].Description != "Building preview…" ||
		st[0].TargetURL != e.svc.PublicURL+"/deployments/dep-1" {
		t.Fatalf("statuses %+v", st)
	}
	cs := e.gh.Comments("alice-gh/site", 12)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "Building") || !strings.Contains(cs[0].Body, sha[:7]) {
		t.Fatalf("comments %+v", cs)
	}
	v := e.view(t)
	if len(v.PullRequests) != 1 || v.PullRequests[0].State != gantry.PullRequestOpen || v.PullRequests[0].Fork ||
		v.PullRequests[0].DeploymentID == nil || *v.PullRequests[0].DeploymentID != "dep-1" || v.PullRequests[0].Title != "Fix a typo" ||
		v.PullRequests[0].Author != "alice-gh" || v.PullRequests[0].HeadBranch != "fix-typo" ||
		v.PullRequests[0].URL != e.gh.URL+"/alice-gh/site/pull/12" {
		t.Fatalf("pull requests %+v", v.PullRequests)
	}

	// A push to the pull request's branch is built by the pull request,
	// not twice.
	e.deliver(t, "push", e.gh.PushPayload(t, "alice-gh/site", "fix-typo", ""))
	if n := len(e.dep.Triggers()); n != 1 {
		t.Fatalf("the branch push built again: %d", n)
	}

	// The build ends: success with the preview's URL, the comment edited.
	preview := "http://site--pr-12.localhost:8080"
	e.svc.DeploymentFinished(ctx, &gantry.Deployment{ID: "dep-1", ProjectID: e.project.ID, Status: gantry.DeploymentLive, URL: preview})
	e.svc.Wait()
	st = e.gh.Statuses("alice-gh/site", sha)
	if len(st) != 2 || st[1].State != "success" || st[1].TargetURL != preview {
		t.Fatalf("statuses %+v", st)
	}
	cs = e.gh.Comments("alice-gh/site", 12)
	if len(cs) != 1 || cs[0].Edits != 1 || !strings.Contains(cs[0].Body, "Live") || !strings.Contains(cs[0].Body, preview) {
		t.Fatalf("comments %+v", cs)
	}
	// A deployment that is not a pull request's current preview says nothing.
	e.svc.DeploymentFinished(ctx, &gantry.Deployment{ID: "dep-99", ProjectID: e.project.ID, Status: gantry.DeploymentFailed})
	e.svc.Wait()
	if n := len(e.gh.Statuses("alice-gh/site", sha)); n != 2 {
		t.Fatalf("%d statuses", n)
	}

	// A new commit: a new build, the same comment; it fails.
	e.gh.Push(t, "alice-gh/site", "fix-typo", "Oops", map[string]string{"index.html": "broken"})
	pr.Action = "synchronize"
	payload = e.gh.PullRequestPayload(t, "alice-gh/site", pr)
	sha2 := payload["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	e.deliver(t, "pull_request", payload)
	if tr := e.dep.Triggers(); len(tr) != 2 || tr[1].Commit.SHA != sha2 {
		t.Fatalf("triggers %+v", tr)
	}
	e.svc.DeploymentFinished(ctx, &gantry.Deployment{ID: "dep-2", ProjectID: e.project.ID, Status: gantry.DeploymentFailed})
	e.svc.Wait()
	st = e.gh.Statuses("alice-gh/site", sha2)
	if len(st) != 2 || st[1].State != "failure" || st[1].TargetURL != e.svc.PublicURL+"/deployments/dep-2" {
		t.Fatalf("statuses %+v", st)
	}
	if cs = e.gh.Comments("alice-gh/site", 12); len(cs) != 1 || !strings.Contains(cs[0].Body, "Failed") {
		t.Fatalf("comments %+v", cs)
	}

	// Closed: the preview is removed and the comment says so.
	pr.Action = "closed"
	e.deliver(t, "pull_request", e.gh.PullRequestPayload(t, "alice-gh/site", pr))
	if r := e.dep.Removed(); len(r) != 1 || r[0] != "pr=12" {
		t.Fatalf("removed %v", r)
	}
	if cs = e.gh.Comments("alice-gh/site", 12); len(cs) != 1 || !strings.Contains(cs[0].Body, "Removed") {
		t.Fatalf("comments %+v", cs)
	}
	if v := e.view(t); v.PullRequests[0].State != gantry.PullRequestClosed {
		t.Fatalf("state %s", v.PullRequests[0].State)
	}
	// The build stopped by the removal does not overwrite the comment.
	e.svc.DeploymentFinished(ctx, &gantry.Deployment{ID: "dep-2", ProjectID: e.project.ID, Status: gantry.DeploymentStopped})
	e.svc.Wait()
	if cs = e.gh.Comments("alice-gh/site", 12); !strings.Contains(cs[0].Body, "Removed") {
		t.Fatalf("comments %+v", cs)
	}
}

func TestForkPullRequestWaitsForApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Register(ctx, e.alice, e.project)
	e.gh.AddRepo(t, githubtest.Repo{Owner: "bob-gh", Name: "site"}, map[string]string{"index.html": "bob's"})
	e.gh.Push(t, "bob-gh/site", "steal-secrets", "Innocent change", map[string]string{"index.html": "env"})
	pr := githubtest.PullRequest{Number: 7, Action: "opened", Title: "Innocent change", Author: "bob-gh",
		HeadRepo: "bob-gh/site", HeadBranch: "steal-secrets"}
	payload := e.gh.PullRequestPayload(t, "alice-gh/site", pr)
	sha := payload["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	e.deliver(t, "pull_request", payload)
	if n := len(e.dep.Triggers()); n != 0 {
		t.Fatalf("a fork's pull request was built without approval")
	}
	v := e.view(t)
	if len(v.PullRequests) != 1 || v.PullRequests[0].State != gantry.PullRequestAwaitingApproval || !v.PullRequests[0].Fork ||
		v.PullRequests[0].Author != "bob-gh" {
		t.Fatalf("pull requests %+v", v.PullRequests)
	}
	if last := v.Webhook.LastDelivery; last.Result != gantry.DeliveryIgnored || !strings.Contains(last.Message, "fork") {
		t.Fatalf("last %+v", last)
	}

	// Only the owner approves.
	if _, err := e.svc.Approve(ctx, e.bob.ID, e.project.ID, 7, sha); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob approves: %v", err)
	}
	if _, err := e.svc.Approve(ctx, e.alice.ID, e.project.ID, 8, sha); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("unknown pull request: %v", err)
	}
	if v.PullRequests[0].HeadSHA != sha || v.PullRequests[0].DiffURL != v.PullRequests[0].URL+"/files" {
		t.Fatalf("the card shows %+v, want head %s and the diff", v.PullRequests[0], sha)
	}
	got, err := e.svc.Approve(ctx, e.alice.ID, e.project.ID, 7, sha)
	if err != nil || got.State != gantry.PullRequestApproved || got.DeploymentID == nil {
		t.Fatalf("approve: %+v %v", got, err)
	}
	if tr := e.dep.Triggers(); len(tr) != 1 || tr[0].PullRequest != 7 || tr[0].Commit.SHA != sha || tr[0].Branch != "steal-secrets" {
		t.Fatalf("triggers %+v", tr)
	}
	if tr := e.dep.Triggers(); !tr[0].Fork {
		t.Fatal("the fork's build was not marked a fork's: it would get the project's build caches")
	}
	if _, err := e.svc.Approve(ctx, e.alice.ID, e.project.ID, 7, sha); gantry.ErrorCode(err) != gantry.ECONFLICT {
		t.Fatalf("approve twice: %v", err)
	}
	// The same commit again (reopened) builds: it was approved.
	pr.Action = "reopened"
	e.deliver(t, "pull_request", e.gh.PullRequestPayload(t, "alice-gh/site", pr))
	if n := len(e.dep.Triggers()); n != 2 {
		t.Fatalf("%d triggers", n)
	}
	// A new commit waits again.
	e.gh.Push(t, "bob-gh/site", "steal-secrets", "More", map[string]string{"index.html": "more"})
	pr.Action = "synchronize"
	e.deliver(t, "pull_request", e.gh.PullRequestPayload(t, "alice-gh/site", pr))
	if n := len(e.dep.Triggers()); n != 2 {
		t.Fatalf("a new fork commit built without approval")
	}
	if v := e.view(t); v.PullRequests[0].State != gantry.PullRequestAwaitingApproval {
		t.Fatalf("state %s", v.PullRequests[0].State)
	}
}

// TestApprovalIsBoundToTheCommit mounts issue 24's point 8: the owner
// reviews the fork's commit; the author pushes another before the click;
// approving what the owner saw is refused and builds nothing, and the new
// head needs its own approval.
func TestApprovalIsBoundToTheCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Register(ctx, e.alice, e.project)
	e.gh.AddRepo(t, githubtest.Repo{Owner: "bob-gh", Name: "site"}, map[string]string{"index.html": "bob's"})
	e.gh.Push(t, "bob-gh/site", "typo", "Fix a typo", map[string]string{"index.html": "typo fixed"})
	pr := githubtest.PullRequest{Number: 9, Action: "opened", Title: "Fix a typo", Author: "bob-gh",
		HeadRepo: "bob-gh/site", HeadBranch: "typo"}
	e.deliver(t, "pull_request", e.gh.PullRequestPayload(t, "alice-gh/site", pr))
	seen := e.view(t).PullRequests[0].HeadSHA // what alice reviewed

	// Bob pushes the payload before alice clicks Approve.
	e.gh.Push(t, "bob-gh/site", "typo", "Also", map[string]string{"index.html": "<script>steal(env)</script>"})
	pr.Action = "synchronize"
	payload := e.gh.PullRequestPayload(t, "alice-gh/site", pr)
	head := payload["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	e.deliver(t, "pull_request", payload)
	_, err := e.svc.Approve(ctx, e.alice.ID, e.project.ID, 9, seen)
	if gantry.ErrorCode(err) != gantry.ECONFLICT || !strings.HasPrefix(gantry.ErrorMessage(err), "The pull request changed since you looked") ||
		!strings.Contains(gantry.ErrorMessage(err), gantry.ShortSHA(head)) {
		t.Fatalf("approving the commit alice saw after bob's push: %v", err)
	}
	if tr := e.dep.Triggers(); len(tr) != 0 {
		t.Fatalf("built %+v", tr)
	}
	if v := e.view(t).PullRequests[0]; v.State != gantry.PullRequestAwaitingApproval || v.HeadSHA != head {
		t.Fatalf("after the refusal %+v", v)
	}
	if _, err := e.svc.Approve(ctx, e.alice.ID, e.project.ID, 9, "main"); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Fatalf("approve a branch name: %v", err)
	}
	// Alice reviews the new head and approves it: that commit is built.
	if _, err := e.svc.Approve(ctx, e.alice.ID, e.project.ID, 9, head); err != nil {
		t.Fatal(err)
	}
	if tr := e.dep.Triggers(); len(tr) != 1 || tr[0].Commit.SHA != head || !tr[0].Fork {
		t.Fatalf("triggers %+v", tr)
	}
}

func TestRegisterFailureIsRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.gh.FailHooks(http.StatusNotFound)
	e.svc.Register(ctx, e.alice, e.project)
	v := e.view(t)
	if v.Webhook == nil || v.Webhook.Active || v.Webhook.Error == nil || !strings.Contains(*v.Webhook.Error, "admin access") {
		t.Fatalf("webhook %+v", v.Webhook)
	}
	if _, err := e.svc.Reregister(ctx, e.alice.ID, e.project.ID); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Fatalf("retry while GitHub refuses: %v", err)
	}
	e.gh.FailHooks(0)
	if _, err := e.svc.Reregister(ctx, e.bob.ID, e.project.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob retries: %v", err)
	}
	v, err := e.svc.Reregister(ctx, e.alice.ID, e.project.ID)
	if err != nil || !v.Webhook.Active || v.Webhook.Error != nil {
		t.Fatalf("retry: %+v %v", v, err)
	}
	first := e.gh.Hooks("alice-gh/site")
	// Retrying again replaces the hook (one at GitHub, a new secret).
	if _, err := e.svc.Reregister(ctx, e.alice.ID, e.project.ID); err != nil {
		t.Fatal(err)
	}
	second := e.gh.Hooks("alice-gh/site")
	if len(first) != 1 || len(second) != 1 || first[0].ID == second[0].ID || first[0].Secret == second[0].Secret {
		t.Fatalf("hooks %+v then %+v", first, second)
	}
	// Removing fails at GitHub: logged, no panic, nothing else.
	e.gh.FailHooks(http.StatusInternalServerError)
	e.svc.Unregister(ctx, e.project)
	if !strings.Contains(e.logs.String(), "could not remove it at GitHub") {
		t.Fatalf("logs: %s", e.logs.String())
	}
	if _, err := e.svc.Status(ctx, e.bob.ID, e.project.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob's view: %v", err)
	}
}

func TestQueueFull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.QueueSize, e.svc.Workers = 1, 1
	e.dep.block = make(chan struct{})
	e.svc.Register(ctx, e.alice, e.project)
	payload := e.gh.PushPayload(t, "alice-gh/site", "main", "")
	first := e.gh.Deliver(t, "alice-gh/site", "push", payload)[0] // taken by the worker, which blocks
	if first.Status != http.StatusAccepted {
		t.Fatalf("first: %d", first.Status)
	}
	var busy githubtest.Delivery
	for i := range 50 { // the worker takes the first soon; then one waits and the next is refused
		payload["n"] = i // a delivery of its own, not a replay
		busy = e.gh.Deliver(t, "alice-gh/site", "push", payload)[0]
		if busy.Status == http.StatusServiceUnavailable {
			break
		}
	}
	if busy.Status != http.StatusServiceUnavailable {
		t.Fatalf("never refused: %d %s", busy.Status, busy.Answer)
	}
	close(e.dep.block)
	e.svc.Wait()
	// The refused delivery was not used up: GitHub's redelivery works.
	if again := e.gh.Redeliver(t, busy); again.Status != http.StatusAccepted {
		t.Fatalf("redelivery: %d %s", again.Status, again.Answer)
	}
	e.svc.Wait()
}

// TestPingOnCreate: GitHub pings a new hook at once; the ping verifies
// against the stored secret and shows on the Git card.
func TestPingOnCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gh.SetPingOnCreate(true)
	e.svc.Register(context.Background(), e.alice, e.project)
	for range 200 {
		if ds := e.gh.Deliveries(); len(ds) == 1 {
			if ds[0].Event != "ping" || ds[0].Status != http.StatusOK || ds[0].Answer != ghhook.MsgPong {
				t.Fatalf("ping %+v", ds[0])
			}
			if last := e.view(t).Webhook.LastDelivery; last == nil || last.Event != "ping" || last.Result != gantry.DeliveryOK {
				t.Fatalf("last %+v", last)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no ping")
}

// TestFinishedDuringTrigger: the deploy service calls Finished from inside
// Trigger when the new commit supersedes a build in progress, while the
// delivery being handled holds the project's lock; the report must not
// wait for that lock in Trigger's goroutine (it deadlocked the project's
// deliveries), and it is still made once the delivery is done.
func TestFinishedDuringTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Register(ctx, e.alice, e.project)
	e.gh.Push(t, "alice-gh/site", "fix", "Fix", map[string]string{"index.html": "fix"})
	e.deliver(t, "pull_request", e.gh.PullRequestPayload(t, "alice-gh/site", githubtest.PullRequest{Number: 4, Action: "opened", HeadBranch: "fix"}))
	e.dep.during = func(gantry.DeployTrigger) {
		// dep-1, pull request #4's build, is superseded by the new commit.
		e.svc.DeploymentFinished(ctx, &gantry.Deployment{ID: "dep-1", ProjectID: e.project.ID, Status: gantry.DeploymentStopped})
	}
	e.gh.Push(t, "alice-gh/site", "fix", "Fix again", map[string]string{"index.html": "fix 2"})
	ds := e.gh.Deliver(t, "alice-gh/site", "pull_request", e.gh.PullRequestPayload(t, "alice-gh/site", githubtest.PullRequest{Number: 4, Action: "synchronize", HeadBranch: "fix"}))
	if len(ds) != 1 || ds[0].Status != http.StatusAccepted {
		t.Fatalf("deliveries %+v", ds)
	}
	done := make(chan struct{})
	go func() { e.svc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the delivery never finished: Finished called inside Trigger deadlocked")
	}
	if tr := e.dep.Triggers(); len(tr) != 2 {
		t.Fatalf("triggers %+v", tr)
	}
	// dep-1 is no longer the pull request's preview: its end says nothing.
	if cs := e.gh.Comments("alice-gh/site", 4); len(cs) != 1 || strings.Contains(cs[0].Body, "Stopped") {
		t.Fatalf("comments %+v", cs)
	}
}

// TestOneProjectCannotDelayAnother: while alice-gh/site's deliveries wait
// behind a slow one, alice-gh/blog's push is handled next, not after them
// (issue 24, point 7: one queue per project, served in turn).
func TestOneProjectCannotDelayAnother(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Workers = 1
	e.dep.block = make(chan struct{})
	e.svc.Register(ctx, e.alice, e.project)
	repo := e.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "blog"}, map[string]string{"index.html": "v1"})
	blog := &gantry.Project{UserID: e.alice.ID, Name: "blog", Type: "static", Branch: "main",
		Repository: gantry.Repository{ID: strconv.FormatInt(repo.ID, 10), Name: "blog", FullName: "alice-gh/blog",
			DefaultBranch: "main", CloneURL: e.gh.URL + "/alice-gh/blog.git"}}
	if err := e.db.CreateProject(ctx, blog); err != nil {
		t.Fatal(err)
	}
	e.svc.Register(ctx, e.alice, blog)
	payload := e.gh.PushPayload(t, "alice-gh/site", "main", "")
	for i := range 20 {
		payload["n"] = i // twenty deliveries of their own
		if d := e.gh.Deliver(t, "alice-gh/site", "push", payload)[0]; d.Status != http.StatusAccepted {
			t.Fatalf("site delivery %d: %d %s", i, d.Status, d.Answer)
		}
	}
	if d := e.gh.Deliver(t, "alice-gh/blog", "push", e.gh.PushPayload(t, "alice-gh/blog", "main", ""))[0]; d.Status != http.StatusAccepted {
		t.Fatalf("blog delivery: %d %s", d.Status, d.Answer)
	}
	close(e.dep.block)
	e.svc.Wait()
	tr := e.dep.Triggers()
	at := slices.IndexFunc(tr, func(t gantry.DeployTrigger) bool { return t.ProjectID == blog.ID })
	if len(tr) != 21 || at < 0 || at > 1 {
		t.Fatalf("blog's push was handled %d of %d", at+1, len(tr))
	}
}

// staleHookIDs is the store as a delivery sees it while its webhook is
// being registered: the first look-up by GitHub's hook id misses (the id
// is saved just after it).
type staleHookIDs struct {
	*store.DB
	misses atomic.Int32
}

func (s *staleHookIDs) GitHubHookByHookID(ctx context.Context, id int64) (*gantry.GitHubHook, error) {
	if s.misses.Add(-1) >= 0 {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Webhook not found")
	}
	return s.DB.GitHubHookByHookID(ctx, id)
}

// TestPingWhileRegistering: GitHub's ping of a new webhook is looked up
// by its hook id before the id is stored and by its repository after: it
// still verifies (the id stored in between does not hide the webhook).
func TestPingWhileRegistering(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc.Register(context.Background(), e.alice, e.project)
	stale := &staleHookIDs{DB: e.db}
	stale.misses.Store(1)
	e.svc.Store = stale
	ds := e.gh.Deliver(t, "alice-gh/site", "ping", map[string]any{"zen": "Keep it logically awesome.",
		"repository": map[string]any{"id": e.repo.ID}})
	if len(ds) != 1 || ds[0].Status != http.StatusOK || ds[0].Answer != ghhook.MsgPong {
		t.Fatalf("ping %d %s", ds[0].Status, ds[0].Answer)
	}
}

// TestDeliveriesOutliveTheirReplica: a delivery answered 202 is kept in
// the database until it is handled, so a replica that dies while handling
// it (here: hangs past its lease, as far as the others can tell) loses
// nothing: another replica on the same database takes it (attempt 2) and
// the project's next delivery, which waited behind it, in order; the
// first replica's late finish changes nothing.
func TestDeliveriesOutliveTheirReplica(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.svc
	a.Workers, a.JobLease = 1, time.Second
	e.dep.block, e.dep.entered = make(chan struct{}), make(chan string, 4)
	a.Register(ctx, e.alice, e.project)
	payload := e.gh.PushPayload(t, "alice-gh/site", "main", "")
	for i := range 2 {
		payload["n"] = i
		if d := e.gh.Deliver(t, "alice-gh/site", "push", payload)[0]; d.Status != http.StatusAccepted {
			t.Fatalf("delivery %d: %d %s", i, d.Status, d.Answer)
		}
	}
	select {
	case <-e.dep.entered: // replica A is handling the first, and hangs there
	case <-time.After(10 * time.Second):
		t.Fatal("replica A never took the first delivery")
	}

	other := &fakeDeployer{}
	b := &ghhook.Service{Store: e.db, GitHub: a.GitHub, Deployer: other, Secrets: a.Secrets, Decrypt: a.Decrypt,
		PublicURL: a.PublicURL, JobPoll: 50 * time.Millisecond, JobLease: time.Second, Logger: a.Logger}
	t.Cleanup(b.Close)
	done := make(chan struct{})
	go func() { b.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("replica B never handled the deliveries replica A took")
	}
	if tr := other.Triggers(); len(tr) != 2 {
		t.Fatalf("replica B triggered %d deployments, want 2 (the hung one's and the next)", len(tr))
	}
	close(e.dep.block) // A comes back: its finish finds the delivery handled
	a.Wait()
	if tr := other.Triggers(); len(tr) != 2 {
		t.Fatalf("after A's late finish, B's triggers %d", len(tr))
	}
	if last := e.view(t).Webhook.LastDelivery; last == nil || last.Event != "push" {
		t.Fatalf("last delivery %+v", last)
	}
}
