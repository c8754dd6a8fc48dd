-- 0003_json: the JSON shape of every object the API returns, defined once.
-- json (not jsonb) keeps the field order of the spec. Timestamps are UTC ISO 8601 with
-- milliseconds, times HH:MM:SS, money exact with two decimals.

CREATE FUNCTION api_ts(t timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
COMMENT ON FUNCTION api_ts(timestamptz) IS 'ISO 8601 UTC text of a timestamp, as the API shows it.';

CREATE FUNCTION api_time(t time) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN to_char(t, 'HH24:MI:SS');
COMMENT ON FUNCTION api_time(time) IS 'HH:MM:SS text of a time of day (24:00:00 stays 24:00:00).';

CREATE FUNCTION api_day_name(d smallint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (ARRAY['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'])[d];
COMMENT ON FUNCTION api_day_name(smallint) IS 'ISO day number to the API day name.';

CREATE FUNCTION json_image(id uuid, url text, public_id text) RETURNS json
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN json_build_object('id', id, 'url', url, 'publicId', public_id);
COMMENT ON FUNCTION json_image(uuid, text, text) IS 'Image object of a venue or resource.';

-- Venue object. `public_view` counts only the resources players can see.
-- Written as a one-row set-returning function because PostgreSQL inlines those into the
-- calling query even with sub-selects (a scalar SQL function with sub-selects is called row
-- by row instead): lists use `CROSS JOIN LATERAL venue_doc(v) d` and cost a third of
-- json_venue(v) per row. json_venue() is the same object for single-row use.
CREATE FUNCTION venue_doc(v venues, public_view boolean DEFAULT false) RETURNS TABLE (doc json)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', v.id,
        'ownerId', v.owner_id,
        'name', v.name,
        'description', v.description,
        'street', v.street,
        'city', v.city,
        'country', v.country,
        'postalCode', v.postal_code,
        'latitude', v.latitude,
        'longitude', v.longitude,
        'timezone', v.timezone,
        'status', v.status,
        'rejectReason', v.reject_reason,
        'images', COALESCE((SELECT json_agg(json_image(i.id, i.url, i.public_id) ORDER BY i.created_at, i.id)
                              FROM venue_images i WHERE i.venue_id = v.id), '[]'),
        'resourceCount', (SELECT count(*) FROM resources r
                           WHERE r.venue_id = v.id AND (NOT public_view OR r.status = 'ACTIVE')),
        'createdAt', api_ts(v.created_at),
        'updatedAt', api_ts(v.updated_at));
END;
COMMENT ON FUNCTION venue_doc(venues, boolean) IS 'Venue object as the API shows it, as a one-row set (inlined in lists).';

CREATE FUNCTION json_venue(v venues, public_view boolean DEFAULT false) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT d.doc FROM venue_doc(v, public_view) d;
END;
COMMENT ON FUNCTION json_venue(venues, boolean) IS 'Venue object as the API shows it.';

-- Resource object; a one-row set for the same reason as venue_doc.
CREATE FUNCTION resource_doc(r resources) RETURNS TABLE (doc json)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', r.id,
        'venueId', r.venue_id,
        'name', r.name,
        'description', r.description,
        'type', r.type,
        'slotDurationMinutes', r.slot_duration_minutes,
        'status', r.status,
        'rejectReason', r.reject_reason,
        'schedules', COALESCE((SELECT json_agg(json_build_object(
                                   'dayOfWeek', api_day_name(s.day_of_week),
                                   'openingTime', api_time(s.opening_time),
                                   'closingTime', api_time(s.closing_time)) ORDER BY s.day_of_week)
                                 FROM resource_schedules s WHERE s.resource_id = r.id), '[]'),
        'priceRules', COALESCE((SELECT json_agg(json_build_object(
                                    'id', p.id,
                                    'dayType', p.day_type,
                                    'startTime', api_time(p.start_time),
                                    'endTime', api_time(p.end_time),
                                    'price', p.price,
                                    'currency', p.currency)
                                    ORDER BY array_position(ARRAY['WEEKDAY', 'WEEKEND', 'HOLIDAY'], p.day_type),
                                             p.start_time)
                                  FROM price_rules p WHERE p.resource_id = r.id), '[]'),
        'images', COALESCE((SELECT json_agg(json_image(i.id, i.url, i.public_id) ORDER BY i.created_at, i.id)
                              FROM resource_images i WHERE i.resource_id = r.id), '[]'),
        'createdAt', api_ts(r.created_at),
        'updatedAt', api_ts(r.updated_at));
END;
COMMENT ON FUNCTION resource_doc(resources) IS 'Resource object with schedules, price rules and images, as a one-row set.';

CREATE FUNCTION json_resource(r resources) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT d.doc FROM resource_doc(r) d;
END;
COMMENT ON FUNCTION json_resource(resources) IS 'Resource object with schedules, price rules and images.';

-- Match request object; shown only to players of the match (it carries the invitation token).
CREATE FUNCTION json_match_request(m match_requests) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', m.id,
        'resourceId', m.resource_id,
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'status', m.status,
        'invitationToken', m.invitation_token,
        'availableSlots', 2 * m.team_size - m.team_a_count - m.team_b_count,
        'pricePerPlayer', m.price_per_player,
        'currency', m.currency,
        'courtPrice', m.court_price,
        'organizerId', m.organizer_id,
        'customMessage', m.custom_message,
        'expiresAt', api_ts(m.expires_at),
        'createdAt', api_ts(m.created_at),
        'players', COALESCE((SELECT json_agg(json_build_object(
                                'playerId', p.player_id,
                                'team', p.team,
                                'role', p.role,
                                'joinedAt', api_ts(p.joined_at),
                                'checkedIn', p.checked_in_at IS NOT NULL,
                                'checkedInAt', api_ts(p.checked_in_at)) ORDER BY p.joined_at, p.player_id)
                              FROM match_players p
                             WHERE p.match_request_id = m.id AND p.left_at IS NULL), '[]'));
END;
COMMENT ON FUNCTION json_match_request(match_requests) IS 'Match request object with its current players.';

-- Invitation object: what the invited player needs to decide, without the token.
CREATE FUNCTION json_invitation(i invitations) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'id', i.id,
        'matchRequestId', i.match_request_id,
        'status', i.status,
        'sentAt', api_ts(i.sent_at),
        'respondedAt', api_ts(i.responded_at),
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'matchStatus', m.status,
        'availableSlots', 2 * m.team_size - m.team_a_count - m.team_b_count,
        'pricePerPlayer', m.price_per_player,
        'currency', m.currency,
        'customMessage', m.custom_message,
        'resourceName', r.name,
        'venueName', v.name,
        'venueCity', v.city)
      FROM match_requests m
      JOIN resources r ON r.id = m.resource_id
      JOIN venues v ON v.id = r.venue_id
     WHERE m.id = i.match_request_id;
END;
COMMENT ON FUNCTION json_invitation(invitations) IS 'Invitation object with the match details.';
