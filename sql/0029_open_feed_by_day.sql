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

-- Whether the feed keeps match m for a caller of level p_level and the filters p_from, p_to
-- and p_format, whatever its distance: a place free, of the caller's level when
-- competitive. An expression the planner inlines.
CREATE FUNCTION open_feed_keeps(m match_requests, p_level text, p_from time, p_to time,
                                p_format text)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT (p_from IS NULL OR m.start_time >= p_from)
       AND (p_to IS NULL OR m.start_time <= p_to)
       AND (p_format IS NULL OR m.format = p_format)
       AND match_places_free(m) > 0
       AND (NOT m.competitive OR m.skill_level = p_level);
$$;
COMMENT ON FUNCTION open_feed_keeps(match_requests, text, time, time, text) IS
    'The open-match feed''s filters of one match but its distance and the page''s key.';

-- (0024, restated) The open-match feed: the same matches in the same order, a day's read
-- from match_requests_open_day_idx.
CREATE OR REPLACE FUNCTION match_open_feed(p_caller uuid, p_lat double precision,
                                           p_lng double precision, p_radius_km numeric,
                                           p_date date, p_from time, p_to time, p_format text,
                                           p_limit integer, p_after json,
                                           p_now timestamptz DEFAULT now())
    RETURNS TABLE (doc json, key json)
    LANGUAGE plpgsql STABLE
    -- the plans that read in start order and stop: no full sort, no hash join
    SET enable_sort = off SET enable_hashjoin = off SET enable_bitmapscan = off
    SET enable_mergejoin = off
AS $$
DECLARE
    v_level text := match_player_level(p_caller);
    v_after_start timestamptz := (p_after->>0)::timestamptz;
    v_from timestamptz := GREATEST(p_now, v_after_start);
    v_after_km numeric := (p_after->>1)::numeric;
    v_after_id uuid := (p_after->>2)::uuid;
    v_centre public.earth := earth_point(p_lat, p_lng);
    matches refcursor;
    c record;
    n integer := 0;
BEGIN
    IF p_date IS NULL THEN
        OPEN matches FOR
            SELECT m, d.km
              FROM match_requests m
              JOIN resources r ON r.id = m.resource_id
              JOIN venues v ON v.id = r.venue_id
             CROSS JOIN LATERAL (SELECT round((chord_metres(earth_point(v.latitude, v.longitude)
                                                            <-> v_centre) / 1000)::numeric, 3)) d(km)
             WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.starts_at > p_now
               AND m.starts_at >= v_from
               AND open_feed_keeps(m, v_level, p_from, p_to, p_format)
               AND d.km <= p_radius_km
               AND (p_after IS NULL OR (m.starts_at, d.km, m.id) > (v_after_start, v_after_km, v_after_id))
             ORDER BY m.starts_at, d.km, m.id;
    ELSE
        OPEN matches FOR
            SELECT m, d.km
              FROM match_requests m
              JOIN resources r ON r.id = m.resource_id
              JOIN venues v ON v.id = r.venue_id
             CROSS JOIN LATERAL (SELECT round((chord_metres(earth_point(v.latitude, v.longitude)
                                                            <-> v_centre) / 1000)::numeric, 3)) d(km)
             WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.starts_at > p_now
               AND m.booking_date = p_date AND m.starts_at >= v_from
               AND open_feed_keeps(m, v_level, p_from, p_to, p_format)
               AND d.km <= p_radius_km
               AND (p_after IS NULL OR (m.starts_at, d.km, m.id) > (v_after_start, v_after_km, v_after_id))
             ORDER BY m.starts_at, d.km, m.id;
    END IF;
    LOOP
        FETCH matches INTO c;
        EXIT WHEN NOT FOUND;
        CONTINUE WHEN match_player_busy(c.m, p_caller)
                   OR booking_rules_refusal((c.m).resource_id, p_caller, (c.m).starts_at, p_now)
                      IS NOT NULL;
        doc := (left(json_match_request(c.m, false)::text, -1)
                || format(', "distanceKm" : %s, "freePlaces" : {"TEAM_A" : %s, "TEAM_B" : %s}}',
                          c.km, (c.m).team_size - (c.m).team_a_count - (c.m).offers_a,
                          (c.m).team_size - (c.m).team_b_count - (c.m).offers_b))::json;
        key := json_build_array(api_ts((c.m).starts_at), c.km, (c.m).id);
        RETURN NEXT;
        n := n + 1;
        EXIT WHEN n >= p_limit;
    END LOOP;
    CLOSE matches;
END $$;
