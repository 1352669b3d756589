-- The fair build queue's turns: each user's last claimed build gets the
-- next number (1, 2, …, one counter for all users). ClaimDeployment serves
-- the user with the lowest turn (none: first) before anyone else, so one
-- user's backlog never delays another user's build. A counter rather than
-- a clock: replicas' clocks may differ, and two claims in one millisecond
-- still get an order. A row outlives the user's deployments, so deleting a
-- build never moves its owner forward.

-- +goose Up
CREATE TABLE build_turns (
    user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    turn    BIGINT NOT NULL
);
CREATE INDEX build_turns_turn ON build_turns (turn);

-- +goose Down
DROP TABLE build_turns;
