package deploy

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
)

// WatchStore keeps the commit watcher's state (internal/store).
type WatchStore interface {
	ClaimWatch(ctx context.Context, now time.Time, lease time.Duration) (*gantry.WatchState, error)
	FinishWatch(ctx context.Context, projectID, head string, next time.Time, backoff time.Duration) error
}

// Branches reads the head of a branch with git ls-remote (sandboxed);
// *githost.Git is the real one.
type Branches interface {
	LsRemoteBranch(ctx context.Context, rawURL, branch string) (string, error)
}

// watchLease is how long a watcher's claim on a project lasts: longer than
// one ls-remote and one Trigger take.
const watchLease = 5 * time.Minute

// watch is the commit watcher: one per process, started by Open when
// WatchInterval and Branches are set. It checks every project whose
// "watch for new commits" and auto-deploy are on and whose repository is
// not on GitHub (GitHub projects use the webhook): `git ls-remote` of the
// production branch, every WatchInterval, doubling the interval up to
// gantry.WatchMaxBackoff while the head stays the same, back to
// WatchInterval when it moves. A new head is recorded first, then deployed
// (Trigger, trigger push): a restart between the two forgets that one
// deployment rather than making it twice. The first check of a project only
// records the head. The store's claim (ClaimWatch) keeps two replicas from
// checking one project at once.
func (s *Service) watch(ctx context.Context, ws WatchStore) {
	defer s.wg.Done()
	tick := min(s.WatchInterval, 5*time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			w, err := ws.ClaimWatch(ctx, s.now(), watchLease)
			if gantry.ErrorCode(err) == gantry.ENOTFOUND {
				break
			} else if err != nil {
				if ctx.Err() == nil {
					s.logger().Error("claim watch", "err", err)
				}
				break
			}
			s.check(ctx, ws, w)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check runs one check of w's project and records it.
func (s *Service) check(ctx context.Context, ws WatchStore, w *gantry.WatchState) {
	interval := s.WatchInterval
	next := func(head string, backoff time.Duration) {
		if err := ws.FinishWatch(context.WithoutCancel(ctx), w.ProjectID, head, s.now().Add(backoff), backoff); err != nil {
			s.logger().Error("finish watch", "project", w.ProjectID, "err", err)
		}
	}
	backoff := min(max(w.Backoff*2, interval), gantry.WatchMaxBackoff)
	p, err := s.Store.FindProject(ctx, "", w.ProjectID)
	if err != nil {
		next(w.Head, gantry.WatchMaxBackoff)
		return
	}
	if p.Repository.OnGitHub() {
		next(w.Head, gantry.WatchMaxBackoff) // the webhook deploys these
		return
	}
	head, err := s.Branches.LsRemoteBranch(ctx, gantry.FirstNonBlank(p.Repository.CloneURL, p.Repository.URL), p.Branch)
	if err != nil {
		if ctx.Err() == nil {
			s.logger().Warn("watch: ls-remote", "project", p.ID, "err", err)
		}
		next(w.Head, backoff)
		return
	}
	if head == w.Head || w.Head == "" {
		if head != w.Head {
			backoff = interval // the first check: the head as it is now
		}
		next(head, backoff)
		return
	}
	next(head, interval)
	d, err := s.Trigger(context.WithoutCancel(ctx), gantry.DeployTrigger{ProjectID: p.ID, Trigger: gantry.TriggerPush,
		Commit: &gantry.Commit{SHA: head}})
	if err != nil {
		s.logger().Warn("watch: deploy", "project", p.ID, "commit", head, "err", err)
		return
	}
	s.logger().Info("watch: new commit", "project", p.ID, "commit", head, "deployment", d.ID)
}
