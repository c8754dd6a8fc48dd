-- 0034_hold_count_plan: the partial index of a player's unpaid holds gives way to one by
-- organizer and expiry over every request. When the last ANALYZE saw no unpaid hold, every
-- partial index on status = 'PENDING_PAYMENT' looks empty to the planner, and the hold limit's
-- plan made without the values could take one over every player's holds. The count names the
-- status through a variable, so that only whole-table indexes, whose statistics cover every
-- row, are weighed, and this one reads the player's rows only.
-- The hold limit: sql/areas/55_fair_use.sql (hold_limit_check).

DROP INDEX match_requests_player_holds_idx;
CREATE INDEX match_requests_organizer_expiry_idx ON match_requests (organizer_id, expires_at);
COMMENT ON INDEX match_requests_organizer_expiry_idx IS
    'A player''s requests by end of payment window: the hold limit counts the live unpaid ones.';
