-- 0026_effective_level: players keeps the band of a settled rating (rated_level) and until
-- when it stays settled (rated_level_until), so that invitations, the waiting list and the
-- search's count go by the level a player plays at. A rating unsettles with time alone (every
-- 30 idle days widen its deviation), so the band is kept with the instant its deviation
-- reaches 150, and the level is read against the clock, with no write when that instant passes.
-- The rules over these columns (the trigger on player_ratings, player_level):
-- sql/areas/40_players.sql.

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
