-- Rate limits shared by every replica (issue 26, point 6; SCALING.md §3):
-- one row per limited key (a namespace and an address, an email, a
-- token…) holding its GCRA "theoretical arrival time" in microseconds
-- since the Unix epoch. A key whose tat has passed is as good as absent;
-- store.RateBuckets.Sweep deletes such rows.

-- +goose Up
CREATE TABLE rate_buckets (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);
CREATE INDEX rate_buckets_tat ON rate_buckets (tat);

-- +goose Down
DROP TABLE rate_buckets;
