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
