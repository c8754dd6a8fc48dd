-- 0031_player_holds: an index of each player's unpaid holds by expiry, so that the hold limit
-- counts the player's own live holds, whatever the planner believes of the clock: planned
-- with the values, "expires_at > now" is read against the statistics of the last ANALYZE,
-- which expect no live hold, and the count walks every player's holds by expiry.
-- sql/0034_hold_count_plan.sql replaces it with an index over every request.
-- The hold limit: sql/areas/55_fair_use.sql (hold_limit_check).

CREATE INDEX match_requests_player_holds_idx ON match_requests (organizer_id, expires_at)
    WHERE status = 'PENDING_PAYMENT';
COMMENT ON INDEX match_requests_player_holds_idx IS
    'A player''s unpaid holds by expiry: the hold limit counts the live ones.';
