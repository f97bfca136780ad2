-- Rule suites: every ref change rulesets were evaluated for (a push, a control-plane ref push),
-- with the outcome of each rule. Keep in step with postgres/0019_rule_suites.sql.
-- `owner_id`: the repository's owner, for the organization's list; `repository_name` and
-- `actor_name` as they were then. `result`: pass, fail or bypass over active rulesets;
-- `evaluation_result`: the same over active and evaluate ones. `evaluations`: JSON array of
-- {ruleset_id, ruleset_name, source_type, source, enforcement, rule_type, result, details}.
CREATE TABLE rule_suites (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    owner_id BIGINT NOT NULL,
    repository_name TEXT NOT NULL,
    actor_id BIGINT,
    actor_name TEXT,
    ref TEXT NOT NULL,
    before_sha TEXT NOT NULL,
    after_sha TEXT NOT NULL,
    pushed_at BIGINT NOT NULL,
    result TEXT NOT NULL,
    evaluation_result TEXT NOT NULL,
    evaluations TEXT NOT NULL
);
CREATE INDEX rule_suites_repo ON rule_suites (repo_id, pushed_at);
CREATE INDEX rule_suites_owner ON rule_suites (owner_id, pushed_at);
