package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
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
	if err := db.CreateNotification(ctx, &gantry.Notification{UserID: u.ID, Type: "info", Title: "hi"}); err != nil {
		t.Fatalf("the missing migration was not applied: %v", err)
	}
}
