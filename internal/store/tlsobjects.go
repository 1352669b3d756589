package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"time"
	"unicode/utf8"
)

// TLSObjects keeps certmagic's storage (certificates, their keys, ACME
// accounts and challenge tokens) and its named locks in the database, so
// that every replica serves the same certificates and one orders each
// (tlsedge.SharedStorage adapts it to certmagic.Storage). Keys are
// slash-separated paths; a "folder" is a prefix of other keys.
type TLSObjects struct{ db *DB }

// TLSObjects returns the database's certificate storage.
func (db *DB) TLSObjects() *TLSObjects { return &TLSObjects{db} }

// under is the condition "key is below prefix/" (its two arguments:
// the length of prefix/ in characters, and prefix/).
const under = `substr(key, 1, CAST(? AS INTEGER)) = ?`

func underArgs(prefix string) []any {
	p := prefix + "/"
	return []any{utf8.RuneCountInString(p), p}
}

// PutObject stores value at key, modified at modified.
func (t *TLSObjects) PutObject(ctx context.Context, key string, value []byte, modified time.Time) error {
	_, err := t.db.db.ExecContext(ctx, t.db.rebind(`INSERT INTO tls_objects (key, value, modified) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, modified = excluded.modified`),
		key, value, modified.UnixMicro())
	return err
}

// GetObject returns key's value and when it was stored; fs.ErrNotExist
// when there is none.
func (t *TLSObjects) GetObject(ctx context.Context, key string) ([]byte, time.Time, error) {
	var v []byte
	var mod int64
	err := t.db.queryRow(ctx, `SELECT value, modified FROM tls_objects WHERE key = ?`, key).Scan(&v, &mod)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, fs.ErrNotExist
	}
	return v, time.UnixMicro(mod), err
}

// DeleteObjects deletes key and every key below key/.
func (t *TLSObjects) DeleteObjects(ctx context.Context, key string) error {
	_, err := t.db.db.ExecContext(ctx, t.db.rebind(`DELETE FROM tls_objects WHERE key = ? OR `+under),
		append([]any{key}, underArgs(key)...)...)
	return err
}

// ObjectKeys returns every key below prefix/ (all of them when prefix is
// ""), in order.
func (t *TLSObjects) ObjectKeys(ctx context.Context, prefix string) ([]string, error) {
	q, args := `SELECT key FROM tls_objects ORDER BY key`, []any(nil)
	if prefix != "" {
		q, args = `SELECT key FROM tls_objects WHERE `+under+` ORDER BY key`, underArgs(prefix)
	}
	return scanStrings(t.db.db.QueryContext(ctx, t.db.rebind(q), args...))
}

// TryLockName takes the lock name for owner until until, when nobody
// holds it or its holder's time has passed at now; it reports whether it
// did. One atomic statement: two replicas never both get it.
func (t *TLSObjects) TryLockName(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	var got string
	err := t.db.queryRow(ctx, `INSERT INTO tls_locks (name, owner, expires) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
		WHERE tls_locks.expires < ?
		RETURNING owner`, name, owner, until.UnixMicro(), now.UnixMicro()).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil && got == owner, err
}

// RenewLock pushes owner's hold of name to until; false when owner no
// longer holds it.
func (t *TLSObjects) RenewLock(ctx context.Context, name, owner string, until time.Time) (bool, error) {
	res, err := t.db.db.ExecContext(ctx, t.db.rebind(`UPDATE tls_locks SET expires = ? WHERE name = ? AND owner = ?`),
		until.UnixMicro(), name, owner)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UnlockName lets go of owner's hold of name (nothing when another holds
// it now).
func (t *TLSObjects) UnlockName(ctx context.Context, name, owner string) error {
	_, err := t.db.db.ExecContext(ctx, t.db.rebind(`DELETE FROM tls_locks WHERE name = ? AND owner = ?`), name, owner)
	return err
}
