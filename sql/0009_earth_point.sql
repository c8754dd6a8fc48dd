-- 0009_earth_point: the geographic indexes of venues and players are built again on
-- earth_point, so that ANALYZE and autovacuum, which run with an empty search path, can read
-- them. earthdistance's ll_to_earth is an SQL function whose body names cube, earth() and the
-- type earth without a schema: with an empty search path, evaluating an index expression on
-- it fails ("type "earth" does not exist"), and the two tables were never analyzed.
-- earth_point is the same computation with every name qualified (the extensions live in public).
-- The searches over these indexes: sql/areas/40_players.sql and sql/areas/85_search.sql.

-- The indexes below need it here; its current definition is in sql/areas/10_basics.sql.
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
