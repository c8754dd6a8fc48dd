-- 0046_feed_near_first: a match carries where it is played (venue_latitude, venue_longitude:
-- its venue's, filled in for the rows already there), and a day's open public matches get two
-- GiST indexes by day, level (the competitive ones) and place, so that the feed of a day
-- reads the matches near the caller first, not every match of the city in start order.
-- The rules over these columns (the triggers that keep them, match_open_feed):
-- sql/areas/70_open_matches.sql.

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
