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

-- A match inserted without its place takes its court's venue's. Only then: the trigger's
-- condition is checked before any function is called, so a writer that gives the place
-- pays nothing for it.
CREATE FUNCTION match_requests_place_set() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    SELECT v.latitude, v.longitude INTO NEW.venue_latitude, NEW.venue_longitude
      FROM resources r JOIN venues v ON v.id = r.venue_id
     WHERE r.id = NEW.resource_id;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION match_requests_place_set() IS
    'Trigger: a match inserted without venue_latitude and venue_longitude takes its venue''s.';
CREATE TRIGGER match_requests_place BEFORE INSERT ON match_requests
    FOR EACH ROW WHEN (NEW.venue_latitude IS NULL OR NEW.venue_longitude IS NULL)
    EXECUTE FUNCTION match_requests_place_set();

-- A venue that moves takes its matches with it; so does a court given to another venue.
CREATE FUNCTION match_requests_place_follow() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_TABLE_NAME = 'venues' THEN
        UPDATE match_requests m
           SET venue_latitude = NEW.latitude, venue_longitude = NEW.longitude
          FROM resources r
         WHERE r.venue_id = NEW.id AND m.resource_id = r.id;
    ELSE
        UPDATE match_requests m
           SET venue_latitude = v.latitude, venue_longitude = v.longitude
          FROM venues v
         WHERE v.id = NEW.venue_id AND m.resource_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_requests_place_follow() IS
    'Trigger: the matches of a venue that moves, or of a court given to another venue, take the venue''s place.';
CREATE TRIGGER venues_match_place AFTER UPDATE OF latitude, longitude ON venues
    FOR EACH ROW
    WHEN (OLD.latitude IS DISTINCT FROM NEW.latitude OR OLD.longitude IS DISTINCT FROM NEW.longitude)
    EXECUTE FUNCTION match_requests_place_follow();
CREATE TRIGGER resources_match_place AFTER UPDATE OF venue_id ON resources
    FOR EACH ROW WHEN (OLD.venue_id IS DISTINCT FROM NEW.venue_id)
    EXECUTE FUNCTION match_requests_place_follow();

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

-- (0043, restated) the candidates' distance from the match's own place, and without the
-- venue: whether it sets a booking rule (venue_sets_rules, 0042) is asked by the feed of the
-- matches it shows, not of every match near enough (a signature of its own: dropped first)
DROP FUNCTION open_feed_candidates(public.earth, numeric, text, time, time, text, timestamptz,
                                   timestamptz, numeric, uuid);
CREATE FUNCTION open_feed_candidates(p_centre public.earth, p_radius_km numeric, p_level text,
                                     p_from time, p_to time, p_format text, p_now timestamptz,
                                     p_after_start timestamptz, p_after_km numeric,
                                     p_after_id uuid)
    RETURNS TABLE (m match_requests, km numeric)
    LANGUAGE sql STABLE
AS $$
    SELECT m, d.km
      FROM match_requests m
     CROSS JOIN LATERAL (SELECT round((chord_metres(earth_point(m.venue_latitude,
                                                                m.venue_longitude)
                                                    <-> p_centre) / 1000)::numeric, 3)) d(km)
     WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.starts_at > p_now
       AND m.starts_at >= GREATEST(p_now, p_after_start)
       AND open_feed_keeps(m, p_level, p_from, p_to, p_format)
       AND d.km <= p_radius_km
       AND (p_after_start IS NULL
            OR (m.starts_at, d.km, m.id) > (p_after_start, p_after_km, p_after_id));
$$;
COMMENT ON FUNCTION open_feed_candidates(public.earth, numeric, text, time, time, text,
                                         timestamptz, timestamptz, numeric, uuid) IS
    'The open-match feed''s candidates after a page''s key, with their distance; inlined.';

-- (0043, restated) a day's matches near the caller first: the caller's level and the
-- friendly ones within the radius, read by place and sorted, when there are at most
-- p_near_max (300) of them that day, counted on the two indexes of place; with more, a page
-- is sooner full reading the day in start order, as 0043 did (two cursors, merged). Both
-- give the same pages (tests/69-open-matches.bats reads the feed both ways). Without a
-- date, every open match in start order, read until the page is full. The day's reading by
-- place is fenced by OFFSET 0: the function turns sorts off for the readings in start order,
-- and the planner would otherwise read a whole index in start order rather than sort the
-- few near matches. Each statement names its partial index's condition (a generic plan
-- uses the index only when the statement implies it). A signature of its own (p_near_max,
-- for the tests): dropped first.
DROP FUNCTION match_open_feed(uuid, double precision, double precision, numeric, date, time,
                              time, text, integer, json, timestamptz);
CREATE FUNCTION match_open_feed(p_caller uuid, p_lat double precision, p_lng double precision,
                                p_radius_km numeric, p_date date, p_from time, p_to time,
                                p_format text, p_limit integer, p_after json,
                                p_now timestamptz DEFAULT now(),
                                p_near_max integer DEFAULT 300)
    RETURNS TABLE (doc json, key json)
    LANGUAGE plpgsql STABLE
    -- the plans that read in start order and stop: no full sort, no hash join; and no JIT:
    -- the near matches' one sort carries the cost that turns sorts off, far above the
    -- threshold of compiling the statement (0.8 s a call, to sort a hundred rows)
    SET enable_sort = off SET enable_hashjoin = off SET enable_bitmapscan = off
    SET enable_mergejoin = off SET jit = off
AS $$
DECLARE
    v_near integer;
    v_level text := match_player_level(p_caller);
    v_after_start timestamptz := (p_after->>0)::timestamptz;
    v_after_km numeric := (p_after->>1)::numeric;
    v_after_id uuid := (p_after->>2)::uuid;
    v_centre public.earth := earth_point(p_lat, p_lng);
    v_box public.cube := earth_box(v_centre, p_radius_km * 1000);
    mine refcursor;             -- the day's near matches in the page's order; or a day's
                                -- competitive matches of the caller's level in start order;
                                -- or without a date every open match in start order
    friendly refcursor;         -- a day's friendly matches in start order, when the day
                                -- is read in start order
    a record;
    b record;
    have_a boolean;
    have_b boolean := false;
    c record;
    n integer := 0;
BEGIN
    IF p_date IS NULL THEN
        OPEN mine FOR
            SELECT f.m, f.km
              FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to, p_format,
                                        p_now, v_after_start, v_after_km, v_after_id) f
             ORDER BY (f.m).starts_at, f.km, (f.m).id;
        FETCH mine INTO a;
        have_a := FOUND;
    ELSE
        -- how many of the day's matches are near (up to one more than p_near_max): the
        -- indexes of place only, without the other filters
        SELECT count(*) INTO v_near
          FROM (SELECT FROM match_requests m
                 WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.competitive
                   AND m.booking_date = p_date AND m.skill_level = v_level
                   AND v_box @> earth_point(m.venue_latitude, m.venue_longitude)
                UNION ALL
                SELECT FROM match_requests m
                 WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND NOT m.competitive
                   AND m.booking_date = p_date
                   AND v_box @> earth_point(m.venue_latitude, m.venue_longitude)
                 LIMIT p_near_max + 1) x;
        IF v_near <= p_near_max THEN
            OPEN mine FOR
                SELECT s.m, s.km
                  FROM (SELECT f.m, f.km
                          FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from,
                                                    p_to, p_format, p_now, v_after_start,
                                                    v_after_km, v_after_id) f
                         WHERE (f.m).booking_date = p_date AND (f.m).competitive
                           AND (f.m).skill_level = v_level
                           AND v_box @> earth_point((f.m).venue_latitude, (f.m).venue_longitude)
                        UNION ALL
                        SELECT f.m, f.km
                          FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from,
                                                    p_to, p_format, p_now, v_after_start,
                                                    v_after_km, v_after_id) f
                         WHERE (f.m).booking_date = p_date AND NOT (f.m).competitive
                           AND v_box @> earth_point((f.m).venue_latitude, (f.m).venue_longitude)
                        OFFSET 0) s
                 ORDER BY (s.m).starts_at, s.km, (s.m).id;
            FETCH mine INTO a;
            have_a := FOUND;
        ELSE
            OPEN mine FOR
                SELECT f.m, f.km
                  FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to,
                                            p_format, p_now, v_after_start, v_after_km,
                                            v_after_id) f
                 WHERE (f.m).booking_date = p_date AND (f.m).competitive
                   AND (f.m).skill_level = v_level
                 ORDER BY (f.m).starts_at, f.km, (f.m).id;
            OPEN friendly FOR
                SELECT f.m, f.km
                  FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to,
                                            p_format, p_now, v_after_start, v_after_km,
                                            v_after_id) f
                 WHERE (f.m).booking_date = p_date AND NOT (f.m).competitive
                 ORDER BY (f.m).starts_at, f.km, (f.m).id;
            FETCH mine INTO a;
            have_a := FOUND;
            FETCH friendly INTO b;
            have_b := FOUND;
        END IF;
    END IF;
    -- the two readings merged in the page's order (start, distance, id; ids are unique);
    -- b holds a row only when the day is read in start order
    WHILE have_a OR have_b LOOP
        IF NOT have_b THEN
            c := a;
            FETCH mine INTO a;
            have_a := FOUND;
        ELSIF NOT have_a OR ((b.m).starts_at, b.km, (b.m).id) < ((a.m).starts_at, a.km, (a.m).id) THEN
            c := b;
            FETCH friendly INTO b;
            have_b := FOUND;
        ELSE
            c := a;
            FETCH mine INTO a;
            have_a := FOUND;
        END IF;
        CONTINUE WHEN match_player_busy(c.m, p_caller)
                   OR ((SELECT venue_sets_rules(v)
                          FROM resources r JOIN venues v ON v.id = r.venue_id
                         WHERE r.id = (c.m).resource_id)
                       AND booking_rules_refusal((c.m).resource_id, p_caller, (c.m).starts_at,
                                                 p_now) IS NOT NULL);
        doc := (left(json_match_request(c.m, false)::text, -1)
                || format(', "distanceKm" : %s, "freePlaces" : {"TEAM_A" : %s, "TEAM_B" : %s}}',
                          c.km, (c.m).team_size - (c.m).team_a_count - (c.m).offers_a,
                          (c.m).team_size - (c.m).team_b_count - (c.m).offers_b))::json;
        key := json_build_array(api_ts((c.m).starts_at), c.km, (c.m).id);
        RETURN NEXT;
        n := n + 1;
        EXIT WHEN n >= p_limit;
    END LOOP;
    CLOSE mine;
    IF friendly IS NOT NULL THEN
        CLOSE friendly;
    END IF;
END $$;
COMMENT ON FUNCTION match_open_feed(uuid, double precision, double precision, numeric, date,
                                    time, time, text, integer, json, timestamptz, integer) IS
    'The open matches near a point a player could join now, a page at a time.';
