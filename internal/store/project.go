package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
)

var _ gantry.ProjectStore = (*DB)(nil)

// projectColumns lists the projects columns (aliased p) in the order
// scanProject reads them, with the active deployment's url joined in.
const projectColumns = `p.id, p.user_id, p.name, p.description, p.status, p.type, p.repository, p.branch,
	p.build_config, p.show_in_discover, p.always_on, COALESCE(ad.sleeping AND ad.status = 'live', FALSE), COALESCE(p.subdomain, ''), COALESCE(p.active_deployment_id, ''),
	COALESCE(ad.url, ''), p.created_at, p.updated_at, p.auto_deploy, p.watch_commits, p.deploy_hook_sealed`

const projectFrom = ` FROM projects p LEFT JOIN deployments ad ON ad.id = p.active_deployment_id `

// CreateProject inserts p for p.UserID. It fills ID, timestamps, status
// draft and a platform-wide unique subdomain: SubdomainBase(p.Name), else
// "app", then with "-2", "-3", … appended while the name is taken or
// reserved. Creating more projects than the owner's plan allows is
// EFORBIDDEN with a message naming the plan and the limit.
func (st projects) CreateProject(ctx context.Context, p *gantry.Project) error {
	db := st.db
	for attempt := 0; ; attempt++ {
		err := db.createProject(ctx, p)
		if _, ok := uniqueViolation(err); ok && attempt < 5 {
			continue // another writer took the subdomain between check and insert (PostgreSQL)
		}
		return err
	}
}

func (st projects) createProject(ctx context.Context, p *gantry.Project) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	u, err := findUserByID(ctx, tx, p.UserID)
	if err != nil {
		return err
	}
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM projects WHERE user_id = ?`, p.UserID).Scan(&n); err != nil {
		return fmt.Errorf("count projects: %w", err)
	}
	if n >= u.Subscription.MaxProjects {
		return gantry.ErrProjectLimit(u.Subscription)
	}
	sub, err := freeSubdomain(ctx, tx, p.Name)
	if err != nil {
		return err
	}
	id, err := newID()
	if err != nil {
		return err
	}
	repo, cfg, err := encodeProject(p)
	if err != nil {
		return err
	}
	if p.Status == "" {
		p.Status = gantry.ProjectDraft
	}
	if _, err := tx.exec(ctx, `INSERT INTO projects (id, user_id, name, description, status, type, repository,
			branch, build_config, show_in_discover, subdomain, created_at, updated_at, auto_deploy, watch_commits)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, p.UserID, p.Name, p.Description, p.Status, p.Type, repo, p.Branch, cfg, p.ShowInDiscover, sub,
		tx.now, tx.now, true, p.WatchCommits); err != nil { // every project starts with auto-deploy on
		return fmt.Errorf("create project: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	p.ID, p.Subdomain, p.CreatedAt, p.UpdatedAt, p.AutoDeploy = id, sub, tx.now, tx.now, true
	p.ActiveDeployment, p.Deployments = nil, []gantry.DeploymentRef{}
	return nil
}

// freeSubdomain returns the first of base, base-2, base-3, … that no
// project holds and that is not reserved.
func freeSubdomain(ctx context.Context, tx *Tx, name string) (string, error) {
	base := gantry.SubdomainBase(name)
	if base == "" {
		base = "app"
	}
	for i := 1; i < 10000; i++ {
		cand := base
		if i > 1 {
			suffix := "-" + strconv.Itoa(i)
			if len(cand)+len(suffix) > 63 {
				// Trimmed, so the cut never leaves "--" (preview labels'
				// separator, gantry.PreviewSeparator) before the suffix.
				cand = strings.TrimRight(cand[:63-len(suffix)], "-")
			}
			cand += suffix
		}
		if gantry.ReservedSubdomains[cand] {
			continue
		}
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM projects WHERE subdomain = ?`, cand).Scan(&n); err != nil {
			return "", fmt.Errorf("check subdomain: %w", err)
		}
		if n == 0 {
			return cand, nil
		}
	}
	return "", gantry.Errorf(gantry.ECONFLICT, "No free subdomain for %q: choose another project name", name)
}

func encodeProject(p *gantry.Project) (repo, cfg string, err error) {
	r, err := json.Marshal(p.Repository)
	if err != nil {
		return "", "", fmt.Errorf("encode repository: %w", err)
	}
	c, err := json.Marshal(p.BuildConfig)
	if err != nil {
		return "", "", fmt.Errorf("encode build config: %w", err)
	}
	return string(r), string(c), nil
}

// FindProject returns the owner's project with its newest deployments, or
// ENOTFOUND (also when it belongs to someone else). An empty userID finds
// any owner's project.
func (st projects) FindProject(ctx context.Context, userID, id string) (*gantry.Project, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	return findProject(ctx, tx, userID, id)
}

func findProject(ctx context.Context, tx *Tx, userID, id string) (*gantry.Project, error) {
	q := `SELECT ` + projectColumns + projectFrom + `WHERE p.id = ?`
	args := []any{id}
	if userID != "" {
		q += ` AND p.user_id = ?`
		args = append(args, userID)
	}
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find project: %w", err)
	}
	ps, err := scanProjects(rows)
	if err != nil {
		return nil, err
	} else if len(ps) == 0 {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	p := ps[0]
	refs, err := tx.query(ctx, `SELECT id, version, subdomain, url, status, created_at FROM deployments
		WHERE project_id = ? ORDER BY created_at DESC, id DESC LIMIT 20`, p.ID)
	if err != nil {
		return nil, fmt.Errorf("project deployments: %w", err)
	}
	defer refs.Close()
	for refs.Next() {
		var d gantry.DeploymentRef
		if err := refs.Scan(&d.ID, &d.Version, &d.Subdomain, &d.URL, &d.Status, &d.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan deployment ref: %w", err)
		}
		d.CreatedAt = d.CreatedAt.UTC()
		p.Deployments = append(p.Deployments, d)
	}
	return p, refs.Err()
}

// ListProjects returns the owner's projects, newest first.
func (st projects) ListProjects(ctx context.Context, userID string) ([]*gantry.Project, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	rows, err := tx.query(ctx, `SELECT `+projectColumns+projectFrom+
		`WHERE p.user_id = ? ORDER BY p.created_at DESC, p.id DESC`, userID)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return scanProjects(rows)
}

// UpdateProject saves p's name, description, type, repository, branch,
// build config and Discover listing; ENOTFOUND unless p.UserID owns
// project p.ID. The subdomain never changes after creation, so live links
// keep working after a rename. The gallery triggers (migrations 00004 and
// 00009) list or unlist the project's app in the same transaction.
func (st projects) UpdateProject(ctx context.Context, p *gantry.Project) error {
	db := st.db
	repo, cfg, err := encodeProject(p)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, `UPDATE projects SET name = ?, description = ?, type = ?, repository = ?, branch = ?,
		build_config = ?, show_in_discover = ?, auto_deploy = ?, watch_commits = ?, always_on = ?, updated_at = ?
		WHERE id = ? AND user_id = ?`,
		p.Name, p.Description, p.Type, repo, p.Branch, cfg, p.ShowInDiscover, p.AutoDeploy, p.WatchCommits, p.AlwaysOn, tx.now, p.ID, p.UserID)
	if err != nil {
		return fmt.Errorf("update project: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	p.UpdatedAt = tx.now
	return tx.Commit()
}

// SetRepository replaces the owner's project's repository facts (and its
// updated time), nothing else; ENOTFOUND otherwise.
func (st projects) SetRepository(ctx context.Context, userID, id string, r gantry.Repository) error {
	db := st.db
	repo, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode repository: %w", err)
	}
	return db.execOne(ctx, "Project not found", `UPDATE projects SET repository = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
		string(repo), db.now(), id, userID)
}

// DeleteProject removes the owner's project and, by cascade, its
// deployments and their log entries; ENOTFOUND otherwise. Stopping apps and
// removing files is the caller's work, done before.
//
// Its subdomain and preview labels are recorded as removed under the next
// route seq, so other replicas' edges drop them too (Feed.Routes).
func (st projects) DeleteProject(ctx context.Context, userID, id string) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if err := removeRoutes(ctx, tx, id, userID); err != nil {
		return err
	}
	res, err := tx.exec(ctx, `DELETE FROM projects WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return fmt.Errorf("delete project: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	return tx.Commit()
}

// CountProjects counts the owner's projects.
func (st projects) CountProjects(ctx context.Context, userID string) (int, error) {
	db := st.db
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM projects WHERE user_id = ?`, userID).Scan(&n)
	return n, err
}

// SetActiveDeployment points a project at deploymentID, or at none for
// "". Like UpdateDeployment it is a raw write for tests and tools setting
// up rows: it moves neither the project's status nor its route version.
// The platform moves a project's active deployment only with GoLive and
// DeleteDeployment (transition.go).
func (st projects) SetActiveDeployment(ctx context.Context, id, deploymentID string) error {
	db := st.db
	var v any
	if deploymentID != "" {
		v = deploymentID
	}
	return db.execOne(ctx, "Project not found", `UPDATE projects SET active_deployment_id = ?, updated_at = ? WHERE id = ?`,
		v, db.now(), id)
}

// execOne runs a statement that must touch exactly one row; notFound is
// the ENOTFOUND message otherwise.
func (st projects) execOne(ctx context.Context, notFound, query string, args ...any) error {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	res, err := tx.exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", query[:min(len(query), 24)], err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "%s", notFound)
	}
	return tx.Commit()
}

func scanProjects(rows *sql.Rows) ([]*gantry.Project, error) {
	defer rows.Close()
	var out []*gantry.Project
	for rows.Next() {
		var p gantry.Project
		var repo, cfg, activeID, activeURL string
		if err := rows.Scan(&p.ID, &p.UserID, &p.Name, &p.Description, &p.Status, &p.Type, &repo, &p.Branch,
			&cfg, &p.ShowInDiscover, &p.AlwaysOn, &p.Sleeping, &p.Subdomain, &activeID, &activeURL, &p.CreatedAt, &p.UpdatedAt,
			&p.AutoDeploy, &p.WatchCommits, &p.DeployHookSealed); err != nil {
			return nil, fmt.Errorf("scan project: %w", err)
		}
		if err := json.Unmarshal([]byte(repo), &p.Repository); err != nil {
			return nil, fmt.Errorf("decode repository of project %s: %w", p.ID, err)
		}
		if err := json.Unmarshal([]byte(cfg), &p.BuildConfig); err != nil {
			return nil, fmt.Errorf("decode build config of project %s: %w", p.ID, err)
		}
		if activeID != "" {
			p.ActiveDeployment = &gantry.ActiveDeployment{ID: activeID, Subdomain: p.Subdomain, URL: activeURL}
		}
		p.Deployments = []gantry.DeploymentRef{}
		p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
		out = append(out, &p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if out == nil {
		out = []*gantry.Project{}
	}
	return out, nil
}

// SetDeployHook stores the project's deploy hook token: hash (its SHA-256,
// hex, what FindProjectByDeployHook looks up) and sealed (the token sealed
// for the owner to see). With onlyIfNone it writes only when the project
// has no token yet and reports whether it wrote (a first token made by two
// requests at once is made once); otherwise it replaces the token (a
// rotation). ENOTFOUND when the project is gone.
func (st projects) SetDeployHook(ctx context.Context, projectID, hash, sealed string, onlyIfNone bool) (bool, error) {
	db := st.db
	q := `UPDATE projects SET deploy_hook_hash = ?, deploy_hook_sealed = ?, updated_at = ? WHERE id = ?`
	if onlyIfNone {
		q += ` AND deploy_hook_hash IS NULL`
	}
	res, err := db.db.ExecContext(ctx, db.rebind(q), hash, sealed, db.now(), projectID)
	if err != nil {
		return false, fmt.Errorf("set deploy hook: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 0 && !onlyIfNone {
		return false, gantry.Errorf(gantry.ENOTFOUND, "Project not found")
	}
	return n == 1, nil
}

// FindProjectByDeployHook returns the project whose deploy hook token has
// SHA-256 hash (hex); ENOTFOUND when none has.
func (st projects) FindProjectByDeployHook(ctx context.Context, hash string) (*gantry.Project, error) {
	db := st.db
	var id string
	err := db.queryRow(ctx, `SELECT id FROM projects WHERE deploy_hook_hash = ?`, hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Deploy hook not found")
	} else if err != nil {
		return nil, fmt.Errorf("find deploy hook: %w", err)
	}
	return db.FindProject(ctx, "", id)
}

// ClaimWatch takes the next project the commit watcher should check at now
// — watch on, auto-deploy on, its next check due, not claimed by another
// watcher — and claims it until now+lease, in one transaction (SKIP LOCKED
// on PostgreSQL), so two replicas never check one project at once.
// ENOTFOUND when none is due.
func (st projects) ClaimWatch(ctx context.Context, now time.Time, lease time.Duration) (*gantry.WatchState, error) {
	db := st.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	q := `SELECT id, watch_head, watch_backoff_ms FROM projects
		WHERE watch_commits AND auto_deploy AND (watch_next_at IS NULL OR watch_next_at <= ?)
			AND (watch_claimed_until IS NULL OR watch_claimed_until <= ?)
		ORDER BY watch_next_at, id LIMIT 1`
	if db.dialect == Postgres {
		q += ` FOR UPDATE SKIP LOCKED`
	}
	var w gantry.WatchState
	var backoff int64
	now = now.UTC()
	if err := tx.queryRow(ctx, q, now, now).Scan(&w.ProjectID, &w.Head, &backoff); errors.Is(err, sql.ErrNoRows) {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "No project to watch")
	} else if err != nil {
		return nil, fmt.Errorf("claim watch: %w", err)
	}
	if _, err := tx.exec(ctx, `UPDATE projects SET watch_claimed_until = ? WHERE id = ?`, now.Add(lease), w.ProjectID); err != nil {
		return nil, fmt.Errorf("claim watch: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	w.Backoff = time.Duration(backoff) * time.Millisecond
	return &w, nil
}

// FinishWatch records a check of the project's watched branch: the head it
// saw, when to check next and the interval it backs off to, and releases
// the claim.
func (st projects) FinishWatch(ctx context.Context, projectID, head string, next time.Time, backoff time.Duration) error {
	db := st.db
	_, err := db.db.ExecContext(ctx, db.rebind(`UPDATE projects SET watch_head = ?, watch_next_at = ?, watch_backoff_ms = ?,
		watch_claimed_until = NULL WHERE id = ?`), head, next.UTC(), backoff.Milliseconds(), projectID)
	if err != nil {
		return fmt.Errorf("finish watch: %w", err)
	}
	return nil
}
