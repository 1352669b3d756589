package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

// Builds are held under leases (issue 26, point 2): ClaimDeployment
// records the replica that claimed a build, until when it holds it and the
// attempt; the builder renews the lease while it works (BuildLeases.Renew)
// and every write of the outcome names the attempt (gantry.Change.Attempt,
// Deployment.Attempt for SaveBuild), so a replica that lost its build can
// never make it live. A build whose lease lapsed — its replica died, or
// was paused or cut off longer than the lease — is requeued once by any
// replica (Requeue), then failed. Lease times are microseconds since the
// Unix epoch by the database's clock on PostgreSQL (replicas' clocks may
// differ), by this process's on SQLite (which one process owns).

// dbNow is the SQL expression of the database's time in microseconds, and
// its arguments.
func (db *DB) dbNow() (string, []any) {
	if db.dialect == Postgres {
		return `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)`, nil
	}
	return `CAST(? AS BIGINT)`, []any{db.Now().UnixMicro()}
}

// leaseUntil is the SQL expression of "lease from now", with its one
// argument (SQLite: the time itself; PostgreSQL: the lease, added to the
// database's time).
func (db *DB) leaseUntil(lease time.Duration) (string, any) {
	if db.dialect == Postgres {
		now, _ := db.dbNow()
		return now + ` + CAST(? AS BIGINT)`, lease.Microseconds()
	}
	return `CAST(? AS BIGINT)`, db.Now().Add(lease).UnixMicro()
}

// BuildLeases renews, finds and requeues the builds replicas hold.
type BuildLeases struct{ db *DB }

// BuildLeases returns the builds' leases.
func (db *DB) BuildLeases() gantry.BuildLeaseStore { return &BuildLeases{db} }

// Renew extends owner's lease of build id (attempt) by lease from now;
// false when owner no longer holds that attempt (it lapsed and another
// replica took the build over, or the build ended).
func (b *BuildLeases) Renew(ctx context.Context, id, owner string, attempt int, lease time.Duration) (bool, error) {
	expr, arg := b.db.leaseUntil(lease)
	res, err := b.db.db.ExecContext(ctx, b.db.rebind(`UPDATE deployments SET lease_until = `+expr+`
		WHERE id = ? AND claimed_by = ? AND attempt = ? AND status IN (?, ?)`),
		arg, id, owner, attempt, gantry.DeploymentBuilding, gantry.DeploymentDeploying)
	if err != nil {
		return false, fmt.Errorf("renew build lease: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Lapsed returns the builds in progress whose lease has passed, oldest
// first.
func (b *BuildLeases) Lapsed(ctx context.Context) ([]*gantry.Deployment, error) {
	now, args := b.db.dbNow()
	return b.db.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+`WHERE d.status IN (?, ?)
		AND d.lease_until IS NOT NULL AND d.lease_until < `+now+` ORDER BY d.created_at, d.id`,
		append([]any{gantry.DeploymentBuilding, gantry.DeploymentDeploying}, args...)...)
}

// Held returns the builds in progress that owner claimed (or that nobody
// did: builds from before leases), for a replica starting up to end what
// it was building when it stopped.
func (b *BuildLeases) Held(ctx context.Context, owner string) ([]*gantry.Deployment, error) {
	return b.db.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+`WHERE d.status IN (?, ?)
		AND d.claimed_by IN (?, '') ORDER BY d.created_at, d.id`, gantry.DeploymentBuilding, gantry.DeploymentDeploying, owner)
}

// Requeue puts build id, whose attempt's lease lapsed, back in the queue
// (pending, unclaimed, its build info cleared, c.Line appended to its
// log) in one transaction with the project's status: any replica's worker
// then builds it again as the next attempt. A build no longer in that
// attempt, or no longer in progress, or whose lease was renewed meanwhile
// is a *gantry.TransitionError.
func (b *BuildLeases) Requeue(ctx context.Context, id string, c gantry.Change) (*gantry.Transition, error) {
	db := b.db
	tx, p, d, err := db.beginTransition(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	if (d.Status != gantry.DeploymentBuilding && d.Status != gantry.DeploymentDeploying) || stale(d, c) {
		return nil, &gantry.TransitionError{ID: id, Status: d.Status}
	}
	now, args := db.dbNow()
	var lapsed int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM deployments WHERE id = ? AND lease_until < `+now,
		append([]any{id}, args...)...).Scan(&lapsed); err != nil {
		return nil, fmt.Errorf("requeue build: %w", err)
	} else if lapsed == 0 {
		return nil, &gantry.TransitionError{ID: id, Status: d.Status}
	}
	if err := setStatus(ctx, tx, d, gantry.DeploymentPending, "", gantry.BuildInfo{}); err != nil {
		return nil, err
	}
	if _, err := tx.exec(ctx, `UPDATE deployments SET claimed_by = '', lease_until = NULL WHERE id = ?`, id); err != nil {
		return nil, fmt.Errorf("requeue build: %w", err)
	}
	return db.finish(ctx, tx, p, d.Status, d, c.Line, &gantry.Transition{})
}
