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

// Claim takes the next delivery: of the project whose turn is oldest, its
// oldest job, unless another job of that project is held. It reads twice:
// the first statement picks a project and locks its webhook's row (SKIP
// LOCKED on PostgreSQL, so claimers spread over projects); the second,
// run with that lock held, reads the project's jobs afresh. (On
// PostgreSQL the first statement's rows of webhook_jobs are as they were
// when it began: a claim that committed meanwhile is invisible to it, and
// taking its job from there would take that job twice.) A project whose
// job another claimer took in between is passed over for the next.
func (w *WebhookJobs) Claim(ctx context.Context, owner string, lease time.Duration) (*gantry.WebhookJob, error) {
	for range claimTries {
		j, err := w.claim(ctx, owner, lease)
		if j != nil || err != nil {
			return j, err
		}
	}
	return nil, gantry.Errorf(gantry.ENOTFOUND, "No delivery waiting")
}

// claimTries is how many projects one Claim tries whose job another
// claimer took first.
const claimTries = 4

// claim is one try of Claim: nil, nil when the project it picked had no
// job left to take once locked.
func (w *WebhookJobs) claim(ctx context.Context, owner string, lease time.Duration) (*gantry.WebhookJob, error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	now := tx.now
	q := `SELECT h.project_id FROM webhook_jobs j
		JOIN github_hooks h ON h.project_id = j.project_id
		WHERE (j.lease_until IS NULL OR j.lease_until <= ?)
			AND NOT EXISTS (SELECT 1 FROM webhook_jobs r WHERE r.project_id = j.project_id AND r.lease_until > ?)
		ORDER BY h.turn_at IS NOT NULL, h.turn_at, j.received_at, j.id LIMIT 1`
	if w.db.dialect == Postgres {
		q += ` FOR UPDATE OF h SKIP LOCKED`
	}
	var project string
	err = tx.queryRow(ctx, q, now, now).Scan(&project)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "No delivery waiting")
	} else if err != nil {
		return nil, fmt.Errorf("claim delivery job: %w", err)
	}
	var j gantry.WebhookJob
	err = tx.queryRow(ctx, `SELECT j.id, j.project_id, j.event, j.payload, j.attempts FROM webhook_jobs j
		WHERE j.project_id = ? AND (j.lease_until IS NULL OR j.lease_until <= ?)
			AND NOT EXISTS (SELECT 1 FROM webhook_jobs r WHERE r.project_id = j.project_id AND r.lease_until > ?)
		ORDER BY j.received_at, j.id LIMIT 1`, project, now, now).
		Scan(&j.ID, &j.ProjectID, &j.Event, &j.Payload, &j.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil // taken by a claim that committed after the first read
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
