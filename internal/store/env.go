package store

import (
	"cmp"
	"context"
	"fmt"

	"github.com/gantryhq/gantry"
)

// ProjectEnv returns a project's environment variables in the order they
// were saved, values as stored (secret ones sealed).
func (st projects) ProjectEnv(ctx context.Context, projectID string) ([]gantry.EnvVar, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT key, value, is_secret, scope FROM project_env
		WHERE project_id = ? ORDER BY position, key`), projectID)
	if err != nil {
		return nil, fmt.Errorf("project env: %w", err)
	}
	defer rows.Close()
	out := []gantry.EnvVar{}
	for rows.Next() {
		var v gantry.EnvVar
		if err := rows.Scan(&v.Key, &v.Value, &v.IsSecret, &v.Scope); err != nil {
			return nil, fmt.Errorf("scan env: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// SetProjectEnv replaces the owner's project's environment variables with
// vars in one transaction; ENOTFOUND unless userID owns projectID. Secret
// values must be sealed by the caller.
func (st projects) SetProjectEnv(ctx context.Context, userID, projectID string, vars []gantry.EnvVar) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM projects WHERE id = ? AND user_id = ?`, projectID, userID).Scan(&n); err != nil {
		return fmt.Errorf("set env: %w", err)
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	if _, err := tx.exec(ctx, `DELETE FROM project_env WHERE project_id = ?`, projectID); err != nil {
		return fmt.Errorf("set env: %w", err)
	}
	for i, v := range vars {
		if _, err := tx.exec(ctx, `INSERT INTO project_env (project_id, key, value, is_secret, position, scope) VALUES (?, ?, ?, ?, ?, ?)`,
			projectID, v.Key, v.Value, v.IsSecret, i, cmp.Or(v.Scope, gantry.EnvScopeAll)); err != nil {
			return fmt.Errorf("set env %s: %w", v.Key, err)
		}
	}
	return tx.Commit()
}
