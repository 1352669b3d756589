-- Each project says whether its live app is listed in Discover
-- (show_in_discover). Existing projects: on for public repositories, off for
-- private ones, as for new projects (gantry.DefaultShowInDiscover). The
-- gallery of 00004 lists an app only when its project shows in Discover,
-- and refreshes it when the setting changes.

-- +goose Up
ALTER TABLE projects ADD COLUMN show_in_discover BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE projects SET show_in_discover = NOT COALESCE((repository::jsonb ->> 'private')::boolean, FALSE);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION gallery_refresh(ids TEXT[]) RETURNS void LANGUAGE sql AS $$
    DELETE FROM gallery_apps g WHERE g.deployment_id = ANY (ids) AND NOT EXISTS (
        SELECT 1 FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE d.id = g.deployment_id AND d.status = 'live' AND d.is_public AND p.show_in_discover AND u.is_active);
    INSERT INTO gallery_apps (deployment_id, user_id, url, created_at, name, name_key, description, type,
            full_name, username, search, views, like_count)
        SELECT d.id, p.user_id, d.url, d.created_at, p.name, lower(p.name), p.description, p.type,
            u.full_name, u.username,
            lower(p.name || chr(10) || p.description || chr(10) || u.full_name || chr(10) || u.username),
            d.views, d.like_count
        FROM deployments d JOIN projects p ON p.active_deployment_id = d.id JOIN users u ON u.id = p.user_id
        WHERE d.id = ANY (ids) AND d.status = 'live' AND d.is_public AND p.show_in_discover AND u.is_active
    ON CONFLICT (deployment_id) DO UPDATE SET user_id = excluded.user_id, url = excluded.url,
        created_at = excluded.created_at, name = excluded.name, name_key = excluded.name_key,
        description = excluded.description, type = excluded.type, full_name = excluded.full_name,
        username = excluded.username, search = excluded.search, views = excluded.views,
        like_count = excluded.like_count;
$$;
-- +goose StatementEnd

DROP TRIGGER gallery_project_update ON projects;
CREATE TRIGGER gallery_project_update AFTER UPDATE OF active_deployment_id, name, description, type, show_in_discover
    ON projects FOR EACH ROW EXECUTE FUNCTION gallery_project_changed();

SELECT gallery_refresh(ARRAY(SELECT active_deployment_id FROM projects WHERE active_deployment_id IS NOT NULL));

-- +goose Down
DROP TRIGGER gallery_project_update ON projects;
CREATE TRIGGER gallery_project_update AFTER UPDATE OF active_deployment_id, name, description, type ON projects
    FOR EACH ROW EXECUTE FUNCTION gallery_project_changed();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION gallery_refresh(ids TEXT[]) RETURNS void LANGUAGE sql AS $$
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

ALTER TABLE projects DROP COLUMN show_in_discover;
SELECT gallery_refresh(ARRAY(SELECT active_deployment_id FROM projects WHERE active_deployment_id IS NOT NULL));
