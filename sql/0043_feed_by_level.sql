-- 0043_feed_by_level: a day's open-match feed reads the matches of the caller's level and the
-- friendly ones, not every match of the day: an index of a day's competitive matches by level
-- and one of its friendly matches, each in start order, which the feed reads in the page's
-- order and merges. The index of all a day's open matches has no reader left and goes.
-- The feed: sql/areas/70_open_matches.sql (match_open_feed).

CREATE INDEX match_requests_open_level_idx ON match_requests (booking_date, skill_level, starts_at)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC' AND competitive;
COMMENT ON INDEX match_requests_open_level_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC, competitive matches by level, in start order.';
CREATE INDEX match_requests_open_friendly_idx ON match_requests (booking_date, starts_at)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC' AND NOT competitive;
COMMENT ON INDEX match_requests_open_friendly_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC friendly matches, in start order.';
DROP INDEX match_requests_open_day_idx;
