-- How many statuses each (repo, sha, context) holds, kept with its latest: a new status is
-- counted and checked against the maximum in the same statement that names it the latest.
ALTER TABLE status_latest ADD COLUMN status_count BIGINT NOT NULL DEFAULT 0;
UPDATE status_latest SET status_count = (
    SELECT COUNT(*) FROM statuses s
    WHERE s.repo_id = status_latest.repo_id AND s.sha = status_latest.sha AND s.context_lower = status_latest.context_lower
);
