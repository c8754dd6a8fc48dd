-- 0024_open_matches: public or private, competitive or friendly matches; the feed of open
-- matches a player could join now, and joining from it.
--
-- A match is PUBLIC (the default: listed in the feed, joinable by anyone it suits) or
-- PRIVATE (only by its link or an invitation; anyone not in it gets 404, as if it did not
-- exist), and competitive (the default: only players of its level join from the feed) or
-- friendly (any level). Both are set when the match is opened and fixed once it is paid (a
-- trigger). They are set as the match is inserted, not updated after: the write that opens
-- a match (or a series of them) first calls match_new_terms, whose transaction-local
-- settings the columns' defaults read, so match_hold stays as it is and a second write of
-- the new row (which would check the double-booking constraint again, against rival
-- bookings still in flight, and deadlock with them) never happens.
--
-- A PRIVATE match sends no automatic invitations (on payment, after an absence, after a
-- hand-over nobody took): they would show it to strangers.
--
-- A player's level for the feed and joining from it is match_player_level: the declared
-- level today; the ratings of the results issue will move it.

-- json_match_request's body reads the row type: it is restated below, with the new fields
DROP FUNCTION json_match_request(match_requests);
ALTER TABLE match_requests
    ADD COLUMN visibility text NOT NULL DEFAULT 'PUBLIC'
        CONSTRAINT match_requests_visibility_check CHECK (visibility IN ('PUBLIC', 'PRIVATE')),
    ADD COLUMN competitive boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN match_requests.visibility IS
    'PUBLIC (in the open-match feed) or PRIVATE (only by link or invitation; 404 to others).';
COMMENT ON COLUMN match_requests.competitive IS
    'true: only players of its level join from the feed; false: a friendly match, any level.';
-- (rows already there keep the constant defaults above; new ones take match_new_terms')
ALTER TABLE match_requests
    ALTER COLUMN visibility
        SET DEFAULT COALESCE(NULLIF(current_setting('courts.new_match_visibility', true), ''),
                             'PUBLIC'),
    ALTER COLUMN competitive
        SET DEFAULT COALESCE(NULLIF(current_setting('courts.new_match_competitive', true), '')::boolean,
                             true);
-- the open-match feed reads the open public matches in start order
CREATE INDEX match_requests_open_feed_idx ON match_requests (starts_at, id)
    WHERE status = 'OPEN' AND visibility = 'PUBLIC';

-- Fixed once paid: visibility and competitive change only while the hold awaits payment.
CREATE FUNCTION match_requests_terms_fixed() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF OLD.status <> 'PENDING_PAYMENT' THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'Visibility and competitiveness are fixed once the match is paid.');
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION match_requests_terms_fixed() IS
    'Row trigger: a paid match keeps its visibility and competitiveness.';
CREATE TRIGGER match_requests_terms_fixed BEFORE UPDATE OF visibility, competitive
    ON match_requests FOR EACH ROW
    WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility
          OR OLD.competitive IS DISTINCT FROM NEW.competitive)
    EXECUTE FUNCTION match_requests_terms_fixed();

-- (0010, restated) Invites the eligible players of a PUBLIC match; a PRIVATE one invites
-- nobody automatically.
CREATE OR REPLACE FUNCTION match_invite(p_match uuid, p_kind text, p_min_reliability integer,
                                        p_now timestamptz)
    RETURNS integer
    LANGUAGE sql
AS $$
    WITH inv AS (
        INSERT INTO invitations (match_request_id, player_id, kind, sent_at)
        SELECT m.id, e.user_id, p_kind, p_now
          FROM match_requests m
         CROSS JOIN LATERAL eligible_players(m.search_latitude, m.search_longitude,
                                             m.search_radius_km, m.skill_level,
                                             p_min_reliability, p_now) e
         WHERE m.id = p_match AND m.visibility = 'PUBLIC'
           AND NOT EXISTS (SELECT 1 FROM match_players mp
                            WHERE mp.match_request_id = m.id AND mp.player_id = e.user_id)
        ON CONFLICT (match_request_id, player_id) DO NOTHING
        RETURNING id, player_id),
    sent AS (
        INSERT INTO notifications (recipient_id, type, payload, created_at)
        SELECT inv.player_id,
               CASE p_kind WHEN 'SUBSTITUTE' THEN 'SUBSTITUTE_INVITATION' ELSE 'MATCH_INVITATION' END,
               jsonb_build_object('matchRequestId', p_match, 'invitationId', inv.id), p_now
          FROM inv)
    SELECT count(*)::integer FROM inv;
$$;

-- The visibility and competitiveness of the matches the rest of this transaction opens
-- (the defaults of match_requests.visibility and .competitive read them).
CREATE FUNCTION match_new_terms(p_visibility text, p_competitive boolean)
    RETURNS void
    LANGUAGE sql
AS $$
    SELECT set_config('courts.new_match_visibility', p_visibility, true),
           set_config('courts.new_match_competitive', p_competitive::text, true);
$$;
COMMENT ON FUNCTION match_new_terms(text, boolean) IS
    'Visibility and competitiveness of the matches the rest of the transaction opens.';

-- The level a player plays at, for the feed and joining from it: the declared one (NULL
-- without a profile or a level).
CREATE FUNCTION match_player_level(p_player uuid) RETURNS text
    LANGUAGE sql STABLE
AS $$
    SELECT skill_level FROM players WHERE user_id = p_player;
$$;
COMMENT ON FUNCTION match_player_level(uuid) IS 'The level a player plays at (the declared one).';

-- The club rule (0012) that would refuse p_player a place in a match at p_starts_at on
-- p_resource now, or NULL: booking_rules_check's reasons, without its lock, for reads.
CREATE FUNCTION booking_rules_refusal(p_resource uuid, p_player uuid, p_starts_at timestamptz,
                                      p_now timestamptz)
    RETURNS text
    LANGUAGE sql STABLE
AS $$
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
     WHERE r.id = p_resource;
$$;
COMMENT ON FUNCTION booking_rules_refusal(uuid, uuid, timestamptz, timestamptz) IS
    'The booking rule that would refuse a player a match, or NULL; no lock (for reads).';

-- The match object (0022) gains visibility and competitive; the shareable token is shown
-- only to p_member (the match's players; the feed shows matches to others).
CREATE FUNCTION json_match_request(m match_requests, p_member boolean DEFAULT true) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', m.id,
        'resourceId', m.resource_id,
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'visibility', m.visibility,
        'competitive', m.competitive,
        'status', m.status,
        'invitationToken', CASE WHEN p_member THEN m.invitation_token END,
        'availableSlots', match_places_free(m),
        'pricePerPlayer', m.price_per_player,
        'currency', m.currency,
        'courtPrice', m.court_price,
        'organizerId', m.organizer_id,
        'customMessage', m.custom_message,
        'expiresAt', api_ts(m.expires_at),
        'createdAt', api_ts(m.created_at),
        'players', COALESCE((SELECT json_agg(json_build_object(
                                'playerId', p.player_id,
                                'team', p.team,
                                'role', p.role,
                                'joinedAt', api_ts(p.joined_at),
                                'checkedIn', p.checked_in_at IS NOT NULL,
                                'checkedInAt', api_ts(p.checked_in_at)) ORDER BY p.joined_at, p.player_id)
                              FROM match_players p
                             WHERE p.match_request_id = m.id AND p.left_at IS NULL), '[]'),
        'waitlistLength', (SELECT count(*) FROM match_waitlist w
                            WHERE w.match_request_id = m.id AND w.ended_at IS NULL));
END;
COMMENT ON FUNCTION json_match_request(match_requests, boolean) IS
    'Match request object with its current players; the token for its players only.';

-- The open-match feed of p_caller: OPEN, PUBLIC matches that have not started, within
-- p_radius_km of (p_lat, p_lng), with a place no player takes and no offer holds, that the
-- caller could join now: of the caller's level when competitive, not the caller's own, not
-- overlapping another match of the caller, not refused by the club's booking rules;
-- optionally on p_date (the venue's local date), starting from p_from to p_to, in p_format.
-- Sorted by start, distance and id, from after the key p_after ([startsAt, distanceKm, id])
-- on, p_limit rows of (the match object with distanceKm and freePlaces, its key).
--
-- The open public matches are read in start order from match_requests_open_feed_idx (from
-- the cursor's start, or within a day either side of p_date), each with its venue's
-- distance, sorted by distance within a start (an incremental sort), and the reading stops
-- once the page is full: the per-player checks (busy, booking rules) run for the matches
-- read, and the objects are built for the page only.
CREATE FUNCTION match_open_feed(p_caller uuid, p_lat double precision, p_lng double precision,
                                p_radius_km numeric, p_date date, p_from time, p_to time,
                                p_format text, p_limit integer, p_after json,
                                p_now timestamptz DEFAULT now())
    RETURNS TABLE (doc json, key json)
    LANGUAGE plpgsql STABLE
    -- the plan that reads in start order and stops: no full sort, no hash join
    SET enable_sort = off SET enable_hashjoin = off SET enable_bitmapscan = off
    SET enable_mergejoin = off
AS $$
DECLARE
    v_level text := match_player_level(p_caller);
    c record;
    n integer := 0;
BEGIN
    FOR c IN
        SELECT m, round((chord_metres(earth_point(v.latitude, v.longitude)
                                      <-> earth_point(p_lat, p_lng)) / 1000)::numeric, 3) AS km
          FROM match_requests m
          JOIN resources r ON r.id = m.resource_id
          JOIN venues v ON v.id = r.venue_id
         WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.starts_at > p_now
           AND m.starts_at >= COALESCE((p_after->>0)::timestamptz,
                                       (p_date - 1)::timestamp AT TIME ZONE 'UTC', '-infinity')
           AND m.starts_at < COALESCE((p_date + 2)::timestamp AT TIME ZONE 'UTC', 'infinity')
           AND (p_date IS NULL OR m.booking_date = p_date)
           AND (p_from IS NULL OR m.start_time >= p_from)
           AND (p_to IS NULL OR m.start_time <= p_to)
           AND (p_format IS NULL OR m.format = p_format)
           AND match_places_free(m) > 0
           AND (NOT m.competitive OR m.skill_level = v_level)
           AND chord_metres(earth_point(v.latitude, v.longitude) <-> earth_point(p_lat, p_lng))
               <= p_radius_km * 1000
           AND (p_after IS NULL
                OR (m.starts_at, round((chord_metres(earth_point(v.latitude, v.longitude)
                                                     <-> earth_point(p_lat, p_lng)) / 1000)::numeric, 3),
                    m.id)
                   > ((p_after->>0)::timestamptz, (p_after->>1)::numeric, (p_after->>2)::uuid))
         ORDER BY m.starts_at, 2, m.id
    LOOP
        CONTINUE WHEN match_player_busy(c.m, p_caller)
                   OR booking_rules_refusal((c.m).resource_id, p_caller, (c.m).starts_at, p_now)
                      IS NOT NULL;
        doc := (left(json_match_request(c.m, false)::text, -1)
                || format(', "distanceKm" : %s, "freePlaces" : {"TEAM_A" : %s, "TEAM_B" : %s}}',
                          c.km, (c.m).team_size - (c.m).team_a_count - (c.m).offers_a,
                          (c.m).team_size - (c.m).team_b_count - (c.m).offers_b))::json;
        key := json_build_array(api_ts((c.m).starts_at), c.km, (c.m).id);
        RETURN NEXT;
        n := n + 1;
        EXIT WHEN n >= p_limit;
    END LOOP;
END $$;
COMMENT ON FUNCTION match_open_feed(uuid, double precision, double precision, numeric, date,
                                    time, time, text, integer, json, timestamptz) IS
    'The open matches near a point a player could join now, a page at a time.';

-- JOIN from the feed: p_player takes a place of p_team in the PUBLIC match p_match, as by its
-- link (match_join_locked: the rules and the payment). 404 NOT_FOUND (unknown, or PRIVATE and
-- the caller not in it), 409 LEVEL_MISMATCH (competitive, of another level than the
-- caller's), and the link's refusals. Returns the match.
CREATE FUNCTION match_join_open(p_match uuid, p_player uuid, p_team text,
                                p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_found boolean;
    v_in boolean;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    v_found := FOUND;
    v_in := EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                       AND player_id = p_player AND left_at IS NULL);
    IF NOT v_found OR (m.visibility = 'PRIVATE' AND NOT v_in) THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    IF NOT v_in AND m.competitive
       AND m.skill_level IS DISTINCT FROM match_player_level(p_player) THEN
        PERFORM lifecycle_fail(409, 'LEVEL_MISMATCH',
            format('This competitive match is for %s players; ask for a place instead.',
                   m.skill_level));
    END IF;
    PERFORM match_join_locked(m, p_player, p_team, NULL, p_now);
    RETURN m.id;
END $$;
COMMENT ON FUNCTION match_join_open(uuid, uuid, text, timestamptz) IS
    'JOIN from the open-match feed: a public match of the caller''s level (or friendly).';
