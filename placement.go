package gantry

import (
	"context"
	"time"
)

// AppPlacement is where a live server app runs when several replicas
// share the database (issue 26, point 5): its home node, the generation
// of that placement (bumped each time another node takes the app over)
// and the home node's peer address, to which other replicas' edges
// forward the app's requests ("" when the node has no heartbeat row).
type AppPlacement struct {
	DeploymentID string
	Node         string
	Generation   int64
	PeerAddr     string
}

// PlacementStore keeps the replicas' heartbeats and the server apps'
// home nodes (store.DB's Placements). Leases are by the database's clock.
type PlacementStore interface {
	// Beat records that node (listening for peers on peerAddr) is alive
	// for lease from now, renews every placement it holds for as long, and
	// returns those placements: an app node runs whose generation is not
	// among them was taken over by another node.
	Beat(ctx context.Context, node, peerAddr string, lease time.Duration) ([]AppPlacement, error)
	// Claim makes node the home of deploymentID for lease: when no node
	// holds it or node already does, or, with force, whoever held it
	// (a new generation then). ok is false when another node holds it.
	Claim(ctx context.Context, deploymentID, node string, lease time.Duration, force bool) (gen int64, ok bool, err error)
	// Lapsed returns the live apps whose home node stopped renewing for 3
	// leases.
	Lapsed(ctx context.Context, lease time.Duration) ([]AppPlacement, error)
	// TakeOver makes node the home of lapsed placement p in one conditional
	// update (p's generation, still lapsed): among nodes trying at once one
	// wins (ok), with generation p.Generation+1.
	TakeOver(ctx context.Context, p AppPlacement, node string, lease time.Duration) (ok bool, err error)
	// Homes returns the placements of live apps, with their home's peer
	// address; with ids, only those deployments'.
	Homes(ctx context.Context, ids ...string) ([]AppPlacement, error)
}
