-- A job's planned duration, kept apart from `duration` (which the control plane's "advance"
-- shortens so the job finishes at once): a re-run plans its jobs from it, so a re-run job takes
-- the time the workflow planned. Keep in step with the other dialect's 0023_planned_duration.sql.
ALTER TABLE run_jobs ADD COLUMN planned_duration BIGINT NOT NULL DEFAULT 0;
UPDATE run_jobs SET planned_duration = duration;
