-- Matches player p_player is in at venue p_venue that are live as of p_now (not cancelled,
-- not a lapsed hold), with their start.
CREATE OR REPLACE FUNCTION player_venue_matches(p_player uuid, p_venue uuid, p_now timestamptz)
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

-- Refuses a new venue when the owner already has p_max awaiting approval.
CREATE OR REPLACE FUNCTION pending_venues_check(p_owner uuid, p_max integer)
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

-- Spends one write of p_user's budget. Returns 0 when it was spent, or the whole seconds to
-- wait until one write is available again (nothing spent).
CREATE OR REPLACE FUNCTION write_budget_spend(p_user uuid, p_per_minute integer, p_burst integer,
                                              p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_tokens double precision;
BEGIN
    INSERT INTO write_budgets AS b (user_id, tokens, refreshed_at)
    VALUES (p_user, p_burst - 1, p_now)
    ON CONFLICT (user_id) DO UPDATE
       SET tokens = least(p_burst, b.tokens + extract(epoch FROM p_now - b.refreshed_at)
                                              * p_per_minute / 60.0) - 1,
           refreshed_at = p_now
     WHERE least(p_burst, b.tokens + extract(epoch FROM p_now - b.refreshed_at)
                                     * p_per_minute / 60.0) >= 1;
    IF FOUND THEN
        RETURN 0;
    END IF;
    SELECT b.tokens + extract(epoch FROM p_now - b.refreshed_at) * p_per_minute / 60.0
      INTO v_tokens FROM write_budgets b WHERE b.user_id = p_user;
    RETURN greatest(1, ceil((1 - v_tokens) * 60.0 / p_per_minute))::integer;
END $$;
COMMENT ON FUNCTION write_budget_spend(uuid, integer, integer, timestamptz) IS
    'Spends one write of a caller''s budget: 0, or the seconds to wait before the next one.';

-- The club rule (0012) that would refuse p_player a place in a match at p_starts_at on
-- p_resource now, or NULL, without a lock: what booking_rules_check raises, and the feed's
-- filter.
CREATE OR REPLACE FUNCTION booking_rules_refusal(p_resource uuid, p_player uuid, p_starts_at timestamptz,
                                                 p_now timestamptz)
    RETURNS text
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE result_ text;
BEGIN
    SELECT CASE
        WHEN v.booking_window_days IS NOT NULL
             AND p_starts_at > p_now + make_interval(days => v.booking_window_days)
            THEN 'OUTSIDE_BOOKING_WINDOW'
        WHEN v.min_notice_minutes IS NOT NULL
             AND p_starts_at < p_now + make_interval(mins => v.min_notice_minutes)
            THEN 'TOO_SHORT_NOTICE'
        WHEN v.max_upcoming_per_player IS NOT NULL
             AND (SELECT count(*) FROM player_venue_matches(p_player, v.id, p_now) pm
                   WHERE pm.starts_at > p_now) >= v.max_upcoming_per_player
            THEN 'UPCOMING_LIMIT'
        WHEN v.max_per_player_per_day IS NOT NULL
             AND (SELECT count(*) FROM player_venue_matches(p_player, v.id, p_now) pm
                   WHERE (pm.starts_at AT TIME ZONE v.timezone)::date
                         = (p_starts_at AT TIME ZONE v.timezone)::date) >= v.max_per_player_per_day
            THEN 'DAILY_LIMIT'
        WHEN v.max_per_player_per_week IS NOT NULL
             AND (SELECT count(*) FROM player_venue_matches(p_player, v.id, p_now) pm
                   WHERE date_trunc('week', pm.starts_at AT TIME ZONE v.timezone)
                         = date_trunc('week', p_starts_at AT TIME ZONE v.timezone))
                 >= v.max_per_player_per_week
            THEN 'WEEKLY_LIMIT'
    END
      FROM resources r JOIN venues v ON v.id = r.venue_id
     WHERE r.id = p_resource
      INTO result_;
    RETURN result_;
END $$;
COMMENT ON FUNCTION booking_rules_refusal(uuid, uuid, timestamptz, timestamptz) IS
    'The booking rule that would refuse a player a match, or NULL; no lock (for reads).';

-- (0021, restated) the status through a variable; planned without the values, as in 0031
CREATE OR REPLACE FUNCTION hold_limit_check(p_player uuid, p_max integer, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    -- a parameter of the plan, not a constant: see the header of 0034
    v_unpaid text := 'PENDING_PAYMENT';
BEGIN
    PERFORM 1 FROM users WHERE id = p_player FOR UPDATE;
    IF p_max IS NOT NULL AND (SELECT count(DISTINCT COALESCE(sm.series_id, m.id))
                                FROM match_requests m
                                LEFT JOIN match_series_matches sm ON sm.match_request_id = m.id
                               WHERE m.organizer_id = p_player AND m.status = v_unpaid
                                 AND m.expires_at > p_now) >= p_max THEN
        PERFORM lifecycle_fail(409, 'HOLD_LIMIT',
            format('You already hold %s unpaid matches, the most allowed; pay for or cancel one first.',
                   p_max));
    END IF;
END $$;
COMMENT ON FUNCTION hold_limit_check(uuid, integer, timestamptz) IS
    'Refuses a hold past the limit of live unpaid holds per player; a series counts once.';

-- 0042_feed_rules_unset: the open-match feed asks what a venue's booking rules refuse only
-- of the venues that set one.
--
-- The feed (0029) called booking_rules_refusal for every match it was about to show, and
-- the call sets up its plan (26 nodes and a sub-plan for each counted rule) whatever the
-- venue sets: on the bench's CITY data, where no venue sets a rule, 2,000 calls over 100
-- pages cost 1.09 ms of a page's 11.3 ms (track_functions on). booking_rules_check has
-- returned at once for a venue without rules since 0035; the test it made is now one
-- expression, venue_sets_rules, which the planner inlines. The feed, restated once by
-- 0043_feed_by_level, reads it with the venue its cursor has joined already, so that a
-- match of a venue without rules costs no call at all; a venue that sets any rule is asked
-- as before.
CREATE OR REPLACE FUNCTION venue_sets_rules(v venues) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN num_nonnulls(v.booking_window_days, v.min_notice_minutes, v.max_upcoming_per_player,
                        v.max_per_player_per_day, v.max_per_player_per_week) > 0;
COMMENT ON FUNCTION venue_sets_rules(venues) IS
    'Whether a venue sets any of its five booking rules.';

-- (0035, restated) the test is venue_sets_rules
CREATE OR REPLACE FUNCTION booking_rules_check(p_resource uuid, p_player uuid,
                                               p_starts_at timestamptz, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v venues;
    v_code text;
BEGIN
    PERFORM 1 FROM users WHERE id = p_player FOR UPDATE;
    SELECT vv.* INTO v FROM resources r JOIN venues vv ON vv.id = r.venue_id WHERE r.id = p_resource;
    IF NOT venue_sets_rules(v) THEN
        RETURN;
    END IF;
    v_code := booking_rules_refusal(p_resource, p_player, p_starts_at, p_now);
    IF v_code IS NULL THEN
        RETURN;
    END IF;
    PERFORM lifecycle_fail(409, v_code, CASE v_code
        WHEN 'OUTSIDE_BOOKING_WINDOW' THEN
            format('This club takes bookings at most %s days ahead.', v.booking_window_days)
        WHEN 'TOO_SHORT_NOTICE' THEN
            format('This club takes bookings at least %s minutes before the start.',
                   v.min_notice_minutes)
        WHEN 'UPCOMING_LIMIT' THEN
            format('This club allows %s upcoming matches per player.', v.max_upcoming_per_player)
        WHEN 'DAILY_LIMIT' THEN
            format('This club allows %s matches per player a day.', v.max_per_player_per_day)
        ELSE
            format('This club allows %s matches per player a week.', v.max_per_player_per_week)
        END);
END $$;
COMMENT ON FUNCTION booking_rules_check(uuid, uuid, timestamptz, timestamptz) IS
    'Refuses a player''s way into a match that the venue''s booking rules do not allow.';
