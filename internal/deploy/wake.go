package deploy

import (
	"context"
	"fmt"
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

// wakeBackoff returns a *WakeError while deployment id's last wake failed
// and its back-off has not passed; nil when a wake may be tried.
func (s *Service) wakeBackoff(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.wakeFails[id]
	if f == nil {
		return nil
	}
	if wait := time.Until(f.next); wait > 0 {
		return &WakeError{After: wait, Err: gantry.Errorf(gantry.EUNAVAILABLE,
			"This app did not start when it was last woken: it is tried again in %s", roundIdle(wait))}
	}
	return nil
}

// wakeFailed records that waking d failed with err (the app did not
// start): d stays live and asleep, the next wake waits for the back-off,
// the failure is logged on d and, at the WakeNotifyAfter-th in a row,
// its owner is notified. It returns the *WakeError to answer.
func (s *Service) wakeFailed(ctx context.Context, d *gantry.Deployment, err error) error {
	s.mu.Lock()
	if s.wakeFails == nil {
		s.wakeFails = make(map[string]*wakeFailures)
	}
	f := s.wakeFails[d.ID]
	if f == nil {
		f = new(wakeFailures)
		s.wakeFails[d.ID] = f
	}
	f.n++
	wait := min(wakeBackoffMin<<min(f.n-1, 16), wakeBackoffMax)
	f.next = time.Now().Add(wait)
	n := f.n
	s.mu.Unlock()
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

// wakeSucceeded forgets deployment id's failed wakes.
func (s *Service) wakeSucceeded(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.wakeFails, id)
}

// wakeSlot waits until a wake of one of userID's apps may start — fewer
// than AccountWakes of the account's and WakeConcurrency in all are
// starting — and returns the function that frees the slot. The account's
// slot is taken first, so an account waiting for its own holds none of
// the platform's. A wake whose ctx ends first is a *WakeError.
func (s *Service) wakeSlot(ctx context.Context, userID string) (func(), error) {
	global, account := s.wakeSlots(userID)
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
	case global <- struct{}{}:
	case <-ctx.Done():
		<-account
		return nil, busy()
	}
	return func() { <-global; <-account }, nil
}

// wakeSlots returns the platform's semaphore of wakes and userID's.
func (s *Service) wakeSlots(userID string) (global, account chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wakeGlobal == nil {
		n := s.WakeConcurrency
		if n <= 0 {
			n = DefaultWakeConcurrency
		}
		s.wakeGlobal = make(chan struct{}, n)
		s.wakeAccounts = make(map[string]chan struct{})
	}
	account = s.wakeAccounts[userID]
	if account == nil {
		n := s.AccountWakes
		if n <= 0 {
			n = DefaultAccountWakes
		}
		account = make(chan struct{}, n)
		s.wakeAccounts[userID] = account
	}
	return s.wakeGlobal, account
}
