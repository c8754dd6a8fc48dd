-- 0027_kept_plans: earth_point is made CALLED ON NULL INPUT, so that the planner inlines it
-- into the statements that call it (it does not inline a STRICT function's body, and this one
-- gives NULL for NULL anyway), and the two indexes on it are built again.
-- earth_point's current definition: sql/areas/10_basics.sql.

ALTER FUNCTION earth_point(double precision, double precision) CALLED ON NULL INPUT;

-- A session reads an index's expression once and keeps it: built again, the indexes are read
-- anew, and match the inlined expression of the queries.
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
