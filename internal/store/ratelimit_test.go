package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/store/storetest"
)

// The shared rate limits (GCRA in rate_buckets): 50 concurrent events on
// a key limited to 10 per minute let exactly 10 through — on PostgreSQL
// (make test-pg) as on SQLite — and a refused event counts nothing. Then
// one more is allowed each 6 s; Wait says when; Return gives one back;
// Hit records past the limit without running ahead of one window; Reset
// and Sweep forget.
func TestRateBucketsGCRA(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.MustOpenDB(t)
	b := db.RateBuckets()
	const window = time.Minute
	every, tol := window/10, window-window/10
	now := time.Unix(1_800_000_000, 0)

	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := b.Take(ctx, "login:203.0.113.9", now, every, tol)
			if err != nil {
				t.Error(err)
			}
			if ok {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := allowed.Load(); n != 10 {
		t.Fatalf("%d of 50 concurrent events allowed, want 10", n)
	}
	if w, err := b.Wait(ctx, "login:203.0.113.9", now, tol); err != nil || w != every {
		t.Fatalf("wait %v (%v), want %v", w, err, every)
	}
	if w, _ := b.Wait(ctx, "login:198.51.100.1", now, tol); w != 0 {
		t.Fatalf("another key waits %v", w)
	}
	// Refused events counted nothing: one more is allowed a tenth of the
	// window later, and only one.
	later := now.Add(every)
	if ok, _ := b.Take(ctx, "login:203.0.113.9", later, every, tol); !ok {
		t.Fatal("refused after a tenth of the window")
	}
	if ok, _ := b.Take(ctx, "login:203.0.113.9", later, every, tol); ok {
		t.Fatal("two allowed after a tenth of the window")
	}
	if err := b.Return(ctx, "login:203.0.113.9", every); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Take(ctx, "login:203.0.113.9", later, every, tol); !ok {
		t.Fatal("a returned event was not given back")
	}
	// Hit past the limit stays at the limit: a full window later the key
	// is free again.
	for range 30 {
		if err := b.Hit(ctx, "login:203.0.113.9", later, every, tol); err != nil {
			t.Fatal(err)
		}
	}
	if w, _ := b.Wait(ctx, "login:203.0.113.9", later, tol); w != every {
		t.Fatalf("after hits past the limit, wait %v, want %v", w, every)
	}
	if ok, _ := b.Take(ctx, "login:203.0.113.9", later.Add(window), every, tol); !ok {
		t.Fatal("still limited a window after the last hit")
	}
	if err := b.Reset(ctx, "login:203.0.113.9"); err != nil {
		t.Fatal(err)
	}
	if w, _ := b.Wait(ctx, "login:203.0.113.9", later, tol); w != 0 {
		t.Fatalf("after Reset, wait %v", w)
	}
	if ok, _ := b.Take(ctx, "hook:abc", now, every, tol); !ok {
		t.Fatal("a new key refused")
	}
	if err := b.Sweep(ctx, now.Add(2*window)); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := db.QueryRowForTest(ctx, `SELECT COUNT(*) FROM rate_buckets`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d rows left after a sweep two windows later", rows)
	}
}
