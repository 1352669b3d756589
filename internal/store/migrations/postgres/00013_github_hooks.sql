-- GitHub push to deploy (issue 14). github_hooks: the repository webhook of
-- a project made from a connected GitHub repository (hook_id 0 while
-- registering it failed, with the reason in error), its sealed secret, and
-- the last delivery handled. github_deliveries: the X-GitHub-Delivery ids
-- already handled, so a replayed delivery does nothing (rows older than 30
-- days are deleted as new ones arrive). github_pull_requests: the pull
-- requests Gantry has seen, their state (open, awaiting_approval,
-- approved, closed), the approved head commit of fork pull requests, the
-- last preview deployment and Gantry's one comment.

-- +goose Up
CREATE TABLE github_hooks (
    project_id   TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    repo_id      BIGINT NOT NULL,
    repo_name    TEXT NOT NULL DEFAULT '',
    hook_id      BIGINT NOT NULL DEFAULT 0,
    secret       TEXT NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    last_at      TIMESTAMPTZ,
    last_event   TEXT NOT NULL DEFAULT '',
    last_action  TEXT NOT NULL DEFAULT '',
    last_result  TEXT NOT NULL DEFAULT '',
    last_message TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX github_hooks_repo_id ON github_hooks (repo_id);

CREATE TABLE github_deliveries (
    id          TEXT PRIMARY KEY,
    received_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX github_deliveries_received_at ON github_deliveries (received_at);

CREATE TABLE github_pull_requests (
    project_id    TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number        INTEGER NOT NULL,
    title         TEXT NOT NULL DEFAULT '',
    author        TEXT NOT NULL DEFAULT '',
    head_branch   TEXT NOT NULL DEFAULT '',
    head_sha      TEXT NOT NULL DEFAULT '',
    fork          BOOLEAN NOT NULL DEFAULT FALSE,
    state         TEXT NOT NULL,
    url           TEXT NOT NULL DEFAULT '',
    approved_sha  TEXT NOT NULL DEFAULT '',
    deployment_id TEXT NOT NULL DEFAULT '',
    comment_id    BIGINT NOT NULL DEFAULT 0,
    updated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (project_id, number)
);

-- +goose Down
DROP TABLE github_pull_requests;
DROP TABLE github_deliveries;
DROP TABLE github_hooks;
