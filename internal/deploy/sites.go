package deploy

import (
	"context"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// EdgeSites adapts the edge's routing table to Sites.
type EdgeSites struct{ Table *edge.Table }

var (
	_ Sites   = EdgeSites{}
	_ Drainer = EdgeSites{}
)

// Serve routes sub to a published folder.
func (e EdgeSites) Serve(sub, deploymentID, dir string, spa bool) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Dir: dir, Status: gantry.DeploymentLive, SPA: spa})
}

// Proxy routes sub to the server app answering on addr.
func (e EdgeSites) Proxy(sub, deploymentID, addr string) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, ProxyTarget: addr})
}

// Drain waits until the edge proxies no request to addr any more, or ctx
// ends.
func (e EdgeSites) Drain(ctx context.Context, addr string) { e.Table.Drain(ctx, addr) }

// Stopped makes sub answer 503.
func (e EdgeSites) Stopped(sub, deploymentID string) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentStopped})
}

// Remove makes sub answer 404.
func (e EdgeSites) Remove(sub string) { e.Table.Delete(sub) }
