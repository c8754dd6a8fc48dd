-- The JSON shapes of the API's answers: one function per object a route returns, built in the
-- database. (The notification object stands with its table in sql/areas/50_notifications.sql,
-- the search's answer in sql/areas/85_search.sql.)
--
-- Built here so that an answer costs no more round trips than its query: a list is one
-- statement, and a write and the object it answers with are one statement too
-- (match_request_json below). And each shape is written once, for every program that shows
-- the object (cgi-bin/requests.c, invitations.c, owner.c, admin.c, public.c, players.c), so
-- the same object never comes out in two forms.
--
-- Conventions: json, not jsonb, so that the fields keep the order of the API's description;
-- camelCase names; instants as UTC ISO 8601 with milliseconds (api_ts), times of day as
-- HH:MM:SS (api_time), days as MONDAY..SUNDAY (api_day_name), all three in
-- sql/areas/10_basics.sql; dates as YYYY-MM-DD; money exact, numeric(12,2) with its two
-- decimals, beside its currency; an empty list as [], an absent value as null.
--
-- Lists of venues and resources read the one-row sets venue_doc and resource_doc, which the
-- planner inlines into the list's query. The functions that are not inlined are PL/pgSQL, so
-- that a session keeps their plans; a LANGUAGE sql function that is not inlined would be
-- planned again at every call.

-- Image object of a venue or a court: the CDN's URL and public id beside our id.
CREATE OR REPLACE FUNCTION json_image(id uuid, url text, public_id text) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object('id', id, 'url', url, 'publicId', public_id);
COMMENT ON FUNCTION json_image(uuid, text, text) IS 'Image object of a venue or resource.';

-- Venue object. `public_view` counts only the resources players can see.
-- Written as a one-row set-returning function because PostgreSQL inlines those into the
-- calling query even with sub-selects (a scalar SQL function with sub-selects is called row
-- by row instead): lists use `CROSS JOIN LATERAL venue_doc(v) d`. json_venue() is the same
-- object for single-row use.
CREATE OR REPLACE FUNCTION venue_doc(v venues, public_view boolean DEFAULT false) RETURNS TABLE (doc json)
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

-- Venue object of one venue (venue_doc), for the answers about a single venue.
CREATE OR REPLACE FUNCTION json_venue(v venues, public_view boolean DEFAULT false) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    venue json;
BEGIN
    SELECT d.doc FROM venue_doc(v, public_view) d
      INTO venue;
    RETURN venue;
END $$;
COMMENT ON FUNCTION json_venue(venues, boolean) IS 'Venue object as the API shows it.';

-- Resource object; a one-row set for the same reason as venue_doc.
CREATE OR REPLACE FUNCTION resource_doc(r resources) RETURNS TABLE (doc json)
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

-- Resource object of one court (resource_doc), for the answers about a single court.
CREATE OR REPLACE FUNCTION json_resource(r resources) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    resource json;
BEGIN
    SELECT d.doc FROM resource_doc(r) d
      INTO resource;
    RETURN resource;
END $$;
COMMENT ON FUNCTION json_resource(resources) IS 'Resource object with schedules, price rules and images.';

-- Booking rules as the owner reads and writes them: the venue's five limits, null where it
-- sets none (sql/areas/55_fair_use.sql applies them).
CREATE OR REPLACE FUNCTION json_booking_rules(v venues) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT json_build_object(
        'maxUpcomingPerPlayer', v.max_upcoming_per_player,
        'maxPerPlayerPerDay', v.max_per_player_per_day,
        'maxPerPlayerPerWeek', v.max_per_player_per_week,
        'bookingWindowDays', v.booking_window_days,
        'minNoticeMinutes', v.min_notice_minutes);
END;
COMMENT ON FUNCTION json_booking_rules(venues) IS 'The booking rules of a venue.';

-- Series object: its matches, oldest date first, as they are now, and the dates skipped
-- (match_series.skipped: each date with the code it was refused with). A body in quotes,
-- not BEGIN ATOMIC: it records no dependency on a row type, so match_requests may gain
-- columns and json_match_request be replaced under it.
CREATE OR REPLACE FUNCTION json_match_series(p_series uuid) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    series json;
BEGIN
    SELECT json_build_object(
        'id', s.id,
        'created', COALESCE((SELECT json_agg(json_match_request(m, true, m.organizer_id)
                                             ORDER BY m.booking_date)
                               FROM match_series_matches sm
                               JOIN match_requests m ON m.id = sm.match_request_id
                              WHERE sm.series_id = s.id), '[]'),
        'skipped', s.skipped)
      FROM match_series s WHERE s.id = p_series
      INTO series;
    RETURN series;
END $$;
COMMENT ON FUNCTION json_match_series(uuid) IS 'Series object: its match requests and the dates skipped.';

-- A waiting-list entry as its player sees it: its position among those still waiting.
CREATE OR REPLACE FUNCTION json_waitlist_entry(p_entry uuid) RETURNS json
    LANGUAGE plpgsql STABLE
AS $$
DECLARE
    entry json;
BEGIN
    SELECT json_build_object(
        'matchRequestId', w.match_request_id,
        'playerId', w.player_id,
        'team', w.team,
        'position', (SELECT count(*) FROM match_waitlist o
                      WHERE o.match_request_id = w.match_request_id AND o.ended_at IS NULL
                        AND (o.joined_at, o.id) <= (w.joined_at, w.id)),
        'joinedAt', api_ts(w.joined_at))
      FROM match_waitlist w WHERE w.id = p_entry
      INTO entry;
    RETURN entry;
END $$;
COMMENT ON FUNCTION json_waitlist_entry(uuid) IS 'Waiting-list entry object with its position.';

-- Match request object: the match, its current players (in joining order), the length of its
-- waiting list and its result. availableSlots leaves out the places that open offers hold
-- (match_places_free). The shareable token is shown only to p_member, the match's players;
-- the feed and place requests show the match to others with p_member false.
-- The caller's own share of match m, for p_player: the status of their current join's
-- payment (REFUND_PENDING, REFUNDED or REFUND_FAILED once it is being given back), its
-- amount and currency, until when a pending one may be paid, and the secret the payer's
-- client confirms it with at the provider while it is pending. NULL when the share has no
-- payment row.
CREATE OR REPLACE FUNCTION json_my_payment(m match_requests, p_player uuid) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    share json;
BEGIN
    SELECT json_build_object(
        'status', CASE WHEN r.status = 'REFUNDED' THEN 'REFUNDED'
                       WHEN r.status = 'PENDING' THEN 'REFUND_PENDING'
                       WHEN r.status = 'FAILED' THEN 'REFUND_FAILED'
                       -- a share past its window is no longer owed, freed or not yet
                       WHEN p.status = 'PENDING' AND p.expires_at <= now() THEN 'CANCELLED'
                       ELSE p.status END,
        'amount', p.amount,
        'currency', p.currency,
        'expiresAt', CASE WHEN p.status = 'PENDING' AND p.expires_at IS DISTINCT FROM NULL
                               AND p.expires_at <= now() THEN NULL
                          WHEN p.status = 'PENDING' THEN api_ts(COALESCE(p.expires_at, m.expires_at))
                     END,
        'clientSecret', CASE WHEN p.status = 'PENDING' AND COALESCE(p.expires_at > now(), true)
                             THEN p.client_secret END)
      FROM match_players mp
      JOIN payments p ON p.entry_id = mp.id AND p.kind = 'PAYMENT'
      LEFT JOIN payments r ON r.refund_of = p.id AND r.kind = 'REFUND'
     WHERE mp.match_request_id = m.id AND mp.player_id = p_player AND mp.left_at IS NULL
     ORDER BY p.created_at DESC
     LIMIT 1
      INTO share;
    RETURN share;
END $$;
COMMENT ON FUNCTION json_my_payment(match_requests, uuid) IS
    'The caller''s own share of a match: status, amount, currency, expiresAt, clientSecret.';

-- A row of the ledger as an administrator sees it: the money, its state, what the provider
-- said of it, and the issues it raised (sql/areas/92_payments.sql).
CREATE OR REPLACE FUNCTION json_payment(p payments) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    row json;
BEGIN
    SELECT json_build_object(
        'id', p.id,
        'kind', p.kind,
        'matchRequestId', p.match_request_id,
        'playerId', p.player_id,
        'amount', p.amount,
        'currency', p.currency,
        'status', p.status,
        'refundOf', p.refund_of,
        'provider', p.provider,
        'providerRef', p.provider_ref,
        'providerStatus', p.provider_status,
        'attempts', p.attempts,
        'lastError', p.last_error,
        'createdAt', api_ts(p.created_at),
        'updatedAt', api_ts(p.updated_at),
        'issues', COALESCE((SELECT json_agg(json_build_object(
                                'kind', i.kind, 'detail', i.detail,
                                'createdAt', api_ts(i.created_at),
                                'resolvedAt', api_ts(i.resolved_at),
                                'resolvedBy', i.resolved_by,
                                'resolution', i.resolution) ORDER BY i.created_at, i.id)
                              FROM payment_issues i WHERE i.payment_id = p.id), '[]'))
      INTO row;
    RETURN row;
END $$;
COMMENT ON FUNCTION json_payment(payments) IS
    'A ledger row for an administrator: money, state, the provider''s word, the issues raised.';

-- Match request object. p_member: shown to one of its players (the invitation token is
-- theirs); p_viewer: the player it is shown to, whose own share it then carries (myPayment).
CREATE OR REPLACE FUNCTION json_match_request(m match_requests, p_member boolean DEFAULT true,
                                              p_viewer uuid DEFAULT NULL) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    request json;
    -- places held for shares owed past their window read as free (92_payments.sql)
    v_lapsed uuid[] := match_shares_lapsed(m.id);
BEGIN
    SELECT json_build_object(
        'id', m.id,
        'resourceId', m.resource_id,
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'visibility', m.visibility,
        'competitive', m.competitive,
        'status', m.status,
        'invitationToken', CASE WHEN p_member THEN m.invitation_token END,
        'availableSlots', match_places_free(m) + cardinality(v_lapsed),
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
                             WHERE p.match_request_id = m.id AND p.left_at IS NULL
                               AND p.id <> ALL (v_lapsed)), '[]'),
        'waitlistLength', (SELECT count(*) FROM match_waitlist w
                            WHERE w.match_request_id = m.id AND w.ended_at IS NULL),
        'result', (SELECT json_build_object('sets', r.sets, 'winner', r.winner, 'status', r.status)
                     FROM match_results r WHERE r.match_request_id = m.id))
      INTO request;
    IF p_viewer IS NOT NULL THEN
        request := (left(request::text, -1) || ',"myPayment":'
                    || COALESCE(json_my_payment(m, p_viewer)::text, 'null') || '}')::json;
    END IF;
    RETURN request;
END $$;
COMMENT ON FUNCTION json_match_request(match_requests, boolean, uuid) IS
    'Match request object with its current players and result; the token for its players only.';

-- Player profile object as its owner sees it: the profile, the reliability record, and the
-- rating as of now (player_rating: rating and ratingDeviation to two decimals,
-- ratedMatches) with the level the player plays at (effectiveSkillLevel,
-- match_player_level).
CREATE OR REPLACE FUNCTION json_player(p players) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    player json;
BEGIN
    SELECT json_build_object(
        'playerId', p.user_id,
        'displayName', p.display_name,
        'skillLevel', p.skill_level,
        'homeLatitude', p.home_latitude,
        'homeLongitude', p.home_longitude,
        'matchNotifications', p.match_notifications,
        'reliabilityScore', p.reliability_score,
        'noShowCount', p.no_show_count,
        'bannedUntil', api_ts(p.banned_until),
        'createdAt', api_ts(p.created_at),
        'updatedAt', api_ts(p.updated_at),
        'rating', round(r.rating::numeric, 2),
        'ratingDeviation', round(r.deviation::numeric, 2),
        'ratedMatches', r.rated_matches,
        'effectiveSkillLevel', match_player_level(p.user_id))
      FROM player_rating(p.user_id, now()) r
      INTO player;
    RETURN player;
END $$;
COMMENT ON FUNCTION json_player(players) IS 'Player profile object as its owner sees it.';

-- The result object of match p_match, or NULL: what the match object shows of it, and who
-- reported it when.
CREATE OR REPLACE FUNCTION json_match_result(p_match uuid) RETURNS json
    LANGUAGE plpgsql STABLE
AS $$
DECLARE
    result json;
BEGIN
    SELECT json_build_object('sets', r.sets, 'winner', r.winner, 'status', r.status,
                             'reportedBy', r.reported_by, 'reportedAt', api_ts(r.reported_at))
      FROM match_results r WHERE r.match_request_id = p_match
      INTO result;
    RETURN result;
END $$;
COMMENT ON FUNCTION json_match_result(uuid) IS 'Result object of a match: sets, winner, status, who reported it, when.';

-- Invitation object: what the invited player needs to decide, without the match's token.
-- kind is OFFER (from the waiting list), HANDOVER (from a leaver), PLACE (a granted place
-- request), each holding a place until expiresAt; the others (INVITE, SUBSTITUTE) read
-- INVITATION. A pending invitation past its expiry reads EXPIRED, whether or not the sweeper
-- has run.
CREATE OR REPLACE FUNCTION json_invitation(i invitations) RETURNS json
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
#variable_conflict use_column
DECLARE
    invitation json;
BEGIN
    SELECT json_build_object(
        'id', i.id,
        'matchRequestId', i.match_request_id,
        'kind', CASE WHEN invitation_holds_place(i.kind) THEN i.kind ELSE 'INVITATION' END,
        'status', CASE WHEN i.status = 'PENDING' AND i.expires_at <= now() THEN 'EXPIRED'
                       ELSE i.status END,
        'team', i.team,
        'expiresAt', api_ts(i.expires_at),
        'sentAt', api_ts(i.sent_at),
        'respondedAt', api_ts(i.responded_at),
        'bookingDate', m.booking_date,
        'startTime', api_time(m.start_time),
        'endTime', api_time(m.end_time),
        'format', m.format,
        'skillLevel', m.skill_level,
        'matchStatus', m.status,
        'availableSlots', match_places_free(m),
        'pricePerPlayer', m.price_per_player,
        'currency', m.currency,
        'customMessage', m.custom_message,
        'resourceName', r.name,
        'venueName', v.name,
        'venueCity', v.city)
      FROM match_requests m
      JOIN resources r ON r.id = m.resource_id
      JOIN venues v ON v.id = r.venue_id
     WHERE m.id = i.match_request_id
      INTO invitation;
    RETURN invitation;
END $$;
COMMENT ON FUNCTION json_invitation(invitations) IS 'Invitation object with the match details.';

-- A place request as its requester and the match's players see it: the requester's
-- effective level and rating, the answers of the players now in the match and who has yet
-- to answer while it is open, and the match (without its link token). A request neither
-- approved nor open (place_request_open) shows CLOSED.
CREATE OR REPLACE FUNCTION json_place_request(pr place_requests) RETURNS json
    LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    place_request json;
BEGIN
    SELECT json_build_object(
        'id', pr.id,
        'matchRequestId', pr.match_request_id,
        'playerId', pr.player_id,
        'displayName', (SELECT display_name FROM players WHERE user_id = pr.player_id),
        'effectiveSkillLevel', match_player_level(pr.player_id),
        'rating', (SELECT round(r.rating::numeric, 2) FROM player_rating(pr.player_id, now()) r),
        'team', pr.team,
        'message', pr.message,
        'status', CASE WHEN pr.status <> 'APPROVED' AND NOT place_request_open(pr, m, now())
                       THEN 'CLOSED' ELSE pr.status END,
        'answers', COALESCE((SELECT json_agg(json_build_object(
                                        'playerId', mp.player_id,
                                        'answer', CASE WHEN a.approve THEN 'APPROVE'
                                                       ELSE 'REJECT' END,
                                        'answeredAt', api_ts(a.answered_at))
                                    ORDER BY a.answered_at, mp.player_id)
                               FROM match_players mp
                               JOIN place_request_answers a
                                 ON a.place_request_id = pr.id AND a.player_id = mp.player_id
                              WHERE mp.match_request_id = m.id AND mp.left_at IS NULL), '[]'),
        'awaiting', COALESCE((SELECT json_agg(mp.player_id ORDER BY mp.joined_at, mp.player_id)
                                FROM match_players mp
                               WHERE mp.match_request_id = m.id AND mp.left_at IS NULL
                                 AND place_request_open(pr, m, now())
                                 AND NOT EXISTS (SELECT 1 FROM place_request_answers a
                                                  WHERE a.place_request_id = pr.id
                                                    AND a.player_id = mp.player_id)), '[]'),
        'invitationId', pr.invitation_id,
        'waitlisted', pr.waitlist_id IS NOT NULL,
        'createdAt', api_ts(pr.created_at),
        'updatedAt', api_ts(pr.updated_at),
        'match', json_match_request(m, false))
      FROM match_requests m
     WHERE m.id = pr.match_request_id
      INTO place_request;
    RETURN place_request;
END $$;
COMMENT ON FUNCTION json_place_request(place_requests) IS
    'Place request object: the requester, the answers, who has yet to answer, the match.';

-- The match's JSON as the answer of a join: the three routes that put the caller into a match
-- (an invitation accepted, the shareable link, the open-match feed) send one statement,
-- match_request_json(<the JOIN function>), as the whole transaction, one round trip. The
-- JOIN runs first, as the argument, and the match is read afterwards by this function.
--
-- VOLATILE on purpose: a volatile PL/pgSQL function reads with a snapshot taken when its query
-- starts, after the JOIN before it wrote, so the answer shows the caller's place and payment;
-- a STABLE one would read with the statement's snapshot and miss them. A match not found
-- raises, so that the join it follows is rolled back rather than committed without an answer.
CREATE OR REPLACE FUNCTION match_request_json(p_id uuid, p_viewer uuid) RETURNS json
    VOLATILE
    LANGUAGE plpgsql
AS $$
DECLARE
    v_json json;
BEGIN
    SELECT json_match_request(m, true, p_viewer) INTO v_json FROM match_requests m WHERE m.id = p_id;
    IF v_json IS NULL THEN
        RAISE EXCEPTION 'match request % not found', p_id;
    END IF;
    RETURN v_json;
END $$;
COMMENT ON FUNCTION match_request_json(uuid, uuid) IS
    'The match request''s JSON as the transaction now sees it, writes earlier in the same '
    'statement included; raises when there is no such match.';

-- A block of a court (sql/areas/67_desk.sql).
CREATE OR REPLACE FUNCTION json_court_block(b court_blocks) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
        'id', b.id, 'resourceId', b.resource_id, 'date', b.block_date,
        'startTime', api_time(b.start_time), 'endTime', api_time(b.end_time), 'kind', b.kind,
        'note', b.note, 'customerName', b.customer_name, 'amount', b.amount,
        'currency', b.currency, 'createdAt', api_ts(b.created_at));
COMMENT ON FUNCTION json_court_block(court_blocks) IS 'Block object of a court.';

-- A staff member of a venue (sql/areas/68_staff.sql), with the identity provider's subject the
-- owner named them by.
CREATE OR REPLACE FUNCTION json_venue_staff(s venue_staff, p_subject text) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
        'venueId', s.venue_id, 'userId', s.user_id, 'subject', p_subject, 'role', s.role,
        'addedBy', s.added_by, 'createdAt', api_ts(s.created_at),
        'updatedAt', api_ts(s.updated_at));
COMMENT ON FUNCTION json_venue_staff(venue_staff, text) IS 'Staff member object of a venue.';

-- A write recorded on a venue (sql/areas/68_staff.sql): who, when, what, on what.
CREATE OR REPLACE FUNCTION json_venue_audit(a venue_audit, p_subject text) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
        'id', a.id, 'userId', a.user_id, 'subject', p_subject, 'role', a.role,
        'madeAt', api_ts(a.made_at), 'method', a.method, 'route', a.route, 'path', a.path,
        'status', a.status, 'request', a.request);
COMMENT ON FUNCTION json_venue_audit(venue_audit, text) IS 'Audit entry object of a venue.';

-- Object p_doc (as json_build_object writes it: its text ends with its closing brace, and it
-- has a member) with member p_key: p_value added last, the order of the others kept.
CREATE OR REPLACE FUNCTION json_member_add(p_doc json, p_key text, p_value json) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (left(rtrim(p_doc::text), -1) || ', ' || to_json(p_key)::text || ' : '
            || COALESCE(p_value::text, 'null') || '}')::json;
COMMENT ON FUNCTION json_member_add(json, text, json) IS
    'Adds a member at the end of a JSON object, keeping the order of the others.';
