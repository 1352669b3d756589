package deploy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
)

// Defaults of the limits on waking sleeping apps.
const (
	// DefaultWakeConcurrency is how many sleeping apps start at once on
	// the whole platform (Service.WakeConcurrency).
	DefaultWakeConcurrency = 4
	// DefaultAccountWakes is how many of one account's sleeping apps
	// start at once (Service.AccountWakes).
	DefaultAccountWakes = 2
	// WakeNotifyAfter failed wakes in a row of one app notify its owner
	// (once for each run of failures).
	WakeNotifyAfter = 3
)

// The back-off after a failed wake: the next wake of the app is tried no
// sooner than this, doubling from wakeBackoffMin with each failure in a
// row up to wakeBackoffMax.
const (
	wakeBackoffMin = 2 * time.Second
	wakeBackoffMax = 5 * time.Minute
)

// wakeBusyRetry is the Retry-After of a wake that found no free slot
// before its requests' time ran out.
const wakeBusyRetry = 5 * time.Second

// WakeError is a wake that did not happen: the app stays asleep and its
// deployment live. RetryAfter says when the next wake may be tried (the
// edge answers the held requests 503 with it: edge.RetryAfterError).
type WakeError struct {
	Err   error
	After time.Duration
}

func (e *WakeError) Error() string             { return e.Err.Error() }
func (e *WakeError) Unwrap() error             { return e.Err }
func (e *WakeError) RetryAfter() time.Duration { return e.After }

// wakeFailures are an app's failed wakes in a row.
type wakeFailures struct {
	n    int
	next time.Time // no wake before this
}

// wakeGate decides when a sleeping app may be woken: not during the
// back-off after failed wakes in a row, and only in a free slot (at most
// `global` wakes on the platform and `account` per account at once). It
// owns that state; the Service holds one, made at the first wake from
// WakeConcurrency and AccountWakes.
type wakeGate struct {
	mu       sync.Mutex
	fails    map[string]*wakeFailures // by deployment id
	global   chan struct{}
	accounts map[string]chan struct{}
	perUser  int
}

func newWakeGate(global, perUser int) *wakeGate {
	if global <= 0 {
		global = DefaultWakeConcurrency
	}
	if perUser <= 0 {
		perUser = DefaultAccountWakes
	}
	return &wakeGate{fails: map[string]*wakeFailures{}, global: make(chan struct{}, global),
		accounts: map[string]chan struct{}{}, perUser: perUser}
}

// wakes returns the service's wake gate, made at its first use.
func (s *apps) wakes() *wakeGate {
	s.wakeOnce.Do(func() { s.wakeGate = newWakeGate(s.WakeConcurrency, s.AccountWakes) })
	return s.wakeGate
}

// backoff returns a *WakeError while deployment id's last wake failed and
// its back-off has not passed; nil when a wake may be tried.
func (g *wakeGate) backoff(id string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.fails[id]
	if f == nil {
		return nil
	}
	if wait := time.Until(f.next); wait > 0 {
		return &WakeError{After: wait, Err: gantry.Errorf(gantry.EUNAVAILABLE,
			"This app did not start when it was last woken: it is tried again in %s", roundIdle(wait))}
	}
	return nil
}

// failed counts one more failed wake of id in a row and returns how many
// and how long the next wake waits.
func (g *wakeGate) failed(id string) (n int, wait time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.fails[id]
	if f == nil {
		f = new(wakeFailures)
		g.fails[id] = f
	}
	f.n++
	wait = min(wakeBackoffMin<<min(f.n-1, 16), wakeBackoffMax)
	f.next = time.Now().Add(wait)
	return f.n, wait
}

// succeeded forgets id's failed wakes.
func (g *wakeGate) succeeded(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.fails, id)
}

// slot waits until a wake of one of userID's apps may start — fewer than
// perUser of the account's and global in all are starting — and returns
// the function that frees the slot. The account's slot is taken first, so
// an account waiting for its own holds none of the platform's. A wake
// whose ctx ends first is a *WakeError.
func (g *wakeGate) slot(ctx context.Context, userID string) (func(), error) {
	g.mu.Lock()
	account := g.accounts[userID]
	if account == nil {
		account = make(chan struct{}, g.perUser)
		g.accounts[userID] = account
	}
	g.mu.Unlock()
	busy := func() error {
		return &WakeError{After: wakeBusyRetry, Err: gantry.Errorf(gantry.EUNAVAILABLE,
			"Too many apps are waking up right now: try again in a few seconds")}
	}
	select {
	case account <- struct{}{}:
	case <-ctx.Done():
		return nil, busy()
	}
	select {
	case g.global <- struct{}{}:
	case <-ctx.Done():
		<-account
		return nil, busy()
	}
	return func() { <-g.global; <-account }, nil
}

// wakeFailed records that waking d failed with err (the app did not
// start): d stays live and asleep, the next wake waits for the back-off,
// the failure is logged on d and, at the WakeNotifyAfter-th in a row,
// its owner is notified. It returns the *WakeError to answer.
func (s *apps) wakeFailed(ctx context.Context, d *gantry.Deployment, err error) error {
	n, wait := s.wakes().failed(d.ID)
	msg := gantry.ErrorMessage(err)
	if gantry.ErrorCode(err) == gantry.EINTERNAL {
		s.logger().Error("wake app", "deployment", d.ID, "err", err)
		msg = appFailure(err)
	}
	s.log(ctx, d.ID, gantry.LevelError, gantry.LogDeployment, fmt.Sprintf(
		"The app did not start when a request woke it (%d time%s in a row): %s. It stays live and asleep; the next request tries again after %s",
		n, plural(n), msg, roundIdle(wait)))
	if n == WakeNotifyAfter {
		s.notify(ctx, gantry.AppWakeFailedNotification(d, n, msg))
	}
	return &WakeError{Err: err, After: wait}
}
