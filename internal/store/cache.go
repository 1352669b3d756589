package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

// SetBuildCache records the bytes a project's build caches take and that a
// build used them at usedAt (the owner's storage counts them); bytes <= 0
// forgets them. ENOTFOUND when the project is gone.
func (st buildCaches) SetBuildCache(ctx context.Context, projectID string, bytes int64, usedAt time.Time) error {
	db := st.db
	if bytes <= 0 {
		return db.DeleteBuildCache(ctx, projectID)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, `INSERT INTO build_caches (project_id, user_id, bytes, used_at)
		SELECT id, user_id, ?, ? FROM projects WHERE id = ?
		ON CONFLICT (project_id) DO UPDATE SET bytes = excluded.bytes, used_at = excluded.used_at`,
		bytes, usedAt.UTC(), projectID)
	if err != nil {
		return fmt.Errorf("set build cache: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	return tx.Commit()
}

// TouchBuildCache records that a build used the project's caches at usedAt
// (no row: nothing to do).
func (st buildCaches) TouchBuildCache(ctx context.Context, projectID string, usedAt time.Time) error {
	db := st.db
	_, err := db.db.ExecContext(ctx, db.rebind(`UPDATE build_caches SET used_at = ? WHERE project_id = ?`), usedAt.UTC(), projectID)
	return err
}

// DeleteBuildCache forgets the project's build caches (none: no error).
func (st buildCaches) DeleteBuildCache(ctx context.Context, projectID string) error {
	db := st.db
	_, err := db.db.ExecContext(ctx, db.rebind(`DELETE FROM build_caches WHERE project_id = ?`), projectID)
	return err
}

// BuildCaches lists the owner's projects' build caches, least recently
// used first (the order of eviction).
func (st buildCaches) BuildCaches(ctx context.Context, userID string) ([]gantry.BuildCache, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT project_id, user_id, bytes, used_at FROM build_caches
		WHERE user_id = ? ORDER BY used_at, project_id`), userID)
	if err != nil {
		return nil, fmt.Errorf("build caches: %w", err)
	}
	defer rows.Close()
	var out []gantry.BuildCache
	for rows.Next() {
		var c gantry.BuildCache
		if err := rows.Scan(&c.ProjectID, &c.UserID, &c.Bytes, &c.UsedAt); err != nil {
			return nil, fmt.Errorf("build caches: %w", err)
		}
		c.UsedAt = c.UsedAt.UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetDeploymentDiagnosis records why the deployment failed (nil: nothing
// diagnosed). ENOTFOUND when it no longer exists.
func (st buildCaches) SetDeploymentDiagnosis(ctx context.Context, id string, d *gantry.Diagnosis) error {
	db := st.db
	v := ""
	if d != nil {
		b, err := json.Marshal(d)
		if err != nil {
			return err
		}
		v = string(b)
	}
	return db.execOne(ctx, msgDeploymentNotFound, `UPDATE deployments SET diagnosis = ? WHERE id = ?`, v, id)
}
