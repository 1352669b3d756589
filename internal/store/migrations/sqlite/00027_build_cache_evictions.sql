-- Build caches' evictions (issue 25).
--
-- build_cache_evictions: when a project's build caches were last evicted
-- to keep the caches within their own bounds (per account and
-- platform-wide, least recently used first), so that its next build says
-- "Build cache was removed N days ago to free space" instead of that it
-- has none yet. Deleting the project deletes the row.

-- +goose Up
CREATE TABLE build_cache_evictions (
    project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    evicted_at TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE build_cache_evictions;
