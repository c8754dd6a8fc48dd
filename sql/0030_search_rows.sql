-- 0030_search_rows: the search answers plain rows; the program writes the JSON.
--
-- match_search (0007) built the answer with json_build_object, one call per slot, and
-- json_agg. json_build_object looks up the type and the output function of each of its 14
-- arguments again at every call: on the bench's CITY data that was a sixth of the machine's
-- CPU time under search load (perf), more than the index scans that find the slots. The
-- search now returns one row per slot, already in the answer's order, and cgi-bin/search.c
-- writes the array (json_rows, common/json.c), the values' text unchanged. On CITY the
-- statement takes about 2.2 ms against 3.0 ms (pgbench, alternating runs), and the pool mode
-- spends 2.1-2.6 ms of the machine's CPU per search against 2.5-2.8 ms (wrk -c16, old and
-- new programs alternating on one database).
--
-- One row per slot, or one row without a court (resource_id NULL) when none is free or the
-- date is too far ahead: date_ok says which, as before. eligible is the number of players a
-- match opened there would invite, the same for every row and counted once, when the first
-- row is made (an uncorrelated sub-select); NULL on the row without a court.

CREATE FUNCTION match_search_rows(p_lat double precision, p_lng double precision,
                                  p_radius_km numeric, p_date date, p_from time, p_to time,
                                  p_duration integer, p_skill text, p_min_reliability integer,
                                  p_caller uuid, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, eligible bigint, resource_id uuid, resource_name text,
                   resource_type text, venue_id uuid, venue_name text, venue_city text,
                   venue_latitude double precision, venue_longitude double precision,
                   distance_km numeric, start_time text, end_time text, price numeric,
                   currency char(3))
    LANGUAGE plpgsql STABLE
    SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
BEGIN
    IF p_date > (p_now AT TIME ZONE 'UTC')::date + 366 THEN
        date_ok := false;
        RETURN NEXT;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT true,
           (SELECT eligible_players_count(p_lat, p_lng, p_radius_km, p_skill,
                                          p_min_reliability, p_caller, 100, p_now)),
           s.resource_id, s.resource_name, s.resource_type, s.venue_id, s.venue_name,
           s.venue_city, s.venue_latitude, s.venue_longitude, s.distance_km,
           api_time(s.start_time), api_time(s.end_time), s.price, s.currency
      FROM search_slots(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration, p_limit,
                        p_now) s
     ORDER BY s.distance_km, s.start_time, s.resource_id;
    IF NOT FOUND THEN
        date_ok := true;
        RETURN NEXT;
    END IF;
END $$;
COMMENT ON FUNCTION match_search_rows(double precision, double precision, numeric, date, time,
                                      time, integer, text, integer, uuid, integer, timestamptz) IS
    'The search''s slots nearest first, one row each, or one row without a court; bitmap scans off for its plan (0015).';

-- the JSON answer and its wrapper are read by nothing any more
DROP FUNCTION match_search_answer(double precision, double precision, numeric, date, time, time,
                                  integer, text, integer, uuid, integer, timestamptz);
DROP FUNCTION match_search(double precision, double precision, numeric, date, time, time,
                           integer, text, integer, uuid, integer, timestamptz);
