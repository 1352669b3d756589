package deploy

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
)

// LogEvent is one event of a followed deployment log (FollowLogs): a log
// entry, or, with Heartbeat set, word that the stream is idle and its
// deployment still there.
type LogEvent struct {
	Entry     gantry.LogEntry
	Heartbeat bool
}

// FollowLogs checks that the deployment is the owner's and returns its log
// as a stream. With resume it first sends every stored entry numbered above
// after; without it the stream starts with the next new entry. Then each new
// entry comes once, in order, and every heartbeat (none when heartbeat is 0)
// a Heartbeat event, sent after checking that the deployment is still the
// owner's and sending what the store holds beyond the last entry sent
// (entries another replica stored whose nudge was lost).
//
// The channel is closed when the stream ends: ctx is done, the deployment
// is deleted (at once, by the Deleted event; a deletion this replica did
// not see, at the next heartbeat), or the store cannot be read (the client
// resumes from the last entry it got). The caller cancels ctx when it stops
// reading.
//
// The protocol: subscribe before reading the stored backlog and skip live
// entries already sent; fill a gap in the live numbers from the store (a
// LogNudge from another replica is such a gap); and
// when the hub drops a subscription that fell behind, read what it missed
// from the store and subscribe again. So nothing is lost or doubled.
func (s *Service) FollowLogs(ctx context.Context, userID, id string, after int64, resume bool, heartbeat time.Duration) (<-chan LogEvent, error) {
	if _, err := s.Store.FindDeployment(ctx, userID, id); err != nil {
		return nil, err
	}
	sub := s.Hub.Subscribe(Topic(id))
	last := after
	if !resume {
		var err error
		if last, err = s.lastSeq(ctx, id); err != nil {
			sub.Close()
			return nil, err
		}
	}
	out := make(chan LogEvent)
	go func() {
		defer close(out)
		defer func() { sub.Close() }()
		emit := func(ev LogEvent) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		// catchUp sends the stored entries after last, in order.
		catchUp := func() bool {
			backlog, err := s.Store.Logs(ctx, id, last, 0)
			if err != nil {
				return false
			}
			for _, e := range backlog {
				if !emit(LogEvent{Entry: e}) {
					return false
				}
				last = e.Seq
			}
			return true
		}
		if !catchUp() {
			return
		}
		var tick <-chan time.Time
		if heartbeat > 0 {
			t := time.NewTicker(heartbeat)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				if _, err := s.Store.FindDeployment(ctx, userID, id); err != nil {
					return // deleted (or unreadable: the client resumes)
				}
				// Entries another replica stored whose nudge was lost (a
				// dropped subscription catches up when it is seen closed,
				// after subscribing again, so no event is missed between).
				if !sub.Dropped() && !catchUp() {
					return
				}
				if !emit(LogEvent{Heartbeat: true}) {
					return
				}
			case v, ok := <-sub.C:
				if !ok {
					// Fell behind: read the rest from the store and follow again.
					if _, err := s.Store.FindDeployment(ctx, userID, id); err != nil {
						return
					}
					sub = s.Hub.Subscribe(Topic(id))
					if !catchUp() {
						return
					}
					continue
				}
				if _, gone := v.(Deleted); gone {
					return
				}
				if n, nudged := v.(LogNudge); nudged {
					// Another replica stored entries up to n.Seq.
					if n.Seq > last && !catchUp() {
						return
					}
					continue
				}
				e, isLog := v.(gantry.LogEntry)
				if !isLog || e.Seq <= last {
					continue
				}
				if e.Seq > last+1 && !catchUp() { // a gap: fill it from the store
					return
				}
				if e.Seq <= last {
					continue
				}
				if !emit(LogEvent{Entry: e}) {
					return
				}
				last = e.Seq
			}
		}
	}()
	return out, nil
}

// lastSeq returns the number of the deployment's newest stored entry (0
// when none).
func (s *Service) lastSeq(ctx context.Context, id string) (int64, error) {
	logs, err := s.Store.Logs(ctx, id, 0, 1)
	if err != nil || len(logs) == 0 {
		return 0, err
	}
	return logs[0].Seq, nil
}
