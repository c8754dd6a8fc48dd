-- 0024_open_matches: open matches, and levels that move with their results.
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
-- A player of a match that is CONFIRMED (everyone checked in) or has started reports its
-- result once: the games of each set, TEAM_A's first. A player of the other team confirms
-- or disputes it; the sweeper confirms what nobody disputed 48 hours after the end
-- (match_policy.result_confirm_after). AMERICANO has no result.
--
-- A confirmed result of a competitive match is one Glicko-2 rating period for each of its
-- players (Glickman, "Example of the Glicko-2 system"; tau 0.5, convergence tolerance
-- 0.000001): a single game against the opposing side, scored 1 or 0, the side being one
-- opponent with the mean of their ratings and the root mean square of their deviations. A
-- player's rating starts from the declared level (BEGINNER 1200, INTERMEDIATE 1500, ADVANCED
-- 1800, PROFESSIONAL 2100; 1500 without one) with deviation 350 and volatility 0.06; every
-- 30 days without a rated match is an empty period (the deviation grows). The effective
-- level is the rating's band once the player has 5 rated matches and a deviation below 150,
-- the declared level before that; the feed and joining from it use it (match_player_level).
--
-- A result is rated once: under the lock of its row, with match_results.rated_at recording
-- it, so two confirmations at once or a replayed sweeper change nothing more.

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
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM set_config('courts.new_match_visibility', p_visibility, true),
            set_config('courts.new_match_competitive', p_competitive::text, true);
END $$;
COMMENT ON FUNCTION match_new_terms(text, boolean) IS
    'Visibility and competitiveness of the matches the rest of the transaction opens.';

ALTER TABLE match_policy ADD COLUMN result_confirm_after interval NOT NULL DEFAULT '48 hours'
    CONSTRAINT match_policy_result_confirm_after_check CHECK (result_confirm_after >= interval '0');
COMMENT ON COLUMN match_policy.result_confirm_after IS
    'A result nobody disputed is confirmed this long after the match''s end.';

CREATE TABLE match_results (
    match_request_id uuid PRIMARY KEY REFERENCES match_requests(id),
    sets             jsonb NOT NULL,
    winner           text NOT NULL CONSTRAINT match_results_winner_check
                     CHECK (winner IN ('TEAM_A', 'TEAM_B')),
    status           text NOT NULL CONSTRAINT match_results_status_check
                     CHECK (status IN ('PENDING', 'CONFIRMED', 'DISPUTED')),
    reported_by      uuid NOT NULL REFERENCES users(id),
    reported_team    text NOT NULL CONSTRAINT match_results_reported_team_check
                     CHECK (reported_team IN ('TEAM_A', 'TEAM_B')),
    reported_at      timestamptz NOT NULL,
    answered_by      uuid REFERENCES users(id),
    answered_at      timestamptz,
    dispute_reason   text,
    rated_at         timestamptz,
    CONSTRAINT match_results_answered CHECK ((status = 'PENDING') = (answered_at IS NULL)),
    CONSTRAINT match_results_rated_confirmed CHECK (rated_at IS NULL OR status = 'CONFIRMED')
);
CREATE INDEX match_results_pending_idx ON match_results (reported_at) WHERE status = 'PENDING';
COMMENT ON TABLE match_results IS 'The result of a played match, one per match, as reported and answered.';
COMMENT ON COLUMN match_results.sets IS 'The games of each set, TEAM_A''s first: [[6, 4], [3, 6], [10, 8]].';
COMMENT ON COLUMN match_results.winner IS 'The team that won more sets.';
COMMENT ON COLUMN match_results.status IS
    'PENDING (reported), CONFIRMED (by the other team or the sweeper), DISPUTED (by the other team).';
COMMENT ON COLUMN match_results.reported_team IS 'The reporter''s team: the other one answers.';
COMMENT ON COLUMN match_results.answered_by IS 'Who confirmed or disputed it; NULL when the sweeper confirmed it.';
COMMENT ON COLUMN match_results.dispute_reason IS 'The reason given with a dispute.';
COMMENT ON COLUMN match_results.rated_at IS 'When the ratings moved by it (competitive matches only).';

CREATE TABLE player_ratings (
    player_id     uuid PRIMARY KEY REFERENCES users(id),
    rating        double precision NOT NULL,
    deviation     double precision NOT NULL CONSTRAINT player_ratings_deviation_check
                  CHECK (deviation > 0 AND deviation <= 350),
    volatility    double precision NOT NULL CONSTRAINT player_ratings_volatility_check
                  CHECK (volatility > 0),
    rated_matches integer NOT NULL CONSTRAINT player_ratings_rated_matches_check
                  CHECK (rated_matches >= 0),
    rated_at      timestamptz NOT NULL
);
COMMENT ON TABLE player_ratings IS 'A player''s Glicko-2 rating after their last rated match (none before).';
COMMENT ON COLUMN player_ratings.rated_at IS 'The last rating period with a game: empty periods count from it.';

CREATE TABLE rating_changes (
    player_id        uuid NOT NULL REFERENCES users(id),
    match_request_id uuid NOT NULL REFERENCES match_requests(id),
    rating_before    double precision NOT NULL,
    deviation_before double precision NOT NULL,
    rating_after     double precision NOT NULL,
    deviation_after  double precision NOT NULL,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (player_id, match_request_id)
);
COMMENT ON TABLE rating_changes IS 'What each rated result did to each of its players'' rating, once per player and match.';
COMMENT ON COLUMN rating_changes.rating_before IS 'After the empty periods of inactivity, before the game.';

-- The winner of sets [[a, b], ...] (TEAM_A's games first), or NULL when they are not a result:
-- 1 to 5 sets of two whole numbers 0..99 with a winner each, and one team winning more.
CREATE FUNCTION result_winner(p_sets jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN bool_and(ok) AND count(*) BETWEEN 1 AND 5 AND sum(won_a) <> sum(won_b)
                THEN CASE WHEN sum(won_a) > sum(won_b) THEN 'TEAM_A' ELSE 'TEAM_B' END END
      FROM (SELECT jsonb_typeof(s) = 'array' AND jsonb_array_length(s) = 2
                   AND jsonb_typeof(s->0) = 'number' AND jsonb_typeof(s->1) = 'number'
                   AND (s->>0) ~ '^[0-9]{1,2}$' AND (s->>1) ~ '^[0-9]{1,2}$'
                   AND (s->>0) <> (s->>1) AS ok,
                   CASE WHEN (s->>0) ~ '^[0-9]+$' AND (s->>1) ~ '^[0-9]+$'
                        AND (s->>0)::int > (s->>1)::int THEN 1 ELSE 0 END AS won_a,
                   CASE WHEN (s->>0) ~ '^[0-9]+$' AND (s->>1) ~ '^[0-9]+$'
                        AND (s->>0)::int < (s->>1)::int THEN 1 ELSE 0 END AS won_b
              FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_sets) = 'array'
                                             THEN p_sets ELSE '[]' END) s) x;
$$;
COMMENT ON FUNCTION result_winner(jsonb) IS 'The winning team of a list of sets, NULL if it is not a result.';
ALTER TABLE match_results ADD CONSTRAINT match_results_sets_valid
    CHECK (result_winner(sets) IS NOT DISTINCT FROM winner);

-- One Glicko-2 rating period (Glickman, steps 1 to 8; tau 0.5, tolerance 0.000001): the
-- rating, deviation and volatility after games against opponents p_opp_r / p_opp_rd with
-- scores p_scores (1 win, 0 loss, 0.5 draw); with no games, only the deviation grows.
CREATE FUNCTION glicko2_period(p_r double precision, p_rd double precision,
                               p_sigma double precision, p_opp_r double precision[],
                               p_opp_rd double precision[], p_scores double precision[],
                               OUT r double precision, OUT rd double precision,
                               OUT sigma double precision)
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    k constant double precision := 173.7178;
    tau constant double precision := 0.5;
    eps constant double precision := 0.000001;
    mu double precision := (p_r - 1500) / k;
    phi double precision := p_rd / k;
    v double precision := 0;
    d double precision := 0;
    g double precision;
    e double precision;
    i integer;
    a double precision;
    b double precision;
    c double precision;
    fa double precision;
    fb double precision;
    fc double precision;
    big_a double precision := ln(p_sigma * p_sigma);
    phi_star double precision;
BEGIN
    IF cardinality(p_scores) IS NULL OR cardinality(p_scores) = 0 THEN
        r := p_r;
        rd := least(k * sqrt(phi * phi + p_sigma * p_sigma), 350);
        sigma := p_sigma;
        RETURN;
    END IF;
    FOR i IN 1 .. cardinality(p_scores) LOOP
        g := 1 / sqrt(1 + 3 * power(p_opp_rd[i] / k, 2) / (pi() * pi()));
        e := 1 / (1 + exp(-g * (mu - (p_opp_r[i] - 1500) / k)));
        v := v + g * g * e * (1 - e);
        d := d + g * (p_scores[i] - e);
    END LOOP;
    v := 1 / v;
    d := v * d;
    -- step 5: the new volatility (Illinois algorithm)
    a := big_a;
    IF d * d > phi * phi + v THEN
        b := ln(d * d - phi * phi - v);
    ELSE
        i := 1;
        WHILE glicko2_f(big_a - i * tau, d, phi, v, big_a, tau) < 0 LOOP
            i := i + 1;
        END LOOP;
        b := big_a - i * tau;
    END IF;
    fa := glicko2_f(a, d, phi, v, big_a, tau);
    fb := glicko2_f(b, d, phi, v, big_a, tau);
    WHILE abs(b - a) > eps LOOP
        c := a + (a - b) * fa / (fb - fa);
        fc := glicko2_f(c, d, phi, v, big_a, tau);
        IF fc * fb <= 0 THEN
            a := b;
            fa := fb;
        ELSE
            fa := fa / 2;
        END IF;
        b := c;
        fb := fc;
    END LOOP;
    sigma := exp(a / 2);
    -- steps 6 to 8
    phi_star := sqrt(phi * phi + sigma * sigma);
    phi := 1 / sqrt(1 / (phi_star * phi_star) + 1 / v);
    mu := mu + phi * phi * (d / v);
    r := k * mu + 1500;
    rd := k * phi;
END $$;
COMMENT ON FUNCTION glicko2_period(double precision, double precision, double precision,
                                   double precision[], double precision[], double precision[]) IS
    'One Glicko-2 rating period (tau 0.5, tolerance 0.000001).';

-- Glickman's f(x) of step 5.
CREATE FUNCTION glicko2_f(x double precision, d double precision, phi double precision,
                          v double precision, a double precision, tau double precision)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE
AS $$
    SELECT exp(x) * (d * d - phi * phi - v - exp(x)) / (2 * power(phi * phi + v + exp(x), 2))
           - (x - a) / (tau * tau);
$$;
COMMENT ON FUNCTION glicko2_f(double precision, double precision, double precision,
                              double precision, double precision, double precision) IS
    'Glicko-2, step 5: the function whose zero is the new volatility''s log square.';

-- A player's rating at p_now: the stored one with an empty period per 30 days since the
-- last rated match, or the start from the declared level.
CREATE FUNCTION player_rating(p_player uuid, p_now timestamptz,
                              OUT rating double precision, OUT deviation double precision,
                              OUT volatility double precision, OUT rated_matches integer)
    LANGUAGE plpgsql STABLE
AS $$
DECLARE
    pr player_ratings;
    n integer;
BEGIN
    SELECT * INTO pr FROM player_ratings WHERE player_id = p_player;
    IF NOT FOUND THEN
        rating := CASE (SELECT skill_level FROM players WHERE user_id = p_player)
                      WHEN 'BEGINNER' THEN 1200 WHEN 'ADVANCED' THEN 1800
                      WHEN 'PROFESSIONAL' THEN 2100 ELSE 1500 END;
        deviation := 350;
        volatility := 0.06;
        rated_matches := 0;
        RETURN;
    END IF;
    rating := pr.rating;
    deviation := pr.deviation;
    volatility := pr.volatility;
    rated_matches := pr.rated_matches;
    n := greatest(floor(extract(epoch FROM p_now - pr.rated_at) / (30 * 86400))::integer, 0);
    FOR i IN 1 .. n LOOP
        EXIT WHEN deviation >= 350;
        SELECT g.rd INTO deviation FROM glicko2_period(rating, deviation, volatility, '{}', '{}', '{}') g;
    END LOOP;
END $$;
COMMENT ON FUNCTION player_rating(uuid, timestamptz) IS
    'A player''s rating now: after the empty periods of inactivity, or the start from the declared level.';

-- The level a player plays at, for the feed and joining from it: the band of the rating once
-- it is settled (5 rated matches, deviation below 150), the declared level before that (NULL
-- without a profile or a level).
CREATE FUNCTION match_player_level(p_player uuid) RETURNS text
    LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN r.rated_matches >= 5 AND r.deviation < 150
                THEN CASE WHEN r.rating < 1350 THEN 'BEGINNER'
                          WHEN r.rating < 1650 THEN 'INTERMEDIATE'
                          WHEN r.rating < 1950 THEN 'ADVANCED'
                          ELSE 'PROFESSIONAL' END
                ELSE (SELECT skill_level FROM players WHERE user_id = p_player) END
      FROM player_rating(p_player, now()) r;
$$;
COMMENT ON FUNCTION match_player_level(uuid) IS
    'The level a player plays at: the settled rating''s band, else the declared level.';

-- The club rule (0012) that would refuse p_player a place in a match at p_starts_at on
-- p_resource now, or NULL, without a lock: what booking_rules_check raises, and the feed's
-- filter.
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

-- (0012, restated) The booking rules' check is booking_rules_refusal under the lock of the
-- player's row, raised with the rule's numbers: the rules are written once.
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
    v_code := booking_rules_refusal(p_resource, p_player, p_starts_at, p_now);
    IF v_code IS NULL THEN
        RETURN;
    END IF;
    SELECT vv.* INTO v FROM resources r JOIN venues vv ON vv.id = r.venue_id WHERE r.id = p_resource;
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

-- The match object (0022) gains visibility and competitive, its result, and shows the
-- shareable token only to p_member (the match's players; the feed shows matches to others).
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
                            WHERE w.match_request_id = m.id AND w.ended_at IS NULL),
        'result', (SELECT json_build_object('sets', r.sets, 'winner', r.winner, 'status', r.status)
                     FROM match_results r WHERE r.match_request_id = m.id));
END;
COMMENT ON FUNCTION json_match_request(match_requests, boolean) IS
    'Match request object with its current players and result; the token for its players only.';

-- (0007, restated) The profile gains the rating: rating and ratingDeviation (two decimals),
-- ratedMatches and effectiveSkillLevel.
CREATE OR REPLACE FUNCTION json_player(p players) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT json_build_object(
        'playerId', p.user_id,
        'displayName', p.display_name,
        'skillLevel', p.skill_level,
        'homeLatitude', p.home_latitude,
        'homeLongitude', p.home_longitude,
        'matchNotifications', p.match_notifications,
        'reliabilityScore', p.reliability_score,
        'noShowCount', p.no_show_count,
        'bannedUntil', api_ts(p.banned_until),
        'createdAt', api_ts(p.created_at),
        'updatedAt', api_ts(p.updated_at),
        'rating', round(r.rating::numeric, 2),
        'ratingDeviation', round(r.deviation::numeric, 2),
        'ratedMatches', r.rated_matches,
        'effectiveSkillLevel', match_player_level(p.user_id))
      FROM player_rating(p.user_id, now()) r;
$$;

-- The open-match feed of p_caller: OPEN, PUBLIC matches that have not started, within
-- p_radius_km of (p_lat, p_lng), with a place no player takes and no offer holds, that the
-- caller could join now: of the caller's level when competitive, not the caller's own, not
-- overlapping another match of the caller, not refused by the club's booking rules;
-- optionally on p_date (the venue's local date), starting from p_from to p_to, in p_format.
-- Sorted by start, distance and id, from after the key p_after ([startsAt, distanceKm, id])
-- on, p_limit rows of (the match object with distanceKm and freePlaces, its key).
--
-- The open public matches are read in start order from match_requests_starts_idx (0002; from
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
        SELECT m, d.km
          FROM match_requests m
          JOIN resources r ON r.id = m.resource_id
          JOIN venues v ON v.id = r.venue_id
         CROSS JOIN LATERAL (SELECT round((chord_metres(earth_point(v.latitude, v.longitude)
                                                        <-> earth_point(p_lat, p_lng)) / 1000)::numeric,
                                          3) AS km) d
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
           AND d.km <= p_radius_km
           AND (p_after IS NULL
                OR (m.starts_at, d.km, m.id)
                   > ((p_after->>0)::timestamptz, (p_after->>1)::numeric, (p_after->>2)::uuid))
         ORDER BY m.starts_at, d.km, m.id
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

-- The ratings moved by the confirmed result of locked match p_match, once: each player a
-- period of one game against the other side (their mean rating, the root mean square of
-- their deviations), scored by the result. Only for a competitive match. Returns how many
-- players' ratings moved.
CREATE FUNCTION match_result_rate(p_match uuid, p_now timestamptz)
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    res match_results;
    n integer;
BEGIN
    SELECT * INTO res FROM match_results WHERE match_request_id = p_match FOR UPDATE;
    IF NOT FOUND OR res.status <> 'CONFIRMED' OR res.rated_at IS NOT NULL
       OR NOT (SELECT competitive FROM match_requests WHERE id = p_match) THEN
        RETURN 0;
    END IF;
    UPDATE match_results SET rated_at = p_now WHERE match_request_id = p_match;
    WITH pl AS (
        SELECT mp.player_id, mp.team, r.*
          FROM match_players mp
         CROSS JOIN LATERAL player_rating(mp.player_id, p_now) r
         WHERE mp.match_request_id = p_match AND mp.left_at IS NULL),
    side AS (
        SELECT team, avg(rating) AS rating, sqrt(avg(deviation * deviation)) AS deviation
          FROM pl GROUP BY team),
    moved AS (
        SELECT pl.player_id, pl.rating AS r0, pl.deviation AS rd0, pl.rated_matches, g.*
          FROM pl
          JOIN side o ON o.team <> pl.team
         CROSS JOIN LATERAL glicko2_period(pl.rating, pl.deviation, pl.volatility,
                                           ARRAY[o.rating], ARRAY[o.deviation],
                                           ARRAY[CASE WHEN pl.team = res.winner THEN 1.0 ELSE 0.0 END]) g),
    kept AS (
        INSERT INTO player_ratings (player_id, rating, deviation, volatility, rated_matches, rated_at)
        SELECT player_id, r, rd, sigma, rated_matches + 1, p_now FROM moved
        ON CONFLICT (player_id) DO UPDATE
           SET rating = EXCLUDED.rating, deviation = EXCLUDED.deviation,
               volatility = EXCLUDED.volatility, rated_matches = EXCLUDED.rated_matches,
               rated_at = EXCLUDED.rated_at)
    INSERT INTO rating_changes (player_id, match_request_id, rating_before, deviation_before,
                                rating_after, deviation_after, created_at)
    SELECT player_id, p_match, r0, rd0, r, rd, p_now FROM moved;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
COMMENT ON FUNCTION match_result_rate(uuid, timestamptz) IS
    'A confirmed competitive result moves its players'' ratings, once.';

-- The result object of match p_match, or NULL.
CREATE FUNCTION json_match_result(p_match uuid) RETURNS json
    LANGUAGE sql STABLE
AS $$
    SELECT json_build_object('sets', r.sets, 'winner', r.winner, 'status', r.status,
                             'reportedBy', r.reported_by, 'reportedAt', api_ts(r.reported_at))
      FROM match_results r WHERE r.match_request_id = p_match;
$$;
COMMENT ON FUNCTION json_match_result(uuid) IS 'Result object of a match: sets, winner, status, who reported it, when.';

-- The active player p_player of locked match m, or 404 (match_lock's answer).
-- RESULT: p_player reports the result of match p_match. 404 (not a player), 409
-- NO_RESULT_FOR_FORMAT (AMERICANO), MATCH_NOT_PLAYED (neither CONFIRMED nor started, or
-- cancelled), RESULT_EXISTS; sets that are not a result are INVALID_RESULT (the API checks
-- them first). The other team is told RESULT_REPORTED.
CREATE FUNCTION match_result_report(p_match uuid, p_player uuid, p_sets jsonb,
                                    p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    v_team text;
    v_winner text := result_winner(p_sets);
BEGIN
    IF m.format = 'AMERICANO' THEN
        PERFORM lifecycle_fail(409, 'NO_RESULT_FOR_FORMAT', 'An AMERICANO has no result.');
    END IF;
    IF NOT (m.status = 'CONFIRMED'
            OR (m.status IN ('MATCHED', 'COMPLETED') AND m.starts_at <= p_now)) THEN
        PERFORM lifecycle_fail(409, 'MATCH_NOT_PLAYED',
            'A result is reported once every player checked in or the match has started.');
    END IF;
    IF EXISTS (SELECT 1 FROM match_results WHERE match_request_id = p_match) THEN
        PERFORM lifecycle_fail(409, 'RESULT_EXISTS', 'This match already has a result.');
    END IF;
    IF v_winner IS NULL THEN
        PERFORM lifecycle_fail(409, 'INVALID_RESULT', 'The sets are not a result.');
    END IF;
    SELECT team INTO v_team FROM match_players
     WHERE match_request_id = p_match AND player_id = p_player AND left_at IS NULL;
    INSERT INTO match_results (match_request_id, sets, winner, status, reported_by,
                               reported_team, reported_at)
    VALUES (p_match, p_sets, v_winner, 'PENDING', p_player, v_team, p_now);
    PERFORM notify(ARRAY(SELECT player_id FROM match_players WHERE match_request_id = p_match
                            AND left_at IS NULL AND team <> v_team ORDER BY player_id),
                   'RESULT_REPORTED', jsonb_build_object('matchRequestId', p_match), p_now);
END $$;
COMMENT ON FUNCTION match_result_report(uuid, uuid, jsonb, timestamptz) IS
    'RESULT: a player reports the result of a played match; the other team answers it.';

-- CONFIRM or DISPUTE (p_confirm) of the result of p_match by p_player of the other team. 404
-- (not a player, or no result yet: RESULT_NOT_FOUND), 403 SAME_TEAM (the reporting team),
-- 409 RESULT_DISPUTED (confirming a disputed one), RESULT_CONFIRMED (disputing a confirmed
-- one). A repeat changes nothing. A confirmation rates the match; everyone is told
-- RESULT_CONFIRMED, or the reporting team RESULT_DISPUTED.
CREATE FUNCTION match_result_answer(p_match uuid, p_player uuid, p_confirm boolean,
                                    p_reason text, p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests := match_lock(p_match, p_player);
    res match_results;
BEGIN
    SELECT * INTO res FROM match_results WHERE match_request_id = p_match FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'RESULT_NOT_FOUND', 'No result has been reported for this match.');
    END IF;
    IF (SELECT team FROM match_players WHERE match_request_id = p_match AND player_id = p_player
           AND left_at IS NULL) = res.reported_team THEN
        PERFORM lifecycle_fail(403, 'SAME_TEAM',
            'Only a player of the other team confirms or disputes a result.');
    END IF;
    IF res.status = (CASE WHEN p_confirm THEN 'CONFIRMED' ELSE 'DISPUTED' END) THEN
        RETURN;
    END IF;
    IF res.status <> 'PENDING' THEN
        PERFORM lifecycle_fail(409, CASE WHEN p_confirm THEN 'RESULT_DISPUTED' ELSE 'RESULT_CONFIRMED' END,
            format('The result is %s already.', lower(res.status)));
    END IF;
    UPDATE match_results
       SET status = CASE WHEN p_confirm THEN 'CONFIRMED' ELSE 'DISPUTED' END,
           answered_by = p_player, answered_at = p_now,
           dispute_reason = CASE WHEN p_confirm THEN NULL ELSE p_reason END
     WHERE match_request_id = p_match;
    IF p_confirm THEN
        PERFORM match_result_rate(p_match, p_now);
        PERFORM notify(match_active_players(p_match), 'RESULT_CONFIRMED',
                       jsonb_build_object('matchRequestId', p_match), p_now);
    ELSE
        PERFORM notify(ARRAY(SELECT player_id FROM match_players WHERE match_request_id = p_match
                                AND left_at IS NULL AND team = res.reported_team ORDER BY player_id),
                       'RESULT_DISPUTED',
                       jsonb_build_object('matchRequestId', p_match, 'reason', p_reason), p_now);
    END IF;
END $$;
COMMENT ON FUNCTION match_result_answer(uuid, uuid, boolean, text, timestamptz) IS
    'CONFIRM (rates the match) or DISPUTE of a result by the other team.';

-- Sweeper rule: PENDING results of matches that ended result_confirm_after ago -> CONFIRMED
-- and rated, a batch at a time. Returns how many.
CREATE FUNCTION sweep_results(p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS integer
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
    n integer := 0;
BEGIN
    FOR v_match IN
        SELECT r.match_request_id FROM match_results r
          JOIN match_requests m ON m.id = r.match_request_id
         WHERE r.status = 'PENDING'
           AND m.ends_at + (SELECT result_confirm_after FROM match_policy) <= p_now
         ORDER BY r.match_request_id LIMIT p_limit
           FOR UPDATE OF r SKIP LOCKED
    LOOP
        UPDATE match_results SET status = 'CONFIRMED', answered_at = p_now
         WHERE match_request_id = v_match;
        PERFORM match_result_rate(v_match, p_now);
        PERFORM notify(match_active_players(v_match), 'RESULT_CONFIRMED',
                       jsonb_build_object('matchRequestId', v_match), p_now);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;
COMMENT ON FUNCTION sweep_results(integer, timestamptz) IS
    'Sweeper rule: undisputed results confirmed and rated after result_confirm_after; returns how many.';
