package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gantryhq/gantry"
)

// maxLimiterKeys caps the keys a Limiter tracks; past it, keys are swept
// at once rather than once per window.
const maxLimiterKeys = 100_000

// Limiter counts events per key (an IP address, an email) in a sliding
// window and reports when a key has reached its maximum. Keys whose events
// have all left the window are evicted. It is safe for concurrent use.
type Limiter struct {
	max    int
	window time.Duration

	// Now returns the current time; tests replace it.
	Now func() time.Time

	mu        sync.Mutex
	events    map[string][]time.Time // oldest first, at most max entries
	lastSweep time.Time

	shared *sharedLimit // Share: the events are counted in Buckets instead
}

// NewLimiter returns a limiter allowing max events per key in any window.
func NewLimiter(max int, window time.Duration) *Limiter {
	return &Limiter{max: max, window: window, Now: time.Now, events: make(map[string][]time.Time)}
}

// Allow reports whether key has had fewer than max events in the window
// ending now. It records nothing.
func (l *Limiter) Allow(key string) bool {
	if sh := l.shared; sh != nil {
		return sh.wait(key, l.Now()) == 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recent(key, l.Now())) < l.max
}

// Hit records one event for key.
func (l *Limiter) Hit(key string) {
	if sh := l.shared; sh != nil {
		sh.hit(key, l.Now())
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	ev := append(l.recent(key, now), now)
	if len(ev) > l.max {
		ev = ev[len(ev)-l.max:]
	}
	l.events[key] = ev
	if now.Sub(l.lastSweep) > l.window || len(l.events) > maxLimiterKeys {
		l.sweep(now)
	}
}

// Take records one event for key and reports true when key had fewer than
// max events in the window; otherwise it records nothing and reports false.
// Checking and counting at once keeps concurrent attempts from slipping
// past the limit together: count an attempt before its outcome is known,
// and Return it if it turns out not to count.
func (l *Limiter) Take(key string) bool {
	if sh := l.shared; sh != nil {
		ok, err := sh.take(key, l.Now())
		return ok && err == nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	ev := l.recent(key, now)
	if len(ev) >= l.max {
		return false
	}
	l.events[key] = append(ev, now)
	if now.Sub(l.lastSweep) > l.window || len(l.events) > maxLimiterKeys {
		l.sweep(now)
	}
	return true
}

// TakeErr is Take that also says why it refused when the limit is shared
// and its buckets could not be read: the database's error (it still
// refuses), so that a caller can say the database is away rather than
// that there were too many attempts.
func (l *Limiter) TakeErr(key string) (bool, error) {
	if sh := l.shared; sh != nil {
		return sh.take(key, l.Now())
	}
	return l.Take(key), nil
}

// Return removes the newest event of key, undoing a Take whose attempt
// turned out not to count.
func (l *Limiter) Return(key string) {
	if sh := l.shared; sh != nil {
		sh.giveBack(key)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.events[key]
	switch len(ev) {
	case 0:
	case 1:
		delete(l.events, key)
	default:
		l.events[key] = ev[:len(ev)-1]
	}
}

// Wait returns how long key must wait until it may have another event:
// 0 when it has fewer than max in the window, else the time until its
// oldest event leaves the window (for a Retry-After header).
func (l *Limiter) Wait(key string) time.Duration {
	if sh := l.shared; sh != nil {
		return sh.wait(key, l.Now())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	ev := l.recent(key, now)
	if len(ev) < l.max {
		return 0
	}
	return l.window - now.Sub(ev[len(ev)-l.max])
}

// Reset forgets key's events.
func (l *Limiter) Reset(key string) {
	if sh := l.shared; sh != nil {
		sh.reset(key)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.events, key)
}

// Len returns the number of keys tracked.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// recent drops key's events older than the window and returns the rest.
func (l *Limiter) recent(key string, now time.Time) []time.Time {
	ev := l.events[key]
	i := 0
	for i < len(ev) && now.Sub(ev[i]) >= l.window {
		i++
	}
	if i == len(ev) {
		delete(l.events, key)
		return nil
	}
	if i > 0 {
		ev = ev[i:]
		l.events[key] = ev
	}
	return ev
}

// sweep evicts every key with no event in the window and, if the map is
// still over maxLimiterKeys, arbitrary keys until it is at 90% of it, so
// that a flood of distinct keys cannot grow memory without bound.
func (l *Limiter) sweep(now time.Time) {
	for key, ev := range l.events {
		if now.Sub(ev[len(ev)-1]) >= l.window {
			delete(l.events, key)
		}
	}
	for key := range l.events {
		if len(l.events) <= maxLimiterKeys*9/10 {
			break
		}
		delete(l.events, key)
	}
	l.lastSweep = now
}

// LimitError is a refusal by a rate limit: ETOOMANY with the message to
// show, and how long the client should wait before trying again (the API
// sends it as the Retry-After header). gantry.ErrorCode and
// gantry.ErrorMessage see the wrapped *gantry.Error.
type LimitError struct {
	Err  *gantry.Error
	Wait time.Duration
}

// tooMany returns a LimitError with message msg, asking to wait at least
// one second.
func tooMany(msg string, wait time.Duration) *LimitError {
	return &LimitError{Err: gantry.Errorf(gantry.ETOOMANY, "%s", msg), Wait: max(wait, time.Second)}
}

func (e *LimitError) Error() string { return e.Err.Error() }

// Unwrap returns the *gantry.Error, for errors.As.
func (e *LimitError) Unwrap() error { return e.Err }

// RetryAfter returns how long the client should wait.
func (e *LimitError) RetryAfter() time.Duration { return e.Wait }

// Buckets keeps rate limits where every replica counts the same events:
// store.RateBuckets, a GCRA per key in the database. A limit of max
// events per window is every = window/max and tolerance = window - every.
type Buckets interface {
	Take(ctx context.Context, key string, now time.Time, every, tolerance time.Duration) (bool, error)
	Hit(ctx context.Context, key string, now time.Time, every, tolerance time.Duration) error
	Return(ctx context.Context, key string, every time.Duration) error
	Wait(ctx context.Context, key string, now time.Time, tolerance time.Duration) (time.Duration, error)
	Reset(ctx context.Context, key string) error
	Sweep(ctx context.Context, now time.Time) error
}

// bucketTimeout bounds one shared limit's statement.
const bucketTimeout = 5 * time.Second

// Share makes l count its events in b, under keys prefixed with name (one
// name per limiter sharing b), instead of in this process's memory: every
// replica on the same database then sees the same counts. It is GCRA
// rather than a sliding window: max events at once, then one each
// window/max. When b fails, l refuses (Take and Allow report false, Wait
// the whole window) and logs the error: a limit that cannot be read holds.
// Call it before l is used.
func (l *Limiter) Share(b Buckets, name string, logger *slog.Logger) {
	every := l.window / time.Duration(max(l.max, 1))
	l.shared = &sharedLimit{b: b, name: name + ":", every: every, tolerance: l.window - every, window: l.window, logger: logger}
}

// sharedLimit is a Limiter's events in Buckets.
type sharedLimit struct {
	b                        Buckets
	name                     string
	every, tolerance, window time.Duration
	logger                   *slog.Logger

	mu        sync.Mutex
	lastSweep time.Time
}

func (sh *sharedLimit) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), bucketTimeout)
}

func (sh *sharedLimit) failed(what string, err error) {
	if err != nil && sh.logger != nil {
		sh.logger.Error("rate limit: "+what+" failed: the limit refuses until the database answers", "limit", sh.name, "err", err)
	}
}

func (sh *sharedLimit) take(key string, now time.Time) (bool, error) {
	ctx, cancel := sh.ctx()
	defer cancel()
	sh.sweep(ctx, now)
	ok, err := sh.b.Take(ctx, sh.name+key, now, sh.every, sh.tolerance)
	sh.failed("take", err)
	return ok && err == nil, err
}

func (sh *sharedLimit) hit(key string, now time.Time) {
	ctx, cancel := sh.ctx()
	defer cancel()
	sh.sweep(ctx, now)
	sh.failed("hit", sh.b.Hit(ctx, sh.name+key, now, sh.every, sh.tolerance))
}

func (sh *sharedLimit) giveBack(key string) {
	ctx, cancel := sh.ctx()
	defer cancel()
	sh.failed("return", sh.b.Return(ctx, sh.name+key, sh.every))
}

func (sh *sharedLimit) wait(key string, now time.Time) time.Duration {
	ctx, cancel := sh.ctx()
	defer cancel()
	w, err := sh.b.Wait(ctx, sh.name+key, now, sh.tolerance)
	if err != nil {
		sh.failed("read", err)
		return sh.window
	}
	return w
}

func (sh *sharedLimit) reset(key string) {
	ctx, cancel := sh.ctx()
	defer cancel()
	sh.failed("reset", sh.b.Reset(ctx, sh.name+key))
}

// sweep deletes the buckets past their window, at most once a window per
// limiter.
func (sh *sharedLimit) sweep(ctx context.Context, now time.Time) {
	sh.mu.Lock()
	due := now.Sub(sh.lastSweep) > sh.window
	if due {
		sh.lastSweep = now
	}
	sh.mu.Unlock()
	if due {
		sh.failed("sweep", sh.b.Sweep(ctx, now))
	}
}

// Known remembers keys for a while after they were last added: here, the
// (account, address) pairs that signed in successfully. It is a Limiter of
// one event per key, so it has the Limiter's bound on memory. It is safe
// for concurrent use.
type Known struct {
	seen *Limiter
}

// NewKnown returns a Known that forgets a key ttl after it was last added.
func NewKnown(ttl time.Duration) *Known {
	return &Known{seen: NewLimiter(1, ttl)}
}

// Add records key as seen now.
func (k *Known) Add(key string) { k.seen.Hit(key) }

// Has reports whether key was added less than the ttl ago.
func (k *Known) Has(key string) bool { return !k.seen.Allow(key) }

// Share keeps k's keys in b under name (Limiter.Share).
func (k *Known) Share(b Buckets, name string, logger *slog.Logger) { k.seen.Share(b, name, logger) }

// SetNow makes k read the current time from now (for tests).
func (k *Known) SetNow(now func() time.Time) { k.seen.Now = now }

// Slots bounds how many operations each key (a user) has in progress at
// once, where a Limiter bounds how many it starts in a window. A key's
// count lives only while it has operations running. It is safe for
// concurrent use.
type Slots struct {
	max  int
	mu   sync.Mutex
	held map[string]int
}

// NewSlots returns Slots allowing max operations in progress per key.
func NewSlots(max int) *Slots {
	return &Slots{max: max, held: make(map[string]int)}
}

// Acquire takes a slot of key and reports true, or reports false when key
// already holds max. Every true must be followed by one Release.
func (s *Slots) Acquire(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[key] >= s.max {
		return false
	}
	s.held[key]++
	return true
}

// Release gives back a slot taken by Acquire.
func (s *Slots) Release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[key] <= 1 {
		delete(s.held, key)
		return
	}
	s.held[key]--
}

// Held returns how many slots key holds.
func (s *Slots) Held(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[key]
}
