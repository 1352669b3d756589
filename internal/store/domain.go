package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
)

// Domains keeps projects' custom domains (gantry.DomainStore): their
// claims, checks and routes.
type Domains struct{ db *DB }

// Domains returns the custom domains' store.
func (db *DB) Domains() *Domains { return &Domains{db} }

var _ gantry.DomainStore = (*Domains)(nil)

// FindProject finds the owner's project, as the domains service checks a
// domain's project with it (DB.FindProject).
func (ds *Domains) FindProject(ctx context.Context, userID, id string) (*gantry.Project, error) {
	return ds.db.FindProject(ctx, userID, id)
}

const domainColumns = `d.id, d.project_id, d.user_id, d.name, d.apex, d.is_primary, d.redirect, d.token, d.status,
	d.error, d.next_check_at, d.attempts, d.verified_at, d.created_at, d.failing_since`

// CreateDomain inserts d for its owner's project d.ProjectID (ENOTFOUND
// when the project is not d.UserID's), unless the project already has max
// domains (gantry.ErrDomainLimit of plan) or the owner has added the name
// already (ECONFLICT, naming the owner's project). Other accounts' claims
// of the name do not stop it, nor are they told of. The project's first
// domain becomes its primary one.
func (ds *Domains) CreateDomain(ctx context.Context, d *gantry.Domain, max int, plan string) error {
	db := ds.db
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
	var mine string
	err = tx.queryRow(ctx, `SELECT p.name FROM domains o JOIN projects p ON p.id = o.project_id
		WHERE o.user_id = ? AND o.name = ?`, d.UserID, d.Name).Scan(&mine)
	if err == nil {
		return gantry.Errorf(gantry.ECONFLICT, "%s is already added to your project %s", d.Name, gantry.Quote(mine))
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("find domain: %w", err)
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
		return gantry.Errorf(gantry.ECONFLICT, "%s is already added to one of your projects", d.Name)
	} else if err != nil {
		return fmt.Errorf("create domain: %w", err)
	}
	return tx.Commit()
}

// ListDomains returns the domains of the owner's project, oldest first.
func (ds *Domains) ListDomains(ctx context.Context, userID, projectID string) ([]*gantry.Domain, error) {
	db := ds.db
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
func (ds *Domains) FindDomain(ctx context.Context, userID, projectID, id string) (*gantry.Domain, error) {
	db := ds.db
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
func (ds *Domains) DeleteDomain(ctx context.Context, userID, projectID, id string) error {
	db := ds.db
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
func (ds *Domains) SetPrimaryDomain(ctx context.Context, userID, projectID, id string) error {
	db := ds.db
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
func (ds *Domains) SetDomainRedirect(ctx context.Context, userID, projectID, id, redirect string) error {
	db := ds.db
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

// SaveDomainCheck writes the outcome of a check of d.ID, and lets go of
// its claim (ClaimDueDomains): its next check is due at d.NextCheckAt.
// When d is now
// served, any other account's domain of the same name that was served
// stops being so in the same transaction (status error, with displaced as
// its reason): those are returned, for their owners to be told.
func (ds *Domains) SaveDomainCheck(ctx context.Context, d *gantry.Domain, displaced string) ([]*gantry.Domain, error) {
	db := ds.db
	d.NextCheckAt = d.NextCheckAt.UTC().Truncate(time.Millisecond)
	if d.VerifiedAt != nil {
		t := d.VerifiedAt.UTC().Truncate(time.Millisecond)
		d.VerifiedAt = &t
	}
	if d.FailingSince != nil {
		t := d.FailingSince.UTC().Truncate(time.Millisecond)
		d.FailingSince = &t
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	var out []*gantry.Domain
	if d.Serving() {
		rows, err := tx.query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.name = ? AND d.id <> ? AND d.status IN (?, ?)`,
			d.Name, d.ID, gantry.DomainVerified, gantry.DomainCertificateIssued)
		if err != nil {
			return nil, fmt.Errorf("find served domain: %w", err)
		}
		if out, err = scanDomains(rows); err != nil {
			return nil, err
		}
		for _, o := range out {
			o.Status, o.Error, o.FailingSince, o.NextCheckAt = gantry.DomainError, displaced, nil, tx.now
			if _, err := tx.exec(ctx, `UPDATE domains SET status = ?, error = ?, failing_since = NULL, next_check_at = ?
				WHERE id = ?`, o.Status, o.Error, o.NextCheckAt, o.ID); err != nil {
				return nil, fmt.Errorf("displace domain: %w", err)
			}
		}
	}
	res, err := tx.exec(ctx, `UPDATE domains SET status = ?, error = ?, next_check_at = ?, attempts = ?,
		verified_at = ?, failing_since = ?, check_claimed_until = NULL WHERE id = ?`, d.Status, d.Error, d.NextCheckAt, d.Attempts,
		nullTime(d.VerifiedAt), nullTime(d.FailingSince), d.ID)
	if err != nil {
		return nil, fmt.Errorf("save domain check: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, gantry.Errorf(gantry.ENOTFOUND, "Domain not found")
	}
	return out, tx.Commit()
}

// ExpireDomainClaims deletes the domains never verified (waiting for DNS,
// or given up) that were added before before, and returns them. A project
// whose primary domain goes gets its oldest remaining one as primary.
func (ds *Domains) ExpireDomainClaims(ctx context.Context, before time.Time) ([]*gantry.Domain, error) {
	db := ds.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	rows, err := tx.query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.verified_at IS NULL AND d.status IN (?, ?)
		AND d.created_at < ? ORDER BY d.created_at, d.id`, gantry.DomainWaitingDNS, gantry.DomainError,
		before.UTC().Truncate(time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("expired domain claims: %w", err)
	}
	gone, err := scanDomains(rows)
	if err != nil {
		return nil, err
	}
	for _, d := range gone {
		if _, err := tx.exec(ctx, `DELETE FROM domains WHERE id = ?`, d.ID); err != nil {
			return nil, fmt.Errorf("expire domain claim: %w", err)
		}
		if d.Primary {
			if _, err := tx.exec(ctx, `UPDATE domains SET is_primary = TRUE WHERE id = (
				SELECT id FROM domains WHERE project_id = ? ORDER BY created_at, id LIMIT 1)`, d.ProjectID); err != nil {
				return nil, fmt.Errorf("pick primary domain: %w", err)
			}
		}
	}
	return gone, tx.Commit()
}

// SetDomainStatus moves domain name from status from to status to.
func (ds *Domains) SetDomainStatus(ctx context.Context, name, from, to string) error {
	db := ds.db
	if _, err := db.db.ExecContext(ctx, db.rebind(`UPDATE domains SET status = ? WHERE name = ? AND status = ?`),
		to, name, from); err != nil {
		return fmt.Errorf("set domain status: %w", err)
	}
	return nil
}

// DomainCheckClaim is how long ClaimDueDomains keeps the domains it
// hands out from every other caller: longer than a check takes; a replica
// that dies mid-check lets them go after it.
const DomainCheckClaim = 2 * time.Minute

// ClaimDueDomains returns up to limit domains waiting for DNS or served
// (their re-check) whose next check is due at now and that no other
// checker holds, and holds them for DomainCheckClaim, in one transaction
// (SKIP LOCKED on PostgreSQL): with several replicas each due check runs
// once. Saving a check's outcome sets the next one and lets the claim go
// (SaveDomainCheck).
func (ds *Domains) ClaimDueDomains(ctx context.Context, now time.Time, limit int) ([]*gantry.Domain, error) {
	db := ds.db
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	now = now.UTC().Truncate(time.Millisecond)
	q := `SELECT d.id FROM domains d
		WHERE d.status IN (?, ?, ?) AND d.next_check_at <= ?
			AND (d.check_claimed_until IS NULL OR d.check_claimed_until <= ?)
		ORDER BY d.next_check_at, d.id LIMIT ?`
	if db.dialect == Postgres {
		q += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := tx.query(ctx, q, gantry.DomainWaitingDNS, gantry.DomainVerified, gantry.DomainCertificateIssued, now, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due domains: %w", err)
	}
	var ids []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("due domains: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due domains: %w", err)
	}
	if len(ids) == 0 {
		return nil, tx.Commit()
	}
	in := "?" + strings.Repeat(", ?", len(ids)-1)
	if _, err := tx.exec(ctx, `UPDATE domains SET check_claimed_until = ? WHERE id IN (`+in+`)`,
		append([]any{now.Add(DomainCheckClaim)}, ids...)...); err != nil {
		return nil, fmt.Errorf("claim due domains: %w", err)
	}
	rows, err = tx.query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.id IN (`+in+`) ORDER BY d.next_check_at, d.id`, ids...)
	if err != nil {
		return nil, fmt.Errorf("due domains: %w", err)
	}
	due, err := scanDomains(rows)
	if err != nil {
		return nil, err
	}
	return due, tx.Commit()
}

// DomainRoutes returns every domain with its project's subdomain, whether
// it is verified (served) and whether the project's active deployment is
// live, by name.
func (ds *Domains) DomainRoutes(ctx context.Context) ([]gantry.DomainRoute, error) {
	return ds.domainRoutes(ctx, "")
}

// DomainRoute is the route of the domain called name (a certificate's
// decision asks for one name: no reading of every route).
func (ds *Domains) DomainRoute(ctx context.Context, name string) (gantry.DomainRoute, error) {
	routes, err := ds.domainRoutes(ctx, name)
	if err != nil {
		return gantry.DomainRoute{}, err
	}
	if len(routes) == 0 {
		return gantry.DomainRoute{}, gantry.Errorf(gantry.ENOTFOUND, "domain not found")
	}
	return routes[0], nil
}

// domainRoutes is DomainRoutes, of the domain called name alone unless
// name is "". Several accounts may claim a name: its route is the served
// claim's, else the oldest claim's.
func (ds *Domains) domainRoutes(ctx context.Context, name string) ([]gantry.DomainRoute, error) {
	db := ds.db
	where, args := "", []any{gantry.DeploymentLive}
	if name != "" {
		where, args = "WHERE d.name = ?", append(args, name)
	}
	args = append(args, gantry.DomainVerified, gantry.DomainCertificateIssued)
	rows, err := db.db.QueryContext(ctx, db.rebind(`SELECT d.name, d.user_id, d.status, d.redirect, COALESCE(p.subdomain, ''),
		CASE WHEN ad.status = ? THEN 1 ELSE 0 END
		FROM domains d JOIN projects p ON p.id = d.project_id
		LEFT JOIN deployments ad ON ad.id = p.active_deployment_id
		`+where+` ORDER BY d.name, CASE WHEN d.status IN (?, ?) THEN 0 ELSE 1 END, d.created_at, d.id`), args...)
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
		if n := len(routes); n > 0 && routes[n-1].Name == r.Name {
			continue // another claim of the name
		}
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
	var verified, failing sql.NullTime
	dest := append([]any{&d.ID, &d.ProjectID, &d.UserID, &d.Name, &d.Apex, &d.Primary, &d.Redirect, &d.Token, &d.Status,
		&d.Error, &d.NextCheckAt, &d.Attempts, &verified, &d.CreatedAt, &failing}, extra...)
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("scan domain: %w", err)
	}
	d.NextCheckAt, d.CreatedAt = d.NextCheckAt.UTC(), d.CreatedAt.UTC()
	if verified.Valid {
		t := verified.Time.UTC()
		d.VerifiedAt = &t
	}
	if failing.Valid {
		t := failing.Time.UTC()
		d.FailingSince = &t
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
