package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gantryhq/gantry"
)

// PreviewLabels lists every preview label the platform has routed (live
// or not) with whether anyone may see it: its project's repository is
// public, or its owner opened the project's previews (issue 24, point 20).
func (st previewAccess) PreviewLabels(ctx context.Context) ([]gantry.PreviewRoute, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, `SELECT pr.subdomain, p.repository, p.previews_open
		FROM preview_routes pr JOIN projects p ON p.id = pr.project_id`)
	if err != nil {
		return nil, fmt.Errorf("list preview labels: %w", err)
	}
	defer rows.Close()
	var out []gantry.PreviewRoute
	for rows.Next() {
		var l gantry.PreviewRoute
		var repo string
		var open bool
		if err := rows.Scan(&l.Label, &repo, &open); err != nil {
			return nil, fmt.Errorf("scan preview label: %w", err)
		}
		l.Open = open || !privateRepository(repo)
		out = append(out, l)
	}
	return out, rows.Err()
}

// privateRepository reports whether a project's repository column (JSON
// gantry.Repository) names a private repository; an unreadable one counts
// as private.
func privateRepository(repo string) bool {
	var r gantry.Repository
	if err := json.Unmarshal([]byte(repo), &r); err != nil {
		return true
	}
	return r.Private
}

// PreviewOwner returns the owner (user id) of the project whose preview
// label is label; ENOTFOUND when no project has it.
func (st previewAccess) PreviewOwner(ctx context.Context, label string) (string, error) {
	db := st.db
	var owner string
	err := db.queryRow(ctx, `SELECT p.user_id FROM preview_routes pr JOIN projects p ON p.id = pr.project_id
		WHERE pr.subdomain = ?`, label).Scan(&owner)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", gantry.Errorf(gantry.ENOTFOUND, "Preview not found")
		}
		return "", fmt.Errorf("find preview owner: %w", err)
	}
	return owner, nil
}

// PreviewAccess returns whether userID's project projectID has a private
// repository and whether its previews are open; ENOTFOUND when the project
// is not userID's.
func (st previewAccess) PreviewAccess(ctx context.Context, userID, projectID string) (gantry.PreviewAccess, error) {
	db := st.db
	var repo string
	var a gantry.PreviewAccess
	err := db.queryRow(ctx, `SELECT repository, previews_open FROM projects WHERE id = ? AND user_id = ?`,
		projectID, userID).Scan(&repo, &a.Open)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return a, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
		}
		return a, fmt.Errorf("read preview access: %w", err)
	}
	a.Private = privateRepository(repo)
	return a, nil
}

// SetPreviewsOpen opens (or closes) the previews of userID's project
// projectID to anyone with their address; ENOTFOUND when the project is
// not userID's.
func (st previewAccess) SetPreviewsOpen(ctx context.Context, userID, projectID string, open bool) (gantry.PreviewAccess, error) {
	db := st.db
	res, err := db.db.ExecContext(ctx, db.rebind(`UPDATE projects SET previews_open = ? WHERE id = ? AND user_id = ?`),
		open, projectID, userID)
	if err != nil {
		return gantry.PreviewAccess{}, fmt.Errorf("set previews open: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return gantry.PreviewAccess{}, err
	} else if n == 0 {
		return gantry.PreviewAccess{}, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	return db.PreviewAccess(ctx, userID, projectID)
}
