package store

import (
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unreachable reports whether err says that the PostgreSQL server could
// not be reached or dropped the connection: it refused or timed out a
// connection, is shutting down or starting up (SQLSTATE 57P01–57P03), a
// connection exception (class 08), or a connection that broke in use.
// Such an error is the database being away (restarted, failed over, cut
// off), not a fault of the request: the API answers it 503 (api.Server's
// Unreachable).
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return strings.HasPrefix(pg.Code, "08") || pg.Code == "57P01" || pg.Code == "57P02" || pg.Code == "57P03"
	}
	// pgconn's own errors of a connection (closed, broken while reading
	// or writing, timed out) say whether they are safe to retry.
	var conn interface{ SafeToRetry() bool }
	return errors.As(err, &conn)
}
