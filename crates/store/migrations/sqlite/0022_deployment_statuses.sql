-- The statuses of the deployments approvals create, recorded as their job moves (queued or
-- waiting at approval, in_progress when the job starts, success or failure when it ends), so
-- each `deployment_status` webhook names a status of its own. Keep in step with the other
-- dialect's 0022_deployment_statuses.sql.
CREATE TABLE deployment_statuses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    deployment_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    creator_id BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX deployment_statuses_deployment ON deployment_statuses (deployment_id, id);
CREATE INDEX deployments_run ON deployments (run_id, environment, id);
