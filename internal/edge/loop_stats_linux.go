//go:build linux

package edge

import "sync/atomic"

// LoopStats counts what the loops did since they started, for benchmarks:
// bench/edgebench reports them per request, where they show how the
// loops' work is batched (see the README's Benchmarks).
type LoopStats struct {
	Rounds   int64 // rounds of events served: epoll_waits that returned events
	Waits    int64 // blocking epoll_waits: times a loop found nothing ready and slept
	Requests int64 // requests the loops answered or passed on to an app themselves
}

// loopCounters is a loop's LoopStats, updated by the loop alone.
type loopCounters struct {
	rounds, waits, requests atomic.Int64
}

// Stats returns the loops' counts, summed.
func (l *Loop) Stats() LoopStats {
	var s LoopStats
	for _, lp := range l.loops {
		s.Rounds += lp.stats.rounds.Load()
		s.Waits += lp.stats.waits.Load()
		s.Requests += lp.stats.requests.Load()
	}
	return s
}
