package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// mustPreview inserts a deploying preview of p on branch's label.
func mustPreview(tb testing.TB, db *store.DB, p *gantry.Project, branch string) *gantry.Deployment {
	tb.Helper()
	label := gantry.PreviewLabel(p.ID, p.Subdomain, branch, 0)
	d := &gantry.Deployment{ProjectID: p.ID, UserID: p.UserID, Version: "1.0.0", Subdomain: label, Target: gantry.TargetPreview,
		URL: "http://" + label + ".localhost:8080", Status: gantry.DeploymentDeploying,
		Metadata: gantry.DeploymentMetadata{Branch: branch}}
	if err := db.CreateDeployment(context.Background(), d); err != nil {
		tb.Fatalf("create preview: %v", err)
	}
	return d
}

func TestPreviewTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	p := mustCreateProject(t, db, u.ID, "site")
	prod := mustLive(t, db, p)

	// A preview goes live on its label: production is left alone.
	a := mustPreview(t, db, p, "feature")
	tr, err := db.GoLive(ctx, a.ID, gantry.DeploymentDeploying, gantry.Change{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Route != nil || len(tr.Replaced) != 0 || len(tr.Previews) != 1 || tr.Previews[0].Subdomain != "site--feature" ||
		!tr.Previews[0].Preview || tr.Previews[0].Version != 1 || tr.Previews[0].Active.ID != a.ID {
		t.Fatalf("preview go-live %+v", tr)
	}
	got, _ := db.FindProject(ctx, "", p.ID)
	if got.ActiveDeployment.ID != prod.ID || got.Status != gantry.ProjectDeployed {
		t.Fatalf("project after a preview: %+v", got)
	}
	if d, _ := db.FindDeployment(ctx, "", prod.ID); d.Status != gantry.DeploymentLive {
		t.Fatalf("production is %s after a preview", d.Status)
	}
	// The next preview of the branch replaces it; the label's version grows.
	b := mustPreview(t, db, p, "feature")
	if tr, err = db.GoLive(ctx, b.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	if len(tr.Replaced) != 1 || tr.Replaced[0] != a.ID || len(tr.Previews) != 1 || tr.Previews[0].Version != 2 || tr.Previews[0].Active.ID != b.ID {
		t.Fatalf("second preview %+v", tr)
	}
	// Five more branches: the oldest live preview is stopped and its label
	// answers the stopped page (a route of its own, one version more).
	for i := range 5 {
		d := mustPreview(t, db, p, fmt.Sprintf("b%d", i))
		if tr, err = db.GoLive(ctx, d.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(tr.Replaced) != 1 || tr.Replaced[0] != b.ID || len(tr.Previews) != 2 ||
		tr.Previews[0].Subdomain != "site--feature" || tr.Previews[0].Version != 3 || tr.Previews[0].Active.Status != gantry.DeploymentStopped {
		t.Fatalf("sixth preview %+v", tr)
	}
	live, err := db.ListDeployments(ctx, u.ID, gantry.DeploymentFilter{ProjectID: p.ID, Target: gantry.TargetPreview, Status: gantry.DeploymentLive})
	if err != nil || len(live) != gantry.MaxLivePreviews {
		t.Fatalf("%d live previews (%v)", len(live), err)
	}
	// Restart lists every label that serves a deployment.
	routes, err := db.ListRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, r := range routes {
		if r.Preview {
			labels[r.Subdomain] = r.Active.Status
		}
	}
	if len(labels) != 6 || labels["site--feature"] != gantry.DeploymentStopped || labels["site--b4"] != gantry.DeploymentLive {
		t.Fatalf("preview routes %v", labels)
	}
	// Deleting a preview detaches its label.
	if tr, err = db.DeleteDeployment(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if len(tr.Previews) != 1 || tr.Previews[0].Active != nil || tr.Previews[0].Version != 4 {
		t.Fatalf("delete of a preview %+v", tr)
	}
	// Promote records promotedAt.
	old := mustLive(t, db, p)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if tr, err = db.GoLive(ctx, prod.ID, gantry.DeploymentStopped, gantry.Change{At: at, Promote: true}); err != nil {
		t.Fatal(err)
	}
	if tr.Deployment.PromotedAt == nil || !tr.Deployment.PromotedAt.Equal(at) || len(tr.Replaced) != 1 || tr.Replaced[0] != old.ID {
		t.Fatalf("promote %+v", tr)
	}
}

func TestWatchClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	p := mustCreateProject(t, db, u.ID, "site")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := db.ClaimWatch(ctx, now, time.Minute); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("claim with watching off: %v", err)
	}
	p.WatchCommits = true
	if err := db.UpdateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	w, err := db.ClaimWatch(ctx, now, time.Minute)
	if err != nil || w.ProjectID != p.ID || w.Head != "" {
		t.Fatalf("claim: %+v %v", w, err)
	}
	// Claimed: nobody else gets it until the lease ends.
	if _, err := db.ClaimWatch(ctx, now.Add(time.Second), time.Minute); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("second claim: %v", err)
	}
	if err := db.FinishWatch(ctx, p.ID, "abc", now.Add(2*time.Minute), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimWatch(ctx, now.Add(time.Minute), time.Minute); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("claim before the next check: %v", err)
	}
	w, err = db.ClaimWatch(ctx, now.Add(3*time.Minute), time.Minute)
	if err != nil || w.Head != "abc" || w.Backoff != 2*time.Minute {
		t.Fatalf("claim after the next check: %+v %v", w, err)
	}
	// Auto-deploy off: not watched.
	p.AutoDeploy = false
	if err := db.UpdateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimWatch(ctx, now.Add(time.Hour), time.Minute); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("claim with auto-deploy off: %v", err)
	}
}

// TestPreviewLabelOfAnotherProject: a preview whose label another
// project's preview holds cannot go live and leaves that route alone
// (issue 24, point 6).
func TestPreviewLabelOfAnotherProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	mallory := storetest.MustCreateUser(t, db, "mallory", "Mallory")
	p := mustCreateProject(t, db, u.ID, "site")
	q := mustCreateProject(t, db, mallory.ID, "other")
	a := mustPreview(t, db, p, "feature")
	if _, err := db.GoLive(ctx, a.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	// q's preview on the same label, as a long label cut to the same text
	// would be.
	b := &gantry.Deployment{ProjectID: q.ID, UserID: q.UserID, Version: "1.0.0", Subdomain: a.Subdomain, Target: gantry.TargetPreview,
		URL: a.URL, Status: gantry.DeploymentDeploying, Metadata: gantry.DeploymentMetadata{Branch: "feature"}}
	if err := db.CreateDeployment(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GoLive(ctx, b.ID, gantry.DeploymentDeploying, gantry.Change{}); gantry.ErrorCode(err) != gantry.ECONFLICT ||
		gantry.ErrorMessage(err) != store.MsgPreviewLabelTaken {
		t.Fatalf("go live on another project's label: %v", err)
	}
	routes, err := db.ListRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.Subdomain == a.Subdomain && (r.ProjectID != p.ID || r.Active == nil || r.Active.ID != a.ID || r.Active.Status != gantry.DeploymentLive) {
			t.Fatalf("label %s now routes %+v", a.Subdomain, r)
		}
	}
	if d, _ := db.FindDeployment(ctx, "", b.ID); d.Status != gantry.DeploymentDeploying {
		t.Fatalf("the refused preview is %s", d.Status)
	}
}
