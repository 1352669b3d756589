package deploy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/store"
)

// raceStore is the real store, with a hook that holds a build's go-live
// until the test releases it, so that the test can stop or delete at
// that very moment.
type raceStore struct {
	*store.DB
	goLive  chan string
	release chan struct{}
}

func (r *raceStore) GoLive(ctx context.Context, id, from string, c gantry.Change) (*gantry.Transition, error) {
	if from == gantry.DeploymentDeploying {
		r.goLive <- id
		<-r.release
	}
	return r.DB.GoLive(ctx, id, from, c)
}

// TestStopAndDeleteRaceGoLive builds real deployments of a static site and
// of a server app, and stops or deletes each one (or the one it replaces)
// at the moment its go-live runs. Whichever wins, the project's stored
// state keeps the transitions' invariants, the edge serves what the store
// says, and the only app running is the live one's.
func TestStopAndDeleteRaceGoLive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.svc.Close()
	rs := &raceStore{DB: e.db, goLive: make(chan string), release: make(chan struct{})}
	old := e.svc
	e.table = edge.NewTable()
	e.edge = edge.New("localhost", e.table, "http://localhost:8080")
	e.svc = deploytest.Restarted(old, e.table)
	e.svc.Store, e.svc.DrainTimeout = rs, 100*time.Millisecond
	if err := e.svc.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.svc.Close() })

	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"site", map[string]string{"index.html": "<h1>hello</h1>"}},
		{"api", pyApp("v1")},
	} {
		p := e.project(tc.name, tc.files)
		// goLive queues a deployment and returns it once its go-live is
		// about to run: the caller releases it.
		goLive := func() *gantry.Deployment {
			d, err := e.svc.Create(ctx, e.user.ID, deploy.CreateRequest{ProjectID: p.ID})
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(2 * time.Minute); ; {
				select {
				case id := <-rs.goLive:
					if id != d.ID {
						t.Fatalf("go-live of %s, want %s", id, d.ID)
					}
					return d
				case <-time.After(100 * time.Millisecond):
				}
				if got, _ := e.db.FindDeployment(ctx, "", d.ID); got != nil && !got.InProgress() || time.Now().After(deadline) {
					// The machine failed the build (a volume that could
					// not be resized under load): no race this round.
					t.Logf("%s: no go-live; logs:\n%s", tc.name, strings.Join(e.logs(d.ID), "\n"))
					return nil
				}
			}
		}
		outcomes := map[string]int{}
		var prev *gantry.Deployment // live: the one a round's deployment replaces
		for round := range 12 {
			action, replaced := []string{"stop", "delete"}[round%2], round%4 >= 2
			if replaced && prev == nil {
				if prev = goLive(); prev == nil {
					continue
				}
				rs.release <- struct{}{}
				if got := e.settled(prev.ID); got != gantry.DeploymentLive {
					t.Fatalf("%s round %d: got %s, want live", tc.name, round, got)
				}
			}
			d := goLive()
			if d == nil {
				continue
			}
			target := d
			if replaced {
				target = prev
			}
			// The stop or delete and the go-live are let go at random
			// moments within 3 ms: either may commit first.
			done := make(chan error)
			go func() {
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				var err error
				switch action {
				case "stop":
					_, err = e.svc.Stop(ctx, e.user.ID, p.Subdomain, target.ID)
				case "delete":
					err = e.svc.Delete(ctx, e.user.ID, target.ID)
				}
				done <- err
			}()
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			rs.release <- struct{}{}
			err := <-done
			if err != nil && !(replaced && gantry.ErrorCode(err) == gantry.EINVALID) { // already replaced
				t.Fatalf("%s round %d: %s: %v", tc.name, round, action, err)
			}
			got := e.settled(d.ID)
			outcome := action + " new: " + got
			if replaced {
				outcome = action + " replaced: new " + got
			} else if got == gantry.DeploymentStopped && slices.Contains(e.logs(d.ID), "success: Deployment is live at "+d.URL) {
				outcome += " after going live"
			}
			outcomes[outcome]++
			prev = nil
			if got == gantry.DeploymentLive {
				prev = d
			}
			e.checkRace(p)
		}
		t.Logf("%s: %v", tc.name, outcomes)
	}
}

// settled waits until deployment id's build has ended (or it is gone) and
// returns its status ("deleted" when gone).
func (e *env) settled(id string) string {
	e.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, err := e.db.FindDeployment(context.Background(), "", id)
		if gantry.ErrorCode(err) == gantry.ENOTFOUND {
			return "deleted"
		} else if err != nil {
			e.t.Fatal(err)
		}
		if !d.InProgress() {
			return d.Status
		}
	}
	e.t.Fatalf("deployment %s still in progress", id)
	return ""
}

// checkRace checks p once its deployment's effects have settled: at most
// one live deployment, the active one; the project's status derived from
// its deployments; the edge serving the active deployment in its status
// (nothing without one); and the only app running the live one's.
func (e *env) checkRace(p *gantry.Project) {
	e.t.Helper()
	ctx := context.Background()
	var pr *gantry.Project
	var err error
	// The build goroutine's last effects (its route, its lost app) follow
	// the commit by a moment.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pr, err = e.db.FindProject(ctx, "", p.ID); err != nil {
			e.t.Fatal(err)
		}
		err = raceState(e, pr)
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

func raceState(e *env, p *gantry.Project) error {
	var live []string
	active, activeStatus := "", ""
	for _, d := range p.Deployments {
		if d.Status == gantry.DeploymentLive {
			live = append(live, d.ID)
		}
		if p.ActiveDeployment != nil && d.ID == p.ActiveDeployment.ID {
			active, activeStatus = d.ID, d.Status
		}
	}
	if p.ActiveDeployment != nil && active == "" {
		return fmt.Errorf("project points at %s, not one of its deployments", p.ActiveDeployment.ID)
	}
	if len(live) > 1 || len(live) == 1 && live[0] != active {
		return fmt.Errorf("live %v, active %q: want at most one, the active one", live, active)
	}
	latest := ""
	if len(p.Deployments) > 0 {
		latest = p.Deployments[0].Status
	}
	if want := gantry.ProjectStatusOf(latest, activeStatus == gantry.DeploymentLive); p.Status != want {
		return fmt.Errorf("project status %q, want %q", p.Status, want)
	}
	site, ok := e.table.Lookup(p.Subdomain)
	switch {
	case active == "" && ok:
		return fmt.Errorf("no active deployment, but the edge routes %+v", site)
	case active != "" && (!ok || site.DeploymentID != active || (site.Status == gantry.DeploymentLive) != (activeStatus == gantry.DeploymentLive)):
		return fmt.Errorf("active %s is %s, but the edge routes %+v (%v)", active, activeStatus, site, ok)
	}
	apps := e.svc.RunningApps()
	if activeStatus == gantry.DeploymentLive && site.ProxyTarget != "" {
		if len(apps) != 1 || apps[0] != active {
			return fmt.Errorf("apps %v run, want only the live %s", apps, active)
		}
	} else if len(apps) != 0 {
		return fmt.Errorf("apps %v run, want none (active %q %s)", apps, active, activeStatus)
	}
	return nil
}
