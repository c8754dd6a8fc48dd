-- 0043_feed_by_level: a day's open-match feed reads the matches of the caller's level and
-- the friendly ones, not every match of the day.
--
-- The feed of a day (0029) read the day's OPEN, PUBLIC matches in start order and kept those
-- of the caller's level when competitive: on the bench's CITY data, where every open match
-- is competitive and a quarter of them of one level, the first page of 21 read 904 index
-- entries and their rows to keep 223 to measure (6.1 ms). A day's competitive matches now
-- have an index by level, and its friendly matches one of their own, each in start order;
-- the feed reads the two in the page's order and merges them, so a page reads the caller's
-- level and the friendly matches only. (One statement over the two would be planned as an
-- append of the two, sorted whole: PostgreSQL does not merge the ordered readings of a
-- UNION ALL whose branches have conditions of their own.) The index of 0029 has no reader
-- left and goes. Without a date the feed reads in start order as before. The two readings
-- of a day are two statements, each with its index's condition written out: a generic plan
-- uses a partial index only when the statement's own conditions imply the index's. What the
-- readings share (the joins, the distance, the filters, the page's key) is written once, in
-- open_feed_candidates, a query the planner inlines into each.
-- Measured there (100 first pages of a day for one player, alternating runs, medians): 4.8 ms
-- a page before, 4.1 ms with the rule test of 0042 alone, 3.0 ms with both; the pages are
-- the same, day or no day, with a quarter of the day's matches made friendly too.

CREATE INDEX match_requests_open_level_idx ON match_requests (booking_date, skill_level, starts_at)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC' AND competitive;
COMMENT ON INDEX match_requests_open_level_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC, competitive matches by level, in start order.';
CREATE INDEX match_requests_open_friendly_idx ON match_requests (booking_date, starts_at)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC' AND NOT competitive;
COMMENT ON INDEX match_requests_open_friendly_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC friendly matches, in start order.';
DROP INDEX match_requests_open_day_idx;
