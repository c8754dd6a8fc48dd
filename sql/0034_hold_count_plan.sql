-- 0034_hold_count_plan: the hold limit counts by the player whatever the statistics say of
-- unpaid holds.
--
-- 0031 left a case open: when the last ANALYZE saw no unpaid hold at all (they live fifteen
-- minutes; a table analyzed in a quiet hour, or right after a load, has none), every partial
-- index on status = 'PENDING_PAYMENT' looks empty to the planner, a scan of any of them
-- costs about the same, and the plan made without the values took the smallest: the expiry
-- index over every live hold of every player (or the slot-holds index, from first entry to
-- last), keeping the player's. On the bench's CITY data with 10,646 live holds made since
-- the last ANALYZE, one create's count read all of them: 12.5 ms, against 0.06 ms by the
-- player; a create cost 4 to 7.6 ms of CPU, growing with every run.
--
-- The count now names the status through a variable: in the plan made without the values,
-- no partial index can be proven to hold the rows, so the planner weighs only whole-table
-- indexes, whose statistics cover every row; and the player's index is one of them, by
-- player and expiry, so the count reads the player's rows that expire later than now (the
-- live holds and the few matches paid within their window), however many other players
-- hold. The partial index of 0031 goes: it served only this count.

DROP INDEX match_requests_player_holds_idx;
CREATE INDEX match_requests_organizer_expiry_idx ON match_requests (organizer_id, expires_at);
COMMENT ON INDEX match_requests_organizer_expiry_idx IS
    'A player''s requests by end of payment window: the hold limit counts the live unpaid ones.';
