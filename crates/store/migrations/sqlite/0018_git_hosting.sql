-- Git hosting: every repository is a bare git repository. Keep in step with postgres/0018_git_hosting.sql.

-- This database's directory under the data directory (`git/<namespace>/<repo id>.git`): drawn
-- once by the first node to start, so databases sharing a data directory never share repositories.
CREATE TABLE git_storage (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL
);

-- What a commit says of itself, read from git when a push records it (rows from before git
-- hosting, and shas the control plane was given without a commit behind them, have none).
-- `parents`: space-separated shas; dates in seconds, offsets in minutes east of UTC.
ALTER TABLE commits ADD COLUMN tree TEXT;
ALTER TABLE commits ADD COLUMN parents TEXT;
ALTER TABLE commits ADD COLUMN message TEXT;
ALTER TABLE commits ADD COLUMN author_name TEXT;
ALTER TABLE commits ADD COLUMN author_email TEXT;
ALTER TABLE commits ADD COLUMN author_date BIGINT;
ALTER TABLE commits ADD COLUMN author_offset INTEGER;
ALTER TABLE commits ADD COLUMN committer_name TEXT;
ALTER TABLE commits ADD COLUMN committer_email TEXT;
ALTER TABLE commits ADD COLUMN committer_date BIGINT;
ALTER TABLE commits ADD COLUMN committer_offset INTEGER;

-- A ref change about to happen in git (a push accepted by the server, a control-plane or API
-- ref write): recorded before git moves the refs and removed in the transaction that records
-- what moved, so a crash in between is reconciled with git at the next start (or the next push
-- of the repository). `source`: what asked (`push`, `control`, `create`, `import`), for the record;
-- `updates`: JSON [{name, old, new}], the values git is expected to move from and to.
CREATE TABLE push_intents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id BIGINT NOT NULL,
    pusher_id BIGINT,
    source TEXT NOT NULL,
    updates TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX push_intents_repo ON push_intents (repo_id);
