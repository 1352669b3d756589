-- The public gallery (Discover): likes (one per user or visitor and
-- deployment), the last counted visit of each visitor (views count once per
-- visitor and deployment per hour), and gallery_apps, one compact row per
-- listed deployment (live, public, its project's active deployment, of an
-- active account) with what Discover shows, searches and sorts by. Triggers
-- keep gallery_apps in step with deployments, projects and users in the
-- same transaction as every change, so Discover reads one indexed table.

-- +goose Up
CREATE TABLE deployment_likes (
    deployment_id TEXT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    liker         TEXT NOT NULL,  -- 'user:<account id>' or 'visitor:<anonymous id>'
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (deployment_id, liker)
);
CREATE TABLE deployment_views (
    deployment_id TEXT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    visitor       TEXT NOT NULL,  -- as liker above
    counted_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (deployment_id, visitor)
);
-- Rows older than the view window are pruned as the app is visited.
CREATE INDEX deployment_views_counted ON deployment_views (deployment_id, counted_at);
CREATE TABLE gallery_apps (
    deployment_id TEXT PRIMARY KEY REFERENCES deployments (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,
    url           TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    name          TEXT NOT NULL,
    name_key      TEXT NOT NULL,  -- lower(name): the name sort
    description   TEXT NOT NULL,
    type          TEXT NOT NULL,
    full_name     TEXT NOT NULL,
    username      TEXT NOT NULL,
    search        TEXT NOT NULL,  -- lower(name, description, full name, username), one per line
    views         BIGINT NOT NULL,
    like_count    BIGINT NOT NULL,
    -- 0.4 × views + 0.6 × likes − 0.1 × createdAt in days: the trending
    -- score minus a term that is the same for every row (store.galleryOrder).
    trending_base DOUBLE PRECISION GENERATED ALWAYS AS (0.4 * views + 0.6 * like_count
        - 0.1 * EXTRACT(EPOCH FROM (created_at AT TIME ZONE 'UTC'))::double precision / 86400) STORED
);
CREATE INDEX gallery_apps_recent ON gallery_apps (created_at, deployment_id);
CREATE INDEX gallery_apps_name ON gallery_apps (name_key, created_at DESC, deployment_id DESC);
CREATE INDEX gallery_apps_popular ON gallery_apps (like_count DESC, views DESC, created_at DESC, deployment_id DESC);
CREATE INDEX gallery_apps_trending ON gallery_apps (trending_base DESC, created_at DESC, deployment_id DESC);
CREATE INDEX gallery_apps_type ON gallery_apps (type);
CREATE INDEX gallery_apps_user ON gallery_apps (user_id);
CREATE INDEX projects_active_deployment ON projects (active_deployment_id);

-- gallery_refresh makes gallery_apps hold exactly the listed deployments
-- among ids, as they are now. An upsert (not delete and insert), so that
-- concurrent refreshes of one deployment never collide on its key.
-- +goose StatementBegin
CREATE FUNCTION gallery_refresh(ids TEXT[]) RETURNS void LANGUAGE sql AS $$
    DELETE FROM gallery_apps g WHERE g.deployment_id = ANY (ids) AND NOT EXISTS (
        SELECT 1 FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE d.id = g.deployment_id AND d.status = 'live' AND d.is_public AND u.is_active);
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || chr(10) || p.description || chr(10) || u.full_name || chr(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE d.id = ANY (ids) AND d.status = 'live' AND d.is_public AND u.is_active
    ON CONFLICT (deployment_id) DO UPDATE SET user_id = excluded.user_id, url = excluded.url,
        created_at = excluded.created_at, name = excluded.name, name_key = excluded.name_key,
        description = excluded.description, type = excluded.type, full_name = excluded.full_name,
        username = excluded.username, search = excluded.search, views = excluded.views,
        like_count = excluded.like_count;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION gallery_deployment_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM gallery_refresh(ARRAY[NEW.id]);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION gallery_project_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM gallery_refresh(ARRAY[OLD.active_deployment_id, NEW.active_deployment_id]);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION gallery_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM gallery_refresh(ARRAY(SELECT active_deployment_id FROM projects
        WHERE user_id = NEW.id AND active_deployment_id IS NOT NULL));
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER gallery_deployment_insert AFTER INSERT ON deployments
    FOR EACH ROW EXECUTE FUNCTION gallery_deployment_changed();
CREATE TRIGGER gallery_deployment_update AFTER UPDATE OF status, is_public, url, views, like_count ON deployments
    FOR EACH ROW EXECUTE FUNCTION gallery_deployment_changed();
CREATE TRIGGER gallery_project_update AFTER UPDATE OF active_deployment_id, name, description, type ON projects
    FOR EACH ROW EXECUTE FUNCTION gallery_project_changed();
CREATE TRIGGER gallery_user_update AFTER UPDATE OF full_name, username, is_active ON users
    FOR EACH ROW EXECUTE FUNCTION gallery_user_changed();

SELECT gallery_refresh(ARRAY(SELECT active_deployment_id FROM projects WHERE active_deployment_id IS NOT NULL));

-- +goose Down
DROP TRIGGER gallery_user_update ON users;
DROP TRIGGER gallery_project_update ON projects;
DROP TRIGGER gallery_deployment_update ON deployments;
DROP TRIGGER gallery_deployment_insert ON deployments;
DROP FUNCTION gallery_user_changed();
DROP FUNCTION gallery_project_changed();
DROP FUNCTION gallery_deployment_changed();
DROP FUNCTION gallery_refresh(TEXT[]);
DROP INDEX projects_active_deployment;
DROP TABLE gallery_apps;
DROP TABLE deployment_views;
DROP TABLE deployment_likes;
