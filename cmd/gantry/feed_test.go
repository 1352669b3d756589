package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/domains"
	"github.com/gantryhq/gantry/internal/previewaccess"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// feedReplica is one replica's services wired to the change feed as serve
// wires them.
type feedReplica struct {
	custom   *domains.Service
	previews *previewaccess.Service
}

func startFeedReplica(t *testing.T, db *store.DB) *feedReplica {
	t.Helper()
	ctx := context.Background()
	logger := slog.Default()
	rf, err := newReplicaFeed(ctx, db, logger)
	if err != nil || rf == nil {
		t.Fatalf("replica feed: %v %v", rf, err)
	}
	stack := deploytest.New(t, deploytest.Options{DB: db})
	stack.Deploys.Logged = rf.logged()
	if err := stack.Deploys.Open(ctx); err != nil {
		t.Fatal(err)
	}
	r := &feedReplica{custom: &domains.Service{Store: db.Domains(), LiveDomain: "apps.test", PublicHost: "gantry.test", CheckEvery: time.Hour}}
	if err := r.custom.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if r.previews, err = previewaccess.New("a-test-secret-key-that-is-long-enough-0123456789", db, "http://gantry.test",
		func(l string) string { return "http://" + l + ".apps.test" }, logger); err != nil {
		t.Fatal(err)
	}
	if err := r.previews.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	p := &platform{}
	rf.follow(ctx, storetest.PostgresURL(), stack.Deploys, r.custom, r.previews, logger, p)
	t.Cleanup(func() { p.close(); stack.Deploys.Close() })
	return r
}

// within fails t unless ok holds within 2 s.
func within(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("another replica did not see %s within 2 s", what)
		}
	}
}

// On PostgreSQL serve follows the other replicas (issue 26, point 3): a
// custom domain added on A is in B's domain routes, and a private
// project's previews closed on A are guarded on B, each within 2 s. (Route
// moves and log streams: internal/deploy's TestReplica*.) Before, B saw a
// domain at its next 30 s reload and a preview closed on A only when it
// restarted.
func TestReplicaFeedWiring(t *testing.T) {
	if storetest.PostgresURL() == "" {
		t.Skip("the change feed runs on PostgreSQL: scripts/with-postgres go test (make test-pg)")
	}
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "pro", MaxProjects: 3, MaxDeployments: 5}}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p := &gantry.Project{UserID: u.ID, Name: "site", Branch: "main", Type: "static",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git", Private: true}}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	pr := &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Version: "1.0.0", Subdomain: "fix--site", Target: gantry.TargetPreview}
	if err := db.CreateDeployment(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GoLive(ctx, pr.ID, gantry.DeploymentPending, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetPreviewsOpen(ctx, u.ID, p.ID, true); err != nil {
		t.Fatal(err)
	}
	a, b := startFeedReplica(t, db), startFeedReplica(t, db)
	// Their listeners connect (and read their backlogs) meanwhile: what
	// follows reaches B by notification.
	time.Sleep(500 * time.Millisecond)
	if open, known := b.previews.Open("fix--site"); !open || !known {
		t.Fatalf("B at start: preview open %v, known %v", open, known)
	}

	if _, err := a.custom.Add(ctx, u, p.ID, "www.example.com"); err != nil {
		t.Fatal(err)
	}
	within(t, "the domain added", func() bool { _, ok := b.custom.Lookup("www.example.com"); return ok })

	if _, err := a.previews.SetOpen(ctx, u.ID, p.ID, false); err != nil {
		t.Fatal(err)
	}
	within(t, "the previews closed", func() bool { open, _ := b.previews.Open("fix--site"); return !open })
}
