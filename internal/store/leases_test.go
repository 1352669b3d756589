package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func isTransitionError(err error) bool {
	var te *gantry.TransitionError
	return errors.As(err, &te)
}

// Builds under leases (SQLite here, PostgreSQL by the database's clock in
// make test-pg): a claim names its replica and counts the attempt; only
// the holder of that attempt renews; a lapsed build is listed, requeued
// once with its line, and claimed again as attempt 2; from then on every
// write of attempt 1 (SaveBuild, GoLive, FailDeployment) is refused — the
// replica that lost the build can never make it live — while attempt 2's
// are applied.
func TestBuildLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	leases := db.BuildLeases()
	u := mustCreateUser(t, db, "ada")
	p := mustCreateProject(t, db, u.ID, "site")
	d := mustCreateDeployment(t, db, p)

	a, err := db.ClaimDeployment(ctx, gantry.BuildClaim{Owner: "node-a", Lease: 700 * time.Millisecond})
	if err != nil || a.ID != d.ID || a.ClaimedBy != "node-a" || a.Attempt != 1 {
		t.Fatalf("claim: %+v, %v; want node-a's attempt 1", a, err)
	}
	if ok, _ := leases.Renew(ctx, d.ID, "node-b", 1, time.Minute); ok {
		t.Fatal("node-b renewed node-a's build")
	}
	if ok, _ := leases.Renew(ctx, d.ID, "node-a", 2, time.Minute); ok {
		t.Fatal("a renewal of an attempt that does not exist")
	}
	if ok, err := leases.Renew(ctx, d.ID, "node-a", 1, 700*time.Millisecond); !ok || err != nil {
		t.Fatalf("node-a's renewal: %v %v", ok, err)
	}
	if held, _ := leases.Held(ctx, "node-a"); len(held) != 1 {
		t.Fatalf("node-a holds %d builds, want 1", len(held))
	}
	if lapsed, _ := leases.Lapsed(ctx); len(lapsed) != 0 {
		t.Fatalf("%d lapsed within the lease", len(lapsed))
	}
	time.Sleep(time.Second) // node-a stops renewing
	lapsed, err := leases.Lapsed(ctx)
	if err != nil || len(lapsed) != 1 || lapsed[0].Attempt != 1 {
		t.Fatalf("lapsed: %v, %v", lapsed, err)
	}
	line := &gantry.LogEntry{Level: gantry.LevelWarning, Type: gantry.LogDeployment, Message: "Build restarted: the server building it stopped (attempt 2)"}
	if _, err := leases.Requeue(ctx, d.ID, gantry.Change{Attempt: 1, Line: line}); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Requeue(ctx, d.ID, gantry.Change{Attempt: 1}); !isTransitionError(err) {
		t.Fatalf("a second requeue: %v", err)
	}
	b, err := db.ClaimDeployment(ctx, gantry.BuildClaim{Owner: "node-b", Lease: time.Minute})
	if err != nil || b.ID != d.ID || b.Attempt != 2 || b.ClaimedBy != "node-b" {
		t.Fatalf("claim again: %+v, %v; want node-b's attempt 2", b, err)
	}
	logs, _ := db.Logs(ctx, d.ID, 0, 0)
	if len(logs) == 0 || logs[len(logs)-1].Message != line.Message {
		t.Fatalf("the requeue's line is missing: %+v", logs)
	}

	// node-a comes back: all its writes are fenced off.
	old := *b
	old.Attempt, old.Status = 1, gantry.DeploymentDeploying
	if err := db.SaveBuild(ctx, &old, gantry.DeploymentBuilding); !isTransitionError(err) {
		t.Fatalf("attempt 1's SaveBuild: %v", err)
	}
	b.Status = gantry.DeploymentDeploying
	if err := db.SaveBuild(ctx, b, gantry.DeploymentBuilding); err != nil {
		t.Fatalf("attempt 2's SaveBuild: %v", err)
	}
	if _, err := db.GoLive(ctx, d.ID, gantry.DeploymentDeploying, gantry.Change{Attempt: 1}); !isTransitionError(err) {
		t.Fatalf("attempt 1's GoLive: %v", err)
	}
	if _, err := db.FailDeployment(ctx, d.ID, []string{gantry.DeploymentDeploying}, "lost", gantry.Change{Attempt: 1}); !isTransitionError(err) {
		t.Fatalf("attempt 1's FailDeployment: %v", err)
	}
	if tr, err := db.GoLive(ctx, d.ID, gantry.DeploymentDeploying, gantry.Change{Attempt: 2}); err != nil || tr.Deployment.Status != gantry.DeploymentLive {
		t.Fatalf("attempt 2's GoLive: %+v, %v", tr, err)
	}
	if held, _ := leases.Held(ctx, "node-b"); len(held) != 0 {
		t.Fatalf("a live build is still held: %d", len(held))
	}
}
