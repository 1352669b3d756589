package store_test

import (
	"context"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestPreviewAccess: a private repository's preview labels are not open
// until the owner opens them; a public repository's always are; only the
// owner reads or changes the setting, and the label's owner is found.
func TestPreviewAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := storetest.MustCreateUser(t, db, "ada", "Ada")
	other := storetest.MustCreateUser(t, db, "bob", "Bob")
	public := mustCreateProject(t, db, u.ID, "open-site")
	private := &gantry.Project{UserID: u.ID, Name: "secret", Branch: "main", Type: "static",
		Repository:  gantry.Repository{FullName: "ada/secret", CloneURL: "http://127.0.0.1/ada/secret.git", Private: true},
		BuildConfig: gantry.BuildConfig{OutputDirectory: "dist"}}
	if err := db.CreateProject(ctx, private); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*gantry.Project{public, private} {
		if _, err := db.GoLive(ctx, mustPreview(t, db, p, "feature").ID, gantry.DeploymentDeploying, gantry.Change{}); err != nil {
			t.Fatal(err)
		}
	}
	labels := func() map[string]bool {
		t.Helper()
		ls, err := db.PreviewLabels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, l := range ls {
			m[l.Label] = l.Open
		}
		return m
	}
	pubLabel := gantry.PreviewLabel(public.ID, public.Subdomain, "feature", 0)
	privLabel := gantry.PreviewLabel(private.ID, private.Subdomain, "feature", 0)
	if m := labels(); len(m) != 2 || !m[pubLabel] || m[privLabel] {
		t.Fatalf("labels %v", m)
	}
	if owner, err := db.PreviewOwner(ctx, privLabel); err != nil || owner != u.ID {
		t.Fatalf("owner %q %v", owner, err)
	}
	if _, err := db.PreviewOwner(ctx, "nobody--here"); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("unknown label: %v", err)
	}
	if _, err := db.SetPreviewsOpen(ctx, other.ID, private.ID, true); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob opens ada's previews: %v", err)
	}
	if _, err := db.PreviewAccess(ctx, other.ID, private.ID); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Fatalf("bob reads ada's setting: %v", err)
	}
	a, err := db.SetPreviewsOpen(ctx, u.ID, private.ID, true)
	if err != nil || !a.Private || !a.Open || a.Guarded() {
		t.Fatalf("open: %+v %v", a, err)
	}
	if m := labels(); !m[privLabel] {
		t.Fatalf("opened, labels %v", m)
	}
	if a, err := db.SetPreviewsOpen(ctx, u.ID, private.ID, false); err != nil || a.Open || !a.Guarded() {
		t.Fatalf("close: %+v %v", a, err)
	}
	if m := labels(); m[privLabel] {
		t.Fatalf("closed, labels %v", m)
	}
}
