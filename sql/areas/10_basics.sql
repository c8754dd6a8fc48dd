-- 10_basics: the small helpers every other area builds on. None reads a table: the API's text
-- of timestamps, times and day names; seconds since midnight and back, in which a court's day
-- is counted; earth points and the chord/great-circle conversions of the geographic searches;
-- epoch microseconds; the keys of new rows, in the order they are made; and the two grids of
-- cells, home_cell's for player_home_cells
-- (sql/areas/40_players.sql) and search_cell's for search_area_versions
-- (sql/areas/20_versions.sql).
--
-- Each is one expression that the planner inlines into the statement calling it, so it costs
-- no call and no plan of its own: a helper is STRICT only where its body is strict too (the
-- planner does not inline a STRICT function around a body that is not); one whose body is
-- only STABLE (to_char, extract on a timestamptz) is declared STABLE, since an IMMUTABLE
-- function is inlined only when its body is immutable as well; and each names its argument
-- once, so that an expensive argument does not stop the inlining. tests/06-schema.bats fails
-- on a LANGUAGE sql function the planner does not inline.
--
-- Relies on the cube and earthdistance extensions, in schema public; the JSON shapes built on
-- these helpers are in sql/areas/90_json.sql.

-- ---- the API's text: timestamps in UTC ISO 8601 with milliseconds, times HH:MM:SS ----------
CREATE OR REPLACE FUNCTION api_ts(t timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
COMMENT ON FUNCTION api_ts(timestamptz) IS 'ISO 8601 UTC text of a timestamp, as the API shows it.';

CREATE OR REPLACE FUNCTION api_time(t time) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN to_char(t, 'HH24:MI:SS');
COMMENT ON FUNCTION api_time(time) IS 'HH:MM:SS text of a time of day (24:00:00 stays 24:00:00).';

CREATE OR REPLACE FUNCTION api_day_name(d smallint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (ARRAY['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'])[d];
COMMENT ON FUNCTION api_day_name(smallint) IS 'ISO day number to the API day name.';

-- A court's day is worked out in seconds since midnight (court_day_slots,
-- sql/areas/30_slots.sql), where a closing time of 24:00 is 86400 and stays 24:00:00.
CREATE OR REPLACE FUNCTION api_secs_time(s integer) RETURNS time
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN s >= 86400 THEN time '24:00:00' ELSE time '00:00' + make_interval(secs => s) END;
COMMENT ON FUNCTION api_secs_time(integer) IS 'Seconds since midnight to a time; 86400 is 24:00:00.';

CREATE OR REPLACE FUNCTION api_time_secs(t time) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN extract(epoch FROM t)::integer;
COMMENT ON FUNCTION api_time_secs(time) IS 'A time as seconds since midnight (24:00:00 is 86400).';

-- earthdistance's ll_to_earth with every name schema-qualified. ll_to_earth's body names cube,
-- earth() and the type earth without a schema, and statistics of an expression index evaluate
-- the expression: under the empty search path of ANALYZE and autovacuum that fails ("type
-- "earth" does not exist") and the table is never analyzed. The geographic indexes (players'
-- homes, ACTIVE venues) are built on earth_point, and every function of ours calls it, so the
-- searches' expressions match the indexes. Not STRICT, so that the planner inlines it (its
-- body gives NULL for NULL anyway).
CREATE OR REPLACE FUNCTION earth_point(lat double precision, lng double precision) RETURNS public.earth
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN public.cube(public.cube(public.cube(public.earth() * cos(radians(lat)) * cos(radians(lng))),
                                   public.earth() * cos(radians(lat)) * sin(radians(lng))),
                       public.earth() * sin(radians(lat)))::public.earth;
COMMENT ON FUNCTION earth_point(double precision, double precision) IS
    'll_to_earth with schema-qualified names: usable in indexes under any search path.';

-- Microseconds since the epoch: how the programs compare instants with a tag's (cache.h).
CREATE OR REPLACE FUNCTION epoch_us(t timestamptz) RETURNS bigint
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN (extract(epoch FROM t) * 1000000)::bigint;
COMMENT ON FUNCTION epoch_us(timestamptz) IS 'An instant as whole microseconds since the epoch.';

-- The grid of player_home_cells (sql/areas/40_players.sql), by which a search's eligible-player
-- count is read from whole cells inside its radius: cell n of a coordinate spans
-- [n / 100, (n + 1) / 100) degrees, about 1.1 km by 0.85 km at Madrid's latitude.
CREATE OR REPLACE FUNCTION home_cell(deg double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(deg * 100)::integer;
COMMENT ON FUNCTION home_cell(double precision) IS
    'The grid cell of a latitude or longitude for player_home_cells: a hundredth of a degree.';

-- earthdistance's sec_to_gc and gc_to_sec (chord to great-circle metres, and back) as
-- expressions the planner inlines: those are STRICT SQL functions around a CASE, which it does
-- not inline, so each call would plan and run a statement of its own.
CREATE OR REPLACE FUNCTION chord_metres(chord double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 2 * public.earth() * asin(least(greatest(chord, 0) / (2 * public.earth()), 1));
COMMENT ON FUNCTION chord_metres(double precision) IS
    'Great-circle metres of a chord between two earth points (sec_to_gc, inlinable).';

CREATE OR REPLACE FUNCTION metres_chord(metres double precision) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 2 * public.earth()
           * sin(least(greatest(metres, 0), pi() * public.earth()) / (2 * public.earth()));
COMMENT ON FUNCTION metres_chord(double precision) IS
    'Chord of a great-circle distance in metres (gc_to_sec, inlinable).';

-- The grid of search_area_versions (sql/areas/20_versions.sql), whose cells are stamped by every
-- write that can change a search near them: cell n of a coordinate spans
-- [n / 10, (n + 1) / 10) degrees, about 11 km by 8.5 km at Madrid's latitude.
CREATE OR REPLACE FUNCTION search_cell(deg double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(deg * 10)::integer;
COMMENT ON FUNCTION search_cell(double precision) IS
    'The grid cell of a latitude or longitude for search_area_versions: a tenth of a degree.';

-- ---- the keys of new rows, in the order they are made ----------------------------------------
-- A UUID of version 7 (RFC 9562): the first 48 bits are the milliseconds since 1970 of the
-- clock when the row is made (clock_timestamp), then the version, then 74 random bits of
-- gen_random_uuid's (its variant bits kept); keys of one millisecond are in no order. A random
-- key (version 4) lands on any leaf of its index, so the more rows a table holds, the more of
-- its insertions change a page no insertion has changed since the last checkpoint, which the
-- WAL then takes whole (full_page_writes), and the more of the index must be in memory; a key
-- made later lands beside the one made before it. With random keys a hold wrote 13.3 kB of
-- WAL at CITY's size and 41.3 kB at ten times, 38.5 of them whole pages; with these, 8.0 and
-- 17.9 kB (bench/README.md, "Ten times the data"). The key tells no more than the answers do:
-- when a match was made is its organizer's joinedAt, when an invitation was sent its sentAt.
CREATE OR REPLACE FUNCTION uuid_v7() RETURNS uuid
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                          PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp())
                                                              * 1000)::bigint) FROM 3)
                          FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid;
COMMENT ON FUNCTION uuid_v7() IS
    'A new UUID of version 7: the milliseconds of the clock, then random bits (RFC 9562).';

-- The rows that bookings, matches, places and payments write take it as their key; accounts,
-- venues, courts and their pictures and prices keep random keys (few, and made once). Here,
-- after the function, because a migration names no area's function; a second run sets the
-- same defaults again. Secrets are never made by it: an invitation token stays
-- gen_random_uuid's.
ALTER TABLE match_requests ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE match_players ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE payments ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE payment_issues ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE notifications ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE invitations ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE match_waitlist ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE place_requests ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE match_handovers ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE match_series ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE court_blocks ALTER COLUMN id SET DEFAULT uuid_v7();
