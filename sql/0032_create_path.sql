-- 0032_create_path: opening a match writes its new row once and asks the database once.
--
-- Measured on the bench's CITY data, server side (a warm session, 150 holds each rolled
-- back, the median of 12 alternating runs): match_hold and the answer's JSON took 1.29 ms,
-- of which
-- - 0.20 ms went to counting the organizer's place in match_players_count (0002): an
--   UPDATE of the row just inserted, which prepares the 16 CHECK constraints of
--   match_requests again, and is a second write of the new row (when the page has no room
--   for a HOT update, a second entry in each index, the double-booking constraint checked
--   again against rival bookings still in flight: what 0024 avoided for the match's terms);
-- - 0.08 ms went to match_expire_holds called with no lapsed hold on the slot (nearly
--   always): match_end and match_move behind it, three statements for nothing.
-- So a new match counts its organizer from its insert (team_a_count 1, written by
-- match_hold), the count trigger leaves the organizer's row alone when it is inserted (a
-- leave, were there one, is still counted), and the lapsed holds are ended when there are.
--
-- match_create is the whole of POST /api/match/requests in one statement: the terms
-- (match_new_terms), the hold and the answer's JSON, one round trip where the program made
-- three. The program keeps BEGIN and COMMIT around it: a statement that finds its kept
-- connection closed by a restarted server is sent again only outside a transaction, and a
-- write must never be sent twice.

-- HOLD (0010, restated): the organizer is counted in the insert; lapsed holds on the slot
-- are ended only when there are some.
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
    v_entry uuid;
    v_lapsed uuid[];
BEGIN
    SELECT rs.slot_duration_minutes = p_duration, s.end_time,
           (p_date + p_start) AT TIME ZONE v.timezone <= p_now, s.price, s.currency, v.timezone
      INTO v_dur_ok, v_end, v_past, v_price, v_currency, v_tz
      FROM resources rs
      JOIN venues v ON v.id = rs.venue_id
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
    SELECT team_size INTO v_size FROM match_formats WHERE format = p_format;
    -- team_a_count 1: the organizer's place, inserted below (match_players_count skips it)
    INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time, end_time,
                                starts_at, ends_at, format, skill_level, status, team_size,
                                team_a_count, court_price, price_per_player, currency,
                                custom_message, search_latitude, search_longitude,
                                search_radius_km, expires_at, created_at, updated_at)
    SELECT p_resource, p_organizer, p_date, p_start, v_end,
           (p_date + p_start) AT TIME ZONE v_tz, (p_date + v_end) AT TIME ZONE v_tz,
           p_format, p_skill, t.to_status, v_size, 1, v_price,
           floor(v_price * 100 / (2 * v_size)) / 100, v_currency, p_message,
           p_lat, p_lng, p_radius, p_now + make_interval(secs => p_hold_seconds), p_now, p_now
      FROM match_transitions t WHERE t.from_status = 'NONE' AND t.event = 'HOLD'
    RETURNING id INTO v_id;
    INSERT INTO match_status_changes (match_request_id, event, from_status, to_status, changed_at)
    SELECT v_id, 'HOLD', 'NONE', status, p_now FROM match_requests WHERE id = v_id;
    INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
    VALUES (v_id, p_organizer, 'TEAM_A', 'ORGANIZER', p_now)
    RETURNING id INTO v_entry;
    -- the organizer's share takes the cents that do not divide evenly
    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
                          entry_id, created_at, updated_at)
    SELECT id, organizer_id, 'PAYMENT', court_price - price_per_player * (2 * team_size - 1),
           currency, 'PENDING', v_entry, p_now, p_now
      FROM match_requests WHERE id = v_id;
    RETURN v_id;
END $$;

-- The counters: every place but the organizer's, which its match counts from its insert.
DROP TRIGGER match_players_count ON match_players;
CREATE TRIGGER match_players_count AFTER INSERT ON match_players
    FOR EACH ROW WHEN (NEW.role <> 'ORGANIZER') EXECUTE FUNCTION match_players_count();
CREATE TRIGGER match_players_count_left AFTER UPDATE OF left_at ON match_players
    FOR EACH ROW EXECUTE FUNCTION match_players_count();
COMMENT ON COLUMN match_requests.team_a_count IS
    'Players now in TEAM_A: the organizer from the match''s insert (match_hold), the others '
    'kept by trigger from match_players.';
COMMENT ON FUNCTION match_players_count() IS
    'Maintains match_requests.team_a_count / team_b_count but for the organizer''s place, '
    'which match_hold writes with the match.';

-- POST /api/match/requests: the terms of the new match (match_new_terms), its hold, and the
-- request's JSON as the rest of the transaction sees it. Refusals as match_hold's.
CREATE FUNCTION match_create(p_visibility text, p_competitive boolean, p_resource uuid,
                             p_organizer uuid, p_date date, p_start time, p_duration integer,
                             p_format text, p_skill text, p_message text,
                             p_lat double precision, p_lng double precision, p_radius numeric,
                             p_hold_seconds integer, p_max_holds integer)
    RETURNS json
    LANGUAGE plpgsql
AS $$
DECLARE
    v_id uuid;
BEGIN
    PERFORM match_new_terms(p_visibility, p_competitive);
    v_id := match_hold(p_resource, p_organizer, p_date, p_start, p_duration, p_format, p_skill,
                       p_message, p_lat, p_lng, p_radius, p_hold_seconds,
                       p_max_holds => p_max_holds);
    RETURN (SELECT json_match_request(m) FROM match_requests m WHERE m.id = v_id);
END $$;
COMMENT ON FUNCTION match_create(text, boolean, uuid, uuid, date, time, integer, text, text, text,
                                 double precision, double precision, numeric, integer, integer) IS
    'A new match on a free slot with its terms, held for payment; returns its JSON.';
