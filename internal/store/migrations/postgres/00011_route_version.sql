-- Each project's route version: the number of times what its subdomain
-- serves (its active deployment, or that deployment's status) changed.
-- Every transition that changes it adds one in its own transaction
-- (internal/store/transition.go), so the in-memory routing table can tell
-- an older outcome from a newer one and never apply them out of order.

-- +goose Up
ALTER TABLE projects ADD COLUMN route_version BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE projects DROP COLUMN route_version;
