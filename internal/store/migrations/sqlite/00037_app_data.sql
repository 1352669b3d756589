-- Apps' persistent data folders (issue 28, point 1): a server app gets
-- /data, a volume of its own per project and target ("production", or
-- "preview-<label>" for a preview), kept across deployments. Its bytes,
-- as last measured, count in the owner's storage budget.

-- +goose Up
CREATE TABLE app_data (
    project_id  TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    bytes       BIGINT NOT NULL DEFAULT 0,
    measured_at TIMESTAMP NOT NULL,
    PRIMARY KEY (project_id, name)
);

-- +goose Down
DROP TABLE app_data;
