-- 0026_effective_level: invitations and the waiting list go by the level a player plays at.
--
-- The effective level (0024) is the band of a settled rating (5 rated matches, deviation
-- below 150), the declared level before that. The feed and joining from it used it; the
-- automatic invitations still chose players by the declared level, and anyone could queue
-- for a full competitive match and be offered its next place. Now:
--
-- 1. players keeps the band of a settled rating and until when it stays settled
--    (rated_level, rated_level_until), written by a trigger whenever player_ratings changes.
--    A rating unsettles with time alone (every 30 idle days an empty period widens the
--    deviation), so the band is kept with the instant its deviation reaches 150:
--    player_level(p, now) reads the band before it and the declared level from it, with no
--    write when it passes. match_player_level reads the same columns (it replayed the empty
--    periods on every call before).
-- 2. The invitations sent on payment and after an absence (eligible_players_ranked, which
--    the search's count also reads) match the effective level.
-- 3. The search's count by cells (0017) counts a player only while the level does not depend
--    on the clock: no settled band, or one equal to the declared level. A player whose band
--    differs is counted by the exact walk only; the cells stay a lower bound, as for a ban
--    that has lapsed.
-- 4. The waiting list of a competitive PUBLIC match takes players of its level only (409
--    LEVEL_MISMATCH: ask for a place instead), as joining from the feed does; a PRIVATE match
--    answers 404 to anyone not in it, as everywhere else. An approved place request (0025)
--    still puts its player on the list: the players accepted them.

ALTER TABLE players
    ADD COLUMN rated_level text CONSTRAINT players_rated_level_check
        CHECK (rated_level IN ('BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL')),
    ADD COLUMN rated_level_until timestamptz,
    ADD CONSTRAINT players_rated_level_both
        CHECK ((rated_level IS NULL) = (rated_level_until IS NULL));
COMMENT ON COLUMN players.rated_level IS
    'The band of the player''s settled rating (5 rated matches, deviation below 150); NULL while unsettled.';
COMMENT ON COLUMN players.rated_level_until IS
    'When empty periods of inactivity widen that rating''s deviation to 150: the declared level applies again from then.';

-- The level band of a rating: below 1350 BEGINNER, below 1650 INTERMEDIATE, below 1950
-- ADVANCED, else PROFESSIONAL (NULL for none: not STRICT, so that the planner inlines it).
CREATE FUNCTION rating_band(p_rating double precision) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN p_rating IS NULL THEN NULL
                WHEN p_rating < 1350 THEN 'BEGINNER'
                WHEN p_rating < 1650 THEN 'INTERMEDIATE'
                WHEN p_rating < 1950 THEN 'ADVANCED'
                ELSE 'PROFESSIONAL' END;
COMMENT ON FUNCTION rating_band(double precision) IS 'The skill level band of a Glicko-2 rating.';

-- The level player row p plays at, at p_now: the settled band while it lasts, else the
-- declared level (NULL without one).
CREATE FUNCTION player_level(p players, p_now timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN p.rated_level_until > p_now THEN p.rated_level ELSE p.skill_level END;
COMMENT ON FUNCTION player_level(players, timestamptz) IS
    'Effective level: the settled rating''s band until it unsettles, else the declared level.';

-- (0024, restated) The level a player plays at now, from the columns the trigger below keeps.
CREATE OR REPLACE FUNCTION match_player_level(p_player uuid) RETURNS text
    LANGUAGE sql STABLE
AS $$
    SELECT player_level(p, now()) FROM players p WHERE p.user_id = p_player;
$$;

-- Keeps players.rated_level and rated_level_until with player_ratings: the band of a settled
-- rating and the start of the first 30-day empty period after which its deviation is 150 or
-- more (as player_rating replays them: periods of 720 hours from rated_at).
CREATE FUNCTION player_ratings_level() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    v_rd double precision := NEW.deviation;
    v_periods integer := 0;
    v_level text;
    v_until timestamptz;
BEGIN
    IF NEW.rated_matches >= 5 AND NEW.deviation < 150 THEN
        WHILE v_rd < 150 LOOP
            SELECT g.rd INTO v_rd
              FROM glicko2_period(NEW.rating, v_rd, NEW.volatility, '{}', '{}', '{}') g;
            v_periods := v_periods + 1;
        END LOOP;
        v_level := rating_band(NEW.rating);
        v_until := NEW.rated_at + v_periods * interval '720 hours';
    END IF;
    UPDATE players SET rated_level = v_level, rated_level_until = v_until
     WHERE user_id = NEW.player_id
       AND (rated_level, rated_level_until) IS DISTINCT FROM (v_level, v_until);
    RETURN NULL;
END $$;
COMMENT ON FUNCTION player_ratings_level() IS
    'Row trigger on player_ratings: the settled band and how long it lasts, on players.';
CREATE TRIGGER player_ratings_level AFTER INSERT OR UPDATE ON player_ratings
    FOR EACH ROW EXECUTE FUNCTION player_ratings_level();

-- (0015, restated) The eligibility rules: the effective level at p_now.
CREATE OR REPLACE FUNCTION eligible_players_ranked(p_lat double precision, p_lng double precision,
                                                   p_radius_km numeric, p_skill text,
                                                   p_min_reliability integer,
                                                   p_now timestamptz DEFAULT now())
    RETURNS TABLE (user_id uuid, chord double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT p.user_id, earth_point(p.home_latitude, p.home_longitude) <-> earth_point(p_lat, p_lng)
      FROM players p
     WHERE p.home_latitude IS NOT NULL
       AND p.match_notifications
       AND earth_box(earth_point(p_lat, p_lng), p_radius_km * 1000)
           @> earth_point(p.home_latitude, p.home_longitude)
       AND earth_distance(earth_point(p_lat, p_lng), earth_point(p.home_latitude, p.home_longitude))
           <= p_radius_km * 1000
       AND player_level(p, p_now) IS NOT NULL
       AND (p_skill = 'ANY' OR player_level(p, p_now) = p_skill)
       AND (p.banned_until IS NULL OR p.banned_until <= p_now)
       AND p.reliability_score >= p_min_reliability;
END;

-- (0017, restated) The cells count a player only while the level does not depend on the
-- clock: no settled band, or one equal to the declared level.
CREATE OR REPLACE FUNCTION player_home_cells_apply(p_old players[], p_new players[]) RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    -- one row per cell that changes, players holding the signed change
    delta player_home_cells[] := ARRAY(
        SELECT ROW(k.cell_lat, k.cell_lng, k.skill_level, k.reliability_score, k.n)::player_home_cells
          FROM (SELECT home_cell(d.home_latitude) AS cell_lat,
                       home_cell(d.home_longitude) AS cell_lng, d.skill_level,
                       d.reliability_score, sum(d.n) AS n
                  FROM (SELECT o.*, -1 AS n FROM unnest(p_old) o
                        UNION ALL
                        SELECT w.*, 1 FROM unnest(p_new) w) d
                 WHERE d.home_latitude IS NOT NULL AND d.home_longitude IS NOT NULL
                   AND d.match_notifications AND d.skill_level IS NOT NULL
                   AND d.banned_until IS NULL
                   AND (d.rated_level IS NULL OR d.rated_level = d.skill_level)
                 GROUP BY 1, 2, 3, 4
                HAVING sum(d.n) <> 0) k
         ORDER BY 1);
BEGIN
    IF cardinality(delta) = 0 THEN
        RETURN;
    END IF;
    PERFORM 1
       FROM player_home_cells c
       JOIN unnest(delta) d USING (cell_lat, cell_lng, skill_level, reliability_score)
      ORDER BY c.cell_lat, c.cell_lng, c.skill_level, c.reliability_score
        FOR UPDATE OF c;
    UPDATE player_home_cells c
       SET players = c.players + d.players
      FROM unnest(delta) d
     WHERE (d.cell_lat, d.cell_lng, d.skill_level, d.reliability_score)
         = (c.cell_lat, c.cell_lng, c.skill_level, c.reliability_score);
    -- cells new to the table; one another writer has just made is added to
    INSERT INTO player_home_cells AS c
    SELECT d.*
      FROM unnest(delta) d
     WHERE NOT EXISTS (SELECT 1 FROM player_home_cells x
                        WHERE (x.cell_lat, x.cell_lng, x.skill_level, x.reliability_score)
                            = (d.cell_lat, d.cell_lng, d.skill_level, d.reliability_score))
        ON CONFLICT (cell_lat, cell_lng, skill_level, reliability_score)
        DO UPDATE SET players = c.players + EXCLUDED.players;
END $$;

CREATE OR REPLACE VIEW player_home_cells_counted AS
SELECT home_cell(home_latitude) AS cell_lat, home_cell(home_longitude) AS cell_lng,
       skill_level, reliability_score, count(*)::integer AS players
  FROM players
 WHERE home_latitude IS NOT NULL AND home_longitude IS NOT NULL
   AND match_notifications AND skill_level IS NOT NULL AND banned_until IS NULL
   AND (rated_level IS NULL OR rated_level = skill_level)
 GROUP BY 1, 2, 3, 4;

-- (0022, restated) WAITLIST, by the rules of joining from the feed: 404 NOT_FOUND for a
-- PRIVATE match and anyone not in it, 409 LEVEL_MISMATCH for a competitive PUBLIC match of
-- another level than the player's.
CREATE OR REPLACE FUNCTION match_waitlist_join(p_match uuid, p_player uuid, p_team text,
                                               p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_id uuid;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    PERFORM match_offers_settle(p_match, p_now);
    SELECT * INTO m FROM match_requests WHERE id = p_match;
    IF EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                  AND player_id = p_player AND left_at IS NULL) THEN
        PERFORM lifecycle_fail(409, 'ALREADY_IN_MATCH', 'You already play in this match.');
    END IF;
    IF m.visibility = 'PRIVATE' THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    IF m.starts_at <= p_now THEN
        PERFORM lifecycle_fail(409, 'MATCH_STARTED', 'The match has already started.');
    END IF;
    IF m.status <> 'MATCHED' THEN
        PERFORM lifecycle_fail(409, 'MATCH_NOT_FULL',
            'Only a full match has a waiting list; join an open match instead.');
    END IF;
    IF EXISTS (SELECT 1 FROM match_waitlist WHERE match_request_id = p_match
                  AND player_id = p_player AND ended_at IS NULL) THEN
        PERFORM lifecycle_fail(409, 'ALREADY_WAITING', 'You are already on this waiting list.');
    END IF;
    IF m.competitive AND m.skill_level IS DISTINCT FROM match_player_level(p_player) THEN
        PERFORM lifecycle_fail(409, 'LEVEL_MISMATCH',
            format('This competitive match is for %s players; ask for a place instead.',
                   m.skill_level));
    END IF;
    INSERT INTO match_waitlist (match_request_id, player_id, team, joined_at)
    VALUES (p_match, p_player, p_team, p_now)
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;
