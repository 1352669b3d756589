-- Custom domains: names a project's owner points at the platform with DNS
-- records. A name is unique across the platform (lower-case ASCII, an
-- internationalised name in punycode). Only verified domains are served.

-- +goose Up
CREATE TABLE domains (
    id            TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    apex          BOOLEAN NOT NULL DEFAULT FALSE,
    is_primary    BOOLEAN NOT NULL DEFAULT FALSE,
    redirect      TEXT NOT NULL DEFAULT 'none',
    token         TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'waiting_dns',
    error         TEXT NOT NULL DEFAULT '',
    next_check_at TIMESTAMP NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    verified_at   TIMESTAMP,
    created_at    TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX domains_name_key ON domains (name);
CREATE INDEX domains_project_id ON domains (project_id, created_at);
CREATE INDEX domains_due ON domains (status, next_check_at);

-- +goose Down
DROP TABLE domains;
