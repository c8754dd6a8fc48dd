-- 0054_feed_nearest_first: the open-match feed orders a start time's matches by their exact
-- distance (the chord the indexes of place order by), so that a day read a start time at a
-- time reads each start time nearest first and stops when the page is full. The feed's
-- candidates carry that distance: their function's result changes, so the old one goes and
-- sql/areas/70_open_matches.sql creates the new one, with the index it reads
-- (match_requests_open_start_place_idx, made there: it is on earth_point, of an area).

DROP FUNCTION IF EXISTS open_feed_candidates(public.earth, numeric, text, time, time, text,
                                             timestamptz, timestamptz, numeric, uuid);
