-- Foundation schema (SQLite). Keep in step with postgres/0001_foundation.sql.
-- Timestamps are epoch seconds; JSON is stored as TEXT; booleans are INTEGER 0/1.

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    login TEXT NOT NULL,
    login_lower TEXT NOT NULL UNIQUE,
    name TEXT,
    email TEXT,
    site_admin INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE org_members (
    org_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user_id ON org_members (user_id);

CREATE TABLE enterprises (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL,
    slug_lower TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE enterprise_members (
    enterprise_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (enterprise_id, user_id)
);
CREATE INDEX enterprise_members_user_id ON enterprise_members (user_id);

CREATE TABLE enterprise_orgs (
    enterprise_id BIGINT NOT NULL,
    org_id BIGINT NOT NULL UNIQUE,
    PRIMARY KEY (enterprise_id, org_id)
);

CREATE TABLE teams (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    slug TEXT NOT NULL,
    description TEXT,
    privacy TEXT NOT NULL DEFAULT 'closed',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (org_id, slug)
);

CREATE TABLE team_members (
    team_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);

CREATE TABLE repos (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    name_lower TEXT NOT NULL,
    private INTEGER NOT NULL,
    description TEXT,
    default_branch TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    pushed_at BIGINT,
    UNIQUE (owner_id, name_lower)
);

CREATE TABLE repo_redirects (
    owner_id BIGINT NOT NULL,
    name_lower TEXT NOT NULL,
    repo_id BIGINT NOT NULL,
    PRIMARY KEY (owner_id, name_lower)
);

CREATE TABLE refs (
    repo_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    sha TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (repo_id, name)
);

CREATE TABLE apps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    owner_id BIGINT NOT NULL,
    client_id TEXT NOT NULL UNIQUE,
    secret_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE installations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (app_id, account_id)
);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    last_eight TEXT NOT NULL,
    user_id BIGINT,
    app_id BIGINT,
    installation_id BIGINT,
    repo_id BIGINT,
    scopes TEXT NOT NULL DEFAULT '',
    permissions TEXT NOT NULL DEFAULT '{}',
    resource_owner_id BIGINT,
    repository_selection TEXT NOT NULL DEFAULT 'all',
    repository_ids TEXT NOT NULL DEFAULT '[]',
    note TEXT,
    note_url TEXT,
    expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX tokens_app_id_user_id ON tokens (app_id, user_id);

CREATE TABLE statuses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    sha TEXT NOT NULL,
    context TEXT NOT NULL,
    context_lower TEXT NOT NULL,
    state TEXT NOT NULL,
    description TEXT,
    target_url TEXT,
    creator_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX statuses_repo_sha_id ON statuses (repo_id, sha, id);
CREATE INDEX statuses_repo_sha_context ON statuses (repo_id, sha, context_lower);

CREATE TABLE status_latest (
    repo_id BIGINT NOT NULL,
    sha TEXT NOT NULL,
    context_lower TEXT NOT NULL,
    status_id BIGINT NOT NULL,
    PRIMARY KEY (repo_id, sha, context_lower)
);

CREATE TABLE activity (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    actor_id BIGINT,
    repo_id BIGINT,
    org_id BIGINT,
    public INTEGER NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
