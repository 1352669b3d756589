package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

// WebhookJobs keeps GitHub deliveries as leased jobs
// (gantry.WebhookJobStore): stored with the claim of their delivery key
// in one transaction, taken by workers on any replica, one project's at a
// time, projects in turn.
type WebhookJobs struct{ db *DB }

// WebhookJobs returns the GitHub delivery jobs.
func (db *DB) WebhookJobs() gantry.WebhookJobStore { return &WebhookJobs{db} }

var _ gantry.WebhookJobStore = (*WebhookJobs)(nil)

func (w *WebhookJobs) Enqueue(ctx context.Context, j *gantry.WebhookJob, perProject, max int) (string, error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `DELETE FROM github_deliveries WHERE received_at < ?`, tx.now.Add(-DeliveryRetention)); err != nil {
		return "", fmt.Errorf("forget old deliveries: %w", err)
	}
	var seen, project, all int
	if err := tx.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM github_deliveries WHERE id = ?),
			(SELECT COUNT(*) FROM webhook_jobs WHERE project_id = ?),
			(SELECT COUNT(*) FROM webhook_jobs)`, j.ID, j.ProjectID).Scan(&seen, &project, &all); err != nil {
		return "", fmt.Errorf("enqueue delivery: %w", err)
	}
	switch {
	case seen > 0:
		return gantry.JobDuplicate, nil
	case project >= perProject || all >= max:
		return gantry.JobBusy, nil
	}
	if _, err := tx.exec(ctx, `INSERT INTO github_deliveries (id, received_at) VALUES (?, ?)`, j.ID, tx.now); err != nil {
		if _, ok := uniqueViolation(err); ok {
			return gantry.JobDuplicate, nil // another replica took it first (PostgreSQL)
		}
		return "", fmt.Errorf("claim delivery: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO webhook_jobs (id, project_id, event, payload, received_at) VALUES (?, ?, ?, ?, ?)`,
		j.ID, j.ProjectID, j.Event, j.Payload, tx.now); err != nil {
		return "", fmt.Errorf("enqueue delivery: %w", err)
	}
	return gantry.JobQueued, tx.Commit()
}

func (w *WebhookJobs) Claim(ctx context.Context, owner string, lease time.Duration) (*gantry.WebhookJob, error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	now := tx.now
	// A project's hook row is locked with its job (PostgreSQL), so two
	// replicas never take two jobs of one project at once.
	q := `SELECT j.id, j.project_id, j.event, j.payload, j.attempts FROM webhook_jobs j
		JOIN github_hooks h ON h.project_id = j.project_id
		WHERE (j.lease_until IS NULL OR j.lease_until <= ?)
			AND NOT EXISTS (SELECT 1 FROM webhook_jobs r WHERE r.project_id = j.project_id AND r.lease_until > ?)
		ORDER BY h.turn_at IS NOT NULL, h.turn_at, j.received_at, j.id LIMIT 1`
	if w.db.dialect == Postgres {
		q += ` FOR UPDATE OF h SKIP LOCKED`
	}
	var j gantry.WebhookJob
	err = tx.queryRow(ctx, q, now, now).Scan(&j.ID, &j.ProjectID, &j.Event, &j.Payload, &j.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "No delivery waiting")
	} else if err != nil {
		return nil, fmt.Errorf("claim delivery job: %w", err)
	}
	j.Attempts++
	if _, err := tx.exec(ctx, `UPDATE webhook_jobs SET claimed_by = ?, lease_until = ?, attempts = ? WHERE id = ?`,
		owner, now.Add(lease), j.Attempts, j.ID); err != nil {
		return nil, fmt.Errorf("claim delivery job: %w", err)
	}
	if _, err := tx.exec(ctx, `UPDATE github_hooks SET turn_at = ? WHERE project_id = ?`, now, j.ProjectID); err != nil {
		return nil, fmt.Errorf("claim delivery job: %w", err)
	}
	return &j, tx.Commit()
}

func (w *WebhookJobs) Finish(ctx context.Context, id, owner string) error {
	_, err := w.db.db.ExecContext(ctx, w.db.rebind(`DELETE FROM webhook_jobs WHERE id = ? AND claimed_by = ?`), id, owner)
	return err
}

func (w *WebhookJobs) Count(ctx context.Context) (int, error) {
	var n int
	err := w.db.queryRow(ctx, `SELECT COUNT(*) FROM webhook_jobs`).Scan(&n)
	return n, err
}
