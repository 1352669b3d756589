package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestMigrationsOutOfOrder checks that a database which already has a
// later migration still gets an earlier one that arrived after it (as
// 00005 landed before 00003 and 00004 did).
func TestMigrationsOutOfOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gantry.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// As if 00003 had never been applied.
	if err := db.Exec(ctx, `DROP TABLE notifications`); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `DELETE FROM goose_db_version WHERE version_id = 3`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen with a missing earlier migration: %v", err)
	}
	defer db.Close()
	u := mustCreateUser(t, db, "ada")
	if err := db.Notifications().CreateNotification(ctx, &gantry.Notification{UserID: u.ID, Type: "info", Title: "hi"}); err != nil {
		t.Fatalf("the missing migration was not applied: %v", err)
	}
}

// TestStorageMigrationBackfills checks that migration 00006 counts the log
// text already stored and gives existing accounts their plan's budget.
func TestStorageMigrationBackfills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gantry.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u := mustCreateUser(t, db, "ada")
	d := mustCreateDeployment(t, db, mustCreateProject(t, db, u.ID, "site"))
	for _, msg := range []string{"Build started", "héllo ✓"} {
		if err := db.AppendLog(ctx, d.ID, &gantry.LogEntry{Level: "info", Type: "deployment", Message: msg}); err != nil {
			t.Fatal(err)
		}
	}
	// As if the database predated 00006, with a pro account.
	for _, q := range []string{
		`ALTER TABLE users DROP COLUMN max_storage`,
		`ALTER TABLE deployments DROP COLUMN pruned_at`,
		`ALTER TABLE deployments DROP COLUMN log_bytes`,
		`ALTER TABLE deployments DROP COLUMN files_size`,
		`DELETE FROM goose_db_version WHERE version_id = 6`,
		`UPDATE users SET plan = 'pro'`,
	} {
		if err := db.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	got, err := db.StorageUsage(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (gantry.StorageUsage{Used: 23, Budget: 25 * gantry.GiB, Logs: 23}); *got != want {
		t.Fatalf("after the migration: got %+v, want %+v", *got, want)
	}
}

// TestShowInDiscoverMigration checks migration 00009 both ways: down, every
// live app is listed again and the column is gone; up, projects of private
// repositories are hidden and public ones shown, whatever they were.
func TestShowInDiscoverMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada := storetest.MustCreateUser(t, db, "ada", "Ada Lovelace")
	pub, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "public", Type: "react", Hidden: true})
	priv, _ := storetest.MustCreateApp(t, db, storetest.App{Owner: ada, Name: "private", Type: "react", Private: true})
	listed := func() int { // counted in the table: the store's list reads columns of later migrations
		n, err := db.GalleryCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := listed(); n != 1 {
		t.Fatalf("before: %d listed, want 1", n)
	}
	if err := db.MigrateDownTo(ctx, 8); err != nil {
		t.Fatalf("down: %v", err)
	}
	if n := listed(); n != 2 {
		t.Fatalf("down to 00008: %d listed, want both", n)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	for _, tc := range []struct {
		p    *gantry.Project
		want bool
	}{{pub, true}, {priv, false}} {
		got, err := db.FindProject(ctx, ada.ID, tc.p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ShowInDiscover != tc.want {
			t.Errorf("%s: showInDiscover %v, want %v", got.Name, got.ShowInDiscover, tc.want)
		}
	}
	page, err := db.Gallery().ListPublicDeployments(ctx, gantry.GalleryQuery{Category: "all", Sort: "name", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Deployments) != 1 || page.Deployments[0].Project.Name != "public" {
		t.Fatalf("after 00009: got %+v", page.Deployments)
	}
}
