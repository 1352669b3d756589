-- GitHub deliveries as leased jobs (issue 26, point 6; SCALING.md §1.8):
-- a verified delivery answered 202 is stored here until a worker on any
-- replica has handled it, so a process that dies after the answer loses
-- nothing. A worker holds a job until lease_until; one whose worker died
-- is taken again when that passes. github_hooks.turn_at is when a worker
-- last took a job of the project: the project waiting longest goes next.

-- +goose Up
CREATE TABLE webhook_jobs (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    event       TEXT NOT NULL,
    payload     BYTEA NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    claimed_by  TEXT NOT NULL DEFAULT '',
    lease_until TIMESTAMPTZ,
    attempts    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_jobs_project ON webhook_jobs (project_id, received_at);
ALTER TABLE github_hooks ADD COLUMN turn_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE github_hooks DROP COLUMN turn_at;
DROP TABLE webhook_jobs;
