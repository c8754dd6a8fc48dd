-- 0031_player_holds: the hold limit reads the player's own live holds, whatever the planner
-- believes of the clock.
--
-- hold_limit_check (0012, 0021) counts a player's unpaid holds that have not lapsed:
-- organizer_id = p_player, status 'PENDING_PAYMENT', expires_at > p_now. Planned with the
-- values, as PL/pgSQL plans a statement for its first five calls in a session (every call,
-- for a plain CGI program, whose session is one request), the planner reads "expires_at >
-- now" against the statistics of the table's last ANALYZE: every hold made since expires
-- later than anything they saw, so it expects no row there, and it walks
-- match_requests_expiry_idx over every live hold of every player, keeping the player's.
-- On the bench's data, with 5,000 live holds made after the last ANALYZE, the count read
-- 4,926 index entries and rows to find the player's one: 7.3 ms, against 0.03 ms by the
-- player. Planned without the values, the statement goes by the player instead.
--
-- So the player's live holds get an index of their own, by player and expiry, and the
-- statement keeps the plan made without the values (plan_cache_mode, as 0027 does for the
-- statements that need it; about 1.5 us a call): its index conditions are the player and
-- the time, and it reads at most the player's few holds, however many other players hold.
-- (Left: if the last ANALYZE saw no unpaid hold at all, both partial indexes look empty to
-- the planner, and it may still take the expiry index until autovacuum analyzes again.)

CREATE INDEX match_requests_player_holds_idx ON match_requests (organizer_id, expires_at)
    WHERE status = 'PENDING_PAYMENT';
COMMENT ON INDEX match_requests_player_holds_idx IS
    'A player''s unpaid holds by expiry: the hold limit counts the live ones.';
