package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/secret"
)

// DeliveryRetention is how long handled GitHub delivery ids are kept to
// refuse replays; GitHub redelivers only recent deliveries.
const DeliveryRetention = 30 * 24 * time.Hour

// hookColumns are the github_hooks columns (aliased h) and the project's
// owner (projects p), in the order scanHook reads them.
const hookColumns = `h.project_id, p.user_id, h.repo_id, h.repo_name, h.hook_id, h.secret, h.error, h.last_at,
	h.last_event, h.last_action, h.last_result, h.last_message, h.created_at, h.updated_at`

const hookFrom = ` FROM github_hooks h JOIN projects p ON p.id = h.project_id `

// SaveGitHubHook stores h as its project's webhook (one per project),
// replacing the one it had; the last delivery is kept. h.Secret must be
// sealed (internal/secret). A missing project is ENOTFOUND.
func (st githubHooks) SaveGitHubHook(ctx context.Context, h *gantry.GitHubHook) error {
	db := st.db
	if !secret.IsSealed(h.Secret) {
		return errors.New("store: refusing to store a webhook secret that is not encrypted")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM projects WHERE id = ?`, h.ProjectID).Scan(&n); err != nil {
		return fmt.Errorf("find project: %w", err)
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	res, err := tx.exec(ctx, `UPDATE github_hooks SET repo_id = ?, repo_name = ?, hook_id = ?, secret = ?, error = ?,
		updated_at = ? WHERE project_id = ?`, h.RepoID, h.RepoName, h.HookID, h.Secret, h.Error, tx.now, h.ProjectID)
	if err != nil {
		return fmt.Errorf("save github hook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		if _, err := tx.exec(ctx, `INSERT INTO github_hooks (project_id, repo_id, repo_name, hook_id, secret, error,
				created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			h.ProjectID, h.RepoID, h.RepoName, h.HookID, h.Secret, h.Error, tx.now, tx.now); err != nil {
			return fmt.Errorf("save github hook: %w", err)
		}
		h.CreatedAt = tx.now
	}
	h.UpdatedAt = tx.now
	return tx.Commit()
}

// FindGitHubHook returns the webhook of projectID; ENOTFOUND when it has
// none.
func (st githubHooks) FindGitHubHook(ctx context.Context, projectID string) (*gantry.GitHubHook, error) {
	db := st.db
	return scanHook(db.queryRow(ctx, `SELECT `+hookColumns+hookFrom+`WHERE h.project_id = ?`, projectID))
}

// GitHubHookByHookID returns the webhook whose GitHub id
// (X-GitHub-Hook-ID) is hookID; ENOTFOUND when none is (0 never is).
func (st githubHooks) GitHubHookByHookID(ctx context.Context, hookID int64) (*gantry.GitHubHook, error) {
	db := st.db
	if hookID <= 0 {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Webhook not found")
	}
	return scanHook(db.queryRow(ctx, `SELECT `+hookColumns+hookFrom+`WHERE h.hook_id = ?
		ORDER BY h.created_at, h.project_id LIMIT 1`, hookID))
}

// GitHubHooksByRepo returns the webhooks of every project made from GitHub
// repository repoID (several projects may share one), oldest first.
func (st githubHooks) GitHubHooksByRepo(ctx context.Context, repoID int64) ([]*gantry.GitHubHook, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT `+hookColumns+hookFrom+`WHERE h.repo_id = ?
		ORDER BY h.created_at, h.project_id`), repoID)
	if err != nil {
		return nil, fmt.Errorf("list github hooks: %w", err)
	}
	defer rows.Close()
	var out []*gantry.GitHubHook
	for rows.Next() {
		h, err := scanHook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// RecordGitHubDelivery stores d as the last delivery of projectID's
// webhook. A project without a webhook is ENOTFOUND.
func (st githubHooks) RecordGitHubDelivery(ctx context.Context, projectID string, d gantry.GitHubDelivery) error {
	db := st.db
	res, err := db.db.ExecContext(ctx, db.rebind(`UPDATE github_hooks SET last_at = ?, last_event = ?, last_action = ?,
		last_result = ?, last_message = ? WHERE project_id = ?`),
		d.At.UTC().Truncate(time.Millisecond), d.Event, d.Action, d.Result, d.Message, projectID)
	if err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Webhook not found")
	}
	return nil
}

// ClaimGitHubDelivery records delivery key id as handled and reports
// whether it was new: false means it was handled already (a replay).
// ghhook keys a delivery by its webhook and the SHA-256 of its body, not
// by X-GitHub-Delivery, which is not signed. Ids older than DeliveryRetention are forgotten.
func (st githubHooks) ClaimGitHubDelivery(ctx context.Context, id string) (bool, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `DELETE FROM github_deliveries WHERE received_at < ?`, tx.now.Add(-DeliveryRetention)); err != nil {
		return false, fmt.Errorf("forget old deliveries: %w", err)
	}
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM github_deliveries WHERE id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("find delivery: %w", err)
	} else if n > 0 {
		return false, nil
	}
	if _, err := tx.exec(ctx, `INSERT INTO github_deliveries (id, received_at) VALUES (?, ?)`, id, tx.now); err != nil {
		if _, ok := uniqueViolation(err); ok {
			return false, nil // another replica took it first (PostgreSQL)
		}
		return false, fmt.Errorf("claim delivery: %w", err)
	}
	return true, tx.Commit()
}

type scanner interface{ Scan(dest ...any) error }

func scanHook(row scanner) (*gantry.GitHubHook, error) {
	var (
		h    gantry.GitHubHook
		last gantry.GitHubDelivery
		at   sql.NullTime
	)
	err := row.Scan(&h.ProjectID, &h.UserID, &h.RepoID, &h.RepoName, &h.HookID, &h.Secret, &h.Error, &at, &last.Event,
		&last.Action, &last.Result, &last.Message, &h.CreatedAt, &h.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Webhook not found")
	} else if err != nil {
		return nil, fmt.Errorf("scan github hook: %w", err)
	}
	if at.Valid {
		last.At = at.Time.UTC()
		h.Last = &last
	}
	h.CreatedAt, h.UpdatedAt = h.CreatedAt.UTC(), h.UpdatedAt.UTC()
	return &h, nil
}

const pullColumns = `project_id, number, title, author, head_branch, head_sha, fork, state, url, approved_sha,
	deployment_id, comment_id, updated_at`

// SaveGitHubPullRequest stores pr (keyed by project and number), replacing
// what was stored; it sets pr.UpdatedAt. A missing project is ENOTFOUND.
func (st githubHooks) SaveGitHubPullRequest(ctx context.Context, pr *gantry.GitHubPullRequest) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, `UPDATE github_pull_requests SET title = ?, author = ?, head_branch = ?, head_sha = ?,
			fork = ?, state = ?, url = ?, approved_sha = ?, deployment_id = ?, comment_id = ?, updated_at = ?
		WHERE project_id = ? AND number = ?`,
		pr.Title, pr.Author, pr.HeadBranch, pr.HeadSHA, pr.Fork, pr.State, pr.URL, pr.ApprovedSHA, pr.DeploymentID,
		pr.CommentID, tx.now, pr.ProjectID, pr.Number)
	if err != nil {
		return fmt.Errorf("save pull request: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		var p int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM projects WHERE id = ?`, pr.ProjectID).Scan(&p); err != nil {
			return fmt.Errorf("find project: %w", err)
		} else if p == 0 {
			return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
		}
		if _, err := tx.exec(ctx, `INSERT INTO github_pull_requests (`+pullColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			pr.ProjectID, pr.Number, pr.Title, pr.Author, pr.HeadBranch, pr.HeadSHA, pr.Fork, pr.State, pr.URL,
			pr.ApprovedSHA, pr.DeploymentID, pr.CommentID, tx.now); err != nil {
			return fmt.Errorf("save pull request: %w", err)
		}
	}
	pr.UpdatedAt = tx.now
	return tx.Commit()
}

// FindGitHubPullRequest returns pull request number of projectID;
// ENOTFOUND when Gantry has not seen it.
func (st githubHooks) FindGitHubPullRequest(ctx context.Context, projectID string, number int) (*gantry.GitHubPullRequest, error) {
	db := st.db
	return scanPull(db.queryRow(ctx, `SELECT `+pullColumns+` FROM github_pull_requests
		WHERE project_id = ? AND number = ?`, projectID, number))
}

// FindGitHubPullRequestByDeployment returns the pull request whose last
// preview is deploymentID; ENOTFOUND when none is.
func (st githubHooks) FindGitHubPullRequestByDeployment(ctx context.Context, projectID, deploymentID string) (*gantry.GitHubPullRequest, error) {
	db := st.db
	return scanPull(db.queryRow(ctx, `SELECT `+pullColumns+` FROM github_pull_requests
		WHERE project_id = ? AND deployment_id = ?`, projectID, deploymentID))
}

// ListGitHubPullRequests returns the pull requests of projectID, newest
// number first.
func (st githubHooks) ListGitHubPullRequests(ctx context.Context, projectID string) ([]*gantry.GitHubPullRequest, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT `+pullColumns+` FROM github_pull_requests
		WHERE project_id = ? ORDER BY number DESC`), projectID)
	if err != nil {
		return nil, fmt.Errorf("list pull requests: %w", err)
	}
	defer rows.Close()
	out := []*gantry.GitHubPullRequest{}
	for rows.Next() {
		pr, err := scanPull(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, rows.Err()
}

func scanPull(row scanner) (*gantry.GitHubPullRequest, error) {
	var pr gantry.GitHubPullRequest
	err := row.Scan(&pr.ProjectID, &pr.Number, &pr.Title, &pr.Author, &pr.HeadBranch, &pr.HeadSHA, &pr.Fork,
		&pr.State, &pr.URL, &pr.ApprovedSHA, &pr.DeploymentID, &pr.CommentID, &pr.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Pull request not found")
	} else if err != nil {
		return nil, fmt.Errorf("scan pull request: %w", err)
	}
	pr.UpdatedAt = pr.UpdatedAt.UTC()
	return &pr, nil
}
