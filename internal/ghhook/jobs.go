package ghhook

import (
	"context"
	"fmt"
	"time"

	"github.com/gantryhq/gantry"
)

// deliveryWorker takes the deliveries stored in the database
// (gantry.WebhookJobStore) and handles them: the Service's workers, each
// one a goroutine running work.
type deliveryWorker struct{ s *Service }

// wake wakes an idle worker, if one is waiting.
func (w deliveryWorker) wake() {
	s := w.s
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// work takes deliveries from the database and handles them until Close:
// waiting for one when none is (woken by Receive, or every JobPoll).
func (w deliveryWorker) work() {
	s := w.s
	defer s.workers.Done()
	poll := s.JobPoll
	if poll <= 0 {
		poll = DefaultJobPoll
	}
	lease := s.JobLease
	if lease <= 0 {
		lease = DefaultJobLease
	}
	jobs := s.Store.WebhookJobs()
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		s.active.Add(1)
		j, err := jobs.Claim(context.Background(), s.owner, lease)
		if err == nil {
			w.wake() // another may be waiting for a job of another project
			w.handle(j)
			if err := jobs.Finish(context.Background(), j.ID, s.owner); err != nil {
				s.logger().Error("github webhook: could not finish a delivery", "project", j.ProjectID, "err", err)
			}
			s.active.Add(-1)
			continue
		}
		s.active.Add(-1)
		if gantry.ErrorCode(err) != gantry.ENOTFOUND {
			s.logger().Error("github webhook: could not take a delivery", "err", err)
		}
		select {
		case <-s.stop:
			return
		case <-s.nudge:
		case <-time.After(poll):
		}
	}
}

// handle handles a delivery taken from the database: one taken
// MaxJobAttempts times before (its workers died on it) is dropped and
// recorded as failed.
func (w deliveryWorker) handle(j *gantry.WebhookJob) {
	s := w.s
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	h, err := s.Store.FindGitHubHook(ctx, j.ProjectID)
	if err != nil {
		return // the project (and its webhook) was deleted meanwhile
	}
	if j.Attempts > MaxJobAttempts {
		s.record(ctx, j.ProjectID, j.Event, "", gantry.DeliveryFailed, fmt.Sprintf(
			"Gantry stopped %d times while handling this delivery, so it was dropped: redeliver it from GitHub", MaxJobAttempts))
		return
	}
	s.handle(job{hook: h, event: j.Event, body: j.Payload})
}
