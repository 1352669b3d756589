package deploy

import (
	"context"
	"net/url"
	"strings"
	"sync"
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

// watchWorkers is how many projects the commit watcher checks at once.
const watchWorkers = 4

// DefaultWatchTimeout bounds one check's `git ls-remote` when
// Service.WatchTimeout is zero: a git host that accepts the connection and
// never answers holds one watcher worker this long at most.
const DefaultWatchTimeout = 20 * time.Second

// watchPerHost is how many workers check projects of one git host at
// once: a host that stalls holds at most this many of watchWorkers.
const watchPerHost = 2

// watchHostBusyDelay is how soon a project whose git host is being checked
// by watchPerHost workers already is tried again.
const watchHostBusyDelay = 5 * time.Second

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
//
// watchWorkers workers check at once, each ls-remote is bounded by
// WatchTimeout (DefaultWatchTimeout), and one git host (host:port of the
// repository's URL) is checked by at most watchPerHost workers at a time:
// a project claimed while its host is busy is put back for
// watchHostBusyDelay. So a stalled host delays its own projects, never the
// others' (issue 24, point 18).
func (s *triggers) watch(ctx context.Context, ws WatchStore) {
	defer s.wg.Done()
	hosts := &watchHosts{busy: map[string]int{}}
	var wg sync.WaitGroup
	for range watchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.watchWorker(ctx, ws, hosts)
		}()
	}
	wg.Wait()
}

// watchHosts counts the checks running now, by git host.
type watchHosts struct {
	mu   sync.Mutex
	busy map[string]int
}

// take counts one more check of host; false when watchPerHost run already.
func (h *watchHosts) take(host string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.busy[host] >= watchPerHost {
		return false
	}
	h.busy[host]++
	return true
}

func (h *watchHosts) release(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.busy[host]--; h.busy[host] <= 0 {
		delete(h.busy, host)
	}
}

// watchHost is the git host of repository URL raw: its host:port in lower
// case, or raw itself when it does not parse as a URL.
func watchHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.ToLower(u.Host)
	}
	return raw
}

// watchWorker claims due projects and checks them until none is due, then
// waits for the next tick.
func (s *triggers) watchWorker(ctx context.Context, ws WatchStore, hosts *watchHosts) {
	t := time.NewTicker(min(s.WatchInterval, 5*time.Second))
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
			s.check(ctx, ws, w, hosts)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check runs one check of w's project and records it; a project whose git
// host watchPerHost workers are checking goes back for
// watchHostBusyDelay, unchanged.
func (s *triggers) check(ctx context.Context, ws WatchStore, w *gantry.WatchState, hosts *watchHosts) {
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
	repo := gantry.FirstNonBlank(p.Repository.CloneURL, p.Repository.URL)
	host := watchHost(repo)
	if !hosts.take(host) {
		if err := ws.FinishWatch(context.WithoutCancel(ctx), w.ProjectID, w.Head, s.now().Add(watchHostBusyDelay), w.Backoff); err != nil {
			s.logger().Error("finish watch", "project", w.ProjectID, "err", err)
		}
		return
	}
	timeout := s.WatchTimeout
	if timeout <= 0 {
		timeout = DefaultWatchTimeout
	}
	lsCtx, cancel := context.WithTimeout(ctx, timeout)
	head, err := s.Branches.LsRemoteBranch(lsCtx, repo, p.Branch)
	cancel()
	hosts.release(host)
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
