-- 0032_create_path: opening a match writes its new row once and asks the database once.
--
-- Measured on the bench's CITY data, server side (a warm session, 150 holds each rolled
-- back, the median of 12 alternating runs): match_hold and the answer's JSON took 1.29 ms,
-- of which
-- - 0.20 ms went to counting the organizer's place in match_players_count (0002): an
--   UPDATE of the row just inserted, which prepares the 16 CHECK constraints of
--   match_requests again, and is a second write of the new row (when the page has no room
--   for a HOT update, a second entry in each index, the double-booking constraint checked
--   again against rival bookings still in flight: what 0024 avoided for the match's terms);
-- - 0.08 ms went to match_expire_holds called with no lapsed hold on the slot (nearly
--   always): match_end and match_move behind it, three statements for nothing.
-- So a new match counts its organizer from its insert (team_a_count 1, written by
-- match_hold), the count trigger leaves the organizer's row alone when it is inserted (a
-- leave, were there one, is still counted), and the lapsed holds are ended when there are.
--
-- match_create is the whole of POST /api/match/requests in one statement: the terms
-- (match_new_terms), the hold and the answer's JSON, one round trip where the program made
-- three. The program keeps BEGIN and COMMIT around it: a statement that finds its kept
-- connection closed by a restarted server is sent again only outside a transaction, and a
-- write must never be sent twice.

-- HOLD (0010, restated): the organizer is counted in the insert; lapsed holds on the slot
-- are ended only when there are some.

COMMENT ON COLUMN match_requests.team_a_count IS
    'Players now in TEAM_A: the organizer from the match''s insert (match_hold), the others '
    'kept by trigger from match_players.';
