package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
)

// Notifications keeps users' notifications (gantry.NotificationStore).
type Notifications struct{ db *DB }

// Notifications returns the store's notifications.
func (db *DB) Notifications() *Notifications { return &Notifications{db} }

var _ gantry.NotificationStore = (*Notifications)(nil)

const msgNotificationNotFound = "Notification not found"

// notificationColumns lists the notifications columns in the order
// scanNotification reads them.
const notificationColumns = `id, user_id, type, title, message, read, action_url, created_at`

// CreateNotification inserts n as unread for n.UserID, filling ID and
// CreatedAt, and deletes the user's oldest notifications beyond
// gantry.KeepNotifications. Type and Title are required (EINVALID); a
// missing user is an error of the foreign key.
func (x *Notifications) CreateNotification(ctx context.Context, n *gantry.Notification) error {
	db := x.db
	if n.UserID == "" || strings.TrimSpace(n.Type) == "" || strings.TrimSpace(n.Title) == "" {
		return gantry.Errorf(gantry.EINVALID, "A notification needs a user, a type and a title")
	}
	id, err := newID()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `INSERT INTO notifications (`+notificationColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, n.UserID, n.Type, n.Title, n.Message, false, n.ActionURL, tx.now); err != nil {
		return fmt.Errorf("create notification: %w", err)
	}
	if _, err := tx.exec(ctx, `DELETE FROM notifications WHERE user_id = ? AND id NOT IN (
			SELECT id FROM notifications WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
		n.UserID, n.UserID, gantry.KeepNotifications); err != nil {
		return fmt.Errorf("prune notifications: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	n.ID, n.Read, n.CreatedAt = id, false, tx.now
	return nil
}

// ListNotifications returns the owner's notifications matching f, newest
// first, at most f.Limit (gantry.DefaultNotificationLimit when ≤ 0), with
// the owner's unread and total counts.
func (x *Notifications) ListNotifications(ctx context.Context, userID string, f gantry.NotificationFilter) (*gantry.NotificationList, error) {
	db := x.db
	limit := f.Limit
	if limit <= 0 {
		limit = gantry.DefaultNotificationLimit
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	q := `SELECT ` + notificationColumns + ` FROM notifications WHERE user_id = ?`
	if f.UnreadOnly {
		q += ` AND read = FALSE`
	}
	rows, err := tx.query(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT ?`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	defer rows.Close()
	list := &gantry.NotificationList{Notifications: []*gantry.Notification{}}
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, err
		}
		list.Notifications = append(list.Notifications, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := tx.queryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN read THEN 0 ELSE 1 END), 0)
		FROM notifications WHERE user_id = ?`, userID).Scan(&list.Total, &list.UnreadCount); err != nil {
		return nil, fmt.Errorf("count notifications: %w", err)
	}
	return list, nil
}

// MarkNotificationRead marks the owner's notification read and returns it
// with the owner's unread count afterwards; ENOTFOUND when it is missing
// or someone else's. Marking a read notification again changes nothing.
func (x *Notifications) MarkNotificationRead(ctx context.Context, userID, id string) (*gantry.Notification, int, error) {
	db := x.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, `UPDATE notifications SET read = TRUE WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return nil, 0, fmt.Errorf("mark notification read: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, 0, gantry.Errorf(gantry.ENOTFOUND, msgNotificationNotFound)
	}
	n, err := scanNotification(tx.queryRow(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE id = ?`, id))
	if err != nil {
		return nil, 0, err
	}
	unread, err := countUnread(ctx, tx, userID)
	if err != nil {
		return nil, 0, err
	}
	return n, unread, tx.Commit()
}

// MarkAllNotificationsRead marks every notification of the owner read and
// returns how many were unread.
func (x *Notifications) MarkAllNotificationsRead(ctx context.Context, userID string) (int, error) {
	db := x.db
	return db.execCount(ctx, `UPDATE notifications SET read = TRUE WHERE user_id = ? AND read = FALSE`, userID)
}

// DeleteNotification removes the owner's notification and returns the
// owner's unread count afterwards; ENOTFOUND when it is missing or someone
// else's.
func (x *Notifications) DeleteNotification(ctx context.Context, userID, id string) (int, error) {
	db := x.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, `DELETE FROM notifications WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return 0, fmt.Errorf("delete notification: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, gantry.Errorf(gantry.ENOTFOUND, msgNotificationNotFound)
	}
	unread, err := countUnread(ctx, tx, userID)
	if err != nil {
		return 0, err
	}
	return unread, tx.Commit()
}

// ClearNotifications removes every notification of the owner and returns
// how many there were.
func (x *Notifications) ClearNotifications(ctx context.Context, userID string) (int, error) {
	db := x.db
	return db.execCount(ctx, `DELETE FROM notifications WHERE user_id = ?`, userID)
}

// execCount runs one statement in a transaction and returns the number of
// rows it touched.
func (db *DB) execCount(ctx context.Context, query string, args ...any) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", query[:min(len(query), 24)], err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return int(n), tx.Commit()
}

func countUnread(ctx context.Context, tx *Tx, userID string) (int, error) {
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM notifications WHERE user_id = ? AND read = FALSE`,
		userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count unread notifications: %w", err)
	}
	return n, nil
}

// scanNotification reads one row of notificationColumns from a *sql.Row
// or *sql.Rows.
func scanNotification(row interface{ Scan(...any) error }) (*gantry.Notification, error) {
	var n gantry.Notification
	if err := row.Scan(&n.ID, &n.UserID, &n.Type, &n.Title, &n.Message, &n.Read, &n.ActionURL,
		&n.CreatedAt); err != nil {
		return nil, fmt.Errorf("scan notification: %w", err)
	}
	n.CreatedAt = n.CreatedAt.UTC()
	return &n, nil
}
