-- 0047_court_day_read_once: a court's day reads its price rules and its requests once, not
-- once per slot.
--
-- court_day_slots (0019, restated by 0027) is where every slot of the service comes from:
-- the slots answer (slot_answer), the kept free slots rewritten by every write on a kept date
-- (free_slots_of), the hold that checks the slot it books (match_hold), and the search on a
-- date that is not kept. For each slot of the day it made two index probes: the court's price
-- rules for the rule covering the slot (a btree descent), and the court's live requests
-- overlapping the slot (a GiST descent of the no-double-booking constraint). A day of 14
-- slots of 60 minutes made 28; a day of 28 half-hour slots, 56.
--
-- Both now are read once for the court and day, as two MATERIALIZED common table
-- expressions, and each slot picks from those few rows in memory, by the same conditions:
--   - rules: every price rule of the court (a court has a handful). The rule of a slot is
--     chosen as before: of the day's type, or HOLIDAY on a venue holiday (first), covering
--     the slot's start. "The court has a price rule at all" reads the same rows. The planner
--     reads them through the exclusion constraint's GiST index, 3 pages a court over 4,000
--     CITY courts, as many as the btree; 0027's 50 pages were an index-only scan of that
--     index for "SELECT 1", which nothing here asks for any more.
--   - held: the court's requests that are not CANCELLED and overlap the local day
--     [p_date 00:00, p_date + 1 00:00), one probe of the no-double-booking index. A slot of the day
--     lies within that range (a closing time of 24:00 ends the last slot at its end, which
--     the range excludes as the slot does), so every request overlapping a slot is among
--     them; a slot is taken, or held until the latest expiry, by the ones that overlap it.
-- The function is still one SELECT, which the planner inlines where it is called (the
-- expressions are planned with the calling statement; tests/06-schema.bats checks it).
--
-- Measured on the bench's CITY data (40,000 courts, 200,000 requests), warm sessions, the two
-- definitions alternated on one database:
--   - buffers read by one slots answer (slot_answer, a day of 14 slots): 128 before, 40 now;
--   - slot_answer, another court each call, prepared, two clients: 3,918-4,603 calls a second
--     before, 4,911-5,957 now (three rounds each); one client: 0.38-0.54 ms a call before,
--     0.35-0.40 ms now;
--   - 4,000 court days in one statement: 259-287 ms before, 160-202 ms now;
--   - court_day_changed on a kept date, one transaction a court day (what a booking there
--     pays): 1.02-1.65 ms either way; the rewrite of the kept row, not the reading, is its
--     cost.
-- The same rows, column for column, as the definition of 0027 for 130,000 court days: every
-- fourth court over eight days around today with venue holidays and HOLIDAY rules added, and
-- over five days with requests added off the slot grid, across midnight at both ends of the
-- day, payment holds live and lapsed, and cancelled ones.

CREATE OR REPLACE FUNCTION court_day_slots(p_resource uuid, p_date date)
    RETURNS TABLE (start_time time, end_time time, price numeric, currency char(3),
                   starts_at timestamptz, notice interval, booking_window interval,
                   held_until timestamptz, bookable boolean)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    WITH rules AS MATERIALIZED (
            SELECT p.day_type, p.start_time, p.end_time, p.price, p.currency
              FROM price_rules p
             WHERE p.resource_id = p_resource),
         -- the requests holding part of the day: for good, or a payment hold until its expiry
         held AS MATERIALIZED (
            SELECT tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time) AS span,
                   m.status = 'PENDING_PAYMENT' AS pending,
                   m.expires_at
              FROM match_requests m
             WHERE m.resource_id = p_resource
               AND m.status <> 'CANCELLED'
               AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
                   && tsrange(p_date, p_date + 1))
    SELECT api_secs_time(g.s), api_secs_time(g.s + d.dur), pr.price, pr.currency,
           (p_date + api_secs_time(g.s)) AT TIME ZONE d.timezone,
           d.notice, d.booking_window, req.held_until,
           d.bookable AND pr.price IS NOT NULL AND NOT COALESCE(req.taken, false)
      FROM (SELECT r.slot_duration_minutes * 60 AS dur,
                   api_time_secs(s.opening_time) AS open_s,
                   api_time_secs(s.closing_time) AS close_s,
                   v.timezone,
                   make_interval(mins => v.min_notice_minutes) AS notice,
                   make_interval(days => v.booking_window_days) AS booking_window,
                   r.status = 'ACTIVE' AND v.status = 'ACTIVE' AND EXISTS (SELECT FROM rules)
                       AS bookable,
                   hol.found IS NOT NULL AS holiday,
                   CASE WHEN extract(isodow FROM p_date) IN (6, 7) THEN 'WEEKEND' ELSE 'WEEKDAY' END
                       AS day_type
              FROM resources r
              JOIN venues v ON v.id = r.venue_id
              JOIN resource_schedules s ON s.resource_id = r.id
                                       AND s.day_of_week = extract(isodow FROM p_date)::smallint
                                       AND s.opening_time IS NOT NULL
              LEFT JOIN LATERAL (SELECT 1 AS found FROM venue_holidays h
                                  WHERE h.venue_id = v.id AND h.date = p_date LIMIT 1) hol ON true
             WHERE r.id = p_resource) d
     CROSS JOIN LATERAL generate_series(d.open_s, d.close_s - d.dur, d.dur) AS g(s)
      LEFT JOIN LATERAL (
            SELECT p.price, p.currency
              FROM rules p
             WHERE (p.day_type = d.day_type OR (d.holiday AND p.day_type = 'HOLIDAY'))
               AND p.start_time <= api_secs_time(g.s)
               AND api_secs_time(g.s) < p.end_time
             ORDER BY p.day_type = 'HOLIDAY' DESC
             LIMIT 1) pr ON true
     CROSS JOIN LATERAL (
            SELECT bool_or(NOT q.pending) AS taken,
                   max(q.expires_at) FILTER (WHERE q.pending) AS held_until
              FROM held q
             WHERE q.span && tsrange(p_date + api_secs_time(g.s),
                                     p_date + api_secs_time(g.s + d.dur))) req
     ORDER BY g.s;
END;
