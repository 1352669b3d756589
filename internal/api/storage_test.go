package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

// storedDeployment makes a deployment of alice's project through the store,
// as if built, with status and files bytes recorded (and a published
// folder, so a restart finds it).
func storedDeployment(t *testing.T, d *deployEnv, projectID, status string, files int64) *gantry.Deployment {
	t.Helper()
	ctx := context.Background()
	p, err := d.db.FindProject(ctx, d.alice.ID, projectID)
	if err != nil {
		t.Fatal(err)
	}
	dep := &gantry.Deployment{ProjectID: p.ID, UserID: d.alice.ID, Version: "1.0.0", Subdomain: p.Subdomain,
		URL: "http://" + p.Subdomain + ".localhost:8080"}
	if err := d.db.CreateDeployment(ctx, dep); err != nil {
		t.Fatal(err)
	}
	dep.Status = status
	if err := d.db.UpdateDeployment(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if err := d.db.SetDeploymentFiles(ctx, dep.ID, files); err != nil {
		t.Fatal(err)
	}
	dir := d.svc.SiteDir(dep.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>hi</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dep
}

func TestStorageBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	project := d.createProject(t, d.site(t, "site", "first"), "My Site")
	live := storedDeployment(t, d, project, gantry.DeploymentLive, 600<<20)
	old := storedDeployment(t, d, project, gantry.DeploymentStopped, 444<<20)
	if err := d.db.AppendLog(context.Background(), old.ID, &gantry.LogEntry{Level: "info", Type: "deployment", Message: "Build started"}); err != nil {
		t.Fatal(err)
	}

	// The profile's statistics carry the usage and the budget.
	rec := e.do(request{method: "GET", url: "/api/users/stats", headers: bearer(e.token)})
	stats := dataField[gantry.UserStats](t, rec, "stats")
	want := gantry.StorageUsage{Used: 1044<<20 + 13, Budget: 1 << 30, Files: 1044 << 20, Logs: 13, Sites: 600 << 20, Rollbacks: 444 << 20}
	if rec.Code != 200 || stats.Storage != want {
		t.Fatalf("stats: got %d %+v, want storage %+v", rec.Code, stats.Storage, want)
	}
	rec = e.do(request{method: "GET", url: "/api/auth/me", headers: bearer(e.token)})
	if u := dataField[gantry.User](t, rec, "user"); u.Subscription.MaxStorage != 1<<30 {
		t.Fatalf("me: got subscription %+v, want maxStorage 1 GiB", u.Subscription)
	}

	// Over the budget, with a stopped deployment kept only for rollback:
	// its files make room and the deploy goes through.
	rec = e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `","version":"1.0.0"}`})
	if rec.Code != http.StatusCreated {
		t.Fatalf("deploy over budget with a rollback: got %d %s, want 201", rec.Code, rec.Body.String())
	}
	rec = e.do(request{method: "GET", url: "/api/deployments/" + old.ID, headers: bearer(e.token)})
	if dep := dataField[gantry.Deployment](t, rec, "deployment"); dep.PrunedAt == nil || dep.FilesSize != 0 {
		t.Fatalf("the rollback: got pruned at %v, files %d; want pruned", dep.PrunedAt, dep.FilesSize)
	}
	rec = e.do(request{method: "GET", url: "/api/users/stats", headers: bearer(e.token)})
	if got := dataField[gantry.UserStats](t, rec, "stats").Storage.Files; got != 600<<20 {
		t.Fatalf("after making room: files %d, want 600 MiB", got)
	}

	// Live deployments alone over the budget: refused, the project named,
	// nothing queued.
	if err := d.db.SetDeploymentFiles(context.Background(), live.ID, gantry.GiB+gantry.GiB/10); err != nil {
		t.Fatal(err)
	}
	rec = e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
	a := decodeAnswer(t, rec)
	wantMsg := "Your projects use 1.1 GB of your 1 GB storage, all of it in live deployments and logs (My Site 1.1 GB). Stop or delete a project, or clear its logs, then deploy again."
	if rec.Code != http.StatusForbidden || a.Success || a.Message != wantMsg {
		t.Fatalf("deploy over budget: got %d %q, want 403 %q", rec.Code, a.Message, wantMsg)
	}
	rec = e.do(request{method: "GET", url: "/api/deployments", headers: bearer(e.token)})
	if ds := dataField[[]gantry.Deployment](t, rec, "deployments"); len(ds) != 3 {
		t.Fatalf("got %d deployments after the refusal, want 3", len(ds))
	}
}

func TestRestartPrunedDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false)
	project := d.createProject(t, d.site(t, "site", "first"), "My Site")
	var stopped []*gantry.Deployment
	for i := 0; i < gantry.KeepDeployments+1; i++ {
		e.now = e.now.Add(time.Second) // oldest first
		stopped = append(stopped, storedDeployment(t, d, project, gantry.DeploymentStopped, 1<<20))
	}
	if _, err := d.db.PruneDeployments(context.Background(), project, e.now); err != nil {
		t.Fatal(err)
	}
	rec := e.do(request{method: "GET", url: "/api/deployments/" + stopped[0].ID, headers: bearer(e.token)})
	dep := dataField[gantry.Deployment](t, rec, "deployment")
	if dep.PrunedAt == nil || dep.FilesSize != 0 {
		t.Fatalf("oldest of %d stopped: prunedAt %v filesSize %d, want pruned", len(stopped), dep.PrunedAt, dep.FilesSize)
	}
	rec = e.do(request{method: "POST", url: "/api/deployments/hosting/restart/my-site", headers: bearer(e.token),
		body: `{"deploymentId":"` + stopped[0].ID + `"}`})
	a := decodeAnswer(t, rec)
	if rec.Code != http.StatusConflict || a.Message != gantry.MsgPruned {
		t.Fatalf("restart of a pruned deployment: got %d %q, want 409 %q", rec.Code, a.Message, gantry.MsgPruned)
	}
}
