-- Log entries of deployments, numbered per deployment, and the build queue's index.

-- +goose Up
ALTER TABLE deployments ADD COLUMN log_seq BIGINT NOT NULL DEFAULT 0;
CREATE TABLE deployment_logs (
    deployment_id TEXT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    ts            TIMESTAMP NOT NULL,
    level         TEXT NOT NULL,
    type          TEXT NOT NULL,
    message       TEXT NOT NULL,
    PRIMARY KEY (deployment_id, seq)
);
CREATE INDEX deployments_queue ON deployments (status, created_at);

-- +goose Down
DROP INDEX deployments_queue;
DROP TABLE deployment_logs;
ALTER TABLE deployments DROP COLUMN log_seq;
