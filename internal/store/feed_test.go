package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// seqsOf returns the seqs of changes.
func seqsOf(cs []gantry.RouteChange) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.Seq)
	}
	return out
}

// The route feed (SQLite here, PostgreSQL in make test-pg): a go-live, a
// stop and a preview's go-live each stamp the next route seq on what they
// moved; the feed read after a seq has each route as it is now, in seq
// order; a deleted project leaves its names as removals.
func TestRouteFeed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	feed := db.Feed()
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	p := mustCreateProject(t, db, u.ID, "site")
	if cs, err := feed.Routes(ctx, 0); err != nil || len(cs) != 0 {
		t.Fatalf("feed before any route moved: %v, %v", cs, err)
	}
	a := mustDeployment(t, db, p, gantry.DeploymentDeploying)
	if _, err := db.GoLive(ctx, a.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	cs, err := feed.Routes(ctx, 0)
	if err != nil || len(cs) != 1 || cs[0].Seq != 1 || cs[0].Route.Active == nil || cs[0].Route.Active.ID != a.ID ||
		cs[0].Route.Subdomain != "site" || cs[0].Route.Version != 1 {
		t.Fatalf("after go-live: %+v, %v", cs, err)
	}
	if _, err := db.StopDeployment(ctx, a.ID, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	cs, err = feed.Routes(ctx, 1)
	if err != nil || len(cs) != 1 || cs[0].Seq != 2 || cs[0].Route.Active.Status != gantry.DeploymentStopped || cs[0].Route.Version != 2 {
		t.Fatalf("after stop: %+v, %v", cs, err)
	}
	pr := &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Version: "1.0.1", Subdomain: "fix--site",
		Target: gantry.TargetPreview}
	if err := db.CreateDeployment(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `UPDATE deployments SET status = ? WHERE id = ?`, gantry.DeploymentDeploying, pr.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GoLive(ctx, pr.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	cs, err = feed.Routes(ctx, 2)
	if err != nil || len(cs) != 1 || cs[0].Seq != 3 || !cs[0].Route.Preview || cs[0].Route.Subdomain != "fix--site" ||
		cs[0].Route.Active == nil || cs[0].Route.Active.ID != pr.ID {
		t.Fatalf("after the preview's go-live: %+v, %v", cs, err)
	}
	if cs, _ := feed.Routes(ctx, 0); len(cs) != 2 || cs[0].Seq != 2 || cs[1].Seq != 3 {
		t.Fatalf("whole feed: seqs %v, want [2 3] (each route once, as it is now)", seqsOf(cs))
	}
	if err := db.DeleteProject(ctx, u.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	cs, err = feed.Routes(ctx, 3)
	if err != nil || len(cs) != 2 {
		t.Fatalf("after the delete: %+v, %v", cs, err)
	}
	got := map[string]bool{}
	for _, c := range cs {
		if !c.Removed || c.Seq != 4 || c.Route.ProjectID != p.ID {
			t.Fatalf("after the delete: %+v", c)
		}
		got[c.Route.Subdomain] = c.Route.Preview
	}
	if pv, ok := got["site"]; !ok || pv {
		t.Fatalf("removals %v: want site (not a preview)", got)
	}
	if pv, ok := got["fix--site"]; !ok || !pv {
		t.Fatalf("removals %v: want fix--site (a preview)", got)
	}
	if err := db.DeleteProject(ctx, u.ID, p.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("deleting it again: %v, want ENOTFOUND", err)
	}
}

// SCALING.md §9 A1: two transitions whose commits interleave never let a
// poller skip a seq. The first takes seq 1 and holds its transaction open;
// the second (another project) asks for seq 2 meanwhile. Were the numbers
// handed out without waiting (a SEQUENCE), the second would commit first,
// a poller would read 2 and move past 1 before 1 became visible.
func TestRouteSeqInterleaved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	p1 := mustCreateProject(t, db, u.ID, "one")
	p2 := mustCreateProject(t, db, u.ID, "two")
	end1, err := db.StampRoutes(ctx, p1.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { end1(false) }) // after a failure: the database closes
	second := make(chan error, 1)
	go func() {
		end2, err := db.StampRoutes(ctx, p2.ID)
		if err == nil {
			err = end2(true)
		}
		second <- err
	}()
	var last int64
	var seen []int64
	poll := func() {
		cs, err := db.Feed().Routes(ctx, last)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			seen = append(seen, c.Seq)
			last = c.Seq
		}
	}
	deadline := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(deadline) {
		poll()
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-second:
		t.Fatalf("the second transition committed (%v) while the first held seq 1", err)
	default:
	}
	if err := end1(true); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	poll()
	if len(seen) != 2 || seen[0] != 1 || seen[1] != 2 {
		t.Fatalf("the poller saw seqs %v, want [1 2]", seen)
	}
}
