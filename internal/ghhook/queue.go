package ghhook

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// recent remembers the newest delivery keys (webhook, SHA-256 of the
// body) seen, so a replay is answered without a database write or a token
// of the webhook's rate.
type recent struct {
	mu   sync.Mutex
	seen map[string]bool
	ring []string
	next int
}

func newRecent(n int) *recent { return &recent{seen: map[string]bool{}, ring: make([]string, n)} }

func (r *recent) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key]
}

func (r *recent) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[key] {
		return
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.seen, old)
	}
	r.ring[r.next], r.seen[key] = key, true
	r.next = (r.next + 1) % len(r.ring)
}

// limiters are the webhooks' delivery rates, by GitHub hook id.
type limiters struct {
	mu    sync.Mutex
	every time.Duration
	burst int
	by    map[int64]*rate.Limiter
}

// allow takes one delivery of hookID from its bucket.
func (l *limiters) allow(hookID int64, now time.Time) bool {
	l.mu.Lock()
	lim, ok := l.by[hookID]
	if !ok { // one per webhook that signed a delivery: as many as hooks at most
		lim = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.by[hookID] = lim
	}
	l.mu.Unlock()
	return lim.AllowN(now, 1)
}
