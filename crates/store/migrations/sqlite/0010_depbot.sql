-- Security managers and dependency alerts (SQLite). Keep in step with postgres/0010_depbot.sql.

-- Teams holding the security manager role of their organization.
CREATE TABLE security_manager_teams (
    org_id BIGINT NOT NULL,
    team_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, team_id)
);

-- Advisories, shared by the alerts they cause. `body` is the advisory JSON as served (without
-- the fields the list filters read, which are columns of the alerts).
CREATE TABLE depbot_advisories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    advisory_id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,
    withdrawn_at BIGINT,
    created_at BIGINT NOT NULL
);

-- One alert per repository and number. The filter columns are copied from the advisory and the
-- vulnerability so every list filters and orders on this table alone. `epss_percentage` is -1
-- when the advisory has no EPSS score (a NOT NULL sort key keeps keyset pagination simple).
CREATE TABLE depbot_alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    org_id BIGINT,
    number BIGINT NOT NULL,
    advisory_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    ecosystem TEXT NOT NULL,
    package TEXT NOT NULL,
    manifest_path TEXT NOT NULL,
    scope TEXT,
    relationship TEXT,
    severity TEXT NOT NULL,
    classification TEXT NOT NULL,
    epss_percentage REAL NOT NULL,
    has_patch INTEGER NOT NULL,
    vulnerability TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    dismissed_at BIGINT,
    dismissed_by BIGINT,
    dismissed_reason TEXT,
    dismissed_comment TEXT,
    fixed_at BIGINT,
    auto_dismissed_at BIGINT,
    agent_assignment TEXT,
    UNIQUE (repo_id, number)
);
-- Keyset orders of the lists: (key, id) per sort, scanned in order while the filters apply, so
-- a page reads about as many rows as it skips. No index leads with org_id: a planner using one
-- for `org_id IN (…)` would sort every alert of the organizations for each page.
CREATE INDEX depbot_alerts_created ON depbot_alerts (created_at, id);
CREATE INDEX depbot_alerts_updated ON depbot_alerts (updated_at, id);
CREATE INDEX depbot_alerts_epss ON depbot_alerts (epss_percentage, id);
-- The repository list (one repository: an equality, so the order comes from the index).
CREATE INDEX depbot_alerts_repo_created ON depbot_alerts (repo_id, created_at, id);

CREATE TABLE depbot_alert_assignees (
    alert_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    PRIMARY KEY (alert_id, user_id)
);
CREATE INDEX depbot_alert_assignees_user ON depbot_alert_assignees (user_id);
