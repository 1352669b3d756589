package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

var _ gantry.DomainStore = (*DB)(nil)

const domainColumns = `d.id, d.project_id, d.user_id, d.name, d.apex, d.is_primary, d.redirect, d.token, d.status,
	d.error, d.next_check_at, d.attempts, d.verified_at, d.created_at`

// CreateDomain inserts d for its owner's project d.ProjectID (ENOTFOUND
// when the project is not d.UserID's), unless the project already has max
// domains (gantry.ErrDomainLimit of plan) or the name is taken anywhere
// (ECONFLICT). The project's first domain becomes its primary one.
func (db *DB) CreateDomain(ctx context.Context, d *gantry.Domain, max int, plan string) error {
	id, err := newID()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := findProject(ctx, tx, d.UserID, d.ProjectID); err != nil {
		return err
	}
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM domains WHERE project_id = ?`, d.ProjectID).Scan(&n); err != nil {
		return fmt.Errorf("count domains: %w", err)
	}
	if n >= max {
		return gantry.ErrDomainLimit(plan)
	}
	d.ID, d.CreatedAt, d.Primary = id, tx.now, n == 0
	if d.NextCheckAt.IsZero() {
		d.NextCheckAt = tx.now
	}
	d.NextCheckAt = d.NextCheckAt.UTC().Truncate(time.Millisecond)
	_, err = tx.exec(ctx, `INSERT INTO domains (id, project_id, user_id, name, apex, is_primary, redirect, token, status,
		error, next_check_at, attempts, verified_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.ProjectID, d.UserID, d.Name, d.Apex, d.Primary, d.Redirect, d.Token, d.Status,
		d.Error, d.NextCheckAt, d.Attempts, nullTime(d.VerifiedAt), d.CreatedAt)
	if _, ok := uniqueViolation(err); ok {
		return gantry.Errorf(gantry.ECONFLICT, "%s is already added to a project", d.Name)
	} else if err != nil {
		return fmt.Errorf("create domain: %w", err)
	}
	return tx.Commit()
}

// ListDomains returns the domains of the owner's project, oldest first.
func (db *DB) ListDomains(ctx context.Context, userID, projectID string) ([]*gantry.Domain, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	if _, err := findProject(ctx, tx, userID, projectID); err != nil {
		return nil, err
	}
	rows, err := tx.query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.project_id = ? AND d.user_id = ?
		ORDER BY d.created_at, d.id`, projectID, userID)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return scanDomains(rows)
}

// FindDomain returns domain id of the owner's project.
func (db *DB) FindDomain(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	return findDomain(ctx, tx, userID, projectID, id)
}

func findDomain(ctx context.Context, tx *Tx, userID, projectID, id string) (*gantry.Domain, error) {
	rows, err := tx.query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.id = ? AND d.project_id = ? AND d.user_id = ?`,
		id, projectID, userID)
	if err != nil {
		return nil, fmt.Errorf("find domain: %w", err)
	}
	ds, err := scanDomains(rows)
	if err != nil {
		return nil, err
	} else if len(ds) == 0 {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Domain not found")
	}
	return ds[0], nil
}

// DeleteDomain removes domain id of the owner's project. When it was the
// primary one, the oldest remaining domain becomes primary.
func (db *DB) DeleteDomain(ctx context.Context, userID, projectID, id string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	d, err := findDomain(ctx, tx, userID, projectID, id)
	if err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `DELETE FROM domains WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete domain: %w", err)
	}
	if d.Primary {
		if _, err := tx.exec(ctx, `UPDATE domains SET is_primary = TRUE WHERE id = (
			SELECT id FROM domains WHERE project_id = ? ORDER BY created_at, id LIMIT 1)`, projectID); err != nil {
			return fmt.Errorf("pick primary domain: %w", err)
		}
	}
	return tx.Commit()
}

// SetPrimaryDomain makes id the primary domain of the owner's project.
func (db *DB) SetPrimaryDomain(ctx context.Context, userID, projectID, id string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := findDomain(ctx, tx, userID, projectID, id); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `UPDATE domains SET is_primary = (id = ?) WHERE project_id = ?`, id, projectID); err != nil {
		return fmt.Errorf("set primary domain: %w", err)
	}
	return tx.Commit()
}

// SetDomainRedirect sets the redirect option of domain id of the owner's
// project (checked by the caller).
func (db *DB) SetDomainRedirect(ctx context.Context, userID, projectID, id, redirect string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if _, err := findDomain(ctx, tx, userID, projectID, id); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `UPDATE domains SET redirect = ? WHERE id = ?`, redirect, id); err != nil {
		return fmt.Errorf("set domain redirect: %w", err)
	}
	return tx.Commit()
}

// SaveDomainCheck writes the outcome of a check of d.ID.
func (db *DB) SaveDomainCheck(ctx context.Context, d *gantry.Domain) error {
	d.NextCheckAt = d.NextCheckAt.UTC().Truncate(time.Millisecond)
	if d.VerifiedAt != nil {
		t := d.VerifiedAt.UTC().Truncate(time.Millisecond)
		d.VerifiedAt = &t
	}
	res, err := db.db.ExecContext(ctx, db.rebind(`UPDATE domains SET status = ?, error = ?, next_check_at = ?, attempts = ?,
		verified_at = ? WHERE id = ?`), d.Status, d.Error, d.NextCheckAt, d.Attempts, nullTime(d.VerifiedAt), d.ID)
	if err != nil {
		return fmt.Errorf("save domain check: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "Domain not found")
	}
	return nil
}

// SetDomainStatus moves domain name from status from to status to.
func (db *DB) SetDomainStatus(ctx context.Context, name, from, to string) error {
	if _, err := db.db.ExecContext(ctx, db.rebind(`UPDATE domains SET status = ? WHERE name = ? AND status = ?`),
		to, name, from); err != nil {
		return fmt.Errorf("set domain status: %w", err)
	}
	return nil
}

// DueDomains returns up to limit domains waiting for DNS whose next check
// is due by now, the earliest first.
func (db *DB) DueDomains(ctx context.Context, now time.Time, limit int) ([]*gantry.Domain, error) {
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT `+domainColumns+` FROM domains d
		WHERE d.status = ? AND d.next_check_at <= ? ORDER BY d.next_check_at, d.id LIMIT ?`),
		gantry.DomainWaitingDNS, now.UTC().Truncate(time.Millisecond), limit)
	if err != nil {
		return nil, fmt.Errorf("due domains: %w", err)
	}
	return scanDomains(rows)
}

// DomainRoutes returns every domain with its project's subdomain, whether
// it is verified (served) and whether the project's active deployment is
// live, by name.
func (db *DB) DomainRoutes(ctx context.Context) ([]gantry.DomainRoute, error) {
	return db.domainRoutes(ctx, "")
}

// DomainRoute is the route of the domain called name (a certificate's
// decision asks for one name: no reading of every route).
func (db *DB) DomainRoute(ctx context.Context, name string) (gantry.DomainRoute, error) {
	routes, err := db.domainRoutes(ctx, name)
	if err != nil {
		return gantry.DomainRoute{}, err
	}
	if len(routes) == 0 {
		return gantry.DomainRoute{}, gantry.Errorf(gantry.ENOTFOUND, "domain not found")
	}
	return routes[0], nil
}

// domainRoutes is DomainRoutes, of the domain called name alone unless
// name is "".
func (db *DB) domainRoutes(ctx context.Context, name string) ([]gantry.DomainRoute, error) {
	where, args := "", []any{gantry.DeploymentLive}
	if name != "" {
		where, args = "WHERE d.name = ?", append(args, name)
	}
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT d.name, d.user_id, d.status, d.redirect, COALESCE(p.subdomain, ''),
		CASE WHEN ad.status = ? THEN 1 ELSE 0 END
		FROM domains d JOIN projects p ON p.id = d.project_id
		LEFT JOIN deployments ad ON ad.id = p.active_deployment_id
		`+where+` ORDER BY d.name`), args...)
	if err != nil {
		return nil, fmt.Errorf("domain routes: %w", err)
	}
	defer rows.Close()
	var routes []gantry.DomainRoute
	for rows.Next() {
		var r gantry.DomainRoute
		var status string
		var live int
		if err := rows.Scan(&r.Name, &r.UserID, &status, &r.Redirect, &r.Subdomain, &live); err != nil {
			return nil, fmt.Errorf("scan domain route: %w", err)
		}
		r.Serve = (&gantry.Domain{Status: status}).Serving()
		r.Live = live == 1
		routes = append(routes, r)
	}
	return routes, rows.Err()
}

func scanDomains(rows *sql.Rows) ([]*gantry.Domain, error) {
	defer rows.Close()
	out := []*gantry.Domain{}
	for rows.Next() {
		var d gantry.Domain
		if err := scanDomainInto(rows, &d); err != nil {
			return nil, err
		}
		out = append(out, &d)
	}
	return out, rows.Err()
}

func scanDomainInto(rows *sql.Rows, d *gantry.Domain, extra ...any) error {
	var verified sql.NullTime
	dest := append([]any{&d.ID, &d.ProjectID, &d.UserID, &d.Name, &d.Apex, &d.Primary, &d.Redirect, &d.Token, &d.Status,
		&d.Error, &d.NextCheckAt, &d.Attempts, &verified, &d.CreatedAt}, extra...)
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("scan domain: %w", err)
	}
	d.NextCheckAt, d.CreatedAt = d.NextCheckAt.UTC(), d.CreatedAt.UTC()
	if verified.Valid {
		t := verified.Time.UTC()
		d.VerifiedAt = &t
	}
	d.Records = []gantry.DNSRecord{}
	return nil
}

// nullTime is t for a nullable column: NULL when nil.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Truncate(time.Millisecond)
}
