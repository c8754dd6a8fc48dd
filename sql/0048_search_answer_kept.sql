-- 0048_search_answer_kept: search_area_versions, a version per cell of a grid and per day, so
-- that a search's answer can be reused while nothing in its area has changed: a local date
-- for the kept slots of that date, '-infinity' for the venues and courts there on every date,
-- 'infinity' for the players who live there. The stamps take values of
-- availability_version_seq in the transaction of the change and a row's only grow, so the sum
-- over the cells a search's radius touches is a validator of its answer. search_visited_slot
-- is a slot a search went through, with the next instant time alone changes it.
-- The stamps: sql/areas/20_versions.sql; the search that keeps its answer: sql/areas/85_search.sql.

-- ---- the versions of an area ---------------------------------------------------------------

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

-- ---- until when ----------------------------------------------------------------------------

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
