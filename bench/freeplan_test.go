package bench

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/project"
)

// TestFreePlanHoldsThreeAppsAndTheirRollbacks (issue 32): on the Free plan
// (1 GB), a Next.js server app, a Vite site and an Express app — the pinned
// fixtures, built through the real pipeline from the npm registry — each
// deployed four times (its live deployment and three rollbacks: the Next.js
// app's redeploys are of the same commit, the others' one after a one-line
// change) all fit: every deployment keeps its files and the account's
// storage stays within its budget. The account can then still deploy a
// small static site, and that too costs none of the rollbacks. The
// account has one project more than the plan's three, for that site: the
// projects' count is not what is tested.
func TestFreePlanHoldsThreeAppsAndTheirRollbacks(t *testing.T) {
	start := time.Now()
	plan := freePlan
	plan.MaxProjects++
	pl := newPipeline(t, plan)
	ctx := context.Background()

	apps := []struct {
		app
		edit int // which redeploy commits the one-line change (0: none)
	}{{nextServerApp, 0}, {viteReactApp, 2}, {expressApp, 2}}
	projects := make([]*gantry.Project, len(apps))
	for i, a := range apps {
		projects[i] = pl.project(t, a.app)
		if _, _, err := pl.deploy(t, projects[i]); err != nil {
			t.Fatal(err)
		}
	}
	last := make([]*gantry.Deployment, len(apps))
	for redeploy := 1; redeploy <= 3; redeploy++ {
		for i, a := range apps {
			if redeploy == a.edit {
				pl.edit(t, a.app)
			}
			var err error
			if last[i], _, err = pl.deploy(t, projects[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, d := range last {
		pl.settle(t, d) // its build caches saved, the storage it keeps measured
	}
	u := pl.usage(t)
	t.Logf("three apps, four deployments each: %s of %s used (files %s, logs %s), du of the data folder without caches %s; %s so far",
		mb(u.Used), mb(u.Budget), mb(u.Files), mb(u.Logs), mb(pl.du(t)), time.Since(start).Round(time.Second))
	pl.allKept(t, projects, 4)
	if u.Used > u.Budget {
		t.Errorf("the three apps and their rollbacks use %s of the Free plan's %s", mb(u.Used), mb(u.Budget))
	}

	// A small static site still deploys, and the rollbacks stay.
	url := pl.git.Repo(t, pl.user.Username+"/hello", "main", "hello", map[string]string{"index.html": "<h1>hello</h1>"})
	name := "hello"
	site, err := pl.stack.Projects.CreatePublic(ctx, pl.user, project.Input{Repository: &project.RepositoryInput{URL: url}, Name: &name,
		BuildConfig: &gantry.BuildConfig{OutputDirectory: "."}})
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := pl.deploy(t, site)
	if err != nil {
		t.Fatalf("the static site after the three apps: %v", err)
	}
	pl.settle(t, d)
	if code, body := pl.get(t, d.Subdomain); code != http.StatusOK || body != "<h1>hello</h1>" {
		t.Errorf("the static site answers %d %q", code, body)
	}
	pl.allKept(t, projects, 4)
	u = pl.usage(t)
	if u.Used > u.Budget {
		t.Errorf("with the static site the account uses %s of %s", mb(u.Used), mb(u.Budget))
	}
	t.Logf("with the static site: %s of %s used; the test took %s", mb(u.Used), mb(u.Budget), time.Since(start).Round(time.Second))
}

// allKept checks that each project has n deployments, one live and the
// others stopped, all with their files (none pruned to make room).
func (pl *pipeline) allKept(t *testing.T, projects []*gantry.Project, n int) {
	t.Helper()
	for _, p := range projects {
		ds, err := pl.db.ListDeployments(context.Background(), pl.user.ID, gantry.DeploymentFilter{ProjectID: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		live, kept := 0, 0
		for _, d := range ds {
			if d.Status == gantry.DeploymentLive {
				live++
			}
			if d.PrunedAt == nil && d.FilesSize > 0 && (d.Status == gantry.DeploymentLive || d.Status == gantry.DeploymentStopped) {
				kept++
			} else {
				t.Errorf("%s: deployment %s is %s with %d bytes of files (pruned %v): a rollback was lost", p.Name, d.ID, d.Status, d.FilesSize, d.PrunedAt)
			}
		}
		if len(ds) != n || live != 1 || kept != n {
			t.Errorf("%s: %d deployments, %d live, %d keep their files; want %d, 1 live, all kept", p.Name, len(ds), live, kept, n)
		}
	}
}
