package notify_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/notify"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

func TestNotifyStores(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpenDB(t)
	u := &gantry.User{FullName: "Maya Chen", Username: "maya", Email: "maya@example.com", PasswordHash: "x", IsActive: true}
	if err := db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	s := &notify.Service{Store: db.Notifications()}
	// Delivered even from work whose context has ended.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Notify(ctx, gantry.WelcomeNotification(u))
	s.Notify(ctx, nil)
	list, err := db.Notifications().ListNotifications(context.Background(), u.ID, gantry.NotificationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Notifications) != 1 || list.Notifications[0].Title != "Welcome to Gantry" || list.UnreadCount != 1 {
		t.Fatalf("got %+v, want the welcome, unread", list)
	}
}

type failingStore struct{}

func (failingStore) CreateNotification(context.Context, *gantry.Notification) error {
	return errors.New("disk full")
}

func TestNotifyLogsFailures(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := &notify.Service{Store: failingStore{}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	s.Notify(context.Background(), gantry.GitHubConnectedNotification("u1", "maya", 2))
	if got := logs.String(); !strings.Contains(got, "notification not stored") || !strings.Contains(got, "disk full") ||
		!strings.Contains(got, "user=u1") {
		t.Errorf("got log %q", got)
	}
}
