-- Notifications (SPEC §3 Notification): messages to one user about platform
-- events, newest first. The unread count is counted, never stored.

-- +goose Up
CREATE TABLE notifications (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    title      TEXT NOT NULL,
    message    TEXT NOT NULL DEFAULT '',
    read       BOOLEAN NOT NULL DEFAULT FALSE,
    action_url TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX notifications_user_id ON notifications (user_id, created_at);

-- +goose Down
DROP TABLE notifications;
