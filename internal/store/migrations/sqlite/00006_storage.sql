-- Storage budget per account: what each deployment keeps on the data disk
-- (files_size: its published site or server-app workspace, allocated bytes,
-- recorded when it is built), the bytes of its log messages (log_bytes,
-- kept up to date as entries are added, trimmed and cleared), when its
-- files were removed to save space (pruned_at), and each account's budget
-- (max_storage, bytes, by plan: gantry.PlanMaxStorage).

-- +goose Up
ALTER TABLE deployments ADD COLUMN files_size BIGINT NOT NULL DEFAULT 0;
ALTER TABLE deployments ADD COLUMN log_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE deployments ADD COLUMN pruned_at TIMESTAMP;
ALTER TABLE users ADD COLUMN max_storage BIGINT NOT NULL DEFAULT 1073741824;
UPDATE users SET max_storage = CASE plan
    WHEN 'basic' THEN 5368709120
    WHEN 'pro' THEN 26843545600
    WHEN 'enterprise' THEN 107374182400
    ELSE 1073741824 END;
UPDATE deployments SET log_bytes = (
    SELECT COALESCE(SUM(octet_length(l.message)), 0) FROM deployment_logs l WHERE l.deployment_id = deployments.id);
-- files_size of deployments built before this migration is measured on
-- disk when the platform starts (deploy.Service.Open).

-- +goose Down
ALTER TABLE users DROP COLUMN max_storage;
ALTER TABLE deployments DROP COLUMN pruned_at;
ALTER TABLE deployments DROP COLUMN log_bytes;
ALTER TABLE deployments DROP COLUMN files_size;
