package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

// Build leases (issue 26, point 2; store's leases.go): a replica holds
// each build it claimed for Service.Lease and renews it every third of
// that while the build runs. One that cannot renew (another replica took
// the build over after it lapsed, or the database does not answer) stops
// its build at once, quietly: every write of the outcome names the
// attempt, so nothing it would still write could count. Any replica's
// reaper requeues a build whose lease lapsed ("Build restarted: the
// server building it stopped (attempt 2)"), BuildRetries times, then
// fails it.

// errLeaseLost is the cause of a build stopped because its replica no
// longer holds it.
var errLeaseLost = errors.New("this server no longer holds the build: another took it over")

// DefaultBuildRetries is how many times a build whose replica stopped is
// requeued before it fails.
const DefaultBuildRetries = 1

// leaseKeeper renews the builds this replica holds and takes over lapsed
// ones. It is made on demand: it holds no state of its own.
type leaseKeeper struct{ s *builds }

func (s *builds) leases() leaseKeeper { return leaseKeeper{s} }

// hold keeps d's lease while its build runs, every third of the lease:
// when the lease was taken over, or renewals failed until a third of it
// is left, the build is stopped (cause errLeaseLost: it ends
// without a word, its writes fenced off anyway). release stops the
// renewals.
func (k leaseKeeper) hold(ctx context.Context, d *gantry.Deployment) (release func()) {
	s := k.s
	if s.Lease <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(s.Lease / 3)
		defer t.Stop()
		// The lease runs at least until Lease after the last renewal that
		// succeeded began: a renewal that failed (a slow or unreachable
		// database) is tried again at the next tick while a third of the
		// lease is left, and the build stopped only then.
		held := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				start := time.Now()
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), s.Lease/3)
				ok, err := s.Store.BuildLeases().Renew(rctx, d.ID, s.NodeID, d.Attempt, s.Lease)
				rcancel()
				if ok {
					held = start
					continue
				}
				if err != nil && time.Since(held) < s.Lease-s.Lease/3 {
					s.logger().Warn("build lease: renewal failed; trying again", "deployment", d.ID, "attempt", d.Attempt, "err", err)
					continue
				}
				select {
				case <-done:
					return // the build ended meanwhile: its status moved on
				default:
				}
				if err != nil {
					s.logger().Error("build lease: renewal failed; stopping the build before another server takes it over",
						"deployment", d.ID, "attempt", d.Attempt, "err", err)
				} else {
					s.logger().Warn("build lease: another server took the build over; stopping it here",
						"deployment", d.ID, "attempt", d.Attempt)
				}
				s.cancelBuildCause(d.ID, errLeaseLost)
				return
			}
		}
	}()
	return func() { close(done) }
}

// reapLoop takes over the builds whose lease lapsed, every half lease,
// until ctx ends.
func (k leaseKeeper) reapLoop(ctx context.Context) {
	s := k.s
	defer s.wg.Done()
	t := time.NewTicker(max(s.Lease/2, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			k.reap(ctx)
		}
	}
}

// reap requeues each lapsed build (a new attempt), or fails it once it
// was retried BuildRetries times.
func (k leaseKeeper) reap(ctx context.Context) {
	s := k.s
	lapsed, err := s.Store.BuildLeases().Lapsed(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger().Error("build leases: list lapsed builds", "err", err)
		}
		return
	}
	retries := s.BuildRetries
	if retries <= 0 {
		retries = DefaultBuildRetries
	}
	for _, d := range lapsed {
		if d.Attempt > retries {
			s.release.fail(ctx, d, failure{from: inProgress, reason: fmt.Sprintf(
				"Build failed: the server building it stopped, %d times. Deploy again to retry.", d.Attempt)})
			continue
		}
		line := s.line(gantry.LevelWarning, fmt.Sprintf(
			"Build restarted: the server building it stopped (attempt %d)", d.Attempt+1))
		if _, err := s.Store.BuildLeases().Requeue(ctx, d.ID, gantry.Change{Attempt: d.Attempt, Line: line}); err != nil {
			if !lost(err) {
				s.logger().Error("build leases: requeue", "deployment", d.ID, "err", err)
			}
			continue
		}
		s.publish(d.ID, *line)
		s.logger().Warn("build taken over: its server stopped renewing it", "deployment", d.ID, "attempt", d.Attempt+1,
			"from", d.ClaimedBy)
		s.kick()
	}
}
