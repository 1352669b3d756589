package deploy_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
)

// TestParallelDeploysKeepToThePlan: an account whose plan allows one live
// deployment queues deploys of two projects while neither is live (both
// pass the check at queue time). The second to finish is refused at
// go-live: it ends failed with the plan's message, and only one site is
// live.
func TestParallelDeploysKeepToThePlan(t *testing.T) {
	e := newEnv(t)
	e.withPlan(1)
	ctx := context.Background()
	a := e.project("One", map[string]string{"index.html": "one"})
	b := e.project("Two", map[string]string{"index.html": "two"})
	da, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	db, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := []*gantry.Deployment{e.wait(da.ID), e.wait(db.ID)}
	live := 0
	want := gantry.ErrorMessage(gantry.ErrLiveLimit(e.user.Subscription))
	for _, d := range got {
		switch d.Status {
		case gantry.DeploymentLive:
			live++
		case gantry.DeploymentFailed:
			if d.Error != want {
				t.Errorf("refused deployment's error: %q, want %q", d.Error, want)
			}
			if code, _ := e.get(d.Subdomain, "/"); code == 200 {
				t.Errorf("the refused deployment's site answers %d", code)
			}
		default:
			t.Fatalf("deployment ended %s", d.Status)
		}
	}
	if live != 1 {
		t.Fatalf("%d deployments live, plan allows 1", live)
	}
	// Another deploy of the refused project is refused when it is queued.
	refused := a
	if got[0].Status == gantry.DeploymentLive {
		refused = b
	}
	if _, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: refused.ID}); gantry.ErrorCode(err) != gantry.EFORBIDDEN || gantry.ErrorMessage(err) != want {
		t.Fatalf("deploy over the plan: %v", err)
	}
}

// TestPromoteTwiceAtOnce: two promotes of the same stopped deployment at
// once: one brings it back, the other is 409 (MsgPromoteLive) and changes
// nothing (one "Promoted" line); a promote of the live deployment is 409
// as well.
func TestPromoteTwiceAtOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := e.project("Twice", map[string]string{"index.html": "old"})
	d1 := e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))
	e.git.Repo(t, "ada/twice", "main", "new", map[string]string{"index.html": "new"})
	e.live(e.trigger(gantry.DeployTrigger{ProjectID: p.ID}))
	e.deploymentStatus(d1.ID, gantry.DeploymentStopped)
	for round := range 3 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { _, errs[i] = e.svc.Promote(ctx, e.user.ID, d1.ID) })
		}
		wg.Wait()
		ok, conflict := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case gantry.ErrorCode(err) == gantry.ECONFLICT && gantry.ErrorMessage(err) == deploy.MsgPromoteLive:
				conflict++
			default:
				t.Fatalf("round %d: promote: %v", round, err)
			}
		}
		if ok != 1 || conflict != 1 {
			t.Fatalf("round %d: %d promotes succeeded and %d were refused, want 1 and 1", round, ok, conflict)
		}
		if got := strings.Count(strings.Join(e.logs(d1.ID), "\n"), "Promoted to production"); got != round+1 {
			t.Fatalf("round %d: %d promotion lines, want %d", round, got, round+1)
		}
		if _, body := e.get("twice", "/"); body != "old" {
			t.Fatalf("round %d: production serves %q", round, body)
		}
		// Once more, after: still 409.
		if _, err := e.svc.Promote(ctx, e.user.ID, d1.ID); gantry.ErrorCode(err) != gantry.ECONFLICT {
			t.Fatalf("promote of a live deployment: %v", err)
		}
		// Stop it for the next round (the other one stays stopped).
		if _, err := e.svc.Stop(ctx, e.user.ID, "twice", d1.ID); err != nil {
			t.Fatal(err)
		}
	}
}
