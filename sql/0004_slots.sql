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

CREATE FUNCTION api_secs_time(s integer) RETURNS time
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN s >= 86400 THEN time '24:00:00' ELSE time '00:00' + make_interval(secs => s) END;
COMMENT ON FUNCTION api_secs_time(integer) IS 'Seconds since midnight to a time; 86400 is 24:00:00.';

CREATE FUNCTION api_time_secs(t time) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN extract(epoch FROM t)::integer;
COMMENT ON FUNCTION api_time_secs(time) IS 'A time as seconds since midnight (24:00:00 is 86400).';

CREATE FUNCTION resource_slots(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (start_time time, end_time time, available boolean, price numeric, currency char(3))
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    -- Lateral sub-selects with LIMIT (rather than EXISTS) keep every look-up an index probe
    -- per court, also when the search inlines this function for thousands of courts.
    SELECT api_secs_time(g.s), api_secs_time(g.s + d.dur),
           d.bookable AND pr.price IS NOT NULL
             AND (p_date + api_secs_time(g.s)) AT TIME ZONE d.timezone > p_now
             AND taken.found IS NULL,
           pr.price, pr.currency
      FROM (SELECT r.slot_duration_minutes * 60 AS dur,
                   api_time_secs(s.opening_time) AS open_s,
                   api_time_secs(s.closing_time) AS close_s,
                   v.timezone,
                   r.status = 'ACTIVE' AND v.status = 'ACTIVE' AND anyrule.found IS NOT NULL AS bookable,
                   hol.found IS NOT NULL AS holiday,
                   CASE WHEN extract(isodow FROM p_date) IN (6, 7) THEN 'WEEKEND' ELSE 'WEEKDAY' END
                       AS day_type
              FROM resources r
              JOIN venues v ON v.id = r.venue_id
              JOIN resource_schedules s ON s.resource_id = r.id
                                       AND s.day_of_week = extract(isodow FROM p_date)::smallint
                                       AND s.opening_time IS NOT NULL
              LEFT JOIN LATERAL (SELECT 1 AS found FROM price_rules p
                                  WHERE p.resource_id = r.id LIMIT 1) anyrule ON true
              LEFT JOIN LATERAL (SELECT 1 AS found FROM venue_holidays h
                                  WHERE h.venue_id = v.id AND h.date = p_date LIMIT 1) hol ON true
             WHERE r.id = p_resource) d
     CROSS JOIN LATERAL generate_series(d.open_s, d.close_s - d.dur, d.dur) AS g(s)
      LEFT JOIN LATERAL (
            SELECT p.price, p.currency
              FROM price_rules p
             WHERE p.resource_id = p_resource
               AND (p.day_type = d.day_type OR (d.holiday AND p.day_type = 'HOLIDAY'))
               AND p.start_time <= api_secs_time(g.s)
               AND api_secs_time(g.s) < p.end_time
             ORDER BY p.day_type = 'HOLIDAY' DESC
             LIMIT 1) pr ON true
      -- a live request holding part of the slot; a lapsed payment hold is not live
      LEFT JOIN LATERAL (
            SELECT 1 AS found
              FROM match_requests m
             WHERE m.resource_id = p_resource
               AND m.status <> 'CANCELLED'
               AND NOT (m.status = 'PENDING_PAYMENT' AND m.expires_at <= p_now)
               AND tsrange(m.booking_date + m.start_time, m.booking_date + m.end_time)
                   && tsrange(p_date + api_secs_time(g.s), p_date + api_secs_time(g.s + d.dur))
             LIMIT 1) taken ON true
     ORDER BY g.s;
END;
COMMENT ON FUNCTION resource_slots(uuid, date, timestamptz) IS
    'Every slot of a court on a local date with availability and price, as of p_now.';
