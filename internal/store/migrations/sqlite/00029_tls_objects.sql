-- Certificates, their keys and ACME state shared by every replica
-- (issue 26, point 6; SCALING.md §3): certmagic's storage as rows
-- (tlsedge.SharedStorage over store.TLSObjects), and its named locks,
-- each held by an owner until a time it keeps pushing forward while it
-- works (a holder that died lets go when that time passes). Times are
-- microseconds since the Unix epoch.

-- +goose Up
CREATE TABLE tls_objects (
    key      TEXT PRIMARY KEY,
    value    BLOB NOT NULL,
    modified BIGINT NOT NULL
);
CREATE TABLE tls_locks (
    name    TEXT PRIMARY KEY,
    owner   TEXT NOT NULL,
    expires BIGINT NOT NULL
);

-- +goose Down
DROP TABLE tls_locks;
DROP TABLE tls_objects;
