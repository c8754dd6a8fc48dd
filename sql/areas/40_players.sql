-- 40_players: who a match may invite, and the level a player plays at. One definition of the
-- eligible players (eligible_players_ranked) serves the search's count (eligiblePlayersNearby),
-- the invitations sent on payment and the substitutes after an absence (eligible_players,
-- called by sql/areas/60_lifecycle.sql); callers add the per-match exclusions (already playing,
-- already invited).
--
-- The level a player plays at (player_level) is the band of a settled rating (5 rated matches,
-- deviation below 150), else the declared level. A rating unsettles with time alone (every 30
-- idle days is an empty period that widens its deviation), so a trigger on player_ratings keeps
-- on players the band and the instant it unsettles (rated_level, rated_level_until): the level
-- is read from the row, and nothing is written when that instant passes.
--
-- The search counts eligible players up to a cap ("100 or more"). In a city the answer is
-- nearly always the cap, and telling that needs no single home: player_home_cells counts, per
-- cell of home_cell's grid (sql/areas/10_basics.sql), skill level and reliability score, the
-- players a match could invite whatever the clock says, kept exact by statement triggers on
-- players in the same transaction as every write. eligible_players_count answers the cap when
-- whole cells inside the radius hold more than it, and otherwise counts home by home, nearest
-- first up to the cap; both ways give the same number (tests/63-eligible-cells.bats).
-- eligible_players_count_until adds when time alone may change the count, for the kept search
-- answers of sql/areas/85_search.sql. The ratings themselves: sql/areas/75_results.sql.

-- The level player row p plays at, at p_now: the settled band while it lasts, else the
-- declared level (NULL without one).
CREATE OR REPLACE FUNCTION player_level(p players, p_now timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN p.rated_level_until > p_now THEN p.rated_level ELSE p.skill_level END;
COMMENT ON FUNCTION player_level(players, timestamptz) IS
    'Effective level: the settled rating''s band until it unsettles, else the declared level.';

-- Eligible for a match around (p_lat, p_lng): a home within the radius (great circle, found
-- through earth_box and players_home_earth_idx), automatic invitations on, an effective level
-- at p_now equal to the one asked (any level for ANY), not banned at p_now, reliability at or
-- above the minimum. The chord distance to the centre is what players_home_earth_idx orders
-- by, so a caller can take the players nearest first.
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
COMMENT ON FUNCTION eligible_players_ranked(double precision, double precision, numeric, text,
                                            integer, timestamptz) IS
    'Players that may be invited to a match around (lat, lng), with their chord distance for nearest-first order.';

-- The eligible players without their distance: the invitations of sql/areas/60_lifecycle.sql.
CREATE OR REPLACE FUNCTION eligible_players(p_lat double precision, p_lng double precision,
                                            p_radius_km numeric, p_skill text,
                                            p_min_reliability integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (user_id uuid)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT e.user_id
      FROM eligible_players_ranked(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability, p_now) e;
END;
COMMENT ON FUNCTION eligible_players(double precision, double precision, numeric, text, integer, timestamptz)
    IS 'Players that may be invited to a match searched around (lat, lng) within a radius.';

-- ---- player_home_cells: the eligible players counted per grid cell ----------------------------

-- Statement triggers on players: the rows a statement wrote, from its transition tables, moved
-- into player_home_cells by player_home_cells_apply.
CREATE OR REPLACE FUNCTION player_home_cells_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM player_home_cells_apply(NULL, (SELECT array_agg(n::players) FROM new_rows n));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM player_home_cells_apply((SELECT array_agg(o::players) FROM old_rows o), NULL);
    ELSE
        PERFORM player_home_cells_apply((SELECT array_agg(o::players) FROM old_rows o),
                                        (SELECT array_agg(n::players) FROM new_rows n));
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION player_home_cells_changed() IS
    'Statement trigger on players: keeps player_home_cells exact.';

CREATE OR REPLACE TRIGGER players_home_cells_insert AFTER INSERT ON players
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION player_home_cells_changed();

CREATE OR REPLACE TRIGGER players_home_cells_update AFTER UPDATE ON players
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION player_home_cells_changed();

CREATE OR REPLACE TRIGGER players_home_cells_delete AFTER DELETE ON players
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION player_home_cells_changed();

-- What player_home_cells should hold, counted from players: those a match could invite whatever
-- the clock says (a home, match notifications on, a skill level, no ban recorded, and no band
-- recorded other than the declared level). A player whose ban has lapsed keeps banned_until and is
-- not counted, nor one whose band differs from the declared level: the exact walk counts them,
-- and the cells stay a lower bound of the eligible players, never more.
CREATE OR REPLACE VIEW player_home_cells_counted AS
SELECT home_cell(home_latitude) AS cell_lat, home_cell(home_longitude) AS cell_lng,
       skill_level, reliability_score, count(*)::integer AS players
  FROM players
 WHERE home_latitude IS NOT NULL AND home_longitude IS NOT NULL
   AND match_notifications AND skill_level IS NOT NULL AND banned_until IS NULL
   AND (rated_level IS NULL OR rated_level = skill_level)
 GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW player_home_cells_counted IS
    'player_home_cells as a count of the players would make it.';

-- What player_home_cells should hold and does not, or holds and should not: no row while
-- the triggers do their work (the tests ask after every kind of write).
CREATE OR REPLACE FUNCTION player_home_cells_drift()
    RETURNS TABLE (cell_lat integer, cell_lng integer, skill_level text,
                              reliability_score integer, stored integer, counted integer)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT COALESCE(c.cell_lat, p.cell_lat), COALESCE(c.cell_lng, p.cell_lng),
           COALESCE(c.skill_level, p.skill_level),
           COALESCE(c.reliability_score, p.reliability_score), c.players, p.players
      FROM player_home_cells c
      FULL JOIN player_home_cells_counted p
        ON p.cell_lat = c.cell_lat AND p.cell_lng = c.cell_lng
       AND p.skill_level = c.skill_level AND p.reliability_score = c.reliability_score
     WHERE COALESCE(c.players, 0) <> COALESCE(p.players, 0);
END;
COMMENT ON FUNCTION player_home_cells_drift() IS
    'Rows where player_home_cells differs from a count of players: none, unless something bypassed the triggers.';

-- The exact count, home by home nearest first: players_home_earth_idx returns the homes in
-- chord order, and the scan ends after p_cap players that pass (the box condition also ends it
-- when fewer live in the radius; the search runs with bitmap scans off, which an ordered index
-- scan needs anyway). The fallback of eligible_players_count, and what the tests compare the
-- cells with.
CREATE OR REPLACE FUNCTION eligible_players_count_walk(p_lat double precision, p_lng double precision,
                                                       p_radius_km numeric, p_skill text,
                                                       p_min_reliability integer, p_except uuid,
                                                       p_cap integer, p_now timestamptz DEFAULT now())
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    counted bigint;
BEGIN
    SELECT count(*)
      FROM (SELECT 1
              FROM eligible_players_ranked(p_lat, p_lng, p_radius_km, p_skill,
                                           p_min_reliability, p_now) e
             WHERE e.user_id <> p_except
             ORDER BY e.chord
             LIMIT p_cap) capped
      INTO counted;
    RETURN counted;
END $$;
COMMENT ON FUNCTION eligible_players_count_walk(double precision, double precision, numeric,
                                                text, integer, uuid, integer, timestamptz) IS
    'Number of eligible players around a point other than p_except, at most p_cap, counted home by home nearest first.';

-- The count of the search (match_search_rows, sql/areas/85_search.sql): the cap when the cells
-- alone prove more than the cap live there, else the exact walk.
CREATE OR REPLACE FUNCTION eligible_players_count(p_lat double precision, p_lng double precision,
                                                  p_radius_km numeric, p_skill text,
                                                  p_min_reliability integer, p_except uuid,
                                                  p_cap integer, p_now timestamptz DEFAULT now())
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    IF COALESCE(eligible_players_cells(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability,
                                       p_cap), 0) > p_cap THEN
        RETURN p_cap;
    END IF;
    RETURN eligible_players_count_walk(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability,
                                       p_except, p_cap, p_now);
END $$;
COMMENT ON FUNCTION eligible_players_count(double precision, double precision, numeric, text,
                                           integer, uuid, integer, timestamptz) IS
    'Number of eligible players around a point other than p_except, at most p_cap: from the grid cells when they prove the cap, else home by home.';

-- The level band of a rating: below 1350 BEGINNER, below 1650 INTERMEDIATE, below 1950
-- ADVANCED, else PROFESSIONAL (NULL for none: not STRICT, so that the planner inlines it).
CREATE OR REPLACE FUNCTION rating_band(p_rating double precision) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN p_rating IS NULL THEN NULL
                WHEN p_rating < 1350 THEN 'BEGINNER'
                WHEN p_rating < 1650 THEN 'INTERMEDIATE'
                WHEN p_rating < 1950 THEN 'ADVANCED'
                ELSE 'PROFESSIONAL' END;
COMMENT ON FUNCTION rating_band(double precision) IS 'The skill level band of a Glicko-2 rating.';

-- The level a player plays at, by id, for the feed, joining and the waiting list: read from the
-- columns player_ratings_level keeps.
CREATE OR REPLACE FUNCTION match_player_level(p_player uuid) RETURNS text
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    level text;
BEGIN
    SELECT player_level(p, now()) FROM players p WHERE p.user_id = p_player
      INTO level;
    RETURN level;
END $$;
COMMENT ON FUNCTION match_player_level(uuid) IS
    'The level a player plays at: the settled rating''s band, else the declared level.';

-- Keeps players.rated_level and rated_level_until with player_ratings: the band of a settled
-- rating and the start of the first 30-day empty period after which its deviation is 150 or
-- more (as player_rating replays them: periods of 720 hours from rated_at).
CREATE OR REPLACE FUNCTION player_ratings_level() RETURNS trigger
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

CREATE OR REPLACE TRIGGER player_ratings_level AFTER INSERT OR UPDATE ON player_ratings
    FOR EACH ROW EXECUTE FUNCTION player_ratings_level();

-- Moves player_home_cells by the signed change from the rows p_old to the rows p_new, counting
-- by the same conditions as player_home_cells_counted: a player counts only while the level
-- does not depend on the clock (no settled band, or one equal to the declared level). The
-- cells' rows are locked in key order first, so two writers that share cells wait for each
-- other instead of deadlocking.
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
COMMENT ON FUNCTION player_home_cells_apply(players[], players[]) IS
    'Moves player_home_cells from counting the player rows p_old to counting p_new.';

-- The eligible players counted from whole cells: those of the largest block of cells around the
-- centre's whose four corners lie inside the radius (on a sphere the farthest point of such a
-- block from the centre is a corner), summed a row of cells at a time from the centre outwards.
-- Answers p_cap + 1 as soon as the sum exceeds the cap (one more than the cap, so that leaving
-- out the caller still leaves the cap), and NULL when no block fits (a small radius, the edge
-- of the grid). The corners are compared with the radius as chords (an earth point's <->),
-- not through earth_distance, whose sec_to_gc the planner does not inline.
CREATE OR REPLACE FUNCTION eligible_players_cells(p_lat double precision, p_lng double precision,
                                                  p_radius_km numeric, p_skill text,
                                                  p_min_reliability integer, p_cap integer)
    RETURNS bigint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    clat integer := home_cell(p_lat);
    clng integer := home_cell(p_lng);
    -- the block spans cells clat-k .. clat+k and clng-m .. clng+m; a cell of latitude is
    -- 1.1119 km on earthdistance's sphere, one of longitude that times the cosine
    half double precision := p_radius_km::double precision / sqrt(2) / 1.1119;
    k integer;
    m integer;
    lat_lo double precision;
    lat_hi double precision;
    lng_lo double precision;
    lng_hi double precision;
    -- the radius as a chord, a metre to spare
    reach double precision := metres_chord(p_radius_km::double precision * 1000 - 1);
    centre public.earth := earth_point(p_lat, p_lng);
    total bigint := 0;
    row_sum bigint;
    j integer;
BEGIN
    k := floor(half) - 1;
    m := floor(half / greatest(cos(radians(abs(p_lat))), 1e-6)) - 1;
    -- shrink until the block's corners are inside (the estimate is nearly always right)
    LOOP
        IF k < 0 OR m < 0 THEN
            RETURN NULL;
        END IF;
        lat_lo := (clat - k) / 100.0;
        lat_hi := (clat + k + 1) / 100.0;
        lng_lo := (clng - m) / 100.0;
        lng_hi := (clng + m + 1) / 100.0;
        IF lat_lo < -90 OR lat_hi > 90 OR lng_lo < -180 OR lng_hi > 180 THEN
            RETURN NULL;
        END IF;
        EXIT WHEN centre <-> earth_point(lat_lo, lng_lo) <= reach
              AND centre <-> earth_point(lat_lo, lng_hi) <= reach
              AND centre <-> earth_point(lat_hi, lng_lo) <= reach
              AND centre <-> earth_point(lat_hi, lng_hi) <= reach;
        k := k - 1;
        m := m - 1;
    END LOOP;
    -- rows of cells from the centre's outwards: 0, -1, +1, -2, +2, ...
    FOR j IN 0 .. 2 * k LOOP
        SELECT COALESCE(sum(c.players), 0) INTO row_sum
          FROM player_home_cells c
         WHERE c.cell_lat = clat + (CASE WHEN j % 2 = 1 THEN -1 ELSE 1 END) * ((j + 1) / 2)
           AND c.cell_lng BETWEEN clng - m AND clng + m
           AND (p_skill = 'ANY' OR c.skill_level = p_skill)
           AND c.reliability_score >= p_min_reliability;
        total := total + row_sum;
        IF total > p_cap THEN
            RETURN p_cap + 1;
        END IF;
    END LOOP;
    RETURN total;
END $$;
COMMENT ON FUNCTION eligible_players_cells(double precision, double precision, numeric, text,
                                           integer, integer) IS
    'Eligible players counted from whole grid cells inside the radius (a lower bound), at most p_cap + 1; NULL when no block of cells fits.';

-- The players a match opened around (p_lat, p_lng) would invite, as eligible_players_count
-- counts them, and the first instant after p_now at which time alone may change that count
-- (NULL: none): a ban that lapses, or a rated level that unsettles (player_level), of a
-- player the count passed over or counted. When the cells settle it at the cap, no player
-- whose standing depends on the clock is among those the cells count, so there is none.
CREATE OR REPLACE FUNCTION eligible_players_count_until(p_lat double precision, p_lng double precision,
                                                        p_radius_km numeric, p_skill text,
                                                        p_min_reliability integer, p_except uuid,
                                                        p_cap integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (eligible bigint, until timestamptz)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF COALESCE(eligible_players_cells(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability,
                                       p_cap), 0) > p_cap THEN
        RETURN QUERY SELECT p_cap::bigint, NULL::timestamptz;
        RETURN;
    END IF;
    eligible := eligible_players_count_walk(p_lat, p_lng, p_radius_km, p_skill,
                                           p_min_reliability, p_except, p_cap, p_now);
    -- every player of the radius whose standing the clock can change: with fewer than the
    -- cap, any of them (a lapsing ban adds one); at the cap, those a level change can take
    -- out (one more does not change a count at the cap), so every rated player counts here
    SELECT min(least(CASE WHEN eligible < p_cap AND p.banned_until > p_now THEN p.banned_until END,
                     CASE WHEN p.rated_level_until > p_now THEN p.rated_level_until END))
      INTO until
      FROM players p
     WHERE p.home_latitude IS NOT NULL
       AND p.match_notifications
       AND earth_box(earth_point(p_lat, p_lng), p_radius_km * 1000)
           @> earth_point(p.home_latitude, p.home_longitude)
       AND earth_distance(earth_point(p_lat, p_lng), earth_point(p.home_latitude, p.home_longitude))
           <= p_radius_km * 1000
       AND p.reliability_score >= p_min_reliability
       AND p.user_id <> p_except
       AND ((eligible < p_cap AND p.banned_until > p_now) OR p.rated_level_until > p_now);
    RETURN NEXT;
END $$;
COMMENT ON FUNCTION eligible_players_count_until(double precision, double precision, numeric,
                                                 text, integer, uuid, integer, timestamptz) IS
    'eligible_players_count, and the first instant after p_now at which time alone may change it.';
