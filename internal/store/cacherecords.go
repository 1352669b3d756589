package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

// CacheRecords is the store's gantry.BuildCacheRecords: the build caches
// platform-wide and their evictions.
type CacheRecords struct{ db *DB }

// BuildCacheRecords returns the store's records of the build caches'
// own bounds.
func (db *DB) BuildCacheRecords() gantry.BuildCacheRecords { return &CacheRecords{db: db} }

// All lists every project's build caches, least recently used first.
func (c *CacheRecords) All(ctx context.Context) ([]gantry.BuildCache, error) {
	rows, err := c.db.db.QueryContext(ctx, `SELECT project_id, user_id, bytes, used_at FROM build_caches ORDER BY used_at, project_id`)
	if err != nil {
		return nil, fmt.Errorf("build caches: %w", err)
	}
	defer rows.Close()
	var out []gantry.BuildCache
	for rows.Next() {
		var b gantry.BuildCache
		if err := rows.Scan(&b.ProjectID, &b.UserID, &b.Bytes, &b.UsedAt); err != nil {
			return nil, fmt.Errorf("build caches: %w", err)
		}
		b.UsedAt = b.UsedAt.UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// Evicted forgets the project's build caches and records that they were
// evicted at at, in one transaction (the project gone: nothing to do).
func (c *CacheRecords) Evicted(ctx context.Context, projectID string, at time.Time) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `DELETE FROM build_caches WHERE project_id = ?`, projectID); err != nil {
		return fmt.Errorf("build cache evicted: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO build_cache_evictions (project_id, evicted_at)
		SELECT id, ? FROM projects WHERE id = ?
		ON CONFLICT (project_id) DO UPDATE SET evicted_at = excluded.evicted_at`, at.UTC(), projectID); err != nil {
		return fmt.Errorf("build cache evicted: %w", err)
	}
	return tx.Commit()
}

// Eviction returns when the project's build caches were last evicted
// (zero: never).
func (c *CacheRecords) Eviction(ctx context.Context, projectID string) (time.Time, error) {
	var at time.Time
	err := c.db.queryRow(ctx, `SELECT evicted_at FROM build_cache_evictions WHERE project_id = ?`, projectID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, fmt.Errorf("build cache eviction: %w", err)
	}
	return at.UTC(), nil
}
