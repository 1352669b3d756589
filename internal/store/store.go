// Package store is the only package that sees SQL. It keeps Gantry's state
// in SQLite (the default, one file in the data folder) or PostgreSQL (when
// the database URL is postgres://…), through the same code: queries are
// written once with ? placeholders and rebound to $1, $2… for PostgreSQL.
//
// Migrations live in migrations/sqlite and migrations/postgres (embedded)
// and are applied by Open. Methods that touch several tables start a
// transaction with BeginTx and compose unexported helpers that take the *Tx.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialects, as Dialect reports them and GET /api/health shows them.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

//go:embed migrations
var migrations embed.FS

// DB is an open Gantry database. Create it with Open; it is safe for
// concurrent use.
type DB struct {
	// The store's parts, one per entity or capability, each a type of
	// its own over this connection (their methods are DB's):
	users         // user.go: accounts, plans, sign-in bookkeeping
	sessions      // session.go: sign-in sessions and tokens
	projects      // project.go, env.go: projects, their settings and variables
	deployments   // deployment.go: deployments, the build queue, logs
	transitions   // transition.go: status transitions and the routes they move
	githubHooks   // githubhook.go, github.go: webhooks, deliveries, pull requests
	buildCaches   // cache.go: the build caches' records
	previewAccess // previewaccess.go: who may open which preview

	db      *sql.DB
	dialect string

	// Now returns the current time; tests replace it. Stored times are
	// truncated to milliseconds and kept in UTC.
	Now func() time.Time
}

// PostgresMaxConns caps the connections one DB opens to PostgreSQL.
const PostgresMaxConns = 20

// Open connects to the database named by dsn and applies every pending
// migration. A dsn starting with postgres:// or postgresql:// selects
// PostgreSQL (through pgx; any parameter pgx knows, such as sslmode or
// search_path, may be given). Anything else is the path of a SQLite file,
// optionally prefixed with "sqlite://" or "file:", created when missing and
// opened in WAL mode with a 5 s busy timeout, foreign keys on and
// BEGIN IMMEDIATE transactions (see docs/operations.md); the file and its
// -wal and -shm companions are readable by their owner only (mode 0600,
// see privateSQLiteFiles). On PostgreSQL it opens at most
// PostgresMaxConns connections at once.
func Open(ctx context.Context, dsn string) (*DB, error) {
	db := &DB{Now: time.Now}
	db.users, db.sessions, db.projects, db.deployments = users{db}, sessions{db}, projects{db}, deployments{db}
	db.transitions, db.githubHooks, db.buildCaches, db.previewAccess = transitions{db}, githubHooks{db}, buildCaches{db}, previewAccess{db}
	var err error
	if isPostgres(dsn) {
		db.dialect = Postgres
		db.db, err = sql.Open("pgx", dsn)
		if err == nil {
			// Bursts queue in the pool rather than exhausting the server's
			// connection slots (max_connections is 100 by default).
			db.db.SetMaxOpenConns(PostgresMaxConns)
		}
	} else {
		db.dialect = SQLite
		if err := privateSQLiteFiles(sqlitePath(dsn)); err != nil {
			return nil, fmt.Errorf("open %s database: %w", db.dialect, err)
		}
		db.db, err = sql.Open("sqlite", SQLiteDSN(dsn))
	}
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", db.dialect, err)
	}
	if err := db.db.PingContext(ctx); err != nil {
		db.db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", db.dialect, err)
	}
	if err := db.migrate(ctx); err != nil {
		db.db.Close()
		return nil, err
	}
	return db, nil
}

// isPostgres reports whether dsn names a PostgreSQL server.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// SQLiteDSN turns a file path (optionally prefixed with "sqlite://" or
// "file:") into the modernc.org/sqlite DSN Gantry uses: busy timeout first,
// then WAL, foreign keys, synchronous NORMAL, times written in SQLite's
// format, and BEGIN IMMEDIATE for read-write transactions so concurrent
// writers wait for each other instead of failing with "database is locked".
func SQLiteDSN(path string) string {
	// The path is a URI path: escape what would end it early.
	u := url.URL{Path: sqlitePath(path)}
	return "file:" + u.EscapedPath() + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(ON)&_pragma=synchronous(NORMAL)&_time_format=sqlite&_txlock=immediate"
}

// sqlitePath returns the file path a SQLite dsn names, without its
// "sqlite://" or "file:" prefix and query.
func sqlitePath(dsn string) string {
	path := strings.TrimPrefix(dsn, "sqlite://")
	path = strings.TrimPrefix(path, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path
}

// sqliteFileMode is the mode of the SQLite database file: it holds
// password hashes, sealed tokens and every project's secrets, and only the
// platform reads it.
const sqliteFileMode = 0o600

// privateSQLiteFiles creates the database file at path with
// sqliteFileMode when it is missing (SQLite itself would make it 0644
// under the usual umask), and takes group and other permissions off it
// and off its -wal and -shm companions when an older version left them
// there. SQLite gives the companions it creates the database file's mode.
func privateSQLiteFiles(path string) error {
	if path == "" || strings.HasPrefix(path, ":memory:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, sqliteFileMode)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		if fi.Mode().Perm()&^sqliteFileMode != 0 {
			if err := os.Chmod(p, sqliteFileMode); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrate applies the embedded migrations of db's dialect, also those
// numbered below the newest applied one (out of order). On PostgreSQL it
// holds an advisory lock, keyed by the current schema, so replicas starting
// together migrate once.
func (db *DB) migrate(ctx context.Context) error {
	p, err := db.migrations(ctx)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// migrations returns the goose provider of db's dialect's migrations.
func (db *DB) migrations(ctx context.Context) (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations/"+db.dialect)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	dialect := goose.DialectSQLite3
	// Migrations written on parallel branches can land in another order
	// than their numbers: a database that already has a later one still
	// gets an earlier one that arrived after it.
	opts := []goose.ProviderOption{goose.WithAllowOutofOrder(true)}
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
		var schema string
		if err := db.db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return nil, fmt.Errorf("migrations: current schema: %w", err)
		}
		h := fnv.New64a()
		h.Write([]byte("gantry migrations " + schema))
		locker, err := lock.NewPostgresSessionLocker(
			lock.WithLockID(int64(h.Sum64()>>1)),
			lock.WithLockTimeout(1, 300),
		)
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db.db, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// Close closes the database.
func (db *DB) Close() error { return db.db.Close() }

// Dialect returns SQLite or Postgres.
func (db *DB) Dialect() string { return db.dialect }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.db.PingContext(ctx) }

// SchemaVersion returns the number of the newest applied migration.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version").Scan(&v)
	return v, err
}

// now returns db.Now() in UTC, truncated to milliseconds so that SQLite and
// PostgreSQL (microseconds) give back the same value.
func (db *DB) now() time.Time { return db.Now().UTC().Truncate(time.Millisecond) }

// Tx is a transaction with the rebinding query helpers, and the time it
// began: every row it writes carries the same timestamp.
type Tx struct {
	*sql.Tx
	db  *DB
	now time.Time
}

// BeginTx starts a transaction. On SQLite a read-write transaction takes
// the write lock at once (BEGIN IMMEDIATE); pass &sql.TxOptions{ReadOnly:
// true} for transactions that only read.
func (db *DB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	tx, err := db.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Tx{Tx: tx, db: db, now: db.now()}, nil
}

// exec runs a statement written with ? placeholders.
func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.ExecContext(ctx, tx.db.rebind(query), args...)
}

// query runs a query written with ? placeholders.
func (tx *Tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.QueryContext(ctx, tx.db.rebind(query), args...)
}

// queryRow runs a single-row query written with ? placeholders.
func (tx *Tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.QueryRowContext(ctx, tx.db.rebind(query), args...)
}

// queryRow runs a single-row query outside any transaction.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return db.db.QueryRowContext(ctx, db.rebind(query), args...)
}

// rebind rewrites ? placeholders to $1, $2… for PostgreSQL. Question marks
// inside single-quoted literals are left alone.
func (db *DB) rebind(query string) string {
	if db.dialect != Postgres || !strings.Contains(query, "?") {
		return query
	}
	return Rebind(query)
}

// Rebind rewrites the ? placeholders of query to $1, $2…, leaving question
// marks inside single-quoted SQL literals alone.
func Rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	n, quoted := 0, false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'':
			quoted = !quoted // '' inside a literal toggles twice: still quoted
		case c == '?' && !quoted:
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// newID returns a new random, time-ordered string id (UUIDv7).
func newID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return id.String(), nil
}

// uniqueViolation reports whether err is a unique-constraint violation and
// returns what the database says about it (the index or column name), so
// callers can tell which value was taken.
func uniqueViolation(err error) (detail string, ok bool) {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return se.Error(), true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName + " " + pe.Detail, true
	}
	return "", false
}

// rollback ends tx when it was not committed; use it with defer.
func rollback(tx *Tx) { _ = tx.Rollback() }
