package deploy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
)

// Sleeper is implemented by Sites that know when each server app last got
// a request and can hold a sleeping app's requests while it wakes
// (EdgeSites, with the edge's Waker set to Service.Wake).
type Sleeper interface {
	// LastRequest is when deploymentID's app last got a request.
	LastRequest(deploymentID string) time.Time
	// Sleep routes sub to deploymentID's sleeping app; unless force, only
	// while sub proxies to it at addr. It reports whether it did.
	Sleep(sub, deploymentID, addr string, force bool) bool
	// Awake routes sub to the woken app at addr, only while sub points at
	// deploymentID's sleeping app. It reports whether it did.
	Awake(sub, deploymentID, addr string) bool
}

// sleeper returns Sites as a Sleeper when apps may sleep: AppIdle or
// PreviewIdle set and Sites able to.
func (s *apps) sleeper() (Sleeper, bool) {
	if s.AppIdle <= 0 && s.PreviewIdle <= 0 {
		return nil, false
	}
	sl, ok := s.Sites.(Sleeper)
	return sl, ok
}

// appLock serialises the sleeps and wakes of one deployment's app.
func (s *apps) appLock(id string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.appLocks == nil {
		s.appLocks = make(map[string]*sync.Mutex)
	}
	l := s.appLocks[id]
	if l == nil {
		l = new(sync.Mutex)
		s.appLocks[id] = l
	}
	return l
}

// idleFor is how long run may serve no request before it sleeps:
// PreviewIdle for a preview's app, else AppIdle; 0 for never.
func (s *apps) idleFor(run *appRun) time.Duration {
	if run.preview {
		return max(s.PreviewIdle, 0)
	}
	return max(s.AppIdle, 0)
}

// sleepEvery is how often the sleeper looks for idle apps: a quarter of
// the shorter of AppIdle and PreviewIdle, from 250 ms to 30 s.
func (s *AppsConfig) sleepEvery() time.Duration {
	idle := s.AppIdle
	if s.PreviewIdle > 0 && (idle <= 0 || s.PreviewIdle < idle) {
		idle = s.PreviewIdle
	}
	return min(max(idle/4, 250*time.Millisecond), 30*time.Second)
}

// sleepLoop puts idle apps to sleep until ctx ends.
func (s *apps) sleepLoop(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.sleepEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sleepIdle(ctx)
	}
}

// sleepIdle puts to sleep every app that has served no request for
// AppIdle, or PreviewIdle for a preview's (counted from its start when it
// has served none).
func (s *apps) sleepIdle(ctx context.Context) {
	sl, ok := s.sleeper()
	if !ok {
		return
	}
	now := time.Now()
	type candidate struct {
		id  string
		run *appRun
	}
	var idle []candidate
	s.mu.Lock()
	for id, run := range s.runs {
		if limit := s.idleFor(run); limit > 0 && run.answered && now.Sub(run.lastActive(sl.LastRequest(id))) >= limit {
			idle = append(idle, candidate{id, run})
		}
	}
	s.mu.Unlock()
	for _, c := range idle {
		if ctx.Err() != nil {
			return
		}
		if err := s.sleepApp(ctx, sl, c.id, c.run); err != nil && ctx.Err() == nil {
			s.logger().Error("put app to sleep", "deployment", c.id, "err", err)
		}
	}
}

// lastActive is the later of the app's start and its last request.
func (r *appRun) lastActive(lastRequest time.Time) time.Time {
	if lastRequest.After(r.started) {
		return lastRequest
	}
	return r.started
}

// sleepApp stops id's app run, idle for AppIdle (PreviewIdle for a
// preview), and marks its deployment sleeping: the deployment stays live,
// its workspace stays, its port is released, and its subdomain (a
// preview's label) holds requests until Wake has started it again. The
// production app of a project that is always on keeps running; previews
// sleep all the same.
func (s *apps) sleepApp(ctx context.Context, sl Sleeper, id string, run *appRun) error {
	l := s.appLock(id)
	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	cur, idle, answered := s.runs[id], time.Since(run.lastActive(sl.LastRequest(id))), run.answered
	s.mu.Unlock()
	limit := s.idleFor(run)
	if cur != run || !answered || limit <= 0 || idle < limit {
		return nil // replaced, stopped or busy again meanwhile
	}
	d, err := s.Store.FindDeployment(ctx, "", id)
	if err != nil || d.Status != gantry.DeploymentLive {
		return ignoreNotFound(err)
	}
	p, err := s.Store.FindProject(ctx, d.UserID, d.ProjectID)
	if err != nil {
		return ignoreNotFound(err)
	}
	sub := p.Subdomain
	if d.IsPreview() {
		sub = d.Subdomain // its label
	} else if p.AlwaysOn || p.ActiveDeployment == nil || p.ActiveDeployment.ID != id {
		return nil
	}
	if !sl.Sleep(sub, id, run.app.Addr(), false) {
		return nil // the subdomain points elsewhere: a newer route is on its way
	}
	if err := s.Store.SetSleeping(ctx, id, true); err != nil {
		return err
	}
	s.takeApp(id, run)
	s.stopRun(run, true) // requests already on their way finish first
	s.log(ctx, id, gantry.LevelInfo, gantry.LogDeployment,
		fmt.Sprintf("App asleep after %s without a request: the next request wakes it", roundIdle(limit)))
	return nil
}

func roundIdle(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

func ignoreNotFound(err error) error {
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return nil
	}
	return err
}

// Wake starts the sleeping app of deployment id (the edge's Waker, called
// by the first request that finds it asleep, or by a wake hint) from its
// workspace, with the same sandbox, limits and start timeout as any start,
// and routes its subdomain to it once it answers. It returns nil when the
// app is awake. A wake waits for a slot (WakeConcurrency on the platform,
// AccountWakes per account). An app that does not start stays live and
// asleep: the failure is logged, the next wake waits for a back-off that
// doubles with each failure in a row (a *WakeError says how long), and
// the owner is notified at the WakeNotifyAfter-th.
func (s *apps) Wake(ctx context.Context, id string) error {
	sl, ok := s.Sites.(Sleeper)
	if !ok {
		return gantry.Errorf(gantry.EUNAVAILABLE, "This Gantry does not put apps to sleep")
	}
	l := s.appLock(id)
	l.Lock()
	defer l.Unlock()
	d, err := s.Store.FindDeployment(ctx, "", id)
	if err != nil {
		return err
	}
	if d.Status != gantry.DeploymentLive || !IsApp(d) {
		return gantry.Errorf(gantry.EINVALID, "This deployment is not a live server app")
	}
	p, err := s.Store.FindProject(ctx, d.UserID, d.ProjectID)
	if err != nil {
		return err
	}
	sub := p.Subdomain
	if d.IsPreview() {
		sub = d.Subdomain // its label
	}
	if run := s.appRun(id); run != nil {
		sl.Awake(sub, id, run.app.Addr())
		return nil
	}
	if err := s.wakes().backoff(id); err != nil {
		return err
	}
	if err := s.place.claim(ctx, id, false); err != nil {
		return err // its home is another node, where its requests go
	}
	release, err := s.wakes().slot(ctx, d.UserID)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	run, err := s.startApp(ctx, d, nil)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return s.wakeFailed(context.WithoutCancel(ctx), d, err)
	}
	s.wakes().succeeded(id)
	if !sl.Awake(sub, id, run.app.Addr()) {
		// Stopped, deleted or replaced while it started.
		s.stopOwnApp(id, run)
		return gantry.Errorf(gantry.ENOTFOUND, "This app is no longer served")
	}
	s.log(ctx, id, gantry.LevelInfo, gantry.LogDeployment, fmt.Sprintf("Woken by a request: answered after %s", roundStartup(time.Since(start))))
	return nil
}

// WakeHint starts waking deployment id's app in the background when it is
// a listed app of the public gallery (live, public, its project's active
// deployment, shown in Discover) that sleeps, so that a visitor who saw its
// card finds it awake; it reports whether a wake was started. An app that
// is not listed is ENOTFOUND "App not found", as for views and likes.
func (s *apps) WakeHint(ctx context.Context, id string) (bool, error) {
	notFound := gantry.Errorf(gantry.ENOTFOUND, "%s", gantry.MsgAppNotFound)
	d, err := s.Store.FindDeployment(ctx, "", id)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return false, notFound
	} else if err != nil {
		return false, err
	}
	if d.Status != gantry.DeploymentLive || !d.IsPublic {
		return false, notFound
	}
	p, err := s.Store.FindProject(ctx, d.UserID, d.ProjectID)
	if err != nil || !p.ShowInDiscover || p.ActiveDeployment == nil || p.ActiveDeployment.ID != id {
		return false, notFound
	}
	if !d.Sleeping || !IsApp(d) || s.appRun(id) != nil || s.place.elsewhere(ctx, id) {
		return false, nil
	}
	s.mu.Lock()
	if s.hinted == nil {
		s.hinted = make(map[string]bool)
	}
	if s.hinted[id] {
		s.mu.Unlock()
		return true, nil // a hint's wake is under way
	}
	s.hinted[id] = true
	s.mu.Unlock()
	s.appWG.Add(1)
	go func() {
		defer s.appWG.Done()
		defer func() { s.mu.Lock(); delete(s.hinted, id); s.mu.Unlock() }()
		wctx, cancel := context.WithTimeout(context.Background(), s.wakeTimeout())
		defer cancel()
		if err := s.Wake(wctx, id); err != nil {
			s.logger().Info("wake hint", "deployment", id, "err", err)
		}
	}()
	return true, nil
}

// wakeTimeout bounds a hint's wake: the apps' start timeout and a margin.
func (s *AppsConfig) wakeTimeout() time.Duration {
	if s.Apps != nil && s.Apps.StartTimeout > 0 {
		return s.Apps.StartTimeout + 5*time.Second
	}
	return 65 * time.Second
}
