package deploy

import (
	"context"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/sandbox"
	"github.com/gantryhq/gantry/internal/sitecache"
)

// Forwarder is implemented by Sites whose edge can forward an app's
// requests to its home replica (EdgeSites, over the signed hop).
type Forwarder interface {
	// Forward routes sub to deploymentID's app running on node, reached
	// at its peer address addr.
	Forward(sub, deploymentID, node, addr string)
	// Rehome points sub at deploymentID's app's new home, only while sub
	// serves deploymentID: this replica's own app at addr when local, or
	// node's peer address addr. It reports whether it did.
	Rehome(sub, deploymentID, node, addr string, local bool) bool
}

// placer gives each live server app one home node among the replicas
// sharing the database (issue 26, point 5; SCALING.md §2): the node that
// starts an app claims its app_placements row and renews it with its
// heartbeat; other replicas' edges forward the app's requests to the home
// node's peer address; a node whose renewal no longer holds an app (taken
// over: the generation changed) stops its copy at once; a node that stops
// heartbeating for 3 leases has its apps taken over by another node that
// has their workspace. Off (every method a no-op) without
// AppsConfig.Placements: one process runs every app.
type placer struct {
	a *apps

	mu    sync.Mutex                     // held across a beat's read and compare, and each claim
	held  map[string]int64               // deployments this node is the home of → generation
	homes map[string]gantry.AppPlacement // other nodes' apps, as last read
	subs  map[string]map[string]bool     // deployment → the names routed to it here
	// noFiles remembers the lapsed apps this node cannot take over (their
	// workspace is not here), so each is logged once.
	noFiles map[string]bool
}

func (p *placer) on() bool { return p != nil && p.a.Placements != nil && p.a.PlacementLease > 0 }

// claim makes this node the home of deployment id before it starts its
// app: with force (a fresh start: a build, a restart) whoever held it
// loses it; without (start-up, a wake), it is refused when another node
// holds it.
func (p *placer) claim(ctx context.Context, id string, force bool) error {
	if !p.on() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	gen, ok, err := p.a.Placements.Claim(ctx, id, p.a.NodeID, p.a.PlacementLease, force)
	if err != nil {
		return err
	}
	if !ok {
		return gantry.Errorf(gantry.EUNAVAILABLE, "This app runs on another server of this Gantry: its requests are forwarded there")
	}
	if p.held == nil {
		p.held = make(map[string]int64)
	}
	p.held[id] = gen
	delete(p.homes, id)
	return nil
}

// elsewhere reports whether deployment id's app has its home on another
// node; if not, this node claims it (start-up restoring its apps).
func (p *placer) elsewhere(ctx context.Context, id string) bool {
	err := p.claim(ctx, id, false)
	if err != nil && gantry.ErrorCode(err) != gantry.EUNAVAILABLE {
		p.a.logger().Warn("app placement not claimed; starting the app here", "deployment", id, "err", err)
	}
	return gantry.ErrorCode(err) == gantry.EUNAVAILABLE
}

// routed records that sub serves deployment id here.
func (p *placer) routed(sub, id string) {
	if !p.on() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.subs == nil {
		p.subs = make(map[string]map[string]bool)
	}
	if p.subs[id] == nil {
		p.subs[id] = make(map[string]bool)
	}
	p.subs[id][sub] = true
}

// retire stops the apps this node runs that route r no longer serves: a
// deployment replaced on its name, or stopped, through another replica
// (this node hears of it through the change feed; a change made here
// stops them itself, and stopping twice changes nothing).
func (p *placer) retire(r *gantry.Route) {
	if !p.on() {
		return
	}
	d := r.Active
	var replaced []string
	p.mu.Lock()
	for id, subs := range p.subs {
		if subs[r.Subdomain] && (d == nil || id != d.ID) {
			replaced = append(replaced, id)
			delete(subs, r.Subdomain)
		}
	}
	p.mu.Unlock()
	for _, id := range replaced {
		p.a.stopAppLater(id)
	}
	if d != nil && d.Status != gantry.DeploymentLive && IsApp(d) && p.a.appRun(d.ID) != nil {
		p.a.stopApp(d.ID, false)
	}
}

// forward routes sub to deployment id's app on its home node, when that
// is another node; false when it is not known (nothing to point at).
func (p *placer) forward(ctx context.Context, sub, id string) bool {
	f, ok := p.a.Sites.(Forwarder)
	if !p.on() || !ok {
		return false
	}
	h, ok := p.home(ctx, id)
	if !ok || h.Node == p.a.NodeID {
		return false
	}
	p.routed(sub, id)
	f.Forward(sub, id, h.Node, h.PeerAddr)
	return true
}

// home returns deployment id's placement, read from the store when not
// known yet.
func (p *placer) home(ctx context.Context, id string) (gantry.AppPlacement, bool) {
	p.mu.Lock()
	h, ok := p.homes[id]
	p.mu.Unlock()
	if ok {
		return h, true
	}
	hs, err := p.a.Placements.Homes(ctx, id)
	if err != nil || len(hs) == 0 {
		if err != nil {
			p.a.logger().Warn("app placement not read", "deployment", id, "err", err)
		}
		return gantry.AppPlacement{}, false
	}
	p.mu.Lock()
	if p.homes == nil {
		p.homes = make(map[string]gantry.AppPlacement)
	}
	p.homes[id] = hs[0]
	p.mu.Unlock()
	return hs[0], true
}

// loop beats every third of a lease: the heartbeat and renewals, apps
// lost to a takeover stopped, other nodes' apps followed to their new
// homes, and lapsed apps taken over.
func (p *placer) loop(ctx context.Context) {
	defer p.a.wg.Done()
	t := time.NewTicker(p.a.PlacementLease / 3)
	defer t.Stop()
	for {
		p.beat(ctx)
		p.takeOver(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat renews this node's heartbeat and placements. An app this node runs
// whose placement is no longer its own (another node took it over while
// this one was cut off or paused: the generation changed) is stopped at
// once and its names forwarded to the new home.
func (p *placer) beat(ctx context.Context) {
	p.mu.Lock()
	held, err := p.a.Placements.Beat(ctx, p.a.NodeID, p.a.PeerAddr, p.a.PlacementLease)
	if err != nil {
		p.mu.Unlock()
		if ctx.Err() == nil {
			p.a.logger().Warn("heartbeat failed; apps keep running until another node takes them over", "err", err)
		}
		return
	}
	gens := make(map[string]int64, len(held))
	for _, h := range held {
		gens[h.DeploymentID] = h.Generation
	}
	var lost []string
	for id, gen := range p.held {
		if g, ok := gens[id]; !ok || g != gen {
			lost = append(lost, id)
			delete(p.held, id)
		}
	}
	p.mu.Unlock()
	for _, id := range lost {
		if p.a.appRun(id) != nil {
			p.a.stopApp(id, false)
			p.a.log(ctx, id, gantry.LevelWarning, gantry.LogDeployment,
				"Stopped on node "+p.a.NodeID+": another node took this app over while this one was cut off")
		}
	}
	p.follow(ctx)
}

// follow reads every live app's home and points the names routed here at
// the apps whose home changed.
func (p *placer) follow(ctx context.Context) {
	f, ok := p.a.Sites.(Forwarder)
	if !ok {
		return
	}
	hs, err := p.a.Placements.Homes(ctx)
	if err != nil {
		return
	}
	type move struct {
		h    gantry.AppPlacement
		subs []string
	}
	var moves []move
	p.mu.Lock()
	if p.homes == nil {
		p.homes = make(map[string]gantry.AppPlacement)
	}
	for _, h := range hs {
		if _, mine := p.held[h.DeploymentID]; mine || h.Node == p.a.NodeID {
			continue
		}
		if old, ok := p.homes[h.DeploymentID]; ok && old == h {
			continue
		}
		p.homes[h.DeploymentID] = h
		m := move{h: h}
		for sub := range p.subs[h.DeploymentID] {
			m.subs = append(m.subs, sub)
		}
		moves = append(moves, m)
	}
	p.mu.Unlock()
	for _, m := range moves {
		for _, sub := range m.subs {
			f.Rehome(sub, m.h.DeploymentID, m.h.Node, m.h.PeerAddr, false)
		}
	}
}

// takeOver takes over the lapsed apps whose workspace this node has, one
// conditional update each (one node wins), starts them and routes their
// names here.
func (p *placer) takeOver(ctx context.Context) {
	lapsed, err := p.a.Placements.Lapsed(ctx, p.a.PlacementLease)
	if err != nil {
		return
	}
	for _, l := range lapsed {
		if l.Node == p.a.NodeID {
			continue // this node's own: its next beat renews it
		}
		if !p.hasWorkspace(l.DeploymentID) && (p.a.storage.Remote == nil || p.a.Apps == nil) {
			p.mu.Lock()
			logged := p.noFiles[l.DeploymentID]
			if p.noFiles == nil {
				p.noFiles = make(map[string]bool)
			}
			p.noFiles[l.DeploymentID] = true
			p.mu.Unlock()
			if !logged {
				p.a.logger().Warn("an app's home stopped heartbeating, and its workspace is neither on this node nor in an object store: not taken over here",
					"deployment", l.DeploymentID, "home", l.Node)
			}
			continue
		}
		p.mu.Lock()
		ok, err := p.a.Placements.TakeOver(ctx, l, p.a.NodeID, p.a.PlacementLease)
		if ok {
			if p.held == nil {
				p.held = make(map[string]int64)
			}
			p.held[l.DeploymentID] = l.Generation + 1
			delete(p.homes, l.DeploymentID)
		}
		p.mu.Unlock()
		if err != nil || !ok {
			continue
		}
		p.a.appWG.Add(1)
		go p.startTaken(l)
	}
}

// hasWorkspace reports whether deployment id's built app is on this node.
func (p *placer) hasWorkspace(id string) bool {
	if _, err := os.Stat(p.a.WorkDir(id) + ".img"); err == nil {
		return true
	}
	fi, err := os.Stat(p.a.WorkDir(id))
	return err == nil && fi.IsDir()
}

// startTaken starts an app taken over from a node that stopped, and
// points the names routed here at it (asleep, it stays asleep here).
func (p *placer) startTaken(l gantry.AppPlacement) {
	defer p.a.appWG.Done()
	ctx := context.Background()
	d, err := p.a.Store.FindDeployment(ctx, "", l.DeploymentID)
	if err != nil || d.Status != gantry.DeploymentLive {
		return
	}
	p.a.log(ctx, d.ID, gantry.LevelWarning, gantry.LogDeployment,
		"Node "+l.Node+" stopped: node "+p.a.NodeID+" took this app over (generation "+strconv.FormatInt(l.Generation+1, 10)+")")
	f, _ := p.a.Sites.(Forwarder)
	p.mu.Lock()
	var subs []string
	for sub := range p.subs[d.ID] {
		subs = append(subs, sub)
	}
	p.mu.Unlock()
	if sl, ok := p.a.sleeper(); ok && d.Sleeping {
		for _, sub := range subs {
			sl.Sleep(sub, d.ID, "", true)
		}
		return
	}
	if !p.hasWorkspace(d.ID) {
		if err := p.restore(ctx, d); err != nil {
			p.a.logger().Error("restore a taken-over app's workspace", "deployment", d.ID, "err", err)
			p.a.release.fail(ctx, d, failure{from: []string{gantry.DeploymentLive},
				reason: "The app's server stopped, and the server taking it over could not fetch its files from the object store. Restart the deployment or deploy again."})
			return
		}
	}
	run, err := p.a.startApp(ctx, d, nil)
	if err != nil {
		p.a.release.fail(ctx, d, failure{from: []string{gantry.DeploymentLive},
			reason: "The app did not start on the node that took it over: " + gantry.ErrorMessage(err)})
		return
	}
	for _, sub := range subs {
		if f != nil {
			f.Rehome(sub, d.ID, p.a.NodeID, run.app.Addr(), true)
		}
	}
}

// restore fetches deployment d's workspace from the object store (as its
// build stored it by content, sitecache.App) into this node's data
// folder: its files, each checked against its SHA-256, become the
// volume's folder of files (sandbox.FilesDir) — renamed into place once
// whole — under a fresh volume that bounds what the app writes, which
// startApp sizes as for any start.
func (p *placer) restore(ctx context.Context, d *gantry.Deployment) error {
	vol := p.a.WorkDir(d.ID)
	files := sandbox.FilesDir(vol)
	part := files + ".part"
	if err := os.RemoveAll(part); err != nil {
		return err
	}
	if err := os.Mkdir(part, 0o755); err != nil {
		return err
	}
	if _, _, err := p.a.storage.Remote.Fill(ctx, sitecache.App, d.ID, part); err != nil {
		os.RemoveAll(part)
		return err
	}
	uid, err := p.a.sandboxUID(ctx, d.UserID)
	if err == nil {
		_, err = p.a.Apps.Sandbox.OpenVolume(vol, sandbox.Disk{}, uid, uid)
	}
	if err != nil {
		os.RemoveAll(part)
		return err
	}
	os.RemoveAll(files)
	return os.Rename(part, files)
}
