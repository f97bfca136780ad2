-- API usage insights (PostgreSQL). Keep in step with sqlite/0012_insights.sql.

-- Requests attributed to an organization, aggregated per second: one row per (second, actor,
-- user, subject, method, route, status) of a flush. A key may appear in several rows (a second split
-- over two flushes); every query sums, so that is harmless. Names are copied at flush time.
CREATE TABLE insights_requests (
    org_id BIGINT NOT NULL,
    at BIGINT NOT NULL,
    actor_type TEXT,
    actor_id BIGINT,
    actor_name TEXT,
    integration_id BIGINT,
    oauth_application_id BIGINT,
    user_id BIGINT,
    subject_type TEXT,
    subject_id BIGINT,
    subject_name TEXT,
    http_method TEXT NOT NULL,
    api_route TEXT NOT NULL,
    status BIGINT NOT NULL,
    total BIGINT NOT NULL,
    rate_limited BIGINT NOT NULL
);
CREATE INDEX insights_requests_org_at ON insights_requests (org_id, at);
