-- Weekly series: a group that plays every Tuesday at 19:00 opens the weeks in one call, and
-- calls off the weeks still to come in another.
--
-- Each date becomes an ordinary match request, made by match_hold (sql/areas/60_lifecycle.sql)
-- with its own payment hold, booking rules and double-booking guard, so everything that
-- follows (payment, joins, cancellation, the sweeper) treats it as any other match. A date
-- that cannot be booked is skipped with the code a single booking of it would have been
-- refused with; it is never a reason to refuse the others. The series only groups its
-- matches (match_series, match_series_matches): it has no state of its own that the
-- lifecycle reads, but for the limit of unpaid holds, where a series counts once
-- (hold_limit_check, sql/areas/55_fair_use.sql).
--
-- The program opens a series in one transaction: match_new_terms
-- (sql/areas/70_open_matches.sql) for the visibility and competitiveness of its matches, then
-- match_series_hold; it answers with json_match_series (sql/areas/90_json.sql).

-- SERIES: p_weeks holds on p_date and the same weekday after it, each by match_hold. A date
-- match_hold refuses with a 409 (SLOT_NOT_OFFERED: closed, a holiday or off the court's
-- grid; SLOT_IN_PAST; NOT_BOOKABLE; SLOT_TAKEN; a booking rule such as
-- OUTSIDE_BOOKING_WINDOW) is skipped with that code, in a subtransaction of its own, so
-- nothing of it is left. 409 HOLD_LIMIT once for the whole series; 404 NOT_FOUND, from the
-- first date's match_hold, for a court that is not bookable at all (nothing written); 409
-- NO_BOOKABLE_DATE (nothing written) when every date is skipped. The dates are held in date
-- order, so two series waiting on each other's court-day locks (taken by match_hold) cannot
-- form a cycle. Returns the series' id.
CREATE OR REPLACE FUNCTION match_series_hold(p_resource uuid, p_organizer uuid, p_date date, p_start time,
                                             p_duration integer, p_format text, p_skill text,
                                             p_message text, p_lat double precision,
                                             p_lng double precision, p_radius numeric, p_weeks integer,
                                             p_hold_seconds integer, p_now timestamptz DEFAULT now(),
                                             p_max_holds integer DEFAULT NULL)
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    v_series uuid;
    v_date date;
    v_code text;
    v_matches uuid[] := '{}';
    v_skipped jsonb := '[]';
BEGIN
    PERFORM hold_limit_check(p_organizer, p_max_holds, p_now);
    FOR k IN 0 .. p_weeks - 1 LOOP
        v_date := p_date + 7 * k;
        BEGIN
            v_matches := v_matches || match_hold(p_resource, p_organizer, v_date, p_start,
                                                 p_duration, p_format, p_skill, p_message,
                                                 p_lat, p_lng, p_radius, p_hold_seconds, p_now);
            CONTINUE;
        EXCEPTION
            -- (a 404 is not caught: the court is not bookable on any date)
            WHEN exclusion_violation THEN
                v_code := 'SLOT_TAKEN';
            WHEN SQLSTATE 'CR409' THEN
                v_code := SQLERRM;
        END;
        v_skipped := v_skipped || jsonb_build_object('bookingDate', v_date, 'code', v_code);
    END LOOP;
    IF cardinality(v_matches) = 0 THEN
        PERFORM lifecycle_fail(409, 'NO_BOOKABLE_DATE',
            'No date of the series can be booked: ' ||
            (SELECT string_agg(format('%s %s', e->>'bookingDate', e->>'code'), ', ')
               FROM jsonb_array_elements(v_skipped) e) || '.');
    END IF;
    INSERT INTO match_series (organizer_id, resource_id, first_date, start_time, weeks, skipped,
                              created_at)
    VALUES (p_organizer, p_resource, p_date, p_start, p_weeks, v_skipped, p_now)
    RETURNING id INTO v_series;
    INSERT INTO match_series_matches (series_id, match_request_id)
    SELECT v_series, unnest(v_matches);
    RETURN v_series;
END $$;
COMMENT ON FUNCTION match_series_hold(uuid, uuid, date, time, integer, text, text, text,
                                      double precision, double precision, numeric, integer,
                                      integer, timestamptz, integer) IS
    'SERIES: a hold on the same court and time every week, dates that cannot be booked skipped.';

-- CANCEL SERIES: the organizer cancels every match of the series that has not started and
-- can still be cancelled, each by match_cancel (refunds and notices as for one match); the
-- others (started, confirmed, over, cancelled already) are left as they are. Called again,
-- it changes nothing more (cancelled_at keeps the first call's instant). 404 NOT_FOUND for
-- anyone but the organizer.
CREATE OR REPLACE FUNCTION match_series_cancel(p_series uuid, p_player uuid, p_now timestamptz DEFAULT now())
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_match uuid;
BEGIN
    PERFORM 1 FROM match_series WHERE id = p_series AND organizer_id = p_player FOR UPDATE;
    IF NOT FOUND THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Series not found.');
    END IF;
    FOR v_match IN
        SELECT m.id FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id
         WHERE sm.series_id = p_series AND m.starts_at > p_now
           AND m.status IN ('PENDING_PAYMENT', 'OPEN', 'MATCHED')
         ORDER BY m.starts_at
    LOOP
        PERFORM match_cancel(v_match, p_player, p_now);
    END LOOP;
    UPDATE match_series SET cancelled_at = p_now WHERE id = p_series AND cancelled_at IS NULL;
END $$;
COMMENT ON FUNCTION match_series_cancel(uuid, uuid, timestamptz) IS
    'CANCEL SERIES: the organizer cancels the series'' matches still to come.';
