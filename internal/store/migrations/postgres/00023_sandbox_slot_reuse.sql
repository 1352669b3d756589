-- Sandbox uid slots return to the pool: a deleted account's, and that of
-- an account with nothing deployed for 30 days (store.ReleaseSandboxSlots).
-- users.sandbox_slot_used_at is when the account's slot last ran a build
-- or an app; sandbox_slots_free holds the slots given back, the smallest
-- of which the next account to build takes.

-- +goose Up
ALTER TABLE users ADD COLUMN sandbox_slot_used_at TIMESTAMPTZ;
CREATE TABLE sandbox_slots_free (
    slot     INTEGER PRIMARY KEY,
    freed_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE sandbox_slots_free;
ALTER TABLE users DROP COLUMN sandbox_slot_used_at;
