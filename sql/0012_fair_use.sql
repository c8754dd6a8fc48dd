-- 0012_fair_use: a venue's booking rules, so that one account cannot hold every court: how
-- many upcoming matches a player may be in at the venue, how many starting on one local day
-- or in one ISO week, how far ahead a slot may be booked and how soon before its start (each
-- optional, NULL = no limit).
-- The rules over these columns, and the limits on unpaid holds and on venues awaiting
-- approval: sql/areas/55_fair_use.sql.

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
