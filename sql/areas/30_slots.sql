-- 30_slots: every slot of a court on a date, its price and whether it may be booked, defined
-- once, and the free slots kept ready for the search. The slots answer (slot_answer,
-- sql/areas/20_versions.sql), the hold that books a slot (match_hold, sql/areas/60_lifecycle.sql)
-- and the search (sql/areas/85_search.sql) all come from court_day_slots, so they always agree.
--
-- The rules:
--  * slots run back to back from the day's opening time by slot_duration_minutes and end by
--    closing;
--  * a price rule covers a slot when start_time <= slot start < end_time; on a venue holiday a
--    covering HOLIDAY rule wins, otherwise the WEEKDAY (Mon-Fri) or WEEKEND (Sat, Sun) one;
--  * a slot is unavailable when it has started (venue time zone), when it starts within the
--    venue's notice or beyond its booking window, when the court or the venue is not ACTIVE,
--    when no rule covers it (price null), when a live request holds it, or when a block of
--    the club closes it (court_blocks); a PENDING_PAYMENT hold past its expires_at is not
--    live, whether or not the sweeper has ended it.
--
-- A court's day is split in what does not depend on when it is read (court_day_slots) and the
-- clock (slot_open); resource_slots is the two together. free_slots keeps, for every date of
-- free_slot_dates, one row per court with its slots that are bookable but for the clock, so
-- that a search reads them instead of working out every court's day; triggers rewrite them in
-- the same transaction as every write that can change them. Each rewrite stamps its court and
-- date in availability_day_versions, which is also its lock, and free_slots written stamps the
-- search areas (sql/areas/20_versions.sql). Relies on sql/areas/10_basics.sql (api_secs_time).

-- ---- a court's day, and the clock --------------------------------------------------------------

-- The lock of one court and local date, held to the end of the transaction: every write that
-- puts something on a court's day (a hold, match_hold in sql/areas/60_lifecycle.sql; a block,
-- sql/areas/67_desk.sql) takes it before it reads what is there, so that a hold and a block
-- of the same time are never both written. A slot and a block end on their own date, so the
-- day is the whole key.
CREATE OR REPLACE FUNCTION court_day_lock(p_court uuid, p_date date) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(p_court::text), p_date - date '2000-01-01');
END $$;
COMMENT ON FUNCTION court_day_lock(uuid, date) IS
    'Locks one court''s local date until the transaction ends (holds and blocks on it queue).';

-- Whether a slot that is bookable but for the clock may be booked at p_now: it has not
-- started, its notice has not begun, it is inside the booking window, and no payment hold on
-- it is live. (timestamptz + interval depends on the session's time zone, hence STABLE; the
-- programs run in UTC.)
CREATE OR REPLACE FUNCTION slot_open(p_starts_at timestamptz, p_notice interval, p_booking_window interval,
                                     p_held_until timestamptz, p_now timestamptz)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN p_starts_at > p_now
       AND (p_notice IS NULL OR p_starts_at >= p_now + p_notice)
       AND (p_booking_window IS NULL OR p_starts_at <= p_now + p_booking_window)
       AND (p_held_until IS NULL OR p_held_until <= p_now);
COMMENT ON FUNCTION slot_open(timestamptz, interval, interval, timestamptz, timestamptz) IS
    'Whether a slot bookable but for the clock is open at p_now (court_day_slots, free_slots).';

-- Every slot of a court on a local date, whatever the time: when it starts, the venue's notice
-- and booking window, and what holds it. bookable is false when nothing but a new rule or a
-- freed request could make it bookable: the court or venue not ACTIVE, no price, a live request
-- other than a payment hold on it. held_until is the latest expiry of the payment holds on it.
-- Every slot of the service comes from here: the slots answer, the kept free slots
-- (free_slots_of), the hold that checks the slot it books (match_hold), and the search on a
-- date that is not kept.
--
-- The court's price rules and its requests are read once for the day, as two MATERIALIZED
-- common table expressions, rather than probed for each slot; each slot picks from those few
-- rows in memory:
--   - rules: every price rule of the court (a court has a handful). The rule of a slot is of
--     the day's type, or HOLIDAY on a venue holiday (first), covering the slot's start. "The
--     court has a price rule at all" reads the same rows.
--   - held: the court's requests that are not CANCELLED and overlap the local day
--     [p_date 00:00, p_date + 1 00:00), one probe of the no-double-booking index, and its
--     blocks on the day, one probe of court_blocks_no_overlap; a block takes a slot as a
--     booked request does. A slot of the
--     day lies within that range (a closing time of 24:00 ends the last slot at its end, which
--     the range excludes as the slot does), so every request overlapping a slot is among them;
--     a slot is taken, or held until the latest expiry, by the ones that overlap it.
-- The function is one SELECT, which the planner inlines where it is called (the expressions
-- are planned with the calling statement; tests/06-schema.bats checks it).
CREATE OR REPLACE FUNCTION court_day_slots(p_resource uuid, p_date date)
    RETURNS TABLE (start_time time, end_time time, price numeric, currency char(3),
                   starts_at timestamptz, notice interval, booking_window interval,
                   held_until timestamptz, bookable boolean)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH rules AS MATERIALIZED (
            SELECT p.day_type, p.start_time, p.end_time, p.price, p.currency
              FROM price_rules p
             WHERE p.resource_id = p_resource),
         -- the requests holding part of the day: for good, or a payment hold until its expiry;
         -- and the club's blocks, for good (sql/areas/67_desk.sql)
         held AS MATERIALIZED (
            SELECT tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time) AS span,
                   m.status = 'PENDING_PAYMENT' AS pending,
                   m.expires_at
              FROM match_requests m
             WHERE m.resource_id = p_resource
               AND m.status <> 'CANCELLED'
               AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
                   && tsrange(p_date, p_date + 1)
            UNION ALL
            SELECT tsrange(b.block_date + b.start_time, b.block_date + b.end_time), false, NULL
              FROM court_blocks b
             WHERE b.resource_id = p_resource
               AND tsrange(b.block_date + b.start_time, b.block_date + b.end_time)
                   && tsrange(p_date, p_date + 1))
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
                   r.status = 'ACTIVE' AND v.status = 'ACTIVE' AND EXISTS (SELECT FROM rules)
                       AS bookable,
                   hol.found IS NOT NULL AS holiday,
                   CASE WHEN extract(isodow FROM p_date) IN (6, 7) THEN 'WEEKEND' ELSE 'WEEKDAY' END
                       AS day_type
              FROM resources r
              JOIN venues v ON v.id = r.venue_id
              JOIN resource_schedules s ON s.resource_id = r.id
                                       AND s.day_of_week = extract(isodow FROM p_date)::smallint
                                       AND s.opening_time IS NOT NULL
              LEFT JOIN LATERAL (SELECT 1 AS found FROM venue_holidays h
                                  WHERE h.venue_id = v.id AND h.date = p_date LIMIT 1) hol ON true
             WHERE r.id = p_resource) d
     CROSS JOIN LATERAL generate_series(d.open_s, d.close_s - d.dur, d.dur) AS g(s)
      LEFT JOIN LATERAL (
            SELECT p.price, p.currency
              FROM rules p
             WHERE (p.day_type = d.day_type OR (d.holiday AND p.day_type = 'HOLIDAY'))
               AND p.start_time <= api_secs_time(g.s)
               AND api_secs_time(g.s) < p.end_time
             ORDER BY p.day_type = 'HOLIDAY' DESC
             LIMIT 1) pr ON true
     CROSS JOIN LATERAL (
            SELECT bool_or(NOT q.pending) AS taken,
                   max(q.expires_at) FILTER (WHERE q.pending) AS held_until
              FROM held q
             WHERE q.span && tsrange(p_date + api_secs_time(g.s),
                                     p_date + api_secs_time(g.s + d.dur))) req
     ORDER BY g.s;
END;
COMMENT ON FUNCTION court_day_slots(uuid, date) IS
    'Every slot of a court on a local date with what does not depend on the time of reading; slot_open adds the clock.';

-- court_day_slots with the clock (slot_open): the slots of a court on a date as the API lists
-- them at p_now.
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
COMMENT ON FUNCTION resource_slots(uuid, date, timestamptz) IS
    'Every slot of a court on a local date with availability and price, as of p_now.';

-- ---- the kept free slots -----------------------------------------------------------------------
-- Two refreshes of one court and date wait for each other on that date's row of
-- availability_day_versions (which they stamp: its slot answer changes too), and each reads
-- what is committed once it holds it. free_slot_dates_keep, which adds dates and fills them
-- for every court a batch at a time, takes free_slots in SHARE mode: it waits for every
-- transaction that refreshed something, and those that come after it wait for it and then see
-- what it wrote. The venue's time zone, notice and booking window are read from the venue as
-- the search runs, with slot_open at that instant, so a slot that starts, enters the notice
-- period or the booking window, or whose hold lapses, changes the next answer without any
-- write.

-- The rows free_slots should hold for courts p_courts on the kept dates p_dates (NULL: every
-- kept date), worked out from court_day_slots.
CREATE OR REPLACE FUNCTION free_slots_of(p_courts uuid[], p_dates date[] DEFAULT NULL)
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

-- Works out again the kept slots of courts p_courts on dates p_dates (NULL: every kept date).
-- (Without JIT: the planner counts a thousand slots per court and date, and would compile
-- statements that take far longer to compile than to run.)
-- The lock on free_slots is taken before anything is read (free_slot_dates_keep waits for it,
-- or this waits for that); each court and date is then locked by stamping its version, in
-- key order; the delete and the insert that follow read what is committed by then.
CREATE OR REPLACE FUNCTION free_slots_refresh(p_courts uuid[], p_dates date[] DEFAULT NULL) RETURNS void
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

-- What the kept slots and the computed ones disagree on, slot by slot, for slots that can
-- still open after p_now (a hold already over counts as none). Empty when free_slots is right.
CREATE OR REPLACE FUNCTION free_slots_drift(p_now timestamptz DEFAULT now())
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

-- A court, its schedule or its price rules (TG_ARGV[0] names the court's column): every
-- kept date of the court before and after.
CREATE OR REPLACE FUNCTION free_slots_court_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE TRIGGER resources_free_slots AFTER INSERT ON resources
    FOR EACH ROW EXECUTE FUNCTION free_slots_court_changed('id');

CREATE OR REPLACE TRIGGER resources_free_slots_update AFTER UPDATE ON resources
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.venue_id IS DISTINCT FROM NEW.venue_id
          OR OLD.slot_duration_minutes IS DISTINCT FROM NEW.slot_duration_minutes
          OR OLD.name IS DISTINCT FROM NEW.name
          OR OLD.type IS DISTINCT FROM NEW.type)
    EXECUTE FUNCTION free_slots_court_changed('id');

CREATE OR REPLACE TRIGGER resource_schedules_free_slots AFTER INSERT OR UPDATE OR DELETE ON resource_schedules
    FOR EACH ROW EXECUTE FUNCTION free_slots_court_changed('resource_id');

CREATE OR REPLACE TRIGGER price_rules_free_slots AFTER INSERT OR UPDATE OR DELETE ON price_rules
    FOR EACH ROW EXECUTE FUNCTION free_slots_court_changed('resource_id');

-- A venue or its holidays: every court of the venue, on every kept date (a venue's rules) or
-- on the holiday's dates.
CREATE OR REPLACE FUNCTION free_slots_venue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE TRIGGER venues_free_slots AFTER UPDATE ON venues
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION free_slots_venue_changed();

CREATE OR REPLACE TRIGGER venue_holidays_free_slots AFTER INSERT OR UPDATE OR DELETE ON venue_holidays
    FOR EACH ROW EXECUTE FUNCTION free_slots_venue_changed();

-- Two statements: the kept rows go, the worked-out ones come; the callers (free_slots_refresh,
-- court_day_changed, free_slot_dates_keep) hold the locks that make this safe. The plan is
-- made once, without the arrays' values: with them the planner costs a custom plan lower and
-- would plan again at every call, which costs far more than the generic plan saves.
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
COMMENT ON FUNCTION free_slots_rewrite(uuid[], date[]) IS
    'Replaces the kept rows of some courts on some dates with the worked-out ones (callers lock).';

-- ---- a request's court day ---------------------------------------------------------------------
-- What a request's change does to its court's day is decided in one place,
-- request_slots_unchanged in the update trigger's WHEN clause, and done by one function,
-- match_requests_day_changed, for the day the request leaves and the day it comes to.
--
-- A slot is taken by a request neither PENDING_PAYMENT nor CANCELLED, and held by a
-- PENDING_PAYMENT one until its expiry (court_day_slots). So an update of a request that stays
-- on the same court, date and times changes no slot answer, at the time or later, when
--   1. nothing the slots read changed (its status, and its expiry);
--   2. it moves between two statuses that take the slot (MATCHED to COMPLETED, say);
--   3. it was cancelled and stays cancelled (a cancelled request takes nothing);
--   4. it is cancelled once its payment hold has lapsed (the slot was open again already);
--   5. it is cancelled once it has ended (every slot it overlapped has started, and a slot
--      that has started is not available whatever holds it).
-- Such an update stamps no version, so a client's ETag stays good, and starts no function: the
-- sweeper's batches of lapsed holds cost only their own writes. Every other change of status,
-- expiry, court, date or times stamps the day's version and refreshes its kept slots.
-- The triggers are named so that they fire before match_requests_waitlist_end
-- (sql/areas/65_places.sql): triggers on one event fire in name order.
CREATE OR REPLACE FUNCTION request_slots_unchanged(o match_requests, n match_requests)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN o.resource_id = n.resource_id AND o.booking_date = n.booking_date
       AND o.start_time = n.start_time AND o.end_time = n.end_time
       AND ((o.status = n.status AND o.expires_at IS NOT DISTINCT FROM n.expires_at)
            OR (o.status NOT IN ('PENDING_PAYMENT', 'CANCELLED')
                AND n.status NOT IN ('PENDING_PAYMENT', 'CANCELLED'))
            OR (o.status = 'CANCELLED' AND n.status = 'CANCELLED')
            OR (n.status = 'CANCELLED'
                AND ((o.status = 'PENDING_PAYMENT' AND o.expires_at <= now())
                     OR o.ends_at <= now())));
COMMENT ON FUNCTION request_slots_unchanged(match_requests, match_requests) IS
    'Whether a request''s update from o to n leaves every slot answer as it was, now and later: same court, date and times, and nothing the slots read changed, a move between two statuses that take the slot, cancelled again, or cancelled after its hold lapsed or it ended.';

CREATE OR REPLACE FUNCTION match_requests_day_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM court_day_changed(OLD.resource_id, OLD.booking_date);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (OLD.resource_id <> NEW.resource_id
                                                 OR OLD.booking_date <> NEW.booking_date)) THEN
        PERFORM court_day_changed(NEW.resource_id, NEW.booking_date);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_requests_day_changed() IS
    'Row trigger on match_requests: the court days a request leaves and comes to changed (court_day_changed), each once.';

CREATE OR REPLACE TRIGGER match_requests_day AFTER INSERT OR DELETE ON match_requests
    FOR EACH ROW EXECUTE FUNCTION match_requests_day_changed();

CREATE OR REPLACE TRIGGER match_requests_day_update
    AFTER UPDATE OF status, expires_at, resource_id, booking_date, start_time, end_time
    ON match_requests
    FOR EACH ROW WHEN (NOT request_slots_unchanged(OLD, NEW))
    EXECUTE FUNCTION match_requests_day_changed();

-- A request's write on one court and date: the day's version stamped once, and its kept slots
-- rewritten when the date is kept. The order is free_slots_refresh's: free_slots in ROW
-- EXCLUSIVE mode (free_slot_dates_keep, which adds and fills dates in SHARE mode, waits for it
-- or this waits for that), then the day's version stamped, which tells clients and locks the
-- court and date at once, then, when the date is kept, its kept slots rewritten from what is
-- committed by then. The date is looked up after the table lock: a date added by a keep that
-- committed first is seen, and a keep that comes after waits for this transaction.
-- free_slots_refresh serves the writes that change many courts or dates at once (schedules,
-- price rules, holidays, a court's or a venue's status).
CREATE OR REPLACE FUNCTION court_day_changed(p_court uuid, p_date date) RETURNS void
    LANGUAGE plpgsql
    SET jit = off
AS $$
BEGIN
    LOCK TABLE free_slots IN ROW EXCLUSIVE MODE;
    PERFORM availability_day_bump(p_court, p_date);
    IF EXISTS (SELECT FROM free_slot_dates d WHERE d.booking_date = p_date) THEN
        PERFORM free_slots_rewrite(ARRAY[p_court], ARRAY[p_date]);
    END IF;
END $$;
COMMENT ON FUNCTION court_day_changed(uuid, date) IS
    'One court''s live requests on one date changed: its version stamped once, and its kept free slots worked out again when the date is kept.';

-- Keeps the dates from p_now's UTC yesterday to p_days days after its UTC today, which covers
-- every venue's today, one short step per call, so that no write waits long; the sweeper
-- (cron/sweep.c) calls it until both counts are 0. Each call forgets the dates before UTC
-- yesterday, with their kept slots, and then
--   1. adds the missing dates, empty: from the moment this commits every refresh includes
--      them (it first waits for every transaction that refreshed kept slots, and those that
--      come after wait for it);
--   2. or else fills the next p_courts courts, in id order, on a date being filled, with
--      free_slots in SHARE mode: no refresh runs meanwhile (writes wait for a batch of courts,
--      not for a whole date), and what they committed is read. The date is complete, and
--      searched from free_slots, once its last court is filled; until then the search works
--      its slots out court by court (search_slots_computed, sql/areas/85_search.sql).
-- The versions of search areas for days three days past go too: no search of such a day is of
-- a kept date, so none is kept with them; one kept before shows no slot (every one has
-- started, in every time zone), or has an until that has passed.
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
COMMENT ON FUNCTION free_slot_dates_keep(integer, integer, timestamptz) IS
    'One step of keeping free_slots for UTC yesterday to p_days days ahead: dates added, or courts filled on a date.';
