package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func mustNotify(tb testing.TB, db *store.DB, userID, title string) *gantry.Notification {
	tb.Helper()
	n := &gantry.Notification{UserID: userID, Type: gantry.NotifyInfo, Title: title, Message: "about " + title,
		ActionURL: "/deployments/" + title}
	if err := db.Notifications().CreateNotification(context.Background(), n); err != nil {
		tb.Fatalf("create notification %s: %v", title, err)
	}
	return n
}

// titles lists the titles of a page of notifications, in order.
func titles(l *gantry.NotificationList) []string {
	out := []string{}
	for _, n := range l.Notifications {
		out = append(out, n.Title)
	}
	return out
}

func TestNotifications(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	now := t0
	db.Now = func() time.Time { return now }
	alice := mustCreateUser(t, db, "alice")
	bob := mustCreateUser(t, db, "bob")

	first := mustNotify(t, db, alice.ID, "one")
	if first.ID == "" || first.Read || !first.CreatedAt.Equal(t0.Truncate(time.Millisecond)) {
		t.Fatalf("got %+v, want an id, unread, created now", first)
	}
	now = now.Add(time.Minute)
	second := mustNotify(t, db, alice.ID, "two")
	third := mustNotify(t, db, alice.ID, "three") // same millisecond: the id orders them
	mustNotify(t, db, bob.ID, "bob's")

	list, err := db.Notifications().ListNotifications(ctx, alice.ID, gantry.NotificationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"three", "two", "one"}, titles(list)); diff != "" {
		t.Errorf("newest first (-want +got):\n%s", diff)
	}
	if list.UnreadCount != 3 || list.Total != 3 {
		t.Errorf("got unread %d total %d, want 3 and 3", list.UnreadCount, list.Total)
	}
	if diff := cmp.Diff(third, list.Notifications[0]); diff != "" {
		t.Errorf("stored notification (-want +got):\n%s", diff)
	}

	// Marking read: once, again (no change), someone else's (not found).
	n, unread, err := db.Notifications().MarkNotificationRead(ctx, alice.ID, second.ID)
	if err != nil || !n.Read || n.ID != second.ID || unread != 2 {
		t.Fatalf("mark read: got %+v, unread %d, %v; want read, unread 2", n, unread, err)
	}
	if _, unread, err = db.Notifications().MarkNotificationRead(ctx, alice.ID, second.ID); err != nil || unread != 2 {
		t.Fatalf("mark read again: got unread %d, %v; want 2", unread, err)
	}
	_, _, err = db.Notifications().MarkNotificationRead(ctx, bob.ID, first.ID)
	wantCode(t, err, gantry.ENOTFOUND, "Notification not found")
	_, _, err = db.Notifications().MarkNotificationRead(ctx, alice.ID, "missing")
	wantCode(t, err, gantry.ENOTFOUND, "Notification not found")

	list, _ = db.Notifications().ListNotifications(ctx, alice.ID, gantry.NotificationFilter{UnreadOnly: true, Limit: 1})
	if diff := cmp.Diff([]string{"three"}, titles(list)); diff != "" || list.UnreadCount != 2 || list.Total != 3 {
		t.Errorf("unread, limit 1: got %v unread %d total %d (diff %s)", titles(list), list.UnreadCount, list.Total, diff)
	}

	// Deleting: someone else's is not found and changes nothing.
	_, err = db.Notifications().DeleteNotification(ctx, bob.ID, third.ID)
	wantCode(t, err, gantry.ENOTFOUND, "Notification not found")
	if unread, err = db.Notifications().DeleteNotification(ctx, alice.ID, third.ID); err != nil || unread != 1 {
		t.Fatalf("delete: got unread %d, %v; want 1", unread, err)
	}
	_, err = db.Notifications().DeleteNotification(ctx, alice.ID, third.ID)
	wantCode(t, err, gantry.ENOTFOUND, "Notification not found")

	// Mark all read: counts what changed; the counter stays at 0 after.
	for _, want := range []int{1, 0} {
		if got, err := db.Notifications().MarkAllNotificationsRead(ctx, alice.ID); err != nil || got != want {
			t.Fatalf("mark all read: got %d, %v; want %d", got, err, want)
		}
	}
	list, _ = db.Notifications().ListNotifications(ctx, alice.ID, gantry.NotificationFilter{})
	if list.UnreadCount != 0 || list.Total != 2 {
		t.Errorf("after mark all read: got unread %d total %d, want 0 and 2", list.UnreadCount, list.Total)
	}
	if _, unread, err = db.Notifications().MarkNotificationRead(ctx, alice.ID, first.ID); err != nil || unread != 0 {
		t.Fatalf("mark a read one read: got unread %d, %v; want 0", unread, err)
	}

	// Clear: only the owner's go.
	if got, err := db.Notifications().ClearNotifications(ctx, alice.ID); err != nil || got != 2 {
		t.Fatalf("clear: got %d, %v; want 2", got, err)
	}
	list, _ = db.Notifications().ListNotifications(ctx, alice.ID, gantry.NotificationFilter{})
	if len(list.Notifications) != 0 || list.Total != 0 || list.UnreadCount != 0 {
		t.Errorf("after clear: got %+v", list)
	}
	list, _ = db.Notifications().ListNotifications(ctx, bob.ID, gantry.NotificationFilter{})
	if diff := cmp.Diff([]string{"bob's"}, titles(list)); diff != "" || list.UnreadCount != 1 {
		t.Errorf("bob's after alice cleared: got %v unread %d", titles(list), list.UnreadCount)
	}

	// A deleted user's notifications go with the account.
	if err := db.DeleteUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	list, _ = db.Notifications().ListNotifications(ctx, bob.ID, gantry.NotificationFilter{})
	if list.Total != 0 {
		t.Errorf("got %d notifications of a deleted user, want 0", list.Total)
	}
}

func TestNotificationRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	for _, n := range []*gantry.Notification{
		{UserID: u.ID, Title: "no type"},
		{UserID: u.ID, Type: gantry.NotifyInfo, Title: "  "},
		{Type: gantry.NotifyInfo, Title: "no user"},
	} {
		wantCode(t, db.Notifications().CreateNotification(ctx, n), gantry.EINVALID, "")
	}
	if err := db.Notifications().CreateNotification(ctx, &gantry.Notification{UserID: "missing", Type: "info", Title: "x"}); err == nil {
		t.Error("a notification of a missing user was stored")
	}
}

func TestNotificationsKeepNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	u := mustCreateUser(t, db, "ada")
	for i := range gantry.KeepNotifications + 3 {
		mustNotify(t, db, u.ID, fmt.Sprintf("n%03d", i))
	}
	list, err := db.Notifications().ListNotifications(ctx, u.ID, gantry.NotificationFilter{Limit: gantry.MaxNotificationLimit + 50})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != gantry.KeepNotifications || list.UnreadCount != gantry.KeepNotifications {
		t.Fatalf("got total %d unread %d, want %d", list.Total, list.UnreadCount, gantry.KeepNotifications)
	}
	got := titles(list)
	if got[0] != fmt.Sprintf("n%03d", gantry.KeepNotifications+2) || got[len(got)-1] != "n003" {
		t.Errorf("kept %s … %s, want the newest %d", got[0], got[len(got)-1], gantry.KeepNotifications)
	}
}
