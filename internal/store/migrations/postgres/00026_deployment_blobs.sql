-- The blobs (files stored by content, internal/blobs) each deployment's
-- files link to, and the bytes each takes on disk: an account's storage
-- counts each of its blobs once, however many deployments link to it
-- (store.Blobs, storageColumns).

-- +goose Up
CREATE TABLE deployment_blobs (
    deployment_id TEXT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,
    hash          TEXT NOT NULL,
    bytes         BIGINT NOT NULL,
    PRIMARY KEY (deployment_id, hash)
);
CREATE INDEX deployment_blobs_user_hash ON deployment_blobs (user_id, hash, deployment_id);

-- +goose Down
DROP TABLE deployment_blobs;
