-- 0007_search: the match search (free slots near a point, with the number of players who
-- would be invited), and the JSON shapes of a player profile and a notification.
--
-- match_search is a plain SELECT in a LANGUAGE sql set-returning function, so the planner
-- inlines it into the caller's query: the statement the API runs and an EXPLAIN of
-- `SELECT * FROM match_search(...)` get the same plan, and the venue radius filter is
-- answered by venues_earth_idx (earth_box first, the exact great-circle check after).

-- Free slots of bookable courts near (lat, lng), nearest venue first, at most p_limit.
-- Slot availability and price come from resource_slots, so search, the slots endpoint and
-- match creation always agree. Venues come in distance order straight from the GiST index
-- (KNN on <->, the chord distance, which orders like the great-circle one); an incremental
-- sort orders each venue's slots and the LIMIT stops the scan as soon as enough slots are
-- found, so the work per search is bounded by the answer, not by how many venues a dense
-- city has inside the radius. (The search program turns bitmap scans off for its
-- connection: cube's @> has no selectivity estimate, and with a bitmap scan the planner
-- would read and sort every venue of the radius first.)
CREATE FUNCTION search_slots(p_lat double precision, p_lng double precision,
                             p_radius_km numeric, p_date date, p_from time, p_to time,
                             p_duration integer, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (resource_id uuid, resource_name text, resource_type text, venue_id uuid,
                   venue_name text, venue_city text, venue_latitude double precision,
                   venue_longitude double precision, distance_km numeric,
                   start_time time, end_time time, price numeric, currency char(3))
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT x.id, x.name, x.type, v.id, v.name, v.city, v.latitude, v.longitude,
           round((earth_distance(ll_to_earth(p_lat, p_lng),
                                 ll_to_earth(v.latitude, v.longitude)) / 1000)::numeric, 3),
           x.start_time, x.end_time, x.price, x.currency
      FROM (SELECT v.*, ll_to_earth(v.latitude, v.longitude) <-> ll_to_earth(p_lat, p_lng) AS chord
              FROM venues v
             WHERE v.status = 'ACTIVE'
               AND earth_box(ll_to_earth(p_lat, p_lng), p_radius_km * 1000)
                   @> ll_to_earth(v.latitude, v.longitude)
               -- bound the work: no slots for dates long past or over a year ahead
               AND p_date BETWEEN (p_now AT TIME ZONE 'UTC')::date - 1
                              AND (p_now AT TIME ZONE 'UTC')::date + 366
             ORDER BY ll_to_earth(v.latitude, v.longitude) <-> ll_to_earth(p_lat, p_lng)) v
     CROSS JOIN LATERAL (
            SELECT r.id, r.name, r.type, s.start_time, s.end_time, s.price, s.currency
              FROM resources r
             CROSS JOIN LATERAL resource_slots(r.id, p_date, p_now) s
             WHERE r.venue_id = v.id
               AND r.status = 'ACTIVE'
               AND r.slot_duration_minutes = p_duration
               AND s.available
               AND s.start_time BETWEEN p_from AND p_to) x
     WHERE earth_distance(ll_to_earth(p_lat, p_lng), ll_to_earth(v.latitude, v.longitude))
           <= p_radius_km * 1000
     ORDER BY v.chord, x.start_time, x.id
     LIMIT p_limit;
END;
COMMENT ON FUNCTION search_slots(double precision, double precision, numeric, date, time, time,
                                 integer, integer, timestamptz) IS
    'The first p_limit available slots of courts of one slot length within a radius, nearest first.';

-- Eligible players around a point, counted up to p_cap: the count reads at most p_cap index
-- entries that pass, so a dense city costs no more than a village.
CREATE FUNCTION eligible_players_count(p_lat double precision, p_lng double precision,
                                       p_radius_km numeric, p_skill text,
                                       p_min_reliability integer, p_except uuid, p_cap integer,
                                       p_now timestamptz DEFAULT now())
    RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT count(*)
      FROM (SELECT 1
              FROM eligible_players(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability, p_now) e
             WHERE e.user_id <> p_except
             LIMIT p_cap) capped;
END;
COMMENT ON FUNCTION eligible_players_count(double precision, double precision, numeric, text,
                                           integer, uuid, integer, timestamptz) IS
    'Number of eligible players around a point other than p_except, at most p_cap.';

-- The whole answer of GET /api/match/search in one row: date_ok is false when the date is
-- more than 366 days ahead (the handler answers 400); results is the sorted JSON array.
-- eligiblePlayersNearby is computed once and excludes the caller: it is the number of players
-- invited if the caller opened a match from this search, counted up to 100 (a search
-- answers 100 for "100 or more") so that a dense city costs no more than a village.
CREATE FUNCTION match_search(p_lat double precision, p_lng double precision,
                             p_radius_km numeric, p_date date, p_from time, p_to time,
                             p_duration integer, p_skill text, p_min_reliability integer,
                             p_caller uuid, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, results json)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT p_date <= (p_now AT TIME ZONE 'UTC')::date + 366,
           COALESCE(json_agg(json_build_object(
               'resourceId', s.resource_id,
               'resourceName', s.resource_name,
               'resourceType', s.resource_type,
               'venueId', s.venue_id,
               'venueName', s.venue_name,
               'venueCity', s.venue_city,
               'venueLatitude', s.venue_latitude,
               'venueLongitude', s.venue_longitude,
               'distanceKm', s.distance_km,
               'startTime', api_time(s.start_time),
               'endTime', api_time(s.end_time),
               'price', s.price,
               'currency', s.currency,
               -- an uncorrelated sub-select: evaluated once, not once per row
               'eligiblePlayersNearby', (SELECT eligible_players_count(p_lat, p_lng, p_radius_km,
                                             p_skill, p_min_reliability, p_caller, 100, p_now)))
               ORDER BY s.distance_km, s.start_time, s.resource_id), '[]')
      FROM search_slots(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration, p_limit,
                        p_now) s;
END;
COMMENT ON FUNCTION match_search(double precision, double precision, numeric, date, time, time,
                                 integer, text, integer, uuid, integer, timestamptz) IS
    'Match search answer: whether the date is within bounds, and the sorted search results.';

CREATE FUNCTION json_player(p players) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
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
        'updatedAt', api_ts(p.updated_at));
COMMENT ON FUNCTION json_player(players) IS 'Player profile object as its owner sees it.';

CREATE FUNCTION json_notification(n notifications) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN json_build_object(
        'id', n.id,
        'type', n.type,
        'payload', n.payload,
        'createdAt', api_ts(n.created_at),
        'readAt', api_ts(n.read_at));
COMMENT ON FUNCTION json_notification(notifications) IS
    'Notification object as its recipient sees it.';
