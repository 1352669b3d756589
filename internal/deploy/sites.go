package deploy

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/edge"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// EdgeSites adapts the edge's routing table to Sites. With Cache (the
// object store's read-through copy), a site whose published folder is
// not on this replica is served from the cache, fetched on its first
// request.
type EdgeSites struct {
	Table *edge.Table
	Cache *sitecache.Cache
}

var (
	_ Sites     = EdgeSites{}
	_ Forwarder = EdgeSites{}
	_ Drainer   = EdgeSites{}
	_ Sleeper   = EdgeSites{}
)

// Serve routes sub to a published folder.
func (e EdgeSites) Serve(sub, deploymentID, dir string, spa bool) {
	site := edge.Site{DeploymentID: deploymentID, Dir: dir, Status: gantry.DeploymentLive, SPA: spa}
	if e.Cache != nil && !fileExists(dir) {
		site.Dir, site.Fetched = e.Cache.Path(deploymentID), e.Cache.Clock(deploymentID)
	}
	e.Table.Set(sub, site)
}

// Proxy routes sub to the server app answering on addr.
func (e EdgeSites) Proxy(sub, deploymentID, addr string) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, ProxyTarget: addr,
		App: e.Table.App(deploymentID)})
}

// LastRequest is when deploymentID's app last got a request through the
// edge (zero: never since this process started).
func (e EdgeSites) LastRequest(deploymentID string) time.Time {
	return e.Table.App(deploymentID).LastRequest()
}

// Sleep routes sub to deploymentID's sleeping app: its requests wake it.
// Unless force, only while sub proxies to that app at addr; it reports
// whether it did.
func (e EdgeSites) Sleep(sub, deploymentID, addr string, force bool) bool {
	return e.Table.SetIf(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, App: e.Table.App(deploymentID)},
		func(old edge.Site, ok bool) bool {
			return force || ok && old.DeploymentID == deploymentID && old.Status == gantry.DeploymentLive && old.ProxyTarget == addr
		})
}

// Awake routes sub to deploymentID's woken app at addr, only while sub
// points at that sleeping app; it reports whether it did.
func (e EdgeSites) Awake(sub, deploymentID, addr string) bool {
	return e.Table.SetIf(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, ProxyTarget: addr,
		App: e.Table.App(deploymentID)},
		func(old edge.Site, ok bool) bool {
			return ok && old.DeploymentID == deploymentID && old.Status == gantry.DeploymentLive && old.ProxyTarget == ""
		})
}

// Drain waits until the edge proxies no request to addr any more, or ctx
// ends.
func (e EdgeSites) Drain(ctx context.Context, addr string) { e.Table.Drain(ctx, addr) }

// Stopped makes sub answer 503; the app's request clock goes with it.
func (e EdgeSites) Stopped(sub, deploymentID string) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentStopped})
	e.Table.ForgetApp(deploymentID)
}

// Remove makes sub answer 404.
func (e EdgeSites) Remove(sub string) { e.Table.Delete(sub) }

// Forward routes sub to deploymentID's app on another replica (node),
// reached at its peer address addr over the signed hop.
func (e EdgeSites) Forward(sub, deploymentID, node, addr string) {
	e.Table.Set(sub, edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, Home: addr, HomeNode: node})
}

// Rehome points sub at deploymentID's app's new home (this replica's app
// at addr when local, else node's peer address addr), only while sub
// serves deploymentID; it reports whether it did.
func (e EdgeSites) Rehome(sub, deploymentID, node, addr string, local bool) bool {
	site := edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, Home: addr, HomeNode: node}
	if local {
		site = edge.Site{DeploymentID: deploymentID, Status: gantry.DeploymentLive, ProxyTarget: addr, App: e.Table.App(deploymentID)}
	}
	return e.Table.SetIf(sub, site, func(old edge.Site, ok bool) bool {
		return ok && old.DeploymentID == deploymentID && old.Status == gantry.DeploymentLive
	})
}
