-- Sessions: one row per bearer token, keyed by the token's id (its jti
-- claim). A token works only while its row exists and has not expired:
-- signing out deletes the row, signing out everywhere deletes every row of
-- the account, and a password change deletes every row but the current
-- one. Rows that have expired are deleted whenever a session is created.
-- Tokens issued before this migration have no row, so their holders sign
-- in again.

-- +goose Up
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
