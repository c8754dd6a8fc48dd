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

-- The feed's candidates whatever the day and the kind: the OPEN, PUBLIC matches after the
-- page's key that the feed keeps (open_feed_keeps) within p_radius_km of p_centre, each with
-- its distance in km (rounded as shown) and whether its venue sets a booking rule
-- (venue_sets_rules, 0042). A query the planner inlines into the statement that reads it, so
-- that statement's own conditions (a day, a kind, a level) pick the partial index to read.
CREATE FUNCTION open_feed_candidates(p_centre public.earth, p_radius_km numeric, p_level text,
                                     p_from time, p_to time, p_format text, p_now timestamptz,
                                     p_after_start timestamptz, p_after_km numeric,
                                     p_after_id uuid)
    RETURNS TABLE (m match_requests, km numeric, ruled boolean)
    LANGUAGE sql STABLE
AS $$
    SELECT m, d.km, venue_sets_rules(v)
      FROM match_requests m
      JOIN resources r ON r.id = m.resource_id
      JOIN venues v ON v.id = r.venue_id
     CROSS JOIN LATERAL (SELECT round((chord_metres(earth_point(v.latitude, v.longitude)
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

-- (0029, restated) a day's matches read as two cursors over open_feed_candidates, merged;
-- only the venues that set a booking rule are asked what their rules refuse
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
    v_after_km numeric := (p_after->>1)::numeric;
    v_after_id uuid := (p_after->>2)::uuid;
    v_centre public.earth := earth_point(p_lat, p_lng);
    mine refcursor;             -- a day's competitive matches of the caller's level, or
                                -- without a date every open match
    friendly refcursor;         -- a day's friendly matches
    a record;
    b record;
    have_a boolean;
    have_b boolean := false;
    c record;
    n integer := 0;
BEGIN
    -- each statement names its partial index's condition (a generic plan uses the index only
    -- when the statement implies it)
    IF p_date IS NULL THEN
        OPEN mine FOR
            SELECT f.m, f.km, f.ruled
              FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to, p_format,
                                        p_now, v_after_start, v_after_km, v_after_id) f
             ORDER BY (f.m).starts_at, f.km, (f.m).id;
    ELSE
        OPEN mine FOR
            SELECT f.m, f.km, f.ruled
              FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to, p_format,
                                        p_now, v_after_start, v_after_km, v_after_id) f
             WHERE (f.m).booking_date = p_date AND (f.m).competitive
               AND (f.m).skill_level = v_level
             ORDER BY (f.m).starts_at, f.km, (f.m).id;
        OPEN friendly FOR
            SELECT f.m, f.km, f.ruled
              FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to, p_format,
                                        p_now, v_after_start, v_after_km, v_after_id) f
             WHERE (f.m).booking_date = p_date AND NOT (f.m).competitive
             ORDER BY (f.m).starts_at, f.km, (f.m).id;
        FETCH friendly INTO b;
        have_b := FOUND;
    END IF;
    FETCH mine INTO a;
    have_a := FOUND;
    -- the two readings merged in the page's order (start, distance, id; ids are unique);
    -- b is read only once it holds a row (without a date it never does)
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
                   OR (c.ruled
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
    IF p_date IS NOT NULL THEN
        CLOSE friendly;
    END IF;
END $$;
