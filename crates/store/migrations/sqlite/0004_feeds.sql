-- Event feeds: one partial index per timeline, holding only the kinds that appear in feeds
-- (the list repeats `domain::feeds::FEED_KINDS` verbatim, as the queries do), so a timeline is
-- the first 300 entries of one index range whatever else the activity table holds.
CREATE INDEX activity_feed_public ON activity (id) WHERE public = TRUE AND kind IN ('WatchEvent', 'PushEvent', 'CreateEvent');
CREATE INDEX activity_feed_repo ON activity (repo_id, id) WHERE kind IN ('WatchEvent', 'PushEvent', 'CreateEvent');
CREATE INDEX activity_feed_actor ON activity (actor_id, id) WHERE kind IN ('WatchEvent', 'PushEvent', 'CreateEvent');
CREATE INDEX activity_feed_actor_public ON activity (actor_id, id) WHERE public = TRUE AND kind IN ('WatchEvent', 'PushEvent', 'CreateEvent');
CREATE INDEX activity_feed_org ON activity (org_id, id) WHERE kind IN ('WatchEvent', 'PushEvent', 'CreateEvent');
CREATE INDEX activity_feed_org_public ON activity (org_id, id) WHERE public = TRUE AND kind IN ('WatchEvent', 'PushEvent', 'CreateEvent');
