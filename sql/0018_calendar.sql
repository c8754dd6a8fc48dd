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

CREATE FUNCTION calendar_secret() RETURNS text
    LANGUAGE sql VOLATILE
    RETURN replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
COMMENT ON FUNCTION calendar_secret() IS 'A new feed secret: 64 hex digits, 244 random bits.';

-- The feed secret of a player or a venue (exactly one given), made on first use; with
-- p_rotate, a new one replaces it.
CREATE FUNCTION calendar_feed(p_player uuid, p_venue uuid, p_rotate boolean) RETURNS text
    LANGUAGE plpgsql
AS $$
DECLARE
    v_secret text;
BEGIN
    IF p_rotate THEN
        DELETE FROM calendar_feeds
         WHERE player_id IS NOT DISTINCT FROM p_player AND venue_id IS NOT DISTINCT FROM p_venue;
    END IF;
    -- two first calls at once: one inserts, the other finds its row
    INSERT INTO calendar_feeds (secret, player_id, venue_id)
    VALUES (calendar_secret(), p_player, p_venue)
    ON CONFLICT DO NOTHING;
    SELECT secret INTO v_secret FROM calendar_feeds
     WHERE player_id IS NOT DISTINCT FROM p_player AND venue_id IS NOT DISTINCT FROM p_venue;
    RETURN v_secret;
END $$;
COMMENT ON FUNCTION calendar_feed(uuid, uuid, boolean) IS
    'The feed secret of a player or of a venue, made on first use, replaced when p_rotate.';

CREATE FUNCTION ical_utc(t timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_char(t AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS"Z"');
COMMENT ON FUNCTION ical_utc(timestamptz) IS 'An instant as an iCalendar UTC date-time.';

-- The events of a player's feed: every match they play in, organise or left, that ended at
-- most 90 days ago. Columns as the feed writer reads them; status is TENTATIVE while the
-- match may still not take place (unpaid, not full), CONFIRMED once confirmed or played, and
-- CANCELLED when it was called off, its payment hold lapsed (whether or not the sweeper has
-- recorded it) or the player is no longer in it.
CREATE FUNCTION calendar_player_events(p_player uuid, p_now timestamptz DEFAULT now())
    RETURNS TABLE (uid text, sequence bigint, stamp text, starts text, ends text, status text,
                   sport text, format text, court text, venue text, address text,
                   latitude double precision, longitude double precision)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT m.id::text,
           (SELECT count(*) FROM match_status_changes c WHERE c.match_request_id = m.id)
             + me.joins + me.leaves
             + CASE WHEN m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now THEN 1 ELSE 0 END,
           ical_utc(greatest(m.updated_at, me.last_change)),
           ical_utc(m.starts_at), ical_utc(m.ends_at),
           CASE WHEN NOT me.playing OR m.status = 'CANCELLED'
                     OR (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now) THEN 'CANCELLED'
                WHEN m.status IN ('CONFIRMED', 'COMPLETED') THEN 'CONFIRMED'
                ELSE 'TENTATIVE' END,
           r.type, m.format, r.name, v.name,
           concat_ws(', ', v.street, concat_ws(' ', v.postal_code, v.city), v.country),
           v.latitude, v.longitude
      FROM (SELECT mp.match_request_id,
                   bool_or(mp.left_at IS NULL) AS playing,
                   count(*) AS joins, count(mp.left_at) AS leaves,
                   greatest(max(mp.joined_at), max(mp.left_at)) AS last_change
              FROM match_players mp
             WHERE mp.player_id = p_player
             GROUP BY mp.match_request_id) me
      JOIN match_requests m ON m.id = me.match_request_id
      JOIN resources r ON r.id = m.resource_id
      JOIN venues v ON v.id = r.venue_id
     WHERE m.ends_at >= p_now - interval '90 days'
     ORDER BY m.starts_at, m.id;
END;
COMMENT ON FUNCTION calendar_player_events(uuid, timestamptz) IS
    'The events of a player''s calendar feed: their matches of the last 90 days and ahead.';

-- The events of a venue's feed: the booked time of each of its courts (any match request
-- that holds or held the court), without players. A cancelled match or a lapsed hold stays
-- as CANCELLED so that calendars remove it.
CREATE FUNCTION calendar_venue_events(p_venue uuid, p_now timestamptz DEFAULT now())
    RETURNS TABLE (uid text, sequence bigint, stamp text, starts text, ends text, status text,
                   sport text, format text, court text, venue text, address text,
                   latitude double precision, longitude double precision)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT m.id::text,
           (SELECT count(*) FROM match_status_changes c WHERE c.match_request_id = m.id)
             + CASE WHEN m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now THEN 1 ELSE 0 END,
           ical_utc(m.updated_at), ical_utc(m.starts_at), ical_utc(m.ends_at),
           CASE WHEN m.status = 'CANCELLED'
                     OR (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now) THEN 'CANCELLED'
                ELSE 'CONFIRMED' END,
           r.type, m.format, r.name, v.name,
           concat_ws(', ', v.street, concat_ws(' ', v.postal_code, v.city), v.country),
           v.latitude, v.longitude
      FROM resources r
      JOIN venues v ON v.id = r.venue_id
      JOIN match_requests m ON m.resource_id = r.id
     WHERE r.venue_id = p_venue
       AND m.ends_at >= p_now - interval '90 days'
     ORDER BY m.starts_at, r.name, m.id;
END;
COMMENT ON FUNCTION calendar_venue_events(uuid, timestamptz) IS
    'The events of a venue''s calendar feed: the booked time of its courts, without players.';

-- the venue feed reads a venue's requests court by court and date by date
CREATE INDEX match_requests_resource_starts_idx ON match_requests (resource_id, starts_at);
