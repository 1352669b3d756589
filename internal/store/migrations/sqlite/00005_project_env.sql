-- Environment variables of projects. Values of secret variables are sealed
-- with the platform key (internal/secret) before they reach this table.

-- +goose Up
CREATE TABLE project_env (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    is_secret  BOOLEAN NOT NULL DEFAULT FALSE,
    position   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, key)
);

-- +goose Down
DROP TABLE project_env;
