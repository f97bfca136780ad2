-- Source imports (document 3). Keep in step with postgres/0011_imports.sql.

-- One import per repository. The worker owns the progress columns; `workdir` names the mirror
-- directory of this attempt (a restart or cancel changes or removes it, so a worker finishing an
-- older attempt writes nothing). `step_done`: the work of the current status is done and the
-- import moves on once the platform clock reaches `due_at`. `lease_until` (wall-clock seconds)
-- marks a node working on it. Credentials are encrypted under the server key.
CREATE TABLE imports (
    repo_id BIGINT PRIMARY KEY,
    vcs TEXT,
    vcs_url TEXT NOT NULL,
    tfvc_project TEXT,
    credentials_enc TEXT,
    use_lfs TEXT NOT NULL,
    status TEXT NOT NULL,
    failed_step TEXT,
    error_message TEXT,
    commit_count BIGINT,
    import_percent BIGINT,
    push_percent BIGINT,
    authors_count BIGINT NOT NULL,
    large_files_size BIGINT NOT NULL,
    large_files_count BIGINT NOT NULL,
    step_done INTEGER NOT NULL,
    due_at BIGINT NOT NULL,
    lease_until BIGINT,
    workdir TEXT NOT NULL,
    actor_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Commit authors found in the imported history; `email`/`name` are the mapping.
CREATE TABLE import_authors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    remote_id TEXT NOT NULL,
    remote_name TEXT NOT NULL,
    email TEXT NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (repo_id, remote_id)
);

-- Files above 100 MB found in the imported history.
CREATE TABLE import_large_files (
    repo_id BIGINT NOT NULL,
    oid TEXT NOT NULL,
    path TEXT NOT NULL,
    ref_name TEXT NOT NULL,
    size BIGINT NOT NULL,
    PRIMARY KEY (repo_id, oid, path)
);
