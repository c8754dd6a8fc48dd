-- 0029_open_feed_by_day: an index of a day's OPEN, PUBLIC matches in start order, so that the
-- open-match feed of a day reads that day's matches only, not every open match from a day
-- before it to a day after it in UTC. sql/0043_feed_by_level.sql replaces it with an index
-- by level and one of the friendly matches.
-- The feed: sql/areas/70_open_matches.sql (match_open_feed).

CREATE INDEX match_requests_open_day_idx ON match_requests (booking_date, starts_at)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC';
COMMENT ON INDEX match_requests_open_day_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC matches in start order.';
