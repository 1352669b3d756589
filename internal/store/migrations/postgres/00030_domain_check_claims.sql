-- A custom domain's DNS check is claimed by the replica that runs it
-- (store.ClaimDueDomains), so that with several replicas each due check
-- runs once per interval (issue 26, point 6; SCALING.md §1.9). A replica
-- that dies mid-check lets the claim lapse and another checks it.

-- +goose Up
ALTER TABLE domains ADD COLUMN check_claimed_until TIMESTAMPTZ;

-- +goose Down
ALTER TABLE domains DROP COLUMN check_claimed_until;
