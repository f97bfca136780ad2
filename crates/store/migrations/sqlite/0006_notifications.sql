-- Notifications: watchers of repositories, per-user notification threads, and what the
-- notifications consumer needs to remember (who pushed a commit, for `author` threads).
CREATE TABLE watchers (
    repo_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (repo_id, user_id)
);
CREATE INDEX watchers_user_id ON watchers (user_id);

-- One thread per (user, repository, subject). `subject_key` identifies the subject (its type and
-- URL, or its title when it has no URL). `sub_state`: default, subscribed, ignored, unsubscribed.
CREATE TABLE notification_threads (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL,
    repo_id BIGINT NOT NULL,
    subject_key TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    subject_title TEXT NOT NULL,
    subject_url TEXT,
    latest_comment_url TEXT,
    reason TEXT NOT NULL,
    unread INTEGER NOT NULL,
    done INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    last_read_at BIGINT,
    sub_state TEXT NOT NULL,
    sub_created_at BIGINT,
    UNIQUE (user_id, repo_id, subject_key)
);
CREATE INDEX notification_threads_user ON notification_threads (user_id, updated_at, id);

-- Per user: when anything about their notifications last changed (`Last-Modified`).
CREATE TABLE notification_users (
    user_id BIGINT PRIMARY KEY,
    modified_at BIGINT NOT NULL
);

-- Who pushed a commit (from PushEvent activity): the `author` of that commit's thread.
CREATE TABLE notification_pushers (
    repo_id BIGINT NOT NULL,
    sha TEXT NOT NULL,
    user_id BIGINT NOT NULL,
    PRIMARY KEY (repo_id, sha)
);
