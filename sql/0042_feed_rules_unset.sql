-- 0042_feed_rules_unset: the open-match feed asks what a venue's booking rules refuse only
-- of the venues that set one.
--
-- The feed (0029) called booking_rules_refusal for every match it was about to show, and
-- the call sets up its plan (26 nodes and a sub-plan for each counted rule) whatever the
-- venue sets: on the bench's CITY data, where no venue sets a rule, 20 calls cost 1.16 ms of
-- a page's 6-11 ms. booking_rules_check has returned at once for a venue without rules since
-- 0035; the test it made is now one expression, venue_sets_rules, which the planner inlines,
-- and the feed reads it with the venue its cursor has joined already, so that a match of a
-- venue without rules costs no call at all. A venue that sets any rule is asked as before.

CREATE FUNCTION venue_sets_rules(v venues) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN num_nonnulls(v.booking_window_days, v.min_notice_minutes, v.max_upcoming_per_player,
                        v.max_per_player_per_day, v.max_per_player_per_week) > 0;
COMMENT ON FUNCTION venue_sets_rules(venues) IS
    'Whether a venue sets any of its five booking rules.';

-- (0035, restated) the test is venue_sets_rules
CREATE OR REPLACE FUNCTION booking_rules_check(p_resource uuid, p_player uuid,
                                               p_starts_at timestamptz, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v venues;
    v_code text;
BEGIN
    PERFORM 1 FROM users WHERE id = p_player FOR UPDATE;
    SELECT vv.* INTO v FROM resources r JOIN venues vv ON vv.id = r.venue_id WHERE r.id = p_resource;
    IF NOT venue_sets_rules(v) THEN
        RETURN;
    END IF;
    v_code := booking_rules_refusal(p_resource, p_player, p_starts_at, p_now);
    IF v_code IS NULL THEN
        RETURN;
    END IF;
    PERFORM lifecycle_fail(409, v_code, CASE v_code
        WHEN 'OUTSIDE_BOOKING_WINDOW' THEN
            format('This club takes bookings at most %s days ahead.', v.booking_window_days)
        WHEN 'TOO_SHORT_NOTICE' THEN
            format('This club takes bookings at least %s minutes before the start.',
                   v.min_notice_minutes)
        WHEN 'UPCOMING_LIMIT' THEN
            format('This club allows %s upcoming matches per player.', v.max_upcoming_per_player)
        WHEN 'DAILY_LIMIT' THEN
            format('This club allows %s matches per player a day.', v.max_per_player_per_day)
        ELSE
            format('This club allows %s matches per player a week.', v.max_per_player_per_week)
        END);
END $$;

-- (0029, restated) the cursor says whether the match's venue sets a rule, and only those
-- venues are asked what their rules refuse
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
            SELECT m, d.km, venue_sets_rules(v) AS ruled
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
            SELECT m, d.km, venue_sets_rules(v) AS ruled
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
    CLOSE matches;
END $$;
