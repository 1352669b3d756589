-- Each project says whether its live app is listed in Discover
-- (show_in_discover). Existing projects: on for public repositories, off for
-- private ones, as for new projects (gantry.DefaultShowInDiscover). The
-- gallery triggers of 00004 list an app only when its project shows in
-- Discover, and refresh it when the setting changes.

-- +goose Up
ALTER TABLE projects ADD COLUMN show_in_discover BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE projects SET show_in_discover = NOT COALESCE(json_extract(repository, '$.private'), 0);

DROP TRIGGER gallery_deployment_insert;
DROP TRIGGER gallery_deployment_update;
DROP TRIGGER gallery_project_update;
DROP TRIGGER gallery_user_update;

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
        WHERE d.id = NEW.id AND d.status = 'live' AND d.is_public AND p.show_in_discover AND u.is_active;
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
        WHERE d.id = NEW.id AND d.status = 'live' AND d.is_public AND p.show_in_discover AND u.is_active;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER gallery_project_update AFTER UPDATE OF active_deployment_id, name, description, type, show_in_discover ON projects BEGIN
    DELETE FROM gallery_apps WHERE deployment_id IN (OLD.active_deployment_id, NEW.active_deployment_id);
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || char(10) || p.description || char(10) || u.full_name || char(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE p.id = NEW.id AND d.status = 'live' AND d.is_public AND p.show_in_discover AND u.is_active;
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
        WHERE u.id = NEW.id AND d.status = 'live' AND d.is_public AND p.show_in_discover AND u.is_active;
END;
-- +goose StatementEnd

DELETE FROM gallery_apps WHERE deployment_id IN (
    SELECT active_deployment_id FROM projects WHERE NOT show_in_discover AND active_deployment_id IS NOT NULL);

-- +goose Down
DROP TRIGGER gallery_deployment_insert;
DROP TRIGGER gallery_deployment_update;
DROP TRIGGER gallery_project_update;
DROP TRIGGER gallery_user_update;

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
    WHERE d.status = 'live' AND d.is_public AND u.is_active AND NOT p.show_in_discover;

ALTER TABLE projects DROP COLUMN show_in_discover;
