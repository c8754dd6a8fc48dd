-- Fair use: one account must not be able to hold every court, nor flood the service.
--
-- - A player holds at most MAX_UNPAID_HOLDS live holds awaiting payment (hold_limit_check,
--   409 HOLD_LIMIT); a lapsed hold does not count, whether or not the sweeper ended it, and a
--   weekly series counts once however many dates it holds.
-- - A venue's owner may set five booking rules (NULL: no limit): how far ahead a slot may be
--   booked, how soon before its start, and how many matches a player may be in at the venue
--   upcoming, on one local day or in one ISO week. booking_rules_refusal states them once: it
--   is the open-match feed's filter (sql/areas/70_open_matches.sql, no lock) and what
--   booking_rules_check raises on every way into a match (create, join, waiting list, place
--   request). venue_sets_rules, an expression the planner inlines, lets both skip the venues
--   that set none, which are most of them.
-- - An owner has at most MAX_PENDING_VENUES venues awaiting approval (pending_venues_check).
-- - Every player and owner has a token bucket of writes (write_budget_spend, from
--   common/budget.c). It lives in the database because the programs run as separate
--   processes that share no memory; one guarded upsert per write keeps it exact under races.
--
-- The checks run in the transaction of the write they guard, called by the lifecycle
-- functions (sql/areas/60_lifecycle.sql, 65_places.sql, 80_series.sql), and those for one
-- player under a lock of the player's users row: concurrent requests of one player are
-- counted one after the other, so no race gets past them. A refusal is lifecycle_fail's.
-- The slots a venue's window or notice excludes are listed unavailable by
-- sql/areas/30_slots.sql.

-- Matches player p_player is in at venue p_venue that are live as of p_now (not cancelled,
-- not a lapsed hold), with their start: what the counted booking rules count.
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

-- Refuses a new venue when owner p_owner already has p_max awaiting approval (409
-- PENDING_LIMIT), counted under a lock of the owner's users row.
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

-- Spends one write of p_user's budget: a bucket of at most p_burst writes that refills at
-- p_per_minute a minute. Returns 0 when it was spent, or the whole seconds to wait until one
-- write is available again (nothing spent). The upsert's WHERE is the guard: two writes at
-- once are spent one after the other on the row.
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

-- The booking rule of the venue of court p_resource that would refuse p_player a place in a
-- match starting at p_starts_at, as of p_now, or NULL; it takes no lock: what
-- booking_rules_check raises, and the open-match feed's filter.
CREATE OR REPLACE FUNCTION booking_rules_refusal(p_resource uuid, p_player uuid, p_starts_at timestamptz,
                                                 p_now timestamptz)
    RETURNS text
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    refusal text;
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
      INTO refusal;
    RETURN refusal;
END $$;
COMMENT ON FUNCTION booking_rules_refusal(uuid, uuid, timestamptz, timestamptz) IS
    'The booking rule that would refuse a player a match, or NULL; no lock (for reads).';

-- Refuses a new hold when p_player already has p_max live unpaid holds (NULL: no limit), the
-- holds of one series counting once. Locks the player's users row first.
--
-- The count must read the player's own holds whatever the statistics say. It keeps the plan
-- made without the values (plan_cache_mode): planned with them, "expires_at > p_now" looks
-- empty to statistics older than the latest holds, and the planner walks every live hold of
-- every player. And it names the status through a variable, so that no partial index on
-- status = 'PENDING_PAYMENT' can be proven to hold the rows: such an index looks empty when
-- the last ANALYZE saw no unpaid hold, and would be taken for its size. The planner then
-- weighs only whole-table indexes, and takes match_requests_organizer_expiry_idx: it reads
-- the player's rows that expire later than p_now, however many other players hold.
CREATE OR REPLACE FUNCTION hold_limit_check(p_player uuid, p_max integer, p_now timestamptz)
    RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    -- a parameter of the plan, not a constant (see above)
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

-- Whether venue v sets any booking rule: booking_rules_check and the feed ask
-- booking_rules_refusal only of a venue that does, since setting up its plan costs
-- something on every call and most venues set no rule. The feed reads it with the venue row
-- it has joined already, so a match of a venue without rules costs no call at all.
CREATE OR REPLACE FUNCTION venue_sets_rules(v venues) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN num_nonnulls(v.booking_window_days, v.min_notice_minutes, v.max_upcoming_per_player,
                        v.max_per_player_per_day, v.max_per_player_per_week) > 0;
COMMENT ON FUNCTION venue_sets_rules(venues) IS
    'Whether a venue sets any of its five booking rules.';

-- Refuses p_player a way into a match at p_starts_at on court p_resource that the venue's
-- booking rules do not allow: 409 OUTSIDE_BOOKING_WINDOW, TOO_SHORT_NOTICE, UPCOMING_LIMIT,
-- DAILY_LIMIT or WEEKLY_LIMIT, with the rule's number in the detail. Locks the player's
-- users row first, as its callers expect, then reads the venue once and returns at once
-- when it sets no rule.
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
