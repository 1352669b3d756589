// Package notify delivers the notifications of the platform's events
// (gantry.Notifier): it stores each one for its user, where the bell and
// the notifications page read it. Delivery never fails the event's own
// work: a notification that cannot be stored is logged and dropped.
package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/gantryhq/gantry"
)

// Timeout bounds the storing of one notification.
const Timeout = 5 * time.Second

// Store is what the service needs of the database.
type Store interface {
	CreateNotification(ctx context.Context, n *gantry.Notification) error
}

// Service stores notifications for their users. Logger receives failures
// (slog.Default() when nil).
type Service struct {
	Store  Store
	Logger *slog.Logger
}

var _ gantry.Notifier = (*Service)(nil)

// Notify stores n for n.UserID. It runs even when ctx is already cancelled
// (a build cut short still tells its owner), within Timeout, and logs
// rather than returns a failure. A nil n is ignored.
func (s *Service) Notify(ctx context.Context, n *gantry.Notification) {
	if n == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	defer cancel()
	if err := s.Store.CreateNotification(ctx, n); err != nil {
		s.logger().ErrorContext(ctx, "notification not stored", "user", n.UserID, "type", n.Type,
			"title", n.Title, "err", err)
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
