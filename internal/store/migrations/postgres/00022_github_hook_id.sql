-- Deliveries find their webhook by X-GitHub-Hook-ID before the body is
-- read (issue 24, point 7): github_hooks is looked up by hook_id.

-- +goose Up
CREATE INDEX github_hooks_hook_id ON github_hooks (hook_id);

-- +goose Down
DROP INDEX github_hooks_hook_id;
