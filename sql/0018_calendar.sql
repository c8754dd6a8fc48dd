-- 0018_calendar: calendar_feeds, the secrets of the calendar feeds (iCalendar, RFC 5545) that
-- calendar apps subscribe to: one per player (their matches) and one per venue (its courts'
-- booked time, without names). A feed is reached by a secret URL, since calendar apps cannot
-- send a bearer token; rotating the secret makes the old URL answer 404.
-- The rules over this table: sql/areas/88_calendar.sql; the feed program: cgi-bin/players.c
-- and common/ical.c.

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
