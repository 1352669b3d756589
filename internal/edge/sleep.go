package edge

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantryhq/gantry"
)

// Defaults of WakeConfig.
const (
	DefaultWakeQueue     = 256
	DefaultWakePageAfter = 3 * time.Second
	DefaultWakeTimeout   = 60 * time.Second
)

// AppState is what the edge knows of one server app across its sleeps:
// when it last got a request, and the wake under way. Every Site value of
// the app's deployment points at the same AppState (Table.App), so the
// clock survives a Set. Touching it costs an atomic load (and a store at
// most every clockStep): no lock, no allocation on the request path.
type AppState struct {
	last    atomic.Int64 // unix nanoseconds of the newest request, to clockStep
	waiting atomic.Int32 // requests held for the wake

	mu   sync.Mutex
	call *wakeCall // the wake under way, nil when none
}

// clockStep is how precise the request clock is: a request within this
// long of the last stored time stores nothing, so concurrent requests to a
// busy app do not bounce the cache line between cores.
const clockStep = int64(250 * time.Millisecond)

// Touch records a request at now (unix nanoseconds).
func (a *AppState) Touch(now int64) {
	if now-a.last.Load() >= clockStep {
		a.last.Store(now)
	}
}

// LastRequest is when the app last got a request (to within 250 ms); the
// zero time when it never did since the state was made.
func (a *AppState) LastRequest() time.Time {
	n := a.last.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Waiting is how many requests are held for the app's wake right now.
func (a *AppState) Waiting() int { return int(a.waiting.Load()) }

// wakeCall is one wake of an app: done is closed when it ends, with err
// set before.
type wakeCall struct {
	done chan struct{}
	err  error
}

// Waker starts a sleeping app: it returns once the app answers on its port
// and its subdomain points at it (Table.Set with a ProxyTarget), or with
// the reason it could not (a RetryAfterError says when to try again: the
// held requests get 503 with that Retry-After). deploy.Service.Wake is
// the real one.
type Waker func(ctx context.Context, deploymentID string) error

// WakeConfig says how the edge wakes sleeping apps.
type WakeConfig struct {
	// Wake starts an app; nil answers a sleeping app's requests with the
	// "not responding" page.
	Wake Waker
	// Queue is how many requests may wait for one app's wake (default
	// 256); more get 503 with Retry-After.
	Queue int
	// PageAfter is how long a browser navigation (GET, Accept: text/html)
	// waits before it gets the "Waking up…" page, which reloads itself
	// (default 3 s). Other requests wait up to Timeout.
	PageAfter time.Duration
	// Timeout bounds one wake (default 60 s: GANTRY_APP_START_TIMEOUT).
	Timeout time.Duration
}

// ConfigureWake sets how sleeping apps are woken. Call it before the edge
// serves its first request.
func (e *Edge) ConfigureWake(c WakeConfig) {
	if c.Queue <= 0 {
		c.Queue = DefaultWakeQueue
	}
	if c.PageAfter <= 0 {
		c.PageAfter = DefaultWakePageAfter
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultWakeTimeout
	}
	e.wake = c
}

// App returns the state of deploymentID's server app, made on first use.
func (t *Table) App(deploymentID string) *AppState {
	if v, ok := t.apps.Load(deploymentID); ok {
		return v.(*AppState)
	}
	v, _ := t.apps.LoadOrStore(deploymentID, new(AppState))
	return v.(*AppState)
}

// ForgetApp drops deploymentID's app state (the deployment is no longer
// live).
func (t *Table) ForgetApp(deploymentID string) { t.apps.Delete(deploymentID) }

// StartWake starts waking a's app in the background unless a wake is
// under way, and returns the wake's call.
func (e *Edge) startWake(a *AppState, deploymentID string) *wakeCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.call != nil {
		return a.call
	}
	c := &wakeCall{done: make(chan struct{})}
	a.call = c
	wake, timeout := e.wake.Wake, e.wake.Timeout
	go func() {
		if wake == nil {
			c.err = gantry.Errorf(gantry.EUNAVAILABLE, "this edge cannot wake apps")
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
			c.err = wake(ctx, deploymentID)
			cancel()
		}
		a.mu.Lock()
		a.call = nil
		a.mu.Unlock()
		close(c.done)
	}()
	return c
}

// Wake starts waking the sleeping app of sub, if it sleeps (the wake
// hint): it reports whether a wake was started or already under way.
func (e *Edge) Wake(sub string) bool {
	t, ok := e.resolver.(*Table)
	if !ok {
		return false
	}
	site, _, ok := t.lookupRoot(sub)
	if !ok || !site.sleeping() {
		return false
	}
	e.startWake(site.App, site.DeploymentID)
	return true
}

// sleeping reports whether s is a live server app that sleeps: it has an
// AppState but no address to proxy to.
func (s *Site) sleeping() bool {
	return s.App != nil && s.ProxyTarget == "" && s.Status == gantry.DeploymentLive
}

// serveAsleep holds a request to a sleeping app while it wakes (at most
// Queue of them), then proxies it to the awake app. A browser navigation
// that has waited PageAfter gets the "Waking up…" page instead; an app
// that did not wake, the "not responding" page.
func (e *Edge) serveAsleep(w http.ResponseWriter, r *http.Request, site Site, sub string) {
	a := site.App
	host := sub + e.suffix
	if int(a.waiting.Add(1)) > e.wakeQueue() {
		a.waiting.Add(-1)
		e.page(w, r, http.StatusServiceUnavailable, pageWakeBusy, host)
		return
	}
	c := e.startWake(a, site.DeploymentID)
	var page <-chan time.Time
	if browserNavigation(r) {
		t := time.NewTimer(e.wakePageAfter())
		defer t.Stop()
		page = t.C
	}
	select {
	case <-c.done:
		a.waiting.Add(-1)
	case <-page:
		a.waiting.Add(-1)
		e.page(w, r, http.StatusServiceUnavailable, pageWaking, host)
		return
	case <-r.Context().Done():
		a.waiting.Add(-1)
		return
	}
	if c.err != nil {
		// Still asleep: the app is tried again by a later request, once
		// the waker's back-off allows (RetryAfter).
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(c.err)))
		e.page(w, r, http.StatusServiceUnavailable, pageWakeFailed, host)
		return
	}
	if rl, ok := e.resolver.(rootLookup); ok {
		if now, _, ok := rl.lookupRoot(sub); ok && now.Status == gantry.DeploymentLive && now.ProxyTarget != "" {
			e.serveProxy(w, r, now.ProxyTarget, sub)
			return
		}
	}
	e.page(w, r, http.StatusBadGateway, pageAppDown, host)
}

// RetryAfterError is implemented by a Waker's errors that know when a
// wake may be tried again (deploy.Service.Wake's back-off after failed
// wakes, or its limits on concurrent wakes).
type RetryAfterError interface {
	error
	RetryAfter() time.Duration
}

// retryAfter is the Retry-After, in whole seconds (at least 1), of a
// failed wake: what its error says, else the "Waking up…" page's reload
// interval.
func retryAfter(err error) int {
	var ra RetryAfterError
	if errors.As(err, &ra) {
		return max(1, int((ra.RetryAfter()+time.Second-1)/time.Second))
	}
	return wakingRefresh
}

func (e *Edge) wakeQueue() int {
	if e.wake.Queue > 0 {
		return e.wake.Queue
	}
	return DefaultWakeQueue
}

func (e *Edge) wakePageAfter() time.Duration {
	if e.wake.PageAfter > 0 {
		return e.wake.PageAfter
	}
	return DefaultWakePageAfter
}

// browserNavigation reports whether r is a browser loading a page: a GET
// that accepts HTML.
func browserNavigation(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html")
}
