-- Build caches and "why it failed" (issue 15).
--
-- build_caches: one row per project that has build caches on the data disk
-- (data/caches/<project id>/): the bytes they take, counted in the owner's
-- storage budget, and when a build last used them (restored or saved),
-- which orders eviction, least recently used first. Deleting the project
-- or its owner deletes the row; the deploy service removes the folder.
--
-- deployments.diagnosis: the JSON of the gantry.Diagnosis a failed build
-- or start got, '' when none.

-- +goose Up
CREATE TABLE build_caches (
    project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    bytes      BIGINT NOT NULL DEFAULT 0,
    used_at    TIMESTAMP NOT NULL
);
CREATE INDEX build_caches_user_used ON build_caches (user_id, used_at);
ALTER TABLE deployments ADD COLUMN diagnosis TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE deployments DROP COLUMN diagnosis;
DROP TABLE build_caches;
