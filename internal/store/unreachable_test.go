package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/store"
)

// TestUnreachable: a PostgreSQL server that refuses connections, or is
// shutting down or starting up, is the database being away (the API's
// 503); the request's own faults and coded errors are not.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	db, err := sql.Open("pgx", "postgres://gantry@"+addr+"/gantry?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refused := db.PingContext(context.Background())
	for _, c := range []struct {
		err  error
		want bool
	}{
		{refused, true},
		{fmt.Errorf("scan user: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}), true},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{&pgconn.PgError{Code: "08006", Message: "connection failure"}, true},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key"}, false},
		{gantry.Errorf(gantry.ENOTFOUND, "Deployment not found"), false},
		{errors.New("something else"), false},
		{nil, false},
	} {
		if got := store.Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
