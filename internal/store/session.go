package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

var _ gantry.SessionStore = (*DB)(nil)

// CreateSession stores s (its ID, UserID and times, truncated to
// milliseconds in UTC) and deletes every session that has expired by
// s.CreatedAt, so the table holds live sessions and those ended by time
// since the last sign-in. A missing user is ENOTFOUND.
func (st sessions) CreateSession(ctx context.Context, s *gantry.Session) error {
	db := st.db
	s.CreatedAt = s.CreatedAt.UTC().Truncate(time.Millisecond)
	s.ExpiresAt = s.ExpiresAt.UTC().Truncate(time.Millisecond)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, s.CreatedAt); err != nil {
		return fmt.Errorf("delete expired sessions: %w", err)
	}
	res, err := tx.exec(ctx, `INSERT INTO sessions (id, user_id, created_at, expires_at)
		SELECT ?, id, ?, ? FROM users WHERE id = ?`, s.ID, s.CreatedAt, s.ExpiresAt, s.UserID)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "User not found")
	}
	return tx.Commit()
}

// FindSessionUser returns the account of session id, in one query, when
// the session belongs to userID and expires after now. A session that was
// ended or has expired, another account's session, and a deleted account
// are all ENOTFOUND.
func (st sessions) FindSessionUser(ctx context.Context, id, userID string, now time.Time) (*gantry.User, error) {
	db := st.db
	return scanUser(db.queryRow(ctx, `SELECT `+userColumns+` FROM users
		WHERE id = ? AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ? AND s.user_id = users.id AND s.expires_at > ?)`,
		userID, id, now.UTC().Truncate(time.Millisecond)))
}

// EndSession deletes session id; ENOTFOUND when there is none.
func (st sessions) EndSession(ctx context.Context, id string) error {
	db := st.db
	res, err := db.db.ExecContext(ctx, db.rebind(`DELETE FROM sessions WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Session not found")
	}
	return nil
}

// EndUserSessions deletes every session of userID except keepID ("" keeps
// none) and returns how many it deleted.
func (st sessions) EndUserSessions(ctx context.Context, userID, keepID string) (int, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	n, err := endUserSessions(ctx, tx, userID, keepID)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// ChangePasswordHash replaces userID's password hash and deletes every
// session of the account except keepID, in one transaction, so that no
// request can use another session once the new password is in place. It
// returns how many sessions it deleted; a missing user is ENOTFOUND.
func (st sessions) ChangePasswordHash(ctx context.Context, userID, hash, keepID string) (int, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`, hash, tx.now, userID)
	if err != nil {
		return 0, fmt.Errorf("update password: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 0 {
		return 0, gantry.Errorf(gantry.ENOTFOUND, "User not found")
	}
	n, err := endUserSessions(ctx, tx, userID, keepID)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

func endUserSessions(ctx context.Context, tx *Tx, userID, keepID string) (int, error) {
	res, err := tx.exec(ctx, `DELETE FROM sessions WHERE user_id = ? AND id <> ?`, userID, keepID)
	if err != nil {
		return 0, fmt.Errorf("end sessions: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// CountSessions returns the number of sessions stored (live or expired
// but not yet deleted) of userID, or of every account when userID is "".
func (st sessions) CountSessions(ctx context.Context, userID string) (int, error) {
	db := st.db
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM sessions WHERE user_id = ? OR ? = ''`, userID, userID).Scan(&n)
	return n, err
}
