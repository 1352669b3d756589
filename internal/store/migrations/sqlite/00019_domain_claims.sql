-- Custom domain claims (issue 24): a name is no longer unique across the
-- platform while unverified — several accounts may claim it, each with a
-- token of its own, and the one whose DNS records prove it serves it. At
-- most one row per name is served (verified or certificate issued); an
-- account claims a name once. failing_since is when the daily re-check of
-- a served domain first failed (NULL while it passes).

-- +goose Up
DROP INDEX domains_name_key;
CREATE INDEX domains_name ON domains (name);
CREATE UNIQUE INDEX domains_user_name_key ON domains (user_id, name);
CREATE UNIQUE INDEX domains_served_name_key ON domains (name) WHERE status IN ('verified', 'certificate_issued');
ALTER TABLE domains ADD COLUMN failing_since TIMESTAMP;

-- +goose Down
ALTER TABLE domains DROP COLUMN failing_since;
DROP INDEX domains_served_name_key;
DROP INDEX domains_user_name_key;
DROP INDEX domains_name;
CREATE UNIQUE INDEX domains_name_key ON domains (name);
