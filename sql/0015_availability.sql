-- 0015_availability: answers that can be reused while nothing they depend on has changed,
-- and an eligible-player count that reads only the players it counts.
--
-- 1. Availability versions. The slots of a court on a date depend on the court, its weekly
--    schedule and price rules, its venue (status, time zone, booking window, notice), the
--    venue's holidays and the live requests on that court and date. Every change to any of
--    them stamps a version row in the same transaction with a fresh value of one sequence:
--    the venue's, the court's, or the court and date's. The three values read in one
--    statement are a validator of the answer read in that same statement: no committed change
--    can leave all three as they were, and no value is ever handed out twice, so a validator
--    once seen never comes back with another answer behind it.
--    Time changes an answer without any write (a slot starts, enters the notice period or
--    the booking window, a payment hold lapses): slot_answer also says until when its answer
--    holds, and a reused answer is never served past that instant.
--
-- 2. eligible_players_count walks players_home_earth_idx nearest first and stops at the cap:
--    a search in a dense city reads about cap index entries instead of every home inside the
--    radius's bounding box (CITY: 2 ms instead of 8-11 ms).

-- ---- 2. nearest first --------------------------------------------------------------------

-- The eligibility rules (0005), now with the chord distance to the centre, by which
-- players_home_earth_idx can return them nearest first.
CREATE FUNCTION eligible_players_ranked(p_lat double precision, p_lng double precision,
                                        p_radius_km numeric, p_skill text,
                                        p_min_reliability integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (user_id uuid, chord double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT p.user_id, earth_point(p.home_latitude, p.home_longitude) <-> earth_point(p_lat, p_lng)
      FROM players p
     WHERE p.home_latitude IS NOT NULL
       AND p.match_notifications
       AND earth_box(earth_point(p_lat, p_lng), p_radius_km * 1000)
           @> earth_point(p.home_latitude, p.home_longitude)
       AND earth_distance(earth_point(p_lat, p_lng), earth_point(p.home_latitude, p.home_longitude))
           <= p_radius_km * 1000
       AND p.skill_level IS NOT NULL
       AND (p_skill = 'ANY' OR p.skill_level = p_skill)
       AND (p.banned_until IS NULL OR p.banned_until <= p_now)
       AND p.reliability_score >= p_min_reliability;
END;
COMMENT ON FUNCTION eligible_players_ranked(double precision, double precision, numeric, text,
                                            integer, timestamptz) IS
    'Players that may be invited to a match around (lat, lng), with their chord distance for nearest-first order.';

-- eligible_players keeps its signature (the lifecycle functions call it) and now reads the
-- one definition above.
CREATE OR REPLACE FUNCTION eligible_players(p_lat double precision, p_lng double precision,
                                            p_radius_km numeric, p_skill text,
                                            p_min_reliability integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (user_id uuid)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT e.user_id
      FROM eligible_players_ranked(p_lat, p_lng, p_radius_km, p_skill, p_min_reliability, p_now) e;
END;

-- Counted nearest first: the index scan ends after p_cap players that pass (the box
-- condition also ends it when fewer live in the radius). The search program runs with
-- bitmap scans off, which an ordered index scan needs anyway.
CREATE OR REPLACE FUNCTION eligible_players_count(p_lat double precision, p_lng double precision,
                                                  p_radius_km numeric, p_skill text,
                                                  p_min_reliability integer, p_except uuid,
                                                  p_cap integer, p_now timestamptz DEFAULT now())
    RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT count(*)
      FROM (SELECT 1
              FROM eligible_players_ranked(p_lat, p_lng, p_radius_km, p_skill,
                                           p_min_reliability, p_now) e
             WHERE e.user_id <> p_except
             ORDER BY e.chord
             LIMIT p_cap) capped;
END;

-- ---- 1. availability versions ------------------------------------------------------------

CREATE SEQUENCE availability_version_seq;
COMMENT ON SEQUENCE availability_version_seq IS
    'Values of answer versions: each change takes a value never handed out before.';

CREATE TABLE answer_versions (
    scope_id uuid PRIMARY KEY,
    version  bigint NOT NULL
);
COMMENT ON TABLE answer_versions IS
    'Version of what a venue or a court contributes to every slot answer of its courts, or of what an owner''s venue list shows; no row = never changed since this migration. Rows are never deleted.';
COMMENT ON COLUMN answer_versions.scope_id IS
    'A venue id, a court (resource) id, or an owner''s user id for their venue list.';

CREATE TABLE availability_day_versions (
    resource_id  uuid NOT NULL,
    booking_date date NOT NULL,
    version      bigint NOT NULL,
    PRIMARY KEY (resource_id, booking_date)
);
COMMENT ON TABLE availability_day_versions IS
    'Version of the live requests of one court on one local date; no row = none ever changed.';

CREATE FUNCTION version_bump(p_scope uuid) RETURNS void
    LANGUAGE sql
BEGIN ATOMIC
    INSERT INTO answer_versions (scope_id, version)
    VALUES (p_scope, nextval('availability_version_seq'))
    ON CONFLICT (scope_id) DO UPDATE SET version = nextval('availability_version_seq');
END;
COMMENT ON FUNCTION version_bump(uuid) IS
    'Stamps a new version on a venue, a court or an owner''s list: its answers change validator.';

CREATE FUNCTION availability_day_bump(p_resource uuid, p_date date) RETURNS void
    LANGUAGE sql
BEGIN ATOMIC
    INSERT INTO availability_day_versions (resource_id, booking_date, version)
    VALUES (p_resource, p_date, nextval('availability_version_seq'))
    ON CONFLICT (resource_id, booking_date)
    DO UPDATE SET version = nextval('availability_version_seq');
END;
COMMENT ON FUNCTION availability_day_bump(uuid, date) IS
    'Stamps a new version on one court and date: its slot answer changes validator.';

-- Row trigger: stamps a new version on the scope that column TG_ARGV[0] of the written row
-- names, for the old row and the new one (once when both name the same); with TG_ARGV[1]
-- = 'owner', on the owner of the venue that column names.
CREATE FUNCTION version_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    scope uuid;
BEGIN
    FOR scope IN
        SELECT DISTINCT CASE WHEN TG_NARGS > 1
                             THEN (SELECT v.owner_id FROM venues v WHERE v.id = r.id)
                             ELSE r.id END
          FROM (SELECT (to_jsonb(OLD) ->> TG_ARGV[0])::uuid WHERE TG_OP <> 'INSERT'
                UNION ALL
                SELECT (to_jsonb(NEW) ->> TG_ARGV[0])::uuid WHERE TG_OP <> 'DELETE') r(id)
    LOOP
        IF scope IS NOT NULL THEN
            PERFORM version_bump(scope);
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION version_row_changed() IS
    'Row trigger: a new version for the venue, court or owner a written row belongs to.';

-- the slots: any change of a venue or court (status, time zone, booking rules, slot
-- length, ...), a venue's holidays, a court's schedules and price rules
CREATE TRIGGER venues_availability AFTER UPDATE ON venues
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('id');
CREATE TRIGGER resources_availability AFTER UPDATE ON resources
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('id');
CREATE TRIGGER venue_holidays_availability AFTER INSERT OR UPDATE OR DELETE ON venue_holidays
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('venue_id');
CREATE TRIGGER resource_schedules_availability AFTER INSERT OR UPDATE OR DELETE ON resource_schedules
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('resource_id');
CREATE TRIGGER price_rules_availability AFTER INSERT OR UPDATE OR DELETE ON price_rules
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('resource_id');

-- a request takes, moves or frees its court's time on its date; changes of its players,
-- counters or payments leave the slots as they are
CREATE FUNCTION availability_request_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM availability_day_bump(OLD.resource_id, OLD.booking_date);
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR OLD.resource_id <> NEW.resource_id
                              OR OLD.booking_date <> NEW.booking_date) THEN
        PERFORM availability_day_bump(NEW.resource_id, NEW.booking_date);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER match_requests_availability AFTER INSERT OR DELETE ON match_requests
    FOR EACH ROW EXECUTE FUNCTION availability_request_changed();
CREATE TRIGGER match_requests_availability_update
    AFTER UPDATE OF status, expires_at, resource_id, booking_date, start_time, end_time
    ON match_requests
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
          OR OLD.resource_id IS DISTINCT FROM NEW.resource_id
          OR OLD.booking_date IS DISTINCT FROM NEW.booking_date
          OR OLD.start_time IS DISTINCT FROM NEW.start_time
          OR OLD.end_time IS DISTINCT FROM NEW.end_time)
    EXECUTE FUNCTION availability_request_changed();

-- Microseconds since the epoch: how the programs compare instants with a tag's (cache.h).
CREATE FUNCTION epoch_us(t timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (extract(epoch FROM t) * 1000000)::bigint;
COMMENT ON FUNCTION epoch_us(timestamptz) IS 'An instant as whole microseconds since the epoch.';

-- The validator of the slots of a court on a date, and whether they may be shown: the court
-- and its venue ACTIVE, the date at most 366 days ahead at the venue. One row, or none for
-- an unknown court. Cheap: three primary-key probes beside the court and venue rows.
CREATE FUNCTION slot_validator(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (visible boolean, too_far boolean, validator text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT r.status = 'ACTIVE' AND v.status = 'ACTIVE',
           p_date > (p_now AT TIME ZONE v.timezone)::date + 366,
           concat_ws('.', COALESCE(vv.version, 0), COALESCE(rv.version, 0), COALESCE(dv.version, 0))
      FROM resources r
      JOIN venues v ON v.id = r.venue_id
      LEFT JOIN answer_versions vv ON vv.scope_id = v.id
      LEFT JOIN answer_versions rv ON rv.scope_id = r.id
      LEFT JOIN availability_day_versions dv ON dv.resource_id = r.id AND dv.booking_date = p_date
     WHERE r.id = p_resource;
END;
COMMENT ON FUNCTION slot_validator(uuid, date, timestamptz) IS
    'Whether the slots of a court on a date may be shown, and the validator of their answer.';

-- the payment holds of a court and date, whose lapse changes its slots (slot_answer)
CREATE INDEX match_requests_holds_idx ON match_requests (resource_id, booking_date)
    WHERE status = 'PENDING_PAYMENT';

-- The slots answer of a court on a date (GET /api/resources/{id}/slots) with its validator
-- and until when it holds if nothing is written: the first instant after p_now at which time
-- alone changes it (a slot starts, enters the venue's notice period or its booking window, a
-- payment hold on that court and date lapses; NULL when nothing will). The validator and the
-- slots come from the same snapshot, which is what makes the pair safe to reuse. No row for
-- an unknown court; slots and until are NULL when the slots may not be shown.
-- PL/pgSQL keeps the plan of its statement for the database session: planning the inlined
-- slot functions costs several times running them, which every request of a plain CGI
-- behind a pooler would otherwise pay.
CREATE FUNCTION slot_answer(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (visible boolean, too_far boolean, validator text, valid_until timestamptz,
                   slots json)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    -- one pass over the day's slots gives the answer and the next instant each of them
    -- changes by time alone
    RETURN QUERY
    SELECT c.visible, c.too_far, c.validator,
           CASE WHEN c.visible AND NOT c.too_far
                THEN least(x.next_start, x.next_notice, x.next_window, h.next_lapse) END,
           CASE WHEN c.visible AND NOT c.too_far THEN COALESCE(x.slots, '[]') END
      FROM slot_validator(p_resource, p_date, p_now) c
      JOIN resources r ON r.id = p_resource
      JOIN venues v ON v.id = r.venue_id
     CROSS JOIN LATERAL (
            SELECT json_agg(json_build_object(
                       'startTime', api_time(s.start_time),
                       'endTime', api_time(s.end_time),
                       'available', s.available,
                       'price', s.price,
                       'currency', s.currency) ORDER BY s.start_time) AS slots,
                   min(a.at) FILTER (WHERE a.at > p_now) AS next_start,
                   min(a.at - make_interval(mins => v.min_notice_minutes))
                       FILTER (WHERE a.at - make_interval(mins => v.min_notice_minutes) > p_now)
                       AS next_notice,
                   min(a.at - make_interval(days => v.booking_window_days))
                       FILTER (WHERE a.at - make_interval(days => v.booking_window_days) > p_now)
                       AS next_window
              FROM resource_slots(p_resource, p_date, p_now) s
             CROSS JOIN LATERAL (SELECT (p_date + s.start_time) AT TIME ZONE v.timezone) a(at)
             WHERE c.visible AND NOT c.too_far) x
     CROSS JOIN LATERAL (
            SELECT min(m.expires_at) AS next_lapse
              FROM match_requests m
             WHERE m.resource_id = p_resource
               AND m.booking_date = p_date
               AND m.status = 'PENDING_PAYMENT'
               AND m.expires_at > p_now
               AND c.visible AND NOT c.too_far) h;
END $$;
COMMENT ON FUNCTION slot_answer(uuid, date, timestamptz) IS
    'Slots of a court on a date as JSON, with their validator and until when they hold.';

-- ---- 3. the owners' venue lists ----------------------------------------------------------

-- What GET /api/owner/venues shows of an owner changes with their venues, the venues'
-- images and how many courts each has; each such write stamps the owner's version in
-- answer_versions (scope: the owner's user id).
CREATE TRIGGER venues_owner_list AFTER INSERT OR UPDATE OR DELETE ON venues
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('owner_id');
CREATE TRIGGER venue_images_owner_list AFTER INSERT OR UPDATE OR DELETE ON venue_images
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('venue_id', 'owner');
-- the owner's list counts every court of a venue, whatever its status
CREATE TRIGGER resources_owner_list AFTER INSERT OR DELETE OR UPDATE OF venue_id ON resources
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('venue_id', 'owner');

-- ---- 4. the search, with the settings of its plan -------------------------------------------

-- match_search's plan walks the GiST indexes nearest first and stops early; with bitmap
-- scans allowed the planner reads and sorts every venue and home in the radius instead
-- (cube's @> has no selectivity estimate). The search program used to turn them off for its
-- connection (libpq options), which a connection pooler in transaction mode cannot pass on:
-- the setting now travels with the call, in the SET clause of this wrapper, and PL/pgSQL
-- keeps the inner statement's plan for the rest of the database session.
CREATE FUNCTION match_search_answer(p_lat double precision, p_lng double precision,
                                    p_radius_km numeric, p_date date, p_from time, p_to time,
                                    p_duration integer, p_skill text, p_min_reliability integer,
                                    p_caller uuid, p_limit integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (date_ok boolean, results json)
    LANGUAGE plpgsql STABLE
    SET enable_bitmapscan = off
AS $$
BEGIN
    RETURN QUERY
    SELECT s.date_ok, s.results
      FROM match_search(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration, p_skill,
                        p_min_reliability, p_caller, p_limit, p_now) s;
END $$;
COMMENT ON FUNCTION match_search_answer(double precision, double precision, numeric, date, time,
                                        time, integer, text, integer, uuid, integer, timestamptz) IS
    'match_search run with the planner settings its plan needs, whatever the connection''s.';
