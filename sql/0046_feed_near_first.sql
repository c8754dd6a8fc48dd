-- 0046_feed_near_first: a day's open-match feed reads the matches near the caller first,
-- from indexes of the place each match is played at.
--
-- The feed of a day (0043) read the day's matches of the caller's level, and the friendly
-- ones, in start order over the whole city, and read the court and the venue of each to know
-- how far it was. On the bench's CITY data (55 x 42 km, a feed of 10 km) the first page read
-- 484 matches, and their courts and venues, to keep 65 near enough; near the city's edge, or
-- outside it, a page read the whole day. What a page cost grew with the city, not with what
-- was near the caller.
--
-- A match now carries where it is played: venue_latitude and venue_longitude, its venue's,
-- set when it is inserted (a trigger, for a writer that does not give them: match_hold, and
-- the tests' fixtures; one indexed read, within the noise of an insert, 0.45-0.60 ms with or
-- without it) and kept when the venue moves or the court changes venue (two triggers). The
-- distance is taken from the match itself. A day's open public matches have two GiST
-- indexes by day, level (the competitive ones) and place, and the feed of a day counts on
-- them the matches within the radius that day, the caller's level and the friendly ones (a
-- count of indexed rows, stopped at p_near_max + 1). When there are at most p_near_max
-- (300), it reads them (earth_box, then the exact distance, as every radius of the schema
-- is read) and sorts them. When there are more, most of the day is near and a page is sooner
-- full in start order: it reads the day as 0043 did. Without a date the feed reads in start
-- order as before (match_requests_starts_idx), stopping when the page is full.
--
-- Measured on CITY with a quarter of its open matches made friendly (pgbench, one client,
-- prepared, the first page of a day for one player, two runs each, alternating with the
-- feed of 0043 on a copy of the same database), in ms:
--   radius 10 km at the centre (the bench's feed): 5.4-6.1 before, 2.7-2.9 now;
--   3 km: 9.8 before, 1.3-1.4; 5 km at the city's edge: 8.4-8.8, 0.8; 10 km, 60 km from
--   the city (nothing near): 7.6-9.5, 0.15;
--   25 km and 50 km (more than 300 near, read in start order): 2.1-3.9 before, 2.5-4.7 now
--   (the count, and the noise).
-- The pages are the same: 288 feeds (four players, two centres, three radii, three days and
-- none, with and without times and a format) walked up to four pages each, 10,508 items,
-- byte for byte.

ALTER TABLE match_requests ADD COLUMN venue_latitude double precision,
                           ADD COLUMN venue_longitude double precision;
COMMENT ON COLUMN match_requests.venue_latitude IS
    'Where the match is played: its venue''s latitude, kept by triggers (0046).';
COMMENT ON COLUMN match_requests.venue_longitude IS
    'Where the match is played: its venue''s longitude, kept by triggers (0046).';
UPDATE match_requests m SET venue_latitude = v.latitude, venue_longitude = v.longitude
  FROM resources r JOIN venues v ON v.id = r.venue_id
 WHERE r.id = m.resource_id;
ALTER TABLE match_requests ALTER COLUMN venue_latitude SET NOT NULL,
                           ALTER COLUMN venue_longitude SET NOT NULL;

CREATE INDEX match_requests_open_level_place_idx ON match_requests
    USING gist (booking_date, skill_level, earth_point(venue_latitude, venue_longitude))
    WHERE status = 'OPEN' AND visibility = 'PUBLIC' AND competitive;
COMMENT ON INDEX match_requests_open_level_place_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC, competitive matches by level and place.';
CREATE INDEX match_requests_open_friendly_place_idx ON match_requests
    USING gist (booking_date, earth_point(venue_latitude, venue_longitude))
    WHERE status = 'OPEN' AND visibility = 'PUBLIC' AND NOT competitive;
COMMENT ON INDEX match_requests_open_friendly_place_idx IS
    'The open-match feed of a day: its OPEN, PUBLIC friendly matches by place.';
