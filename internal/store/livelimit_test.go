package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestGoLiveLiveLimit: the plan's live deployments are counted again
// inside the go-live's transaction. An account whose plan allows 2 and
// that queued four builds while nothing was live (so every queue-time
// check passed) gets two of them live; the others change nothing and are
// refused with the plan's message. Previews count; a redeploy of a live
// project, or a new build of a live preview's label, replaces it and goes
// live at the limit.
func TestGoLiveLiveLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := &gantry.User{FullName: "Mallory", Username: "mallory", Email: "mallory@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: 10, MaxDeployments: 2}}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	a := mustCreateProject(t, db, u.ID, "a")
	b := mustCreateProject(t, db, u.ID, "b")
	c := mustCreateProject(t, db, u.ID, "c")
	for _, p := range []*gantry.Project{a, b, c} {
		if n, err := db.CountLiveAfter(ctx, u.ID, p.ID, ""); err != nil || n != 1 {
			t.Fatalf("before anything is live, %s would make %d live (%v)", p.Name, n, err)
		}
	}
	builds := []*gantry.Deployment{
		mustDeployment(t, db, a, gantry.DeploymentDeploying),
		mustDeployment(t, db, b, gantry.DeploymentDeploying),
		mustDeployment(t, db, c, gantry.DeploymentDeploying),
		mustPreview(t, db, a, "feature"),
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, d := range builds {
		wg.Go(func() { _, errs[i] = db.GoLive(ctx, d.ID, gantry.DeploymentDeploying, gantry.Change{}) })
	}
	wg.Wait()
	live, refused := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			live++
		case gantry.ErrorCode(err) == gantry.EFORBIDDEN:
			refused++
			if want := "Your Free plan allows 2 live deployments (previews count too). Stop or delete one to deploy another."; gantry.ErrorMessage(err) != want {
				t.Errorf("refused: %q", gantry.ErrorMessage(err))
			}
			if d, _ := db.FindDeployment(ctx, "", builds[i].ID); d.Status != gantry.DeploymentDeploying {
				t.Errorf("a refused go-live left its deployment %s", d.Status)
			}
		default:
			t.Fatalf("go live %d: %v", i, err)
		}
	}
	if live != 2 || refused != 2 {
		t.Fatalf("%d went live and %d were refused, want 2 and 2 (plan allows 2)", live, refused)
	}
	ds, err := db.ListDeployments(ctx, u.ID, gantry.DeploymentFilter{Status: gantry.DeploymentLive})
	if err != nil || len(ds) != 2 {
		t.Fatalf("%d live deployments (%v), want 2", len(ds), err)
	}

	// At the limit, what replaces a live deployment still goes live.
	d := ds[0]
	var next *gantry.Deployment
	p, _ := db.FindProject(ctx, "", d.ProjectID)
	label := ""
	if d.IsPreview() {
		next, label = mustPreview(t, db, p, "feature"), d.Subdomain
	} else {
		next = mustDeployment(t, db, p, gantry.DeploymentDeploying)
	}
	if n, err := db.CountLiveAfter(ctx, u.ID, p.ID, label); err != nil || n != 2 {
		t.Fatalf("a redeploy would make %d live (%v), want 2", n, err)
	}
	if _, err := db.GoLive(ctx, next.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		t.Fatalf("a redeploy at the limit: %v", err)
	}
	// A preview of a new branch would be a third.
	if n, err := db.CountLiveAfter(ctx, u.ID, a.ID, gantry.PreviewLabel(a.ID, a.Subdomain, "other", 0)); err != nil || n != 3 {
		t.Fatalf("a new preview would make %d live (%v), want 3", n, err)
	}
}
