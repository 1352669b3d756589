package store

import (
	"context"
	"database/sql"
)

// Exec runs a statement written with ? placeholders, for tests that set up
// rows no store method writes yet.
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	_, err := db.db.ExecContext(ctx, db.rebind(query), args...)
	return err
}

// RouteVersion returns a project's route version.
func (db *DB) RouteVersion(ctx context.Context, projectID string) (int64, error) {
	var v int64
	err := db.queryRow(ctx, `SELECT route_version FROM projects WHERE id = ?`, projectID).Scan(&v)
	return v, err
}

// MigrateDownTo rolls the schema back to version (its migrations' Down
// sections), for tests of what a migration does to existing rows.
func (db *DB) MigrateDownTo(ctx context.Context, version int64) error {
	p, err := db.migrations(ctx)
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}

// Migrate applies the migrations not applied yet.
func (db *DB) Migrate(ctx context.Context) error { return db.migrate(ctx) }

// GalleryCount counts the rows of gallery_apps, for tests of schemas older
// than the store's queries.
func (db *DB) GalleryCount(ctx context.Context) (int, error) {
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM gallery_apps`).Scan(&n)
	return n, err
}

// QueryRowForTest runs a single-row query written with ? placeholders.
func (db *DB) QueryRowForTest(ctx context.Context, query string, args ...any) *sql.Row {
	return db.queryRow(ctx, query, args...)
}

// StampRoutes stamps project's route with the next route seq in a
// transaction of its own, left open: the caller commits it (or rolls it
// back) with end, for tests of transitions whose commits interleave.
func (db *DB) StampRoutes(ctx context.Context, projectID string) (end func(commit bool) error, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if err := stampRoutes(ctx, tx, projectID, nil); err != nil {
		rollback(tx)
		return nil, err
	}
	return func(commit bool) error {
		if !commit {
			return tx.Rollback()
		}
		return tx.Commit()
	}, nil
}
