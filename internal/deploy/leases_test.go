package deploy_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/githost"
	"github.com/gantryhq/gantry/internal/gittest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sandbox/sandboxtest"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// cutOff is a replica's database once the replica is cut off from it
// (cut): it can no longer claim builds nor renew, find or requeue leases.
type cutOff struct {
	*store.DB
	cut *atomic.Bool
}

var errCutOff = errors.New("connection refused")

func (c cutOff) ClaimDeployment(ctx context.Context, bc gantry.BuildClaim) (*gantry.Deployment, error) {
	if c.cut.Load() {
		return nil, errCutOff
	}
	return c.DB.ClaimDeployment(ctx, bc)
}

func (c cutOff) BuildLeases() gantry.BuildLeaseStore {
	return cutLeases{c.DB.BuildLeases(), c.cut}
}

type cutLeases struct {
	gantry.BuildLeaseStore
	cut *atomic.Bool
}

func (c cutLeases) Renew(ctx context.Context, id, owner string, attempt int, lease time.Duration) (bool, error) {
	if c.cut.Load() {
		return false, errCutOff
	}
	return c.BuildLeaseStore.Renew(ctx, id, owner, attempt, lease)
}

func (c cutLeases) Lapsed(ctx context.Context) ([]*gantry.Deployment, error) {
	if c.cut.Load() {
		return nil, errCutOff
	}
	return c.BuildLeaseStore.Lapsed(ctx)
}

// A build outlives the replica building it (SCALING.md §9 B3, in one
// process): replica A claims a build and is cut off from the database
// mid-build; replica B starting meanwhile leaves A's build alone (its
// lease is alive: the old start-up failed every build in progress), then,
// once A's lease lapsed, takes it over as attempt 2 and makes it live,
// the log saying why. A, which stopped its build when it could not renew,
// wrote nothing: exactly one outcome.
func TestBuildTakenOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sb := sandboxtest.Require(t, sandbox.Config{})
	db := storetest.MustOpenDB(t)
	git := gittest.NewServer(t)
	hosts, err := githost.New(githost.Config{AllowHosts: []string{"127.0.0.1"}, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	user := &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true}
	if err := db.CreateUser(ctx, user); err != nil {
		t.Fatal(err)
	}

	var cut atomic.Bool
	hung := &orderBuilder{gate: make(chan struct{}), started: make(chan string, 4)}
	a := deploytest.New(t, deploytest.Options{DB: db, Builder: hung, Poll: 20 * time.Millisecond}).Deploys
	a.NodeID, a.Lease, a.Store = "node-a", time.Second, cutOff{db, &cut}
	if err := a.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(hung.gate); a.Close() })

	bs := deploytest.New(t, deploytest.Options{DB: db, Sandbox: sb, Repos: hosts, Poll: 20 * time.Millisecond})
	b := bs.Deploys
	b.NodeID, b.Lease = "node-b", time.Second
	url := git.Repo(t, "ada/site", "main", "initial commit", map[string]string{"index.html": "<h1>built by B</h1>"})
	name := "site"
	p, err := bs.Projects.CreatePublic(ctx, user, project.Input{Repository: &project.RepositoryInput{URL: url, DefaultBranch: "main"}, Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.Create(ctx, user.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung.started: // A builds attempt 1
	case <-time.After(20 * time.Second):
		t.Fatal("replica A never started the build")
	}
	cut.Store(true)

	if err := b.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if got, _ := db.FindDeployment(ctx, "", d.ID); got.Status != gantry.DeploymentBuilding || got.Attempt != 1 {
		t.Fatalf("after replica B started, A's build is %s (attempt %d): B's start-up must leave a live lease alone", got.Status, got.Attempt)
	}

	var got *gantry.Deployment
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if got, err = db.FindDeployment(ctx, "", d.ID); err != nil {
			t.Fatal(err)
		}
		if got.Status == gantry.DeploymentLive || got.Status == gantry.DeploymentFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s after 2 minutes", got.Status)
		}
	}
	logs, _ := db.Logs(ctx, d.ID, 0, 0)
	var lines []string
	for _, l := range logs {
		lines = append(lines, l.Message)
	}
	if got.Status != gantry.DeploymentLive || got.Attempt != 2 || got.ClaimedBy != "node-b" {
		t.Fatalf("ended %s, attempt %d by %q; want live, attempt 2 by node-b\n%s", got.Status, got.Attempt, got.ClaimedBy, strings.Join(lines, "\n"))
	}
	if !slices.Contains(lines, "Build restarted: the server building it stopped (attempt 2)") {
		t.Fatalf("no restart line in the log:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.Contains(l, "Build failed") || strings.Contains(l, "interrupted") {
			t.Fatalf("a second outcome in the log: %q\n%s", l, strings.Join(lines, "\n"))
		}
	}
}

// failsOnce is a database whose first lease renewal fails (a statement
// that timed out on a busy server); the later ones pass.
type failsOnce struct {
	*store.DB
	failed *atomic.Bool
}

func (f failsOnce) BuildLeases() gantry.BuildLeaseStore {
	return failsOnceLeases{f.DB.BuildLeases(), f.failed}
}

type failsOnceLeases struct {
	gantry.BuildLeaseStore
	failed *atomic.Bool
}

func (f failsOnceLeases) Renew(ctx context.Context, id, owner string, attempt int, lease time.Duration) (bool, error) {
	if f.failed.CompareAndSwap(false, true) {
		return false, context.DeadlineExceeded
	}
	return f.BuildLeaseStore.Renew(ctx, id, owner, attempt, lease)
}

// TestBuildSurvivesASlowRenewal: one renewal that fails while most of the
// lease is left is tried again, not taken as the lease lost: the build
// runs on as attempt 1. It was stopped at the first failed renewal (then
// requeued as attempt 2 once its lease lapsed), which a 2 s lease on a
// busy machine hit (make test-cluster).
func TestBuildSurvivesASlowRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	var failed atomic.Bool
	b := &orderBuilder{gate: make(chan struct{}), started: make(chan string, 4)}
	a := deploytest.New(t, deploytest.Options{DB: db, Builder: b, Poll: 20 * time.Millisecond}).Deploys
	a.NodeID, a.Lease, a.Store = "node-a", time.Second, failsOnce{db, &failed}
	if err := a.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	user := &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "free", MaxProjects: 3, MaxDeployments: 5}}
	if err := db.CreateUser(ctx, user); err != nil {
		t.Fatal(err)
	}
	p := &gantry.Project{UserID: user.ID, Name: "ada-site", Branch: "main", Type: "static",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git"}}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	d, err := a.Create(ctx, user.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	<-b.started
	time.Sleep(2 * time.Second) // the failed renewal and two lease lengths
	if !failed.Load() {
		t.Fatal("no renewal was tried")
	}
	select {
	case id := <-b.started:
		t.Fatalf("the build of %s started again after one failed renewal", id)
	default:
	}
	got, err := db.FindDeployment(ctx, "", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != gantry.DeploymentBuilding || got.Attempt != 1 {
		t.Fatalf("after one failed renewal the build is %s, attempt %d; want building, attempt 1", got.Status, got.Attempt)
	}
	close(b.gate)
}
