package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	ada, bob := mustCreateUser(t, db, "ada"), mustCreateUser(t, db, "bob")
	start := func(id, userID string, at time.Time) {
		t.Helper()
		if err := db.CreateSession(ctx, &gantry.Session{ID: id, UserID: userID, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}); err != nil {
			t.Fatalf("create session %s: %v", id, err)
		}
	}
	live := func(id, userID string, now time.Time) bool {
		t.Helper()
		u, err := db.FindSessionUser(ctx, id, userID, now)
		if gantry.ErrorCode(err) == gantry.ENOTFOUND {
			return false
		} else if err != nil {
			t.Fatalf("find session %s: %v", id, err)
		}
		if u.ID != userID || u.PasswordHash == "" {
			t.Fatalf("session %s: got user %+v, want %s", id, u, userID)
		}
		return true
	}
	start("a1", ada.ID, t0)
	start("a2", ada.ID, t0)
	start("a3", ada.ID, t0)
	start("b1", bob.ID, t0)
	if !live("a1", ada.ID, t0) || !live("b1", bob.ID, t0) {
		t.Fatal("new sessions are not live")
	}
	if live("a1", bob.ID, t0) {
		t.Error("ada's session opened as bob's")
	}
	if live("a1", ada.ID, t0.Add(time.Hour)) {
		t.Error("a session is live when it expires")
	}
	if err := db.CreateSession(ctx, &gantry.Session{ID: "x", UserID: "nobody", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("session of a missing user: got %v, want ENOTFOUND", err)
	}

	if err := db.EndSession(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if live("a1", ada.ID, t0) || !live("a2", ada.ID, t0) {
		t.Error("EndSession ended the wrong session")
	}
	wantCode(t, db.EndSession(ctx, "a1"), gantry.ENOTFOUND, "Session not found")

	// A password change keeps the current session and ends the others.
	if n, err := db.ChangePasswordHash(ctx, ada.ID, "new-hash", "a2"); err != nil || n != 1 {
		t.Fatalf("ChangePasswordHash = %d, %v; want 1 ended", n, err)
	}
	if u, _ := db.FindUserByID(ctx, ada.ID); u.PasswordHash != "new-hash" {
		t.Errorf("password hash %q, want new-hash", u.PasswordHash)
	}
	if !live("a2", ada.ID, t0) || live("a3", ada.ID, t0) || !live("b1", bob.ID, t0) {
		t.Error("ChangePasswordHash ended the wrong sessions")
	}
	if _, err := db.ChangePasswordHash(ctx, "nobody", "h", ""); gantry.ErrorCode(err) != gantry.ENOTFOUND {
		t.Errorf("password of a missing user: got %v, want ENOTFOUND", err)
	}

	// Everywhere: every session of the account, no one else's.
	start("a4", ada.ID, t0)
	if n, err := db.EndUserSessions(ctx, ada.ID, ""); err != nil || n != 2 {
		t.Fatalf("EndUserSessions = %d, %v; want 2", n, err)
	}
	if live("a2", ada.ID, t0) || live("a4", ada.ID, t0) || !live("b1", bob.ID, t0) {
		t.Error("EndUserSessions ended the wrong sessions")
	}

	// Starting a session deletes the expired ones.
	start("a5", ada.ID, t0.Add(time.Hour))
	if n, _ := db.CountSessions(ctx, ""); n != 1 {
		t.Errorf("%d sessions stored after the others expired, want 1", n)
	}
	// Deleting the account deletes its sessions.
	if err := db.DeleteUser(ctx, ada.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountSessions(ctx, ""); n != 0 {
		t.Errorf("%d sessions left after the account was deleted, want 0", n)
	}
}
