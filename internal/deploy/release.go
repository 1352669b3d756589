package deploy

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/gantryhq/gantry"
)

// release is the deploy service's release capability: the transitions
// that end a build (go-live, fail) and the edge's routes that follow them
// — the project's subdomain and its previews' labels.
type release struct {
	*core
	*ReleaseConfig
	apps *apps // a live server app's route points at its run
	// routeMu guards routed, the newest route version applied to Sites per
	// project (route): the store orders a project's transitions, and this
	// keeps their effects on the edge in that order.
	routeMu sync.Mutex
	routed  map[string]int64
}

// inProgress are the statuses of a deployment whose build runs.
var inProgress = []string{gantry.DeploymentBuilding, gantry.DeploymentDeploying}

// failure is how a deployment ends failed.
type failure struct {
	// reason is its error, and its last log line unless logged.
	reason string
	// from are the statuses it may fail from: a build fails from building
	// or deploying, a running app from live.
	from []string
	// logged says the line is written elsewhere: the pipeline logged it
	// already, or a crashed app's log queue writes it after its output.
	logged bool
	// notice is what the owner is told (default: DeploymentFailedNotification).
	notice *gantry.Notification
}

// fail ends d failed — the one way a deployment fails: one store
// transition from f.from (the reason as its last log line in the same
// transaction, unless logged; the project's status derived), then the
// subdomain follows (a failed active deployment answers the "stopped"
// page) and the owner is told. d becomes what was committed. It reports
// whether d failed: not when d was no longer in f.from or is gone (a stop,
// a delete or a go-live came first and recorded the outcome).
func (s *release) fail(ctx context.Context, d *gantry.Deployment, f failure) bool {
	ctx = context.WithoutCancel(ctx)
	c := gantry.Change{At: s.now(), Attempt: d.Attempt}
	if !f.logged {
		c.Line = s.line(gantry.LevelError, f.reason)
	}
	t, err := s.Store.FailDeployment(ctx, d.ID, f.from, f.reason, c)
	if err != nil {
		if !lost(err) {
			s.logger().Error("fail deployment", "deployment", d.ID, "err", err)
		}
		return false
	}
	if c.Line != nil {
		s.publish(d.ID, *c.Line)
	}
	if t.Deployment != nil {
		*d = *t.Deployment
	}
	s.routeAll(t)
	if slices.Contains(f.from, gantry.DeploymentBuilding) {
		s.finished(ctx, d)
	}
	n := f.notice
	if n == nil {
		n = gantry.DeploymentFailedNotification(d, f.reason)
	}
	s.notify(ctx, n)
	return true
}

// finished hands a build's end to Finished, when one is set.
func (s *release) finished(ctx context.Context, d *gantry.Deployment) {
	if s.Finished != nil && d != nil {
		s.Finished(context.WithoutCancel(ctx), d)
	}
}

// route points r's subdomain at what the store committed, unless a newer
// route of the project was applied already: two transitions of a project
// are ordered by the store, and their effects here may run in the other
// order. No active deployment: the "no app here" page; a live one: its
// published files, or its server app registered in this process; a
// stopped or failed one: the "stopped" page. A nil r changes nothing.
func (s *release) route(r *gantry.Route) {
	if r == nil {
		return
	}
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	key := routeKey(r)
	if v, ok := s.routed[key]; ok && r.Version <= v {
		return
	}
	s.apps.place.retire(r)
	d := r.Active
	switch {
	case d == nil:
		s.Sites.Remove(r.Subdomain)
	case d.Status == gantry.DeploymentLive && IsApp(d):
		run := s.apps.appRun(d.ID)
		if run == nil {
			// It runs on another replica: forwarded to its home there.
			// Otherwise its app was ended since (a newer route follows):
			// nothing to point at here.
			if !s.apps.place.forward(context.Background(), r.Subdomain, d.ID) {
				return
			}
			break
		}
		s.apps.place.routed(r.Subdomain, d.ID)
		s.Sites.Proxy(r.Subdomain, d.ID, run.app.Addr())
	case d.Status == gantry.DeploymentLive:
		s.Sites.Serve(r.Subdomain, d.ID, s.SiteDir(d.ID), d.BuildInfo.SPA)
	default:
		s.Sites.Stopped(r.Subdomain, d.ID)
	}
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[key] = r.Version
}

// routeAll applies t's routes: the project's, then its preview labels'.
func (s *release) routeAll(t *gantry.Transition) {
	s.route(t.Route)
	for _, r := range t.Previews {
		s.route(r)
	}
}

// unroute removes a deleted project's subdomain from Sites for good: no
// route of the project applied later (its transitions' effects running
// late) brings it back.
func (s *release) unroute(p *gantry.Project) {
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	s.Sites.Remove(p.Subdomain)
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[p.ID] = math.MaxInt64
}

// unrouteLabel removes a deleted project's preview label from Sites for
// good, as unroute does its subdomain.
func (s *release) unrouteLabel(projectID, label string) {
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	s.Sites.Remove(label)
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[routeKey(&gantry.Route{ProjectID: projectID, Subdomain: label, Preview: true})] = math.MaxInt64
}

// goLive makes d live in one store transition from status from (deploying
// at the end of its build, with info its build info; stopped for a
// restart): d the project's active deployment, the deployment it replaces
// stopped (its files stay, so restarting it is a rollback), liveLine (level
// success) its log line. Only once that committed does the subdomain point
// at d — at its published files, or at its registered server app — and is
// a replaced app drained and stopped in the background. A transition that
// lost its race (lost(err): d stopped, deleted or pruned meanwhile)
// changed nothing and is returned as it is.
func (s *release) goLive(ctx context.Context, d *gantry.Deployment, from string, info *gantry.BuildInfo, liveLine string) error {
	return s.goLiveAs(ctx, d, from, info, liveLine, false)
}

// goLiveAs is goLive, recording a promotion when promote is set.
func (s *release) goLiveAs(ctx context.Context, d *gantry.Deployment, from string, info *gantry.BuildInfo, liveLine string, promote bool) error {
	line := s.line(gantry.LevelSuccess, liveLine)
	t, err := s.Store.GoLive(ctx, d.ID, from, gantry.Change{At: s.now(), Info: info, Line: line, Promote: promote, Attempt: d.Attempt})
	if err != nil {
		return err
	}
	s.publish(d.ID, *line)
	if t.Deployment != nil {
		*d = *t.Deployment
	}
	s.routeAll(t)
	for _, id := range t.Replaced {
		s.apps.stopAppLater(id)
		s.log(ctx, id, gantry.LevelInfo, gantry.LogDeployment, "Replaced by a newer deployment; restart this one to roll back")
	}
	return nil
}

// restoreAsleep routes r, whose active deployment d was sleeping when the
// platform stopped, to its sleeping app: it stays asleep until a request
// comes.
func (s *release) restoreAsleep(sl Sleeper, r *gantry.Route) {
	s.routeMu.Lock()
	defer s.routeMu.Unlock()
	sl.Sleep(r.Subdomain, r.Active.ID, "", true)
	s.apps.place.routed(r.Subdomain, r.Active.ID)
	if s.routed == nil {
		s.routed = make(map[string]int64)
	}
	s.routed[routeKey(r)] = r.Version
}
