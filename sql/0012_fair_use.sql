-- 0012_fair_use: one account must not be able to hold every court.
--
--  * A player has at most MAX_UNPAID_HOLDS (configuration, default 2) live holds awaiting
--    payment; the next create is 409 HOLD_LIMIT. Lapsed holds do not count, cron or not.
--  * A venue's owner sets booking rules (all optional, NULL = no limit): how many upcoming
--    matches a player may be in at the venue, how many starting on one local day or in one
--    ISO week, how far ahead a slot may be booked and how soon before its start. Slots outside
--    the window or the notice are listed unavailable; every way into a match (create, join by
--    link, accepting an invitation) is checked in the same transaction as the write, by the
--    lifecycle functions of 0010, so no race gets past them.
--  * An owner has at most MAX_PENDING_VENUES (default 10) venues awaiting approval.
-- Checks for one player run under a lock of the player's users row, so concurrent requests of
-- the same player are counted one after the other.

ALTER TABLE venues
    ADD COLUMN max_upcoming_per_player integer CHECK (max_upcoming_per_player > 0),
    ADD COLUMN max_per_player_per_day  integer CHECK (max_per_player_per_day > 0),
    ADD COLUMN max_per_player_per_week integer CHECK (max_per_player_per_week > 0),
    ADD COLUMN booking_window_days     integer CHECK (booking_window_days > 0),
    ADD COLUMN min_notice_minutes      integer CHECK (min_notice_minutes > 0);
COMMENT ON COLUMN venues.max_upcoming_per_player IS 'Booking rule: future matches a player may be in at this venue; NULL no limit.';
COMMENT ON COLUMN venues.max_per_player_per_day IS 'Booking rule: matches of a player starting on one local day here; NULL no limit.';
COMMENT ON COLUMN venues.max_per_player_per_week IS 'Booking rule: matches of a player starting in one ISO week here; NULL no limit.';
COMMENT ON COLUMN venues.booking_window_days IS 'Booking rule: a slot may be booked at most this many days ahead; NULL no limit.';
COMMENT ON COLUMN venues.min_notice_minutes IS 'Booking rule: a slot may be booked at least this many minutes before its start; NULL no limit.';

-- Booking rules as the owner reads and writes them.
CREATE FUNCTION json_booking_rules(v venues) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'maxUpcomingPerPlayer', v.max_upcoming_per_player,
        'maxPerPlayerPerDay', v.max_per_player_per_day,
        'maxPerPlayerPerWeek', v.max_per_player_per_week,
        'bookingWindowDays', v.booking_window_days,
        'minNoticeMinutes', v.min_notice_minutes);
END;
COMMENT ON FUNCTION json_booking_rules(venues) IS 'The booking rules of a venue.';

-- Matches player p_player is in at venue p_venue that are live as of p_now (not cancelled,
-- not a lapsed hold), with their start.
CREATE FUNCTION player_venue_matches(p_player uuid, p_venue uuid, p_now timestamptz)
    RETURNS TABLE (match_request_id uuid, starts_at timestamptz, status text)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT m.id, m.starts_at, m.status
      FROM match_players mp
      JOIN match_requests m ON m.id = mp.match_request_id
      JOIN resources r ON r.id = m.resource_id
     WHERE mp.player_id = p_player AND mp.left_at IS NULL AND r.venue_id = p_venue
       AND m.status <> 'CANCELLED'
       AND NOT (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now);
END;
COMMENT ON FUNCTION player_venue_matches(uuid, uuid, timestamptz) IS
    'Live matches of a player at a venue (the booking rules count these).';

-- Checks the booking rules of the venue of court p_resource for p_player entering a match
-- that starts at p_starts_at; raises 409 OUTSIDE_BOOKING_WINDOW, TOO_SHORT_NOTICE,
-- UPCOMING_LIMIT, DAILY_LIMIT or WEEKLY_LIMIT. Locks the player's users row first.
CREATE FUNCTION booking_rules_check(p_resource uuid, p_player uuid, p_starts_at timestamptz,
                                    p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v venues;
    v_count integer;
BEGIN
    PERFORM 1 FROM users WHERE id = p_player FOR UPDATE;
    SELECT vv.* INTO v FROM resources r JOIN venues vv ON vv.id = r.venue_id WHERE r.id = p_resource;
    IF v.booking_window_days IS NOT NULL
       AND p_starts_at > p_now + make_interval(days => v.booking_window_days) THEN
        PERFORM lifecycle_fail(409, 'OUTSIDE_BOOKING_WINDOW',
            format('This club takes bookings at most %s days ahead.', v.booking_window_days));
    END IF;
    IF v.min_notice_minutes IS NOT NULL
       AND p_starts_at < p_now + make_interval(mins => v.min_notice_minutes) THEN
        PERFORM lifecycle_fail(409, 'TOO_SHORT_NOTICE',
            format('This club takes bookings at least %s minutes before the start.',
                   v.min_notice_minutes));
    END IF;
    IF v.max_upcoming_per_player IS NOT NULL THEN
        SELECT count(*) INTO v_count FROM player_venue_matches(p_player, v.id, p_now)
         WHERE starts_at > p_now;
        IF v_count >= v.max_upcoming_per_player THEN
            PERFORM lifecycle_fail(409, 'UPCOMING_LIMIT',
                format('This club allows %s upcoming matches per player.', v.max_upcoming_per_player));
        END IF;
    END IF;
    IF v.max_per_player_per_day IS NOT NULL THEN
        SELECT count(*) INTO v_count FROM player_venue_matches(p_player, v.id, p_now) pm
         WHERE (pm.starts_at AT TIME ZONE v.timezone)::date = (p_starts_at AT TIME ZONE v.timezone)::date;
        IF v_count >= v.max_per_player_per_day THEN
            PERFORM lifecycle_fail(409, 'DAILY_LIMIT',
                format('This club allows %s matches per player a day.', v.max_per_player_per_day));
        END IF;
    END IF;
    IF v.max_per_player_per_week IS NOT NULL THEN
        SELECT count(*) INTO v_count FROM player_venue_matches(p_player, v.id, p_now) pm
         WHERE date_trunc('week', pm.starts_at AT TIME ZONE v.timezone)
               = date_trunc('week', p_starts_at AT TIME ZONE v.timezone);
        IF v_count >= v.max_per_player_per_week THEN
            PERFORM lifecycle_fail(409, 'WEEKLY_LIMIT',
                format('This club allows %s matches per player a week.', v.max_per_player_per_week));
        END IF;
    END IF;
END $$;
COMMENT ON FUNCTION booking_rules_check(uuid, uuid, timestamptz, timestamptz) IS
    'Refuses a player''s way into a match that the venue''s booking rules do not allow.';

-- Refuses a new hold when p_player already has p_max live unpaid holds (NULL: no limit).
-- Runs under the lock booking_rules_check took on the player.
CREATE FUNCTION hold_limit_check(p_player uuid, p_max integer, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM 1 FROM users WHERE id = p_player FOR UPDATE;
    IF p_max IS NOT NULL AND (SELECT count(*) FROM match_requests
                               WHERE organizer_id = p_player AND status = 'PENDING_PAYMENT'
                                 AND expires_at > p_now) >= p_max THEN
        PERFORM lifecycle_fail(409, 'HOLD_LIMIT',
            format('You already hold %s unpaid matches, the most allowed; pay for or cancel one first.',
                   p_max));
    END IF;
END $$;
COMMENT ON FUNCTION hold_limit_check(uuid, integer, timestamptz) IS
    'Refuses a hold past the limit of live unpaid holds per player.';

-- Refuses a new venue when the owner already has p_max awaiting approval.
CREATE FUNCTION pending_venues_check(p_owner uuid, p_max integer)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM 1 FROM users WHERE id = p_owner FOR UPDATE;
    IF (SELECT count(*) FROM venues WHERE owner_id = p_owner AND status = 'PENDING_APPROVAL')
       >= p_max THEN
        PERFORM lifecycle_fail(409, 'PENDING_LIMIT',
            format('You already have %s venues awaiting approval, the most allowed.', p_max));
    END IF;
END $$;
COMMENT ON FUNCTION pending_venues_check(uuid, integer) IS
    'Refuses a venue past the limit of venues awaiting approval per owner.';

-- Slots outside a venue's booking window or notice are unavailable (0004, restated with
-- the two rules).
CREATE OR REPLACE FUNCTION resource_slots(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (start_time time, end_time time, available boolean, price numeric, currency char(3))
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    -- Lateral sub-selects with LIMIT (rather than EXISTS) keep every look-up an index probe
    -- per court, also when the search inlines this function for thousands of courts.
    SELECT api_secs_time(g.s), api_secs_time(g.s + d.dur),
           d.bookable AND pr.price IS NOT NULL
             AND (p_date + api_secs_time(g.s)) AT TIME ZONE d.timezone > p_now
             AND (d.notice IS NULL
                  OR (p_date + api_secs_time(g.s)) AT TIME ZONE d.timezone >= p_now + d.notice)
             AND (d.booking_window IS NULL
                  OR (p_date + api_secs_time(g.s)) AT TIME ZONE d.timezone <= p_now + d.booking_window)
             AND taken.found IS NULL,
           pr.price, pr.currency
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
      -- a live request holding part of the slot; a lapsed payment hold is not live
      LEFT JOIN LATERAL (
            SELECT 1 AS found
              FROM match_requests m
             WHERE m.resource_id = p_resource
               AND m.status <> 'CANCELLED'
               AND NOT (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now)
               AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
                   && tsrange(p_date + api_secs_time(g.s), p_date + api_secs_time(g.s + d.dur))
             LIMIT 1) taken ON true
     ORDER BY g.s;
END;
COMMENT ON FUNCTION resource_slots(uuid, date, timestamptz) IS
    'Every slot of a court on a local date with availability and price, as of p_now.';
