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

// Placements keeps the replicas' heartbeats (nodes) and the home node of
// each live server app (app_placements; issue 26, point 5). Leases are
// compared with the database's clock on PostgreSQL (dbNow).
type Placements struct{ db *DB }

// Placements returns the apps' placements.
func (db *DB) Placements() gantry.PlacementStore { return &Placements{db} }

// Beat upserts node's heartbeat, renews node's placements and returns
// them, in one transaction.
func (p *Placements) Beat(ctx context.Context, node, peerAddr string, lease time.Duration) ([]gantry.AppPlacement, error) {
	tx, err := p.db.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	defer tx.Rollback()
	until, arg := p.db.leaseUntil(lease)
	if _, err := tx.ExecContext(ctx, p.db.rebind(`INSERT INTO nodes (id, peer_addr, seen_until) VALUES (?, ?, `+until+`)
		ON CONFLICT (id) DO UPDATE SET peer_addr = excluded.peer_addr, seen_until = excluded.seen_until`), node, peerAddr, arg); err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, p.db.rebind(`UPDATE app_placements SET lease_until = `+until+` WHERE node_id = ?`), arg, node); err != nil {
		return nil, fmt.Errorf("heartbeat: renew placements: %w", err)
	}
	rows, err := tx.QueryContext(ctx, p.db.rebind(`SELECT deployment_id, node_id, generation FROM app_placements WHERE node_id = ?`), node)
	if err != nil {
		return nil, fmt.Errorf("heartbeat: placements: %w", err)
	}
	var held []gantry.AppPlacement
	for rows.Next() {
		a := gantry.AppPlacement{PeerAddr: peerAddr}
		if err := rows.Scan(&a.DeploymentID, &a.Node, &a.Generation); err != nil {
			rows.Close()
			return nil, err
		}
		held = append(held, a)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return held, tx.Commit()
}

// Claim inserts or takes deploymentID's placement for node.
func (p *Placements) Claim(ctx context.Context, deploymentID, node string, lease time.Duration, force bool) (int64, bool, error) {
	until, arg := p.db.leaseUntil(lease)
	q := `INSERT INTO app_placements (deployment_id, node_id, generation, lease_until) VALUES (?, ?, 1, ` + until + `)
		ON CONFLICT (deployment_id) DO UPDATE SET lease_until = excluded.lease_until`
	if force {
		q += `, node_id = excluded.node_id, generation = CASE WHEN app_placements.node_id = excluded.node_id
			THEN app_placements.generation ELSE app_placements.generation + 1 END`
	} else {
		q += ` WHERE app_placements.node_id = excluded.node_id`
	}
	var gen int64
	err := p.db.queryRow(ctx, q+` RETURNING generation`, deploymentID, node, arg).Scan(&gen)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("claim app placement: %w", err)
	}
	return gen, true, nil
}

// lapsedBefore is the SQL condition "lease_until is more than two leases
// ago" (the node's last renewal three leases ago), with its arguments.
func (p *Placements) lapsedBefore(lease time.Duration) (string, []any) {
	now, args := p.db.dbNow()
	return `p.lease_until < ` + now + ` - CAST(? AS BIGINT)`, append(args, 2*lease.Microseconds())
}

// Lapsed lists live apps whose placement was last renewed 3 leases ago.
func (p *Placements) Lapsed(ctx context.Context, lease time.Duration) ([]gantry.AppPlacement, error) {
	cond, args := p.lapsedBefore(lease)
	return p.query(ctx, ` AND `+cond+` ORDER BY p.deployment_id`, args...)
}

// TakeOver moves lapsed placement a to node, bumping its generation.
func (p *Placements) TakeOver(ctx context.Context, a gantry.AppPlacement, node string, lease time.Duration) (bool, error) {
	until, arg := p.db.leaseUntil(lease)
	cond, args := p.lapsedBefore(lease)
	cond = strings.ReplaceAll(cond, "p.", "")
	res, err := p.db.db.ExecContext(ctx, p.db.rebind(`UPDATE app_placements SET node_id = ?, generation = generation + 1,
		lease_until = `+until+` WHERE deployment_id = ? AND generation = ? AND `+cond),
		append([]any{node, arg, a.DeploymentID, a.Generation}, args...)...)
	if err != nil {
		return false, fmt.Errorf("take over app: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Homes lists live apps' placements with their home's peer address.
func (p *Placements) Homes(ctx context.Context, ids ...string) ([]gantry.AppPlacement, error) {
	if len(ids) == 0 {
		return p.query(ctx, ` ORDER BY p.deployment_id`)
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return p.query(ctx, ` AND p.deployment_id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`) ORDER BY p.deployment_id`, args...)
}

// query reads the placements of live deployments matching more.
func (p *Placements) query(ctx context.Context, more string, args ...any) ([]gantry.AppPlacement, error) {
	rows, err := p.db.db.QueryContext(ctx, p.db.rebind(`SELECT p.deployment_id, p.node_id, p.generation, COALESCE(n.peer_addr, '')
		FROM app_placements p JOIN deployments d ON d.id = p.deployment_id LEFT JOIN nodes n ON n.id = p.node_id
		WHERE d.status = ?`+more), append([]any{gantry.DeploymentLive}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("app placements: %w", err)
	}
	defer rows.Close()
	var out []gantry.AppPlacement
	for rows.Next() {
		var a gantry.AppPlacement
		if err := rows.Scan(&a.DeploymentID, &a.Node, &a.Generation, &a.PeerAddr); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
