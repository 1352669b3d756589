package store

import (
	"context"
	"fmt"

	"github.com/gantryhq/gantry"
)

// AppData records the projects' persistent data folders (issue 28, point
// 1) and their bytes as last measured: they count in the owner's storage
// budget (storageColumns).
type AppData struct{ db *DB }

// AppData returns the data folders' records.
func (db *DB) AppData() gantry.AppDataStore { return &AppData{db} }

var _ gantry.AppDataStore = (*AppData)(nil)

func (a *AppData) Measured(ctx context.Context, projectID, name string, bytes int64) error {
	db := a.db
	_, err := db.db.ExecContext(ctx, db.rebind(`INSERT INTO app_data (project_id, name, bytes, measured_at)
		SELECT id, ?, ?, ? FROM projects WHERE id = ?
		ON CONFLICT (project_id, name) DO UPDATE SET bytes = excluded.bytes, measured_at = excluded.measured_at`),
		name, bytes, db.now(), projectID)
	if err != nil {
		return fmt.Errorf("measured data folder: %w", err)
	}
	return nil
}

func (a *AppData) Folders(ctx context.Context, projectID string) ([]gantry.DataFolder, error) {
	db := a.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT name, bytes, measured_at FROM app_data
		WHERE project_id = ? ORDER BY name <> ?, name`), projectID, gantry.ProductionData)
	if err != nil {
		return nil, fmt.Errorf("data folders: %w", err)
	}
	defer rows.Close()
	out := []gantry.DataFolder{}
	for rows.Next() {
		var f gantry.DataFolder
		if err := rows.Scan(&f.Name, &f.Bytes, &f.MeasuredAt); err != nil {
			return nil, fmt.Errorf("data folders: %w", err)
		}
		f.MeasuredAt = f.MeasuredAt.UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

func (a *AppData) Forget(ctx context.Context, projectID, name string) error {
	db := a.db
	if _, err := db.db.ExecContext(ctx, db.rebind(`DELETE FROM app_data WHERE project_id = ? AND name = ?`), projectID, name); err != nil {
		return fmt.Errorf("forget data folder: %w", err)
	}
	return nil
}
