package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func TestDashboard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	// The month starts at 2025-03-01 00:00 UTC; "now" is mid-March.
	monthStart := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	now := monthStart.Add(-48 * time.Hour)
	db.Now = func() time.Time { return now }
	tick := func(d time.Duration) { now = now.Add(d) }

	u := mustCreateUser(t, db, "ada")
	other := mustCreateUser(t, db, "bob")
	if err := db.Exec(ctx, `UPDATE users SET max_projects = 10 WHERE id = ?`, u.ID); err != nil {
		t.Fatal(err)
	}
	empty, err := db.Dashboard(ctx, u.ID, monthStart)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&gantry.Dashboard{RecentProjects: []gantry.DashboardProject{},
		RecentDeployments: []gantry.DashboardDeployment{}}, empty); diff != "" {
		t.Errorf("empty dashboard (-want +got):\n%s", diff)
	}

	// finish ends d with status after took, recording the build's times.
	finish := func(d *gantry.Deployment, status string, took time.Duration) {
		t.Helper()
		start := now
		tick(took)
		end := now
		d.Status = status
		d.BuildInfo.StartTime, d.BuildInfo.EndTime, d.BuildInfo.Duration = &start, &end, took.Milliseconds()
		if err := db.UpdateDeployment(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	// Last month: p1 deployed (live, then replaced), one failure.
	p1 := mustCreateProject(t, db, u.ID, "Portfolio")
	tick(time.Minute)
	old := mustCreateDeployment(t, db, p1)
	finish(old, gantry.DeploymentStopped, 3*time.Second)
	tick(time.Minute)
	failedOld := mustCreateDeployment(t, db, p1)
	finish(failedOld, gantry.DeploymentFailed, 1500*time.Millisecond)

	// This month, the first one at exactly its first millisecond.
	now = monthStart
	live := mustCreateDeployment(t, db, p1)
	finish(live, gantry.DeploymentLive, 42*time.Second)
	if err := db.SetActiveDeployment(ctx, p1.ID, live.ID); err != nil {
		t.Fatal(err)
	}
	tick(time.Hour)
	p2 := mustCreateProject(t, db, u.ID, "Recipes")
	tick(time.Minute)
	failed := mustCreateDeployment(t, db, p2)
	finish(failed, gantry.DeploymentFailed, 2*time.Second)
	tick(time.Minute)
	building := mustCreateDeployment(t, db, p2)
	building.Status = gantry.DeploymentBuilding
	if err := db.UpdateDeployment(ctx, building); err != nil {
		t.Fatal(err)
	}
	// p3 was live and is stopped: no URL.
	tick(time.Minute)
	p3 := mustCreateProject(t, db, u.ID, "Club")
	stopped := mustCreateDeployment(t, db, p3)
	finish(stopped, gantry.DeploymentStopped, time.Second)
	if err := db.SetActiveDeployment(ctx, p3.ID, stopped.ID); err != nil {
		t.Fatal(err)
	}
	// Four more projects without deployments: p1 drops out of the newest five.
	for i := range 4 {
		tick(time.Minute)
		mustCreateProject(t, db, u.ID, fmt.Sprintf("Draft %d", i))
	}
	// Someone else's work never counts.
	op := mustCreateProject(t, db, other.ID, "Bob's")
	mustCreateDeployment(t, db, op)

	got, err := db.Dashboard(ctx, u.ID, monthStart.Add(14*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantStats := gantry.DashboardStats{TotalProjects: 7, ActiveDeployments: 1, TotalDeployments: 6,
		FailedDeployments: 2, ThisMonth: 4}
	if diff := cmp.Diff(wantStats, got.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	var names []string
	for _, p := range got.RecentProjects {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"Draft 3", "Draft 2", "Draft 1", "Draft 0", "Club"}, names); diff != "" {
		t.Errorf("recent projects (-want +got):\n%s", diff)
	}
	club := got.RecentProjects[4]
	if club.ID != p3.ID || club.Type != "static" || club.Status != gantry.ProjectDraft || club.URL != nil ||
		club.LastDeployed == nil || !club.LastDeployed.Equal(stopped.CreatedAt) {
		t.Errorf("got %+v, want Club with its last deployment's time and no URL (stopped)", club)
	}
	if draft := got.RecentProjects[0]; draft.LastDeployed != nil || draft.URL != nil {
		t.Errorf("got %+v, want a never-deployed project without time or URL", draft)
	}

	ms := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	wantDeployments := []gantry.DashboardDeployment{
		{ID: stopped.ID, ProjectName: "Club", Subdomain: "club", Status: gantry.DeploymentStopped, BuildTime: ms(time.Second), DeployedAt: stopped.CreatedAt},
		{ID: building.ID, ProjectName: "Recipes", Subdomain: "recipes", Status: gantry.DeploymentBuilding, DeployedAt: building.CreatedAt},
		{ID: failed.ID, ProjectName: "Recipes", Subdomain: "recipes", Status: gantry.DeploymentFailed, BuildTime: ms(2 * time.Second), DeployedAt: failed.CreatedAt},
		{ID: live.ID, ProjectName: "Portfolio", Subdomain: "portfolio", Status: gantry.DeploymentLive, BuildTime: ms(42 * time.Second), DeployedAt: live.CreatedAt},
		{ID: failedOld.ID, ProjectName: "Portfolio", Subdomain: "portfolio", Status: gantry.DeploymentFailed, BuildTime: ms(1500 * time.Millisecond), DeployedAt: failedOld.CreatedAt},
	}
	if diff := cmp.Diff(wantDeployments, got.RecentDeployments); diff != "" {
		t.Errorf("recent deployments (-want +got):\n%s", diff)
	}

	// The live project's URL, seen once it is among the newest five.
	if err := db.Exec(ctx, `DELETE FROM projects WHERE user_id = ? AND name LIKE 'Draft%'`, u.ID); err != nil {
		t.Fatal(err)
	}
	got, err = db.Dashboard(ctx, u.ID, monthStart)
	if err != nil {
		t.Fatal(err)
	}
	portfolio := got.RecentProjects[len(got.RecentProjects)-1]
	if portfolio.ID != p1.ID || portfolio.Status != gantry.ProjectDraft || portfolio.URL == nil ||
		*portfolio.URL != "http://portfolio.localhost:8080" || !portfolio.LastDeployed.Equal(live.CreatedAt) {
		t.Errorf("got %+v, want Portfolio with its live URL", portfolio)
	}

	// Next month, nothing is "this month".
	got, _ = db.Dashboard(ctx, u.ID, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC))
	if got.Stats.ThisMonth != 0 || got.Stats.TotalDeployments != 6 {
		t.Errorf("in April: got %+v, want 0 this month of 6", got.Stats)
	}
}
