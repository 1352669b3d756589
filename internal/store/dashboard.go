package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

var _ gantry.DashboardStore = (*DB)(nil)

// Dashboard computes the owner's dashboard in one read transaction: the
// counts of projects and of all, live and failed deployments and of those
// created since the first day of now's month (UTC), then the
// gantry.DashboardRecent newest projects and deployments. An unknown user
// has an empty dashboard.
func (db *DB) Dashboard(ctx context.Context, userID string, now time.Time) (*gantry.Dashboard, error) {
	now = now.UTC()
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	d := &gantry.Dashboard{
		RecentProjects:    []gantry.DashboardProject{},
		RecentDeployments: []gantry.DashboardDeployment{},
	}
	s := &d.Stats
	if err := tx.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM projects WHERE user_id = ?),
			COUNT(*),
			COALESCE(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN created_at >= ? THEN 1 ELSE 0 END), 0)
		FROM deployments WHERE user_id = ?`,
		userID, gantry.DeploymentLive, gantry.DeploymentFailed, monthStart, userID).
		Scan(&s.TotalProjects, &s.TotalDeployments, &s.ActiveDeployments, &s.FailedDeployments, &s.ThisMonth); err != nil {
		return nil, fmt.Errorf("dashboard stats: %w", err)
	}
	if d.RecentProjects, err = recentProjects(ctx, tx, userID); err != nil {
		return nil, err
	}
	if d.RecentDeployments, err = recentDeployments(ctx, tx, userID); err != nil {
		return nil, err
	}
	return d, nil
}

// recentProjects returns the owner's newest projects with the creation time
// of each one's newest deployment and the URL of its active deployment when
// that is live.
func recentProjects(ctx context.Context, tx *Tx, userID string) ([]gantry.DashboardProject, error) {
	rows, err := tx.query(ctx, `SELECT p.id, p.name, p.type, p.status, latest.created_at,
			COALESCE(ad.url, ''), COALESCE(ad.status, ''), COALESCE(ad.sleeping, FALSE)
		FROM projects p
		LEFT JOIN deployments ad ON ad.id = p.active_deployment_id
		LEFT JOIN deployments latest ON latest.id = (SELECT id FROM deployments
			WHERE project_id = p.id ORDER BY created_at DESC, id DESC LIMIT 1)
		WHERE p.user_id = ? ORDER BY p.created_at DESC, p.id DESC LIMIT ?`, userID, gantry.DashboardRecent)
	if err != nil {
		return nil, fmt.Errorf("recent projects: %w", err)
	}
	defer rows.Close()
	out := []gantry.DashboardProject{}
	for rows.Next() {
		var p gantry.DashboardProject
		var last sql.NullTime
		var url, status string
		if err := rows.Scan(&p.ID, &p.Name, &p.Type, &p.Status, &last, &url, &status, &p.Sleeping); err != nil {
			return nil, fmt.Errorf("scan recent project: %w", err)
		}
		if last.Valid {
			t := last.Time.UTC()
			p.LastDeployed = &t
		}
		if status == gantry.DeploymentLive && url != "" {
			p.URL = &url
		}
		p.Sleeping = p.Sleeping && status == gantry.DeploymentLive
		out = append(out, p)
	}
	return out, rows.Err()
}

// recentDeployments returns the owner's newest deployments with their
// project's name and, once the build ended, its duration.
func recentDeployments(ctx context.Context, tx *Tx, userID string) ([]gantry.DashboardDeployment, error) {
	rows, err := tx.query(ctx, `SELECT d.id, p.name, d.subdomain, d.status, d.build_info, d.created_at, d.sleeping
		FROM deployments d JOIN projects p ON p.id = d.project_id
		WHERE d.user_id = ? ORDER BY d.created_at DESC, d.id DESC LIMIT ?`, userID, gantry.DashboardRecent)
	if err != nil {
		return nil, fmt.Errorf("recent deployments: %w", err)
	}
	defer rows.Close()
	out := []gantry.DashboardDeployment{}
	for rows.Next() {
		var d gantry.DashboardDeployment
		var raw string
		if err := rows.Scan(&d.ID, &d.ProjectName, &d.Subdomain, &d.Status, &raw, &d.DeployedAt, &d.Sleeping); err != nil {
			return nil, fmt.Errorf("scan recent deployment: %w", err)
		}
		var info gantry.BuildInfo
		if err := json.Unmarshal([]byte(raw), &info); err != nil {
			return nil, fmt.Errorf("decode build info of deployment %s: %w", d.ID, err)
		}
		if info.EndTime != nil {
			ms := info.Duration
			d.BuildTime = &ms
		}
		d.DeployedAt = d.DeployedAt.UTC()
		d.Sleeping = d.Sleeping && d.Status == gantry.DeploymentLive
		out = append(out, d)
	}
	return out, rows.Err()
}
