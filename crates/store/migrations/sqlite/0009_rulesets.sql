-- Rulesets of repositories and organizations, and every version of each. Keep in step with the
-- other dialect's 0009_rulesets.sql.

-- `repo_id` is set for repository rulesets and NULL for organization rulesets (`owner_id` is then
-- the organization). `definition` is the normalized ruleset as JSON (name, target, enforcement,
-- bypass_actors, conditions, rules); name, target and enforcement are columns for filtering.
CREATE TABLE rulesets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id BIGINT NOT NULL,
    repo_id BIGINT,
    name TEXT NOT NULL,
    target TEXT NOT NULL,
    enforcement TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX rulesets_repo_id ON rulesets (repo_id, id);
CREATE INDEX rulesets_owner_id ON rulesets (owner_id, id);

-- One row per create or update: who made it and the definition it left.
CREATE TABLE ruleset_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ruleset_id BIGINT NOT NULL,
    actor_id BIGINT,
    actor_type TEXT,
    definition TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX ruleset_versions_ruleset_id ON ruleset_versions (ruleset_id, id);
