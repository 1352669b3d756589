package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
)

var _ gantry.DeploymentStore = (*DB)(nil)

// deploymentColumns lists a deployment (d) with its project (p) and user
// (u) in the order scanDeployment reads them.
const deploymentColumns = `d.id, d.project_id, d.user_id, d.version, d.subdomain, d.url, d.status, d.error,
	d.build_info, d.metadata, d.environment, d.views, d.like_count, d.is_public, d.created_at, d.updated_at,
	d.files_size, d.log_bytes, d.pruned_at, d.target, d.promoted_at, d.no_cache, d.sleeping, d.diagnosis, d.claimed_by, d.attempt, p.name, p.description, p.type, p.build_config, p.repository, u.full_name, u.username`

const deploymentFrom = ` FROM deployments d JOIN projects p ON p.id = d.project_id JOIN users u ON u.id = d.user_id `

const msgDeploymentNotFound = "Deployment not found"

// CreateDeployment inserts d in its status (pending when empty), filling
// ID and timestamps. d's ProjectID and UserID must name an existing
// project of that user. A raw write for tests and tools setting up rows,
// like UpdateDeployment: it checks no queue limit and leaves the project's
// status alone. The platform queues builds with QueueDeployment.
func (st deployments) CreateDeployment(ctx context.Context, d *gantry.Deployment) error {
	db := st.db
	return db.insertDeployment(ctx, d, 0, false)
}

// QueueDeployment is CreateDeployment for a new build: when maxPending > 0
// and d's owner already has maxPending deployments waiting (pending), it
// inserts nothing and answers ETOOMANY. The count and the insert are one
// transaction, serialised per user (SQLite's write lock; on PostgreSQL a
// lock on the user's row), so concurrent deploys never queue more. The
// same transaction locks the project's row, as the transitions do, and
// derives the project's status (building, for a new build).
func (st deployments) QueueDeployment(ctx context.Context, d *gantry.Deployment, maxPending int) error {
	db := st.db
	return db.insertDeployment(ctx, d, maxPending, true)
}

// insertDeployment is QueueDeployment, deriving the project's status when
// derive is set.
func (st deployments) insertDeployment(ctx context.Context, d *gantry.Deployment, maxPending int, derive bool) error {
	db := st.db
	id, err := newID()
	if err != nil {
		return err
	}
	info, meta, env, err := encodeDeployment(d)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if d.Status == "" {
		d.Status = gantry.DeploymentPending
	}
	if maxPending > 0 {
		if db.dialect == Postgres {
			// NO KEY UPDATE: queue inserts of one user wait for each other,
			// while foreign-key checks on the user's row go on.
			var uid string
			if err := tx.queryRow(ctx, `SELECT id FROM users WHERE id = ? FOR NO KEY UPDATE`, d.UserID).Scan(&uid); errors.Is(err, sql.ErrNoRows) {
				return gantry.Errorf(gantry.ENOTFOUND, "User not found")
			} else if err != nil {
				return fmt.Errorf("queue deployment: %w", err)
			}
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM deployments WHERE user_id = ? AND status = ?`,
			d.UserID, gantry.DeploymentPending).Scan(&n); err != nil {
			return fmt.Errorf("queue deployment: %w", err)
		}
		if n >= maxPending {
			return gantry.Errorf(gantry.ETOOMANY, "%s", MsgTooManyPending(maxPending))
		}
	}
	var p *projectState
	if derive {
		if p, err = lockProject(ctx, tx, d.ProjectID); err != nil {
			return err
		}
	}
	if d.Target == "" {
		d.Target = gantry.TargetProduction
	}
	if _, err := tx.exec(ctx, `INSERT INTO deployments (id, project_id, user_id, version, subdomain, url, status,
			error, build_info, metadata, environment, is_public, created_at, updated_at, target, no_cache)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, d.ProjectID, d.UserID, d.Version, d.Subdomain, d.URL, d.Status, d.Error, info, meta, env, true,
		tx.now, tx.now, d.Target, d.NoCache); err != nil {
		return fmt.Errorf("create deployment: %w", err)
	}
	if derive {
		if _, err := settle(ctx, tx, p); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	d.ID, d.CreatedAt, d.UpdatedAt, d.IsPublic = id, tx.now, tx.now, true
	return nil
}

// MsgTooManyPending is QueueDeployment's answer to an owner who already
// has max builds waiting.
func MsgTooManyPending(max int) string {
	builds := "builds"
	if max == 1 {
		builds = "build"
	}
	return fmt.Sprintf("You already have %d %s waiting. Wait for one to start, or delete a waiting one, then deploy again.", max, builds)
}

func encodeDeployment(d *gantry.Deployment) (info, meta, env string, err error) {
	if d.Environment.Variables == nil {
		d.Environment.Variables = []gantry.EnvVar{}
	}
	b1, err := json.Marshal(d.BuildInfo)
	if err != nil {
		return "", "", "", fmt.Errorf("encode build info: %w", err)
	}
	b2, err := json.Marshal(d.Metadata)
	if err != nil {
		return "", "", "", fmt.Errorf("encode metadata: %w", err)
	}
	b3, err := json.Marshal(d.Environment)
	if err != nil {
		return "", "", "", fmt.Errorf("encode environment: %w", err)
	}
	return string(b1), string(b2), string(b3), nil
}

// FindDeployment returns the owner's deployment with its project and user
// embedded, or ENOTFOUND. An empty userID finds any owner's deployment.
func (st deployments) FindDeployment(ctx context.Context, userID, id string) (*gantry.Deployment, error) {
	db := st.db
	q := `SELECT ` + deploymentColumns + deploymentFrom + `WHERE d.id = ?`
	args := []any{id}
	if userID != "" {
		q += ` AND d.user_id = ?`
		args = append(args, userID)
	}
	ds, err := db.queryDeployments(ctx, q, args...)
	if err != nil {
		return nil, err
	} else if len(ds) == 0 {
		return nil, gantry.Errorf(gantry.ENOTFOUND, msgDeploymentNotFound)
	}
	return ds[0], nil
}

// ListDeployments returns the owner's deployments matching f, newest first.
func (st deployments) ListDeployments(ctx context.Context, userID string, f gantry.DeploymentFilter) ([]*gantry.Deployment, error) {
	db := st.db
	q := `SELECT ` + deploymentColumns + deploymentFrom + `WHERE d.user_id = ?`
	args := []any{userID}
	if f.ProjectID != "" {
		q += ` AND d.project_id = ?`
		args = append(args, f.ProjectID)
	}
	if f.Status != "" {
		q += ` AND d.status = ?`
		args = append(args, f.Status)
	}
	if f.Target != "" {
		q += ` AND d.target = ?`
		args = append(args, f.Target)
	}
	q += ` ORDER BY d.created_at DESC, d.id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	return db.queryDeployments(ctx, q, args...)
}

// ListDeploymentsByStatus returns every deployment (any owner) in one of
// statuses, oldest first.
func (st deployments) ListDeploymentsByStatus(ctx context.Context, statuses ...string) ([]*gantry.Deployment, error) {
	db := st.db
	if len(statuses) == 0 {
		return []*gantry.Deployment{}, nil
	}
	args := make([]any, len(statuses))
	for i, s := range statuses {
		args[i] = s
	}
	q := `SELECT ` + deploymentColumns + deploymentFrom + `WHERE d.status IN (?` +
		strings.Repeat(", ?", len(statuses)-1) + `) ORDER BY d.created_at, d.id`
	return db.queryDeployments(ctx, q, args...)
}

// UpdateDeployment overwrites d's status, error, subdomain, url, build
// info, metadata and environment, whatever the row holds; ENOTFOUND when d
// no longer exists. Like CreateDeployment and SetActiveDeployment it is a
// raw write for tests and tools that set up rows on a database nobody else
// writes to: it checks no status and moves neither the project's status
// nor its route. The platform changes deployments only through the
// transitions (transition.go).
func (st deployments) UpdateDeployment(ctx context.Context, d *gantry.Deployment) error {
	db := st.db
	info, meta, env, err := encodeDeployment(d)
	if err != nil {
		return err
	}
	now := db.now()
	if err := db.execOne(ctx, msgDeploymentNotFound, `UPDATE deployments SET status = ?, error = ?, subdomain = ?,
			url = ?, build_info = ?, metadata = ?, environment = ?, updated_at = ? WHERE id = ?`,
		d.Status, d.Error, d.Subdomain, d.URL, info, meta, env, now, d.ID); err != nil {
		return err
	}
	d.UpdatedAt = now
	return nil
}

// ClaimDeployment moves the next pending deployment to building and
// returns it; ENOTFOUND when none is pending. The queue is fair between
// users: the next one is the oldest pending deployment of the user whose
// last claimed build was claimed longest ago (a user never served goes
// first, the oldest waiting build first among such users), and claiming it
// gives its owner the newest turn (table build_turns). One user's backlog
// therefore delays another user's build by at most one build per worker.
// On SQLite the write transaction serialises claimers; on PostgreSQL the
// row is taken with FOR UPDATE SKIP LOCKED so replicas never claim the
// same build (claimers at the same instant may serve one user twice in a
// row: the order is fair, not strict, under concurrency).
func (st deployments) ClaimDeployment(ctx context.Context, c gantry.BuildClaim) (*gantry.Deployment, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	q := `SELECT d.id, d.user_id` + queueOrder + ` LIMIT 1`
	if db.dialect == Postgres {
		q += ` FOR UPDATE OF d SKIP LOCKED`
	}
	var id, userID string
	if err := tx.queryRow(ctx, q, gantry.DeploymentPending).Scan(&id, &userID); errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "No pending deployment")
	} else if err != nil {
		return nil, fmt.Errorf("claim deployment: %w", err)
	}
	var lease any // NULL: held until it ends
	leaseExpr := "?"
	if c.Lease > 0 {
		leaseExpr, lease = db.leaseUntil(c.Lease)
	}
	if _, err := tx.exec(ctx, `UPDATE deployments SET status = ?, updated_at = ?, claimed_by = ?, attempt = attempt + 1,
		lease_until = `+leaseExpr+` WHERE id = ?`, gantry.DeploymentBuilding, tx.now, c.Owner, lease, id); err != nil {
		return nil, fmt.Errorf("claim deployment: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO build_turns (user_id, turn)
		VALUES (?, (SELECT COALESCE(MAX(turn), 0) + 1 FROM build_turns))
		ON CONFLICT (user_id) DO UPDATE SET turn = excluded.turn`, userID); err != nil {
		return nil, fmt.Errorf("claim deployment: turn: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return db.FindDeployment(ctx, "", id)
}

// queueOrder lists the pending deployments (one argument: the pending
// status) in the order ClaimDeployment takes them when nothing new comes.
const queueOrder = ` FROM deployments d LEFT JOIN build_turns t ON t.user_id = d.user_id
	WHERE d.status = ? ORDER BY t.turn NULLS FIRST, d.created_at, d.id`

// QueuePosition returns 1 for the next pending deployment to be claimed,
// 2 for the one after, and so on, if no other deployment is queued
// meanwhile; 0 when id is not pending. The fair queue serves in rounds:
// each waiting user's oldest build, users in turn order, then each one's
// second, and so on. So a user's r-th waiting build comes after the first
// r-1 builds of every waiting user and the r-th builds of the users ahead.
// Builds that other users queue later can still go ahead of it (a user
// with fewer builds waiting is served sooner): the position is an
// estimate that can grow, not a promise.
func (st deployments) QueuePosition(ctx context.Context, id string) (int, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT d.id, d.user_id`+queueOrder), gantry.DeploymentPending)
	if err != nil {
		return 0, fmt.Errorf("queue position: %w", err)
	}
	defer rows.Close()
	order := map[string]int{}   // user → place in the rotation (first row first)
	waiting := map[string]int{} // user → pending builds
	user, round := "", 0
	for rows.Next() {
		var did, uid string
		if err := rows.Scan(&did, &uid); err != nil {
			return 0, fmt.Errorf("queue position: %w", err)
		}
		if _, ok := order[uid]; !ok {
			order[uid] = len(order)
		}
		waiting[uid]++
		if did == id {
			user, round = uid, waiting[uid]
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("queue position: %w", err)
	}
	if user == "" {
		return 0, nil
	}
	pos := 1
	for uid, n := range waiting {
		pos += min(n, round-1)
		if n >= round && order[uid] < order[user] {
			pos++
		}
	}
	return pos, nil
}

// countLive is the query of the owner's live deployments (its one
// argument, the user's id, given twice): each project with a live
// production deployment counts one, each live preview one.
const countLive = `SELECT (SELECT COUNT(DISTINCT project_id) FROM deployments
		WHERE user_id = ? AND status = 'live' AND target = 'production')
	+ (SELECT COUNT(*) FROM deployments WHERE user_id = ? AND status = 'live' AND target = 'preview')`

// CountLiveAfter counts the owner's live deployments as they would be once
// a deployment of projectID (production when label is "", else preview
// label) went live: one more unless it replaces a live one, as GoLive
// would (the project's live production deployment; the label's live
// preview, or the project's oldest beyond gantry.MaxLivePreviews).
func (st deployments) CountLiveAfter(ctx context.Context, userID, projectID, label string) (int, error) {
	db := st.db
	var n, replaced int
	if err := db.queryRow(ctx, countLive, userID, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count live deployments: %w", err)
	}
	if label == "" {
		err := db.queryRow(ctx, `SELECT COUNT(*) FROM deployments WHERE project_id = ? AND status = 'live'
			AND target = 'production'`, projectID).Scan(&replaced)
		if err != nil {
			return 0, fmt.Errorf("count live deployments: %w", err)
		}
		return n + 1 - min(replaced, 1), nil
	}
	var same int
	err := db.queryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN subdomain = ? THEN 1 ELSE 0 END), 0)
		FROM deployments WHERE project_id = ? AND status = 'live' AND target = 'preview'`, label, projectID).
		Scan(&replaced, &same)
	if err != nil {
		return 0, fmt.Errorf("count live deployments: %w", err)
	}
	if same > 0 || replaced >= gantry.MaxLivePreviews {
		return n, nil
	}
	return n + 1, nil
}

// checkLiveLimit refuses, inside a go-live's transaction tx (the changes
// made), to leave userID with more live deployments than the plan allows:
// the limit checked when the build was queued is checked again where it
// cannot race (parallel builds of different projects, a restart beside a
// deploy). On PostgreSQL the user's row is locked first, so the go-lives
// of one account are serialised; SQLite's write lock does that already.
func checkLiveLimit(ctx context.Context, tx *Tx, userID string) error {
	q := `SELECT plan, max_deployments FROM users WHERE id = ?`
	if tx.db.dialect == Postgres {
		q += ` FOR NO KEY UPDATE`
	}
	var sub gantry.Subscription
	if err := tx.queryRow(ctx, q, userID).Scan(&sub.Plan, &sub.MaxDeployments); errors.Is(err, sql.ErrNoRows) {
		return gantry.Errorf(gantry.ENOTFOUND, "User not found")
	} else if err != nil {
		return fmt.Errorf("live limit: %w", err)
	}
	var n int
	if err := tx.queryRow(ctx, countLive, userID, userID).Scan(&n); err != nil {
		return fmt.Errorf("live limit: %w", err)
	}
	if n > sub.MaxDeployments {
		return gantry.ErrLiveLimit(sub)
	}
	return nil
}

// storageColumns reads, for a user row u, the storage budget and the bytes
// of the deployments' kept files (each blob once: dupBlobBytes), of
// their log messages and of the projects' app data folders (app_data, as
// last measured). Build caches are the platform's and have bounds of
// their own (deploy's cacheKeeper): they are not counted.
var storageColumns = `u.max_storage,
	(SELECT CAST(COALESCE(SUM(files_size), 0) AS BIGINT) FROM deployments WHERE user_id = u.id) - ` + dupBlobBytes("", "") + `,
	(SELECT CAST(COALESCE(SUM(log_bytes), 0) AS BIGINT) FROM deployments WHERE user_id = u.id),
	(SELECT CAST(COALESCE(SUM(a.bytes), 0) AS BIGINT) FROM app_data a JOIN projects p ON p.id = a.project_id WHERE p.user_id = u.id)`

// StorageUsage returns what the owner's deployments keep on disk (their
// recorded file sizes and log bytes) and the owner's budget: one indexed
// sum, no disk walk. ENOTFOUND for a missing user.
func (st deployments) StorageUsage(ctx context.Context, userID string) (*gantry.StorageUsage, error) {
	db := st.db
	var s gantry.StorageUsage
	err := db.queryRow(ctx, `SELECT `+storageColumns+` FROM users u WHERE u.id = ?`, userID).
		Scan(&s.Budget, &s.Files, &s.Logs, &s.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "User not found")
	} else if err != nil {
		return nil, fmt.Errorf("storage usage: %w", err)
	}
	s.Used = s.Files + s.Logs + s.Data
	return &s, nil
}

// MeasuredDeploymentFiles records size, plus the bytes of the blobs its
// files link to (Blobs), as the bytes of the deployment's kept files
// while it keeps any (not pruned, files_size not 0); otherwise, or when
// it is gone, it does nothing.
func (st deployments) MeasuredDeploymentFiles(ctx context.Context, id string, size int64) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `UPDATE deployments
		SET files_size = ? + (SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM deployment_blobs WHERE deployment_id = ?)
		WHERE id = ? AND pruned_at IS NULL AND files_size > 0`,
		size, id, id); err != nil {
		return fmt.Errorf("measured deployment files: %w", err)
	}
	return tx.Commit()
}

// SetDeploymentFiles records the bytes the deployment's kept files take on
// disk; ENOTFOUND when it no longer exists.
func (st deployments) SetDeploymentFiles(ctx context.Context, id string, size int64) error {
	db := st.db
	return db.execOne(ctx, msgDeploymentNotFound, `UPDATE deployments SET files_size = ? WHERE id = ?`, size, id)
}

// PruneDeployments marks the deployments of the project that
// gantry.Prunable picks (from its deployments newest first and its active
// deployment) as pruned at now, with no files, and returns them as they
// were before. Each is marked only while it is still stopped or failed,
// unpruned and not the project's active deployment, so one restarted
// meanwhile keeps its files.
func (st deployments) PruneDeployments(ctx context.Context, projectID string, now time.Time) ([]*gantry.Deployment, error) {
	db := st.db
	var active sql.NullString
	if err := db.queryRow(ctx, `SELECT active_deployment_id FROM projects WHERE id = ?`, projectID).
		Scan(&active); errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	} else if err != nil {
		return nil, fmt.Errorf("prune deployments: %w", err)
	}
	ds, err := db.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+
		`WHERE d.project_id = ? ORDER BY d.created_at DESC, d.id DESC`, projectID)
	if err != nil {
		return nil, err
	}
	pick := gantry.Prunable(ds, active.String)
	if len(pick) == 0 {
		return pick, nil
	}
	now = now.UTC().Truncate(time.Millisecond)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	var out []*gantry.Deployment
	for _, d := range pick {
		res, err := tx.exec(ctx, `UPDATE deployments SET files_size = 0, pruned_at = ?
			WHERE id = ? AND pruned_at IS NULL AND status IN (?, ?)
			AND NOT EXISTS (SELECT 1 FROM projects WHERE active_deployment_id = deployments.id)`,
			now, d.ID, gantry.DeploymentStopped, gantry.DeploymentFailed)
		if err != nil {
			return nil, fmt.Errorf("prune deployment: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out = append(out, d)
		}
	}
	return out, tx.Commit()
}

// PruneDeployment marks one deployment pruned at now, with no files,
// while it is still stopped or failed and unpruned (the project's active
// deployment included: making room for a new deployment may take it), and
// reports whether it did: one restarted meanwhile keeps its files.
func (st deployments) PruneDeployment(ctx context.Context, id string, now time.Time) (bool, error) {
	db := st.db
	n, err := db.execCount(ctx, `UPDATE deployments SET files_size = 0, pruned_at = ?
		WHERE id = ? AND pruned_at IS NULL AND status IN (?, ?)`,
		now.UTC().Truncate(time.Millisecond), id, gantry.DeploymentStopped, gantry.DeploymentFailed)
	return n == 1, err
}

// AppendLog stores e as the deployment's next entry, setting e.Seq, and
// adds the bytes of its message to the deployment's log size.
func (st deployments) AppendLog(ctx context.Context, deploymentID string, e *gantry.LogEntry) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	seq := e.Seq
	if err := appendLog(ctx, tx, deploymentID, e); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		e.Seq = seq
		return err
	}
	return nil
}

// appendLog stores e as the deployment's next entry inside tx, setting
// e.Seq and e.Timestamp (when zero: tx's time), and adds the bytes of its
// message to the deployment's log size.
func appendLog(ctx context.Context, tx *Tx, deploymentID string, e *gantry.LogEntry) error {
	var seq int64
	if err := tx.queryRow(ctx, `UPDATE deployments SET log_seq = log_seq + 1, log_bytes = log_bytes + ?
		WHERE id = ? RETURNING log_seq`, len(e.Message), deploymentID).Scan(&seq); errors.Is(err, sql.ErrNoRows) {
		return gantry.Errorf(gantry.ENOTFOUND, msgDeploymentNotFound)
	} else if err != nil {
		return fmt.Errorf("append log: %w", err)
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = tx.now
	}
	e.Timestamp = e.Timestamp.UTC().Truncate(time.Millisecond)
	if _, err := tx.exec(ctx, `INSERT INTO deployment_logs (deployment_id, seq, ts, level, type, message)
		VALUES (?, ?, ?, ?, ?, ?)`, deploymentID, seq, e.Timestamp, e.Level, e.Type, e.Message); err != nil {
		return fmt.Errorf("append log: %w", err)
	}
	e.Seq = seq
	return nil
}

// Logs returns the deployment's entries with Seq > afterSeq, in order. With
// afterSeq 0 and limit > 0 it returns the newest limit entries.
func (st deployments) Logs(ctx context.Context, deploymentID string, afterSeq int64, limit int) ([]gantry.LogEntry, error) {
	db := st.db
	q := `SELECT seq, ts, level, type, message FROM deployment_logs WHERE deployment_id = ? AND seq > ?`
	if limit > 0 && afterSeq == 0 {
		q = `SELECT * FROM (` + q + fmt.Sprintf(` ORDER BY seq DESC LIMIT %d) newest`, limit)
	}
	q += ` ORDER BY seq`
	rows, err := db.db.QueryContext(ctx, db.rebind(q), deploymentID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("logs: %w", err)
	}
	defer rows.Close()
	out := []gantry.LogEntry{}
	for rows.Next() {
		var e gantry.LogEntry
		if err := rows.Scan(&e.Seq, &e.Timestamp, &e.Level, &e.Type, &e.Message); err != nil {
			return nil, fmt.Errorf("scan log: %w", err)
		}
		e.Timestamp = e.Timestamp.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

// CountLogs returns how many entries the deployment has.
func (st deployments) CountLogs(ctx context.Context, deploymentID string) (int, error) {
	db := st.db
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM deployment_logs WHERE deployment_id = ?`, deploymentID).Scan(&n)
	return n, err
}

// ClearLogs deletes the deployment's entries and zeroes its log size;
// numbering continues after the last one, so open streams never see a
// number twice.
func (st deployments) ClearLogs(ctx context.Context, deploymentID string) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := tx.exec(ctx, `DELETE FROM deployment_logs WHERE deployment_id = ?`, deploymentID); err != nil {
		return fmt.Errorf("clear logs: %w", err)
	}
	if _, err := tx.exec(ctx, `UPDATE deployments SET log_bytes = 0 WHERE id = ?`, deploymentID); err != nil {
		return fmt.Errorf("clear logs: %w", err)
	}
	return tx.Commit()
}

// TrimRuntimeLogs keeps the deployment's newest keep runtime entries
// (type gantry.LogRuntime) and deletes older ones, leaving its build and
// deployment entries alone, and returns how many it deleted; the
// deployment's log size is counted again from what is left. keep ≤ 0
// deletes every runtime entry.
func (st deployments) TrimRuntimeLogs(ctx context.Context, deploymentID string, keep int) (int, error) {
	db := st.db
	q := `DELETE FROM deployment_logs WHERE deployment_id = ? AND type = ?`
	args := []any{deploymentID, gantry.LogRuntime}
	if keep > 0 {
		q += ` AND seq <= (SELECT seq FROM deployment_logs WHERE deployment_id = ? AND type = ?
			ORDER BY seq DESC LIMIT 1 OFFSET ?)`
		args = append(args, deploymentID, gantry.LogRuntime, keep)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("trim runtime logs: %w", err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		if _, err := tx.exec(ctx, `UPDATE deployments SET log_bytes = (SELECT COALESCE(SUM(octet_length(message)), 0)
			FROM deployment_logs WHERE deployment_id = ?) WHERE id = ?`, deploymentID, deploymentID); err != nil {
			return 0, fmt.Errorf("trim runtime logs: %w", err)
		}
	}
	return int(n), tx.Commit()
}

func (st deployments) queryDeployments(ctx context.Context, q string, args ...any) ([]*gantry.Deployment, error) {
	db := st.db
	rows, err := db.db.QueryContext(ctx, db.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("query deployments: %w", err)
	}
	return scanDeployments(rows)
}

// queryDeployments is DB.queryDeployments inside tx.
func (tx *Tx) queryDeployments(ctx context.Context, q string, args ...any) ([]*gantry.Deployment, error) {
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query deployments: %w", err)
	}
	return scanDeployments(rows)
}

// scanDeployments reads rows of deploymentColumns and closes rows.
func scanDeployments(rows *sql.Rows) ([]*gantry.Deployment, error) {
	defer rows.Close()
	out := []*gantry.Deployment{}
	for rows.Next() {
		var d gantry.Deployment
		var info, meta, env, cfg, repo, diag string
		var pruned, promoted sql.NullTime
		p := &gantry.DeploymentProject{}
		u := &gantry.DeploymentUser{}
		if err := rows.Scan(&d.ID, &d.ProjectID, &d.UserID, &d.Version, &d.Subdomain, &d.URL, &d.Status, &d.Error,
			&info, &meta, &env, &d.Views, &d.LikeCount, &d.IsPublic, &d.CreatedAt, &d.UpdatedAt,
			&d.FilesSize, &d.LogSize, &pruned, &d.Target, &promoted, &d.NoCache, &d.Sleeping, &diag, &d.ClaimedBy, &d.Attempt, &p.Name, &p.Description, &p.Type, &cfg, &repo, &u.FullName, &u.Username); err != nil {
			return nil, fmt.Errorf("scan deployment: %w", err)
		}
		for _, f := range []struct {
			src string
			dst any
		}{{info, &d.BuildInfo}, {meta, &d.Metadata}, {env, &d.Environment}, {cfg, &p.BuildConfig}, {repo, &p.Repository}} {
			if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
				return nil, fmt.Errorf("decode deployment %s: %w", d.ID, err)
			}
		}
		if d.Environment.Variables == nil {
			d.Environment.Variables = []gantry.EnvVar{}
		}
		if diag != "" {
			d.Diagnosis = &gantry.Diagnosis{}
			if err := json.Unmarshal([]byte(diag), d.Diagnosis); err != nil {
				return nil, fmt.Errorf("decode deployment %s diagnosis: %w", d.ID, err)
			}
		}
		p.ID, u.ID = d.ProjectID, d.UserID
		d.Sleeping = d.Sleeping && d.Status == gantry.DeploymentLive
		d.Project, d.User = p, u
		d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
		if pruned.Valid {
			t := pruned.Time.UTC()
			d.PrunedAt = &t
		}
		if promoted.Valid {
			t := promoted.Time.UTC()
			d.PromotedAt = &t
		}
		out = append(out, &d)
	}
	return out, rows.Err()
}

// SetSleeping records whether a live server app sleeps (stopped after
// GANTRY_APP_IDLE without a request, woken by the next one); a missing
// deployment is ENOTFOUND. Read back, it counts only while the deployment
// is live.
func (st deployments) SetSleeping(ctx context.Context, deploymentID string, sleeping bool) error {
	db := st.db
	return db.execOne(ctx, msgDeploymentNotFound, `UPDATE deployments SET sleeping = ? WHERE id = ?`, sleeping, deploymentID)
}
