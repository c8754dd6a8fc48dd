-- 0018_calendar: calendar feeds (iCalendar, RFC 5545) that calendar apps subscribe to.
--
-- A feed is reached by a secret URL, since calendar apps cannot send a bearer token: one
-- secret per player (their matches) and one per venue (its courts' booked time, without
-- names). The secret is 256 bits from PostgreSQL's strong random source (gen_random_uuid
-- twice, 244 random bits, written as 64 hex digits); rotating it makes the old URL answer 404.
--
-- The events are read here as rows; the feed program writes them as iCalendar
-- (cgi-bin/players.c, common/ical.c). Times are UTC instants (DTSTART:...Z): the instants
-- were fixed in the venue's time zone when the match was booked, so they are right across
-- daylight-saving changes without a VTIMEZONE block. SEQUENCE counts the changes an event
-- went through (status changes of the match, joins and leaves of the player), so a
-- cancellation or a leave always raises it.

CREATE TABLE calendar_feeds (
    secret     text PRIMARY KEY CONSTRAINT calendar_feeds_secret_check CHECK (secret ~ '^[0-9a-f]{64}$'),
    player_id  uuid REFERENCES users(id),
    venue_id   uuid REFERENCES venues(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT calendar_feeds_one_subject CHECK ((player_id IS NULL) <> (venue_id IS NULL))
);
CREATE UNIQUE INDEX calendar_feeds_player_key ON calendar_feeds (player_id) WHERE player_id IS NOT NULL;
CREATE UNIQUE INDEX calendar_feeds_venue_key ON calendar_feeds (venue_id) WHERE venue_id IS NOT NULL;
COMMENT ON TABLE calendar_feeds IS
    'The secret of the calendar feed of a player or of a venue: the one that answers at /api/calendar/{secret}.ics.';

-- the venue feed reads a venue's requests court by court and date by date
CREATE INDEX match_requests_resource_starts_idx ON match_requests (resource_id, starts_at);
