package deploy_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/build"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// orderBuilder records the order in which the workers start builds. Its
// first build waits until gate is closed; every build then fails at once.
type orderBuilder struct {
	gate    chan struct{}
	started chan string
}

func (b *orderBuilder) Run(ctx context.Context, job build.Job, _ build.Logger) (*build.Result, error) {
	b.started <- job.DeploymentID
	select {
	case <-b.gate:
	case <-ctx.Done():
	}
	return nil, errors.New("not built: the test only records the order")
}

// TestWorkersServeUsersInTurns runs the service's worker on a queue that
// alice filled before bob deployed: bob's builds alternate with hers, and
// her deploy past the cap is refused.
func TestWorkersServeUsersInTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	b := &orderBuilder{gate: make(chan struct{}), started: make(chan string, 16)}
	svc := deploytest.New(t, deploytest.Options{DB: db, Builder: b, Poll: 20 * time.Millisecond}).Deploys
	if err := svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	open := func() { once.Do(func() { close(b.gate) }) }
	t.Cleanup(func() { open(); svc.Close() })

	projectOf := func(name string) *gantry.Project {
		u := &gantry.User{FullName: name, Username: name, Email: name + "@example.com", PasswordHash: "x", IsActive: true,
			Subscription: gantry.Subscription{Plan: "free", MaxProjects: 3, MaxDeployments: 5}}
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		p := &gantry.Project{UserID: u.ID, Name: name + "-site", Branch: "main", Type: "static",
			Repository: gantry.Repository{FullName: name + "/site", CloneURL: "http://127.0.0.1/" + name + "/site.git"}}
		if err := db.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	label := map[string]string{}
	create := func(p *gantry.Project, l string) *gantry.Deployment {
		t.Helper()
		d, err := svc.Create(ctx, p.UserID, deploy.CreateRequest{ProjectID: p.ID})
		if err != nil {
			t.Fatalf("deploy %s: %v", l, err)
		}
		label[d.ID] = l
		return d
	}
	next := func() string {
		t.Helper()
		select {
		case id := <-b.started:
			return label[id]
		case <-time.After(20 * time.Second):
			t.Fatal("no build started within 20 s")
			return ""
		}
	}

	alice, bob := projectOf("alice"), projectOf("bob")
	create(alice, "a1")
	if got := next(); got != "a1" {
		t.Fatalf("first build: %s", got)
	}
	// While a1 builds, alice fills her queue and bob deploys twice.
	create(alice, "a2")
	create(alice, "a3")
	create(alice, "a4")
	_, err := svc.Create(ctx, alice.UserID, deploy.CreateRequest{ProjectID: alice.ID})
	if gantry.ErrorCode(err) != gantry.ETOOMANY || gantry.ErrorMessage(err) !=
		"You already have 3 builds waiting. Wait for one to start, or delete a waiting one, then deploy again." {
		t.Fatalf("alice's 4th waiting build: %v, want the 429 message", err)
	}
	create(bob, "b1")
	b2 := create(bob, "b2")
	logs, err := db.Logs(ctx, b2.ID, 0, 0)
	if err != nil || len(logs) == 0 || logs[0].Message != "Deployment queued: position 3, waiting for 2 builds ahead" {
		t.Fatalf("b2's queue line: %+v, %v; want position 3 (after b1 and a2)", logs, err)
	}

	open()
	want := []string{"b1", "a2", "b2", "a3", "a4"}
	for i, w := range want {
		if got := next(); got != w {
			t.Fatalf("build %d after a1: got %s, want %s (order a1 %v)", i+2, got, w, want)
		}
	}
}

// A replica without the builder role (GANTRY_ROLES=api,edge,runner)
// claims nothing: a deployment queued through it waits until a replica
// that builds, on the same database, takes it.
func TestNoBuildsReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ab := &orderBuilder{gate: make(chan struct{}), started: make(chan string, 4)}
	a := deploytest.New(t, deploytest.Options{DB: db, Builder: ab, Poll: 20 * time.Millisecond}).Deploys
	a.NoBuilds = true
	if err := a.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(ab.gate); a.Close() })
	u := &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "free", MaxProjects: 3, MaxDeployments: 5}}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p := &gantry.Project{UserID: u.ID, Name: "site", Branch: "main", Type: "static",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git"}}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	d, err := a.Create(ctx, u.ID, deploy.CreateRequest{ProjectID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ab.started:
		t.Fatalf("the replica without the builder role built %s", id)
	case <-time.After(300 * time.Millisecond):
	}
	bb := &orderBuilder{gate: make(chan struct{}), started: make(chan string, 4)}
	b := deploytest.New(t, deploytest.Options{DB: db, Builder: bb, Poll: 20 * time.Millisecond}).Deploys
	if err := b.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(bb.gate); b.Close() })
	select {
	case id := <-bb.started:
		if id != d.ID {
			t.Fatalf("the builder took %s, want %s", id, d.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the replica that builds never took the deployment")
	}
}
