-- DeleteEvent (a deleted branch or tag) joins the feed kinds: the partial indexes are made again
-- with the list `domain::feeds::FEED_KINDS` now holds.
DROP INDEX activity_feed_public;
DROP INDEX activity_feed_repo;
DROP INDEX activity_feed_actor;
DROP INDEX activity_feed_actor_public;
DROP INDEX activity_feed_org;
DROP INDEX activity_feed_org_public;
CREATE INDEX activity_feed_public ON activity (id) WHERE public = TRUE AND kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent');
CREATE INDEX activity_feed_repo ON activity (repo_id, id) WHERE kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent');
CREATE INDEX activity_feed_actor ON activity (actor_id, id) WHERE kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent');
CREATE INDEX activity_feed_actor_public ON activity (actor_id, id) WHERE public = TRUE AND kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent');
CREATE INDEX activity_feed_org ON activity (org_id, id) WHERE kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent');
CREATE INDEX activity_feed_org_public ON activity (org_id, id) WHERE public = TRUE AND kind IN ('WatchEvent', 'PushEvent', 'CreateEvent', 'PublicEvent', 'DeleteEvent');
