-- 0039_one_day_trigger: what a request's change does to its court's day, decided in one place
-- and done by one function.
--
-- Since 0038, two places decided that an update leaves every slot answer as it was: the
-- predicate request_slots_unchanged in the triggers' WHEN clauses, and the early returns
-- inside free_slots_request_changed (0019). Two of those returns could no longer be reached;
-- two were still live (a cancelled request cancelled again, a request cancelled after it
-- ended) and applied to the kept free slots only, while the day's version was stamped for
-- them all the same. Three functions did one job for three kinds of write:
-- match_requests_new_day for an insert (0036), availability_request_changed (0015) and
-- free_slots_request_changed (0019) for an update or a delete, each with branches for the
-- others' cases that could no longer be taken.
--
-- Now:
-- - request_slots_unchanged holds every case: an update of a request that stays on the same
--   court, date and times changes no slot answer, now or later, when
--   1. nothing the slots read changed (its status, and its expiry);
--   2. it moves between two statuses that take the slot (MATCHED to COMPLETED, say);
--   3. it was cancelled and stays cancelled (a cancelled request takes nothing);
--   4. it is cancelled once its payment hold has lapsed (the slot was open again already);
--   5. it is cancelled once it has ended (every slot it overlapped has started, and a slot
--      that has started is not available whatever holds it).
--   Cases 3 and 5 used to stamp a new version on the day: a client's ETag now stays good.
-- - match_requests_day_changed stamps the day's version and refreshes its kept slots, for the
--   day a request leaves and the day it comes to, from one AFTER trigger for inserts and
--   deletes and one for updates that request_slots_unchanged lets through. A change of times
--   on the same date refreshes that date once (it refreshed it twice).
-- The triggers are named so that they still fire before match_requests_waitlist_end.

CREATE OR REPLACE FUNCTION request_slots_unchanged(o match_requests, n match_requests)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN o.resource_id = n.resource_id AND o.booking_date = n.booking_date
       AND o.start_time = n.start_time AND o.end_time = n.end_time
       AND ((o.status = n.status AND o.expires_at IS NOT DISTINCT FROM n.expires_at)
            OR (o.status NOT IN ('PENDING_PAYMENT', 'CANCELLED')
                AND n.status NOT IN ('PENDING_PAYMENT', 'CANCELLED'))
            OR (o.status = 'CANCELLED' AND n.status = 'CANCELLED')
            OR (n.status = 'CANCELLED'
                AND ((o.status = 'PENDING_PAYMENT' AND o.expires_at <= now())
                     OR o.ends_at <= now())));
COMMENT ON FUNCTION request_slots_unchanged(match_requests, match_requests) IS
    'Whether a request''s update from o to n leaves every slot answer as it was, now and later: same court, date and times, and nothing the slots read changed, a move between two statuses that take the slot, cancelled again, or cancelled after its hold lapsed or it ended.';

-- The day a request leaves (OLD) and the day it comes to (NEW, when another court or date):
-- its version stamped and its kept slots worked out again.
CREATE FUNCTION match_requests_day_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM availability_day_bump(OLD.resource_id, OLD.booking_date),
                free_slots_refresh(ARRAY[OLD.resource_id], ARRAY[OLD.booking_date]);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (OLD.resource_id <> NEW.resource_id
                                                 OR OLD.booking_date <> NEW.booking_date)) THEN
        PERFORM availability_day_bump(NEW.resource_id, NEW.booking_date),
                free_slots_refresh(ARRAY[NEW.resource_id], ARRAY[NEW.booking_date]);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_requests_day_changed() IS
    'Row trigger on match_requests: stamps the version of the court days a request leaves and comes to, and refreshes their kept free slots.';

DROP TRIGGER match_requests_new_day ON match_requests;
DROP TRIGGER match_requests_availability ON match_requests;
DROP TRIGGER match_requests_availability_update ON match_requests;
DROP TRIGGER match_requests_free_slots ON match_requests;
DROP TRIGGER match_requests_free_slots_update ON match_requests;
DROP FUNCTION match_requests_new_day();
DROP FUNCTION availability_request_changed();
DROP FUNCTION free_slots_request_changed();

CREATE TRIGGER match_requests_day AFTER INSERT OR DELETE ON match_requests
    FOR EACH ROW EXECUTE FUNCTION match_requests_day_changed();
CREATE TRIGGER match_requests_day_update
    AFTER UPDATE OF status, expires_at, resource_id, booking_date, start_time, end_time
    ON match_requests
    FOR EACH ROW WHEN (NOT request_slots_unchanged(OLD, NEW))
    EXECUTE FUNCTION match_requests_day_changed();
