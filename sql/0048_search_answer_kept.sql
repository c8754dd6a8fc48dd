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

-- ---- 1. the versions of an area ------------------------------------------------------------

-- the grid: cell n of a coordinate spans [n / 10, (n + 1) / 10) degrees

CREATE TABLE search_area_versions (
    day      date NOT NULL,
    cell_lat integer NOT NULL,
    cell_lng integer NOT NULL,
    version  bigint NOT NULL,
    PRIMARY KEY (day, cell_lat, cell_lng)
);
COMMENT ON TABLE search_area_versions IS
    'Version of what the searches around a grid cell (search_cell) can show, per day; no row = never changed. Days three days past are forgotten (free_slot_dates_keep).';
COMMENT ON COLUMN search_area_versions.day IS
    'A local date: the slots of the venues there on that date; -infinity: the venues and courts there, every date; infinity: the players who live there.';
COMMENT ON COLUMN search_area_versions.cell_lat IS 'Cell of latitude (search_cell).';
COMMENT ON COLUMN search_area_versions.cell_lng IS 'Cell of longitude (search_cell).';
COMMENT ON COLUMN search_area_versions.version IS 'Last value of availability_version_seq stamped there.';

-- ---- 2. until when -------------------------------------------------------------------------

-- search_free_slots's slots, and the ones it passes over: every slot of the venues nearest
-- first that it goes through, open at p_now or not, in its order, up to the one after which
-- it has p_limit open slots (the window count's run condition stops the scan there), each
-- with the first instant after p_now at which time alone changes it: it starts, enters the
-- notice period or the booking window, or the payment hold on it lapses.
CREATE TYPE search_visited_slot AS (
    resource_id uuid, resource_name text, resource_type text, venue_id uuid, venue_name text,
    venue_city text, venue_latitude double precision, venue_longitude double precision,
    distance_km numeric, start_time time, end_time time, price numeric, currency char(3),
    open boolean, next_change timestamptz);
COMMENT ON TYPE search_visited_slot IS
    'A slot search_kept_visit went through: search_free_slots''s columns, whether it is open, and the next instant time changes it.';
