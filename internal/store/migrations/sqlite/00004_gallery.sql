-- The public gallery (Discover): likes (one per user or visitor and
-- deployment), the last counted visit of each visitor (views count once per
-- visitor and deployment per hour), the trending order as an indexed
-- generated column, and the indexes of Discover's queries.

-- +goose Up
CREATE TABLE deployment_likes (
    deployment_id TEXT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    liker         TEXT NOT NULL,  -- "user:<account id>" or "visitor:<anonymous id>"
    created_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (deployment_id, liker)
);
CREATE TABLE deployment_views (
    deployment_id TEXT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    visitor       TEXT NOT NULL,  -- as liker above
    counted_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (deployment_id, visitor)
);
-- 0.4 × views + 0.6 × likes − 0.1 × createdAt in days: the trending score
-- minus a term that is the same for every row (store.galleryOrder).
ALTER TABLE deployments ADD COLUMN trending_base REAL
    GENERATED ALWAYS AS (0.4 * views + 0.6 * like_count - 0.1 * julianday(created_at)) VIRTUAL;
CREATE INDEX projects_active_deployment ON projects (active_deployment_id);

-- +goose Down
DROP INDEX projects_active_deployment;
ALTER TABLE deployments DROP COLUMN trending_base;
DROP TABLE deployment_views;
DROP TABLE deployment_likes;
