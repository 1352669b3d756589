-- The change feed of routes between replicas (issue 26, point 3;
-- SCALING.md §3): every transition that moves a route takes the next
-- number of one counter row (seqs 'routes', locked until the transition
-- commits, so numbers become visible in commit order, which a SEQUENCE
-- does not promise) and stamps it on the project's row or the preview
-- label's row it moved. A deleted project leaves one route_removals row
-- per name it held. Replicas read everything stamped after the last
-- number they applied.

-- +goose Up
CREATE TABLE seqs (name TEXT PRIMARY KEY, v BIGINT NOT NULL);
INSERT INTO seqs (name, v) VALUES ('routes', 0);
ALTER TABLE projects ADD COLUMN route_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE preview_routes ADD COLUMN route_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX projects_route_seq ON projects (route_seq);
CREATE INDEX preview_routes_route_seq ON preview_routes (route_seq);
CREATE TABLE route_removals (
    seq BIGINT NOT NULL,
    project_id TEXT NOT NULL,
    subdomain TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (seq, subdomain)
);

-- +goose Down
DROP TABLE route_removals;
DROP INDEX preview_routes_route_seq;
DROP INDEX projects_route_seq;
ALTER TABLE preview_routes DROP COLUMN route_seq;
ALTER TABLE projects DROP COLUMN route_seq;
DROP TABLE seqs;
