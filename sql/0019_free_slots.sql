-- 0019_free_slots: the search reads free slots kept ready instead of working out every
-- court's day.
--
-- A CITY search spent about 2.2 ms of its 3 ms in PostgreSQL computing slots: for each court
-- of each venue it visited, the court, venue, schedule, price rules, holiday and requests,
-- one probe per slot (about 44 us per court). Yet between two writes nothing of a court's
-- day changes but the clock.
--
-- 1. court_day_slots splits a court's day in what does not depend on when it is read (the
--    slots, prices, the instant each starts, the venue's notice and booking window, whether
--    a request takes it for good, until when a payment hold keeps it) and what does
--    (slot_open, the clock). resource_slots is now the two together: the slots endpoint, match
--    creation and the kept slots read one definition.
--
-- 2. free_slots keeps, for every date of free_slot_dates, one row per court with its slots
--    that are bookable but for the clock (start times, prices, payment holds' expiries).
--    Triggers refresh a court's dates in the same transaction as every write that can
--    change them: a request taking, moving or freeing time, a payment hold's expiry, the
--    court (status, slot length, name, type), its schedule and price rules, the venue's
--    status and its holidays. The venue's time zone, notice and booking window are read from
--    the venue as the search runs, with slot_open at that instant, so a slot that starts,
--    enters the notice period or the booking window, or whose hold lapses, changes the next
--    answer without any write.
--
--    Two refreshes of one court and date wait for each other on that date's row of
--    availability_day_versions (which they stamp: its slot answer changes too), and each
--    reads what is committed once it holds it. free_slot_dates_keep, which adds dates and
--    fills them for every court a batch at a time, takes free_slots in SHARE mode: it waits
--    for every transaction that refreshed something, and those that come after it wait for
--    it and then see what it wrote.
--
--    Two changes need no refresh because no answer from then on can tell: a request
--    cancelled after its payment hold lapsed (the kept slot's hold is already over) or after
--    it ended (the slots it overlapped have all started). The sweeper's batches of lapsed
--    holds stay as cheap as before.
--
-- 3. The search reads free_slots when its date is kept and complete (the sweeper keeps
--    yesterday to 14 days ahead, in UTC dates, which covers every venue's today), and works
--    the slots out as before otherwise: a date further ahead, or a database whose sweeper
--    has not run for days, is slower, never wrong. free_slots_drift() lists what the kept
--    rows and the computed ones disagree on; the tests and the lifecycle model test call it.
--    On the bench's CITY data (40,000 courts) the kept rows take about 350 MB for 16 dates,
--    and filling a date takes about 4 s, in batches.

-- ---- 1. a court's day, and the clock -------------------------------------------------------

-- Every slot of a court on a local date, whatever the time: when it starts, the venue's
-- notice and booking window, and what holds it. bookable is false when nothing but a new
-- rule or a freed request could make it bookable: the court or venue not ACTIVE, no price,
-- a live request other than a payment hold on it. held_until is the latest expiry of the
-- payment holds on it (a hold whose expiry has passed is not live, as before).
CREATE FUNCTION court_day_slots(p_resource uuid, p_date date)
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
              LEFT JOIN LATERAL (SELECT 1 AS found FROM price_rules p
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
COMMENT ON FUNCTION court_day_slots(uuid, date) IS
    'Every slot of a court on a local date with what does not depend on the time of reading; slot_open adds the clock.';

-- Whether a slot that is bookable but for the clock may be booked at p_now: it has not
-- started, its notice has not begun, it is inside the booking window, and no payment hold on
-- it is live. (timestamptz + interval depends on the session's time zone, hence STABLE; the
-- programs run in UTC.)
CREATE FUNCTION slot_open(p_starts_at timestamptz, p_notice interval, p_booking_window interval,
                          p_held_until timestamptz, p_now timestamptz)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN p_starts_at > p_now
       AND (p_notice IS NULL OR p_starts_at >= p_now + p_notice)
       AND (p_booking_window IS NULL OR p_starts_at <= p_now + p_booking_window)
       AND (p_held_until IS NULL OR p_held_until <= p_now);
COMMENT ON FUNCTION slot_open(timestamptz, interval, interval, timestamptz, timestamptz) IS
    'Whether a slot bookable but for the clock is open at p_now (court_day_slots, free_slots).';

-- 0012's rules, unchanged, read from the two parts above.
CREATE OR REPLACE FUNCTION resource_slots(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (start_time time, end_time time, available boolean, price numeric, currency char(3))
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT c.start_time, c.end_time,
           c.bookable AND slot_open(c.starts_at, c.notice, c.booking_window, c.held_until, p_now),
           c.price, c.currency
      FROM court_day_slots(p_resource, p_date) c
     ORDER BY c.start_time;
END;

-- ---- 2. the kept slots -----------------------------------------------------------------------

CREATE TABLE free_slot_dates (
    booking_date date PRIMARY KEY,
    filled_after uuid,
    complete     boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE free_slot_dates IS
    'Local dates whose slots free_slots keeps: refreshed by every write from the moment they are here, searched from free_slots once complete; the search works out any other date.';
COMMENT ON COLUMN free_slot_dates.filled_after IS
    'While the date is being filled: the courts up to this id have been (free_slot_dates_keep).';

-- One row per court and kept date with at least one slot bookable but for the clock, its
-- slots in parallel arrays in start order (a row per slot would cost about five times the
-- space and the writes).
CREATE TABLE free_slots (
    venue_id      uuid NOT NULL,
    booking_date  date NOT NULL,
    slot_minutes  integer NOT NULL,
    resource_id   uuid NOT NULL REFERENCES resources ON DELETE CASCADE,
    resource_name text NOT NULL,
    resource_type text NOT NULL,
    start_times   time[] NOT NULL,
    prices        numeric(12, 2)[] NOT NULL,
    currencies    char(3)[] NOT NULL,
    held_until    timestamptz[] NOT NULL,
    PRIMARY KEY (venue_id, booking_date, slot_minutes, resource_id),
    CONSTRAINT free_slots_arrays_check CHECK (
        cardinality(start_times) > 0
        AND cardinality(prices) = cardinality(start_times)
        AND cardinality(currencies) = cardinality(start_times)
        AND cardinality(held_until) = cardinality(start_times))
);
COMMENT ON TABLE free_slots IS
    'Per court and date of free_slot_dates, the slots bookable but for the clock (court_day_slots), kept by triggers in the same transaction as every change; a search tests slot_open on them.';
COMMENT ON COLUMN free_slots.held_until IS
    'Per slot, until when a payment hold keeps it (NULL: none).';
CREATE UNIQUE INDEX free_slots_resource_idx ON free_slots (resource_id, booking_date);
CREATE INDEX free_slots_date_idx ON free_slots (booking_date);

-- The rows free_slots should hold for courts p_courts on the kept dates p_dates (NULL: every
-- kept date), worked out from court_day_slots.
CREATE FUNCTION free_slots_of(p_courts uuid[], p_dates date[] DEFAULT NULL)
    RETURNS SETOF free_slots
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT r.venue_id, d.booking_date, r.slot_duration_minutes, r.id, r.name, r.type,
           s.start_times, s.prices, s.currencies, s.held_until
      FROM resources r
     CROSS JOIN free_slot_dates d
     CROSS JOIN LATERAL (
            SELECT array_agg(c.start_time ORDER BY c.start_time) AS start_times,
                   array_agg(c.price ORDER BY c.start_time) AS prices,
                   array_agg(c.currency ORDER BY c.start_time) AS currencies,
                   array_agg(c.held_until ORDER BY c.start_time) AS held_until
              FROM court_day_slots(r.id, d.booking_date) c
             WHERE c.bookable
            HAVING count(*) > 0) s
     WHERE r.id = ANY (p_courts)
       AND r.status = 'ACTIVE'
       AND (p_dates IS NULL OR d.booking_date = ANY (p_dates));
END;
COMMENT ON FUNCTION free_slots_of(uuid[], date[]) IS
    'The rows free_slots should hold for some courts on some kept dates (NULL: all of them).';

-- Replaces the kept rows of courts p_courts on dates p_dates (NULL: every kept date) with
-- what free_slots_of works out; the callers hold the locks that make this safe.
CREATE FUNCTION free_slots_rewrite(p_courts uuid[], p_dates date[]) RETURNS void
    LANGUAGE sql
BEGIN ATOMIC
    DELETE FROM free_slots f
     WHERE f.resource_id = ANY (p_courts)
       AND (p_dates IS NULL OR f.booking_date = ANY (p_dates));
    INSERT INTO free_slots SELECT * FROM free_slots_of(p_courts, p_dates);
END;
COMMENT ON FUNCTION free_slots_rewrite(uuid[], date[]) IS
    'Replaces the kept rows of some courts on some dates with the worked-out ones (callers lock).';

-- Works out again the kept slots of courts p_courts on dates p_dates (NULL: every kept date).
-- (Without JIT: the planner counts a thousand slots per court and date, and would compile,
-- in half a second, statements that run in a millisecond.)
-- The lock on free_slots is taken before anything is read (free_slot_dates_keep waits for it,
-- or this waits for that); each court and date is then locked by stamping its version, in
-- key order; the delete and the insert that follow read what is committed by then.
CREATE FUNCTION free_slots_refresh(p_courts uuid[], p_dates date[] DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    SET jit = off
AS $$
BEGIN
    LOCK TABLE free_slots IN ROW EXCLUSIVE MODE;
    INSERT INTO availability_day_versions (resource_id, booking_date, version)
    SELECT c.id, d.booking_date, nextval('availability_version_seq')
      FROM (SELECT DISTINCT u.id FROM unnest(p_courts) u(id) WHERE u.id IS NOT NULL) c
     CROSS JOIN free_slot_dates d
     WHERE p_dates IS NULL OR d.booking_date = ANY (p_dates)
     ORDER BY c.id, d.booking_date
        ON CONFLICT (resource_id, booking_date)
        DO UPDATE SET version = nextval('availability_version_seq');
    IF FOUND THEN                   -- a kept date is concerned
        PERFORM free_slots_rewrite(p_courts, p_dates);
    END IF;
END $$;
COMMENT ON FUNCTION free_slots_refresh(uuid[], date[]) IS
    'Works out again the kept slots of some courts on some kept dates (NULL: all of them).';

-- Keeps the dates from p_now's UTC yesterday to p_days days after its UTC today, which
-- covers every venue's today, one short step per call, so that no write waits long:
--   1. dates before are forgotten, and missing dates are added, empty: from the moment
--      this commits every refresh includes them (it first waits for every transaction that
--      refreshed kept slots, and those that come after wait for it);
--   2. otherwise the next p_courts courts, in id order, are filled on a date being filled,
--      with free_slots in SHARE mode: no refresh runs meanwhile (writes wait for a batch of
--      courts, not for a whole date), and what they committed is read. The date is
--      complete, and searched from free_slots, once its last court is filled.
-- Answers the dates added and the courts filled; run by the sweeper until both are 0. A date
-- not complete yet is searched the slow way.
CREATE FUNCTION free_slot_dates_keep(p_courts integer DEFAULT 200, p_days integer DEFAULT 14,
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
COMMENT ON FUNCTION free_slot_dates_keep(integer, integer, timestamptz) IS
    'One step of keeping free_slots for UTC yesterday to p_days days ahead: dates added, or courts filled on a date.';

-- What the kept slots and the computed ones disagree on, slot by slot, for slots that can
-- still open after p_now (a hold already over counts as none). Empty when free_slots is right.
CREATE FUNCTION free_slots_drift(p_now timestamptz DEFAULT now())
    RETURNS TABLE (kept boolean, resource_id uuid, booking_date date, start_time time)
    LANGUAGE sql STABLE
    SET jit = off
BEGIN ATOMIC
    SELECT bool_and(x.kept), x.resource_id, x.booking_date, x.start_time
      FROM (SELECT r.kept, r.venue_id, r.booking_date, r.slot_minutes, r.resource_id,
                   r.resource_name, r.resource_type, s.start_time, s.price, s.currency,
                   CASE WHEN s.held_until > p_now THEN s.held_until END AS held_until
              FROM (SELECT true AS kept, f.*
                      FROM free_slots f
                      JOIN free_slot_dates d ON d.booking_date = f.booking_date
                    UNION ALL
                    SELECT false, c.* FROM free_slots_of(ARRAY(SELECT id FROM resources)) c) r
              JOIN venues v ON v.id = r.venue_id
             CROSS JOIN LATERAL unnest(r.start_times, r.prices, r.currencies, r.held_until)
                                s(start_time, price, currency, held_until)
             WHERE (r.booking_date + s.start_time) AT TIME ZONE v.timezone > p_now) x
     GROUP BY x.venue_id, x.booking_date, x.slot_minutes, x.resource_id, x.resource_name,
              x.resource_type, x.start_time, x.price, x.currency, x.held_until
    HAVING count(*) FILTER (WHERE x.kept) <> count(*) FILTER (WHERE NOT x.kept)
     ORDER BY 2, 3, 4, 1;
END;
COMMENT ON FUNCTION free_slots_drift(timestamptz) IS
    'Kept slots (kept) and computed ones (not kept) that differ, for slots starting after p_now; empty when free_slots is right.';

-- ---- the triggers --------------------------------------------------------------------------

-- A request: its court and date before and after, unless the change cannot alter a search
-- from now on (see the top of this file).
CREATE FUNCTION free_slots_request_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    same_place boolean := TG_OP = 'UPDATE'
        AND OLD.resource_id = NEW.resource_id AND OLD.booking_date = NEW.booking_date
        AND OLD.start_time = NEW.start_time AND OLD.end_time = NEW.end_time;
BEGIN
    IF same_place AND (
        -- nothing the slots read has changed
        (OLD.status = NEW.status AND OLD.expires_at IS NOT DISTINCT FROM NEW.expires_at)
        -- between two statuses that hold the court for good (paid, matched, completed, ...)
        OR (OLD.status NOT IN ('PENDING_PAYMENT', 'CANCELLED')
            AND NEW.status NOT IN ('PENDING_PAYMENT', 'CANCELLED'))
        OR (OLD.status = 'CANCELLED' AND NEW.status = 'CANCELLED')
        -- cancelled once its hold is over or it has ended
        OR (NEW.status = 'CANCELLED'
            AND ((OLD.status = 'PENDING_PAYMENT' AND OLD.expires_at <= now())
                 OR OLD.ends_at <= now()))) THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM free_slots_refresh(ARRAY[OLD.resource_id], ARRAY[OLD.booking_date]);
    END IF;
    IF TG_OP <> 'DELETE' AND NOT same_place THEN
        PERFORM free_slots_refresh(ARRAY[NEW.resource_id], ARRAY[NEW.booking_date]);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION free_slots_request_changed() IS
    'Row trigger on match_requests: refreshes the kept slots of the court and date a request holds or held.';
CREATE TRIGGER match_requests_free_slots
    AFTER INSERT OR DELETE
       OR UPDATE OF status, expires_at, resource_id, booking_date, start_time, end_time
    ON match_requests
    FOR EACH ROW EXECUTE FUNCTION free_slots_request_changed();

-- A court, its schedule or its price rules (TG_ARGV[0] names the court's column): every
-- kept date of the court before and after.
CREATE FUNCTION free_slots_court_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM free_slots_refresh(ARRAY(
        SELECT DISTINCT c.id
          FROM (SELECT (to_jsonb(OLD) ->> TG_ARGV[0])::uuid WHERE TG_OP <> 'INSERT'
                UNION ALL
                SELECT (to_jsonb(NEW) ->> TG_ARGV[0])::uuid WHERE TG_OP <> 'DELETE') c(id)
         ORDER BY c.id));
    RETURN NULL;
END $$;
COMMENT ON FUNCTION free_slots_court_changed() IS
    'Row trigger: refreshes the kept slots of the court a written row belongs to.';
CREATE TRIGGER resources_free_slots AFTER INSERT ON resources
    FOR EACH ROW EXECUTE FUNCTION free_slots_court_changed('id');
CREATE TRIGGER resources_free_slots_update AFTER UPDATE ON resources
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.venue_id IS DISTINCT FROM NEW.venue_id
          OR OLD.slot_duration_minutes IS DISTINCT FROM NEW.slot_duration_minutes
          OR OLD.name IS DISTINCT FROM NEW.name
          OR OLD.type IS DISTINCT FROM NEW.type)
    EXECUTE FUNCTION free_slots_court_changed('id');
CREATE TRIGGER resource_schedules_free_slots AFTER INSERT OR UPDATE OR DELETE ON resource_schedules
    FOR EACH ROW EXECUTE FUNCTION free_slots_court_changed('resource_id');
CREATE TRIGGER price_rules_free_slots AFTER INSERT OR UPDATE OR DELETE ON price_rules
    FOR EACH ROW EXECUTE FUNCTION free_slots_court_changed('resource_id');

-- A venue or its holidays: every court of the venue, on every kept date (a venue's rules) or
-- on the holiday's dates.
CREATE FUNCTION free_slots_venue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'venues' THEN
        PERFORM free_slots_refresh(ARRAY(SELECT r.id FROM resources r
                                          WHERE r.venue_id = NEW.id ORDER BY r.id));
        RETURN NULL;
    END IF;
    -- venue_holidays
    PERFORM free_slots_refresh(
        ARRAY(SELECT r.id FROM resources r
               WHERE r.venue_id IN (SELECT OLD.venue_id WHERE TG_OP <> 'INSERT'
                                    UNION SELECT NEW.venue_id WHERE TG_OP <> 'DELETE')
               ORDER BY r.id),
        ARRAY(SELECT OLD.date WHERE TG_OP <> 'INSERT'
              UNION SELECT NEW.date WHERE TG_OP <> 'DELETE'));
    RETURN NULL;
END $$;
COMMENT ON FUNCTION free_slots_venue_changed() IS
    'Row trigger on venues and venue_holidays: refreshes the kept slots of the venue''s courts.';
CREATE TRIGGER venues_free_slots AFTER UPDATE ON venues
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION free_slots_venue_changed();
CREATE TRIGGER venue_holidays_free_slots AFTER INSERT OR UPDATE OR DELETE ON venue_holidays
    FOR EACH ROW EXECUTE FUNCTION free_slots_venue_changed();

-- ---- 3. the search -------------------------------------------------------------------------

-- earthdistance's sec_to_gc and gc_to_sec (chord <-> great-circle metres), restated as
-- expressions the planner inlines: those are STRICT SQL functions around a CASE, which it
-- does not inline, so every call plans and runs a statement of its own (earth_distance
-- and earth_box call them: about 10 us a venue, and 0.25 ms per search for the box).
CREATE FUNCTION chord_metres(chord double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN chord < 0 THEN 0::float8
                WHEN chord / (2 * public.earth()) > 1 THEN pi() * public.earth()
                ELSE 2 * public.earth() * asin(chord / (2 * public.earth())) END;
COMMENT ON FUNCTION chord_metres(double precision) IS
    'Great-circle metres of a chord between two earth points (sec_to_gc, inlinable).';

CREATE FUNCTION metres_chord(metres double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN metres < 0 THEN 0::float8
                WHEN metres / public.earth() > pi() THEN 2 * public.earth()
                ELSE 2 * public.earth() * sin(metres / (2 * public.earth())) END;
COMMENT ON FUNCTION metres_chord(double precision) IS
    'Chord of a great-circle distance in metres (gc_to_sec, inlinable).';

-- search_slots (0007) from the kept slots: the same venues in the same order, each venue's
-- kept courts of the date and slot length, their slots in the time range that are open at
-- p_now under the venue's rules. Only for a kept date.
CREATE FUNCTION search_free_slots(p_lat double precision, p_lng double precision,
                                  p_radius_km numeric, p_date date, p_from time, p_to time,
                                  p_duration integer, p_limit integer, p_now timestamptz DEFAULT now())
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
             CROSS JOIN LATERAL unnest(f.start_times, f.prices, f.currencies, f.held_until)
                                s(start_time, price, currency, held_until)
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

-- search_slots as it stands (0007, earth_point since 0009), copied under the name
-- search_slots_computed from its own definition (the body names its parameters after the
-- function), for a date that is not kept.
DO $$
BEGIN
    EXECUTE regexp_replace(pg_get_functiondef('search_slots(double precision, double precision,
                               numeric, date, time, time, integer, integer, timestamptz)'::regprocedure),
                           '\msearch_slots\M', 'search_slots_computed', 'g');
END $$;
COMMENT ON FUNCTION search_slots_computed(double precision, double precision, numeric, date,
                                          time, time, integer, integer, timestamptz) IS
    'search_slots worked out court by court, for a date free_slots does not keep.';

-- search_slots keeps its signature (match_search reads it) and reads the kept slots when the
-- date is kept; otherwise it works them out as before (search_slots_computed).
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

-- the dates of today's window, filled for the courts there are
DO $$
BEGIN
    LOOP
        EXIT WHEN (SELECT k.dates_added + k.courts_filled FROM free_slot_dates_keep() k) = 0;
    END LOOP;
END $$;
