-- 20_versions: the validators of the answers that the programs reuse while nothing they depend
-- on has changed: a court's slots on a date (slot_answer, GET /api/resources/{id}/slots), an
-- owner's venue list (GET /api/owner/venues, answer_versions read by cgi-bin/owner.c) and a
-- search near a point (search_validator, for search_answer in sql/areas/85_search.sql; the
-- answers are kept by the programs, cache.h, and a court's slots by the database for plain
-- CGI, slot_answer_keep).
--
-- Every write that can change an answer stamps a version row in the same transaction with a
-- fresh value of availability_version_seq: answer_versions per venue, court or owner,
-- availability_day_versions per court and date, search_area_versions per cell of a grid and
-- day. No value is handed out twice, so a validator once seen never comes back with another
-- answer behind it; an answer and its validator are read in one snapshot. Time changes an
-- answer without any write (a slot starts, enters the notice period or the booking window, a
-- payment hold lapses), so each answer also says until when it holds, and a reused answer is
-- never served past that instant.
--
-- The stamps come from the triggers here (venues, courts, schedules, price rules, holidays,
-- venue images, players, and free_slots as it is written) and from court_day_changed in
-- sql/areas/30_slots.sql for the requests. Relies on sql/areas/10_basics.sql (search_cell,
-- api_time) and on resource_slots and free_slot_dates of sql/areas/30_slots.sql.

-- ---- a court's slots on a date, and an owner's venue list -----------------------------------

-- Stamps a court and date (court_day_changed, for every request that takes, moves or frees
-- time there). The upsert locks the day's row, so the writers of one court and day queue on it.
CREATE OR REPLACE FUNCTION availability_day_bump(p_resource uuid, p_date date) RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    INSERT INTO availability_day_versions (resource_id, booking_date, version)
    VALUES (p_resource, p_date, nextval('availability_version_seq'))
    ON CONFLICT (resource_id, booking_date)
    DO UPDATE SET version = nextval('availability_version_seq');
END $$;
COMMENT ON FUNCTION availability_day_bump(uuid, date) IS
    'Stamps a new version on one court and date: its slot answer changes validator.';

-- Row trigger: stamps a new version on the scope that column TG_ARGV[0] of the written row
-- names, for the old row and the new one (once when both name the same); with TG_ARGV[1]
-- = 'owner', on the owner of the venue that column names.
CREATE OR REPLACE FUNCTION version_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE OR REPLACE TRIGGER venues_availability AFTER UPDATE ON venues
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('id');

CREATE OR REPLACE TRIGGER resources_availability AFTER UPDATE ON resources
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('id');

CREATE OR REPLACE TRIGGER venue_holidays_availability AFTER INSERT OR UPDATE OR DELETE ON venue_holidays
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('venue_id');

CREATE OR REPLACE TRIGGER resource_schedules_availability AFTER INSERT OR UPDATE OR DELETE ON resource_schedules
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('resource_id');

CREATE OR REPLACE TRIGGER price_rules_availability AFTER INSERT OR UPDATE OR DELETE ON price_rules
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('resource_id');

-- The validator of the slots of a court on a date, and whether they may be shown: the court
-- and its venue ACTIVE, the date at most 366 days ahead at the venue. One row, or none for
-- an unknown court. Cheap: three primary-key probes beside the court and venue rows.
-- The validator itself: the versions of the venue, the court and the court's date. One row.
CREATE OR REPLACE FUNCTION slot_validator_of(p_venue uuid, p_resource uuid, p_date date)
    RETURNS TABLE (validator text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT concat_ws('.', COALESCE(vv.version, 0), COALESCE(rv.version, 0), COALESCE(dv.version, 0))
      FROM (SELECT) one
      LEFT JOIN answer_versions vv ON vv.scope_id = p_venue
      LEFT JOIN answer_versions rv ON rv.scope_id = p_resource
      LEFT JOIN availability_day_versions dv ON dv.resource_id = p_resource
                                            AND dv.booking_date = p_date;
END;
COMMENT ON FUNCTION slot_validator_of(uuid, uuid, date) IS
    'The validator of the slots of a court (of that venue) on a date.';

CREATE OR REPLACE FUNCTION slot_validator(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (visible boolean, too_far boolean, validator text)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT r.status = 'ACTIVE' AND v.status = 'ACTIVE',
           p_date > (p_now AT TIME ZONE v.timezone)::date + 366,
           w.validator
      FROM resources r
      JOIN venues v ON v.id = r.venue_id
     CROSS JOIN LATERAL slot_validator_of(v.id, r.id, p_date) w
     WHERE r.id = p_resource;
END;
COMMENT ON FUNCTION slot_validator(uuid, date, timestamptz) IS
    'Whether the slots of a court on a date may be shown, and the validator of their answer.';

-- The slots answer of a court on a date (GET /api/resources/{id}/slots) with its validator
-- and until when it holds if nothing is written: the first instant after p_now at which time
-- alone changes it (a slot starts, enters the venue's notice period or its booking window, a
-- payment hold on that court and date lapses; NULL when nothing will). The validator and the
-- slots come from the same snapshot, which is what makes the pair safe to reuse. No row for
-- an unknown court; slots and until are NULL when the slots may not be shown.
-- PL/pgSQL keeps the plan of its statement for the database session: planning the inlined
-- slot functions costs several times running them, which every request of a plain CGI
-- behind a pooler would otherwise pay.
CREATE OR REPLACE FUNCTION slot_answer(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
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

-- The slots answers kept in the database (slot_answers_kept, sql/0053_kept_answers.sql) for
-- the programs that keep nothing themselves (plain CGI, whose every request is a fresh
-- session): slot_answer_keep computes an answer as slot_answer does and keeps it when it may
-- be shown; slot_answer_kept gives it back while its validator is the current one and time
-- has not changed it, reading only the kept row and the three versions. A kept answer can
-- only have been shown: status changes stamp the venue's or court's version, and a date
-- shown once is never again too far. Both need the primary (the table is unlogged).
CREATE OR REPLACE FUNCTION slot_answer_kept(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (validator text, valid_until timestamptz, slots json)
    LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT k.validator, k.valid_until, k.slots
      FROM slot_answers_kept k
     CROSS JOIN LATERAL slot_validator_of(k.venue_id, k.resource_id, k.booking_date) w
     WHERE k.resource_id = p_resource
       AND k.booking_date = p_date
       AND (k.valid_until IS NULL OR k.valid_until > p_now)
       AND k.validator = w.validator;
END;
COMMENT ON FUNCTION slot_answer_kept(uuid, date, timestamptz) IS
    'The kept slots answer of a court on a date, while still true; no row otherwise.';

CREATE OR REPLACE FUNCTION slot_answer_keep(p_resource uuid, p_date date, p_now timestamptz DEFAULT now())
    RETURNS TABLE (visible boolean, too_far boolean, validator text, valid_until timestamptz,
                   slots json)
    LANGUAGE plpgsql
AS $$
DECLARE
    a record;
BEGIN
    SELECT * INTO a FROM slot_answer(p_resource, p_date, p_now);
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF a.visible AND NOT a.too_far THEN
        INSERT INTO slot_answers_kept AS k (resource_id, booking_date, venue_id, validator,
                                            valid_until, slots, kept_at)
        SELECT p_resource, p_date, r.venue_id, a.validator, a.valid_until, a.slots, p_now
          FROM resources r
         WHERE r.id = p_resource
        ON CONFLICT (resource_id, booking_date) DO UPDATE
           SET (venue_id, validator, valid_until, slots, kept_at) =
               (EXCLUDED.venue_id, EXCLUDED.validator, EXCLUDED.valid_until, EXCLUDED.slots,
                EXCLUDED.kept_at);
    END IF;
    RETURN QUERY SELECT a.visible, a.too_far, a.validator, a.valid_until, a.slots;
END $$;
COMMENT ON FUNCTION slot_answer_keep(uuid, date, timestamptz) IS
    'slot_answer, kept in slot_answers_kept when it may be shown.';

-- What GET /api/owner/venues shows of an owner changes with their venues, the venues'
-- images and how many courts each has; each such write stamps the owner's version in
-- answer_versions (scope: the owner's user id).
CREATE OR REPLACE TRIGGER venues_owner_list AFTER INSERT OR UPDATE OR DELETE ON venues
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('owner_id');

CREATE OR REPLACE TRIGGER venue_images_owner_list AFTER INSERT OR UPDATE OR DELETE ON venue_images
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('venue_id', 'owner');

-- the owner's list counts every court of a venue, whatever its status
CREATE OR REPLACE TRIGGER resources_owner_list AFTER INSERT OR DELETE OR UPDATE OF venue_id ON resources
    FOR EACH ROW EXECUTE FUNCTION version_row_changed('venue_id', 'owner');

-- ---- the search areas: search_area_versions ------------------------------------------------
-- A version per cell of search_cell's grid and per day: a local date for what changes the kept
-- slots of that date (free_slots written: a booking, a payment, a cancellation, the court or
-- its rules changed); '-infinity' for what changes a venue or a court on every date (its own
-- version: status, name, place, time zone, notice, booking window, a schedule, a price rule, a
-- holiday); 'infinity' for the players who live there (whatever decides whether a match would
-- invite them). The cells stamped are where the venue or the player is, and where it was when
-- it moved. The sweeper forgets the days three days past (free_slot_dates_keep).

-- Stamps a new version on the cells of the points (p_lats[i], p_lngs[i]) for the days
-- p_days[i], once per cell and day, in key order: two writers that share cells wait for each
-- other instead of deadlocking. Points without a place (NULL) are left out. The value is
-- drawn once the row is locked (ON CONFLICT's update), so of two writers of one row the one
-- that commits last leaves the greater value: a validator never sees a row go back.
CREATE OR REPLACE FUNCTION search_area_bump(p_days date[], p_lats double precision[],
                                            p_lngs double precision[]) RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO search_area_versions AS a (day, cell_lat, cell_lng, version)
    SELECT k.day, k.cell_lat, k.cell_lng, nextval('availability_version_seq')
      FROM (SELECT DISTINCT p.day, search_cell(p.lat) AS cell_lat, search_cell(p.lng) AS cell_lng
              FROM unnest(p_days, p_lats, p_lngs) p(day, lat, lng)
             WHERE p.day IS NOT NULL AND p.lat IS NOT NULL AND p.lng IS NOT NULL
             ORDER BY 1, 2, 3) k
        ON CONFLICT (day, cell_lat, cell_lng)
        DO UPDATE SET version = nextval('availability_version_seq')
        -- stamped already by this transaction (a court's kept row deleted, then written again)
        WHERE a.xmin <> pg_current_xact_id()::xid;
END $$;
COMMENT ON FUNCTION search_area_bump(date[], double precision[], double precision[]) IS
    'Stamps a new version on the search areas of some points and days.';

-- Stamps a venue, a court (scope: its id) or an owner's list (scope: the owner's user id); a
-- venue's or a court's stamp also stamps its venue's search area on every date ('-infinity').
CREATE OR REPLACE FUNCTION version_bump(p_scope uuid) RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    INSERT INTO answer_versions (scope_id, version)
    VALUES (p_scope, nextval('availability_version_seq'))
    ON CONFLICT (scope_id) DO UPDATE SET version = nextval('availability_version_seq');
    -- a venue, or a court's venue (an owner's list has no place)
    PERFORM search_area_bump('{-infinity}', ARRAY[v.latitude], ARRAY[v.longitude])
       FROM venues v
      WHERE v.id IN (p_scope, (SELECT r.venue_id FROM resources r WHERE r.id = p_scope));
END $$;
COMMENT ON FUNCTION version_bump(uuid) IS
    'Stamps a new version on a venue, a court or an owner''s list: its answers change validator.';

-- The kept slots of a court on a date written (free_slots_rewrite: a booking, a payment, a
-- cancellation, a lapse the sweeper ends, the court or its rules changed; a date filled by
-- the sweeper) stamp its venue's area on that date, as the transaction commits: every
-- booking of a cell and day stamps the same row, and its lock is then held for the commit
-- alone, not for the rest of the booking's work, so bookings in one cell wait for each other's
-- commit only. Only the kept dates have kept slots, and only their searches are kept, so a
-- booking further ahead stamps nothing. Rows of days past, which the sweeper deletes every
-- day, stamp nothing either.
CREATE OR REPLACE FUNCTION search_area_slots_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r free_slots;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    PERFORM search_area_bump(ARRAY[r.booking_date], ARRAY[v.latitude], ARRAY[v.longitude])
       FROM venues v
      WHERE v.id = r.venue_id;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION search_area_slots_changed() IS
    'Deferred row trigger on free_slots: kept slots written stamp their venue''s search area on their date.';

DROP TRIGGER IF EXISTS free_slots_search_area_insert ON free_slots;
CREATE CONSTRAINT TRIGGER free_slots_search_area_insert
    AFTER INSERT ON free_slots
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION search_area_slots_changed();

DROP TRIGGER IF EXISTS free_slots_search_area_delete ON free_slots;
CREATE CONSTRAINT TRIGGER free_slots_search_area_delete
    AFTER DELETE ON free_slots
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (OLD.booking_date >= (now() AT TIME ZONE 'UTC')::date - 1)
    EXECUTE FUNCTION search_area_slots_changed();

-- A venue that moves, or a court given to another venue, stamps the area it leaves; the
-- versions above stamp the one it is in.
CREATE OR REPLACE FUNCTION search_area_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'venues' THEN
        PERFORM search_area_bump('{-infinity}', ARRAY[OLD.latitude], ARRAY[OLD.longitude]);
    ELSE
        PERFORM search_area_bump('{-infinity}', ARRAY[v.latitude], ARRAY[v.longitude])
           FROM venues v WHERE v.id = OLD.venue_id;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION search_area_moved() IS
    'Row trigger on venues and resources: a venue that moves, or a court given to another venue, stamps the area it leaves.';

CREATE OR REPLACE TRIGGER venues_search_area_moved AFTER UPDATE OF latitude, longitude ON venues
    FOR EACH ROW
    WHEN (OLD.latitude IS DISTINCT FROM NEW.latitude
          OR OLD.longitude IS DISTINCT FROM NEW.longitude)
    EXECUTE FUNCTION search_area_moved();

CREATE OR REPLACE TRIGGER resources_search_area_moved AFTER UPDATE OF venue_id ON resources
    FOR EACH ROW
    WHEN (OLD.venue_id IS DISTINCT FROM NEW.venue_id)
    EXECUTE FUNCTION search_area_moved();

-- The players: a change of anything that decides whether a match would invite a player
-- stamps where the player lives, and where the player lived.
CREATE OR REPLACE FUNCTION search_area_players_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM search_area_bump(array_agg('infinity'::date), array_agg(n.home_latitude),
                                 array_agg(n.home_longitude))
           FROM new_rows n;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM search_area_bump(array_agg('infinity'::date), array_agg(o.home_latitude),
                                 array_agg(o.home_longitude))
           FROM old_rows o;
    ELSE
        PERFORM search_area_bump(array_agg('infinity'::date), array_agg(p.lat), array_agg(p.lng))
           FROM old_rows o
           JOIN new_rows n ON n.user_id = o.user_id
          CROSS JOIN LATERAL (VALUES (o.home_latitude, o.home_longitude),
                                     (n.home_latitude, n.home_longitude)) p(lat, lng)
          WHERE (o.home_latitude, o.home_longitude, o.match_notifications, o.skill_level,
                 o.banned_until, o.reliability_score, o.rated_level, o.rated_level_until)
                IS DISTINCT FROM
                (n.home_latitude, n.home_longitude, n.match_notifications, n.skill_level,
                 n.banned_until, n.reliability_score, n.rated_level, n.rated_level_until);
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION search_area_players_changed() IS
    'Statement trigger on players: stamps the search areas of the players whose eligibility may have changed.';

CREATE OR REPLACE TRIGGER players_search_area_insert AFTER INSERT ON players
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_area_players_changed();

CREATE OR REPLACE TRIGGER players_search_area_update AFTER UPDATE ON players
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_area_players_changed();

CREATE OR REPLACE TRIGGER players_search_area_delete AFTER DELETE ON players
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_area_players_changed();

-- The validator of a search's answer: the sum of the versions of every cell that its radius
-- touches, for its date and both infinities, and the greatest of them; NULL when the date is
-- not kept and complete (its stamps are not kept up, and its answer is not kept). A row's
-- version only grows (its stamps are drawn with the row locked, so the last to commit is the
-- greatest), so every committed stamp makes the sum greater, whichever commits first; the
-- greatest version alone would miss a stamp of one cell that commits after a greater one of
-- another. The greatest tells apart what rows deleted could make the sum meet again: a day
-- forgotten (it is past, its searches find nothing), a database emptied (every stamp after it
-- is greater than any before). The cells are those of the radius's bounding box on
-- earthdistance's sphere, a metre to spare: its latitudes, and the longitudes of the widest
-- part of the circle, every longitude when the circle reaches a pole or the antimeridian. The
-- primary key is read in one range per day, from the box's south-west cell to its north-east
-- one: the cells of a city, and every cell of its rows of latitude further on where venues
-- and players are; for a city that costs less than a statement per row of latitude, which a
-- grid that spans a continent would want instead.
CREATE OR REPLACE FUNCTION search_validator(p_lat double precision, p_lng double precision,
                                            p_radius_km numeric, p_date date) RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
    angle double precision := (p_radius_km::double precision * 1000 + 1) / public.earth();
    dlat double precision := degrees(angle);
    dlng double precision;
    lng_lo integer := search_cell(-180);
    lng_hi integer := search_cell(180);
    v_sum numeric;
    v_max bigint;
BEGIN
    -- only a kept date's answer is kept: only its stamps are kept up
    IF NOT EXISTS (SELECT FROM free_slot_dates d WHERE d.booking_date = p_date AND d.complete) THEN
        RETURN NULL;
    END IF;
    IF angle < pi() / 2 - radians(abs(p_lat)) THEN
        dlng := degrees(asin(sin(angle) / cos(radians(p_lat))));
        IF p_lng - dlng >= -180 AND p_lng + dlng <= 180 THEN
            lng_lo := search_cell(p_lng - dlng);
            lng_hi := search_cell(p_lng + dlng);
        END IF;
    END IF;
    SELECT sum(a.version), max(a.version) INTO v_sum, v_max
      FROM search_area_versions a
     WHERE a.day IN (p_date, '-infinity', 'infinity')
       AND a.cell_lat BETWEEN search_cell(p_lat - dlat) AND search_cell(p_lat + dlat)
       AND a.cell_lng BETWEEN lng_lo AND lng_hi;
    RETURN COALESCE(v_sum, 0) || '.' || COALESCE(v_max, 0);
END $$;
COMMENT ON FUNCTION search_validator(double precision, double precision, numeric, date) IS
    'The validator of a search''s answer: the sum and the greatest of the versions of search_area_versions around it; NULL when its date is not kept and complete.';
