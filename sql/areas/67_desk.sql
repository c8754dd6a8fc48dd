-- 67_desk: the club's desk. Blocks that close a court for a time (maintenance, a lesson, an
-- event, or a walk-in customer booked and paid at the desk), matches called off by the club
-- with every paid share refunded, check-in at the desk, the day sheet, and the report of
-- revenue and occupancy. The owner program calls these for the caller's venue (cgi-bin/owner.c);
-- a court or match of another venue is a 404, as if it did not exist.
--
-- A block takes its slots as a booked request does (court_day_slots, sql/areas/30_slots.sql),
-- so the slots answer, the search, the kept free slots and every new match see it. A block and
-- a match never share a time: the block's insert and the match's insert each take the court
-- day's lock (court_day_lock) and then look for the other, in triggers, whatever the caller;
-- two blocks are kept apart by the exclusion constraint court_blocks_no_overlap.
--
-- Hours are counted within the court's opening hours of the day: what lies outside them (a
-- block before opening) is neither open nor used.

-- ---- the guards --------------------------------------------------------------------------------

-- The matches that hold part of court p_court between p_from and p_to (local): every one not
-- cancelled, but a payment hold past its window, ordered by start.
CREATE OR REPLACE FUNCTION court_matches_in(p_court uuid, p_from timestamp, p_to timestamp,
                                            p_now timestamptz)
    RETURNS uuid[]
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN ARRAY(
        SELECT m.id FROM match_requests m
         WHERE m.resource_id = p_court AND m.status <> 'CANCELLED'
           AND NOT (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now)
           AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
               && tsrange(p_from, p_to)
         ORDER BY m.starts_at, m.id);
END $$;
COMMENT ON FUNCTION court_matches_in(uuid, timestamp, timestamp, timestamptz) IS
    'The matches (not cancelled, no lapsed hold) on a court between two local instants.';

-- A new match on a blocked time: 409 SLOT_BLOCKED (match_hold takes the lock before; it is
-- held already).
CREATE OR REPLACE FUNCTION match_requests_not_blocked() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM court_day_lock(NEW.resource_id, NEW.booking_date);
    IF EXISTS (SELECT 1 FROM court_blocks b
                WHERE b.resource_id = NEW.resource_id
                  AND tsrange(b.block_date + b.start_time, b.block_date + b.end_time)
                      && tsrange(NEW.booking_date + NEW.start_time,
                                 NEW.booking_date + NEW.end_time)) THEN
        PERFORM lifecycle_fail(409, 'SLOT_BLOCKED', 'The club has closed the court at that time.');
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION match_requests_not_blocked() IS
    'Row trigger: a new match on a time the club blocked is refused (409 SLOT_BLOCKED).';

CREATE OR REPLACE TRIGGER match_requests_not_blocked BEFORE INSERT ON match_requests
    FOR EACH ROW EXECUTE FUNCTION match_requests_not_blocked();

-- A new block over a match: 409 MATCHES_IN_THE_WAY naming them. (court_blocks_create calls
-- those matches off first when asked to; this is the guard for any other writer.)
CREATE OR REPLACE FUNCTION court_blocks_clear() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    v_ids uuid[];
BEGIN
    PERFORM court_day_lock(NEW.resource_id, NEW.block_date);
    v_ids := court_matches_in(NEW.resource_id, NEW.block_date + NEW.start_time,
                              NEW.block_date + NEW.end_time, now());
    IF cardinality(v_ids) > 0 THEN
        PERFORM lifecycle_fail_with(409, 'MATCHES_IN_THE_WAY',
            'Matches are booked at that time: call them off with "cancelMatches": true.',
            jsonb_build_object('matchRequestIds', to_jsonb(v_ids)));
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION court_blocks_clear() IS
    'Row trigger: a block over a match is refused (409 MATCHES_IN_THE_WAY).';

CREATE OR REPLACE TRIGGER court_blocks_clear BEFORE INSERT ON court_blocks
    FOR EACH ROW EXECUTE FUNCTION court_blocks_clear();

-- A block added or removed: its court day changed (its version, its kept free slots).
CREATE OR REPLACE FUNCTION court_blocks_day_changed() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM court_day_changed(OLD.resource_id, OLD.block_date);
    ELSE
        PERFORM court_day_changed(NEW.resource_id, NEW.block_date);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION court_blocks_day_changed() IS
    'Row trigger on court_blocks: the block''s court day changed (court_day_changed).';

CREATE OR REPLACE TRIGGER court_blocks_day AFTER INSERT OR DELETE ON court_blocks
    FOR EACH ROW EXECUTE FUNCTION court_blocks_day_changed();

-- ---- the club calls matches off --------------------------------------------------------------

-- Locks match p_match, at a venue of p_owner, for a transition by its club: the row, or 404
-- (match_lock's counterpart for the venue's side).
CREATE OR REPLACE FUNCTION match_lock_at_venue(p_match uuid, p_owner uuid)
    RETURNS match_requests
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
BEGIN
    SELECT x.* INTO m FROM match_requests x
      JOIN resources r ON r.id = x.resource_id
      JOIN venues v ON v.id = r.venue_id AND v.owner_id = p_owner
     WHERE x.id = p_match
       FOR UPDATE OF x;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    RETURN m;
END $$;
COMMENT ON FUNCTION match_lock_at_venue(uuid, uuid) IS
    'Locks a match at one of an owner''s venues for a transition by the club; 404 otherwise.';

-- CLUB_CANCEL of matches p_ids (locked by the caller, none started): CANCELLED with reason
-- CLUB and the club's words p_note, every paid share refunded in full whatever the notice,
-- every player told with the note (match_end); no reliability is touched.
CREATE OR REPLACE FUNCTION match_club_cancel(p_ids uuid[], p_note text, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE match_requests SET cancel_note = p_note WHERE id = ANY (p_ids);
    PERFORM match_end(p_ids, 'CLUB_CANCEL', p_now);
END $$;
COMMENT ON FUNCTION match_club_cancel(uuid[], text, timestamptz) IS
    'CLUB_CANCEL: the venue calls matches off, refunding every paid share in full.';

-- The owner's cancellation of match p_match at a venue of p_owner, with p_reason: 404 when it
-- is not at one of p_owner's venues, 409 INVALID_STATE when cancelled or completed already,
-- MATCH_STARTED once it has started.
CREATE OR REPLACE FUNCTION match_owner_cancel(p_match uuid, p_owner uuid, p_reason text,
                                              p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock_at_venue(p_match, p_owner);
BEGIN
    IF m.status IN ('CANCELLED', 'COMPLETED') THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            format('The match is %s; it can no longer be cancelled.', m.status));
    END IF;
    IF p_now >= m.starts_at THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    PERFORM match_club_cancel(ARRAY[p_match], p_reason, p_now);
END $$;
COMMENT ON FUNCTION match_owner_cancel(uuid, uuid, text, timestamptz) IS
    'The venue''s owner calls a match off before it starts, with a reason told to its players.';

-- ---- blocks ------------------------------------------------------------------------------------

-- Blocks court p_resource of a venue of p_owner from p_start to p_end on p_date and, with
-- p_weeks > 1, on the same weekday of the p_weeks - 1 weeks after, all or none. A DESK block
-- may carry the customer and the amount paid at the desk, in the court's currency (of its
-- price rule at that time, else of any). The days are locked in date order, the payment holds
-- past their window on them ended; the matches in the way are refused (409
-- MATCHES_IN_THE_WAY, naming every one) or, with p_cancel, called off by the club with
-- p_note (409 MATCH_STARTED, naming them, when one has started). 404 NOT_FOUND, 409
-- BLOCK_IN_PAST when the first block would end by p_now, NO_CURRENCY for an amount on a court
-- without prices, BLOCK_OVERLAP (court_blocks_no_overlap). Returns the blocks, by date.
CREATE OR REPLACE FUNCTION court_blocks_create(p_resource uuid, p_owner uuid, p_by uuid, p_date date,
                                               p_start time, p_end time, p_kind text, p_note text,
                                               p_customer text, p_amount numeric, p_weeks integer,
                                               p_cancel boolean, p_now timestamptz DEFAULT now())
    RETURNS SETOF court_blocks
    LANGUAGE plpgsql
AS $$
DECLARE
    v_tz text;
    v_currency char(3);
    v_dates date[];
    v_date date;
    v_ids uuid[] := '{}';
    v_started uuid[];
BEGIN
    SELECT v.timezone,
           (SELECT p.currency FROM price_rules p WHERE p.resource_id = r.id
             ORDER BY (p.start_time <= p_start AND p_start < p.end_time) DESC, p.currency
             LIMIT 1)
      INTO v_tz, v_currency
      FROM resources r JOIN venues v ON v.id = r.venue_id AND v.owner_id = p_owner
     WHERE r.id = p_resource
       FOR SHARE OF r;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Resource not found.');
    END IF;
    IF (p_date + p_end) AT TIME ZONE v_tz <= p_now THEN
        PERFORM lifecycle_fail(409, 'BLOCK_IN_PAST', 'The block would end before now.');
    END IF;
    IF p_amount IS NOT NULL AND v_currency IS NULL THEN
        PERFORM lifecycle_fail(409, 'NO_CURRENCY',
            'The court has no price rule to take the currency of the amount from.');
    END IF;
    v_dates := ARRAY(SELECT p_date + 7 * k FROM generate_series(0, p_weeks - 1) k ORDER BY 1);
    FOREACH v_date IN ARRAY v_dates LOOP
        PERFORM court_day_lock(p_resource, v_date);
        PERFORM court_lapsed_holds_end(p_resource, v_date + p_start, v_date + p_end, p_now);
        v_ids := v_ids || court_matches_in(p_resource, v_date + p_start, v_date + p_end, p_now);
    END LOOP;
    IF cardinality(v_ids) > 0 THEN
        IF NOT p_cancel THEN
            PERFORM lifecycle_fail_with(409, 'MATCHES_IN_THE_WAY',
                'Matches are booked at that time: call them off with "cancelMatches": true.',
                jsonb_build_object('matchRequestIds', to_jsonb(v_ids)));
        END IF;
        PERFORM 1 FROM match_requests WHERE id = ANY (v_ids) ORDER BY id FOR UPDATE;
        v_started := ARRAY(SELECT id FROM match_requests
                            WHERE id = ANY (v_ids)
                              AND (starts_at <= p_now OR status = 'COMPLETED')
                            ORDER BY starts_at, id);
        IF cardinality(v_started) > 0 THEN
            PERFORM lifecycle_fail_with(409, 'MATCH_STARTED',
                'A match in the way has started; it can no longer be called off.',
                jsonb_build_object('matchRequestIds', to_jsonb(v_started)));
        END IF;
        PERFORM match_club_cancel(v_ids, p_note, p_now);
    END IF;
    RETURN QUERY
    INSERT INTO court_blocks (resource_id, block_date, start_time, end_time, kind, note,
                              customer_name, amount, currency, created_by, created_at)
    SELECT p_resource, d, p_start, p_end, p_kind, p_note, p_customer, p_amount,
           CASE WHEN p_amount IS NOT NULL THEN v_currency END, p_by, p_now
      FROM unnest(v_dates) d
    RETURNING *;
END $$;
COMMENT ON FUNCTION court_blocks_create(uuid, uuid, uuid, date, time, time, text, text, text,
                                        numeric, integer, boolean, timestamptz) IS
    'Blocks a court for a time, once or weekly, all or none; matches in the way refused or called off.';

-- Removes block p_block of court p_resource of a venue of p_owner, when it is of kind p_kind
-- (NULL: any); its slots open again. Returns true, false when there is no such block, or
-- NULL when it is of another kind (left as it is).
CREATE OR REPLACE FUNCTION court_block_delete(p_resource uuid, p_block uuid, p_owner uuid,
                                              p_kind text DEFAULT NULL)
    RETURNS boolean
    LANGUAGE plpgsql
AS $$
DECLARE
    v_kind text;
BEGIN
    SELECT b.kind INTO v_kind FROM court_blocks b
      JOIN resources r ON r.id = b.resource_id
      JOIN venues v ON v.id = r.venue_id AND v.owner_id = p_owner
     WHERE b.id = p_block AND b.resource_id = p_resource
       FOR UPDATE OF b;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_kind IS NOT NULL AND v_kind <> p_kind THEN
        RETURN NULL;
    END IF;
    DELETE FROM court_blocks WHERE id = p_block;
    RETURN true;
END $$;
COMMENT ON FUNCTION court_block_delete(uuid, uuid, uuid, text) IS
    'Removes a block of a court of the owner''s venue (of one kind); false when there is none, NULL when of another kind.';

-- ---- check-in at the desk ----------------------------------------------------------------------

-- CHECKIN at the desk, by p_by, of player p_player of match p_match at a venue of p_owner, for
-- a player without a phone: the window of the GPS check-in (match_checkin_window), without the
-- distance; a repeat is a no-op. 404 for a match not at the owner's venues or a player not in
-- it; 409 INVALID_STATE, CHECKIN_TOO_EARLY, CHECKIN_CLOSED.
CREATE OR REPLACE FUNCTION match_desk_checkin(p_match uuid, p_player uuid, p_owner uuid,
                                              p_by uuid, p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock_at_venue(p_match, p_owner);
    v_in timestamptz;
BEGIN
    SELECT mp.checked_in_at INTO v_in FROM match_players mp
     WHERE mp.match_request_id = p_match AND mp.player_id = p_player AND mp.left_at IS NULL;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'The player is not in this match.');
    END IF;
    IF v_in IS NOT NULL AND m.status IN ('MATCHED', 'CONFIRMED') THEN
        RETURN;
    END IF;
    PERFORM match_checkin_window(m, p_now);
    PERFORM match_checkin_mark(m, p_player, p_by, p_now);
END $$;
COMMENT ON FUNCTION match_desk_checkin(uuid, uuid, uuid, uuid, timestamptz) IS
    'CHECKIN at the desk: the GPS check-in''s window without the distance.';

-- ---- the day sheet -----------------------------------------------------------------------------

-- Seconds in a multirange of local instants.
CREATE OR REPLACE FUNCTION tsmultirange_secs(p tsmultirange) RETURNS numeric
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN COALESCE((SELECT sum(extract(epoch FROM upper(x) - lower(x))) FROM unnest(p) x), 0);
END $$;
COMMENT ON FUNCTION tsmultirange_secs(tsmultirange) IS 'Total seconds of a multirange.';

-- Hours in a multirange of local instants, to two decimals.
CREATE OR REPLACE FUNCTION tsmultirange_hours(p tsmultirange) RETURNS numeric
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN round(tsmultirange_secs(p) / 3600, 2);
END $$;
COMMENT ON FUNCTION tsmultirange_hours(tsmultirange) IS 'Total hours of a multirange, two decimals.';

-- The opening hours of court p_court on local date p_date, as a multirange (empty when closed).
CREATE OR REPLACE FUNCTION court_open_hours(p_court uuid, p_date date) RETURNS tsmultirange
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN COALESCE((SELECT tsmultirange(tsrange(p_date + s.opening_time, p_date + s.closing_time))
                       FROM resource_schedules s
                      WHERE s.resource_id = p_court
                        AND s.day_of_week = extract(isodow FROM p_date)::smallint
                        AND s.opening_time IS NOT NULL), '{}'::tsmultirange);
END $$;
COMMENT ON FUNCTION court_open_hours(uuid, date) IS
    'A court''s opening hours on a local date as a multirange of local instants.';

-- The day sheet of venue p_venue of p_owner on local date p_date, as the desk reads it at
-- p_now: every court by name, its matches (not cancelled, no lapsed hold) with their places,
-- money and check-ins, and its blocks, in start order; the hours open, and free of any match
-- or block, per court and in all. NULL when the venue is not the owner's.
CREATE OR REPLACE FUNCTION venue_day_sheet(p_venue uuid, p_owner uuid, p_date date,
                                           p_now timestamptz DEFAULT now())
    RETURNS json
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (
    WITH court_matches AS (
        SELECT r.id, r.name,
               court_matches_in(r.id, p_date::timestamp, (p_date + 1)::timestamp, p_now) AS ids
          FROM resources r
          JOIN venues v ON v.id = r.venue_id
         WHERE v.id = p_venue AND v.owner_id = p_owner),
    courts AS (
        SELECT r.id, r.name, r.ids, court_open_hours(r.id, p_date) AS open,
               (SELECT COALESCE(range_agg(u.span), '{}'::tsmultirange)
                  FROM (SELECT tsrange(m.booking_date + m.start_time,
                                       m.booking_date + m.end_time) AS span
                          FROM match_requests m
                         WHERE m.id = ANY (r.ids)
                        UNION ALL
                        SELECT tsrange(b.block_date + b.start_time, b.block_date + b.end_time)
                          FROM court_blocks b
                         WHERE b.resource_id = r.id AND b.block_date = p_date) u) AS used
          FROM court_matches r),
    sheet AS (
        SELECT c.id, c.name, tsmultirange_hours(c.open) AS hours_open,
               tsmultirange_hours(c.open - c.used) AS hours_free,
               (SELECT COALESCE(json_agg(i.doc ORDER BY i.starts, i.kind), '[]')
                  FROM (SELECT m.start_time AS starts, 'MATCH' AS kind,
                               json_build_object(
                                   'kind', 'MATCH', 'matchRequestId', m.id, 'status', m.status,
                                   'startTime', api_time(m.start_time),
                                   'endTime', api_time(m.end_time), 'format', m.format,
                                   'placesTaken', m.team_a_count + m.team_b_count,
                                   'placesFree', 2 * m.team_size - m.team_a_count - m.team_b_count,
                                   'amountPaid', money.paid,
                                   'amountOwed', greatest(m.court_price - money.paid, 0),
                                   'currency', m.currency,
                                   'checkedIn', (SELECT count(*) FROM match_players mp
                                                  WHERE mp.match_request_id = m.id
                                                    AND mp.left_at IS NULL
                                                    AND mp.checked_in_at IS NOT NULL),
                                   'players', (SELECT COALESCE(json_agg(json_build_object(
                                                   'playerId', mp.player_id,
                                                   'displayName', pl.display_name,
                                                   'team', mp.team, 'role', mp.role,
                                                   'checkedIn', mp.checked_in_at IS NOT NULL)
                                                   ORDER BY mp.team, mp.joined_at), '[]')
                                                 FROM match_players mp
                                                 LEFT JOIN players pl ON pl.user_id = mp.player_id
                                                WHERE mp.match_request_id = m.id
                                                  AND mp.left_at IS NULL)) AS doc
                          FROM match_requests m
                         CROSS JOIN LATERAL (
                               SELECT COALESCE(sum(CASE WHEN p.kind = 'PAYMENT' THEN p.amount
                                                        ELSE -p.amount END), 0) AS paid
                                 FROM payments p
                                WHERE p.match_request_id = m.id
                                  AND ((p.kind = 'PAYMENT' AND p.status = 'PAID')
                                       OR p.kind = 'REFUND')) money
                         WHERE m.id = ANY (c.ids)
                        UNION ALL
                        SELECT b.start_time, b.kind,
                               json_build_object('kind', b.kind, 'blockId', b.id,
                                                 'startTime', api_time(b.start_time),
                                                 'endTime', api_time(b.end_time),
                                                 'note', b.note, 'customerName', b.customer_name,
                                                 'amount', b.amount, 'currency', b.currency)
                          FROM court_blocks b
                         WHERE b.resource_id = c.id AND b.block_date = p_date) i) AS items
          FROM courts c)
    SELECT json_build_object(
               'venueId', v.id, 'date', p_date, 'timeZone', v.timezone,
               'hoursOpen', COALESCE((SELECT sum(s.hours_open) FROM sheet s), 0),
               'hoursFree', COALESCE((SELECT sum(s.hours_free) FROM sheet s), 0),
               'courts', COALESCE((SELECT json_agg(json_build_object(
                                        'resourceId', s.id, 'name', s.name,
                                        'hoursOpen', s.hours_open, 'hoursFree', s.hours_free,
                                        'items', s.items) ORDER BY s.name, s.id)
                                     FROM sheet s), '[]'))
      FROM venues v
     WHERE v.id = p_venue AND v.owner_id = p_owner);
END $$;
COMMENT ON FUNCTION venue_day_sheet(uuid, uuid, date, timestamptz) IS
    'The venue''s day as the desk reads it: every court''s matches and blocks, hours open and free.';

-- ---- revenue and occupancy ---------------------------------------------------------------------

-- One day's figures of the report (venue_report), or the total's (p_day NULL), from seconds
-- and sums.
CREATE OR REPLACE FUNCTION report_figures(p_day date, p_open numeric, p_booked numeric,
                                          p_maintenance numeric, p_lesson numeric,
                                          p_event numeric, p_desk numeric, p_paid numeric,
                                          p_refunded numeric, p_desk_revenue numeric,
                                          p_played numeric, p_cancelled numeric,
                                          p_no_shows numeric)
    RETURNS json
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    f json := json_build_object(
           'hoursOpen', round(p_open / 3600, 2),
           'hoursBooked', round(p_booked / 3600, 2),
           'hoursBlocked', json_build_object('MAINTENANCE', round(p_maintenance / 3600, 2),
                                             'LESSON', round(p_lesson / 3600, 2),
                                             'EVENT', round(p_event / 3600, 2),
                                             'DESK', round(p_desk / 3600, 2)),
           'occupancy', CASE WHEN p_open - p_maintenance > 0
                             THEN round((p_booked + p_lesson + p_event + p_desk)
                                        / (p_open - p_maintenance), 4)
                             ELSE 0 END,
           'paid', round(p_paid, 2), 'refunded', round(p_refunded, 2),
           'net', round(p_paid - p_refunded, 2), 'deskRevenue', round(p_desk_revenue, 2),
           'matchesPlayed', p_played, 'matchesCancelled', p_cancelled, 'noShows', p_no_shows);
BEGIN
    IF p_day IS NULL THEN
        RETURN f;
    END IF;
    -- the date first, then the figures (json_build_object's text opens with '{')
    RETURN ('{"date" : ' || to_json(p_day)::text || ', ' || substr(f::text, 2))::json;
END $$;
COMMENT ON FUNCTION report_figures(date, numeric, numeric, numeric, numeric, numeric, numeric,
                                   numeric, numeric, numeric, numeric, numeric, numeric) IS
    'The figures of one day of a venue''s report, or of its total.';

-- The report of venue p_venue of p_owner for local dates p_from to p_to (the caller keeps
-- them in order and at most a year apart), in currency p_currency (NULL: the venue's only
-- one; 400 CURRENCY_REQUIRED when its prices, matches or desk bookings of the time use more).
-- For each day and in total:
--   hoursOpen      the courts' opening hours;
--   hoursBooked    hours of matches not cancelled (live and played; a lapsed hold is none);
--   hoursBlocked   hours of blocks, by kind;
--   occupancy      hours in use (matches, DESK, LESSON and EVENT blocks) over hours available
--                  (open less MAINTENANCE), four decimals, 0 when none is available;
--   paid, refunded, net
--                  the shares paid for the day's matches and the refunds decided of them,
--                  whenever the money moved, and the difference;
--   deskRevenue    what DESK blocks of the day were paid at the desk;
--   matchesPlayed, matchesCancelled, noShows
--                  matches COMPLETED, CANCELLED (not counting holds never paid), and the
--                  players of played matches who never checked in.
-- Hours are counted within the opening hours. NULL when the venue is not the owner's.
CREATE OR REPLACE FUNCTION venue_report(p_venue uuid, p_owner uuid, p_from date, p_to date,
                                        p_currency text, p_now timestamptz DEFAULT now())
    RETURNS json
    LANGUAGE plpgsql STABLE
    SET jit = off
AS $$
DECLARE
    v_currencies text[];
    v_currency text := p_currency;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM venues WHERE id = p_venue AND owner_id = p_owner) THEN
        RETURN NULL;
    END IF;
    v_currencies := ARRAY(
        SELECT p.currency FROM price_rules p JOIN resources r ON r.id = p.resource_id
         WHERE r.venue_id = p_venue
        UNION
        SELECT m.currency FROM match_requests m JOIN resources r ON r.id = m.resource_id
         WHERE r.venue_id = p_venue AND m.booking_date BETWEEN p_from AND p_to
        UNION
        SELECT b.currency FROM court_blocks b JOIN resources r ON r.id = b.resource_id
         WHERE r.venue_id = p_venue AND b.block_date BETWEEN p_from AND p_to
           AND b.currency IS NOT NULL
        ORDER BY 1);
    IF v_currency IS NULL THEN
        IF cardinality(v_currencies) > 1 THEN
            PERFORM lifecycle_fail(400, 'CURRENCY_REQUIRED',
                format('The venue is priced in %s: say which with ?currency=.',
                       array_to_string(v_currencies, ', ')));
        END IF;
        v_currency := v_currencies[1];
    END IF;
    RETURN (
    WITH days AS (
        SELECT g::date AS day FROM generate_series(p_from, p_to, interval '1 day') g),
    -- the venue's weekly hours, a few rows read through its courts. Joined to every date of
    -- the report straight from resource_schedules, a year's dates made the planner hash the
    -- whole table (280,000 rows at the benchmark's 10,000 venues: 0.1 s a report), whose size
    -- grows with every venue but this one
    week AS MATERIALIZED (
        SELECT s.resource_id, s.day_of_week, s.opening_time, s.closing_time
          FROM resources r JOIN resource_schedules s ON s.resource_id = r.id
         WHERE r.venue_id = p_venue AND s.opening_time IS NOT NULL),
    court_days AS (
        SELECT d.day, r.id,
               COALESCE(tsmultirange(tsrange(d.day + s.opening_time, d.day + s.closing_time)),
                        '{}'::tsmultirange) AS open,
               COALESCE(extract(epoch FROM s.closing_time - s.opening_time), 0) AS open_secs
          FROM days d
         CROSS JOIN resources r
          LEFT JOIN week s ON s.resource_id = r.id
                          AND s.day_of_week = extract(isodow FROM d.day)::smallint
         WHERE r.venue_id = p_venue),
    -- the venue's matches and blocks of the dates, each court's through its no-overlap index
    matches AS MATERIALIZED (
        SELECT m.id, m.resource_id, m.booking_date, m.start_time, m.end_time, m.status,
               m.cancel_reason, m.expires_at
          FROM resources r JOIN match_requests m ON m.resource_id = r.id
         WHERE r.venue_id = p_venue AND m.booking_date BETWEEN p_from AND p_to
           AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
               && tsrange(p_from, p_to + 1)),
    blocks AS MATERIALIZED (
        SELECT b.resource_id, b.block_date, b.start_time, b.end_time, b.kind, b.amount,
               b.currency
          FROM resources r JOIN court_blocks b ON b.resource_id = r.id
         WHERE r.venue_id = p_venue AND b.block_date BETWEEN p_from AND p_to
           AND tsrange(b.block_date + b.start_time, b.block_date + b.end_time)
               && tsrange(p_from, p_to + 1)),
    booked AS (
        SELECT m.resource_id, m.booking_date AS day,
               range_agg(tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time))
                   AS span
          FROM matches m
         WHERE m.status <> 'CANCELLED'
           AND NOT (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now)
         GROUP BY 1, 2),
    blocked AS (
        SELECT b.resource_id, b.block_date AS day, b.kind,
               range_agg(tsrange(b.block_date + b.start_time, b.block_date + b.end_time)) AS span
          FROM blocks b
         GROUP BY 1, 2, 3),
    -- (most court days have no match and no block: their hours in use are 0 without a
    -- function call)
    hours AS (
        SELECT cd.day,
               sum(cd.open_secs) AS open,
               sum(CASE WHEN bk.span IS NOT NULL THEN tsmultirange_secs(cd.open * bk.span) END)
                   AS booked,
               sum(CASE WHEN mt.span IS NOT NULL THEN tsmultirange_secs(cd.open * mt.span) END)
                   AS maintenance,
               sum(CASE WHEN ls.span IS NOT NULL THEN tsmultirange_secs(cd.open * ls.span) END)
                   AS lesson,
               sum(CASE WHEN ev.span IS NOT NULL THEN tsmultirange_secs(cd.open * ev.span) END)
                   AS event,
               sum(CASE WHEN dk.span IS NOT NULL THEN tsmultirange_secs(cd.open * dk.span) END)
                   AS desk
          FROM court_days cd
          LEFT JOIN booked bk ON bk.resource_id = cd.id AND bk.day = cd.day
          LEFT JOIN blocked mt ON mt.resource_id = cd.id AND mt.day = cd.day
                              AND mt.kind = 'MAINTENANCE'
          LEFT JOIN blocked ls ON ls.resource_id = cd.id AND ls.day = cd.day AND ls.kind = 'LESSON'
          LEFT JOIN blocked ev ON ev.resource_id = cd.id AND ev.day = cd.day AND ev.kind = 'EVENT'
          LEFT JOIN blocked dk ON dk.resource_id = cd.id AND dk.day = cd.day AND dk.kind = 'DESK'
         GROUP BY cd.day),
    money AS (
        SELECT m.booking_date AS day,
               sum(p.amount) FILTER (WHERE p.kind = 'PAYMENT' AND p.status = 'PAID') AS paid,
               sum(p.amount) FILTER (WHERE p.kind = 'REFUND') AS refunded
          FROM matches m JOIN payments p ON p.match_request_id = m.id
         WHERE p.currency = v_currency
         GROUP BY 1),
    desk AS (
        SELECT b.block_date AS day, sum(b.amount) AS revenue
          FROM blocks b
         WHERE b.kind = 'DESK' AND b.currency = v_currency
         GROUP BY 1),
    counts AS (
        SELECT m.booking_date AS day,
               count(DISTINCT m.id) FILTER (WHERE m.status = 'COMPLETED') AS played,
               count(DISTINCT m.id) FILTER (WHERE m.status = 'CANCELLED'
                                              AND m.cancel_reason <> 'PAYMENT_EXPIRED')
                   AS cancelled,
               count(mp.player_id) FILTER (WHERE m.status = 'COMPLETED'
                                             AND mp.checked_in_at IS NULL) AS no_shows
          FROM matches m
          LEFT JOIN match_players mp ON mp.match_request_id = m.id AND mp.left_at IS NULL
         GROUP BY 1),
    per_day AS (
        SELECT d.day,
               COALESCE(h.open, 0) AS open, COALESCE(h.booked, 0) AS booked,
               COALESCE(h.maintenance, 0) AS maintenance, COALESCE(h.lesson, 0) AS lesson,
               COALESCE(h.event, 0) AS event, COALESCE(h.desk, 0) AS desk,
               COALESCE(mo.paid, 0) AS paid, COALESCE(mo.refunded, 0) AS refunded,
               COALESCE(dk.revenue, 0) AS desk_revenue,
               COALESCE(c.played, 0) AS played, COALESCE(c.cancelled, 0) AS cancelled,
               COALESCE(c.no_shows, 0) AS no_shows
          FROM days d
          LEFT JOIN hours h ON h.day = d.day
          LEFT JOIN money mo ON mo.day = d.day
          LEFT JOIN desk dk ON dk.day = d.day
          LEFT JOIN counts c ON c.day = d.day),
    total AS (
        SELECT NULL::date AS day, sum(open) AS open, sum(booked) AS booked,
               sum(maintenance) AS maintenance, sum(lesson) AS lesson, sum(event) AS event,
               sum(desk) AS desk, sum(paid) AS paid, sum(refunded) AS refunded,
               sum(desk_revenue) AS desk_revenue, sum(played) AS played,
               sum(cancelled) AS cancelled, sum(no_shows) AS no_shows
          FROM per_day)
    SELECT json_build_object(
               'venueId', p_venue, 'from', p_from, 'to', p_to, 'currency', v_currency,
               'days', (SELECT json_agg(report_figures(x.day, x.open, x.booked, x.maintenance,
                                                       x.lesson, x.event, x.desk, x.paid,
                                                       x.refunded, x.desk_revenue, x.played,
                                                       x.cancelled, x.no_shows) ORDER BY x.day)
                          FROM per_day x),
               'total', (SELECT report_figures(t.day, t.open, t.booked, t.maintenance, t.lesson,
                                               t.event, t.desk, t.paid, t.refunded,
                                               t.desk_revenue, t.played, t.cancelled,
                                               t.no_shows)
                           FROM total t)));
END $$;
COMMENT ON FUNCTION venue_report(uuid, uuid, date, date, text, timestamptz) IS
    'Revenue and occupancy of a venue by day and in total, in one currency.';

-- The report (venue_report) as CSV (RFC 4180): a header row of the JSON's names (the hours
-- blocked as hoursBlocked.KIND), a row per day, and the total's row, whose date says total.
CREATE OR REPLACE FUNCTION venue_report_csv(p_report json) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    RETURN (
        SELECT string_agg(line, E'\r\n' ORDER BY n) || E'\r\n'
          FROM (SELECT 0 AS n,
                       'date,hoursOpen,hoursBooked,hoursBlocked.MAINTENANCE,hoursBlocked.LESSON,'
                       'hoursBlocked.EVENT,hoursBlocked.DESK,occupancy,paid,refunded,net,'
                       'deskRevenue,matchesPlayed,matchesCancelled,noShows' AS line
                UNION ALL
                SELECT x.n, concat_ws(',', COALESCE(x.d ->> 'date', 'total'), x.d ->> 'hoursOpen',
                                      x.d ->> 'hoursBooked',
                                      x.d -> 'hoursBlocked' ->> 'MAINTENANCE',
                                      x.d -> 'hoursBlocked' ->> 'LESSON',
                                      x.d -> 'hoursBlocked' ->> 'EVENT',
                                      x.d -> 'hoursBlocked' ->> 'DESK',
                                      x.d ->> 'occupancy', x.d ->> 'paid', x.d ->> 'refunded',
                                      x.d ->> 'net', x.d ->> 'deskRevenue',
                                      x.d ->> 'matchesPlayed', x.d ->> 'matchesCancelled',
                                      x.d ->> 'noShows')
                  FROM (SELECT d, n FROM json_array_elements(p_report -> 'days')
                                         WITH ORDINALITY AS e(d, n)
                        UNION ALL
                        SELECT p_report -> 'total', 1000000) x) lines);
END $$;
COMMENT ON FUNCTION venue_report_csv(json) IS
    'A venue''s report as CSV: a header, a row per day, and the total.';
