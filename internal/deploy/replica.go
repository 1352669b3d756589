package deploy

import (
	"context"
	"os"
	"strconv"
	"sync"

	"github.com/gantryhq/gantry"
)

// Replica applies to this replica what other replicas sharing its
// database changed (issue 26, point 3; SCALING.md §3): their route moves,
// read from the store's route feed in seq order, and their log entries,
// nudged into the local hub so that followed streams catch up from the
// store. cmd/gantry feeds it from feed.Listener on PostgreSQL.
//
// Routes are applied through the deploy service's route, which keeps each
// project's newest version: a change this replica made itself, or one read
// twice, changes nothing. Nothing here ever drops a route because the
// database cannot be read: the edge keeps serving what it had.
type Replica struct {
	s    *Service
	feed gantry.RouteFeed

	mu   sync.Mutex
	last int64 // the newest route seq applied
}

// NewReplica returns the replica side of s, reading routes from feed
// after since: the route seq taken before s read every route at Open (0:
// from the start, every route ever moved).
func NewReplica(s *Service, feed gantry.RouteFeed, since int64) *Replica {
	return &Replica{s: s, feed: feed, last: since}
}

// LogNudge is what Replica publishes on a deployment's log topic when
// another replica stored its entries up to Seq: FollowLogs reads them from
// the store.
type LogNudge struct{ Seq int64 }

// RouteNudge handles a route notification (its payload: the seq of the
// change): it catches up unless that seq was applied already.
func (r *Replica) RouteNudge(ctx context.Context, payload string) {
	if seq, err := strconv.ParseInt(payload, 10, 64); err == nil {
		r.mu.Lock()
		done := seq <= r.last
		r.mu.Unlock()
		if done {
			return
		}
	}
	r.CatchUpRoutes(ctx)
}

// CatchUpRoutes applies every route change after the last one applied.
// When the store cannot be read it changes nothing (the next nudge, the
// backlog read on reconnect or the safety poll tries again).
func (r *Replica) CatchUpRoutes(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs, err := r.feed.Routes(ctx, r.last)
	if err != nil {
		if ctx.Err() == nil {
			r.s.logger().Warn("change feed: routes not read; serving the last ones known", "err", err)
		}
		return
	}
	for _, c := range cs {
		r.apply(c)
		r.last = c.Seq
	}
}

// LastRoute returns the newest route seq applied.
func (r *Replica) LastRoute() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// apply makes this replica's edge follow c. A live site whose files this
// replica does not have is left as it was: its old version (or nothing)
// rather than a 404, unless the object store shares them (SiteCache:
// fetched first, then switched to).
func (r *Replica) apply(c gantry.RouteChange) {
	s, rt := r.s, c.Route
	switch {
	case c.Removed && rt.Preview:
		s.release.unrouteLabel(rt.ProjectID, rt.Subdomain)
	case c.Removed:
		s.release.unroute(&gantry.Project{ID: rt.ProjectID, Subdomain: rt.Subdomain})
	case rt.Active != nil && rt.Active.Status == gantry.DeploymentLive && !IsApp(rt.Active):
		if _, err := os.Stat(s.SiteDir(rt.Active.ID)); err != nil && s.SiteCache != nil {
			fetchThenRoute(s, rt) // objects.go
			return
		} else if err != nil {
			s.logger().Warn("change feed: a live site's files are not on this replica; serving its last version",
				"subdomain", rt.Subdomain, "deployment", rt.Active.ID)
			return
		}
		s.release.route(rt)
	default:
		s.release.route(rt)
	}
}

// LogNudges handles a log notification ("id:seq,…", feed.Payloads):
// each deployment's followers hear that entries up to seq are stored.
func (r *Replica) LogNudges(marks map[string]int64) {
	if r.s.Hub == nil {
		return
	}
	for id, seq := range marks {
		r.s.Hub.Publish(Topic(id), LogNudge{Seq: seq})
	}
}
