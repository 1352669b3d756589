package deploy_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/project"
)

// trigger asks for a deployment as a push would and returns it queued.
func (e *env) trigger(t gantry.DeployTrigger) *gantry.Deployment {
	e.t.Helper()
	if t.Trigger == "" {
		t.Trigger = gantry.TriggerPush
	}
	d, err := e.svc.Trigger(context.Background(), t)
	if err != nil {
		e.t.Fatalf("trigger %+v: %v", t, err)
	}
	return d
}

// live waits for d to end and checks that it is live.
func (e *env) live(d *gantry.Deployment) *gantry.Deployment {
	e.t.Helper()
	got := e.wait(d.ID)
	if got.Status != gantry.DeploymentLive {
		e.t.Fatalf("deployment %s is %s, want live; logs:\n%s", d.ID, got.Status, strings.Join(e.logs(d.ID), "\n"))
	}
	return got
}

func TestTriggerBuildsTheAskedCommit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Pushed", map[string]string{"index.html": "one"})
	first := e.git.Head(t, "ada/pushed", "main")
	e.git.Repo(t, "ada/pushed", "main", "second", map[string]string{"index.html": "two"})

	// The first commit, though the branch moved on: fetched on its own.
	d := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Commit: &gantry.Commit{SHA: first, Message: "initial commit", Author: "Test Author"}}))
	if d.Metadata.CommitHash != first || d.Metadata.Trigger != gantry.TriggerPush || d.Target != gantry.TargetProduction || d.Metadata.Branch != "main" {
		t.Fatalf("deployment %+v metadata %+v", d, d.Metadata)
	}
	if _, body := e.get("pushed", "/"); body != "one" {
		t.Fatalf("production serves %q, want the first commit's", body)
	}
	// No commit: the server looks the branch's head up.
	d2 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerHook}))
	if d2.Metadata.CommitHash != e.git.Head(t, "ada/pushed", "main") || d2.Metadata.CommitMessage != "second" || d2.Metadata.Trigger != gantry.TriggerHook {
		t.Fatalf("head deployment metadata %+v", d2.Metadata)
	}
	if _, body := e.get("pushed", "/"); body != "two" {
		t.Fatalf("production serves %q after the head's deployment", body)
	}
	// A branch that does not exist; auto-deploy off.
	if _, err := e.svc.Trigger(ctx, gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerHook, Branch: "nope"}); gantry.ErrorCode(err) != gantry.ENOTFOUND || gantry.ErrorMessage(err) != "Branch not found" {
		t.Fatalf("missing branch: %v", err)
	}
	off := false
	if _, err := e.projects().UpdateProject(ctx, e.user.ID, p.ID, project.Input{AutoDeploy: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Trigger(ctx, gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPush}); gantry.ErrorCode(err) != gantry.EFORBIDDEN {
		t.Fatalf("auto-deploy off: %v", err)
	}

	// Redeploy builds the same commit again, as a new deployment.
	r, err := e.svc.Redeploy(ctx, e.user.ID, d.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	r = e.live(r)
	if r.ID == d.ID || r.Metadata.CommitHash != first || r.Metadata.Trigger != gantry.TriggerRedeploy || !r.NoCache {
		t.Fatalf("redeploy %+v metadata %+v", r, r.Metadata)
	}
	if _, body := e.get("pushed", "/"); body != "one" {
		t.Fatalf("production serves %q after the redeploy of the first commit", body)
	}
}

func TestPreviews(t *testing.T) {
	e := newEnv(t)
	e.withPlan(10) // production and 5 live previews
	ctx := context.Background()
	p := e.project("Prev", map[string]string{"index.html": "production"})
	prod := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))

	// Variables by scope: a preview sees all and preview, not production.
	vars := []gantry.EnvVar{
		{Key: "A", Value: "all"},
		{Key: "S", Value: "prod-secret", IsSecret: true, Scope: gantry.EnvScopeProduction},
		{Key: "S", Value: "preview-value", Scope: gantry.EnvScopePreview},
	}
	if _, err := e.projects().SetEnv(ctx, e.user.ID, p.ID, vars); err != nil {
		t.Fatal(err)
	}
	if _, err := e.projects().SetEnv(ctx, e.user.ID, p.ID, append(vars, gantry.EnvVar{Key: "S", Value: "x"})); gantry.ErrorCode(err) != gantry.EINVALID {
		t.Fatalf("a name in all and in one scope: %v", err)
	}
	e.git.Repo(t, "ada/prev", "feature/Login", "login page", map[string]string{"index.html": "login"})
	d := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature/Login"}))
	login := gantry.PreviewLabel(p.ID, p.Subdomain, "feature/Login", 0)
	if d.Target != gantry.TargetPreview || d.Subdomain != login || !strings.HasPrefix(login, "prev--feature-login--") ||
		d.URL != "http://"+login+".localhost:8080" {
		t.Fatalf("preview %+v", d)
	}
	keys := map[string]string{}
	for _, v := range d.Environment.Variables {
		keys[v.Key] = v.Value
	}
	if len(keys) != 2 || keys["A"] != "all" || keys["S"] != "preview-value" {
		t.Fatalf("preview built with %+v", d.Environment.Variables)
	}
	if _, body := e.get(login, "/"); body != "login" {
		t.Fatalf("preview label serves %q", body)
	}
	if _, body := e.get("prev", "/"); body != "production" {
		t.Fatalf("production serves %q after a preview", body)
	}
	if got, _ := e.db.FindProject(ctx, e.user.ID, p.ID); got.ActiveDeployment == nil || got.ActiveDeployment.ID != prod.ID || got.Status != gantry.ProjectDeployed {
		t.Fatalf("project after a preview: %+v", got)
	}
	e.deploymentStatus(prod.ID, gantry.DeploymentLive)

	// A pull request's preview; then four more branches: the newest 5 stay.
	pr := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPullRequest, Branch: "feature/Login", PullRequest: 12}))
	if pr.Subdomain != "prev--pr-12" || pr.Metadata.PullRequest != 12 {
		t.Fatalf("pull request preview %+v", pr)
	}
	var branches []*gantry.Deployment
	for i := range 4 {
		b := fmt.Sprintf("b%d", i)
		e.git.Repo(t, "ada/prev", b, "commit "+b, map[string]string{"index.html": b})
		branches = append(branches, e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: b})))
	}
	e.deploymentStatus(d.ID, gantry.DeploymentStopped)
	e.deploymentStatus(pr.ID, gantry.DeploymentLive)
	if code, _ := e.get(login, "/"); code != http.StatusServiceUnavailable {
		t.Fatalf("the sixth newest preview answers %d, want 503", code)
	}
	for i, b := range branches {
		if code, body := e.get(b.Subdomain, "/"); code != 200 || body != fmt.Sprintf("b%d", i) {
			t.Fatalf("preview %s answers %d %q", b.Subdomain, code, body)
		}
	}
	if _, body := e.get("prev", "/"); body != "production" {
		t.Fatalf("production serves %q after six previews", body)
	}
	if code, body := e.get("prev--pr-12", "/"); code != 200 || body != "login" {
		t.Fatalf("the pull request's preview answers %d %q", code, body)
	}
	previews, err := e.svc.Previews(ctx, e.user.ID, p.ID)
	if err != nil || len(previews) != 6 || previews[0].ID != branches[3].ID {
		t.Fatalf("previews: %d %v", len(previews), err)
	}

	// A new commit on a preview's branch replaces its preview.
	e.git.Repo(t, "ada/prev", "b0", "b0 again", map[string]string{"index.html": "b0 again"})
	again := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "b0"}))
	e.deploymentStatus(branches[0].ID, gantry.DeploymentStopped)
	if _, body := e.get(again.Subdomain, "/"); body != "b0 again" {
		t.Fatalf("replaced preview serves %q", body)
	}

	// The routes come back after a restart.
	restored := e.restart()
	for _, sub := range []string{"prev", "prev--b0", "prev--pr-12"} {
		if code, _ := restored(sub); code != 200 {
			t.Fatalf("after a restart %s answers %d", sub, code)
		}
	}
	if code, _ := restored(login); code != http.StatusServiceUnavailable {
		t.Fatalf("after a restart a stopped preview answers %d", code)
	}

	// The pull request closes: its preview goes.
	if err := e.svc.RemovePreviews(ctx, p.ID, 12, ""); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.get("prev--pr-12", "/"); code != http.StatusNotFound {
		t.Fatalf("removed preview answers %d", code)
	}
	if _, err := e.db.FindDeployment(ctx, "", pr.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("removed preview's deployment: %v", err)
	}
	// A preview cannot be promoted.
	if _, err := e.svc.Promote(ctx, e.user.ID, again.ID); gantry.ErrorCode(err) != gantry.ECONFLICT || gantry.ErrorMessage(err) != deploy.MsgPromotePreview {
		t.Fatalf("promote a preview: %v", err)
	}
}

// TestPreviewLabelsDoNotCollide mounts issue 24's point 6: previews of
// two projects whose long subdomains share their first 53 characters, and
// branches of one project whose slugs are equal (or equal a pull
// request's), each keep an address of their own, and closing pull request
// #1 leaves branch pr-1's preview alone.
func TestPreviewLabelsDoNotCollide(t *testing.T) {
	e := newEnv(t)
	e.withPlan(12) // three projects, nine previews and productions live at once
	ctx := context.Background()
	long := strings.Repeat("very long project name ", 3) // 69 characters
	var labels []string
	for _, c := range []struct{ repo, body string }{{"ada/one", "one feature"}, {"ada/two", "two feature"}} {
		url := e.git.Repo(t, c.repo, "main", "initial commit", map[string]string{"index.html": "production"})
		name := long + c.repo
		p, err := e.projects().CreatePublic(ctx, e.user, project.Input{Name: &name,
			Repository: &project.RepositoryInput{URL: url, DefaultBranch: "main"}})
		if err != nil {
			t.Fatal(err)
		}
		e.git.Repo(t, c.repo, "feature", c.body, map[string]string{"index.html": c.body})
		d := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: "feature"}))
		if len(d.Subdomain) > gantry.DNSLabelMaxLen {
			t.Fatalf("label %q is too long", d.Subdomain)
		}
		labels = append(labels, d.Subdomain)
	}
	if labels[0] == labels[1] {
		t.Fatalf("two projects share preview label %q", labels[0])
	}
	for i, want := range []string{"one feature", "two feature"} {
		if code, body := e.get(labels[i], "/"); code != 200 || body != want {
			t.Fatalf("%s answers %d %q, want %q", labels[i], code, body, want)
		}
	}

	// Within one project: branches of one slug, and names the slug cuts
	// down to the same letters.
	p := e.project("Labels", map[string]string{"index.html": "production"})
	seen := map[string]string{}
	preview := func(branch string, pr int) *gantry.Deployment {
		t.Helper()
		body := fmt.Sprintf("%s #%d", branch, pr)
		e.git.Repo(t, "ada/labels", branch, body, map[string]string{"index.html": body})
		d := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Branch: branch, PullRequest: pr}))
		if other, ok := seen[d.Subdomain]; ok {
			t.Fatalf("%s #%d and %s share label %q", branch, pr, other, d.Subdomain)
		}
		seen[d.Subdomain] = body
		return d
	}
	for _, pair := range [][2]string{{"Feature/UPPER_case", "feature-upper-case"}, {"ünïcode-branch", "n-code-branch"}} {
		a, b := preview(pair[0], 0), preview(pair[1], 0)
		for _, d := range []*gantry.Deployment{a, b} {
			if code, body := e.get(d.Subdomain, "/"); code != 200 || body != d.Metadata.Branch+" #0" {
				t.Fatalf("%s (branch %s) answers %d %q", d.Subdomain, d.Metadata.Branch, code, body)
			}
		}
	}
	branch := preview("pr-1", 0)
	pr := preview("pr-1", 1)
	if pr.Subdomain != "labels--pr-1" {
		t.Fatalf("pull request #1's label is %q", pr.Subdomain)
	}
	// Pull request #1 closes: branch pr-1's preview stays, with its files.
	if err := e.svc.RemovePreviews(ctx, p.ID, 1, ""); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.get(pr.Subdomain, "/"); code != http.StatusNotFound {
		t.Fatalf("closed pull request's preview answers %d", code)
	}
	if code, body := e.get(branch.Subdomain, "/"); code != 200 || body != "pr-1 #0" {
		t.Fatalf("branch pr-1's preview answers %d %q after pull request #1 closed", code, body)
	}
	if d, err := e.db.FindDeployment(ctx, "", branch.ID); err != nil || d.Status != gantry.DeploymentLive {
		t.Fatalf("branch pr-1's preview after pull request #1 closed: %v", err)
	}
}

// restart opens a second deploy service over the same database and data,
// as the platform does when it starts again, and returns a getter of its
// edge.
func (e *env) restart() func(sub string) (int, string) {
	e.t.Helper()
	other := *e
	other.table = edge.NewTable()
	other.svc = deploytest.Restarted(e.svc, other.table)
	if err := other.svc.Open(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { other.svc.Close() })
	other.edge = edge.New("localhost", other.table, "http://localhost:8080")
	e.restarted = &other
	return func(sub string) (int, string) { return other.get(sub, "/") }
}

func TestPromote(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Roll", map[string]string{"index.html": "old"})
	var mu sync.Mutex
	var finished []string
	e.svc.Finished = func(_ context.Context, d *gantry.Deployment) {
		mu.Lock()
		defer mu.Unlock()
		finished = append(finished, d.ID+" "+d.Status)
	}
	d1 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))
	e.git.Repo(t, "ada/roll", "main", "new", map[string]string{"index.html": "new"})
	d2 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))
	e.deploymentStatus(d1.ID, gantry.DeploymentStopped)
	count := func() int {
		ds, err := e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{ProjectID: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	before := count()
	for i, want := range []struct {
		d    *gantry.Deployment
		body string
	}{{d1, "old"}, {d2, "new"}, {d1, "old"}} {
		start := time.Now()
		got, err := e.svc.Promote(ctx, e.user.ID, want.d.ID)
		if err != nil {
			t.Fatalf("promote %d: %v", i, err)
		}
		took := time.Since(start)
		if _, body := e.get("roll", "/"); body != want.body {
			t.Fatalf("promote %d: production serves %q, want %q", i, body, want.body)
		}
		if got.Status != gantry.DeploymentLive || got.PromotedAt == nil {
			t.Fatalf("promoted %+v", got)
		}
		t.Logf("promote %d took %v", i, took)
	}
	if n := count(); n != before {
		t.Fatalf("promote made deployments: %d, want %d", n, before)
	}
	e.deploymentStatus(d2.ID, gantry.DeploymentStopped)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(finished, []string{d1.ID + " live", d2.ID + " live"}) {
		t.Fatalf("Finished saw %v", finished)
	}
	// Another user's deployment is not found.
	if _, err := e.svc.Promote(ctx, "000000000000000000000000", d1.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("promote of another user's deployment: %v", err)
	}
}

func TestSupersede(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	slow := map[string]string{
		"package.json": `{"name":"slow","version":"1.0.0","scripts":{"build":"node -e \"setTimeout(()=>{}, 600000)\""}}`,
	}
	p := e.project("Busy", slow)
	var mu sync.Mutex
	var finished []string
	e.svc.Finished = func(_ context.Context, d *gantry.Deployment) {
		mu.Lock()
		defer mu.Unlock()
		finished = append(finished, d.ID+" "+d.Status)
	}
	running := e.trigger(gantry.DeployTrigger{ProjectID: p.ID})
	e.waitLog(running.ID, "npm run build")
	// The one worker is busy: the next one waits in the queue.
	q := e.project("Queued", map[string]string{"index.html": "q1"})
	queued := e.trigger(gantry.DeployTrigger{ProjectID: q.ID})

	// Newer commits of both branches.
	e.git.Repo(t, "ada/busy", "main", "fix the build\n\nlonger text", map[string]string{
		"package.json": `{"name":"slow","version":"1.0.0"}`, "index.html": "fixed"})
	newer := e.trigger(gantry.DeployTrigger{ProjectID: p.ID})
	e.git.Repo(t, "ada/queued", "main", "q2", map[string]string{"index.html": "q2"})
	// A push names its commit, with its message (as GitHub's webhook does).
	newerQ := e.trigger(gantry.DeployTrigger{ProjectID: q.ID,
		Commit: &gantry.Commit{SHA: e.git.Head(t, "ada/queued", "main"), Message: "q2\n\nmore", Author: "Test Author"}})

	for _, c := range []struct{ old, newer *gantry.Deployment }{{running, newer}, {queued, newerQ}} {
		got := e.wait(c.old.ID)
		// The newer commit was looked up with ls-remote: its message is
		// known once it is built, so the line names it by its hash.
		want := fmt.Sprintf("warning: Cancelled: superseded by %s", c.newer.Metadata.CommitHash[:7])
		if m := c.newer.Metadata.CommitMessage; m != "" {
			want += " (" + strings.SplitN(m, "\n", 2)[0] + ")"
		}
		logs := e.logs(c.old.ID)
		if got.Status != gantry.DeploymentStopped || !slices.Contains(logs, want) {
			t.Fatalf("superseded %s: %s, logs:\n%s\nwant %q", c.old.ID, got.Status, strings.Join(logs, "\n"), want)
		}
		e.live(c.newer)
	}
	if _, body := e.get("busy", "/"); body != "fixed" {
		t.Fatalf("busy serves %q", body)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{running.ID, queued.ID} {
		if !slices.Contains(finished, id+" stopped") {
			t.Fatalf("Finished saw %v, not %s stopped", finished, id)
		}
	}
	_ = ctx
}

func TestCommitWatcher(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Watched", map[string]string{"index.html": "one"})
	on := true
	if _, err := e.projects().UpdateProject(ctx, e.user.ID, p.ID, project.Input{WatchCommits: &on}); err != nil {
		t.Fatal(err)
	}
	// A previous check saw the first commit.
	if err := e.db.FinishWatch(ctx, p.ID, e.git.Head(t, "ada/watched", "main"), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	e.svc.Close() // the stack's own service runs no watcher
	svc := deploytest.Restarted(e.svc, e.table)
	svc.WatchInterval, svc.Branches = 100*time.Millisecond, e.hosts.Git
	if err := svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	e.svc = svc

	e.git.Repo(t, "ada/watched", "main", "second", map[string]string{"index.html": "two"})
	head := e.git.Head(t, "ada/watched", "main")
	var ds []*gantry.Deployment
	for deadline := time.Now().Add(time.Minute); len(ds) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watcher deployed nothing")
		}
		var err error
		if ds, err = e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{ProjectID: p.ID}); err != nil {
			t.Fatal(err)
		}
	}
	d := e.live(ds[0])
	if d.Metadata.CommitHash != head || d.Metadata.Trigger != gantry.TriggerPush || d.Metadata.CommitMessage != "second" {
		t.Fatalf("watched deployment metadata %+v", d.Metadata)
	}
	if _, body := e.get("watched", "/"); body != "two" {
		t.Fatalf("production serves %q", body)
	}
	// Not twice: more checks see the same head.
	time.Sleep(time.Second)
	if ds, _ := e.db.ListDeployments(ctx, e.user.ID, gantry.DeploymentFilter{ProjectID: p.ID}); len(ds) != 1 {
		t.Fatalf("the watcher made %d deployments of one commit", len(ds))
	}
}

// TestForkPreviewGetsOnlyPreviewVariables: the build of a fork's pull
// request gets the variables scoped to preview, not those of scope all
// (which production has too), nor production's (issue 24, point 8).
func TestForkPreviewGetsOnlyPreviewVariables(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Forked", map[string]string{"index.html": "production"})
	vars := []gantry.EnvVar{
		{Key: "API_KEY", Value: "shared-secret", IsSecret: true}, // scope all, the default
		{Key: "DB_URL", Value: "prod-db", IsSecret: true, Scope: gantry.EnvScopeProduction},
		{Key: "PREVIEW_API", Value: "sandbox-api", Scope: gantry.EnvScopePreview},
	}
	if _, err := e.projects().SetEnv(ctx, e.user.ID, p.ID, vars); err != nil {
		t.Fatal(err)
	}
	e.git.Repo(t, "ada/forked", "idea", "an idea", map[string]string{"index.html": "idea"})
	keys := func(d *gantry.Deployment) []string {
		var out []string
		for _, v := range d.Environment.Variables {
			out = append(out, v.Key)
		}
		slices.Sort(out)
		return out
	}
	fork := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPullRequest, Branch: "idea",
		PullRequest: 7, Fork: true}))
	if got := keys(fork); !slices.Equal(got, []string{"PREVIEW_API"}) {
		t.Fatalf("a fork's build got %v, want only PREVIEW_API", got)
	}
	// A redeploy of it is still a fork's build.
	again, err := e.svc.Redeploy(ctx, e.user.ID, fork.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(e.live(again)); !slices.Equal(got, []string{"PREVIEW_API"}) {
		t.Fatalf("a redeploy of a fork's build got %v", got)
	}
	// The same repository's own pull request gets all and preview.
	own := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPullRequest, Branch: "idea", PullRequest: 8}))
	if got := keys(own); !slices.Equal(got, []string{"API_KEY", "PREVIEW_API"}) {
		t.Fatalf("an own pull request's build got %v", got)
	}
}
