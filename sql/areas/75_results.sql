-- Results and ratings: the result of a played match, reported by one team and answered by
-- the other, and the Glicko-2 ratings that the confirmed results of competitive matches move.
--
-- A player of a match that is CONFIRMED (everyone checked in) or has started reports its
-- result once (match_result_report): the games of each set, TEAM_A's first. A player of the
-- other team confirms or disputes it (match_result_answer); the sweeper confirms what nobody
-- disputed match_policy.result_confirm_after after the end (sweep_results,
-- sql/areas/95_sweeper.sql). An AMERICANO has no result.
--
-- A confirmed result of a competitive match is one Glicko-2 rating period for each of its
-- players (Glickman, "Example of the Glicko-2 system"): a single game against the other side,
-- taken as one opponent with the mean of their ratings and the root mean square of their
-- deviations, scored 1 or 0. A rating starts from the declared level (BEGINNER 1200,
-- INTERMEDIATE 1500, ADVANCED 1800, PROFESSIONAL 2100; 1500 without one) with deviation 350
-- and volatility 0.06; every 30 days without a rated match is an empty period, in which only
-- the deviation grows. A result is rated once: under the lock of its match_results row, with
-- rated_at recording it, so two confirmations at once or a replayed sweep change nothing more.
--
-- Tables: match_results, player_ratings, rating_changes. Relies on match_lock, lifecycle_fail
-- and match_active_players (sql/areas/60_lifecycle.sql) and notify
-- (sql/areas/50_notifications.sql). Feeds the effective level (rating_band,
-- match_player_level and the player_ratings trigger in sql/areas/40_players.sql) and the
-- ratings shown by json_player and json_place_request (sql/areas/90_json.sql).

-- The winner of sets [[a, b], ...] (TEAM_A's games first), or NULL when they are not a result:
-- 1 to 5 sets of two whole numbers 0..99 with a winner each, and one team winning more.
CREATE OR REPLACE FUNCTION result_winner(p_sets jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    winner text;
BEGIN
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
                                             THEN p_sets ELSE '[]' END) s) x
      INTO winner;
    RETURN winner;
END $$;
COMMENT ON FUNCTION result_winner(jsonb) IS 'The winning team of a list of sets, NULL if it is not a result.';

-- One Glicko-2 rating period (Glickman, steps 1 to 8; tau 0.5, tolerance 0.000001): the
-- rating, deviation and volatility after games against opponents p_opp_r / p_opp_rd with
-- scores p_scores (1 win, 0 loss, 0.5 draw); with no games, only the deviation grows.
CREATE OR REPLACE FUNCTION glicko2_period(p_r double precision, p_rd double precision,
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

-- Glickman's f(x) of step 5, whose zero glicko2_period finds for the new volatility.
CREATE OR REPLACE FUNCTION glicko2_f(x double precision, d double precision, phi double precision,
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
-- last rated match (at most until the deviation is back at 350), or the start from the
-- declared level. What the profile shows and what a new result is rated from.
CREATE OR REPLACE FUNCTION player_rating(p_player uuid, p_now timestamptz,
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

-- The ratings moved by the confirmed result of match p_match, once: each player a period
-- of one game against the other side (their mean rating, the root mean square of their
-- deviations), scored by the result. Only for a competitive match. The result's row is
-- locked and rated_at set before anything moves, so a second call does nothing. Called by
-- match_result_answer and sweep_results; returns how many players' ratings moved.
CREATE OR REPLACE FUNCTION match_result_rate(p_match uuid, p_now timestamptz)
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

-- RESULT: p_player reports the result of match p_match. 404 (not a player), 409
-- NO_RESULT_FOR_FORMAT (AMERICANO), MATCH_NOT_PLAYED (neither CONFIRMED nor started, or
-- cancelled), RESULT_EXISTS; sets that are not a result are INVALID_RESULT (the API checks
-- them first). The other team is told RESULT_REPORTED.
CREATE OR REPLACE FUNCTION match_result_report(p_match uuid, p_player uuid, p_sets jsonb,
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
CREATE OR REPLACE FUNCTION match_result_answer(p_match uuid, p_player uuid, p_confirm boolean,
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
