// Package storetest opens a fresh Gantry database for a test: SQLite in the
// test's temporary folder, or PostgreSQL when GANTRY_TEST_DATABASE_URL is
// set (scripts/with-postgres sets it), each test in a schema of its own so
// tests may run in parallel.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/gantryhq/gantry/internal/store"
)

// EnvURL names the environment variable holding the PostgreSQL URL of the
// test server.
const EnvURL = "GANTRY_TEST_DATABASE_URL"

// MustOpenDB opens a migrated, empty database that is closed (and, on
// PostgreSQL, dropped) when tb ends. It fails tb on any error.
func MustOpenDB(tb testing.TB) *store.DB {
	tb.Helper()
	ctx := context.Background()
	dsn := filepath.Join(tb.TempDir(), "gantry.db")
	if base := PostgresURL(); base != "" {
		dsn = mustCreateSchema(tb, base)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		tb.Fatalf("open test database: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close test database: %v", err)
		}
	})
	return db
}

// PostgresURL returns the test server's URL, or "" when tests run on SQLite.
func PostgresURL() string { return os.Getenv(EnvURL) }

// mustCreateSchema creates a schema with a random name on the server at
// base, registers its removal with tb, and returns a URL whose connections
// use it as their search_path.
func mustCreateSchema(tb testing.TB, base string) string {
	tb.Helper()
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("parse %s: %v", EnvURL, err)
	}
	var b [8]byte
	rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])

	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("connect to test server: %v", err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		tb.Fatalf("create schema: %v", err)
	}
	// Registered before MustOpenDB's Close, so it runs after it.
	tb.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
