-- Workflow runs and deployment review (document 3). Keep in step with postgres/0007_runs.sql.

CREATE TABLE workflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    -- The last run_number given (run numbers count per workflow).
    last_run_number BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (repo_id, path)
);

-- One row per run, holding its latest attempt; earlier attempts are in run_attempts. A run's check
-- suite id is derived from its id (one suite per run, kept by re-runs).
CREATE TABLE workflow_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    workflow_id BIGINT NOT NULL,
    run_number BIGINT NOT NULL,
    run_attempt BIGINT NOT NULL,
    event TEXT NOT NULL,
    head_branch TEXT,
    head_sha TEXT NOT NULL,
    -- JSON: {message, timestamp, author {name, email}, committer {name, email}}
    head_commit TEXT NOT NULL,
    display_title TEXT NOT NULL,
    -- JSON array of {number, head_ref, head_sha, base_ref, base_sha}
    pull_requests TEXT NOT NULL,
    actor_id BIGINT NOT NULL,
    triggering_actor_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    conclusion TEXT,
    -- A fork pull request's run waiting for approval (conclusion action_required).
    needs_approval INTEGER NOT NULL,
    queue_seconds BIGINT NOT NULL,
    -- When the queued attempt starts.
    start_at BIGINT,
    run_started_at BIGINT,
    completed_at BIGINT,
    -- The time of the next scheduled transition (none while completed or waiting for a review).
    due_at BIGINT,
    debug_logging INTEGER NOT NULL,
    logs_deleted INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX workflow_runs_repo ON workflow_runs (repo_id, id);
CREATE INDEX workflow_runs_workflow ON workflow_runs (workflow_id, id);
CREATE INDEX workflow_runs_branch_status ON workflow_runs (repo_id, head_branch, status, id);
CREATE INDEX workflow_runs_branch_conclusion ON workflow_runs (repo_id, head_branch, conclusion, id);
CREATE INDEX workflow_runs_status ON workflow_runs (repo_id, status, id);
CREATE INDEX workflow_runs_conclusion ON workflow_runs (repo_id, conclusion, id);
CREATE INDEX workflow_runs_actor ON workflow_runs (repo_id, actor_id, id);
CREATE INDEX workflow_runs_event ON workflow_runs (repo_id, event, id);
CREATE INDEX workflow_runs_sha ON workflow_runs (repo_id, head_sha, id);
CREATE INDEX workflow_runs_created ON workflow_runs (repo_id, created_at);
CREATE INDEX workflow_runs_due ON workflow_runs (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX workflow_runs_repo_due ON workflow_runs (repo_id, due_at) WHERE due_at IS NOT NULL;

CREATE TABLE run_attempts (
    run_id BIGINT NOT NULL,
    attempt BIGINT NOT NULL,
    status TEXT NOT NULL,
    conclusion TEXT,
    triggering_actor_id BIGINT NOT NULL,
    run_started_at BIGINT,
    completed_at BIGINT,
    debug_logging INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, attempt)
);

CREATE TABLE run_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id BIGINT NOT NULL,
    attempt BIGINT NOT NULL,
    position BIGINT NOT NULL,
    name TEXT NOT NULL,
    -- JSON arrays: names of the jobs needed; planned conclusion per attempt (the last repeats); step names.
    needs TEXT NOT NULL,
    outcomes TEXT NOT NULL,
    steps TEXT NOT NULL,
    runner_os TEXT NOT NULL,
    duration BIGINT NOT NULL,
    log TEXT NOT NULL,
    environment_id BIGINT,
    -- A job a re-run did not repeat: the job of the earlier attempt whose result it carries.
    carried_from BIGINT,
    status TEXT NOT NULL,
    conclusion TEXT,
    started_at BIGINT,
    completed_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX run_jobs_run ON run_jobs (run_id, attempt, position);

CREATE TABLE environments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    -- Minutes a job waits after reaching the environment.
    wait_timer BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (repo_id, name)
);

-- Required reviewers: kind User (an account) or Team.
CREATE TABLE environment_reviewers (
    environment_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    reviewer_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    PRIMARY KEY (environment_id, kind, reviewer_id)
);

-- An environment a run's attempt waits for (a pending deployment while `waiting`).
CREATE TABLE run_gates (
    run_id BIGINT NOT NULL,
    attempt BIGINT NOT NULL,
    environment_id BIGINT NOT NULL,
    -- waiting | approved | rejected | cancelled
    state TEXT NOT NULL,
    wait_timer_started_at BIGINT NOT NULL,
    -- Once approved: when the gated jobs may start (the wait timer's end).
    ready_at BIGINT,
    PRIMARY KEY (run_id, attempt, environment_id)
);

CREATE TABLE run_reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    comment TEXT NOT NULL,
    -- JSON array of environment ids.
    environment_ids TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX run_reviews_run ON run_reviews (run_id, id);

CREATE TABLE deployments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    run_id BIGINT,
    environment TEXT NOT NULL,
    sha TEXT NOT NULL,
    ref TEXT NOT NULL,
    creator_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX deployments_repo ON deployments (repo_id, id);
