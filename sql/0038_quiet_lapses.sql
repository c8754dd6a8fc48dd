-- 0038_quiet_lapses: a request whose change no slot answer can tell writes nothing more.
--
-- The sweeper ends lapsed payment holds a thousand at a time (sweep_expired_holds). For each
-- of them, the status change stamped a new version on its court's day (0015) and started the
-- kept free slots' trigger function (0019), which then found nothing to do: together about a
-- tenth of the sweep's time in PostgreSQL (track_functions, 20,000 lapsed holds on CITY).
--
-- A slot is taken by a request neither PENDING_PAYMENT nor CANCELLED, and held by a
-- PENDING_PAYMENT one until its expiry (court_day_slots, 0019). So two changes of a request
-- that stays on the same court, date and times change no slot answer, now or later:
-- - a payment hold cancelled once it has lapsed: the slot was open again already, and a hold
--   over is not an instant at which time alone changes the answer any more;
-- - a move between two statuses that both take the slot (MATCHED to COMPLETED, say): the
--   slot stays taken, whatever the hold's expiry says.
-- Both triggers now skip these in their WHEN clauses, before any function starts. Every
-- other change of status, expiry, court, date or times still stamps the day's version and
-- refreshes its kept slots, as before.

CREATE FUNCTION request_slots_unchanged(o match_requests, n match_requests)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN o.resource_id = n.resource_id AND o.booking_date = n.booking_date
       AND o.start_time = n.start_time AND o.end_time = n.end_time
       AND ((o.status = 'PENDING_PAYMENT' AND n.status = 'CANCELLED' AND o.expires_at <= now())
            OR (o.status NOT IN ('PENDING_PAYMENT', 'CANCELLED')
                AND n.status NOT IN ('PENDING_PAYMENT', 'CANCELLED')));
COMMENT ON FUNCTION request_slots_unchanged(match_requests, match_requests) IS
    'Whether a request''s update from o to n leaves every slot answer as it was: a lapsed hold cancelled, or a move between two statuses that take the slot.';

DROP TRIGGER match_requests_availability_update ON match_requests;
CREATE TRIGGER match_requests_availability_update
    AFTER UPDATE OF status, expires_at, resource_id, booking_date, start_time, end_time
    ON match_requests
    FOR EACH ROW
    WHEN ((OLD.status IS DISTINCT FROM NEW.status
           OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
           OR OLD.resource_id IS DISTINCT FROM NEW.resource_id
           OR OLD.booking_date IS DISTINCT FROM NEW.booking_date
           OR OLD.start_time IS DISTINCT FROM NEW.start_time
           OR OLD.end_time IS DISTINCT FROM NEW.end_time)
          AND NOT request_slots_unchanged(OLD, NEW))
    EXECUTE FUNCTION availability_request_changed();

DROP TRIGGER match_requests_free_slots ON match_requests;
CREATE TRIGGER match_requests_free_slots AFTER DELETE ON match_requests
    FOR EACH ROW EXECUTE FUNCTION free_slots_request_changed();
CREATE TRIGGER match_requests_free_slots_update
    AFTER UPDATE OF status, expires_at, resource_id, booking_date, start_time, end_time
    ON match_requests
    FOR EACH ROW WHEN (NOT request_slots_unchanged(OLD, NEW))
    EXECUTE FUNCTION free_slots_request_changed();
