package deploy

import (
	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
)

// EdgeSites adapts the edge's routing table to Sites.
type EdgeSites struct{ Table *edge.Table }

var _ Sites = EdgeSites{}

// Serve routes sub to a published folder.
func (e EdgeSites) Serve(sub, deploymentID, dir string, spa bool) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Dir: dir, Status: gantry.DeploymentLive, SPA: spa})
}

// Stopped makes sub answer 503.
func (e EdgeSites) Stopped(sub, deploymentID string) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentStopped})
}

// Remove makes sub answer 404.
func (e EdgeSites) Remove(sub string) { e.Table.Delete(sub) }
