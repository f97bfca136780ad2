-- Consumers of the activity outbox (feeds, webhooks, notifications) keep their position here,
-- updated in the same transaction as what they produce: each record is handled exactly once.
CREATE TABLE worker_cursors (
    name TEXT PRIMARY KEY,
    last_id BIGINT NOT NULL
);
-- Stars (WatchEvent).
CREATE TABLE stars (
    repo_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (repo_id, user_id)
);
CREATE INDEX activity_repo_id ON activity (repo_id, id);
CREATE INDEX activity_actor_id ON activity (actor_id, id);
CREATE INDEX activity_org_id ON activity (org_id, id);
