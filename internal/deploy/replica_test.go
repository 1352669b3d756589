package deploy_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/feed"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// replicas are two deploy services on one PostgreSQL database, each with
// its own hub and edge table, sharing one data folder (the files a later
// point moves to an object store), B following the change feed as
// cmd/gantry wires it.
type replicas struct {
	db      *store.DB
	admin   *sql.DB // the server's own connections (pg_stat_activity)
	a, b    *deploytest.Stack
	replica *deploy.Replica // B's
	appName string          // B's listener's application_name
	logs    *feed.Coalescer // A's
}

func newReplicas(t *testing.T, setup func(db *store.DB, dataDir string)) *replicas {
	t.Helper()
	if storetest.PostgresURL() == "" {
		t.Skip("the change feed runs on PostgreSQL: scripts/with-postgres go test (make test-pg)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	db := storetest.MustOpenDB(t)
	r := &replicas{db: db}
	var err error
	if r.admin, err = sql.Open("pgx", storetest.PostgresURL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.admin.Close() })
	r.a = deploytest.New(t, deploytest.Options{DB: db})
	r.b = deploytest.New(t, deploytest.Options{DB: db})
	r.b.Deploys.DataDir = r.a.DataDir
	if setup != nil {
		setup(db, r.a.DataDir)
	}
	since, err := db.Feed().RouteSeq(ctx) // as cmd/gantry reads it before Open
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*deploytest.Stack{r.a, r.b} {
		if err := s.Deploys.Open(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r.logs = &feed.Coalescer{Send: func(ctx context.Context, p []string) error {
		return db.Feed().Notify(ctx, store.ChannelLogs, p)
	}}
	r.a.Deploys.Logged = r.logs.Add
	r.replica = deploy.NewReplica(r.b.Deploys, db.Feed(), since)
	r.appName = fmt.Sprintf("feedtest_%d", time.Now().UnixNano())
	u, err := url.Parse(storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", r.appName)
	u.RawQuery = q.Encode()
	l := &feed.Listener{URL: u.String(), Poll: time.Hour}
	l.Handle(store.ChannelRoutes, r.replica.RouteNudge, r.replica.CatchUpRoutes)
	l.Handle(store.ChannelLogs, func(_ context.Context, p string) { r.replica.LogNudges(feed.ParsePayload(p)) }, nil)
	done := make(chan struct{}, 2)
	go func() { l.Run(ctx); done <- struct{}{} }()
	go func() { r.logs.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		r.a.Deploys.Close()
		r.b.Deploys.Close()
	})
	r.waitListening(t)
	return r
}

// backend returns the pid of B's listening connection, 0 when none.
func (r *replicas) backend(t *testing.T) int {
	t.Helper()
	var pid int
	rows, err := r.admin.QueryContext(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, r.appName)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		rows.Scan(&pid)
	}
	return pid
}

func (r *replicas) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.backend(t) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("B's listener never connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // LISTEN and the backlog read
}

// siteProject makes a project with two static deployments whose files
// are in dataDir: v1 live, v2 stopped (an older build, for a rollback).
func siteProject(t *testing.T, db *store.DB, dataDir string) (u *gantry.User, p *gantry.Project, v1, v2 *gantry.Deployment) {
	t.Helper()
	ctx := context.Background()
	u = &gantry.User{FullName: "Ada", Username: "ada", Email: "ada@example.com", PasswordHash: "x", IsActive: true,
		Subscription: gantry.Subscription{Plan: "free", MaxProjects: 3, MaxDeployments: 5}}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	p = &gantry.Project{UserID: u.ID, Name: "site", Branch: "main", Type: "static",
		Repository: gantry.Repository{FullName: "ada/site", CloneURL: "http://127.0.0.1/ada/site.git"}}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	var ds []*gantry.Deployment
	for i := range 2 {
		d := &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Version: fmt.Sprintf("1.0.%d", i), Subdomain: p.Subdomain,
			URL: "http://" + p.Subdomain + ".localhost:8080"}
		if err := db.CreateDeployment(ctx, d); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(dataDir, "sites", d.ID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(d.Version), 0o644); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	v1, v2 = ds[0], ds[1]
	if _, err := db.GoLive(ctx, v2.ID, gantry.DeploymentPending, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GoLive(ctx, v1.ID, gantry.DeploymentPending, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	return u, p, v1, v2
}

// served returns the deployment table serves sub from ("" when it
// answers "no app here").
func served(s *deploytest.Stack, sub string) string {
	site, ok := s.Table.Lookup(sub)
	if !ok {
		return ""
	}
	return site.DeploymentID
}

// SCALING.md §9 B2, in process: a go-live on replica A (a rollback to v2)
// is in B's edge table within 2 s, and B answers from v1 until then, never
// "no app here". A stop and the project's removal follow too.
func TestReplicaRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var u *gantry.User
	var p *gantry.Project
	var v1, v2 *gantry.Deployment
	r := newReplicas(t, func(db *store.DB, dir string) { u, p, v1, v2 = siteProject(t, db, dir) })
	if got := served(r.b, p.Subdomain); got != v1.ID {
		t.Fatalf("B serves %q at start, want v1 %s", got, v1.ID)
	}
	if _, err := r.a.Deploys.Restart(ctx, u.ID, p.Subdomain, v2.ID); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for served(r.b, p.Subdomain) != v2.ID {
		if got := served(r.b, p.Subdomain); got != v1.ID {
			t.Fatalf("B served %q during the go-live, want v1 then v2", got)
		}
		if time.Since(start) > 2*time.Second {
			t.Fatal("B's edge still serves v1 2 s after A's go-live of v2")
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("A's go-live reached B's edge in %v", time.Since(start))

	if _, err := r.a.Deploys.Stop(ctx, u.ID, p.Subdomain, v2.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B's edge to answer the stopped page", func() bool {
		site, ok := r.b.Table.Lookup(p.Subdomain)
		return ok && site.Status == gantry.DeploymentStopped
	})
	if _, err := r.a.Deploys.RemoveProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B's edge to drop the deleted project", func() bool {
		_, ok := r.b.Table.Lookup(p.Subdomain)
		return !ok
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 2 s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SCALING.md §9 A5: the listener's connection is cut
// (pg_terminate_backend) and a route changes while it is down, so its
// notification reaches nobody: the backlog read when the listener
// connects again applies it (the safety poll is an hour away).
func TestReplicaRouteBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var u *gantry.User
	var p *gantry.Project
	var v2 *gantry.Deployment
	r := newReplicas(t, func(db *store.DB, dir string) { u, p, _, v2 = siteProject(t, db, dir) })
	pid := r.backend(t)
	if _, err := r.admin.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	for r.backend(t) == pid {
		time.Sleep(time.Millisecond)
	}
	before := r.replica.LastRoute()
	if _, err := r.a.Deploys.Restart(ctx, u.ID, p.Subdomain, v2.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for served(r.b, p.Subdomain) != v2.ID {
		if time.Now().After(deadline) {
			t.Fatalf("B never applied the change made while its listener was cut off (last seq %d, listening: %v)",
				r.replica.LastRoute(), r.backend(t) != 0)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r.replica.LastRoute() <= before {
		t.Fatalf("last route seq %d, want past %d", r.replica.LastRoute(), before)
	}
}

// SCALING.md §9 B1, in process: a log followed on replica B gets every
// line replica A stores, in order and once each, nudged by A's coalesced
// notifications (no heartbeat: the nudges alone carry it).
func TestReplicaFollowLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var u *gantry.User
	var v1 *gantry.Deployment
	r := newReplicas(t, func(db *store.DB, dir string) { u, _, v1, _ = siteProject(t, db, dir) })
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := r.b.Deploys.FollowLogs(sctx, u.ID, v1.ID, 0, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	const lines = 300
	go func() {
		for i := 1; i <= lines; i++ {
			deploy.Log(r.a.Deploys, ctx, v1.ID, fmt.Sprint("line ", i))
			if i%50 == 0 {
				time.Sleep(80 * time.Millisecond) // a pause: the rest comes in a later window
			}
		}
	}()
	timeout := time.After(10 * time.Second)
	for want := 1; want <= lines; want++ {
		select {
		case ev, ok := <-stream:
			if !ok {
				t.Fatalf("the stream ended before line %d", want)
			}
			if got := ev.Entry.Message; got != fmt.Sprint("line ", want) {
				t.Fatalf("got %q, want line %d", got, want)
			}
		case <-timeout:
			t.Fatalf("B's stream got lines 1-%d of %d in 10 s", want-1, lines)
		}
	}
	select {
	case ev := <-stream:
		t.Fatalf("after the last line: %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}
