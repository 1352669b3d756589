package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// RateBuckets keeps rate limits in the database, so that every replica
// sharing it counts the same events (auth.Limiter.Share). Each key is one
// row holding its GCRA "theoretical arrival time" (tat): an event at now
// is allowed when max(tat, now) - now <= tolerance, and moves tat to
// max(tat, now) + every. A limit of N events per window W is every = W/N
// and tolerance = W - every: N at once, then one each W/N.
//
// Each event is one atomic statement (an upsert whose update is
// conditional), so concurrent events on any number of replicas never
// slip past the limit together. Times are the caller's now, in
// microseconds since the Unix epoch.
type RateBuckets struct{ db *DB }

// RateBuckets returns the database's rate limits.
func (db *DB) RateBuckets() *RateBuckets { return &RateBuckets{db} }

// greatest and least are the dialect's two-argument max and min.
func (b *RateBuckets) greatest() string {
	if b.db.dialect == Postgres {
		return "GREATEST"
	}
	return "max"
}

func (b *RateBuckets) least() string {
	if b.db.dialect == Postgres {
		return "LEAST"
	}
	return "min"
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// Take records an event of key at now when the limit allows it, and
// reports whether it did.
func (b *RateBuckets) Take(ctx context.Context, key string, now time.Time, every, tolerance time.Duration) (bool, error) {
	n, e, tol := micros(now), every.Microseconds(), tolerance.Microseconds()
	q := strings.NewReplacer("GREATEST", b.greatest()).Replace(`
		INSERT INTO rate_buckets (key, tat) VALUES (?, CAST(? AS BIGINT) + CAST(? AS BIGINT))
		ON CONFLICT (key) DO UPDATE SET tat = GREATEST(rate_buckets.tat, CAST(? AS BIGINT)) + CAST(? AS BIGINT)
		WHERE GREATEST(rate_buckets.tat, CAST(? AS BIGINT)) - CAST(? AS BIGINT) <= CAST(? AS BIGINT)
		RETURNING tat`)
	var tat int64
	err := b.db.queryRow(ctx, q, key, n, e, n, e, n, n, tol).Scan(&tat)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // the update's condition failed: over the limit
	}
	return err == nil, err
}

// Hit records an event of key at now whether the limit allows it or not;
// a key already at its limit stays there (tat never runs further ahead
// than one full window).
func (b *RateBuckets) Hit(ctx context.Context, key string, now time.Time, every, tolerance time.Duration) error {
	n, e, tol := micros(now), every.Microseconds(), tolerance.Microseconds()
	q := strings.NewReplacer("GREATEST", b.greatest(), "LEAST", b.least()).Replace(`
		INSERT INTO rate_buckets (key, tat) VALUES (?, CAST(? AS BIGINT) + CAST(? AS BIGINT))
		ON CONFLICT (key) DO UPDATE SET tat = LEAST(GREATEST(rate_buckets.tat, CAST(? AS BIGINT)) + CAST(? AS BIGINT),
			CAST(? AS BIGINT) + CAST(? AS BIGINT) + CAST(? AS BIGINT))`)
	_, err := b.db.db.ExecContext(ctx, b.db.rebind(q), key, n, e, n, e, n, tol, e)
	return err
}

// Return undoes one event of key (a Take whose attempt turned out not to
// count).
func (b *RateBuckets) Return(ctx context.Context, key string, every time.Duration) error {
	_, err := b.db.db.ExecContext(ctx, b.db.rebind(`UPDATE rate_buckets SET tat = tat - CAST(? AS BIGINT) WHERE key = ?`),
		every.Microseconds(), key)
	return err
}

// Wait returns how long after now key's next event is allowed: 0 when it
// is allowed now.
func (b *RateBuckets) Wait(ctx context.Context, key string, now time.Time, tolerance time.Duration) (time.Duration, error) {
	var tat int64
	err := b.db.queryRow(ctx, `SELECT tat FROM rate_buckets WHERE key = ?`, key).Scan(&tat)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	wait := time.Duration(tat-micros(now))*time.Microsecond - tolerance
	return max(wait, 0), nil
}

// Reset forgets key's events.
func (b *RateBuckets) Reset(ctx context.Context, key string) error {
	_, err := b.db.db.ExecContext(ctx, b.db.rebind(`DELETE FROM rate_buckets WHERE key = ?`), key)
	return err
}

// Sweep deletes the rows whose every event is past at now (they limit
// nothing any more).
func (b *RateBuckets) Sweep(ctx context.Context, now time.Time) error {
	_, err := b.db.db.ExecContext(ctx, b.db.rebind(`DELETE FROM rate_buckets WHERE tat < CAST(? AS BIGINT)`), micros(now))
	return err
}
