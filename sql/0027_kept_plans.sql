-- 0027_kept_plans: no statement is planned again at every request.
--
-- PostgreSQL (15) runs a LANGUAGE sql function in one of two ways. The planner inlines a
-- simple one (a single expression, or a single SELECT returning a set, called in FROM) into
-- the statement that calls it, and it costs nothing more. Any other one is run as a function
-- of its own, and its statements are parsed and planned again each time the statement
-- calling it starts: once per request, or once per call when a PL/pgSQL function or a
-- trigger calls it. PL/pgSQL keeps the plans of its statements for the whole session, and a
-- program of the pool keeps its session for thousands of requests.
--
-- Measured with track_functions on the bench's CITY data (per request, pool mode):
-- creating a match planned free_slots_rewrite (4.1 ms), booking_rules_refusal (2.7 ms),
-- match_expire_holds, match_move and json_match_request again every time, about 9 of its
-- 11 ms in the database; a search called earth_point 84 times (a STRICT function whose body
-- the planner will not inline under STRICT) and planned api_time, chord_metres and
-- earthdistance's sec_to_gc again: 6.1 ms in the database, of which 3.5 ms were those.
--
-- So:
-- 1. The small helpers become expressions the planner inlines: earth_point and
--    invitation_holds_place are no longer STRICT (their bodies give NULL for NULL anyway);
--    api_ts, api_time, epoch_us, ical_utc and json_image are STABLE, as to_char, extract on
--    a timestamptz and json_build_object are (an IMMUTABLE function is only inlined when its
--    body is immutable too; ical_utc is no longer STRICT either); chord_metres and
--    metres_chord name their argument once, so that an expensive argument does not stop
--    the inlining either. The indexes on earth_point are built again, so that every session
--    sees their expression as the planner now writes it.
-- 2. The grid-cell count compares chords (an earth point's <->) instead of calling
--    earth_distance, whose sec_to_gc is a STRICT function around a CASE.
-- 3. The LANGUAGE sql functions that cannot be inlined (a FROM clause, a sub-select, a
--    write) and run on the way of a request or a sweep become PL/pgSQL with the same
--    statement (sql_function_keep_plans, below): their bodies stay as their migrations
--    write them, which remain the place to read them. A function restated by a later
--    migration is written in PL/pgSQL, or it goes back to being planned at every call;
--    tests/06-schema.bats fails on a LANGUAGE sql function the planner does not inline,
--    but the drift check the tests run.

-- ---- 1. helpers the planner inlines ----------------------------------------------------------

ALTER FUNCTION earth_point(double precision, double precision) CALLED ON NULL INPUT;
ALTER FUNCTION invitation_holds_place(text) CALLED ON NULL INPUT;
ALTER FUNCTION api_ts(timestamptz) STABLE;
ALTER FUNCTION api_time(time) STABLE;
ALTER FUNCTION epoch_us(timestamptz) STABLE;
ALTER FUNCTION ical_utc(timestamptz) STABLE CALLED ON NULL INPUT;
ALTER FUNCTION json_image(uuid, text, text) STABLE;

-- (0019, restated) each names its argument once
CREATE OR REPLACE FUNCTION chord_metres(chord double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 2 * public.earth() * asin(least(greatest(chord, 0) / (2 * public.earth()), 1));

CREATE OR REPLACE FUNCTION metres_chord(metres double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 2 * public.earth()
           * sin(least(greatest(metres, 0), pi() * public.earth()) / (2 * public.earth()));

-- (0009, rebuilt) a session reads an index's expression once and keeps it: built again, the
-- indexes are read again, as the inlined expression queries now match
DROP INDEX venues_earth_idx;
CREATE INDEX venues_earth_idx ON venues USING gist (earth_point(latitude, longitude))
    WHERE status = 'ACTIVE';
COMMENT ON INDEX venues_earth_idx IS
    'Radius search and nearest-first order over ACTIVE venues: earth_box(earth_point(lat, lng), r) @> earth_point(latitude, longitude).';
DROP INDEX players_home_earth_idx;
CREATE INDEX players_home_earth_idx ON players USING gist (earth_point(home_latitude, home_longitude))
    WHERE home_latitude IS NOT NULL AND match_notifications;
COMMENT ON INDEX players_home_earth_idx IS
    'Eligible players around a point: earth_box(earth_point(lat, lng), r) @> earth_point(home_latitude, home_longitude).';

-- ---- 2. the cells' corners as chords ---------------------------------------------------------

-- (0017, restated) The corners of the block are compared with the radius as chords.
CREATE OR REPLACE FUNCTION eligible_players_cells(p_lat double precision, p_lng double precision,
                                                  p_radius_km numeric, p_skill text,
                                                  p_min_reliability integer, p_cap integer)
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    clat integer := home_cell(p_lat);
    clng integer := home_cell(p_lng);
    -- the block spans cells clat-k .. clat+k and clng-m .. clng+m; a cell of latitude is
    -- 1.1119 km on earthdistance's sphere, one of longitude that times the cosine
    half double precision := p_radius_km::double precision / sqrt(2) / 1.1119;
    k integer;
    m integer;
    lat_lo double precision;
    lat_hi double precision;
    lng_lo double precision;
    lng_hi double precision;
    -- the radius as a chord, a metre to spare
    reach double precision := metres_chord(p_radius_km::double precision * 1000 - 1);
    centre public.earth := earth_point(p_lat, p_lng);
    total bigint := 0;
    row_sum bigint;
    j integer;
BEGIN
    k := floor(half) - 1;
    m := floor(half / greatest(cos(radians(abs(p_lat))), 1e-6)) - 1;
    -- shrink until the block's corners are inside (the estimate is nearly always right)
    LOOP
        IF k < 0 OR m < 0 THEN
            RETURN NULL;
        END IF;
        lat_lo := (clat - k) / 100.0;
        lat_hi := (clat + k + 1) / 100.0;
        lng_lo := (clng - m) / 100.0;
        lng_hi := (clng + m + 1) / 100.0;
        IF lat_lo < -90 OR lat_hi > 90 OR lng_lo < -180 OR lng_hi > 180 THEN
            RETURN NULL;
        END IF;
        EXIT WHEN centre <-> earth_point(lat_lo, lng_lo) <= reach
              AND centre <-> earth_point(lat_lo, lng_hi) <= reach
              AND centre <-> earth_point(lat_hi, lng_lo) <= reach
              AND centre <-> earth_point(lat_hi, lng_hi) <= reach;
        k := k - 1;
        m := m - 1;
    END LOOP;
    -- rows of cells from the centre's outwards: 0, -1, +1, -2, +2, ...
    FOR j IN 0 .. 2 * k LOOP
        SELECT COALESCE(sum(c.players), 0) INTO row_sum
          FROM player_home_cells c
         WHERE c.cell_lat = clat + (CASE WHEN j % 2 = 1 THEN -1 ELSE 1 END) * ((j + 1) / 2)
           AND c.cell_lng BETWEEN clng - m AND clng + m
           AND (p_skill = 'ANY' OR c.skill_level = p_skill)
           AND c.reliability_score >= p_min_reliability;
        total := total + row_sum;
        IF total > p_cap THEN
            RETURN p_cap + 1;
        END IF;
    END LOOP;
    RETURN total;
END $$;

-- ---- 2b. a court's price rules found by their btree --------------------------------------------

-- (0019, restated) Whether a court has a price rule reads a column of price_rules_resource_idx:
-- "SELECT 1" could be answered from the exclusion constraint's GiST index alone, which the
-- planner preferred, and which reads about 50 pages for one court where the btree reads 3
-- (1.1 ms against 0.07 ms on CITY, at every refresh of a court's kept slots).
CREATE OR REPLACE FUNCTION court_day_slots(p_resource uuid, p_date date)
    RETURNS TABLE (start_time time, end_time time, price numeric, currency char(3),
                   starts_at timestamptz, notice interval, booking_window interval,
                   held_until timestamptz, bookable boolean)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT api_secs_time(g.s), api_secs_time(g.s + d.dur), pr.price, pr.currency,
           (p_date + api_secs_time(g.s)) AT TIME ZONE d.timezone,
           d.notice, d.booking_window, req.held_until,
           d.bookable AND pr.price IS NOT NULL AND NOT COALESCE(req.taken, false)
      FROM (SELECT r.slot_duration_minutes * 60 AS dur,
                   api_time_secs(s.opening_time) AS open_s,
                   api_time_secs(s.closing_time) AS close_s,
                   v.timezone,
                   make_interval(mins => v.min_notice_minutes) AS notice,
                   make_interval(days => v.booking_window_days) AS booking_window,
                   r.status = 'ACTIVE' AND v.status = 'ACTIVE' AND anyrule.found IS NOT NULL AS bookable,
                   hol.found IS NOT NULL AS holiday,
                   CASE WHEN extract(isodow FROM p_date) IN (6, 7) THEN 'WEEKEND' ELSE 'WEEKDAY' END
                       AS day_type
              FROM resources r
              JOIN venues v ON v.id = r.venue_id
              JOIN resource_schedules s ON s.resource_id = r.id
                                       AND s.day_of_week = extract(isodow FROM p_date)::smallint
                                       AND s.opening_time IS NOT NULL
              LEFT JOIN LATERAL (SELECT p.start_time AS found FROM price_rules p
                                  WHERE p.resource_id = r.id LIMIT 1) anyrule ON true
              LEFT JOIN LATERAL (SELECT 1 AS found FROM venue_holidays h
                                  WHERE h.venue_id = v.id AND h.date = p_date LIMIT 1) hol ON true
             WHERE r.id = p_resource) d
     CROSS JOIN LATERAL generate_series(d.open_s, d.close_s - d.dur, d.dur) AS g(s)
      LEFT JOIN LATERAL (
            SELECT p.price, p.currency
              FROM price_rules p
             WHERE p.resource_id = p_resource
               AND (p.day_type = d.day_type OR (d.holiday AND p.day_type = 'HOLIDAY'))
               AND p.start_time <= api_secs_time(g.s)
               AND api_secs_time(g.s) < p.end_time
             ORDER BY p.day_type = 'HOLIDAY' DESC
             LIMIT 1) pr ON true
     -- the requests holding part of the slot: for good, or a payment hold until its expiry
     CROSS JOIN LATERAL (
            SELECT bool_or(m.status <> 'PENDING_PAYMENT') AS taken,
                   max(m.expires_at) FILTER (WHERE m.status = 'PENDING_PAYMENT') AS held_until
              FROM match_requests m
             WHERE m.resource_id = p_resource
               AND m.status <> 'CANCELLED'
               AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
                   && tsrange(p_date + api_secs_time(g.s), p_date + api_secs_time(g.s + d.dur))) req
     ORDER BY g.s;
END;

-- ---- 3. plans kept for the session -----------------------------------------------------------

-- The LANGUAGE sql function p_fn, of one statement, becomes a PL/pgSQL function with the same
-- signature, attributes and statement: a set is returned by RETURN QUERY, a value or the OUT
-- parameters read INTO as the first row (what a SQL function returns), nothing by running
-- it. Names resolve as in the SQL function: a column before a parameter. With p_generic, its
-- statement keeps the plan the SQL function had, one made without the parameters' values
-- (plan_cache_mode): PL/pgSQL would otherwise plan again at every call a statement whose
-- plan for given values the planner costs lower (an array of ids: match_move took 0.7 ms a
-- call so, against 0.05 ms). The setting costs about 1.5 us a call, so the functions run
-- once a row of an answer go without it: their statements find rows by key, and PL/pgSQL
-- keeps the plan without values after five calls.
CREATE FUNCTION sql_function_keep_plans(p_fn regprocedure, p_generic boolean) RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    p pg_proc;
    def text := pg_get_functiondef(p_fn);
    head text;
    stmt text;
    bare text;
    outs text;
    body text;
BEGIN
    SELECT * INTO p FROM pg_proc WHERE oid = p_fn;
    IF p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'sql') THEN
        RAISE EXCEPTION '% is not a LANGUAGE sql function', p_fn;
    END IF;
    -- the statement, without BEGIN ATOMIC ... END or its final semicolon
    stmt := CASE WHEN p.prosqlbody IS NOT NULL
                 THEN substring(pg_get_function_sqlbody(p_fn)
                                FROM '^\s*BEGIN ATOMIC\s*(.*?)\s*END\s*$')
                 ELSE p.prosrc END;
    stmt := regexp_replace(stmt, ';\s*$', '');
    -- one statement: no semicolon outside comments and literals
    bare := regexp_replace(regexp_replace(stmt, '--[^\n]*', '', 'g'), '''([^'']|'''')*''', '', 'g');
    IF stmt IS NULL OR position(';' IN bare) > 0 OR position('$plpgsql$' IN stmt) > 0 THEN
        RAISE EXCEPTION '% is not a function of one statement', p_fn;
    END IF;
    SELECT string_agg(quote_ident(a.name), ', ' ORDER BY a.n) INTO outs
      FROM unnest(p.proargnames, p.proargmodes) WITH ORDINALITY a(name, mode, n)
     WHERE a.mode IN ('o', 'b');
    body := CASE
        WHEN p.proretset THEN format('RETURN QUERY %s;', stmt)
        WHEN p.prorettype = 'void'::regtype AND bare ~* '^\s*SELECT\M'
            THEN format('PERFORM %s;', regexp_replace(stmt, '^\s*SELECT\M', '', 'i'))
        WHEN p.prorettype = 'void'::regtype THEN format('%s;', stmt)
        WHEN outs IS NOT NULL THEN format(E'%s\n    INTO %s;', stmt, outs)
        ELSE format(E'%s\n    INTO result_;\n    RETURN result_;', stmt) END;
    head := substring(def FROM '^(.*?)\n(AS \$function\$|BEGIN ATOMIC)');
    IF head IS NULL OR head !~ '\n LANGUAGE sql(\n|$)' THEN
        RAISE EXCEPTION 'cannot read the definition of %', p_fn;
    END IF;
    EXECUTE format(E'%s%s\nAS $plpgsql$\n#variable_conflict use_column\n%sBEGIN\n%s\nEND\n$plpgsql$',
                   regexp_replace(head, '\n LANGUAGE sql(\n|$)', E'\n LANGUAGE plpgsql\\1'),
                   CASE WHEN p_generic THEN E'\n SET plan_cache_mode = force_generic_plan' ELSE '' END,
                   CASE WHEN outs IS NULL AND NOT p.proretset AND p.prorettype <> 'void'::regtype
                        THEN format(E'DECLARE\n    result_ %s;\n', format_type(p.prorettype, NULL))
                        ELSE '' END,
                   body);
END $$;
COMMENT ON FUNCTION sql_function_keep_plans(regprocedure, boolean) IS
    'Makes a LANGUAGE sql function of one statement PL/pgSQL, so that its plan is kept for the session.';

-- (0015, restated in PL/pgSQL) two statements: the lock, then the matches
CREATE OR REPLACE FUNCTION sweep_completed(p_limit integer, p_now timestamptz DEFAULT now(),
                                           OUT completed integer, OUT no_shows integer)
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('sweep_completed'));
    SELECT * INTO completed, no_shows FROM match_complete(ARRAY(
        SELECT id FROM match_requests
         WHERE status IN ('MATCHED', 'CONFIRMED') AND ends_at <= p_now
         ORDER BY ends_at, id LIMIT p_limit
           FOR UPDATE SKIP LOCKED), p_now);
END $$;

-- (0019, restated in PL/pgSQL) two statements: the kept rows go, the worked-out ones come.
-- The plan is the one the SQL function had, made once: with the arrays' values, the planner
-- costs a custom plan lower and would make one at every call (2.9 ms a call on CITY, against
-- 0.8 ms with the generic plan kept).
CREATE OR REPLACE FUNCTION free_slots_rewrite(p_courts uuid[], p_dates date[]) RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    DELETE FROM free_slots f
     WHERE f.resource_id = ANY (p_courts)
       AND (p_dates IS NULL OR f.booking_date = ANY (p_dates));
    INSERT INTO free_slots SELECT * FROM free_slots_of(p_courts, p_dates);
END $$;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        -- every write of a match and of a court
        'version_bump(uuid)', 'availability_day_bump(uuid, date)',
        'notify(uuid[], text, jsonb, timestamptz)',
        'match_move(uuid[], text, timestamptz)',
        'match_expire_holds(uuid[], timestamptz)',
        'match_cancel_unfilled(uuid[], timestamptz)',
        'payments_refund(uuid[], timestamptz)',
        'invitations_expire(uuid[])',
        'match_pending_invitations(uuid[])',
        'match_active_players(uuid, uuid)',
        'match_invite(uuid, text, integer, timestamptz)',
        'match_player_busy(match_requests, uuid)',
        'offer_candidate_free(match_requests, uuid, timestamptz)',
        'match_player_level(uuid)',
        'booking_rules_refusal(uuid, uuid, timestamptz, timestamptz)',
        'place_request_verdict(uuid, uuid)',
        'result_winner(jsonb)',
        'eligible_players_count_walk(double precision, double precision, numeric, text, integer, uuid, integer, timestamptz)',
        -- the sweeper and the deliverer
        'sweep_expired_holds(integer, timestamptz)',
        'sweep_unfilled(integer, timestamptz)',
        'sweep_invitations(integer, timestamptz)',
        'sweep_idempotency_keys(integer, timestamptz)',
        'notification_claim(integer)',
        'notification_delivered(uuid)',
        'notification_failed(uuid, integer, text, integer, integer)',
        'notifications_retry_dead()']::regprocedure[]
    LOOP
        PERFORM sql_function_keep_plans(f, true);
    END LOOP;
    FOREACH f IN ARRAY ARRAY[
        -- the answers, a call a row
        'json_match_request(match_requests, boolean)',
        'json_invitation(invitations)',
        'json_place_request(place_requests)',
        'json_player(players)',
        'json_waitlist_entry(uuid)',
        'json_match_series(uuid)',
        'json_match_result(uuid)',
        'json_resource(resources)',
        'json_venue(venues, boolean)']::regprocedure[]
    LOOP
        PERFORM sql_function_keep_plans(f, false);
    END LOOP;
END $$;
