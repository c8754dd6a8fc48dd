-- 0029_open_feed_by_day: the open-match feed of a day reads that day's matches only.
--
-- The feed (0024) read the open matches in start order from match_requests_starts_idx, and
-- for a date from a day before it to a day after it in UTC (a venue's local day is at most
-- 14 hours off UTC either way), keeping the date's own by their booking_date: on the bench's
-- CITY data (2,900 open matches a day) a page of a day's matches within 10 km read 4,966
-- entries of the index and their rows, most of them of the day before, to find 512 of the
-- caller's level to measure. A day's open public matches now have an index of their own, in
-- start order within the day: the same page reads 2,018 for 492. Without a date the feed
-- reads in start order as before. The two readings are two statements, each planned once
-- for the session (one statement would need a new plan at every call to tell them apart,
-- 1.3 ms); what they keep of a match whatever its distance is written once, in
-- open_feed_keeps, which the planner applies to the index's rows before their venues are
-- read.

CREATE INDEX match_requests_open_day_idx ON match_requests (booking_date, starts_at)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC';
COMMENT ON INDEX match_requests_open_day_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC matches in start order.';
