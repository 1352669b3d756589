-- Push to deploy, previews and rollback (issue 14): see the SQLite
-- migration of the same number for what each column is.

-- +goose Up
ALTER TABLE deployments ADD COLUMN target TEXT NOT NULL DEFAULT 'production';
ALTER TABLE deployments ADD COLUMN promoted_at TIMESTAMPTZ;
ALTER TABLE deployments ADD COLUMN no_cache BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX deployments_project_target ON deployments (project_id, target, status);

ALTER TABLE projects ADD COLUMN auto_deploy BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE projects ADD COLUMN watch_commits BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE projects ADD COLUMN deploy_hook_hash TEXT;
ALTER TABLE projects ADD COLUMN deploy_hook_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN watch_head TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN watch_next_at TIMESTAMPTZ;
ALTER TABLE projects ADD COLUMN watch_backoff_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN watch_claimed_until TIMESTAMPTZ;
CREATE UNIQUE INDEX projects_deploy_hook ON projects (deploy_hook_hash);

CREATE TABLE preview_routes (
    subdomain     TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    deployment_id TEXT REFERENCES deployments (id) ON DELETE SET NULL,
    version       BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX preview_routes_project ON preview_routes (project_id);

ALTER TABLE project_env ADD COLUMN scope TEXT NOT NULL DEFAULT 'all';
ALTER TABLE project_env DROP CONSTRAINT project_env_pkey;
ALTER TABLE project_env ADD PRIMARY KEY (project_id, key, scope);

-- +goose Down
DELETE FROM project_env a USING project_env b
    WHERE a.project_id = b.project_id AND a.key = b.key AND a.scope <> 'all' AND (b.scope = 'all' OR b.scope < a.scope);
ALTER TABLE project_env DROP CONSTRAINT project_env_pkey;
ALTER TABLE project_env DROP COLUMN scope;
ALTER TABLE project_env ADD PRIMARY KEY (project_id, key);
DROP TABLE preview_routes;
DROP INDEX projects_deploy_hook;
ALTER TABLE projects DROP COLUMN watch_claimed_until;
ALTER TABLE projects DROP COLUMN watch_backoff_ms;
ALTER TABLE projects DROP COLUMN watch_next_at;
ALTER TABLE projects DROP COLUMN watch_head;
ALTER TABLE projects DROP COLUMN deploy_hook_sealed;
ALTER TABLE projects DROP COLUMN deploy_hook_hash;
ALTER TABLE projects DROP COLUMN watch_commits;
ALTER TABLE projects DROP COLUMN auto_deploy;
DROP INDEX deployments_project_target;
ALTER TABLE deployments DROP COLUMN no_cache;
ALTER TABLE deployments DROP COLUMN promoted_at;
ALTER TABLE deployments DROP COLUMN target;
