-- Fixed once paid: visibility and competitive change only while the hold awaits payment.
CREATE OR REPLACE FUNCTION match_requests_terms_fixed() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF OLD.status <> 'PENDING_PAYMENT' THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'Visibility and competitiveness are fixed once the match is paid.');
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION match_requests_terms_fixed() IS
    'Row trigger: a paid match keeps its visibility and competitiveness.';

CREATE OR REPLACE TRIGGER match_requests_terms_fixed BEFORE UPDATE OF visibility, competitive
    ON match_requests FOR EACH ROW
    WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility
          OR OLD.competitive IS DISTINCT FROM NEW.competitive)
    EXECUTE FUNCTION match_requests_terms_fixed();

-- The visibility and competitiveness of the matches the rest of this transaction opens
-- (the defaults of match_requests.visibility and .competitive read them).
CREATE OR REPLACE FUNCTION match_new_terms(p_visibility text, p_competitive boolean)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM set_config('courts.new_match_visibility', p_visibility, true),
            set_config('courts.new_match_competitive', p_competitive::text, true);
END $$;
COMMENT ON FUNCTION match_new_terms(text, boolean) IS
    'Visibility and competitiveness of the matches the rest of the transaction opens.';

-- JOIN from the feed: p_player takes a place of p_team in the PUBLIC match p_match, as by its
-- link (match_join_locked: the rules and the payment). 404 NOT_FOUND (unknown, or PRIVATE and
-- the caller not in it), 409 LEVEL_MISMATCH (competitive, of another level than the
-- caller's), and the link's refusals. Returns the match.
CREATE OR REPLACE FUNCTION match_join_open(p_match uuid, p_player uuid, p_team text,
                                           p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_found boolean;
    v_in boolean;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    v_found := FOUND;
    v_in := EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                       AND player_id = p_player AND left_at IS NULL);
    IF NOT v_found OR (m.visibility = 'PRIVATE' AND NOT v_in) THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    IF NOT v_in AND m.competitive
       AND m.skill_level IS DISTINCT FROM match_player_level(p_player) THEN
        PERFORM lifecycle_fail(409, 'LEVEL_MISMATCH',
            format('This competitive match is for %s players; ask for a place instead.',
                   m.skill_level));
    END IF;
    PERFORM match_join_locked(m, p_player, p_team, NULL, p_now);
    RETURN m.id;
END $$;
COMMENT ON FUNCTION match_join_open(uuid, uuid, text, timestamptz) IS
    'JOIN from the open-match feed: a public match of the caller''s level (or friendly).';

-- Whether the feed keeps match m for a caller of level p_level and the filters p_from, p_to
-- and p_format, whatever its distance: a place free, of the caller's level when
-- competitive. An expression the planner inlines.
CREATE OR REPLACE FUNCTION open_feed_keeps(m match_requests, p_level text, p_from time, p_to time,
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

-- A match inserted without its place takes its court's venue's. Only then: the trigger's
-- condition is checked before any function is called, so a writer that gives the place
-- pays nothing for it.
CREATE OR REPLACE FUNCTION match_requests_place_set() RETURNS trigger
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

CREATE OR REPLACE TRIGGER match_requests_place BEFORE INSERT ON match_requests
    FOR EACH ROW WHEN (NEW.venue_latitude IS NULL OR NEW.venue_longitude IS NULL)
    EXECUTE FUNCTION match_requests_place_set();

-- A venue that moves takes its matches with it; so does a court given to another venue.
CREATE OR REPLACE FUNCTION match_requests_place_follow() RETURNS trigger
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

CREATE OR REPLACE TRIGGER venues_match_place AFTER UPDATE OF latitude, longitude ON venues
    FOR EACH ROW
    WHEN (OLD.latitude IS DISTINCT FROM NEW.latitude OR OLD.longitude IS DISTINCT FROM NEW.longitude)
    EXECUTE FUNCTION match_requests_place_follow();

CREATE OR REPLACE TRIGGER resources_match_place AFTER UPDATE OF venue_id ON resources
    FOR EACH ROW WHEN (OLD.venue_id IS DISTINCT FROM NEW.venue_id)
    EXECUTE FUNCTION match_requests_place_follow();

CREATE OR REPLACE FUNCTION open_feed_candidates(p_centre public.earth, p_radius_km numeric, p_level text,
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

CREATE OR REPLACE FUNCTION match_open_feed(p_caller uuid, p_lat double precision, p_lng double precision,
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
