-- 0048_search_answer_kept: a search's answer can be reused, as the slots and the owner's list
-- are (0015), with a validator and the instant time alone changes it.
--
-- A search near a point reads the kept free slots of the venues around it (0019) and counts
-- the players around it (0017). Asked again, it does that work again, although between two
-- writes in its area nothing it shows changes but the clock. A FastCGI worker now keeps a
-- search it is asked a second time (cgi-bin/search.c) and sends it again, after one cheap
-- look-up, for as long as its validator is unchanged and its time has not run out; a client
-- that sends the answer's ETag back gets 304.
--
-- 1. The validator: search_area_versions keeps a version per cell of a grid (a tenth of a
--    degree each way, about 11 km by 8.5 km in Madrid) and per day: a local date for what
--    changes the kept slots of that date (free_slots written: a booking, a payment, a
--    cancellation, the court or its rules changed), '-infinity' for what changes a venue or a
--    court on every date (the venue's or the court's own version: its status, name, place,
--    time zone, notice, booking window, a schedule, a price rule, a holiday), 'infinity' for
--    the players who live there (whatever decides whether a match would invite them). The
--    places stamped are where the venue or the player is, and where it was when it moved.
--    The stamps take values of availability_version_seq in the same transaction as the
--    change, never handed out twice, and a row's only grow, so the sum of the versions of the
--    cells a search's radius touches, for its date and both infinities (with the greatest),
--    is a validator: it grows with every committed change that could change the answer, for
--    as long as the date is kept and complete (free_slot_dates). Kept slots stamp their cell
--    as the transaction commits (a deferred trigger), so that bookings in one cell wait for
--    each other's commit only. Days three days past are forgotten by the sweeper.
--
-- 2. Until when: the kept slots of a date are bookable but for the clock; what the clock does
--    to them is known once they are read. The search reads the venues nearest first and stops
--    once it has `limit` slots open now; an answer read so can only change by time alone when
--    one of the slots it went through (open or not) starts, enters its venue's notice period
--    or booking window, or has a payment hold that lapses. search_kept_visit reads the same
--    slots in the same order as search_free_slots, open or not, each with the first of those
--    instants, and stops where search_free_slots stops (a window count's run condition). The
--    players counted change by time alone when a ban lapses or a rated level unsettles
--    (players.banned_until, rated_level_until): eligible_players_count_until says when. A
--    count that the cells settle (0017: more than the cap live in whole cells inside the
--    radius) counts no player whose standing depends on the clock, so it has no such instant.
--
-- 3. search_answer is the service's search when an answer is to be kept: match_search_rows's
--    rows (the same venues, slots, order and values; tests/40 compares the two) with the
--    validator and until. A date that is not kept and complete (free_slot_dates) has no
--    validator: its rows are match_search_rows's, and they are not kept. match_search_rows,
--    and match_search over it (0044), are unchanged: a search that is not kept pays nothing
--    for the validator.
--
-- Measured on the bench's CITY data (pgbench, one client, prepared, the bench's search): the
-- validator 0.12 ms (SELECT 1: 0.07); match_search_rows 0.59-0.69 ms; search_answer 0.92-1.06
-- ms, paid once per kept answer.

-- ---- 1. the versions of an area ------------------------------------------------------------

-- the grid: cell n of a coordinate spans [n / 10, (n + 1) / 10) degrees
CREATE FUNCTION search_cell(deg double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(deg * 10)::integer;
COMMENT ON FUNCTION search_cell(double precision) IS
    'The grid cell of a latitude or longitude for search_area_versions: a tenth of a degree.';

CREATE TABLE search_area_versions (
    day      date NOT NULL,
    cell_lat integer NOT NULL,
    cell_lng integer NOT NULL,
    version  bigint NOT NULL,
    PRIMARY KEY (day, cell_lat, cell_lng)
);
COMMENT ON TABLE search_area_versions IS
    'Version of what the searches around a grid cell (search_cell) can show, per day; no row = never changed. Days three days past are forgotten (free_slot_dates_keep).';
COMMENT ON COLUMN search_area_versions.day IS
    'A local date: the slots of the venues there on that date; -infinity: the venues and courts there, every date; infinity: the players who live there.';
COMMENT ON COLUMN search_area_versions.cell_lat IS 'Cell of latitude (search_cell).';
COMMENT ON COLUMN search_area_versions.cell_lng IS 'Cell of longitude (search_cell).';
COMMENT ON COLUMN search_area_versions.version IS 'Last value of availability_version_seq stamped there.';

-- Stamps a new version on the cells of the points (p_lats[i], p_lngs[i]) for the days
-- p_days[i], once per cell and day, in key order: two writers that share cells wait for each
-- other instead of deadlocking. Points without a place (NULL) are left out. The value is
-- drawn once the row is locked (ON CONFLICT's update), so of two writers of one row the one
-- that commits last leaves the greater value: a validator never sees a row go back.
CREATE FUNCTION search_area_bump(p_days date[], p_lats double precision[],
                                 p_lngs double precision[]) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO search_area_versions AS a (day, cell_lat, cell_lng, version)
    SELECT k.day, k.cell_lat, k.cell_lng, nextval('availability_version_seq')
      FROM (SELECT DISTINCT p.day, search_cell(p.lat) AS cell_lat, search_cell(p.lng) AS cell_lng
              FROM unnest(p_days, p_lats, p_lngs) p(day, lat, lng)
             WHERE p.day IS NOT NULL AND p.lat IS NOT NULL AND p.lng IS NOT NULL
             ORDER BY 1, 2, 3) k
        ON CONFLICT (day, cell_lat, cell_lng)
        DO UPDATE SET version = nextval('availability_version_seq')
        -- stamped already by this transaction (a court's kept row deleted, then written again)
        WHERE a.xmin <> pg_current_xact_id()::xid;
END $$;
COMMENT ON FUNCTION search_area_bump(date[], double precision[], double precision[]) IS
    'Stamps a new version on the search areas of some points and days.';

-- (0015, restated by 0027) a venue's or a court's version stamps its area on every date
CREATE OR REPLACE FUNCTION version_bump(p_scope uuid) RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    INSERT INTO answer_versions (scope_id, version)
    VALUES (p_scope, nextval('availability_version_seq'))
    ON CONFLICT (scope_id) DO UPDATE SET version = nextval('availability_version_seq');
    -- a venue, or a court's venue (an owner's list has no place)
    PERFORM search_area_bump('{-infinity}', ARRAY[v.latitude], ARRAY[v.longitude])
       FROM venues v
      WHERE v.id IN (p_scope, (SELECT r.venue_id FROM resources r WHERE r.id = p_scope));
END $$;

-- The kept slots of a court on a date written (free_slots_rewrite: a booking, a payment, a
-- cancellation, a lapse the sweeper ends, the court or its rules changed; a date filled by
-- the sweeper) stamp its venue's area on that date, as the transaction commits: every
-- booking of a cell and day stamps the same row, and its lock is then held for the commit
-- alone, not for the rest of the booking's work (4 writers on the courts of one cell and day:
-- 1,500-2,000 bookings a second against 2,200-3,000 without the stamp; 1,400 with a stamp
-- taken at once). Only the kept dates have kept slots, and only their searches are kept, so a
-- booking further ahead stamps nothing. Rows of days past, which the sweeper deletes every
-- day, stamp nothing either.
CREATE FUNCTION search_area_slots_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r free_slots;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    PERFORM search_area_bump(ARRAY[r.booking_date], ARRAY[v.latitude], ARRAY[v.longitude])
       FROM venues v
      WHERE v.id = r.venue_id;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION search_area_slots_changed() IS
    'Deferred row trigger on free_slots: kept slots written stamp their venue''s search area on their date.';
CREATE CONSTRAINT TRIGGER free_slots_search_area_insert
    AFTER INSERT ON free_slots
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION search_area_slots_changed();
CREATE CONSTRAINT TRIGGER free_slots_search_area_delete
    AFTER DELETE ON free_slots
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (OLD.booking_date >= (now() AT TIME ZONE 'UTC')::date - 1)
    EXECUTE FUNCTION search_area_slots_changed();

-- (0019) the versions of days three days past are forgotten with the kept dates before them:
-- no search of such a day is of a kept date, so none is kept with them; one kept before shows
-- no slot (every one has started, in every time zone), or has an until that has passed
CREATE OR REPLACE FUNCTION free_slot_dates_keep(p_courts integer DEFAULT 200, p_days integer DEFAULT 14,
                                     p_now timestamptz DEFAULT now(),
                                     OUT dates_added integer, OUT courts_filled integer)
    LANGUAGE plpgsql
    SET jit = off
AS $$
DECLARE
    first date := (p_now AT TIME ZONE 'UTC')::date - 1;
    filling date;
    after uuid;
    courts uuid[];
BEGIN
    dates_added := 0;
    courts_filled := 0;
    DELETE FROM free_slot_dates WHERE booking_date < first;
    DELETE FROM free_slots WHERE booking_date < first;
    DELETE FROM search_area_versions WHERE day < first - 1 AND day > '-infinity';
    IF (SELECT count(*) FROM free_slot_dates WHERE booking_date <= first + 1 + p_days)
       < p_days + 2 THEN
        LOCK TABLE free_slots IN SHARE MODE;
        INSERT INTO free_slot_dates (booking_date)
        SELECT g::date FROM generate_series(first, first + 1 + p_days, interval '1 day') g
        ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS dates_added = ROW_COUNT;
        RETURN;
    END IF;
    SELECT d.booking_date, d.filled_after INTO filling, after
      FROM free_slot_dates d WHERE NOT d.complete
     ORDER BY d.booking_date LIMIT 1
       FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- no refresh runs meanwhile, and what they committed is read
    LOCK TABLE free_slots IN SHARE MODE;
    courts := ARRAY(SELECT r.id FROM resources r
                     WHERE after IS NULL OR r.id > after
                     ORDER BY r.id LIMIT p_courts);
    PERFORM free_slots_rewrite(courts, ARRAY[filling]);
    courts_filled := cardinality(courts);
    UPDATE free_slot_dates
       SET filled_after = COALESCE(courts[cardinality(courts)], after),
           complete = cardinality(courts) < p_courts
     WHERE booking_date = filling;
    IF courts_filled = 0 THEN
        courts_filled := 1;         -- the date was completed: a step was taken
    END IF;
END $$;

-- Where a venue was, or the venue a court was at, when it moves: the versions above stamp
-- where it is now.
CREATE FUNCTION search_area_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'venues' THEN
        PERFORM search_area_bump('{-infinity}', ARRAY[OLD.latitude], ARRAY[OLD.longitude]);
    ELSE
        PERFORM search_area_bump('{-infinity}', ARRAY[v.latitude], ARRAY[v.longitude])
           FROM venues v WHERE v.id = OLD.venue_id;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION search_area_moved() IS
    'Row trigger on venues and resources: a venue that moves, or a court given to another venue, stamps the area it leaves.';
CREATE TRIGGER venues_search_area_moved AFTER UPDATE OF latitude, longitude ON venues
    FOR EACH ROW
    WHEN (OLD.latitude IS DISTINCT FROM NEW.latitude
          OR OLD.longitude IS DISTINCT FROM NEW.longitude)
    EXECUTE FUNCTION search_area_moved();
CREATE TRIGGER resources_search_area_moved AFTER UPDATE OF venue_id ON resources
    FOR EACH ROW
    WHEN (OLD.venue_id IS DISTINCT FROM NEW.venue_id)
    EXECUTE FUNCTION search_area_moved();

-- The players: a change of anything that decides whether a match would invite a player
-- stamps where the player lives, and where the player lived.
CREATE FUNCTION search_area_players_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM search_area_bump(array_agg('infinity'::date), array_agg(n.home_latitude),
                                 array_agg(n.home_longitude))
           FROM new_rows n;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM search_area_bump(array_agg('infinity'::date), array_agg(o.home_latitude),
                                 array_agg(o.home_longitude))
           FROM old_rows o;
    ELSE
        PERFORM search_area_bump(array_agg('infinity'::date), array_agg(p.lat), array_agg(p.lng))
           FROM old_rows o
           JOIN new_rows n ON n.user_id = o.user_id
          CROSS JOIN LATERAL (VALUES (o.home_latitude, o.home_longitude),
                                     (n.home_latitude, n.home_longitude)) p(lat, lng)
          WHERE (o.home_latitude, o.home_longitude, o.match_notifications, o.skill_level,
                 o.banned_until, o.reliability_score, o.rated_level, o.rated_level_until)
                IS DISTINCT FROM
                (n.home_latitude, n.home_longitude, n.match_notifications, n.skill_level,
                 n.banned_until, n.reliability_score, n.rated_level, n.rated_level_until);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION search_area_players_changed() IS
    'Statement trigger on players: stamps the search areas of the players whose eligibility may have changed.';
CREATE TRIGGER players_search_area_insert AFTER INSERT ON players
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_area_players_changed();
CREATE TRIGGER players_search_area_update AFTER UPDATE ON players
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_area_players_changed();
CREATE TRIGGER players_search_area_delete AFTER DELETE ON players
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_area_players_changed();

-- The validator of a search's answer: the sum of the versions of every cell that its radius
-- touches, for its date and both infinities, and the greatest of them; NULL when the date is
-- not kept and complete (its stamps are not kept up, and its answer is not kept). A row's
-- version only grows (its stamps are drawn with the row locked, so the last to commit is the
-- greatest), so every committed stamp makes the sum greater, whichever commits first; the
-- greatest version alone would miss a stamp of one cell that commits after a greater one of
-- another. The greatest tells apart what rows deleted could make the sum meet again: a day
-- forgotten (it is past, its searches find nothing), a database emptied (every stamp after it
-- is greater than any before). The cells are those of the radius's bounding box on
-- earthdistance's sphere, a metre to spare: its latitudes, and the longitudes of the widest
-- part of the circle, every longitude when the circle reaches a pole or the antimeridian. The
-- primary key is read in one range per day, from the box's south-west cell to its north-east
-- one: the cells of a city, and every cell of its rows of latitude further on where venues
-- and players are (a grid that spans a continent would want a row of latitude read at a time;
-- one statement per row cost 0.23 ms a search where the one range costs 0.12, SELECT 1 0.07,
-- on the bench's CITY).
CREATE FUNCTION search_validator(p_lat double precision, p_lng double precision,
                                 p_radius_km numeric, p_date date) RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    angle double precision := (p_radius_km::double precision * 1000 + 1) / public.earth();
    dlat double precision := degrees(angle);
    dlng double precision;
    lng_lo integer := search_cell(-180);
    lng_hi integer := search_cell(180);
    v_sum numeric;
    v_max bigint;
BEGIN
    -- only a kept date's answer is kept: only its stamps are kept up
    IF NOT EXISTS (SELECT FROM free_slot_dates d WHERE d.booking_date = p_date AND d.complete) THEN
        RETURN NULL;
    END IF;
    IF angle < pi() / 2 - radians(abs(p_lat)) THEN
        dlng := degrees(asin(sin(angle) / cos(radians(p_lat))));
        IF p_lng - dlng >= -180 AND p_lng + dlng <= 180 THEN
            lng_lo := search_cell(p_lng - dlng);
            lng_hi := search_cell(p_lng + dlng);
        END IF;
    END IF;
    SELECT sum(a.version), max(a.version) INTO v_sum, v_max
      FROM search_area_versions a
     WHERE a.day IN (p_date, '-infinity', 'infinity')
       AND a.cell_lat BETWEEN search_cell(p_lat - dlat) AND search_cell(p_lat + dlat)
       AND a.cell_lng BETWEEN lng_lo AND lng_hi;
    RETURN COALESCE(v_sum, 0) || '.' || COALESCE(v_max, 0);
END $$;
COMMENT ON FUNCTION search_validator(double precision, double precision, numeric, date) IS
    'The validator of a search''s answer: the sum and the greatest of the versions of search_area_versions around it; NULL when its date is not kept and complete.';

-- ---- 2. until when -------------------------------------------------------------------------

-- search_free_slots's slots, and the ones it passes over: every slot of the venues nearest
-- first that it goes through, open at p_now or not, in its order, up to the one after which
-- it has p_limit open slots (the window count's run condition stops the scan there), each
-- with the first instant after p_now at which time alone changes it: it starts, enters the
-- notice period or the booking window, or the payment hold on it lapses.
CREATE TYPE search_visited_slot AS (
    resource_id uuid, resource_name text, resource_type text, venue_id uuid, venue_name text,
    venue_city text, venue_latitude double precision, venue_longitude double precision,
    distance_km numeric, start_time time, end_time time, price numeric, currency char(3),
    open boolean, next_change timestamptz);
COMMENT ON TYPE search_visited_slot IS
    'A slot search_kept_visit went through: search_free_slots''s columns, whether it is open, and the next instant time changes it.';

CREATE FUNCTION search_kept_visit(p_lat double precision, p_lng double precision,
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

-- The players a match opened around (p_lat, p_lng) would invite, as eligible_players_count
-- counts them, and the first instant after p_now at which time alone may change that count
-- (NULL: none): a ban that lapses, or a rated level that unsettles (player_level), of a
-- player the count passed over or counted. When the cells settle it at the cap, no player
-- whose standing depends on the clock is among those the cells count, so there is none.
CREATE FUNCTION eligible_players_count_until(p_lat double precision, p_lng double precision,
                                             p_radius_km numeric, p_skill text,
                                             p_min_reliability integer, p_except uuid,
                                             p_cap integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (eligible bigint, until timestamptz)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF COALESCE(eligible_players_cells(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability,
                                       p_cap), 0) > p_cap THEN
        RETURN QUERY SELECT p_cap::bigint, NULL::timestamptz;
        RETURN;
    END IF;
    eligible := eligible_players_count_walk(p_lat, p_lng, p_radius_km, p_skill,
                                           p_min_reliability, p_except, p_cap, p_now);
    -- every player of the radius whose standing the clock can change: with fewer than the
    -- cap, any of them (a lapsing ban adds one); at the cap, those a level change can take
    -- out (one more does not change a count at the cap), so every rated player counts here
    SELECT min(least(CASE WHEN eligible < p_cap AND p.banned_until > p_now THEN p.banned_until END,
                     CASE WHEN p.rated_level_until > p_now THEN p.rated_level_until END))
      INTO until
      FROM players p
     WHERE p.home_latitude IS NOT NULL
       AND p.match_notifications
       AND earth_box(earth_point(p_lat, p_lng), p_radius_km * 1000)
           @> earth_point(p.home_latitude, p.home_longitude)
       AND earth_distance(earth_point(p_lat, p_lng), earth_point(p.home_latitude, p.home_longitude))
           <= p_radius_km * 1000
       AND p.reliability_score >= p_min_reliability
       AND p.user_id <> p_except
       AND ((eligible < p_cap AND p.banned_until > p_now) OR p.rated_level_until > p_now);
    RETURN NEXT;
END $$;
COMMENT ON FUNCTION eligible_players_count_until(double precision, double precision, numeric,
                                                 text, integer, uuid, integer, timestamptz) IS
    'eligible_players_count, and the first instant after p_now at which time alone may change it.';

-- ---- 3. the answer ---------------------------------------------------------------------------

-- The search's answer as match_search_rows gives it, each row with the answer's validator and
-- until when it holds if nothing is written (epoch microseconds, NULL: until a write), all
-- from one snapshot (a STABLE function's statements share its caller's), which is what makes
-- the pair safe to reuse. Without a validator (a date that is not kept and complete) the
-- rows are match_search_rows's and the two are NULL.
CREATE FUNCTION search_answer(p_lat double precision, p_lng double precision,
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
