package deploy

import (
	"context"
	"time"
)

// SlotStore is what the slot loop needs of the database: *store.DB.
type SlotStore interface {
	// ReleaseSandboxSlots returns deleted accounts' sandbox uid slots,
	// and those of accounts with nothing deployed for idle, to the pool.
	ReleaseSandboxSlots(ctx context.Context, idle time.Duration) (int, error)
}

// SlotIdle is how long an account with nothing deployed keeps its sandbox
// uid slot (store.SlotIdle).
const SlotIdle = 30 * 24 * time.Hour

// slotEvery is how often the slot loop gives slots back.
const slotEvery = time.Hour

// slotLoop gives sandbox uid slots back to the pool (SlotStore) at start
// and then every slotEvery, until ctx ends: without it a range of N uids
// served N accounts ever, deleted and idle ones included.
func (s *builds) slotLoop(ctx context.Context, st SlotStore) {
	defer s.wg.Done()
	t := time.NewTicker(slotEvery)
	defer t.Stop()
	for {
		if n, err := st.ReleaseSandboxSlots(ctx, SlotIdle); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.logger().Warn("could not give sandbox uid slots back", "err", err)
		} else if n > 0 {
			s.logger().Info("sandbox uid slots given back to the pool", "slots", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
