package feed_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/feed"
	"github.com/gantryhq/gantry/internal/store"
	"github.com/gantryhq/gantry/internal/store/storetest"
	"github.com/jackc/pgx/v5"
)

// Payloads stay under PostgreSQL's 8000 bytes, however many marks, and
// read back whole.
func TestPayloads(t *testing.T) {
	marks := map[string]int64{}
	for i := range 2000 {
		marks[fmt.Sprintf("%032x", i)] = int64(i + 1)
	}
	ps := feed.Payloads(marks)
	if len(ps) < 2 {
		t.Fatalf("%d payloads for 2000 marks of 40 bytes, want them split", len(ps))
	}
	got := map[string]int64{}
	for _, p := range ps {
		if len(p) > feed.MaxPayload {
			t.Fatalf("a payload of %d bytes", len(p))
		}
		for id, seq := range feed.ParsePayload(p) {
			got[id] = seq
		}
	}
	if len(got) != len(marks) {
		t.Fatalf("read back %d marks of %d", len(got), len(marks))
	}
	for id, seq := range marks {
		if got[id] != seq {
			t.Fatalf("mark %s: %d, want %d", id, got[id], seq)
		}
	}
}

// SCALING.md §9 A5: 1,000 log lines stored by one replica within about a
// second reach a listener on another connection as at most one
// notification statement per 50 ms window, the last carrying the last
// seq.
func TestCoalescer(t *testing.T) {
	t.Parallel()
	if storetest.PostgresURL() == "" {
		t.Skip("notifications are PostgreSQL's: scripts/with-postgres go test (make test-pg)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := storetest.MustOpenDB(t)
	conn, err := pgx.Connect(ctx, storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+store.ChannelLogs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sends []time.Time
	c := &feed.Coalescer{Send: func(ctx context.Context, p []string) error {
		mu.Lock()
		sends = append(sends, time.Now())
		mu.Unlock()
		return db.Feed().Notify(ctx, store.ChannelLogs, p)
	}}
	go c.Run(ctx)
	id := fmt.Sprintf("dep%d", time.Now().UnixNano()) // other tests share the channel
	start := time.Now()
	for i := 1; i <= 1000; i++ {
		c.Add(id, int64(i))
		time.Sleep(time.Millisecond)
	}
	sent := time.Since(start)
	var got []int64
	for len(got) == 0 || got[len(got)-1] != 1000 {
		wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
		n, err := conn.WaitForNotification(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("after %d notifications (seqs %v): %v", len(got), got, err)
		}
		if !strings.Contains(n.Payload, id+":") {
			continue
		}
		got = append(got, feed.ParsePayload(n.Payload)[id])
	}
	mu.Lock()
	defer mu.Unlock()
	limit := int(sent/feed.DefaultWindow) + 2
	if len(got) > limit || len(sends) > limit {
		t.Fatalf("%d notifications (%d sends) for 1000 lines in %v, want at most %d", len(got), len(sends), sent, limit)
	}
	for i := 1; i < len(sends); i++ {
		if gap := sends[i].Sub(sends[i-1]); gap < feed.DefaultWindow {
			t.Fatalf("sends %d and %d %v apart, want at least %v", i-1, i, gap, feed.DefaultWindow)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("seqs %v not increasing", got)
		}
	}
	t.Logf("1000 lines in %v: %d notifications", sent, len(got))
}
