-- Users with every field of SPEC §3 User, and the minimal projects and
-- deployments tables that user statistics count from.

-- +goose Up
CREATE TABLE users (
    id                  TEXT PRIMARY KEY,
    username            TEXT NOT NULL,               -- as typed; unique case-insensitively
    email               TEXT NOT NULL,               -- stored lowercased
    full_name           TEXT NOT NULL,
    avatar              TEXT NOT NULL DEFAULT '',
    password_hash       TEXT NOT NULL,
    role                TEXT NOT NULL DEFAULT 'student',
    plan                TEXT NOT NULL DEFAULT 'free',
    max_projects        INTEGER NOT NULL DEFAULT 3,
    max_deployments     INTEGER NOT NULL DEFAULT 5,
    is_verified         BOOLEAN NOT NULL DEFAULT FALSE,
    is_active           BOOLEAN NOT NULL DEFAULT TRUE,
    github_connected    BOOLEAN NOT NULL DEFAULT FALSE,
    github_id           BIGINT,
    github_username     TEXT NOT NULL DEFAULT '',
    github_avatar       TEXT NOT NULL DEFAULT '',
    github_access_token TEXT NOT NULL DEFAULT '',    -- encrypted with the secret key
    github_repos        TEXT NOT NULL DEFAULT '[]',  -- JSON array of gantry.GitHubRepo
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL,
    last_login          TIMESTAMP
);
CREATE UNIQUE INDEX users_username_key ON users (lower(username));
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE UNIQUE INDEX users_github_id_key ON users (github_id) WHERE github_id IS NOT NULL;

CREATE TABLE projects (
    id                   TEXT PRIMARY KEY,
    user_id              TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    status               TEXT NOT NULL DEFAULT 'draft',
    type                 TEXT NOT NULL DEFAULT '',
    repository           TEXT NOT NULL DEFAULT '{}',  -- JSON: gantry.Repository
    branch               TEXT NOT NULL DEFAULT 'main',
    build_config         TEXT NOT NULL DEFAULT '{}',  -- JSON: gantry.BuildConfig
    subdomain            TEXT,                        -- unique when set
    active_deployment_id TEXT,
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL
);
CREATE INDEX projects_user_id ON projects (user_id, created_at);
CREATE UNIQUE INDEX projects_subdomain_key ON projects (subdomain) WHERE subdomain IS NOT NULL;

CREATE TABLE deployments (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    version     TEXT NOT NULL DEFAULT '1.0.0',
    subdomain   TEXT NOT NULL DEFAULT '',
    url         TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'pending',
    error       TEXT NOT NULL DEFAULT '',
    build_info  TEXT NOT NULL DEFAULT '{}',  -- JSON: gantry.BuildInfo
    metadata    TEXT NOT NULL DEFAULT '{}',  -- JSON: gantry.DeploymentMetadata
    environment TEXT NOT NULL DEFAULT '{}',  -- JSON: gantry.DeploymentEnv
    views       BIGINT NOT NULL DEFAULT 0,
    like_count  BIGINT NOT NULL DEFAULT 0,
    is_public   BOOLEAN NOT NULL DEFAULT TRUE,
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
CREATE INDEX deployments_user_id ON deployments (user_id, status);
CREATE INDEX deployments_project_id ON deployments (project_id, created_at);
CREATE INDEX deployments_subdomain ON deployments (subdomain, status);

-- +goose Down
DROP TABLE deployments;
DROP TABLE projects;
DROP TABLE users;
