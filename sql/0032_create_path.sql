-- 0032_create_path: the comment of match_requests.team_a_count says how a new match counts
-- its organizer: from its insert (match_hold writes team_a_count 1), not by the count trigger
-- updating the new row, which would write it a second time and check its constraints again.
-- The rules: sql/areas/60_lifecycle.sql (match_hold, match_create, match_players_count).

COMMENT ON COLUMN match_requests.team_a_count IS
    'Players now in TEAM_A: the organizer from the match''s insert (match_hold), the others '
    'kept by trigger from match_players.';
