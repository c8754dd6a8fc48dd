-- 0045_hold_queue: the holds of one court and day queue for each other before they insert,
-- instead of meeting in the exclusion constraint's check.
--
-- match_requests_no_double_booking is checked after the row is in the index: the inserter
-- scans for a conflicting row and, when that row's transaction is still in flight, waits for
-- it. Two holds of one slot that insert before either scans find each other's row and each
-- waits for the other; PostgreSQL's deadlock detector ends one of them a second later, and
-- its request got 409 CONCURRENT_UPDATE instead of SLOT_TAKEN (four series of one court and
-- time made at once, seen so once). It is not rare when a hold in flight is rolled back
-- (whatever ends its transaction: an error, a timeout, a client gone): every hold that was
-- waiting for it scans again at once and finds the others' rows. Eight sessions racing for
-- one slot, each holding it for a moment and letting it go, 10 rounds each: 78 of the 80
-- transactions were ended by the deadlock detector (tests/49-match-races.bats).
--
-- match_hold (0036, restated) now takes a transaction lock on its court and day, once the
-- request has passed its refusals and before it reads the lapsed holds and inserts. The
-- holds of one court and day are made one after the other: the next one finds the row of
-- the one before committed (SLOT_TAKEN, from the constraint, which stays the guard) or gone.
-- This adds no wait that was not there: an insert on a court and day already waited for
-- every other one in flight at the day's version row (availability_day_bump, from the
-- trigger after the insert), and now waits for it before it holds anything of its own. A
-- series takes its days in date order, as every hold does, so the queues cannot form a
-- cycle. Only conflicting rows can collide, and only on one day: a slot ends on its own
-- date (booking_date + end_time), so the day is the whole key.

CREATE OR REPLACE FUNCTION match_hold(p_resource uuid, p_organizer uuid, p_date date, p_start time,
                                      p_duration integer, p_format text, p_skill text,
                                      p_message text, p_lat double precision,
                                      p_lng double precision, p_radius numeric,
                                      p_hold_seconds integer, p_now timestamptz DEFAULT now(),
                                      p_max_holds integer DEFAULT NULL)
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    v_dur_ok boolean;
    v_end time;
    v_past boolean;
    v_price numeric;
    v_currency char(3);
    v_tz text;
    v_size integer;
    v_id uuid;
    v_lapsed uuid[];
BEGIN
    SELECT rs.slot_duration_minutes = p_duration, s.end_time,
           (p_date + p_start) AT TIME ZONE v.timezone <= p_now, s.price, s.currency, v.timezone,
           f.team_size
      INTO v_dur_ok, v_end, v_past, v_price, v_currency, v_tz, v_size
      FROM resources rs
      JOIN venues v ON v.id = rs.venue_id
      LEFT JOIN match_formats f ON f.format = p_format
      LEFT JOIN LATERAL (SELECT x.end_time, x.price, x.currency
                           FROM resource_slots(rs.id, p_date, p_now) x
                          WHERE x.start_time = p_start) s ON true
     WHERE rs.id = p_resource AND rs.status = 'ACTIVE' AND v.status = 'ACTIVE';
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Resource not found.');
    END IF;
    IF NOT v_dur_ok OR v_end IS NULL THEN
        PERFORM lifecycle_fail(409, 'SLOT_NOT_OFFERED',
            'The court offers no slot of that length starting at that time.');
    END IF;
    IF v_past THEN
        PERFORM lifecycle_fail(409, 'SLOT_IN_PAST', 'The slot has already started.');
    END IF;
    IF v_price IS NULL THEN
        PERFORM lifecycle_fail(409, 'NOT_BOOKABLE', 'The slot has no price and cannot be booked.');
    END IF;
    -- fair use (0012): the player's unpaid holds and the club's booking rules
    PERFORM hold_limit_check(p_organizer, p_max_holds, p_now);
    PERFORM booking_rules_check(p_resource, p_organizer, (p_date + p_start) AT TIME ZONE v_tz,
                                p_now);
    -- one hold of this court and day at a time (see the header)
    PERFORM pg_advisory_xact_lock(hashtext(p_resource::text), p_date - date '2000-01-01');
    v_lapsed := ARRAY(
        SELECT m.id FROM match_requests m
         WHERE m.resource_id = p_resource AND m.status = 'PENDING_PAYMENT'
           AND m.expires_at <= p_now
           AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
               && tsrange(p_date + p_start, p_date + v_end)
           FOR UPDATE);
    IF cardinality(v_lapsed) > 0 THEN
        PERFORM match_expire_holds(v_lapsed, p_now);
    END IF;
    -- team_a_count 1: the organizer's place, inserted with it (match_players_count skips
    -- it); the organizer's share takes the cents that do not divide evenly
    WITH m AS (
        INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
                                    end_time, starts_at, ends_at, format, skill_level, status,
                                    team_size, team_a_count, court_price, price_per_player,
                                    currency, custom_message, search_latitude,
                                    search_longitude, search_radius_km, expires_at, created_at,
                                    updated_at)
        SELECT p_resource, p_organizer, p_date, p_start, v_end,
               (p_date + p_start) AT TIME ZONE v_tz, (p_date + v_end) AT TIME ZONE v_tz,
               p_format, p_skill, t.to_status, v_size, 1, v_price,
               floor(v_price * 100 / (2 * v_size)) / 100, v_currency, p_message,
               p_lat, p_lng, p_radius, p_now + make_interval(secs => p_hold_seconds), p_now,
               p_now
          FROM match_transitions t WHERE t.from_status = 'NONE' AND t.event = 'HOLD'
        RETURNING id, organizer_id, status, team_size, court_price, price_per_player, currency),
    changed AS (
        INSERT INTO match_status_changes (match_request_id, event, from_status, to_status,
                                          changed_at)
        SELECT id, 'HOLD', 'NONE', status, p_now FROM m),
    place AS (
        INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
        SELECT id, organizer_id, 'TEAM_A', 'ORGANIZER', p_now FROM m
        RETURNING id, match_request_id)
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, created_at, updated_at)
    SELECT m.id, m.organizer_id, 'PAYMENT',
           m.court_price - m.price_per_player * (2 * m.team_size - 1), m.currency, 'PENDING',
           place.id, p_now, p_now
      FROM m JOIN place ON place.match_request_id = m.id
    RETURNING match_request_id INTO v_id;
    RETURN v_id;
END $$;

