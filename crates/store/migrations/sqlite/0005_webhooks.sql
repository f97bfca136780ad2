-- Organization webhooks and their deliveries (the durable delivery queue). Keep in step with the
-- other dialect's 0005_webhooks.sql.

-- Server-side keys (the webhook secret encryption key), generated once per database.
CREATE TABLE webhook_keys (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE hooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id BIGINT NOT NULL,
    -- The OAuth application whose token created the hook (it alone may see it); users may not touch it.
    created_by_app_id BIGINT,
    name TEXT NOT NULL,
    events TEXT NOT NULL,
    active INTEGER NOT NULL,
    url TEXT NOT NULL,
    content_type TEXT NOT NULL,
    insecure_ssl TEXT NOT NULL,
    -- The secret, encrypted with the server key (never returned).
    secret_enc TEXT,
    consecutive_failures BIGINT NOT NULL DEFAULT 0,
    last_status TEXT,
    last_code BIGINT,
    last_message TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX hooks_org_id ON hooks (org_id, id);

CREATE TABLE hook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    guid TEXT NOT NULL,
    hook_id BIGINT NOT NULL,
    event TEXT NOT NULL,
    action TEXT,
    payload TEXT NOT NULL,
    -- pending | delivered | failed | refused
    state TEXT NOT NULL,
    redelivery INTEGER NOT NULL DEFAULT 0,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    claimed_until BIGINT,
    installation_id BIGINT,
    repository_id BIGINT,
    -- Activity time in milliseconds (latency accounting).
    activity_at_ms BIGINT,
    url TEXT,
    status TEXT,
    status_code BIGINT NOT NULL DEFAULT 0,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    request_headers TEXT,
    request_body TEXT,
    response_headers TEXT,
    response_body TEXT,
    delivered_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX hook_deliveries_hook_id ON hook_deliveries (hook_id, id);
CREATE INDEX hook_deliveries_due ON hook_deliveries (state, next_attempt_at);
