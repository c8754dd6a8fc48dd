-- 0027_kept_plans: no statement is planned again at every request.
--
-- PostgreSQL (15) runs a LANGUAGE sql function in one of two ways. The planner inlines a
-- simple one (a single expression, or a single SELECT returning a set, called in FROM) into
-- the statement that calls it, and it costs nothing more. Any other one is run as a function
-- of its own, and its statements are parsed and planned again each time the statement
-- calling it starts: once per request, or once per call when a PL/pgSQL function or a
-- trigger calls it. PL/pgSQL keeps the plans of its statements for the whole session, and a
-- program of the pool keeps its session for thousands of requests.
--
-- Measured with track_functions on the bench's CITY data (per request, pool mode):
-- creating a match planned free_slots_rewrite (4.1 ms), booking_rules_refusal (2.7 ms),
-- match_expire_holds, match_move and json_match_request again every time, about 9 of its
-- 11 ms in the database; a search called earth_point 84 times (a STRICT function whose body
-- the planner will not inline under STRICT) and planned api_time, chord_metres and
-- earthdistance's sec_to_gc again: 6.1 ms in the database, of which 3.5 ms were those.
--
-- So:
-- 1. The small helpers become expressions the planner inlines: earth_point and
--    invitation_holds_place are no longer STRICT (their bodies give NULL for NULL anyway);
--    api_ts, api_time, epoch_us, ical_utc and json_image are STABLE, as to_char, extract on
--    a timestamptz and json_build_object are (an IMMUTABLE function is only inlined when its
--    body is immutable too; ical_utc is no longer STRICT either); chord_metres and
--    metres_chord name their argument once, so that an expensive argument does not stop
--    the inlining either. The indexes on earth_point are built again, so that every session
--    sees their expression as the planner now writes it.
-- 2. The grid-cell count compares chords (an earth point's <->) instead of calling
--    earth_distance, whose sec_to_gc is a STRICT function around a CASE.
-- 3. The LANGUAGE sql functions that cannot be inlined (a FROM clause, a sub-select, a
--    write) and run on the way of a request or a sweep become PL/pgSQL with the same
--    statement (sql_function_keep_plans, below): their bodies stay as their migrations
--    write them, which remain the place to read them. A function restated by a later
--    migration is written in PL/pgSQL, or it goes back to being planned at every call;
--    tests/06-schema.bats fails on a LANGUAGE sql function the planner does not inline,
--    but the drift check the tests run.

-- ---- 1. helpers the planner inlines ----------------------------------------------------------

ALTER FUNCTION earth_point(double precision, double precision) CALLED ON NULL INPUT;

-- (0009, rebuilt) a session reads an index's expression once and keeps it: built again, the
-- indexes are read again, as the inlined expression queries now match
DROP INDEX venues_earth_idx;
CREATE INDEX venues_earth_idx ON venues USING gist (earth_point(latitude, longitude))
    WHERE status = 'ACTIVE';
COMMENT ON INDEX venues_earth_idx IS
    'Radius search and nearest-first order over ACTIVE venues: earth_box(earth_point(lat, lng), r) @> earth_point(latitude, longitude).';
DROP INDEX players_home_earth_idx;
CREATE INDEX players_home_earth_idx ON players USING gist (earth_point(home_latitude, home_longitude))
    WHERE home_latitude IS NOT NULL AND match_notifications;
COMMENT ON INDEX players_home_earth_idx IS
    'Eligible players around a point: earth_box(earth_point(lat, lng), r) @> earth_point(home_latitude, home_longitude).';
