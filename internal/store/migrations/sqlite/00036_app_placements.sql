-- App placement between replicas (issue 26, point 5; SCALING.md §2-§3):
-- each replica heartbeats its nodes row (its peer address, held until
-- seen_until unless renewed), and each live server app has one home node
-- held by an app_placements row: the node that runs it, a generation
-- bumped whenever another node takes it over (so the node that lost it
-- learns so at its next renewal), and until when it is held. Times are
-- microseconds since the Unix epoch, by the database's clock on
-- PostgreSQL.

-- +goose Up
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    peer_addr TEXT NOT NULL,
    seen_until BIGINT NOT NULL
);
CREATE TABLE app_placements (
    deployment_id TEXT PRIMARY KEY REFERENCES deployments(id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    generation BIGINT NOT NULL,
    lease_until BIGINT NOT NULL
);
CREATE INDEX app_placements_node ON app_placements (node_id);

-- +goose Down
DROP INDEX app_placements_node;
DROP TABLE app_placements;
DROP TABLE nodes;
