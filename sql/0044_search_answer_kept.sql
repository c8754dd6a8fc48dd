-- 0044_search_answer_kept: match_search, the search's whole answer in one row, is back for
-- the clients that call it.
--
-- 0007 made match_search the statement of GET /api/match/search: whether the date is within
-- bounds, and the results as one JSON array. 0030 moved the writing of the JSON into the
-- program (match_search_rows and cgi-bin/search.c) and dropped match_search, because nothing
-- in the project read it any more. But a function of the schema is an interface too: a
-- report, an operator's script, or a second service written against the database before
-- 0030 calls it with the same arguments, and since 0030 it has failed with "function does
-- not exist". It returns with its old signature and columns, over match_search_rows, so
-- that there is still one search statement and the two answers cannot drift apart: the
-- same slots in the same order with the same values, written by json_build_object as 0007
-- wrote them. match_search_rows carries the plan's setting (bitmap scans off), so a caller
-- gets the same plan whatever its connection's settings. The service does not call it; it
-- costs the JSON building that 0030 took out of the service's path, and only its callers pay.

CREATE FUNCTION match_search(p_lat double precision, p_lng double precision,
                             p_radius_km numeric, p_date date, p_from time, p_to time,
                             p_duration integer, p_skill text, p_min_reliability integer,
                             p_caller uuid, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, results json)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT bool_and(s.date_ok),
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
               'startTime', s.start_time,
               'endTime', s.end_time,
               'price', s.price,
               'currency', s.currency,
               'eligiblePlayersNearby', s.eligible)
               ORDER BY s.n) FILTER (WHERE s.resource_id IS NOT NULL), '[]')
      FROM match_search_rows(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration,
                             p_skill, p_min_reliability, p_caller, p_limit, p_now)
           WITH ORDINALITY AS s(date_ok, eligible, resource_id, resource_name, resource_type,
                                venue_id, venue_name, venue_city, venue_latitude,
                                venue_longitude, distance_km, start_time, end_time, price,
                                currency, n);
END;
COMMENT ON FUNCTION match_search(double precision, double precision, numeric, date, time, time,
                                 integer, text, integer, uuid, integer, timestamptz) IS
    'The search''s answer in one row: whether the date is within bounds, and match_search_rows'' slots as the JSON array GET /api/match/search answers. Kept for clients of the schema; the service writes the JSON itself.';
