-- 85_search: the match search, GET /api/match/search: free slots of courts of one slot length
-- near a point, nearest venue first, at most `limit`, with the number of players a match opened
-- there would invite (eligible_players_count of sql/areas/40_players.sql, up to 100).
--
-- Venues come nearest first straight from venues_earth_idx (KNN on <->, the chord distance,
-- which orders like the great-circle one), and the LIMIT stops the scan once enough slots are
-- found, so the work of a search is bounded by its answer, not by how many venues a city has
-- inside the radius. The functions carry the settings of that plan in their SET clauses
-- (bitmap scans off: cube's @> has no selectivity estimate, and with a bitmap scan the planner
-- would read and sort every venue of the radius first), so that a caller gets it whatever its
-- connection's settings, a pooler's connection in transaction mode included.
--
-- On a date free_slots keeps completely (free_slot_dates) the slots are read from it
-- (search_free_slots); on any other they are worked out court by court (search_slots_computed):
-- a date further ahead, or a database whose sweeper has not run for days, is slower, never
-- wrong. match_search_rows answers plain rows, which cgi-bin/search.c writes as JSON;
-- match_search gives the same answer as one JSON row, for clients of the schema.
--
-- A search asked again is reused: search_answer gives match_search_rows's rows with their
-- validator (search_validator, sql/areas/20_versions.sql) and the instant until which time
-- alone leaves them as they are (search_kept_visit, eligible_players_count_until). Relies on
-- sql/areas/10_basics.sql, 20_versions.sql, 30_slots.sql (resource_slots, free_slots) and
-- 40_players.sql.

-- ---- the slots near a point ------------------------------------------------------------------

-- The search's slots worked out court by court from resource_slots, for a date free_slots does
-- not keep completely. A date before UTC yesterday or more than 366 days ahead gets none, which
-- bounds the work.
CREATE OR REPLACE FUNCTION search_slots_computed(p_lat double precision, p_lng double precision,
                                        p_radius_km numeric, p_date date, p_from time, p_to time,
                                        p_duration integer, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (resource_id uuid, resource_name text, resource_type text, venue_id uuid,
                   venue_name text, venue_city text, venue_latitude double precision,
                   venue_longitude double precision, distance_km numeric,
                   start_time time, end_time time, price numeric, currency char(3))
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT x.id, x.name, x.type, v.id, v.name, v.city, v.latitude, v.longitude,
           round((earth_distance(earth_point(p_lat, p_lng),
                                 earth_point(v.latitude, v.longitude)) / 1000)::numeric, 3),
           x.start_time, x.end_time, x.price, x.currency
      FROM (SELECT v.*, earth_point(v.latitude, v.longitude) <-> earth_point(p_lat, p_lng) AS chord
              FROM venues v
             WHERE v.status = 'ACTIVE'
               AND earth_box(earth_point(p_lat, p_lng), p_radius_km * 1000)
                   @> earth_point(v.latitude, v.longitude)
               -- bound the work: no slots for dates long past or over a year ahead
               AND p_date BETWEEN (p_now AT TIME ZONE 'UTC')::date - 1
                              AND (p_now AT TIME ZONE 'UTC')::date + 366
             ORDER BY earth_point(v.latitude, v.longitude) <-> earth_point(p_lat, p_lng)) v
     CROSS JOIN LATERAL (
            SELECT r.id, r.name, r.type, s.start_time, s.end_time, s.price, s.currency
              FROM resources r
             CROSS JOIN LATERAL resource_slots(r.id, p_date, p_now) s
             WHERE r.venue_id = v.id
               AND r.status = 'ACTIVE'
               AND r.slot_duration_minutes = p_duration
               AND s.available
               AND s.start_time BETWEEN p_from AND p_to) x
     WHERE earth_distance(earth_point(p_lat, p_lng), earth_point(v.latitude, v.longitude))
           <= p_radius_km * 1000
     ORDER BY v.chord, x.start_time, x.id
     LIMIT p_limit;
END;
COMMENT ON FUNCTION search_slots_computed(double precision, double precision, numeric, date,
                                          time, time, integer, integer, timestamptz) IS
    'search_slots worked out court by court, for a date free_slots does not keep.';

-- The search's slots: from the kept slots when the date is kept and complete
-- (search_free_slots), otherwise worked out (search_slots_computed); the two give the same rows
-- for as long as free_slots is right (free_slots_drift, sql/areas/30_slots.sql).
CREATE OR REPLACE FUNCTION search_slots(p_lat double precision, p_lng double precision,
                                        p_radius_km numeric, p_date date, p_from time, p_to time,
                                        p_duration integer, p_limit integer,
                                        p_now timestamptz DEFAULT now())
    RETURNS TABLE (resource_id uuid, resource_name text, resource_type text, venue_id uuid,
                   venue_name text, venue_city text, venue_latitude double precision,
                   venue_longitude double precision, distance_km numeric,
                   start_time time, end_time time, price numeric, currency char(3))
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM free_slot_dates d WHERE d.booking_date = p_date AND d.complete) THEN
        RETURN QUERY
        SELECT * FROM search_free_slots(p_lat, p_lng, p_radius_km, p_date, p_from, p_to,
                                        p_duration, p_limit, p_now);
        RETURN;
    END IF;
    RETURN QUERY
    SELECT * FROM search_slots_computed(p_lat, p_lng, p_radius_km, p_date, p_from, p_to,
                                        p_duration, p_limit, p_now);
END $$;
COMMENT ON FUNCTION search_slots(double precision, double precision, numeric, date, time, time,
                                 integer, integer, timestamptz) IS
    'The first p_limit available slots of courts of one slot length within a radius, nearest first.';

-- search_slots from the kept slots: the same venues in the same order as search_slots_computed,
-- each venue's kept courts of the date and slot length, their slots in the time range that are
-- open at p_now under the venue's rules (slot_open). The radius's box is earth_box's
-- cube_enlarge with the chord of the radius (metres_chord), and distances come from the chord
-- (chord_metres), which the planner inlines. A court's arrays are unnested in the select list,
-- a ProjectSet node that hands its rows on as it makes them (several set-returning functions in
-- one select list run in step), rather than in FROM, a function scan that would store every
-- element before the time window and the clock keep a few. Sorts off: the plan reads the
-- venues in index order and stops at p_limit, with no full sort.
CREATE OR REPLACE FUNCTION search_free_slots(p_lat double precision, p_lng double precision,
                                             p_radius_km numeric, p_date date, p_from time,
                                             p_to time, p_duration integer, p_limit integer,
                                             p_now timestamptz DEFAULT now())
    RETURNS TABLE (resource_id uuid, resource_name text, resource_type text, venue_id uuid,
                   venue_name text, venue_city text, venue_latitude double precision,
                   venue_longitude double precision, distance_km numeric,
                   start_time time, end_time time, price numeric, currency char(3))
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
    SELECT x.resource_id, x.resource_name, x.resource_type, v.id, v.name, v.city, v.latitude,
           v.longitude, round((v.metres / 1000)::numeric, 3),
           x.start_time, api_secs_time(api_time_secs(x.start_time) + p_duration * 60),
           x.price, x.currency
      FROM (SELECT v.*, c.chord, chord_metres(c.chord) AS metres
              FROM venues v
             CROSS JOIN LATERAL (SELECT earth_point(v.latitude, v.longitude)
                                        <-> earth_point(p_lat, p_lng)) c(chord)
             WHERE v.status = 'ACTIVE'
               AND cube_enlarge(earth_point(p_lat, p_lng), metres_chord(p_radius_km * 1000), 3)
                   @> earth_point(v.latitude, v.longitude)
             ORDER BY earth_point(v.latitude, v.longitude) <-> earth_point(p_lat, p_lng)) v
     CROSS JOIN LATERAL (
            SELECT f.resource_id, f.resource_name, f.resource_type, s.start_time, s.price,
                   s.currency
              FROM free_slots f
             CROSS JOIN LATERAL (SELECT unnest(f.start_times) AS start_time,
                                        unnest(f.prices) AS price,
                                        unnest(f.currencies) AS currency,
                                        unnest(f.held_until) AS held_until) s
             WHERE f.venue_id = v.id
               AND f.booking_date = p_date
               AND f.slot_minutes = p_duration
               AND s.start_time BETWEEN p_from AND p_to
               AND slot_open((p_date + s.start_time) AT TIME ZONE v.timezone,
                             make_interval(mins => v.min_notice_minutes),
                             make_interval(days => v.booking_window_days), s.held_until,
                             p_now)) x
     WHERE v.metres <= p_radius_km * 1000
     ORDER BY v.chord, x.start_time, x.resource_id
     LIMIT p_limit;
END $$;
COMMENT ON FUNCTION search_free_slots(double precision, double precision, numeric, date, time,
                                      time, integer, integer, timestamptz) IS
    'search_slots from the kept slots, for a date of free_slot_dates.';

-- ---- the answer ------------------------------------------------------------------------------

-- The search's answer as plain rows, already in the answer's order, which cgi-bin/search.c
-- writes as JSON: one row per slot, or one row without a court (resource_id NULL) when none is
-- free or the date is too far ahead, date_ok saying which. eligible is the same on every row and
-- counted once, when the first row is made (an uncorrelated sub-select); NULL on the row
-- without a court. The times are written by time's own output: a search's times are whole
-- seconds (slot starts come from schedules and add up minutes), so it gives the same HH:MM:SS
-- as api_time (24:00:00 included) at less cost.
CREATE OR REPLACE FUNCTION match_search_rows(p_lat double precision, p_lng double precision,
                                             p_radius_km numeric, p_date date, p_from time,
                                             p_to time, p_duration integer, p_skill text,
                                             p_min_reliability integer, p_caller uuid,
                                             p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, eligible bigint, resource_id uuid, resource_name text,
                   resource_type text, venue_id uuid, venue_name text, venue_city text,
                   venue_latitude double precision, venue_longitude double precision,
                   distance_km numeric, start_time text, end_time text, price numeric,
                   currency char(3))
    LANGUAGE plpgsql STABLE
    SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
BEGIN
    IF p_date > (p_now AT TIME ZONE 'UTC')::date + 366 THEN
        date_ok := false;
        RETURN NEXT;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT true,
           (SELECT eligible_players_count(p_lat, p_lng, p_radius_km, p_skill,
                                          p_min_reliability, p_caller, 100, p_now)),
           s.resource_id, s.resource_name, s.resource_type, s.venue_id, s.venue_name,
           s.venue_city, s.venue_latitude, s.venue_longitude, s.distance_km,
           s.start_time::text, s.end_time::text, s.price, s.currency
      FROM search_slots(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration, p_limit,
                        p_now) s
     ORDER BY s.distance_km, s.start_time, s.resource_id;
    IF NOT FOUND THEN
        date_ok := true;
        RETURN NEXT;
    END IF;
END $$;
COMMENT ON FUNCTION match_search_rows(double precision, double precision, numeric, date, time,
                                      time, integer, text, integer, uuid, integer, timestamptz) IS
    'The search''s slots nearest first, one row each, or one row without a court; bitmap scans off for its plan.';

-- The search's whole answer in one row: whether the date is within bounds, and the results as
-- the JSON array GET /api/match/search answers, written by json_build_object. The service does
-- not call it: it writes the JSON itself from match_search_rows, which costs less. A function of
-- the schema is an interface too (a report, an operator's script, a second service written
-- against the database), so it stays, over match_search_rows: there is one search statement,
-- and the two answers cannot drift apart (the same slots in the same order with the same
-- values). match_search_rows carries the plan's setting, so a caller gets the same plan
-- whatever its connection's settings; only match_search's callers pay for the JSON building.
CREATE OR REPLACE FUNCTION match_search(p_lat double precision, p_lng double precision,
                                        p_radius_km numeric, p_date date, p_from time, p_to time,
                                        p_duration integer, p_skill text, p_min_reliability integer,
                                        p_caller uuid, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, results json)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT bool_and(s.date_ok),
           COALESCE(json_agg(json_build_object(
               'resourceId', s.resource_id,
               'resourceName', s.resource_name,
               'resourceType', s.resource_type,
               'venueId', s.venue_id,
               'venueName', s.venue_name,
               'venueCity', s.venue_city,
               'venueLatitude', s.venue_latitude,
               'venueLongitude', s.venue_longitude,
               'distanceKm', s.distance_km,
               'startTime', s.start_time,
               'endTime', s.end_time,
               'price', s.price,
               'currency', s.currency,
               'eligiblePlayersNearby', s.eligible)
               ORDER BY s.n) FILTER (WHERE s.resource_id IS NOT NULL), '[]')
      FROM match_search_rows(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration,
                             p_skill, p_min_reliability, p_caller, p_limit, p_now)
           WITH ORDINALITY AS s(date_ok, eligible, resource_id, resource_name, resource_type,
                                venue_id, venue_name, venue_city, venue_latitude,
                                venue_longitude, distance_km, start_time, end_time, price,
                                currency, n);
END;
COMMENT ON FUNCTION match_search(double precision, double precision, numeric, date, time, time,
                                 integer, text, integer, uuid, integer, timestamptz) IS
    'The search''s answer in one row: whether the date is within bounds, and match_search_rows'' slots as the JSON array GET /api/match/search answers. Kept for clients of the schema; the service writes the JSON itself.';

-- ---- answers kept while nothing is written ---------------------------------------------------

-- search_free_slots's slots, and the ones it passes over: every slot of the venues nearest first
-- that it goes through, open at p_now or not, in its order, up to the one after which it has
-- p_limit open slots (the window count's run condition stops the scan there), each with the
-- first instant after p_now at which time alone changes it: it starts, enters the notice period
-- or the booking window, or the payment hold on it lapses. An answer read so can change by time
-- alone only at one of those instants.
CREATE OR REPLACE FUNCTION search_kept_visit(p_lat double precision, p_lng double precision,
                                             p_radius_km numeric, p_date date, p_from time, p_to time,
                                             p_duration integer, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS SETOF search_visited_slot
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
    SELECT y.resource_id, y.resource_name, y.resource_type, y.id, y.name, y.city, y.latitude,
           y.longitude, round((y.metres / 1000)::numeric, 3),
           y.start_time, api_secs_time(api_time_secs(y.start_time) + p_duration * 60),
           y.price, y.currency::char(3), y.open, y.next_change
      FROM (SELECT x.*,
                   count(*) FILTER (WHERE x.open)
                       OVER (ORDER BY x.chord, x.start_time, x.resource_id
                             ROWS UNBOUNDED PRECEDING) AS open_so_far
              FROM (SELECT v.id, v.name, v.city, v.latitude, v.longitude, v.chord, v.metres,
                           f.resource_id, f.resource_name, f.resource_type, s.start_time,
                           s.price, s.currency,
                           slot_open(a.at, a.notice, a.booking_window, s.held_until, p_now) AS open,
                           least(CASE WHEN a.at > p_now THEN a.at END,
                                 CASE WHEN a.at - a.notice > p_now THEN a.at - a.notice END,
                                 CASE WHEN a.at - a.booking_window > p_now
                                      THEN a.at - a.booking_window END,
                                 CASE WHEN s.held_until > p_now THEN s.held_until END) AS next_change
                      FROM (SELECT v.*, c.chord, chord_metres(c.chord) AS metres
                              FROM venues v
                             CROSS JOIN LATERAL (SELECT earth_point(v.latitude, v.longitude)
                                                        <-> earth_point(p_lat, p_lng)) c(chord)
                             WHERE v.status = 'ACTIVE'
                               AND cube_enlarge(earth_point(p_lat, p_lng),
                                                metres_chord(p_radius_km * 1000), 3)
                                   @> earth_point(v.latitude, v.longitude)
                             ORDER BY earth_point(v.latitude, v.longitude)
                                      <-> earth_point(p_lat, p_lng)) v
                      JOIN free_slots f ON f.venue_id = v.id
                                       AND f.booking_date = p_date
                                       AND f.slot_minutes = p_duration
                     CROSS JOIN LATERAL unnest(f.start_times, f.prices, f.currencies, f.held_until)
                                        s(start_time, price, currency, held_until)
                     CROSS JOIN LATERAL (SELECT (p_date + s.start_time) AT TIME ZONE v.timezone,
                                                make_interval(mins => v.min_notice_minutes),
                                                make_interval(days => v.booking_window_days))
                                        a(at, notice, booking_window)
                     WHERE v.metres <= p_radius_km * 1000
                       AND s.start_time BETWEEN p_from AND p_to) x) y
     WHERE y.open_so_far <= p_limit
     ORDER BY y.chord, y.start_time, y.resource_id;
END $$;
COMMENT ON FUNCTION search_kept_visit(double precision, double precision, numeric, date, time,
                                      time, integer, integer, timestamptz) IS
    'The kept slots search_free_slots goes through, open or not, each with the next instant time changes it.';

-- The search's answer as match_search_rows gives it, each row with the answer's validator and
-- until when it holds if nothing is written (epoch microseconds, NULL: until a write), all
-- from one snapshot (a STABLE function's statements share its caller's), which is what makes
-- the pair safe to reuse. Without a validator (a date that is not kept and complete) the
-- rows are match_search_rows's and the two are NULL. cgi-bin/search.c asks for it the second
-- time a process is asked a search, and keeps the answer; a search asked once costs only
-- match_search_rows.
CREATE OR REPLACE FUNCTION search_answer(p_lat double precision, p_lng double precision,
                                         p_radius_km numeric, p_date date, p_from time, p_to time,
                                         p_duration integer, p_skill text, p_min_reliability integer,
                                         p_caller uuid, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, eligible bigint, resource_id uuid, resource_name text,
                   resource_type text, venue_id uuid, venue_name text, venue_city text,
                   venue_latitude double precision, venue_longitude double precision,
                   distance_km numeric, start_time text, end_time text, price numeric,
                   currency char(3), validator text, valid_until bigint)
    LANGUAGE plpgsql STABLE
    SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_validator text;
    v_players bigint;
    v_until timestamptz;
    v_seen search_visited_slot[];
BEGIN
    v_validator := search_validator(p_lat, p_lng, p_radius_km, p_date);
    IF v_validator IS NULL THEN
        RETURN QUERY
        SELECT m.*, NULL::text, NULL::bigint
          FROM match_search_rows(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration,
                                 p_skill, p_min_reliability, p_caller, p_limit, p_now) m;
        RETURN;
    END IF;
    SELECT e.eligible, e.until INTO v_players, v_until
      FROM eligible_players_count_until(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability,
                                        p_caller, 100, p_now) e;
    v_seen := ARRAY(SELECT x FROM search_kept_visit(p_lat, p_lng, p_radius_km, p_date, p_from,
                                                   p_to, p_duration, p_limit, p_now) x);
    v_until := least(v_until, (SELECT min(x.next_change) FROM unnest(v_seen) x));
    RETURN QUERY
    SELECT true, v_players, x.resource_id, x.resource_name, x.resource_type, x.venue_id,
           x.venue_name, x.venue_city, x.venue_latitude, x.venue_longitude, x.distance_km,
           x.start_time::text, x.end_time::text, x.price, x.currency,
           v_validator, epoch_us(v_until)
      FROM unnest(v_seen) x
     WHERE x.open
     ORDER BY x.distance_km, x.start_time, x.resource_id;
    IF NOT FOUND THEN
        RETURN QUERY
        SELECT true, NULL::bigint, NULL::uuid, NULL, NULL, NULL::uuid, NULL, NULL,
               NULL::double precision, NULL::double precision, NULL::numeric, NULL, NULL,
               NULL::numeric, NULL::char(3), v_validator, epoch_us(v_until);
    END IF;
END $$;
COMMENT ON FUNCTION search_answer(double precision, double precision, numeric, date, time, time,
                                  integer, text, integer, uuid, integer, timestamptz) IS
    'match_search_rows with the answer''s validator and until when it holds, for an answer to keep.';
