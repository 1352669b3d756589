package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/secret"
)

// recordingDeployer stands in for the deploy service's Trigger and
// RemovePreviews.
type recordingDeployer struct {
	mu       sync.Mutex
	triggers []gantry.DeployTrigger
	removed  []int
}

func (d *recordingDeployer) Trigger(_ context.Context, t gantry.DeployTrigger) (*gantry.Deployment, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.triggers = append(d.triggers, t)
	return &gantry.Deployment{ID: fmt.Sprintf("dep-%d", len(d.triggers)), ProjectID: t.ProjectID}, nil
}

func (d *recordingDeployer) RemovePreviews(_ context.Context, _ string, pr int, _ string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = append(d.removed, pr)
	return nil
}

func (d *recordingDeployer) Triggers() []gantry.DeployTrigger {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]gantry.DeployTrigger(nil), d.triggers...)
}

// withWebhooks gives g's server push to deploy from GitHub, reachable by
// the fake GitHub on a real listener.
func withWebhooks(t *testing.T, g *githubEnv) (*ghhook.Service, *recordingDeployer) {
	t.Helper()
	ts := httptest.NewServer(g.srv)
	t.Cleanup(ts.Close)
	client, err := githost.NewGitHub(g.gh.APIURL(), g.gh.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	dep := &recordingDeployer{}
	hooks := &ghhook.Service{Store: g.db, GitHub: client, Deployer: dep, Secrets: mustBox(t, secret.GitHubHooks),
		Decrypt: g.tokens.Open, PublicURL: ts.URL, Logger: g.srv.Logger}
	t.Cleanup(hooks.Close)
	g.srv.Projects.(*project.Service).Webhooks = hooks
	g.srv.Webhooks = hooks
	return hooks, dep
}

// TestGitHubWebhookEndToEnd: a project created from a connected repository
// registers its webhook; the fake GitHub's signed deliveries reach the real
// server and queue deployments; replays, bad signatures and other users
// do nothing; deleting the project removes the webhook.
func TestGitHubWebhookEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := withGitHub(t, e, true)
	hooks, dep := withWebhooks(t, g)
	g.connect(t, g.token, "alice-gh")

	rec := g.do(request{method: "POST", url: "/api/projects", headers: bearer(g.token),
		body: fmt.Sprintf(`{"repositoryId":%d}`, g.site.ID)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	p := dataField[*gantry.Project](t, rec, "project")
	hs := g.gh.Hooks("alice-gh/site")
	if len(hs) != 1 || !strings.HasSuffix(hs[0].URL, "/api/webhooks/github") || hs[0].ContentType != "json" {
		t.Fatalf("hooks %+v", hs)
	}

	// A push to main is deployed.
	g.gh.Push(t, "alice-gh/site", "main", "New home page", map[string]string{"index.html": "<h1>v2</h1>"})
	ds := g.gh.Deliver(t, "alice-gh/site", "push", g.gh.PushPayload(t, "alice-gh/site", "main", ""))
	if len(ds) != 1 || ds[0].Status != http.StatusAccepted || !strings.Contains(ds[0].Answer, `"message":"Queued"`) {
		t.Fatalf("deliveries %+v", ds)
	}
	hooks.Wait()
	if tr := dep.Triggers(); len(tr) != 1 || tr[0].ProjectID != p.ID || tr[0].Trigger != gantry.TriggerPush ||
		tr[0].Branch != "main" || tr[0].Commit.Message != "New home page" {
		t.Fatalf("triggers %+v", tr)
	}
	// Replayed: 200 already handled, nothing done.
	if again := g.gh.Redeliver(t, ds[0]); again.Status != http.StatusOK || !strings.Contains(again.Answer, ghhook.MsgAlreadyHandled) {
		t.Fatalf("replay %d %s", again.Status, again.Answer)
	}
	// Wrong and missing signatures: 401, nothing done.
	for _, sig := range []string{githubtest.Sign("guess", ds[0].Body), ""} {
		rec := g.do(request{method: "POST", url: "/api/webhooks/github", body: string(ds[0].Body), headers: map[string]string{
			"X-GitHub-Event": "push", "X-GitHub-Delivery": githubtest.NewDeliveryID(), "X-GitHub-Hook-ID": strconv.FormatInt(hs[0].ID, 10),
			"X-Hub-Signature-256": sig}})
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), ghhook.MsgBadSignature) {
			t.Fatalf("signature %q: %d %s", sig, rec.Code, rec.Body.String())
		}
	}
	// Too large.
	rec = g.do(request{method: "POST", url: "/api/webhooks/github", body: strings.Repeat(" ", ghhook.MaxBody+1),
		headers: map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": githubtest.NewDeliveryID()}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Payload too large") {
		t.Fatalf("too large: %d %s", rec.Code, rec.Body.String())
	}
	hooks.Wait()
	if n := len(dep.Triggers()); n != 1 {
		t.Fatalf("%d triggers", n)
	}

	// A pull request from a fork waits; the owner approves it.
	g.gh.AddRepo(t, githubtest.Repo{Owner: "bob-gh", Name: "site"}, map[string]string{"index.html": "fork"})
	g.gh.Push(t, "bob-gh/site", "idea", "An idea", map[string]string{"index.html": "idea"})
	g.gh.Deliver(t, "alice-gh/site", "pull_request", g.gh.PullRequestPayload(t, "alice-gh/site", githubtest.PullRequest{
		Number: 3, Action: "opened", Title: "An idea", Author: "bob-gh", HeadRepo: "bob-gh/site", HeadBranch: "idea"}))
	hooks.Wait()

	var view struct {
		Webhook *struct {
			Active       bool            `json:"active"`
			Error        *string         `json:"error"`
			LastDelivery json.RawMessage `json:"lastDelivery"`
		} `json:"webhook"`
		PullRequests []map[string]any `json:"pullRequests"`
	}
	rec = g.do(request{method: "GET", url: "/api/projects/" + p.ID + "/github", headers: bearer(g.token)})
	if rec.Code != http.StatusOK {
		t.Fatalf("github view: %d %s", rec.Code, rec.Body.String())
	}
	if err := json.Unmarshal(decodeAnswer(t, rec).Data, &view); err != nil {
		t.Fatal(err)
	}
	if view.Webhook == nil || !view.Webhook.Active || view.Webhook.Error != nil ||
		!strings.Contains(string(view.Webhook.LastDelivery), `"event":"pull_request"`) ||
		!strings.Contains(string(view.Webhook.LastDelivery), `"result":"ignored"`) ||
		len(view.PullRequests) != 1 || view.PullRequests[0]["state"] != "awaiting_approval" || view.PullRequests[0]["fork"] != true ||
		view.PullRequests[0]["deploymentId"] != nil {
		t.Fatalf("view %s", rec.Body.String())
	}
	if n := len(dep.Triggers()); n != 1 {
		t.Fatalf("%d triggers before approval", n)
	}
	head, _ := view.PullRequests[0]["headSha"].(string)
	rec = g.do(request{method: "POST", url: "/api/projects/" + p.ID + "/pull-requests/3/approve", headers: bearer(g.token),
		body: `{"sha":"` + head + `"}`})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"state":"approved"`) {
		t.Fatalf("approve: %d %s", rec.Code, rec.Body.String())
	}
	if tr := dep.Triggers(); len(tr) != 2 || tr[1].PullRequest != 3 || tr[1].Trigger != gantry.TriggerPullRequest {
		t.Fatalf("triggers %+v", tr)
	}
	if cs := g.gh.Comments("alice-gh/site", 3); len(cs) != 1 {
		t.Fatalf("comments %+v", cs)
	}

	// Retrying the webhook replaces it.
	rec = g.do(request{method: "POST", url: "/api/projects/" + p.ID + "/webhook", headers: bearer(g.token)})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"active":true`) {
		t.Fatalf("retry: %d %s", rec.Code, rec.Body.String())
	}
	if hs2 := g.gh.Hooks("alice-gh/site"); len(hs2) != 1 || hs2[0].ID == hs[0].ID {
		t.Fatalf("hooks after retry %+v", hs2)
	}

	// Deleting the project removes the webhook.
	if rec := g.do(request{method: "DELETE", url: "/api/projects/" + p.ID, headers: bearer(g.token)}); rec.Code != http.StatusOK {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body.String())
	}
	if hs := g.gh.Hooks("alice-gh/site"); len(hs) != 0 {
		t.Fatalf("hooks after delete %+v", hs)
	}
}

// TestGitHubWebhookFailureKeepsProject: GitHub refusing the webhook does
// not lose the project; the Git card says the webhook is missing.
func TestGitHubWebhookFailureKeepsProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := withGitHub(t, e, true)
	withWebhooks(t, g)
	g.connect(t, g.token, "alice-gh")
	g.gh.FailHooks(http.StatusInternalServerError)
	rec := g.do(request{method: "POST", url: "/api/projects", headers: bearer(g.token),
		body: fmt.Sprintf(`{"repositoryId":%d}`, g.site.ID)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	p := dataField[*gantry.Project](t, rec, "project")
	rec = g.do(request{method: "GET", url: "/api/projects/" + p.ID + "/github", headers: bearer(g.token)})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"active":false`) ||
		!strings.Contains(rec.Body.String(), "The GitHub webhook could not be added") {
		t.Fatalf("view: %d %s", rec.Code, rec.Body.String())
	}
	rec = g.do(request{method: "POST", url: "/api/projects/" + p.ID + "/webhook", headers: bearer(g.token)})
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("retry while GitHub fails: %d %s", rec.Code, rec.Body.String())
	}
	g.gh.FailHooks(0)
	rec = g.do(request{method: "POST", url: "/api/projects/" + p.ID + "/webhook", headers: bearer(g.token)})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"active":true`) || !strings.Contains(rec.Body.String(), `"error":null`) {
		t.Fatalf("retry: %d %s", rec.Code, rec.Body.String())
	}
}

// TestGitHubWebhookNotConfigured: without the service the endpoints say so.
func TestGitHubWebhookNotConfigured(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(request{method: "POST", url: "/api/webhooks/github", body: `{}`})
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

// TestGitHubWebhookAccess: the owner's endpoints refuse others (404) and
// bad input; the webhook endpoint refuses bad headers, bodies and
// signatures.
func TestGitHubWebhookAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := withGitHub(t, e, true)
	hooks, _ := withWebhooks(t, g)
	g.connect(t, g.token, "alice-gh")
	bob := e.otherToken(t)
	rec := g.do(request{method: "POST", url: "/api/projects", headers: bearer(g.token),
		body: fmt.Sprintf(`{"repositoryId":%d}`, g.site.ID)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	id := dataField[*gantry.Project](t, rec, "project").ID
	g.gh.AddRepo(t, githubtest.Repo{Owner: "bob-gh", Name: "site"}, map[string]string{"index.html": "fork"})
	g.gh.Push(t, "bob-gh/site", "idea", "An idea", map[string]string{"index.html": "idea"})
	prPayload := g.gh.PullRequestPayload(t, "alice-gh/site", githubtest.PullRequest{
		Number: 3, Action: "opened", Title: "An idea", Author: "bob-gh", HeadRepo: "bob-gh/site", HeadBranch: "idea"})
	head := prPayload["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	g.gh.Deliver(t, "alice-gh/site", "pull_request", prPayload)
	hooks.Wait()
	secretOf := g.gh.Hooks("alice-gh/site")[0].Secret
	push := fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"id":%d}}`, g.site.ID)
	hookID := strconv.FormatInt(g.gh.Hooks("alice-gh/site")[0].ID, 10)
	delivery := func(event, deliveryID, sig string) map[string]string {
		return map[string]string{"X-GitHub-Event": event, "X-GitHub-Delivery": deliveryID, "X-GitHub-Hook-ID": hookID,
			"X-Hub-Signature-256": sig}
	}
	approve := "/api/projects/" + id + "/pull-requests/3/approve"
	runScenariosOn(t, e, []scenario{
		{name: "bob reads", request: request{method: "GET", url: "/api/projects/" + id + "/github", headers: bearer(bob)},
			wantStatus: 404, wantMessage: "Project not found"},
		{name: "bob approves", request: request{method: "POST", url: approve, headers: bearer(bob)},
			wantStatus: 404, wantMessage: "Project not found"},
		{name: "bob retries the webhook", request: request{method: "POST", url: "/api/projects/" + id + "/webhook", headers: bearer(bob)},
			wantStatus: 404, wantMessage: "Project not found"},
		{name: "no token", request: request{method: "GET", url: "/api/projects/" + id + "/github"}, wantStatus: 401},
		{name: "unknown project", auth: true, request: request{method: "GET", url: "/api/projects/nope/github"},
			wantStatus: 404, wantMessage: "Project not found"},
		{name: "number not a number", auth: true, request: request{method: "POST", url: "/api/projects/" + id + "/pull-requests/x/approve"},
			wantStatus: 404, wantMessage: "Pull request not found"},
		{name: "number 0", auth: true, request: request{method: "POST", url: "/api/projects/" + id + "/pull-requests/0/approve"},
			wantStatus: 404, wantMessage: "Pull request not found"},
		{name: "huge number", auth: true, request: request{method: "POST", url: "/api/projects/" + id + "/pull-requests/99999999999999999999/approve"},
			wantStatus: 404, wantMessage: "Pull request not found"},
		{name: "number +3", auth: true, request: request{method: "POST", url: "/api/projects/" + id + "/pull-requests/+3/approve"},
			wantStatus: 404, wantMessage: "Pull request not found"},
		{name: "number 03", auth: true, request: request{method: "POST", url: "/api/projects/" + id + "/pull-requests/03/approve"},
			wantStatus: 404, wantMessage: "Pull request not found"},
		{name: "unknown pull request", auth: true, request: request{method: "POST", url: "/api/projects/" + id + "/pull-requests/4/approve"},
			wantStatus: 404, wantMessage: "Pull request not found"},
		{name: "owner reads", auth: true, request: request{method: "GET", url: "/api/projects/" + id + "/github"},
			wantStatus: 200, wantData: map[string]string{"webhook.active": "true", "webhook.error": "null",
				"webhook.lastDelivery.result": `"ignored"`, "webhook.lastDelivery.event": `"pull_request"`},
			wantContains: []string{`"pullRequests":[{"number":3,"title":"An idea","author":"bob-gh","headBranch":"idea","fork":true,` +
				`"state":"awaiting_approval","url":"` + g.gh.URL + `/alice-gh/site/pull/3","headSha":"` + head + `",` +
				`"diffUrl":"` + g.gh.URL + `/alice-gh/site/pull/3/files","deploymentId":null}]`}},
		{name: "approve without the commit", auth: true, request: request{method: "POST", url: approve},
			wantStatus: 400, wantMessage: ghhook.MsgApproveSHA},
		{name: "approve a branch name", auth: true, request: request{method: "POST", url: approve, body: `{"sha":"idea"}`},
			wantStatus: 400, wantMessage: ghhook.MsgApproveSHA},
		{name: "approve another commit", auth: true, request: request{method: "POST", url: approve, body: `{"sha":"` + strings.Repeat("a", 40) + `"}`},
			wantStatus: 409, wantMessage: fmt.Sprintf(ghhook.MsgPullRequestChanged, gantry.ShortSHA(head))},
		{name: "approve with another field", auth: true, request: request{method: "POST", url: approve, body: `{"commit":"` + head + `"}`},
			wantStatus: 400},
		{name: "owner approves", auth: true, request: request{method: "POST", url: approve, body: `{"sha":"` + head + `"}`},
			wantStatus: 200, wantData: map[string]string{"pullRequest.state": `"approved"`, "pullRequest.deploymentId": `"dep-1"`}},
		{name: "approved twice", auth: true, request: request{method: "POST", url: approve},
			wantStatus: 409, wantMessage: "Pull request #3 has no commit waiting for approval"},
		{name: "delivery without event", request: request{method: "POST", url: "/api/webhooks/github", body: push,
			headers: delivery("", githubtest.NewDeliveryID(), githubtest.Sign(secretOf, []byte(push)))},
			wantStatus: 400, wantMessage: "X-GitHub-Event is required"},
		{name: "delivery with a bad id", request: request{method: "POST", url: "/api/webhooks/github", body: push,
			headers: delivery("push", "../x", githubtest.Sign(secretOf, []byte(push)))},
			wantStatus: 400, wantMessage: "X-GitHub-Delivery must hold letters, digits and dashes only"},
		{name: "delivery that is not JSON", request: request{method: "POST", url: "/api/webhooks/github", body: "payload=%7B%7D",
			headers: delivery("push", githubtest.NewDeliveryID(), githubtest.Sign(secretOf, []byte("payload=%7B%7D")))},
			wantStatus: 400, wantMessage: "The payload must be JSON (set the webhook's content type to application/json)"},
		{name: "unsigned delivery that is not JSON", request: request{method: "POST", url: "/api/webhooks/github", body: "payload=%7B%7D",
			headers: delivery("push", githubtest.NewDeliveryID(), githubtest.Sign("guess", []byte("payload=%7B%7D")))},
			wantStatus: 401, wantMessage: ghhook.MsgBadSignature},
		{name: "delivery without a webhook id", request: request{method: "POST", url: "/api/webhooks/github", body: push,
			headers: map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": githubtest.NewDeliveryID(),
				"X-Hub-Signature-256": githubtest.Sign(secretOf, []byte(push))}},
			wantStatus: 400, wantMessage: "X-GitHub-Hook-ID must be the webhook's id (a whole number)"},
		{name: "delivery with a wrong signature", request: request{method: "POST", url: "/api/webhooks/github", body: push,
			headers: delivery("push", githubtest.NewDeliveryID(), githubtest.Sign("guess", []byte(push)))},
			wantStatus: 401, wantMessage: ghhook.MsgBadSignature},
		{name: "delivery without a signature", request: request{method: "POST", url: "/api/webhooks/github", body: push,
			headers: delivery("push", githubtest.NewDeliveryID(), "")},
			wantStatus: 401, wantMessage: ghhook.MsgBadSignature},
		{name: "delivery with the GET method", request: request{method: "GET", url: "/api/webhooks/github"},
			wantStatus: 405},
	})
}
