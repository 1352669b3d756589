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
-- Rows older than the view window are pruned as the app is visited.
CREATE INDEX deployment_views_counted ON deployment_views (deployment_id, counted_at);
CREATE TABLE gallery_apps (
    deployment_id TEXT PRIMARY KEY REFERENCES deployments (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,
    url           TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL,
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
    trending_base REAL GENERATED ALWAYS AS (0.4 * views + 0.6 * like_count - 0.1 * julianday(created_at)) STORED
);
CREATE INDEX gallery_apps_recent ON gallery_apps (created_at, deployment_id);
CREATE INDEX gallery_apps_name ON gallery_apps (name_key, created_at DESC, deployment_id DESC);
CREATE INDEX gallery_apps_popular ON gallery_apps (like_count DESC, views DESC, created_at DESC, deployment_id DESC);
CREATE INDEX gallery_apps_trending ON gallery_apps (trending_base DESC, created_at DESC, deployment_id DESC);
CREATE INDEX gallery_apps_type ON gallery_apps (type);
CREATE INDEX gallery_apps_user ON gallery_apps (user_id);
-- Covers the search and the chip counts under it: scanning it is a third
-- of the work of scanning the table.
CREATE INDEX gallery_apps_search ON gallery_apps (search, type, user_id);
CREATE INDEX projects_active_deployment ON projects (active_deployment_id);

-- +goose StatementBegin
CREATE TRIGGER gallery_deployment_insert AFTER INSERT ON deployments BEGIN
    DELETE FROM gallery_apps WHERE deployment_id = NEW.id;
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || char(10) || p.description || char(10) || u.full_name || char(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE d.id = NEW.id AND d.status = 'live' AND d.is_public AND u.is_active;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER gallery_deployment_update AFTER UPDATE OF status, is_public, url, views, like_count ON deployments BEGIN
    DELETE FROM gallery_apps WHERE deployment_id = NEW.id;
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || char(10) || p.description || char(10) || u.full_name || char(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE d.id = NEW.id AND d.status = 'live' AND d.is_public AND u.is_active;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER gallery_project_update AFTER UPDATE OF active_deployment_id, name, description, type ON projects BEGIN
    DELETE FROM gallery_apps WHERE deployment_id IN (OLD.active_deployment_id, NEW.active_deployment_id);
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || char(10) || p.description || char(10) || u.full_name || char(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE p.id = NEW.id AND d.status = 'live' AND d.is_public AND u.is_active;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER gallery_user_update AFTER UPDATE OF full_name, username, is_active ON users BEGIN
    DELETE FROM gallery_apps WHERE user_id = NEW.id;
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || char(10) || p.description || char(10) || u.full_name || char(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE u.id = NEW.id AND d.status = 'live' AND d.is_public AND u.is_active;
END;
-- +goose StatementEnd

INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
        full_name, username, search, views, like_count)
    SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
        u.full_name, u.username,
        lower(p.name || char(10) || p.description || char(10) || u.full_name || char(10) || u.username),
        d.views, d.like_count
    FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
    WHERE d.status = 'live' AND d.is_public AND u.is_active;

-- +goose Down
DROP TRIGGER gallery_user_update;
DROP TRIGGER gallery_project_update;
DROP TRIGGER gallery_deployment_update;
DROP TRIGGER gallery_deployment_insert;
DROP INDEX projects_active_deployment;
DROP TABLE gallery_apps;
DROP TABLE deployment_views;
DROP TABLE deployment_likes;
