-- 0003_json: the JSON shape of every object the API returns, defined once.
-- json (not jsonb) keeps the field order of the spec. Timestamps are UTC ISO 8601 with
-- milliseconds, times HH:MM:SS, money exact with two decimals.
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

-- 0004_slots: availability and price of every slot of a court on a date, in one place.
-- Used by the public slots endpoint, the match search (for many courts at once) and match
-- creation (to check the slot and take its price), so all three always agree.
--
-- Rules (DESIGN.md "Slots and prices"):
--  * slots run back to back from opening time by slot_duration_minutes and end by closing;
--  * a rule covers a slot when start_time <= slot start < end_time; on a venue holiday a
--    covering HOLIDAY rule wins, otherwise the WEEKDAY (Mon-Fri) / WEEKEND (Sat, Sun) rule;
--  * a slot is unavailable when it has started (venue time zone), when the court is not
--    bookable, when no rule covers it (price null), or when a live request holds it; a
--    PENDING_PAYMENT hold past its expires_at is not live, whether or not cron has run.
CREATE OR REPLACE FUNCTION api_secs_time(s integer) RETURNS time
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN s >= 86400 THEN time '24:00:00' ELSE time '00:00' + make_interval(secs => s) END;
COMMENT ON FUNCTION api_secs_time(integer) IS 'Seconds since midnight to a time; 86400 is 24:00:00.';

CREATE OR REPLACE FUNCTION api_time_secs(t time) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN extract(epoch FROM t)::integer;
COMMENT ON FUNCTION api_time_secs(time) IS 'A time as seconds since midnight (24:00:00 is 86400).';

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

-- 0017_eligible_cells: the eligible-player count of a search no longer rescans homes when
-- the area is dense.
--
-- A search answers eligiblePlayersNearby capped at 100 ("100 or more"). Walking the homes
-- nearest first (0015) still reads a hundred-odd GiST entries and checks each one's
-- distance: about 2.5 ms of the 7 ms a CITY search cost. Yet in a city the answer is
-- nearly always the cap, and telling that needs no single home: it is enough to know that
-- more than the cap live in places wholly inside the radius.
--
-- player_home_cells counts, per cell of a fixed grid (a hundredth of a degree each way, about
-- 1.1 km by 0.85 km in Madrid), skill level and reliability score, the players a match could
-- invite whatever the clock says: a home, match notifications on, a skill level, and no ban
-- recorded (banned_until NULL). Statement triggers on players keep it exact in the same
-- transaction as every write. A player whose ban has lapsed keeps banned_until and is not
-- counted: the cells give a lower bound of the eligible players, never more.
--
-- eligible_players_count sums the cells of the largest block of whole cells around the
-- centre whose four corners lie inside the radius (on a sphere the farthest point of such a
-- block from the centre is a corner), a row of cells at a time from the centre outwards, and
-- answers the cap as soon as the sum exceeds it (by one more than the cap, so excluding the
-- caller still leaves the cap). Otherwise, a village, a small radius or the edge of the
-- grid, it counts exactly as before, nearest first up to the cap. Both ways give the same
-- number; tests/63-eligible-cells.bats compares them on random centres.

-- the grid: cell n of a coordinate spans [n / 100, (n + 1) / 100) degrees
CREATE OR REPLACE FUNCTION home_cell(deg double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(deg * 100)::integer;
COMMENT ON FUNCTION home_cell(double precision) IS
    'The grid cell of a latitude or longitude for player_home_cells: a hundredth of a degree.';

-- (0019, restated) each names its argument once
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

-- 0048_search_answer_kept: a search's answer can be reused, as the slots and the owner's list
-- are (0015), with a validator and the instant time alone changes it.
--
-- A search near a point reads the kept free slots of the venues around it (0019) and counts
-- the players around it (0017). Asked again, it does that work again, although between two
-- writes in its area nothing it shows changes but the clock. A FastCGI worker now keeps a
-- search it is asked a second time (cgi-bin/search.c) and sends it again, after one cheap
-- look-up, for as long as its validator is unchanged and its time has not run out; a client
-- that sends the answer's ETag back gets 304.
--
-- 1. The validator: search_area_versions keeps a version per cell of a grid (a tenth of a
--    degree each way, about 11 km by 8.5 km in Madrid) and per day: a local date for what
--    changes the kept slots of that date (free_slots written: a booking, a payment, a
--    cancellation, the court or its rules changed), '-infinity' for what changes a venue or a
--    court on every date (the venue's or the court's own version: its status, name, place,
--    time zone, notice, booking window, a schedule, a price rule, a holiday), 'infinity' for
--    the players who live there (whatever decides whether a match would invite them). The
--    places stamped are where the venue or the player is, and where it was when it moved.
--    The stamps take values of availability_version_seq in the same transaction as the
--    change, never handed out twice, and a row's only grow, so the sum of the versions of the
--    cells a search's radius touches, for its date and both infinities (with the greatest),
--    is a validator: it grows with every committed change that could change the answer, for
--    as long as the date is kept and complete (free_slot_dates). Kept slots stamp their cell
--    as the transaction commits (a deferred trigger), so that bookings in one cell wait for
--    each other's commit only. Days three days past are forgotten by the sweeper.
--
-- 2. Until when: the kept slots of a date are bookable but for the clock; what the clock does
--    to them is known once they are read. The search reads the venues nearest first and stops
--    once it has `limit` slots open now; an answer read so can only change by time alone when
--    one of the slots it went through (open or not) starts, enters its venue's notice period
--    or booking window, or has a payment hold that lapses. search_kept_visit reads the same
--    slots in the same order as search_free_slots, open or not, each with the first of those
--    instants, and stops where search_free_slots stops (a window count's run condition). The
--    players counted change by time alone when a ban lapses or a rated level unsettles
--    (players.banned_until, rated_level_until): eligible_players_count_until says when. A
--    count that the cells settle (0017: more than the cap live in whole cells inside the
--    radius) counts no player whose standing depends on the clock, so it has no such instant.
--
-- 3. search_answer is the service's search when an answer is to be kept: match_search_rows's
--    rows (the same venues, slots, order and values; tests/40 compares the two) with the
--    validator and until. A date that is not kept and complete (free_slot_dates) has no
--    validator: its rows are match_search_rows's, and they are not kept. match_search_rows,
--    and match_search over it (0044), are unchanged: a search that is not kept pays nothing
--    for the validator.
--
-- Measured on the bench's CITY data (pgbench, one client, prepared, the bench's search): the
-- validator 0.12 ms (SELECT 1: 0.07); match_search_rows 0.59-0.69 ms; search_answer 0.92-1.06
-- ms, paid once per kept answer.


-- the grid: cell n of a coordinate spans [n / 10, (n + 1) / 10) degrees
CREATE OR REPLACE FUNCTION search_cell(deg double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(deg * 10)::integer;
COMMENT ON FUNCTION search_cell(double precision) IS
    'The grid cell of a latitude or longitude for search_area_versions: a tenth of a degree.';
