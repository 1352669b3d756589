package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// mustDeployment inserts a deployment of p in status (a raw fixture row).
func mustDeployment(tb testing.TB, db *store.DB, p *gantry.Project, status string) *gantry.Deployment {
	tb.Helper()
	d := &gantry.Deployment{ProjectID: p.ID, UserID: p.UserID, Version: "1.0.0", Subdomain: p.Subdomain,
		URL: "http://" + p.Subdomain + ".localhost:8080", Status: status}
	if err := db.CreateDeployment(context.Background(), d); err != nil {
		tb.Fatalf("create deployment: %v", err)
	}
	return d
}

// mustLive makes a new deployment of p live through the transitions, as a
// build does, and returns it.
func mustLive(tb testing.TB, db *store.DB, p *gantry.Project) *gantry.Deployment {
	tb.Helper()
	d := mustDeployment(tb, db, p, gantry.DeploymentDeploying)
	if _, err := db.GoLive(context.Background(), d.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		tb.Fatalf("go live: %v", err)
	}
	return d
}

// wantLost fails unless err is a lost transition that found status.
func wantLost(t *testing.T, err error, status string) {
	t.Helper()
	var te *gantry.TransitionError
	if !errors.As(err, &te) || te.Status != status || te.Pruned {
		t.Fatalf("got error %v, want a lost transition that found %s", err, status)
	}
	if gantry.ErrorCode(err) != gantry.ECONFLICT {
		t.Fatalf("got code %q, want %q", gantry.ErrorCode(err), gantry.ECONFLICT)
	}
}

// checkInvariants fails t unless invariants holds.
func checkInvariants(t *testing.T, db *store.DB, projectID string) *gantry.Project {
	t.Helper()
	p, err := invariants(db, projectID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// invariants reads the project and checks that its stored state is one the
// transitions allow: at most one live deployment, and that one the active
// deployment; an active deployment that exists, belongs to the project
// and has been built (live, stopped or failed); and the status its
// deployments give it.
func invariants(db *store.DB, projectID string) (*gantry.Project, error) {
	p, err := db.FindProject(context.Background(), "", projectID)
	if err != nil {
		return nil, err
	}
	var live []string
	status := map[string]string{}
	for _, d := range p.Deployments {
		status[d.ID] = d.Status
		if d.Status == gantry.DeploymentLive {
			live = append(live, d.ID)
		}
	}
	active := ""
	if p.ActiveDeployment != nil {
		active = p.ActiveDeployment.ID
		switch st, ok := status[active]; {
		case !ok:
			return nil, fmt.Errorf("project points at %s, which is not one of its deployments %v", active, status)
		case st != gantry.DeploymentLive && st != gantry.DeploymentStopped && st != gantry.DeploymentFailed:
			return nil, fmt.Errorf("project points at %s, which is %s", active, st)
		}
	}
	if len(live) > 1 || len(live) == 1 && live[0] != active {
		return nil, fmt.Errorf("live deployments %v, active %q: want at most one, the active one", live, active)
	}
	latest := ""
	if len(p.Deployments) > 0 {
		latest = p.Deployments[0].Status
	}
	if want := gantry.ProjectStatusOf(latest, active != "" && status[active] == gantry.DeploymentLive); p.Status != want {
		return nil, fmt.Errorf("project status %q, want %q (deployments %v, active %q)", p.Status, want, status, active)
	}
	return p, nil
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	p := mustCreateProject(t, db, u.ID, "site")

	// A build goes live: active, deployed, its line logged in the same step.
	a := mustDeployment(t, db, p, gantry.DeploymentDeploying)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(3 * time.Second)
	line := &gantry.LogEntry{Level: gantry.LevelSuccess, Type: gantry.LogDeployment, Message: "Deployment is live"}
	tr, err := db.GoLive(ctx, a.ID, gantry.DeploymentDeploying, gantry.Change{
		Info: &gantry.BuildInfo{StartTime: &start, EndTime: &end, Duration: 3000}, Line: line})
	if err != nil {
		t.Fatal(err)
	}
	if tr.From != gantry.DeploymentDeploying || tr.Deployment.Status != gantry.DeploymentLive ||
		tr.Deployment.BuildInfo.Duration != 3000 || len(tr.Replaced) != 0 || line.Seq != 1 {
		t.Fatalf("go live: got %+v (line seq %d)", tr, line.Seq)
	}
	if tr.Route == nil || tr.Route.Active.ID != a.ID || tr.Route.Subdomain != "site" || tr.Route.Version != 1 {
		t.Fatalf("go live: got route %+v", tr.Route)
	}
	if got := checkInvariants(t, db, p.ID); got.Status != gantry.ProjectDeployed {
		t.Fatalf("got project status %q, want deployed", got.Status)
	}
	if _, err := db.GoLive(ctx, a.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		wantLost(t, err, gantry.DeploymentLive)
	} else {
		t.Fatal("a second go-live from deploying succeeded")
	}

	// A new build: the project is building; it fails, the project failed,
	// the live one still serves (no route change).
	b := &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Subdomain: p.Subdomain}
	if err := db.QueueDeployment(ctx, b, 0); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, db, p.ID)
	if _, err := db.ClaimDeployment(ctx, gantry.BuildClaim{}); err != nil {
		t.Fatal(err)
	}
	b.BuildInfo.StartTime, b.Status = &start, gantry.DeploymentBuilding
	if err := db.SaveBuild(ctx, b, gantry.DeploymentBuilding); err != nil {
		t.Fatal(err)
	}
	tr, err = db.FailDeployment(ctx, b.ID, []string{gantry.DeploymentBuilding}, "boom", gantry.Change{At: end})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Route != nil || tr.Deployment.Error != "boom" || *tr.Deployment.BuildInfo.EndTime != end ||
		tr.Deployment.BuildInfo.Duration != 3000 {
		t.Fatalf("fail: got %+v, route %+v", tr.Deployment, tr.Route)
	}
	if got := checkInvariants(t, db, p.ID); got.Status != gantry.ProjectFailed {
		t.Fatalf("got project status %q, want failed", got.Status)
	}
	b.Status = gantry.DeploymentDeploying
	wantLost(t, db.SaveBuild(ctx, b, gantry.DeploymentBuilding), gantry.DeploymentFailed)
	_, err = db.StopDeployment(ctx, b.ID, gantry.Change{})
	wantLost(t, err, gantry.DeploymentFailed)

	// A newer one goes live and replaces a; a is restarted (a rollback)
	// and replaces c. Each move of the route counts one version.
	c := mustDeployment(t, db, p, gantry.DeploymentDeploying)
	if tr, err = db.GoLive(ctx, c.ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	if len(tr.Replaced) != 1 || tr.Replaced[0] != a.ID || tr.Route.Version != 2 {
		t.Fatalf("redeploy: replaced %v, route %+v", tr.Replaced, tr.Route)
	}
	if tr, err = db.GoLive(ctx, a.ID, gantry.DeploymentStopped, gantry.Change{}); err != nil {
		t.Fatal(err)
	}
	if len(tr.Replaced) != 1 || tr.Replaced[0] != c.ID || tr.Route.Active.ID != a.ID || tr.Route.Version != 3 {
		t.Fatalf("rollback: replaced %v, route %+v", tr.Replaced, tr.Route)
	}
	// c, the latest, is stopped, and the active one live: deployed.
	if got := checkInvariants(t, db, p.ID); got.Status != gantry.ProjectDeployed {
		t.Fatalf("got project status %q, want deployed", got.Status)
	}

	// Stop: the active one stays, stopped; the route says so.
	tr, err = db.StopDeployment(ctx, a.ID, gantry.Change{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.From != gantry.DeploymentLive || tr.Route.Active.Status != gantry.DeploymentStopped || tr.Route.Version != 4 {
		t.Fatalf("stop: got from %q, route %+v", tr.From, tr.Route)
	}
	_, err = db.StopDeployment(ctx, a.ID, gantry.Change{})
	wantLost(t, err, gantry.DeploymentStopped)

	// A pruned deployment is never restarted.
	if _, err := db.PruneDeployments(ctx, p.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.SetDeploymentFiles(ctx, c.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `UPDATE deployments SET pruned_at = ? WHERE id = ?`, time.Now(), c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = db.GoLive(ctx, c.ID, gantry.DeploymentStopped, gantry.Change{})
	var te *gantry.TransitionError
	if !errors.As(err, &te) || !te.Pruned {
		t.Fatalf("restart of a pruned deployment: got %v, want Pruned", err)
	}
	wantCode(t, err, gantry.ECONFLICT, gantry.MsgPruned)

	// Deleting the active one leaves the project pointing at none.
	if tr, err = db.DeleteDeployment(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if tr.From != gantry.DeploymentStopped || tr.Deployment != nil || tr.Route == nil || tr.Route.Active != nil || tr.Route.Version != 5 {
		t.Fatalf("delete: got %+v, route %+v", tr, tr.Route)
	}
	if got := checkInvariants(t, db, p.ID); got.ActiveDeployment != nil {
		t.Fatalf("project still points at %+v", got.ActiveDeployment)
	}
	_, err = db.DeleteDeployment(ctx, a.ID)
	wantCode(t, err, gantry.ENOTFOUND, "")
	if v, err := db.RouteVersion(ctx, p.ID); err != nil || v != 5 {
		t.Fatalf("got route version %d (%v), want 5", v, err)
	}
}

// TestTransitionsRace runs a go-live, a rollback, stops, a failure,
// deletes and a new build of one project at once, round after round (four
// projects at a time), and checks after each round that the project's
// stored state is one the transitions allow (checkInvariants), that every
// call either happened or says it lost, and that the route with the
// highest version is what the project serves: a routing table applying
// routes by version ends where the store did.
func TestTransitionsRace(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	var mu sync.Mutex
	won := map[string]int{}
	next := make(chan int)
	var workers sync.WaitGroup
	for range 4 {
		workers.Go(func() {
			for round := range next {
				wins, err := raceRound(db, u, round)
				if err != nil {
					t.Errorf("round %d: %v", round, err)
					continue
				}
				mu.Lock()
				for _, name := range wins {
					won[name]++
				}
				mu.Unlock()
			}
		})
	}
	for round := range rounds {
		next <- round
	}
	close(next)
	workers.Wait()
	// The race was real: these calls won some rounds and lost others.
	t.Logf("wins over %d rounds: %v", rounds, won)
	for _, name := range []string{"go live next", "stop next", "fail next", "restart old", "stop older"} {
		if won[name] == 0 || won[name] == rounds {
			t.Errorf("%s won %d of %d rounds: want the race to go both ways", name, won[name], rounds)
		}
	}
}

// raceRound is one round of TestTransitionsRace, on a project of its own.
// It returns the calls that won.
func raceRound(db *store.DB, u *gantry.User, round int) ([]string, error) {
	ctx := context.Background()
	p := &gantry.Project{UserID: u.ID, Name: fmt.Sprintf("site %d", round), Branch: "main"}
	if err := db.CreateProject(ctx, p); err != nil {
		return nil, err
	}
	deployment := func(status string) (*gantry.Deployment, error) {
		d := &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Subdomain: p.Subdomain, Status: status}
		return d, db.CreateDeployment(ctx, d)
	}
	live := func() (*gantry.Deployment, error) {
		d, err := deployment(gantry.DeploymentDeploying)
		if err == nil {
			_, err = db.GoLive(ctx, d.ID, gantry.DeploymentDeploying, gantry.Change{})
		}
		return d, err
	}
	old, err := live() // replaced by older: stopped, the rollback's target
	if err != nil {
		return nil, err
	}
	older, err := live() // live and active
	if err != nil {
		return nil, err
	}
	next, err := deployment(gantry.DeploymentBuilding) // as claimed
	if err != nil {
		return nil, err
	}
	next.Status = gantry.DeploymentDeploying
	if err := db.SaveBuild(ctx, next, gantry.DeploymentBuilding); err != nil {
		return nil, err
	}
	v0, err := db.RouteVersion(ctx, p.ID)
	if err != nil {
		return nil, err
	}

	calls := []struct {
		name string
		do   func() (*gantry.Transition, error)
	}{
		{"go live next", func() (*gantry.Transition, error) {
			return db.GoLive(ctx, next.ID, gantry.DeploymentDeploying, gantry.Change{})
		}},
		{"restart old", func() (*gantry.Transition, error) {
			return db.GoLive(ctx, old.ID, gantry.DeploymentStopped, gantry.Change{})
		}},
		{"stop next", func() (*gantry.Transition, error) { return db.StopDeployment(ctx, next.ID, gantry.Change{}) }},
		{"stop older", func() (*gantry.Transition, error) { return db.StopDeployment(ctx, older.ID, gantry.Change{}) }},
		{"fail next", func() (*gantry.Transition, error) {
			return db.FailDeployment(ctx, next.ID, []string{gantry.DeploymentBuilding, gantry.DeploymentDeploying}, "boom", gantry.Change{})
		}},
		{"delete older", func() (*gantry.Transition, error) { return db.DeleteDeployment(ctx, older.ID) }},
		{"delete old", func() (*gantry.Transition, error) {
			if round%2 == 0 {
				return nil, gantry.Errorf(gantry.ENOTFOUND, "kept") // every other round keeps the rollback's target
			}
			return db.DeleteDeployment(ctx, old.ID)
		}},
		{"queue", func() (*gantry.Transition, error) {
			return nil, db.QueueDeployment(ctx, &gantry.Deployment{ProjectID: p.ID, UserID: u.ID, Subdomain: p.Subdomain}, 0)
		}},
	}
	results := make([]*gantry.Transition, len(calls))
	errs := make([]error, len(calls))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			<-start
			results[i], errs[i] = c.do()
		})
	}
	close(start)
	wg.Wait()

	var wins []string
	var newest *gantry.Route
	versions := map[int64]string{}
	for i, err := range errs {
		var te *gantry.TransitionError
		switch {
		case err == nil:
			wins = append(wins, calls[i].name)
		case errors.As(err, &te), gantry.ErrorCode(err) == gantry.ENOTFOUND:
			continue
		default:
			return nil, fmt.Errorf("%s: %w", calls[i].name, err)
		}
		r := results[i]
		if r == nil || r.Route == nil {
			continue
		}
		if prev, ok := versions[r.Route.Version]; ok {
			return nil, fmt.Errorf("%s and %s both committed route version %d", prev, calls[i].name, r.Route.Version)
		}
		versions[r.Route.Version] = calls[i].name
		if newest == nil || r.Route.Version > newest.Version {
			newest = r.Route
		}
	}
	got, err := invariants(db, p.ID)
	if err != nil {
		return nil, err
	}
	v, err := db.RouteVersion(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if v != v0+int64(len(versions)) {
		return nil, fmt.Errorf("route version %d, want %d + %d changes", v, v0, len(versions))
	}
	gotActive := ""
	if got.ActiveDeployment != nil {
		d, err := db.FindDeployment(ctx, "", got.ActiveDeployment.ID)
		if err != nil {
			return nil, err
		}
		gotActive = d.ID + " " + d.Status
	}
	if newest != nil {
		want := ""
		if newest.Active != nil {
			want = newest.Active.ID + " " + newest.Active.Status
		}
		if newest.Version != v || want != gotActive {
			return nil, fmt.Errorf("the newest route (%s, version %d) has %q, the project %q",
				versions[newest.Version], newest.Version, want, gotActive)
		}
	}
	return wins, nil
}
