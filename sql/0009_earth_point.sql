-- 0009_earth_point: the geographic indexes no longer depend on the search path, so ANALYZE
-- (and autovacuum, which runs with an empty search path) can read them.
--
-- earthdistance 1.1's ll_to_earth is an SQL function whose body names cube, earth() and the
-- type earth without a schema. Statistics of an expression index evaluate the expression,
-- and with an empty search path the planner's attempt to inline the body fails
-- ("type "earth" does not exist"): players and ACTIVE venues were never analyzed, and every
-- autovacuum round logged that error. earth_point is the same computation with every name
-- qualified (the extensions live in public, where this project's set-up creates them); the
-- two indexes are rebuilt on it and every function of ours that called ll_to_earth now calls
-- earth_point, so the searches keep their index scans.

CREATE FUNCTION earth_point(lat double precision, lng double precision) RETURNS public.earth
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN public.cube(public.cube(public.cube(public.earth() * cos(radians(lat)) * cos(radians(lng))),
                                   public.earth() * cos(radians(lat)) * sin(radians(lng))),
                       public.earth() * sin(radians(lat)))::public.earth;
COMMENT ON FUNCTION earth_point(double precision, double precision) IS
    'll_to_earth with schema-qualified names: usable in indexes under any search path.';

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
