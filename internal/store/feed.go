package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gantryhq/gantry"
)

// The change feed between replicas (issue 26, point 3; SCALING.md §3).
// Every transition that moves a route stamps the project's row or the
// preview label's row with the next number of one counter (stampRoutes),
// taken last in the transaction: the counter's row stays locked until the
// transition commits, so the numbers become visible in the order they were
// taken, and a replica that applied everything up to n never has to look
// below n again. (A SEQUENCE would not do: nextval hands out numbers
// without waiting, and the later one may commit first.) On PostgreSQL the
// transition also notifies ChannelRoutes with its number, delivered when it
// commits.

// The channels of the feed's notifications.
const (
	ChannelRoutes  = "gantry_routes"  // payload: a route seq
	ChannelDomains = "gantry_domains" // payload: none
	ChannelLogs    = "gantry_logs"    // payload: "deployment:seq,…"
	// ChannelPreviews: a project's previews were opened or closed.
	ChannelPreviews = "gantry_previews" // payload: none
)

// Feed reads the change feed and sends its notifications.
type Feed struct{ db *DB }

// Feed returns the change feed of db.
func (db *DB) Feed() *Feed { return &Feed{db: db} }

// nextRouteSeq takes the next route seq in tx. The counter's row stays
// locked until tx ends: take it last, after the project's and
// deployments' locks, so the one lock order holds.
func nextRouteSeq(ctx context.Context, tx *Tx) (int64, error) {
	var seq int64
	if err := tx.queryRow(ctx, `UPDATE seqs SET v = v + 1 WHERE name = 'routes' RETURNING v`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("route seq: %w", err)
	}
	return seq, nil
}

// stampRoutes stamps the routes a transition moved with the next route
// seq: the project's (when project is set) and preview labels', and on
// PostgreSQL notifies ChannelRoutes at commit. Nothing moved: nothing
// taken.
func stampRoutes(ctx context.Context, tx *Tx, project string, labels []string) error {
	if project == "" && len(labels) == 0 {
		return nil
	}
	seq, err := nextRouteSeq(ctx, tx)
	if err != nil {
		return err
	}
	if project != "" {
		if _, err := tx.exec(ctx, `UPDATE projects SET route_seq = ? WHERE id = ?`, seq, project); err != nil {
			return fmt.Errorf("route seq: %w", err)
		}
	}
	for _, l := range labels {
		if _, err := tx.exec(ctx, `UPDATE preview_routes SET route_seq = ? WHERE subdomain = ?`, seq, l); err != nil {
			return fmt.Errorf("route seq: %w", err)
		}
	}
	return notifyRoutes(ctx, tx, seq)
}

// notifyRoutes notifies ChannelRoutes of seq when tx commits (PostgreSQL).
func notifyRoutes(ctx context.Context, tx *Tx, seq int64) error {
	if tx.db.dialect != Postgres {
		return nil
	}
	if _, err := tx.exec(ctx, `SELECT pg_notify(?, ?)`, ChannelRoutes, strconv.FormatInt(seq, 10)); err != nil {
		return fmt.Errorf("route seq: %w", err)
	}
	return nil
}

// removeRoutes records, in the transaction deleting project, that its
// subdomain and preview labels are gone, under the next route seq.
func removeRoutes(ctx context.Context, tx *Tx, projectID, userID string) error {
	// The project's row first, as every transition locks it (then the
	// counter): the one lock order.
	q := `SELECT COALESCE(subdomain, '') FROM projects WHERE id = ? AND user_id = ?`
	if tx.db.dialect == Postgres {
		q += ` FOR UPDATE`
	}
	var sub string
	err := tx.queryRow(ctx, q, projectID, userID).Scan(&sub)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // DELETE answers ENOTFOUND
	} else if err != nil {
		return fmt.Errorf("remove routes: %w", err)
	}
	labels, err := scanStrings(tx.query(ctx, `SELECT subdomain FROM preview_routes WHERE project_id = ?`, projectID))
	if err != nil {
		return fmt.Errorf("remove routes: %w", err)
	}
	seq, err := nextRouteSeq(ctx, tx)
	if err != nil {
		return err
	}
	add := func(name, kind string) error {
		_, err := tx.exec(ctx, `INSERT INTO route_removals (seq, project_id, subdomain, kind) VALUES (?, ?, ?, ?)`,
			seq, projectID, name, kind)
		return err
	}
	if sub != "" {
		if err := add(sub, "project"); err != nil {
			return fmt.Errorf("remove routes: %w", err)
		}
	}
	for _, l := range labels {
		if err := add(l, "preview"); err != nil {
			return fmt.Errorf("remove routes: %w", err)
		}
	}
	return notifyRoutes(ctx, tx, seq)
}

// scanStrings reads one text column of every row.
func scanStrings(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Routes returns every route change stamped after seq, in seq order: each
// project's and preview label's route as it is now, and the names of
// projects deleted since. It reads one snapshot, so no change is half
// seen.
func (f *Feed) Routes(ctx context.Context, after int64) ([]gantry.RouteChange, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if f.db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := f.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer rollback(tx)
	var out []gantry.RouteChange
	rows, err := tx.query(ctx, `SELECT id, COALESCE(subdomain, ''), route_version, COALESCE(active_deployment_id, ''), route_seq
		FROM projects WHERE route_seq > ?`, after)
	if err != nil {
		return nil, fmt.Errorf("route feed: %w", err)
	}
	active := map[string]*gantry.Route{}
	for rows.Next() {
		var c gantry.RouteChange
		var r gantry.Route
		var id string
		if err := rows.Scan(&r.ProjectID, &r.Subdomain, &r.Version, &id, &c.Seq); err != nil {
			rows.Close()
			return nil, fmt.Errorf("route feed: %w", err)
		}
		c.Route = &r
		out = append(out, c)
		if id != "" {
			active[id] = &r
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("route feed: %w", err)
	}
	if len(active) > 0 {
		ds, err := tx.queryDeployments(ctx, `SELECT `+deploymentColumns+deploymentFrom+
			`WHERE p.active_deployment_id = d.id AND p.route_seq > ?`, after)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if r := active[d.ID]; r != nil {
				r.Active = d
			}
		}
	}
	labels, err := tx.query(ctx, `SELECT subdomain, route_seq FROM preview_routes WHERE route_seq > ?`, after)
	if err != nil {
		return nil, fmt.Errorf("route feed: %w", err)
	}
	seqs := map[string]int64{}
	var names []string
	for labels.Next() {
		var l string
		var seq int64
		if err := labels.Scan(&l, &seq); err != nil {
			labels.Close()
			return nil, fmt.Errorf("route feed: %w", err)
		}
		seqs[l] = seq
		names = append(names, l)
	}
	labels.Close()
	if err := labels.Err(); err != nil {
		return nil, fmt.Errorf("route feed: %w", err)
	}
	previews, err := previewRoutes(ctx, tx, names)
	if err != nil {
		return nil, err
	}
	for _, r := range previews {
		out = append(out, gantry.RouteChange{Seq: seqs[r.Subdomain], Route: r})
	}
	removed, err := tx.query(ctx, `SELECT seq, project_id, subdomain, kind FROM route_removals WHERE seq > ?`, after)
	if err != nil {
		return nil, fmt.Errorf("route feed: %w", err)
	}
	for removed.Next() {
		var c gantry.RouteChange
		var r gantry.Route
		var kind string
		if err := removed.Scan(&c.Seq, &r.ProjectID, &r.Subdomain, &kind); err != nil {
			removed.Close()
			return nil, fmt.Errorf("route feed: %w", err)
		}
		r.Preview = kind == "preview"
		c.Route, c.Removed = &r, true
		out = append(out, c)
	}
	removed.Close()
	if err := removed.Err(); err != nil {
		return nil, fmt.Errorf("route feed: %w", err)
	}
	slices.SortStableFunc(out, func(a, b gantry.RouteChange) int { return int(min(max(a.Seq-b.Seq, -1), 1)) })
	return out, nil
}

// RouteSeq returns the newest route seq taken: a replica that reads every
// route after reading it (deploy.Service.Open) follows the feed from there
// (deploy.NewReplica).
func (f *Feed) RouteSeq(ctx context.Context) (int64, error) {
	var v int64
	if err := f.db.queryRow(ctx, `SELECT v FROM seqs WHERE name = 'routes'`).Scan(&v); err != nil {
		return 0, fmt.Errorf("route seq: %w", err)
	}
	return v, nil
}

// Notify sends payloads on channel (PostgreSQL's NOTIFY) in one statement,
// so one commit however many there are. On SQLite it does nothing: one
// process has every change already.
func (f *Feed) Notify(ctx context.Context, channel string, payloads []string) error {
	if f.db.dialect != Postgres || len(payloads) == 0 {
		return nil
	}
	_, err := f.db.db.ExecContext(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, channel, payloads)
	if err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}
