-- Commits known to a repository: every sha a ref has pointed at. Statuses may only be
-- created on these (the hosted platform answers 422 "No commit found for SHA" otherwise).
CREATE TABLE commits (
    repo_id BIGINT NOT NULL,
    sha TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (repo_id, sha)
);
INSERT INTO commits (repo_id, sha, created_at) SELECT repo_id, sha, MIN(updated_at) FROM refs GROUP BY repo_id, sha;
