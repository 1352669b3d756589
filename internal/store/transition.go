package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gantryhq/gantry"
)

// Transitions: every change of a deployment's status that moves its
// project's status or route is one transaction here. It locks the project's
// row first (on PostgreSQL FOR NO KEY UPDATE, which still lets deployments
// be inserted for it; on SQLite the transaction's write lock serialises
// everything), then the deployment's row, checks the status the change
// starts from, writes only the columns the change owns, and derives the
// project's status and route (settle) before it commits. So the changes of
// one project are serialised, on one replica or many, and a change that
// lost a race answers *gantry.TransitionError.
//
// Two changes need no project lock because neither moves the project's
// status nor its route: ClaimDeployment (pending → building) and SaveBuild
// (building → building or deploying). Both are single conditional
// statements on the deployment's row, so they too lose cleanly against a
// stop or a delete.

// projectState is a project's row as a transition found it.
type projectState struct {
	id           string
	subdomain    string
	status       string
	version      int64
	activeID     string // "" for none
	activeStatus string // "" for none
}

// lockProject takes the project's row lock for the rest of tx and reads
// it; ENOTFOUND when the project is gone. The active deployment's status
// is read by a statement of its own, after the lock is held: on
// PostgreSQL a locking read that waited sees the locked row as the other
// transaction left it but joined rows as they were before, and a stale
// status would count a route change that did not happen.
func lockProject(ctx context.Context, tx *Tx, projectID string) (*projectState, error) {
	q := `SELECT id, COALESCE(subdomain, ''), status, route_version, COALESCE(active_deployment_id, '')
		FROM projects WHERE id = ?`
	if tx.db.dialect == Postgres {
		q += ` FOR NO KEY UPDATE`
	}
	var s projectState
	err := tx.queryRow(ctx, q, projectID).Scan(&s.id, &s.subdomain, &s.status, &s.version, &s.activeID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	} else if err != nil {
		return nil, fmt.Errorf("lock project: %w", err)
	}
	if s.activeID != "" {
		err := tx.queryRow(ctx, `SELECT status FROM deployments WHERE id = ?`, s.activeID).Scan(&s.activeStatus)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("lock project: %w", err)
		}
	}
	return &s, nil
}

// beginTransition starts the transaction of a change of deployment id: it
// locks the deployment's project, then the deployment, and returns both as
// they are now. ENOTFOUND when the deployment is gone.
func (st transitions) beginTransition(ctx context.Context, id string) (*Tx, *projectState, *gantry.Deployment, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	// A deployment never changes project: read it before taking the locks
	// in their one order (project, then deployment).
	var projectID string
	if err := tx.queryRow(ctx, `SELECT project_id FROM deployments WHERE id = ?`, id).Scan(&projectID); errors.Is(err, sql.ErrNoRows) {
		rollback(tx)
		return nil, nil, nil, gantry.Errorf(gantry.ENOTFOUND, msgDeploymentNotFound)
	} else if err != nil {
		rollback(tx)
		return nil, nil, nil, fmt.Errorf("transition: %w", err)
	}
	p, err := lockProject(ctx, tx, projectID)
	if err != nil {
		rollback(tx)
		return nil, nil, nil, err
	}
	q := `SELECT ` + deploymentColumns + deploymentFrom + `WHERE d.id = ?`
	if db.dialect == Postgres {
		q += ` FOR NO KEY UPDATE OF d`
	}
	ds, err := tx.queryDeployments(ctx, q, id)
	if err != nil {
		rollback(tx)
		return nil, nil, nil, err
	} else if len(ds) == 0 {
		rollback(tx)
		return nil, nil, nil, gantry.Errorf(gantry.ENOTFOUND, msgDeploymentNotFound)
	}
	return tx, p, ds[0], nil
}

// setStatus moves d (locked by beginTransition) from its status to to with
// err as its error and info as its build info: a compare-and-set on the
// status it was read in, so a write that slipped past the locks (none
// should) is a lost race rather than an overwrite.
func setStatus(ctx context.Context, tx *Tx, d *gantry.Deployment, to, errMsg string, info gantry.BuildInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encode build info: %w", err)
	}
	res, err := tx.exec(ctx, `UPDATE deployments SET status = ?, error = ?, build_info = ?, updated_at = ?
		WHERE id = ? AND status = ?`, to, errMsg, string(b), tx.now, d.ID, d.Status)
	if err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return &gantry.TransitionError{ID: d.ID, Status: d.Status}
	}
	return nil
}

// settle derives the project's status from its deployments as they are now
// in tx (gantry.ProjectStatusOf) and, when its active deployment or that
// deployment's status differs from before, counts one more route version.
// It returns the new route then, else nil.
func settle(ctx context.Context, tx *Tx, before *projectState) (*gantry.Route, error) {
	var latest, active, activeStatus sql.NullString
	if err := tx.queryRow(ctx, `SELECT (SELECT status FROM deployments WHERE project_id = p.id AND target = 'production'
			ORDER BY created_at DESC, id DESC LIMIT 1), p.active_deployment_id, ad.status
		FROM projects p LEFT JOIN deployments ad ON ad.id = p.active_deployment_id WHERE p.id = ?`, before.id).
		Scan(&latest, &active, &activeStatus); err != nil {
		return nil, fmt.Errorf("settle project: %w", err)
	}
	status := gantry.ProjectStatusOf(latest.String, activeStatus.String == gantry.DeploymentLive)
	moved := active.String != before.activeID || activeStatus.String != before.activeStatus
	if status == before.status && !moved {
		return nil, nil
	}
	bump := 0
	if moved {
		bump = 1
	}
	if _, err := tx.exec(ctx, `UPDATE projects SET status = ?, route_version = route_version + ?, updated_at = ?
		WHERE id = ?`, status, bump, tx.now, before.id); err != nil {
		return nil, fmt.Errorf("settle project: %w", err)
	}
	if !moved {
		return nil, nil
	}
	r := &gantry.Route{ProjectID: before.id, Subdomain: before.subdomain, Version: before.version + 1}
	if active.String != "" {
		ds, err := tx.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+`WHERE d.id = ?`, active.String)
		if err != nil {
			return nil, err
		}
		if len(ds) == 1 {
			r.Active = ds[0]
		}
	}
	return r, nil
}

// finish appends line (when set) to d's log, settles the project, commits
// tx and returns the transition of d, re-read when it still exists.
//
// labels are preview labels whose routes the change moved already (their
// versions counted); a preview's own label is counted here when it serves
// d. The transition carries their routes (Previews).
func (st transitions) finish(ctx context.Context, tx *Tx, p *projectState, from string, d *gantry.Deployment, line *gantry.LogEntry, t *gantry.Transition, labels ...string) (*gantry.Transition, error) {
	if line != nil {
		if err := appendLog(ctx, tx, d.ID, line); err != nil {
			return nil, err
		}
	}
	route, err := settle(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	t.From, t.Route = from, route
	if d != nil && d.IsPreview() && !slices.Contains(labels, d.Subdomain) {
		// The label's route moves when it serves d (d's status changed).
		if ok, err := bumpPreview(ctx, tx, d.Subdomain, d.ID, false); err != nil {
			return nil, err
		} else if ok {
			labels = append(labels, d.Subdomain)
		}
	}
	if t.Previews, err = previewRoutes(ctx, tx, labels); err != nil {
		return nil, err
	}
	project := ""
	if route != nil {
		project = p.id
	}
	if err := stampRoutes(ctx, tx, project, labels); err != nil {
		return nil, err
	}
	if d != nil {
		ds, err := tx.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+`WHERE d.id = ?`, d.ID)
		if err != nil {
			return nil, err
		}
		if len(ds) == 1 {
			t.Deployment = ds[0]
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit transition: %w", err)
	}
	return t, nil
}

// stale reports whether c is fenced off d: c names an attempt of the
// build (Change.Attempt) that is no longer d's (another replica took the
// build over).
func stale(d *gantry.Deployment, c gantry.Change) bool {
	return c.Attempt != 0 && c.Attempt != d.Attempt
}

// at is c.At, or the transaction's time when unset.
func at(tx *Tx, c gantry.Change) time.Time {
	if c.At.IsZero() {
		return tx.now
	}
	return c.At.UTC()
}

// GoLive makes deployment id live from status from (deploying at the end
// of a build, stopped for a restart or rollback), in one transaction: the
// deployment live (its build info replaced by c.Info when set, c.Line
// appended to its log), the project's active deployment, every other live
// deployment of the project stopped (normally the one it replaces), and
// the project's status and route. A deployment not in from, or one whose
// files were pruned, is a *gantry.TransitionError; ENOTFOUND when it or
// its project is gone. One that would leave its owner with more live
// deployments than the plan allows changes nothing and is EFORBIDDEN
// (gantry.ErrLiveLimit): checked here, in the transaction, as well as when
// the build was queued.
func (st transitions) GoLive(ctx context.Context, id, from string, c gantry.Change) (*gantry.Transition, error) {
	db := st.db
	tx, p, d, err := db.beginTransition(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	if d.Status != from || stale(d, c) {
		return nil, &gantry.TransitionError{ID: id, Status: d.Status}
	}
	if d.PrunedAt != nil {
		return nil, &gantry.TransitionError{ID: id, Status: d.Status, Pruned: true}
	}
	info := d.BuildInfo
	if c.Info != nil {
		info = *c.Info
	}
	if err := setStatus(ctx, tx, d, gantry.DeploymentLive, d.Error, info); err != nil {
		return nil, err
	}
	if c.Promote {
		if _, err := tx.exec(ctx, `UPDATE deployments SET promoted_at = ? WHERE id = ?`, at(tx, c), id); err != nil {
			return nil, fmt.Errorf("promote: %w", err)
		}
	}
	if d.IsPreview() {
		replaced, labels, err := goLivePreview(ctx, tx, p, d)
		if err != nil {
			return nil, err
		}
		if err := checkLiveLimit(ctx, tx, d.UserID); err != nil {
			return nil, err
		}
		return db.finish(ctx, tx, p, from, d, c.Line, &gantry.Transition{Replaced: replaced}, labels...)
	}
	// Previews stay live: only the project's production deployment is
	// replaced.
	rows, err := tx.query(ctx, `SELECT id FROM deployments WHERE project_id = ? AND status = ? AND id <> ?
		AND target = 'production'`, p.id, gantry.DeploymentLive, id)
	if err != nil {
		return nil, fmt.Errorf("go live: %w", err)
	}
	var replaced []string
	for rows.Next() {
		var rid string
		if err := rows.Scan(&rid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("go live: %w", err)
		}
		replaced = append(replaced, rid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("go live: %w", err)
	}
	for _, rid := range replaced {
		if _, err := tx.exec(ctx, `UPDATE deployments SET status = ?, updated_at = ? WHERE id = ? AND status = ?`,
			gantry.DeploymentStopped, tx.now, rid, gantry.DeploymentLive); err != nil {
			return nil, fmt.Errorf("stop replaced deployment: %w", err)
		}
	}
	if p.activeID != id {
		if _, err := tx.exec(ctx, `UPDATE projects SET active_deployment_id = ?, updated_at = ? WHERE id = ?`,
			id, tx.now, p.id); err != nil {
			return nil, fmt.Errorf("set active deployment: %w", err)
		}
	}
	if err := checkLiveLimit(ctx, tx, d.UserID); err != nil {
		return nil, err
	}
	return db.finish(ctx, tx, p, from, d, c.Line, &gantry.Transition{Replaced: replaced})
}

// FailDeployment ends deployment id failed with reason from any of the
// statuses from, in one transaction with the project's status and route
// (a failed active deployment answers the "stopped" page). A build that
// had not ended ends at c.At: its end time, and its duration from its
// start. c.Line, when set, is appended to its log. A deployment in none of
// from is a *gantry.TransitionError.
func (st transitions) FailDeployment(ctx context.Context, id string, from []string, reason string, c gantry.Change) (*gantry.Transition, error) {
	db := st.db
	tx, p, d, err := db.beginTransition(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	if !slices.Contains(from, d.Status) || stale(d, c) {
		return nil, &gantry.TransitionError{ID: id, Status: d.Status}
	}
	info := d.BuildInfo
	if info.EndTime == nil {
		end := at(tx, c)
		info.EndTime = &end
		if info.StartTime != nil {
			info.Duration = end.Sub(*info.StartTime).Milliseconds()
		}
	}
	if err := setStatus(ctx, tx, d, gantry.DeploymentFailed, reason, info); err != nil {
		return nil, err
	}
	return db.finish(ctx, tx, p, d.Status, d, c.Line, &gantry.Transition{})
}

// StopDeployment stops deployment id from any status gantry's CanStop
// allows (pending, building, deploying, live), in one transaction with the
// project's status and route. A build that had started and not ended ends
// at c.At. Any other status is a *gantry.TransitionError. Cancelling the
// build or ending the app is the caller's work, after the commit.
func (st transitions) StopDeployment(ctx context.Context, id string, c gantry.Change) (*gantry.Transition, error) {
	db := st.db
	tx, p, d, err := db.beginTransition(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	if !d.CanStop() {
		return nil, &gantry.TransitionError{ID: id, Status: d.Status}
	}
	info := d.BuildInfo
	if info.StartTime != nil && info.EndTime == nil {
		end := at(tx, c)
		info.EndTime = &end
		info.Duration = end.Sub(*info.StartTime).Milliseconds()
	}
	if err := setStatus(ctx, tx, d, gantry.DeploymentStopped, d.Error, info); err != nil {
		return nil, err
	}
	return db.finish(ctx, tx, p, d.Status, d, c.Line, &gantry.Transition{})
}

// DeleteDeployment removes deployment id and its log entries whatever its
// status, in one transaction with the project's status and route: a
// project whose active deployment it was points at none afterwards.
// ENOTFOUND when it does not exist.
func (st transitions) DeleteDeployment(ctx context.Context, id string) (*gantry.Transition, error) {
	db := st.db
	tx, p, d, err := db.beginTransition(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	if p.activeID == id {
		if _, err := tx.exec(ctx, `UPDATE projects SET active_deployment_id = NULL, updated_at = ? WHERE id = ?`,
			tx.now, p.id); err != nil {
			return nil, fmt.Errorf("detach deployment: %w", err)
		}
	}
	var labels []string
	if d.IsPreview() {
		if ok, err := bumpPreview(ctx, tx, d.Subdomain, d.ID, true); err != nil {
			return nil, err
		} else if ok {
			labels = append(labels, d.Subdomain)
		}
	}
	if _, err := tx.exec(ctx, `DELETE FROM deployments WHERE id = ?`, id); err != nil {
		return nil, fmt.Errorf("delete deployment: %w", err)
	}
	return db.finish(ctx, tx, p, d.Status, nil, nil, &gantry.Transition{}, labels...)
}

// SaveBuild saves d's build info, metadata and environment, and moves it
// to d.Status, while its stored status is still from (and, when d.Attempt
// is set, its build still that attempt) — one conditional
// statement, so a build never overwrites a stop or a delete that came
// first. It is for a build's progress, which never changes the project's
// status (building and deploying both read "building"): d.Status must be
// from or deploying. A deployment no longer in from is a
// *gantry.TransitionError; ENOTFOUND when it is gone.
func (st transitions) SaveBuild(ctx context.Context, d *gantry.Deployment, from string) error {
	db := st.db
	if from != gantry.DeploymentBuilding || (d.Status != from && d.Status != gantry.DeploymentDeploying) {
		return fmt.Errorf("save build: %s → %s is not a build's progress", from, d.Status)
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
	res, err := tx.exec(ctx, `UPDATE deployments SET status = ?, build_info = ?, metadata = ?, environment = ?,
		updated_at = ? WHERE id = ? AND status = ? AND (? = 0 OR attempt = ?)`, d.Status, info, meta, env, tx.now, d.ID, from,
		d.Attempt, d.Attempt)
	if err != nil {
		return fmt.Errorf("save build: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var status string
		if err := tx.queryRow(ctx, `SELECT status FROM deployments WHERE id = ?`, d.ID).Scan(&status); errors.Is(err, sql.ErrNoRows) {
			return gantry.Errorf(gantry.ENOTFOUND, msgDeploymentNotFound)
		} else if err != nil {
			return fmt.Errorf("save build: %w", err)
		}
		return &gantry.TransitionError{ID: d.ID, Status: status}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	d.UpdatedAt = tx.now
	return nil
}

// ListRoutes returns the route of every project that has an active
// deployment, with that deployment: what start-up routes again.
func (st transitions) ListRoutes(ctx context.Context) ([]*gantry.Route, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	rows, err := tx.query(ctx, `SELECT id, COALESCE(subdomain, ''), route_version, active_deployment_id FROM projects
		WHERE active_deployment_id IS NOT NULL ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	var out []*gantry.Route
	active := map[string]*gantry.Route{}
	for rows.Next() {
		var r gantry.Route
		var id string
		if err := rows.Scan(&r.ProjectID, &r.Subdomain, &r.Version, &id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list routes: %w", err)
		}
		out = append(out, &r)
		active[id] = &r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	ds, err := tx.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+
		`WHERE p.active_deployment_id = d.id`)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if r := active[d.ID]; r != nil {
			r.Active = d
		}
	}
	// Then every preview label that serves a deployment.
	names, err := scanStrings(tx.query(ctx, `SELECT subdomain FROM preview_routes WHERE deployment_id IS NOT NULL ORDER BY subdomain`))
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	previews, err := previewRoutes(ctx, tx, names)
	if err != nil {
		return nil, err
	}
	return append(out, previews...), nil
}

// SetDetectedType records typ, the framework a build detected, as the
// project's type unless the project has one of its own already (anything
// but "" and "github"): one conditional statement, so it never overwrites
// the owner's edits as a whole-row write of an older copy would.
func (st transitions) SetDetectedType(ctx context.Context, id, typ string) error {
	db := st.db
	_, err := db.db.ExecContext(ctx, db.rebind(`UPDATE projects SET type = ?, updated_at = ?
		WHERE id = ? AND type IN ('', 'github')`), typ, db.now(), id)
	if err != nil {
		return fmt.Errorf("set project type: %w", err)
	}
	return nil
}

// bumpPreview counts one more version of preview label's route when it
// serves deploymentID, detaching the deployment from it when detach is set
// (a delete: the label answers "no app here"). It reports whether the
// route moved.
func bumpPreview(ctx context.Context, tx *Tx, label, deploymentID string, detach bool) (bool, error) {
	q := `UPDATE preview_routes SET version = version + 1 WHERE subdomain = ? AND deployment_id = ?`
	if detach {
		q = `UPDATE preview_routes SET version = version + 1, deployment_id = NULL WHERE subdomain = ? AND deployment_id = ?`
	}
	res, err := tx.exec(ctx, q, label, deploymentID)
	if err != nil {
		return false, fmt.Errorf("preview route: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// MsgPreviewLabelTaken is GoLive's ECONFLICT answer for a preview whose
// label another project's preview holds.
const MsgPreviewLabelTaken = "This preview's address belongs to another project's preview, so it cannot go live: rename the branch and push again"

// previewLabelFree refuses (ECONFLICT, MsgPreviewLabelTaken) preview label
// when another project than projectID holds it.
func previewLabelFree(ctx context.Context, tx *Tx, projectID, label string) error {
	var owner string
	err := tx.queryRow(ctx, `SELECT project_id FROM preview_routes WHERE subdomain = ?`, label).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && owner == projectID) {
		return nil
	} else if err != nil {
		return fmt.Errorf("preview route: %w", err)
	}
	return gantry.Errorf(gantry.ECONFLICT, MsgPreviewLabelTaken)
}

// servePreview points preview label at deploymentID of project, counting
// one more version of its route (a new label starts at 1). A label another
// project holds is left alone and refused (MsgPreviewLabelTaken): the
// update only matches the label's own project.
func servePreview(ctx context.Context, tx *Tx, projectID, label, deploymentID string) error {
	res, err := tx.exec(ctx, `INSERT INTO preview_routes (subdomain, project_id, deployment_id, version)
		VALUES (?, ?, ?, 1)
		ON CONFLICT (subdomain) DO UPDATE SET deployment_id = excluded.deployment_id,
			version = preview_routes.version + 1
		WHERE preview_routes.project_id = excluded.project_id`, label, projectID, deploymentID)
	if err != nil {
		return fmt.Errorf("preview route: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("preview route: %w", err)
	} else if n != 1 {
		return gantry.Errorf(gantry.ECONFLICT, MsgPreviewLabelTaken)
	}
	return nil
}

// previewRoutes reads the routes of preview labels as they are in tx.
func previewRoutes(ctx context.Context, tx *Tx, labels []string) ([]*gantry.Route, error) {
	var out []*gantry.Route
	for _, label := range labels {
		var r gantry.Route
		var id sql.NullString
		if err := tx.queryRow(ctx, `SELECT project_id, version, deployment_id FROM preview_routes WHERE subdomain = ?`, label).
			Scan(&r.ProjectID, &r.Version, &id); errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("preview route: %w", err)
		}
		r.Subdomain, r.Preview = label, true
		if id.Valid {
			ds, err := tx.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+`WHERE d.id = ?`, id.String)
			if err != nil {
				return nil, err
			}
			if len(ds) == 1 {
				r.Active = ds[0]
			}
		}
		out = append(out, &r)
	}
	return out, nil
}

// goLivePreview is GoLive's work for a preview d (locked, its status set
// live): it refuses a label another project holds (MsgPreviewLabelTaken)
// before it changes anything, stops the earlier live preview of d's label and the
// project's live previews beyond gantry.MaxLivePreviews, newest first (their
// labels then answer the "stopped" page), points d's label at d, and
// leaves the project's active deployment and route alone.
func goLivePreview(ctx context.Context, tx *Tx, p *projectState, d *gantry.Deployment) (replaced, labels []string, err error) {
	if err := previewLabelFree(ctx, tx, p.id, d.Subdomain); err != nil {
		return nil, nil, err
	}
	rows, err := tx.query(ctx, `SELECT id, subdomain FROM deployments WHERE project_id = ? AND target = ? AND status = ?
		AND id <> ? ORDER BY created_at DESC, id DESC`, p.id, gantry.TargetPreview, gantry.DeploymentLive, d.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("go live: %w", err)
	}
	type live struct{ id, label string }
	var others []live
	for rows.Next() {
		var l live
		if err := rows.Scan(&l.id, &l.label); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("go live: %w", err)
		}
		others = append(others, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("go live: %w", err)
	}
	kept := 1 // d
	for _, l := range others {
		if l.label != d.Subdomain && kept < gantry.MaxLivePreviews {
			kept++
			continue
		}
		if _, err := tx.exec(ctx, `UPDATE deployments SET status = ?, updated_at = ? WHERE id = ? AND status = ?`,
			gantry.DeploymentStopped, tx.now, l.id, gantry.DeploymentLive); err != nil {
			return nil, nil, fmt.Errorf("stop replaced preview: %w", err)
		}
		replaced = append(replaced, l.id)
		if l.label != d.Subdomain {
			if ok, err := bumpPreview(ctx, tx, l.label, l.id, false); err != nil {
				return nil, nil, err
			} else if ok && !slices.Contains(labels, l.label) {
				labels = append(labels, l.label)
			}
		}
	}
	if err := servePreview(ctx, tx, p.id, d.Subdomain, d.ID); err != nil {
		return nil, nil, err
	}
	return replaced, append(labels, d.Subdomain), nil
}
