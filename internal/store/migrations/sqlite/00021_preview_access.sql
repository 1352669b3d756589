-- Previews of private repositories need their owner's sign-in unless the
-- owner opens them (issue 24, point 20): projects.previews_open is that
-- switch (off: a private repository's previews are the owner's alone).

-- +goose Up
ALTER TABLE projects ADD COLUMN previews_open BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE projects DROP COLUMN previews_open;
