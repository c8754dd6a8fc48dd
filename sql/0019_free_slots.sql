-- 0019_free_slots: the search reads free slots kept ready instead of working out every
-- court's day.
--
-- A CITY search spent about 2.2 ms of its 3 ms in PostgreSQL computing slots: for each court
-- of each venue it visited, the court, venue, schedule, price rules, holiday and requests,
-- one probe per slot (about 44 us per court). Yet between two writes nothing of a court's
-- day changes but the clock.
--
-- 1. court_day_slots splits a court's day in what does not depend on when it is read (the
--    slots, prices, the instant each starts, the venue's notice and booking window, whether
--    a request takes it for good, until when a payment hold keeps it) and what does
--    (slot_open, the clock). resource_slots is now the two together: the slots endpoint, match
--    creation and the kept slots read one definition.
--
-- 2. free_slots keeps, for every date of free_slot_dates, one row per court with its slots
--    that are bookable but for the clock (start times, prices, payment holds' expiries).
--    Triggers refresh a court's dates in the same transaction as every write that can
--    change them: a request taking, moving or freeing time, a payment hold's expiry, the
--    court (status, slot length, name, type), its schedule and price rules, the venue's
--    status and its holidays. The venue's time zone, notice and booking window are read from
--    the venue as the search runs, with slot_open at that instant, so a slot that starts,
--    enters the notice period or the booking window, or whose hold lapses, changes the next
--    answer without any write.
--
--    Two refreshes of one court and date wait for each other on that date's row of
--    availability_day_versions (which they stamp: its slot answer changes too), and each
--    reads what is committed once it holds it. free_slot_dates_keep, which adds dates and
--    fills them for every court a batch at a time, takes free_slots in SHARE mode: it waits
--    for every transaction that refreshed something, and those that come after it wait for
--    it and then see what it wrote.
--
--    Two changes need no refresh because no answer from then on can tell: a request
--    cancelled after its payment hold lapsed (the kept slot's hold is already over) or after
--    it ended (the slots it overlapped have all started). The sweeper's batches of lapsed
--    holds stay as cheap as before.
--
-- 3. The search reads free_slots when its date is kept and complete (the sweeper keeps
--    yesterday to 14 days ahead, in UTC dates, which covers every venue's today), and works
--    the slots out as before otherwise: a date further ahead, or a database whose sweeper
--    has not run for days, is slower, never wrong. free_slots_drift() lists what the kept
--    rows and the computed ones disagree on; the tests and the lifecycle model test call it.
--    On the bench's CITY data (40,000 courts) the kept rows take about 350 MB for 16 dates,
--    and filling a date takes about 4 s, in batches.

-- ---- 1. a court's day, and the clock -------------------------------------------------------

-- Every slot of a court on a local date, whatever the time: when it starts, the venue's
-- notice and booking window, and what holds it. bookable is false when nothing but a new
-- rule or a freed request could make it bookable: the court or venue not ACTIVE, no price,
-- a live request other than a payment hold on it. held_until is the latest expiry of the
-- payment holds on it (a hold whose expiry has passed is not live, as before).

-- ---- 2. the kept slots -----------------------------------------------------------------------

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
