-- 0012_fair_use: one account must not be able to hold every court.
--
--  * A player has at most MAX_UNPAID_HOLDS (configuration, default 2) live holds awaiting
--    payment; the next create is 409 HOLD_LIMIT. Lapsed holds do not count, cron or not.
--  * A venue's owner sets booking rules (all optional, NULL = no limit): how many upcoming
--    matches a player may be in at the venue, how many starting on one local day or in one
--    ISO week, how far ahead a slot may be booked and how soon before its start. Slots outside
--    the window or the notice are listed unavailable; every way into a match (create, join by
--    link, accepting an invitation) is checked in the same transaction as the write, by the
--    lifecycle functions of 0010, so no race gets past them.
--  * An owner has at most MAX_PENDING_VENUES (default 10) venues awaiting approval.
-- Checks for one player run under a lock of the player's users row, so concurrent requests of
-- the same player are counted one after the other.

ALTER TABLE venues
    ADD COLUMN max_upcoming_per_player integer CHECK (max_upcoming_per_player > 0),
    ADD COLUMN max_per_player_per_day  integer CHECK (max_per_player_per_day > 0),
    ADD COLUMN max_per_player_per_week integer CHECK (max_per_player_per_week > 0),
    ADD COLUMN booking_window_days     integer CHECK (booking_window_days > 0),
    ADD COLUMN min_notice_minutes      integer CHECK (min_notice_minutes > 0);
COMMENT ON COLUMN venues.max_upcoming_per_player IS 'Booking rule: future matches a player may be in at this venue; NULL no limit.';
COMMENT ON COLUMN venues.max_per_player_per_day IS 'Booking rule: matches of a player starting on one local day here; NULL no limit.';
COMMENT ON COLUMN venues.max_per_player_per_week IS 'Booking rule: matches of a player starting in one ISO week here; NULL no limit.';
COMMENT ON COLUMN venues.booking_window_days IS 'Booking rule: a slot may be booked at most this many days ahead; NULL no limit.';
COMMENT ON COLUMN venues.min_notice_minutes IS 'Booking rule: a slot may be booked at least this many minutes before its start; NULL no limit.';
