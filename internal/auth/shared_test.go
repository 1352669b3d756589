package auth_test

import (
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/auth"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// Two replicas' limiters on one database (Share) count the same events:
// what one takes, the other sees, on SQLite and on PostgreSQL (make
// test-pg). A limiter of another name counts apart, Known exemptions are
// shared too, and a database that does not answer makes the limit refuse
// rather than let everything through.
func TestSharedLimits(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpenDB(t)
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	replica := func(name string) *auth.Limiter {
		l := auth.NewLimiter(5, 10*time.Minute)
		l.Now = clock
		l.Share(db.RateBuckets(), name, nil)
		return l
	}
	a, b := replica("login-ip"), replica("login-ip")
	for i := range 3 {
		if !a.Take("203.0.113.9") {
			t.Fatalf("replica A refused attempt %d", i+1)
		}
	}
	for i := range 2 {
		if !b.Take("203.0.113.9") {
			t.Fatalf("replica B refused attempt %d", i+4)
		}
	}
	if b.Take("203.0.113.9") || a.Take("203.0.113.9") || a.Allow("203.0.113.9") {
		t.Fatal("a sixth attempt across two replicas was allowed (each counted only its own)")
	}
	if w := a.Wait("203.0.113.9"); w != 2*time.Minute {
		t.Fatalf("wait %v, want 2m0s (one attempt each 10m/5)", w)
	}
	if other := replica("register-ip"); !other.Take("203.0.113.9") {
		t.Fatal("a limiter of another name shares the count")
	}
	b.Return("203.0.113.9")
	if !a.Take("203.0.113.9") {
		t.Fatal("an attempt returned on B is not free on A")
	}
	a.Reset("203.0.113.9")
	if !b.Allow("203.0.113.9") {
		t.Fatal("a reset on A is not seen on B")
	}

	ka, kb := auth.NewKnown(time.Hour), auth.NewKnown(time.Hour)
	for _, k := range []*auth.Known{ka, kb} {
		k.SetNow(clock)
		k.Share(db.RateBuckets(), "known", nil)
	}
	ka.Add("ada@example.com|203.0.113.9")
	if !kb.Has("ada@example.com|203.0.113.9") || kb.Has("ada@example.com|198.51.100.1") {
		t.Fatal("a known address added on A is not known on B")
	}
	now = now.Add(time.Hour + time.Second)
	if kb.Has("ada@example.com|203.0.113.9") {
		t.Fatal("a known address outlived its time")
	}

	db.Close()
	if a.Take("198.51.100.1") || a.Allow("198.51.100.1") {
		t.Fatal("with the database closed the limit let an attempt through")
	}
}
