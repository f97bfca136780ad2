-- Enterprise teams, development-environment secrets, private registries, assistant content
-- exclusion (issue 6, parts 1-4). Keep in step with postgres/0008_orgsec.sql.

-- Enterprise teams belong to an enterprise, not an organization: `teams.org_id` is required and
-- part of the organization's slug key, and enterprise team ids are their own space in paths.
CREATE TABLE enterprise_teams (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    enterprise_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    -- `ent:` + the slugified name, lower case.
    slug TEXT NOT NULL,
    description TEXT,
    group_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (enterprise_id, slug)
);

CREATE TABLE enterprise_team_members (
    team_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX enterprise_team_members_user_id ON enterprise_team_members (user_id);

-- X25519 key pairs for sealed boxes, one per owner: scope `repo` (development-environment
-- secrets) or `org` (private registries). The secret key is encrypted under the server key.
CREATE TABLE box_keys (
    scope TEXT NOT NULL,
    owner_id BIGINT NOT NULL,
    key_id TEXT NOT NULL,
    public_key TEXT NOT NULL,
    secret_key_enc TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (scope, owner_id)
);

CREATE TABLE devenv_secrets (
    repo_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    -- The opened value, encrypted under the server key (never returned).
    value_enc TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (repo_id, name)
);

CREATE TABLE private_registries (
    org_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    registry_type TEXT NOT NULL,
    auth_type TEXT NOT NULL,
    url TEXT NOT NULL,
    username TEXT,
    replaces_base INTEGER NOT NULL,
    visibility TEXT NOT NULL,
    -- JSON array of repository ids (visibility `selected`).
    selected_repository_ids TEXT NOT NULL,
    -- JSON object of the OIDC fields of the auth type.
    oidc TEXT NOT NULL,
    value_enc TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, name)
);

CREATE TABLE content_exclusions (
    org_id BIGINT PRIMARY KEY,
    -- The rules object as JSON text, keys in order.
    rules TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
