package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/ghhook"
	"github.com/gantryhq/gantry/internal/ghlink"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/previewaccess"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/secret"
)

// pushEnv is push to deploy from GitHub with every part real, wired as
// cmd/gantry wires them: the fake GitHub (hooks, signed deliveries,
// statuses, comments, git over HTTP), the API server on a real listener
// (where the fake delivers), the deploy service with its build workers in
// the real sandbox, the edge serving live sites, and ghhook.Service with
// the deploy service as its Deployer and its DeploymentFinished as the
// deploy service's Finished hook. Alice is connected as alice-gh and owns
// a project made from alice-gh/site.
type pushEnv struct {
	*githubEnv
	hooks   *ghhook.Service
	deploys *deploy.Service
	project gantry.Project
}

func withPushToDeploy(t *testing.T) *pushEnv {
	t.Helper()
	return withPushToDeployRepo(t, false)
}

// withPushToDeployRepo is withPushToDeploy, alice-gh/site private or not.
// Previews are guarded as cmd/gantry guards them (previewaccess).
func withPushToDeployRepo(t *testing.T, private bool) *pushEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds in the sandbox")
	}
	e := newEnv(t)
	sb := sandboxtest.Require(t, sandbox.Config{})
	g := &githubEnv{testEnv: e, gh: githubtest.NewServer(t)}
	g.aliceGH = g.gh.AddUser("alice-gh")
	g.bobGH = g.gh.AddUser("bob-gh")
	g.site = g.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "site", Private: private}, map[string]string{"index.html": "<h1>v1</h1>"})
	hosts, err := githost.New(githost.Config{
		AllowHosts: []string{"127.0.0.1"}, Sandbox: sb, Detect: build.Suggest, Timeout: 30 * time.Second,
		GitHubAPIURL: g.gh.APIURL(), GitHubWebURL: g.gh.URL, RedirectURL: callbackURL,
		ClientID: g.gh.ClientID, ClientSecret: g.gh.ClientSecret,
	})
	if err != nil {
		t.Fatal(err)
	}
	stack := deploytest.New(t, deploytest.Options{DB: e.db, Sandbox: sb, Repos: hosts, Workers: true, Key: testSecret,
		Notify: e.accounts.Notify, Poll: 10 * time.Millisecond,
		UIDs: sandbox.UIDRange{First: 250000, Count: 1000}})
	g.tokens = stack.Tokens
	g.link = &ghlink.Accounts{
		Users: e.db, Host: hosts, Tokens: g.tokens, States: mustBox(t, secret.GitHubStates),
		Now: func() time.Time { return e.now }, Logger: e.srv.Logger,
	}
	e.srv.GitHub = g.link
	e.srv.Deploys, e.srv.Projects = stack.Deploys, stack.Projects
	live := edge.New("localhost", stack.Table, "http://localhost:8080")
	previews, err := previewaccess.New(testSecret, e.db, "http://localhost:8080",
		func(label string) string { return "http://" + label + ".localhost:8080" }, e.srv.Logger)
	if err != nil {
		t.Fatal(err)
	}
	live.ConfigurePreviews(previews)
	e.srv.LiveHandler, e.srv.PreviewAccess = live, previews

	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	client, err := githost.NewGitHub(g.gh.APIURL(), g.gh.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	// As cmd/gantry: the deploy service is the Deployer, and reports its
	// finished builds to the hooks.
	hooks := &ghhook.Service{Store: e.db, GitHub: client, Deployer: stack.Deploys, Secrets: mustBox(t, secret.GitHubHooks),
		Decrypt: g.tokens.Open, PublicURL: ts.URL, Logger: e.srv.Logger}
	t.Cleanup(hooks.Close)
	stack.Deploys.Finished = hooks.DeploymentFinished
	stack.Projects.Webhooks = hooks
	e.srv.Webhooks = hooks

	g.connect(t, g.token, "alice-gh")
	rec := g.do(request{method: "POST", url: "/api/projects", headers: bearer(g.token),
		body: fmt.Sprintf(`{"repositoryId":%d,"name":"My Site"}`, g.site.ID)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	p := &pushEnv{githubEnv: g, hooks: hooks, deploys: stack.Deploys, project: dataField[gantry.Project](t, rec, "project")}
	if hs := g.gh.Hooks("alice-gh/site"); len(hs) != 1 {
		t.Fatalf("hooks %+v", hs)
	}
	return p
}

// deliver sends event to alice-gh/site's webhook as GitHub does and
// returns the one delivery once the server has handled it.
func (p *pushEnv) deliver(t *testing.T, event string, payload any) githubtest.Delivery {
	t.Helper()
	ds := p.gh.Deliver(t, "alice-gh/site", event, payload)
	if len(ds) != 1 || ds[0].Status != http.StatusAccepted {
		t.Fatalf("deliveries %+v", ds)
	}
	p.hooks.Wait()
	return ds[0]
}

// deployments lists the project's deployments through the API, newest
// first.
func (p *pushEnv) deployments(t *testing.T) []gantry.Deployment {
	t.Helper()
	rec := p.do(request{method: "GET", url: "/api/deployments?projectId=" + p.project.ID, headers: bearer(p.token)})
	if rec.Code != http.StatusOK {
		t.Fatalf("deployments: %d %s", rec.Code, rec.Body.String())
	}
	return dataField[[]gantry.Deployment](t, rec, "deployments")
}

// wait polls the API until deployment id is no longer in progress.
func (p *pushEnv) wait(t *testing.T, id string) gantry.Deployment {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rec := p.do(request{method: "GET", url: "/api/deployments/" + id, headers: bearer(p.token)})
		if d := dataField[gantry.Deployment](t, rec, "deployment"); !d.InProgress() {
			deploy.Settled(p.deploys, id) // its route applied
			return d
		}
	}
	t.Fatalf("deployment %s still in progress", id)
	return gantry.Deployment{}
}

// site is what the edge answers on host sub.localhost:8080.
func (p *pushEnv) site(sub string) (int, string) {
	rec := p.do(request{method: "GET", url: "/", host: sub + ".localhost:8080"})
	return rec.Code, rec.Body.String()
}

// logs is deployment id's log through the API.
func (p *pushEnv) logs(t *testing.T, id string) string {
	t.Helper()
	return p.do(request{method: "GET", url: "/api/deployments/" + id + "/logs", headers: bearer(p.token)}).Body.String()
}

// TestPushToDeployProduction (issue 14, point 7): a signed push to the
// production branch deploys the pushed commit to production; a wrong
// signature and a replayed delivery do nothing.
func TestPushToDeployProduction(t *testing.T) {
	t.Parallel()
	p := withPushToDeploy(t)
	p.gh.Push(t, "alice-gh/site", "main", "New home page\n\nWith a body", map[string]string{"index.html": "<h1>v2</h1>"})
	payload := p.gh.PushPayload(t, "alice-gh/site", "main", "")
	sha := payload["after"].(string)
	d := p.deliver(t, "push", payload)

	ds := p.deployments(t)
	if len(ds) != 1 {
		t.Fatalf("%d deployments after one push: %+v", len(ds), ds)
	}
	got := p.wait(t, ds[0].ID)
	m := got.Metadata
	if got.Status != gantry.DeploymentLive || got.Target != gantry.TargetProduction || m.Trigger != gantry.TriggerPush ||
		m.CommitHash != sha || !strings.HasPrefix(m.CommitMessage, "New home page") || m.Author == "" || m.Branch != "main" {
		t.Fatalf("deployment %+v", got)
	}
	if code, body := p.site("my-site"); code != 200 || body != "<h1>v2</h1>" {
		t.Fatalf("production serves %d %q", code, body)
	}

	// A wrong signature: 401, nothing queued.
	rec := p.do(request{method: "POST", url: "/api/webhooks/github", body: string(d.Body), headers: map[string]string{
		"X-GitHub-Event": "push", "X-GitHub-Delivery": githubtest.NewDeliveryID(), "X-GitHub-Hook-ID": strconv.FormatInt(d.HookID, 10),
		"X-Hub-Signature-256": githubtest.Sign("not-the-secret", d.Body)}})
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("wrong signature: %d %s", rec.Code, rec.Body.String())
	}
	// The same delivery again: nothing queued.
	if again := p.gh.Redeliver(t, d); again.Status != http.StatusOK || !strings.Contains(again.Answer, ghhook.MsgAlreadyHandled) {
		t.Fatalf("replay: %d %s", again.Status, again.Answer)
	}
	p.hooks.Wait()
	if ds := p.deployments(t); len(ds) != 1 {
		t.Fatalf("%d deployments after a forged and a replayed delivery", len(ds))
	}
}

// TestPushToDeployBranchPreview: a push to another branch builds a preview
// on its own label (<sub>--<slug>--<hash>) and leaves production alone.
func TestPushToDeployBranchPreview(t *testing.T) {
	t.Parallel()
	p := withPushToDeploy(t)
	p.deliver(t, "push", p.gh.PushPayload(t, "alice-gh/site", "main", ""))
	prod := p.wait(t, p.deployments(t)[0].ID)
	if prod.Status != gantry.DeploymentLive {
		t.Fatalf("production %+v", prod)
	}
	p.gh.Push(t, "alice-gh/site", "feature/new-look", "New look", map[string]string{"index.html": "<h1>new look</h1>"})
	p.deliver(t, "push", p.gh.PushPayload(t, "alice-gh/site", "feature/new-look", ""))
	ds := p.deployments(t)
	if len(ds) != 2 || ds[0].ID == prod.ID {
		t.Fatalf("deployments %+v", ds)
	}
	preview := p.wait(t, ds[0].ID)
	label := gantry.PreviewLabel(p.project.ID, "my-site", "feature/new-look", 0)
	if preview.Status != gantry.DeploymentLive || preview.Target != gantry.TargetPreview ||
		preview.Subdomain != label || !strings.HasPrefix(label, "my-site--feature-new-look--") || preview.Metadata.Branch != "feature/new-look" {
		t.Fatalf("preview %+v", preview)
	}
	if code, body := p.site(label); code != 200 || body != "<h1>new look</h1>" {
		t.Fatalf("preview serves %d %q", code, body)
	}
	if code, body := p.site("my-site"); code != 200 || body != "<h1>v1</h1>" {
		t.Fatalf("production serves %d %q", code, body)
	}
	if again := p.wait(t, prod.ID); again.Status != gantry.DeploymentLive {
		t.Fatalf("production after the preview %+v", again)
	}
}

// TestPushToDeployPullRequest: a pull request's preview, its commit status
// (pending, then success linking to the preview) and its one comment,
// edited in place on a new push and when the pull request is closed,
// which removes the preview.
func TestPushToDeployPullRequest(t *testing.T) {
	t.Parallel()
	p := withPushToDeploy(t)
	p.gh.Push(t, "alice-gh/site", "fix", "Fix the title", map[string]string{"index.html": "<h1>fix 1</h1>"})
	pr := githubtest.PullRequest{Number: 7, Action: "opened", Title: "Fix the title", HeadBranch: "fix"}
	opened := p.gh.PullRequestPayload(t, "alice-gh/site", pr)
	sha1 := opened["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	p.deliver(t, "pull_request", opened)

	ds := p.deployments(t)
	if len(ds) != 1 || ds[0].Subdomain != "my-site--pr-7" || ds[0].Metadata.PullRequest != 7 || ds[0].Target != gantry.TargetPreview {
		t.Fatalf("deployments %+v", ds)
	}
	first := p.wait(t, ds[0].ID)
	if first.Status != gantry.DeploymentLive || first.Metadata.Trigger != gantry.TriggerPullRequest {
		t.Fatalf("preview %+v", first)
	}
	if code, body := p.site("my-site--pr-7"); code != 200 || body != "<h1>fix 1</h1>" {
		t.Fatalf("preview serves %d %q", code, body)
	}
	// Finished is called after the deployment is live: wait for GitHub to
	// hear of it.
	var sts []githubtest.Status
	waitFor(t, "the success status", func() bool {
		sts = p.gh.Statuses("alice-gh/site", sha1)
		return len(sts) == 2
	})
	p.hooks.Wait() // the report's comment follows its status
	if sts[0].State != "pending" || sts[1].State != "success" || sts[1].TargetURL != first.URL || first.URL == "" ||
		sts[1].Context != ghhook.StatusContext {
		t.Fatalf("statuses %+v (preview URL %q)", sts, first.URL)
	}
	cs := p.gh.Comments("alice-gh/site", 7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "Live") || !strings.Contains(cs[0].Body, first.URL) {
		t.Fatalf("comments %+v", cs)
	}

	// A second push to the pull request's branch: a new preview, the same
	// comment edited.
	p.gh.Push(t, "alice-gh/site", "fix", "Fix the title again", map[string]string{"index.html": "<h1>fix 2</h1>"})
	pr.Action = "synchronize"
	sync := p.gh.PullRequestPayload(t, "alice-gh/site", pr)
	sha2 := sync["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	p.deliver(t, "pull_request", sync)
	second := p.wait(t, p.deployments(t)[0].ID)
	if second.ID == first.ID || second.Status != gantry.DeploymentLive || second.Metadata.CommitHash != sha2 {
		t.Fatalf("second preview %+v", second)
	}
	if code, body := p.site("my-site--pr-7"); code != 200 || body != "<h1>fix 2</h1>" {
		t.Fatalf("preview serves %d %q", code, body)
	}
	waitFor(t, "the second success status", func() bool {
		sts = p.gh.Statuses("alice-gh/site", sha2)
		return len(sts) == 2 && sts[1].State == "success"
	})
	p.hooks.Wait()
	cs = p.gh.Comments("alice-gh/site", 7)
	if len(cs) != 1 || cs[0].Edits < 2 || !strings.Contains(cs[0].Body, sha2[:7]) || !strings.Contains(cs[0].Body, "Live") {
		t.Fatalf("comments after synchronize %+v", cs)
	}

	// Closed: the preview is gone and the comment says so.
	pr.Action = "closed"
	p.deliver(t, "pull_request", p.gh.PullRequestPayload(t, "alice-gh/site", pr))
	if code, body := p.site("my-site--pr-7"); code == 200 && strings.Contains(body, "fix") {
		t.Fatalf("closed pull request's preview still serves %d %q", code, body)
	}
	cs = p.gh.Comments("alice-gh/site", 7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "Removed") {
		t.Fatalf("comments after close %+v", cs)
	}
	rec := p.do(request{method: "GET", url: "/api/projects/" + p.project.ID + "/previews", headers: bearer(p.token)})
	if previews := dataField[[]gantry.Deployment](t, rec, "previews"); len(previews) != 0 {
		t.Fatalf("previews after close %+v", previews)
	}
	if code, body := p.site("my-site"); code == 200 && strings.Contains(body, "fix") {
		t.Fatalf("production serves the pull request: %q", body)
	}
}

// TestPushToDeployForkApproval: a fork's pull request is not built until
// the owner approves it, then it is built and served.
func TestPushToDeployForkApproval(t *testing.T) {
	t.Parallel()
	p := withPushToDeploy(t)
	p.gh.AddRepo(t, githubtest.Repo{Owner: "bob-gh", Name: "site"}, map[string]string{"index.html": "<h1>v1</h1>"})
	p.gh.Push(t, "bob-gh/site", "idea", "An idea", map[string]string{"index.html": "<h1>bob's idea</h1>"})
	prPayload := p.gh.PullRequestPayload(t, "alice-gh/site", githubtest.PullRequest{
		Number: 3, Action: "opened", Title: "An idea", Author: "bob-gh", HeadRepo: "bob-gh/site", HeadBranch: "idea"})
	head := prPayload["pull_request"].(map[string]any)["head"].(map[string]any)["sha"].(string)
	p.deliver(t, "pull_request", prPayload)
	if ds := p.deployments(t); len(ds) != 0 {
		t.Fatalf("a fork's pull request was built before approval: %+v", ds)
	}
	if code, _ := p.site("my-site--pr-3"); code == 200 {
		t.Fatalf("my-site--pr-3 serves before approval")
	}
	rec := p.do(request{method: "POST", url: "/api/projects/" + p.project.ID + "/pull-requests/3/approve", headers: bearer(p.token),
		body: `{"sha":"` + head + `"}`})
	if rec.Code != http.StatusOK {
		t.Fatalf("approve: %d %s", rec.Code, rec.Body.String())
	}
	ds := p.deployments(t)
	if len(ds) != 1 {
		t.Fatalf("deployments after approval %+v", ds)
	}
	d := p.wait(t, ds[0].ID)
	if d.Status != gantry.DeploymentLive || d.Subdomain != "my-site--pr-3" {
		t.Fatalf("fork preview %+v\n%s", d, p.logs(t, d.ID))
	}
	if code, body := p.site("my-site--pr-3"); code != 200 || body != "<h1>bob's idea</h1>" {
		t.Fatalf("fork preview serves %d %q", code, body)
	}
}

// TestPushToDeploySupersede: a newer push to the production branch stops
// the build of the older one, with a log line naming the newer commit.
func TestPushToDeploySupersede(t *testing.T) {
	t.Parallel()
	p := withPushToDeploy(t)
	p.gh.Push(t, "alice-gh/site", "main", "Slow build", map[string]string{
		"package.json": `{"name":"slow","version":"1.0.0","scripts":{"build":"node -e \"setTimeout(()=>{}, 600000)\""}}`})
	p.deliver(t, "push", p.gh.PushPayload(t, "alice-gh/site", "main", ""))
	old := p.deployments(t)[0]
	waitFor(t, "the slow build to run", func() bool { return strings.Contains(p.logs(t, old.ID), "npm run build") })

	p.gh.Push(t, "alice-gh/site", "main", "Fix the build", map[string]string{
		"package.json": `{"name":"slow","version":"1.0.0"}`, "index.html": "<h1>fixed</h1>"})
	payload := p.gh.PushPayload(t, "alice-gh/site", "main", "")
	sha := payload["after"].(string)
	p.deliver(t, "push", payload)

	stopped := p.wait(t, old.ID)
	want := "Cancelled: superseded by " + sha[:7] + " (Fix the build)"
	if logs := p.logs(t, old.ID); stopped.Status != gantry.DeploymentStopped || !strings.Contains(logs, want) {
		t.Fatalf("superseded build %s, logs:\n%s\nwant %q", stopped.Status, logs, want)
	}
	ds := p.deployments(t)
	if len(ds) != 2 || ds[0].Metadata.CommitHash != sha {
		t.Fatalf("deployments %+v", ds)
	}
	if newer := p.wait(t, ds[0].ID); newer.Status != gantry.DeploymentLive {
		t.Fatalf("newer %+v\n%s", newer, p.logs(t, newer.ID))
	}
	if code, body := p.site("my-site"); code != 200 || body != "<h1>fixed</h1>" {
		t.Fatalf("production serves %d %q", code, body)
	}
}

// TestWebhookReplayFlood mounts issue 24's point 7: one signed push of
// alice-gh/site replayed 5,000 times under fresh X-GitHub-Delivery ids,
// then a burst of distinct signed deliveries of that webhook; another
// project's push still deploys at once, and the replays did nothing.
func TestWebhookReplayFlood(t *testing.T) {
	t.Parallel()
	p := withPushToDeploy(t)
	blogRepo := p.gh.AddRepo(t, githubtest.Repo{Owner: "alice-gh", Name: "blog"}, map[string]string{"index.html": "<h1>blog</h1>"})
	if rec := p.do(request{method: "POST", url: "/api/auth/github/refresh", headers: bearer(p.token)}); rec.Code != http.StatusOK {
		t.Fatalf("refresh: %d %s", rec.Code, rec.Body.String())
	}
	rec := p.do(request{method: "POST", url: "/api/projects", headers: bearer(p.token),
		body: fmt.Sprintf(`{"repositoryId":%d,"name":"Blog"}`, blogRepo.ID)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create blog: %d %s", rec.Code, rec.Body.String())
	}
	blog := dataField[gantry.Project](t, rec, "project")

	d := p.deliver(t, "push", p.gh.PushPayload(t, "alice-gh/site", "main", ""))
	hook := p.gh.Hooks("alice-gh/site")[0]
	send := func(event string, body []byte) int {
		rec := p.do(request{method: "POST", url: "/api/webhooks/github", body: string(body), headers: map[string]string{
			"X-GitHub-Event": event, "X-GitHub-Delivery": githubtest.NewDeliveryID(),
			"X-GitHub-Hook-ID": strconv.FormatInt(hook.ID, 10), "X-Hub-Signature-256": githubtest.Sign(hook.Secret, body)}})
		return rec.Code
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 5000; i += 8 {
				c := send("push", d.Body)
				mu.Lock()
				codes[c]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if codes[http.StatusOK] != 5000 {
		t.Errorf("5,000 replays answered %v, want 200 Already handled to each", codes)
	}
	// Distinct signed deliveries of the same webhook: past its rate, 429.
	limited := 0
	for i := range 200 {
		if send("issues", []byte(fmt.Sprintf(`{"action":"opened","n":%d,"repository":{"id":%d}}`, i, p.githubEnv.site.ID))) == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Errorf("200 deliveries at once were all taken")
	}

	// Another project's push is queued, built and live.
	p.gh.Push(t, "alice-gh/blog", "main", "Blog post", map[string]string{"index.html": "<h1>post</h1>"})
	start := time.Now()
	if ds := p.gh.Deliver(t, "alice-gh/blog", "push", p.gh.PushPayload(t, "alice-gh/blog", "main", "")); len(ds) != 1 ||
		ds[0].Status != http.StatusAccepted {
		t.Fatalf("blog's delivery after the flood: %+v", ds)
	}
	var queued []gantry.Deployment
	for len(queued) == 0 {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("blog's push was not queued %s after its delivery", time.Since(start).Round(time.Second))
		}
		time.Sleep(20 * time.Millisecond)
		rec := p.do(request{method: "GET", url: "/api/deployments?projectId=" + blog.ID, headers: bearer(p.token)})
		queued = dataField[[]gantry.Deployment](t, rec, "deployments")
	}
	if got := p.wait(t, queued[0].ID); got.Status != gantry.DeploymentLive {
		t.Fatalf("blog's deployment %+v", got)
	}
	if code, body := p.site("blog"); code != 200 || body != "<h1>post</h1>" {
		t.Fatalf("blog serves %d %q", code, body)
	}
	p.hooks.Wait()
	if ds := p.deployments(t); len(ds) != 1 {
		t.Fatalf("site has %d deployments after 5,000 replays of one push", len(ds))
	}
}
