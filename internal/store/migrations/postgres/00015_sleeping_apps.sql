-- Sleeping apps (issue 15): a live server app stopped after GANTRY_APP_IDLE
-- without a request stays live and is marked sleeping, so that a restart
-- of the platform leaves it asleep until its next request; a project on a
-- paid plan may keep its app always on.

-- +goose Up
ALTER TABLE deployments ADD COLUMN sleeping BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE projects ADD COLUMN always_on BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE projects DROP COLUMN always_on;
ALTER TABLE deployments DROP COLUMN sleeping;
