-- Each account's builds and apps run under a sandbox uid of their own:
-- the account's slot in the configured uid range (GANTRY_SANDBOX_UIDS),
-- given out once, in order, the first time the account builds.

-- +goose Up
ALTER TABLE users ADD COLUMN sandbox_slot INTEGER;
CREATE UNIQUE INDEX users_sandbox_slot ON users (sandbox_slot);
CREATE TABLE sandbox_slots_given (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
);

-- +goose Down
DROP TABLE sandbox_slots_given;
DROP INDEX users_sandbox_slot;
ALTER TABLE users DROP COLUMN sandbox_slot;
