package gantry

import (
	"context"
	"time"
)

// Session is one signed-in session: what a bearer token stands for on the
// server. ID is the token's id (its jti claim). A token works only while
// its session exists and has not expired, so ending a session (deleting
// it) signs that token out at once.
type Session struct {
	ID        string
	UserID    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SessionStore persists sessions. Implemented by internal/store for SQLite
// and PostgreSQL.
type SessionStore interface {
	// CreateSession stores s and deletes every session (of any account)
	// that has expired by s.CreatedAt. A missing user is ENOTFOUND.
	CreateSession(ctx context.Context, s *Session) error
	// FindSessionUser returns the account of session id when the session
	// belongs to userID and has not expired by now; ENOTFOUND when it was
	// ended, has expired, belongs to another account, or the account is
	// gone. It is the one query every authenticated request makes.
	FindSessionUser(ctx context.Context, id, userID string, now time.Time) (*User, error)
	// EndSession deletes session id; ENOTFOUND when there is none.
	EndSession(ctx context.Context, id string) error
	// EndUserSessions deletes every session of userID except keepID (""
	// keeps none) and returns how many it deleted.
	EndUserSessions(ctx context.Context, userID, keepID string) (int, error)
	// ChangePasswordHash replaces userID's password hash and deletes every
	// session of userID except keepID, in one transaction, and returns how
	// many sessions it deleted. A missing user is ENOTFOUND.
	ChangePasswordHash(ctx context.Context, userID, hash, keepID string) (int, error)
}
