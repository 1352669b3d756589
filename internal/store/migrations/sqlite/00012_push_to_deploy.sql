-- Push to deploy, previews and rollback (issue 14).
--
-- deployments: the target (production or preview; every earlier row was
-- production), when a deployment was promoted back to production, and a
-- redeploy's "no cache" wish for the build.
-- projects: the auto-deploy and watch-for-commits switches, the deploy
-- hook's token (its SHA-256 to find the project by, and the token sealed so
-- the owner can see it), and the commit watcher's state (last head seen,
-- next check, current back-off, and a claim so two replicas never check
-- one project at once).
-- preview_routes: one row per preview label, the deployment it serves and
-- a route version (as projects.route_version) so the edge applies a
-- label's changes in order.
-- project_env: each variable has a scope (all, production, preview); one
-- name may be set once per scope.

-- +goose Up
ALTER TABLE deployments ADD COLUMN target TEXT NOT NULL DEFAULT 'production';
ALTER TABLE deployments ADD COLUMN promoted_at TIMESTAMP;
ALTER TABLE deployments ADD COLUMN no_cache BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX deployments_project_target ON deployments (project_id, target, status);

ALTER TABLE projects ADD COLUMN auto_deploy BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE projects ADD COLUMN watch_commits BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE projects ADD COLUMN deploy_hook_hash TEXT;
ALTER TABLE projects ADD COLUMN deploy_hook_sealed TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN watch_head TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN watch_next_at TIMESTAMP;
ALTER TABLE projects ADD COLUMN watch_backoff_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN watch_claimed_until TIMESTAMP;
CREATE UNIQUE INDEX projects_deploy_hook ON projects (deploy_hook_hash);

CREATE TABLE preview_routes (
    subdomain     TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    deployment_id TEXT REFERENCES deployments (id) ON DELETE SET NULL,
    version       BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX preview_routes_project ON preview_routes (project_id);

CREATE TABLE project_env_scoped (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    is_secret  BOOLEAN NOT NULL DEFAULT FALSE,
    position   INTEGER NOT NULL DEFAULT 0,
    scope      TEXT NOT NULL DEFAULT 'all',
    PRIMARY KEY (project_id, key, scope)
);
INSERT INTO project_env_scoped (project_id, key, value, is_secret, position)
    SELECT project_id, key, value, is_secret, position FROM project_env;
DROP TABLE project_env;
ALTER TABLE project_env_scoped RENAME TO project_env;

-- +goose Down
CREATE TABLE project_env_unscoped (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    is_secret  BOOLEAN NOT NULL DEFAULT FALSE,
    position   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, key)
);
INSERT OR IGNORE INTO project_env_unscoped (project_id, key, value, is_secret, position)
    SELECT project_id, key, value, is_secret, position FROM project_env ORDER BY scope = 'all' DESC;
DROP TABLE project_env;
ALTER TABLE project_env_unscoped RENAME TO project_env;
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
