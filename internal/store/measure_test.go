package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestMeasuredDeploymentFiles: a running app's measure is recorded while
// its deployment keeps files, and never brings back files that were
// removed (0) or pruned meanwhile.
func TestMeasuredDeploymentFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	p := mustCreateProject(t, db, u.ID, "site")
	kept := mustDeployment(t, db, p, gantry.DeploymentStopped)
	gone := mustDeployment(t, db, p, gantry.DeploymentStopped)
	pruned := mustDeployment(t, db, p, gantry.DeploymentStopped)
	for _, d := range []*gantry.Deployment{kept, pruned} {
		if err := db.SetDeploymentFiles(ctx, d.ID, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Exec(ctx, `UPDATE deployments SET pruned_at = ? WHERE id = ?`, time.Now().UTC(), pruned.ID); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*gantry.Deployment{kept, gone, pruned} {
		if err := db.MeasuredDeploymentFiles(ctx, d.ID, 5000); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.MeasuredDeploymentFiles(ctx, "01a21de2-0000-0000-0000-000000000000", 5000); err != nil {
		t.Fatalf("a deployment gone: %v", err)
	}
	for d, want := range map[*gantry.Deployment]int64{kept: 5000, gone: 0, pruned: 1000} {
		got, err := db.FindDeployment(ctx, "", d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.FilesSize != want {
			t.Errorf("files %d, want %d", got.FilesSize, want)
		}
	}
}
