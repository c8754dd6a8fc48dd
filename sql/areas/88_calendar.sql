-- Calendar feeds (iCalendar, RFC 5545) that calendar apps subscribe to: one per player (the
-- matches they play in) and one per venue (its courts' booked time, without names).
--
-- A feed is reached by a secret URL, since calendar apps cannot send a bearer token. The
-- secret (calendar_feeds) comes from PostgreSQL's strong random source, gen_random_uuid
-- twice; rotating it makes the old URL answer 404. The events are read here as rows, and
-- cgi-bin/players.c serves both feeds, writing the rows as iCalendar with common/ical.c (the
-- URLs are handed out by cgi-bin/players.c and cgi-bin/owner.c through calendar_feed_url).
-- Times are UTC instants (DTSTART:...Z, ical_utc): a match's instants were fixed in its
-- venue's time zone when it was booked, so they stay right across daylight-saving changes
-- without a VTIMEZONE block. SEQUENCE counts the changes an event went through (the match's
-- status changes, and for a player their joins and leaves), so a cancellation or a leave
-- always raises it and calendars take the new version.
--
-- Reads match_requests, match_players, match_status_changes, resources and venues; writes
-- only calendar_feeds.

-- A new feed secret: two random UUIDs without their dashes.
CREATE OR REPLACE FUNCTION calendar_secret() RETURNS text
    LANGUAGE sql VOLATILE
    RETURN replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
COMMENT ON FUNCTION calendar_secret() IS 'A new feed secret: 64 hex digits, 244 random bits.';

-- The feed secret of a player or a venue (exactly one given), made on first use; with
-- p_rotate, a new one replaces it.
CREATE OR REPLACE FUNCTION calendar_feed(p_player uuid, p_venue uuid, p_rotate boolean) RETURNS text
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

-- The answer of the routes that hand out a feed: {"url": p_prefix || secret || ".ics"}.
CREATE OR REPLACE FUNCTION calendar_feed_url(p_prefix text, p_player uuid, p_venue uuid, p_rotate boolean)
    RETURNS json
    LANGUAGE sql
    RETURN json_build_object('url', p_prefix || calendar_feed(p_player, p_venue, p_rotate) || '.ics');
COMMENT ON FUNCTION calendar_feed_url(text, uuid, uuid, boolean) IS
    'The feed URL of a player or of a venue under p_prefix (made on first use, new when p_rotate), as the JSON answer.';

-- An instant as an iCalendar UTC date-time (DTSTART, DTEND, DTSTAMP). STABLE, as to_char is,
-- so that the planner inlines it.
CREATE OR REPLACE FUNCTION ical_utc(t timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN to_char(t AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS"Z"');
COMMENT ON FUNCTION ical_utc(timestamptz) IS 'An instant as an iCalendar UTC date-time.';

-- Every match as an event of either feed, as of now: status TENTATIVE while it may still
-- not take place (unpaid, not full), CONFIRMED once confirmed or played, CANCELLED once
-- called off or its payment hold lapsed (whether or not the sweeper has recorded it);
-- changes counts its status changes, the lapse included.
CREATE OR REPLACE VIEW calendar_match_events AS
SELECT m.id AS match_id, r.venue_id, m.updated_at, m.ends_at,
       (SELECT count(*) FROM match_status_changes c WHERE c.match_request_id = m.id)
         + CASE WHEN x.lapsed THEN 1 ELSE 0 END AS changes,
       ical_utc(m.starts_at) AS starts, ical_utc(m.ends_at) AS ends,
       CASE WHEN m.status = 'CANCELLED' OR x.lapsed THEN 'CANCELLED'
            WHEN m.status IN ('CONFIRMED', 'COMPLETED') THEN 'CONFIRMED'
            ELSE 'TENTATIVE' END AS status,
       r.type AS sport, m.format, r.name AS court, v.name AS venue,
       concat_ws(', ', v.street, concat_ws(' ', v.postal_code, v.city), v.country) AS address,
       v.latitude, v.longitude
  FROM match_requests m
  JOIN resources r ON r.id = m.resource_id
  JOIN venues v ON v.id = r.venue_id
 CROSS JOIN LATERAL (SELECT m.status = 'PENDING_PAYMENT' AND m.expires_at <= now() AS lapsed) x;
COMMENT ON VIEW calendar_match_events IS
    'Every match as a calendar event, as of now: what the player and venue feeds share.';

-- The events of a player's feed: every match they play in, organise or left, that ended at
-- most 90 days ago; CANCELLED too once they have left it, and each of their joins
-- and leaves raises the SEQUENCE. Columns as the feed writer reads them.
CREATE OR REPLACE FUNCTION calendar_player_events(p_player uuid)
    RETURNS TABLE (uid text, sequence bigint, stamp text, starts text, ends text, status text,
                              sport text, format text, court text, venue text, address text,
                              latitude double precision, longitude double precision)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT e.match_id::text, e.changes + me.joins + me.leaves,
           ical_utc(greatest(e.updated_at, me.last_change)), e.starts, e.ends,
           CASE WHEN me.playing THEN e.status ELSE 'CANCELLED' END,
           e.sport, e.format, e.court, e.venue, e.address, e.latitude, e.longitude
      FROM (SELECT mp.match_request_id,
                   bool_or(mp.left_at IS NULL) AS playing,
                   count(*) AS joins, count(mp.left_at) AS leaves,
                   greatest(max(mp.joined_at), max(mp.left_at)) AS last_change
              FROM match_players mp
             WHERE mp.player_id = p_player
             GROUP BY mp.match_request_id) me
      JOIN calendar_match_events e ON e.match_id = me.match_request_id
     WHERE e.ends_at >= now() - interval '90 days';
END;
COMMENT ON FUNCTION calendar_player_events(uuid) IS
    'The events of a player''s calendar feed: their matches of the last 90 days and ahead.';

-- The events of a venue's feed: the booked time of each of its courts (any match request
-- that holds or held the court), without players; busy whether or not the match is full,
-- and CANCELLED kept so that calendars remove it.
CREATE OR REPLACE FUNCTION calendar_venue_events(p_venue uuid)
    RETURNS TABLE (uid text, sequence bigint, stamp text, starts text, ends text, status text,
                              sport text, format text, court text, venue text, address text,
                              latitude double precision, longitude double precision)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT e.match_id::text, e.changes, ical_utc(e.updated_at), e.starts, e.ends,
           CASE WHEN e.status = 'CANCELLED' THEN 'CANCELLED' ELSE 'CONFIRMED' END,
           e.sport, e.format, e.court, e.venue, e.address, e.latitude, e.longitude
      FROM calendar_match_events e
     WHERE e.venue_id = p_venue AND e.ends_at >= now() - interval '90 days';
END;
COMMENT ON FUNCTION calendar_venue_events(uuid) IS
    'The events of a venue''s calendar feed: the booked time of its courts, without players.';
