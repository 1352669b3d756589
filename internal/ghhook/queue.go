package ghhook

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// queue holds verified deliveries per project and hands them to workers
// in turn, one project's at a time per worker: a project with many
// deliveries waiting (a replay, a push of fifty branches) cannot delay
// another project's, and two workers never take one project's deliveries
// at once (they are handled in order).
type queue struct {
	mu         sync.Mutex
	cond       *sync.Cond
	perProject int              // most deliveries one project may have waiting
	total, max int              // deliveries waiting, and the most of them in all
	jobs       map[string][]job // by project id
	ready      []string         // projects with deliveries waiting and no worker on them, in turn
	busy       map[string]bool  // projects a worker is handling
	closed     bool
}

func newQueue(perProject, max int) *queue {
	q := &queue{perProject: perProject, max: max, jobs: map[string][]job{}, busy: map[string]bool{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push adds js (deliveries of one project), all or none: false when the
// project's share or the whole queue is full, or the queue is closed.
// (Receive holds Service.mu between room and push, so room's answer
// stands.)
func (q *queue) push(projectID string, js ...job) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.jobs[projectID])+len(js) > q.perProject || q.total+len(js) > q.max {
		return false
	}
	if len(q.jobs[projectID]) == 0 && !q.busy[projectID] {
		q.ready = append(q.ready, projectID)
	}
	q.jobs[projectID] = append(q.jobs[projectID], js...)
	q.total += len(js)
	q.cond.Signal()
	return true
}

// room reports whether one more delivery of projectID would be taken.
func (q *queue) room(projectID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.closed && len(q.jobs[projectID]) < q.perProject && q.total < q.max
}

// pop waits for the next delivery of a project no worker is handling and
// marks that project busy until done(projectID); false once the queue is
// closed and empty.
func (q *queue) pop() (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.ready) == 0 {
		if q.closed && q.total == 0 {
			return job{}, false
		}
		q.cond.Wait()
	}
	id := q.ready[0]
	q.ready = q.ready[1:]
	j := q.jobs[id][0]
	if rest := q.jobs[id][1:]; len(rest) > 0 {
		q.jobs[id] = rest
	} else {
		delete(q.jobs, id)
	}
	q.total--
	q.busy[id] = true
	return j, true
}

// done ends the worker's turn on projectID: its next delivery, if any,
// goes to the back of the line.
func (q *queue) done(projectID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.busy, projectID)
	if len(q.jobs[projectID]) > 0 {
		q.ready = append(q.ready, projectID)
		q.cond.Signal()
	}
	if q.closed && q.total == 0 {
		q.cond.Broadcast()
	}
}

// close refuses new deliveries; the waiting ones are still handed out.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

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
