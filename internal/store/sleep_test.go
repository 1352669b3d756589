package store_test

import (
	"context"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestSleeping: a deployment marked sleeping reads as sleeping while it is
// live, on itself, its project and its gallery card; a project keeps its
// always-on setting.
func TestSleeping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	p, d := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "dozy", Type: "express"})
	check := func(want bool) {
		t.Helper()
		got, err := db.FindDeployment(ctx, "", d.ID)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := db.FindProject(ctx, ada.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		page, err := db.Gallery().ListPublicDeployments(ctx, gantry.GalleryQuery{Category: "all", Sort: "name", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		card := len(page.Deployments) == 1 && page.Deployments[0].Sleeping
		if got.Sleeping != want || pr.Sleeping != want || card != want {
			t.Errorf("sleeping: deployment %v, project %v, card %v; want %v", got.Sleeping, pr.Sleeping, card, want)
		}
	}
	check(false)
	if err := db.SetSleeping(ctx, d.ID, true); err != nil {
		t.Fatal(err)
	}
	check(true)
	if err := db.SetSleeping(ctx, d.ID, false); err != nil {
		t.Fatal(err)
	}
	check(false)
	if err := db.SetSleeping(ctx, "nope", true); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("unknown deployment: %v", err)
	}
	// Not live: never sleeping.
	if err := db.SetSleeping(ctx, d.ID, true); err != nil {
		t.Fatal(err)
	}
	d.Status = gantry.DeploymentStopped
	if err := db.UpdateDeployment(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindDeployment(ctx, "", d.ID); got.Sleeping {
		t.Error("a stopped deployment reads as sleeping")
	}
	if pr, _ := db.FindProject(ctx, ada.ID, p.ID); pr.Sleeping || pr.AlwaysOn {
		t.Errorf("stopped: project sleeping %v always on %v", pr.Sleeping, pr.AlwaysOn)
	}
	p.AlwaysOn = true
	if err := db.UpdateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	if pr, _ := db.FindProject(ctx, ada.ID, p.ID); !pr.AlwaysOn {
		t.Error("always on was not kept")
	}
}
