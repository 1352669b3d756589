package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gantryhq/gantry"
)

// Blobs records which blobs (files stored by content, internal/blobs)
// each deployment's files link to, so that an account's storage counts
// each blob once (storageColumns).
type Blobs struct{ db *DB }

// Blobs returns the deployments' blob records.
func (db *DB) Blobs() gantry.BlobRecords { return &Blobs{db} }

// dupBlobBytes sums, for the user row u, the bytes of the blob rows that
// repeat a blob an earlier deployment of the same account (by id) already
// links to — what the deployments' files_size count more than once. Only
// deployments that keep files (files_size > 0) count; extra (with a
// leading AND) narrows both sides, over the aliases d and e.
func dupBlobBytes(extraD, extraE string) string {
	return `(SELECT CAST(COALESCE(SUM(b.bytes), 0) AS BIGINT) FROM deployment_blobs b
		JOIN deployments d ON d.id = b.deployment_id
		WHERE b.user_id = u.id AND d.files_size > 0` + extraD + ` AND EXISTS (SELECT 1 FROM deployment_blobs c
			JOIN deployments e ON e.id = c.deployment_id
			WHERE c.user_id = b.user_id AND c.hash = b.hash AND c.deployment_id < b.deployment_id
				AND e.files_size > 0` + extraE + `))`
}

// Record sets deployment id's blobs and files size, in one transaction.
func (b *Blobs) Record(ctx context.Context, id string, refs []gantry.BlobRef, filesSize int64) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	var userID string
	if err := tx.queryRow(ctx, `SELECT user_id FROM deployments WHERE id = ?`, id).Scan(&userID); errors.Is(err, sql.ErrNoRows) {
		return gantry.Errorf(gantry.ENOTFOUND, msgDeploymentNotFound)
	} else if err != nil {
		return fmt.Errorf("record blobs: %w", err)
	}
	if _, err := tx.exec(ctx, `DELETE FROM deployment_blobs WHERE deployment_id = ?`, id); err != nil {
		return fmt.Errorf("record blobs: %w", err)
	}
	const batch = 200
	for len(refs) > 0 {
		n := min(batch, len(refs))
		args := make([]any, 0, 4*n)
		for _, r := range refs[:n] {
			args = append(args, id, userID, r.Hash, r.Bytes)
		}
		q := `INSERT INTO deployment_blobs (deployment_id, user_id, hash, bytes) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", n), ", ")
		if _, err := tx.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("record blobs: %w", err)
		}
		refs = refs[n:]
	}
	if _, err := tx.exec(ctx, `UPDATE deployments SET files_size = ? WHERE id = ?`, filesSize, id); err != nil {
		return fmt.Errorf("record blobs: %w", err)
	}
	return tx.Commit()
}

// Forget drops deployment id's blob rows.
func (b *Blobs) Forget(ctx context.Context, id string) error {
	if _, err := b.db.db.ExecContext(ctx, b.db.rebind(`DELETE FROM deployment_blobs WHERE deployment_id = ?`), id); err != nil {
		return fmt.Errorf("forget blobs: %w", err)
	}
	return nil
}

// FilesWithout is userID's Files figure (storageColumns) counting none of
// the deployments ids.
func (b *Blobs) FilesWithout(ctx context.Context, userID string, ids []string) (int64, error) {
	not := func(alias string) string {
		if len(ids) == 0 {
			return ""
		}
		return ` AND ` + alias + `.id NOT IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `)`
	}
	var args []any
	for range 3 {
		for _, id := range ids {
			args = append(args, id)
		}
	}
	args = append(args, userID)
	var n int64
	err := b.db.queryRow(ctx, `SELECT
		(SELECT CAST(COALESCE(SUM(files_size), 0) AS BIGINT) FROM deployments f WHERE f.user_id = u.id`+not("f")+`) - `+
		dupBlobBytes(not("d"), not("e"))+` FROM users u WHERE u.id = ?`, args...).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, gantry.Errorf(gantry.ENOTFOUND, "User not found")
	} else if err != nil {
		return 0, fmt.Errorf("storage without: %w", err)
	}
	return n, nil
}

// Unused returns those of userID's blobs hashes that no deployment of
// userID links to (deployment_blobs_user_hash answers each).
func (b *Blobs) Unused(ctx context.Context, userID string, hashes []string) ([]string, error) {
	var unused []string
	const batch = 200
	for len(hashes) > 0 {
		n := min(batch, len(hashes))
		args := make([]any, 0, n+1)
		args = append(args, userID)
		for _, h := range hashes[:n] {
			args = append(args, h)
		}
		rows, err := b.db.db.QueryContext(ctx, b.db.rebind(`SELECT DISTINCT hash FROM deployment_blobs WHERE user_id = ? AND hash IN (`+
			strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("unused blobs: %w", err)
		}
		used := map[string]bool{}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return nil, fmt.Errorf("unused blobs: %w", err)
			}
			used[h] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("unused blobs: %w", err)
		}
		for _, h := range hashes[:n] {
			if !used[h] {
				unused = append(unused, h)
			}
		}
		hashes = hashes[n:]
	}
	return unused, nil
}

// sqliteObjectLocks are Guard's locks on SQLite, where one process holds
// the database: account id → *sync.RWMutex.
var sqliteObjectLocks sync.Map

// Guard takes userID's object store lock until release is called:
// shared while a deployment's files are uploaded, exclusive while a
// removed deployment's blobs are looked up (Unused) and deleted, so no
// blob an upload found in the store (and so did not send) is deleted
// under it. On PostgreSQL it is an advisory lock of the schema, held by a
// transaction on a connection of its own (every replica sees it); on
// SQLite a lock in this process.
func (b *Blobs) Guard(ctx context.Context, userID string, exclusive bool) (release func(), err error) {
	if b.db.dialect != Postgres {
		v, _ := sqliteObjectLocks.LoadOrStore(userID, new(sync.RWMutex))
		l := v.(*sync.RWMutex)
		if exclusive {
			l.Lock()
			return l.Unlock, nil
		}
		l.RLock()
		return l.RUnlock, nil
	}
	conn, err := b.db.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("object store lock: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("object store lock: %w", err)
	}
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := tx.ExecContext(ctx, `SELECT `+fn+`(hashtextextended('gantry-objects:' || current_schema() || ':' || $1, 0))`, userID); err != nil {
		tx.Rollback()
		conn.Close()
		return nil, fmt.Errorf("object store lock: %w", err)
	}
	return func() {
		_ = tx.Rollback()
		_ = conn.Close()
	}, nil
}
