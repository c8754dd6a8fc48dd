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

CREATE FUNCTION venue_sets_rules(v venues) RETURNS boolean
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
