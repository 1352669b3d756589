-- Builds held under leases (issue 26, point 2; SCALING.md §3): the
-- replica (node id) that claimed a build, until when it holds it unless it
-- renews (microseconds since the Unix epoch, by the database's clock on
-- PostgreSQL), and which attempt this is. Every write of the build's
-- outcome names its attempt, so a replica that lost the build (paused,
-- cut off) can never make it live after another took it over.

-- +goose Up
ALTER TABLE deployments ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE deployments ADD COLUMN lease_until BIGINT;
ALTER TABLE deployments ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
CREATE INDEX deployments_leases ON deployments (status, lease_until);

-- +goose Down
DROP INDEX deployments_leases;
ALTER TABLE deployments DROP COLUMN attempt;
ALTER TABLE deployments DROP COLUMN lease_until;
ALTER TABLE deployments DROP COLUMN claimed_by;
