package store

import "context"

// Exec runs a statement written with ? placeholders, for tests that set up
// rows no store method writes yet.
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	_, err := db.db.ExecContext(ctx, db.rebind(query), args...)
	return err
}
