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

// mustBuilt creates a deployment of p that ended with status and files
// bytes kept on disk (a server app when app is set).
func mustBuilt(tb testing.TB, db *store.DB, p *gantry.Project, status string, files int64, app bool) *gantry.Deployment {
	tb.Helper()
	ctx := context.Background()
	d := mustCreateDeployment(tb, db, p)
	d.Status = status
	if app {
		d.BuildInfo.StartCommand = "npm start"
	}
	if err := db.UpdateDeployment(ctx, d); err != nil {
		tb.Fatal(err)
	}
	if err := db.SetDeploymentFiles(ctx, d.ID, files); err != nil {
		tb.Fatal(err)
	}
	d.FilesSize = files
	return d
}

func mustUsage(t *testing.T, db *store.DB, userID string) gantry.StorageUsage {
	t.Helper()
	u, err := db.StorageUsage(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return *u
}

func TestStorageUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	alice, bob := mustCreateUser(t, db, "alice"), mustCreateUser(t, db, "bob")
	if got := mustUsage(t, db, alice.ID); got != (gantry.StorageUsage{Budget: gantry.GiB}) {
		t.Fatalf("new account: got %+v, want nothing used of 1 GiB", got)
	}
	if alice.Subscription.MaxStorage != gantry.GiB {
		t.Fatalf("free plan budget: got %d, want %d", alice.Subscription.MaxStorage, gantry.GiB)
	}

	site := mustCreateProject(t, db, alice.ID, "site")
	blog := mustCreateProject(t, db, alice.ID, "blog")
	d1 := mustBuilt(t, db, site, gantry.DeploymentLive, 300<<20, false)
	mustBuilt(t, db, site, gantry.DeploymentStopped, 200<<20, false)
	mustBuilt(t, db, blog, gantry.DeploymentLive, 50<<20, true)
	mustBuilt(t, db, mustCreateProject(t, db, bob.ID, "bobs"), gantry.DeploymentLive, 999<<20, false)
	for _, msg := range []string{"Build started", "héllo ✓"} { // 13 + 10 bytes
		if err := db.AppendLog(ctx, d1.ID, &gantry.LogEntry{Level: gantry.LevelInfo, Type: gantry.LogDeployment, Message: msg}); err != nil {
			t.Fatal(err)
		}
	}
	want := gantry.StorageUsage{Used: 550<<20 + 23, Budget: gantry.GiB, Files: 550 << 20, Logs: 23}
	if got := mustUsage(t, db, alice.ID); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	mustBuilt(t, db, blog, gantry.DeploymentFailed, 0, true) // keeps nothing
	// The profile's statistics split the files: live sites, live apps and
	// what is kept for rollback.
	want.Sites, want.Apps, want.Rollbacks = 300<<20, 50<<20, 200<<20
	stats, err := db.UserStats(ctx, alice.ID, t0)
	if err != nil || stats.Storage != want {
		t.Fatalf("stats storage: got %+v, %v; want %+v", stats.Storage, err, want)
	}
	got, _ := db.FindDeployment(ctx, alice.ID, d1.ID)
	if got.FilesSize != 300<<20 || got.LogSize != 23 || got.PrunedAt != nil {
		t.Fatalf("deployment: got files %d logs %d pruned %v, want 300 MiB, 23, nil", got.FilesSize, got.LogSize, got.PrunedAt)
	}

	// Runtime entries count, trimming and clearing give their bytes back.
	for i := 0; i < 5; i++ {
		if err := db.AppendLog(ctx, d1.ID, &gantry.LogEntry{Level: gantry.LevelInfo, Type: gantry.LogRuntime, Message: "0123456789"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustUsage(t, db, alice.ID).Logs; got != 73 {
		t.Fatalf("after 5 runtime lines: got %d log bytes, want 73", got)
	}
	if _, err := db.TrimRuntimeLogs(ctx, d1.ID, 2); err != nil {
		t.Fatal(err)
	}
	if got := mustUsage(t, db, alice.ID).Logs; got != 43 {
		t.Fatalf("after trimming to 2 runtime lines: got %d log bytes, want 43", got)
	}
	if err := db.ClearLogs(ctx, d1.ID); err != nil {
		t.Fatal(err)
	}
	if got := mustUsage(t, db, alice.ID).Logs; got != 0 {
		t.Fatalf("after clearing: got %d log bytes, want 0", got)
	}

	// Deleting a deployment or a project frees its share.
	if _, err := db.DeleteDeployment(ctx, d1.ID); err != nil {
		t.Fatal(err)
	}
	if got := mustUsage(t, db, alice.ID).Used; got != 250<<20 {
		t.Fatalf("after deleting: got %d, want 250 MiB", got)
	}
	if err := db.DeleteProject(ctx, alice.ID, blog.ID); err != nil {
		t.Fatal(err)
	}
	if got := mustUsage(t, db, alice.ID).Used; got != 200<<20 {
		t.Fatalf("after deleting a project: got %d, want 200 MiB", got)
	}
	if got := mustUsage(t, db, bob.ID); got.Used != 999<<20 {
		t.Fatalf("bob: got %+v, want 999 MiB of his own", got)
	}
	if _, err := db.StorageUsage(ctx, "nobody"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("missing user: got %v, want not found", err)
	}
}

func TestStorageBudgetFollowsPlan(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpenDB(t)
	u := newUser("carol")
	u.Subscription = gantry.Subscription{Plan: gantry.PlanPro, MaxProjects: 10, MaxDeployments: 10}
	if err := db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindUserByID(context.Background(), u.ID)
	if err != nil || got.Subscription.MaxStorage != 25*gantry.GiB {
		t.Fatalf("pro plan: got %+v, %v; want 25 GiB", got.Subscription, err)
	}
	if b := mustUsage(t, db, u.ID).Budget; b != 25*gantry.GiB {
		t.Fatalf("usage budget: got %d, want 25 GiB", b)
	}
}

func TestPruneDeployments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	tickingClock(db)
	alice := mustCreateUser(t, db, "alice")
	p := mustCreateProject(t, db, alice.ID, "site")

	// Oldest first: 13 stopped sites, a failed build that kept nothing, then
	// the live one.
	var stopped []*gantry.Deployment
	for i := 0; i < 13; i++ {
		stopped = append(stopped, mustBuilt(t, db, p, gantry.DeploymentStopped, 10<<20, false))
	}
	mustBuilt(t, db, p, gantry.DeploymentFailed, 0, false)
	live := mustBuilt(t, db, p, gantry.DeploymentLive, 10<<20, false)
	if err := db.SetActiveDeployment(ctx, p.ID, live.ID); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	pruned, err := db.PruneDeployments(ctx, p.ID, at)
	if err != nil {
		t.Fatal(err)
	}
	// The newest 10 stopped ones keep their files; the 3 oldest lose them.
	if got, want := ids(pruned), ids([]*gantry.Deployment{stopped[2], stopped[1], stopped[0]}); got != want {
		t.Fatalf("pruned %s, want the 3 oldest %s", got, want)
	}
	for i, d := range stopped {
		got, _ := db.FindDeployment(ctx, alice.ID, d.ID)
		wantPruned := i < 3
		if (got.PrunedAt != nil) != wantPruned || (got.FilesSize == 0) != wantPruned {
			t.Errorf("stopped #%d: pruned at %v, files %d; want pruned %v", i, got.PrunedAt, got.FilesSize, wantPruned)
		}
		if wantPruned && !got.PrunedAt.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("stopped #%d: pruned at %v, want %v", i, got.PrunedAt, at)
		}
	}
	if got, _ := db.FindDeployment(ctx, alice.ID, live.ID); got.PrunedAt != nil || got.FilesSize != 10<<20 {
		t.Fatalf("the live deployment was pruned: %+v", got)
	}
	if got := mustUsage(t, db, alice.ID).Files; got != 11*10<<20 {
		t.Fatalf("usage after pruning: got %d, want 11 × 10 MiB", got)
	}
	if again, err := db.PruneDeployments(ctx, p.ID, at); err != nil || len(again) != 0 {
		t.Fatalf("second prune: got %s, %v; want nothing", ids(again), err)
	}
	if _, err := db.PruneDeployments(ctx, "nope", at); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("unknown project: got %v, want not found", err)
	}
}

func TestPruneKeepsRollbackAndActive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	tickingClock(db)
	alice := mustCreateUser(t, db, "alice")
	p := mustCreateProject(t, db, alice.ID, "app")

	// The project's subdomain still points at its oldest deployment, which
	// was stopped (restart without an id brings it back); then the newest
	// stopped one; then 11 crash-looped apps (failed, workspace kept) and
	// 4 stopped apps in between.
	active := mustBuilt(t, db, p, gantry.DeploymentStopped, 5<<20, true)
	if err := db.SetActiveDeployment(ctx, p.ID, active.ID); err != nil {
		t.Fatal(err)
	}
	var apps []*gantry.Deployment
	for i := 0; i < 4; i++ {
		apps = append(apps, mustBuilt(t, db, p, gantry.DeploymentStopped, 5<<20, true))
	}
	rollback := mustBuilt(t, db, p, gantry.DeploymentStopped, 5<<20, false)
	var failed []*gantry.Deployment
	for i := 0; i < 11; i++ {
		failed = append(failed, mustBuilt(t, db, p, gantry.DeploymentFailed, 5<<20, true))
	}
	pruned, err := db.PruneDeployments(ctx, p.ID, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, d := range pruned {
		got[d.ID] = true
	}
	if got[active.ID] {
		t.Error("the active deployment was pruned")
	}
	if got[rollback.ID] {
		t.Error("the newest stopped deployment was pruned: nothing is left to roll back to")
	}
	// The newest 3 failed apps are kept (the app limit), the others and
	// every older app go.
	for i, d := range failed {
		if got[d.ID] != (i < 8) {
			t.Errorf("failed app #%d: pruned %v, want %v", i, got[d.ID], i < 8)
		}
	}
	for i, d := range apps {
		if !got[d.ID] {
			t.Errorf("stopped app #%d kept, want pruned (3 newer apps kept)", i)
		}
	}
	if len(pruned) != 12 {
		t.Errorf("pruned %d, want 12", len(pruned))
	}
}

func ids(ds []*gantry.Deployment) string {
	s := ""
	for _, d := range ds {
		s += fmt.Sprint(d.ID[len(d.ID)-6:], " ")
	}
	return s
}

// PruneDeployment takes one stopped or failed deployment's files, the
// project's active one included, and leaves live and pruned ones alone.
func TestPruneDeployment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	tickingClock(db)
	alice := mustCreateUser(t, db, "alice")
	p := mustCreateProject(t, db, alice.ID, "site")
	stopped := mustBuilt(t, db, p, gantry.DeploymentStopped, 10<<20, false)
	live := mustBuilt(t, db, p, gantry.DeploymentLive, 20<<20, false)
	if err := db.SetActiveDeployment(ctx, p.ID, stopped.ID); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	for _, tc := range []struct {
		d    *gantry.Deployment
		want bool
	}{{live, false}, {stopped, true}, {stopped, false}} {
		if ok, err := db.PruneDeployment(ctx, tc.d.ID, at); err != nil || ok != tc.want {
			t.Fatalf("prune %s: got %v, %v; want %v", tc.d.Status, ok, err, tc.want)
		}
	}
	if got, _ := db.FindDeployment(ctx, alice.ID, stopped.ID); got.PrunedAt == nil || !got.PrunedAt.Equal(at.Truncate(time.Millisecond)) || got.FilesSize != 0 {
		t.Fatalf("stopped: pruned at %v, files %d; want pruned at %v, 0", got.PrunedAt, got.FilesSize, at)
	}
	if got := mustUsage(t, db, alice.ID).Files; got != 20<<20 {
		t.Fatalf("usage: got %d, want the live 20 MiB", got)
	}
	if ok, err := db.PruneDeployment(ctx, "nope", at); ok || err != nil {
		t.Fatalf("unknown: got %v, %v; want false, nil", ok, err)
	}
}
