-- 0019_free_slots: free_slots keeps, for each date of free_slot_dates, one row per court with
-- its slots that are bookable but for the clock, so that a search reads them instead of
-- working out every court's day. Triggers refresh them in the same transaction as every write
-- that can change them; what the clock changes (slot_open) is tested as the search runs. A
-- date that is not kept and complete is worked out from the tables: slower, never wrong.
-- The rules over these tables: sql/areas/30_slots.sql; the search that reads them:
-- sql/areas/85_search.sql.

CREATE TABLE free_slot_dates (
    booking_date date PRIMARY KEY,
    filled_after uuid,
    complete     boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE free_slot_dates IS
    'Local dates whose slots free_slots keeps: refreshed by every write from the moment they are here, searched from free_slots once complete; the search works out any other date.';
COMMENT ON COLUMN free_slot_dates.filled_after IS
    'While the date is being filled: the courts up to this id have been (free_slot_dates_keep).';

-- One row per court and kept date with at least one slot bookable but for the clock, its
-- slots in parallel arrays in start order (a row per slot would cost about five times the
-- space and the writes).
CREATE TABLE free_slots (
    venue_id      uuid NOT NULL,
    booking_date  date NOT NULL,
    slot_minutes  integer NOT NULL,
    resource_id   uuid NOT NULL REFERENCES resources ON DELETE CASCADE,
    resource_name text NOT NULL,
    resource_type text NOT NULL,
    start_times   time[] NOT NULL,
    prices        numeric(12, 2)[] NOT NULL,
    currencies    char(3)[] NOT NULL,
    held_until    timestamptz[] NOT NULL,
    PRIMARY KEY (venue_id, booking_date, slot_minutes, resource_id),
    CONSTRAINT free_slots_arrays_check CHECK (
        cardinality(start_times) > 0
        AND cardinality(prices) = cardinality(start_times)
        AND cardinality(currencies) = cardinality(start_times)
        AND cardinality(held_until) = cardinality(start_times))
);
COMMENT ON TABLE free_slots IS
    'Per court and date of free_slot_dates, the slots bookable but for the clock (court_day_slots), kept by triggers in the same transaction as every change; a search tests slot_open on them.';
COMMENT ON COLUMN free_slots.held_until IS
    'Per slot, until when a payment hold keeps it (NULL: none).';
CREATE UNIQUE INDEX free_slots_resource_idx ON free_slots (resource_id, booking_date);
CREATE INDEX free_slots_date_idx ON free_slots (booking_date);
