-- Open matches: the terms a match is opened with, the feed of open matches near a player,
-- and joining from that feed.
--
-- A match is PUBLIC (listed in the feed, joinable by anyone it suits) or PRIVATE (reached only
-- by its link or an invitation; to anyone not in it, 404 as if it did not exist), and
-- competitive (only players of its level join from the feed) or friendly (any level). Both
-- are chosen when the match is opened and fixed once it is paid (match_requests_terms_fixed).
-- They are written as the row is inserted, never updated after: the write that opens a match
-- (match_create in sql/areas/60_lifecycle.sql, or a series) first calls match_new_terms,
-- whose transaction-local settings the columns' defaults read. So match_hold needs no change,
-- and the new row is not written a second time, which would check the double-booking
-- constraint again against rival bookings in flight and could deadlock with them.
--
-- A match carries the place it is played at (venue_latitude, venue_longitude: its venue's,
-- kept by the triggers below), so the feed takes the distance from the match row and reads a
-- day's near matches from GiST indexes of place, reading a court and venue only for the
-- matches it shows.
--
-- Relies on match_player_level (sql/areas/40_players.sql), venue_sets_rules and
-- booking_rules_refusal (sql/areas/55_fair_use.sql), match_join_locked and match_player_busy
-- (sql/areas/60_lifecycle.sql), match_places_free (sql/areas/65_places.sql) and
-- json_match_request (sql/areas/90_json.sql). A PRIVATE match gets no automatic invitations
-- (match_invite), and a player of another level asks for a place (sql/areas/65_places.sql).

-- Fixed once paid: visibility and competitive change only while the hold awaits payment.
CREATE OR REPLACE FUNCTION match_requests_terms_fixed() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF OLD.status <> 'PENDING_PAYMENT' THEN
        PERFORM lifecycle_fail(409, 'INVALID_STATE',
            'Visibility and competitiveness are fixed once the match is paid.');
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION match_requests_terms_fixed() IS
    'Row trigger: a paid match keeps its visibility and competitiveness.';

CREATE OR REPLACE TRIGGER match_requests_terms_fixed BEFORE UPDATE OF visibility, competitive
    ON match_requests FOR EACH ROW
    WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility
          OR OLD.competitive IS DISTINCT FROM NEW.competitive)
    EXECUTE FUNCTION match_requests_terms_fixed();

-- The visibility and competitiveness of the matches the rest of this transaction opens
-- (the defaults of match_requests.visibility and .competitive read them).
CREATE OR REPLACE FUNCTION match_new_terms(p_visibility text, p_competitive boolean)
    RETURNS void
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM set_config('courts.new_match_visibility', p_visibility, true),
            set_config('courts.new_match_competitive', p_competitive::text, true);
END $$;
COMMENT ON FUNCTION match_new_terms(text, boolean) IS
    'Visibility and competitiveness of the matches the rest of the transaction opens.';

-- JOIN from the feed: p_player takes a place of p_team in the PUBLIC match p_match, as by its
-- link (match_join_locked: the rules and the payment). 404 NOT_FOUND (unknown, or PRIVATE and
-- the caller not in it), 409 LEVEL_MISMATCH (competitive, of another level than the
-- caller's), and the link's refusals. Returns the match, so that the program's one statement
-- is match_request_json(match_join_open(...)) (sql/areas/90_json.sql).
CREATE OR REPLACE FUNCTION match_join_open(p_match uuid, p_player uuid, p_team text,
                                           p_now timestamptz DEFAULT now())
    RETURNS uuid
    LANGUAGE plpgsql
AS $$
DECLARE
    m match_requests;
    v_found boolean;
    v_in boolean;
BEGIN
    SELECT * INTO m FROM match_requests WHERE id = p_match FOR UPDATE;
    v_found := FOUND;
    v_in := EXISTS (SELECT 1 FROM match_players WHERE match_request_id = p_match
                       AND player_id = p_player AND left_at IS NULL);
    IF NOT v_found OR (m.visibility = 'PRIVATE' AND NOT v_in) THEN
        PERFORM lifecycle_fail(404, 'NOT_FOUND', 'Match request not found.');
    END IF;
    IF NOT v_in AND m.competitive
       AND m.skill_level IS DISTINCT FROM match_player_level(p_player) THEN
        PERFORM lifecycle_fail(409, 'LEVEL_MISMATCH',
            format('This competitive match is for %s players; ask for a place instead.',
                   m.skill_level));
    END IF;
    PERFORM match_join_locked(m, p_player, p_team, NULL, p_now);
    RETURN m.id;
END $$;
COMMENT ON FUNCTION match_join_open(uuid, uuid, text, timestamptz) IS
    'JOIN from the open-match feed: a public match of the caller''s level (or friendly).';

-- Whether the feed keeps match m for a caller of level p_level and the filters p_from, p_to
-- and p_format, whatever its distance: a place free, of the caller's level when
-- competitive. An expression the planner inlines, so it is applied to an index's rows as
-- they are read.
CREATE OR REPLACE FUNCTION open_feed_keeps(m match_requests, p_level text, p_from time, p_to time,
                                           p_format text)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT (p_from IS NULL OR m.start_time >= p_from)
       AND (p_to IS NULL OR m.start_time <= p_to)
       AND (p_format IS NULL OR m.format = p_format)
       AND match_places_free(m) > 0
       AND (NOT m.competitive OR m.skill_level = p_level);
$$;
COMMENT ON FUNCTION open_feed_keeps(match_requests, text, time, time, text) IS
    'The open-match feed''s filters of one match but its distance and the page''s key.';

-- A match inserted without its place takes its court's venue's. Only then: the trigger's
-- condition is checked before any function is called, so a writer that gives the place
-- pays nothing for it.
CREATE OR REPLACE FUNCTION match_requests_place_set() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    SELECT v.latitude, v.longitude INTO NEW.venue_latitude, NEW.venue_longitude
      FROM resources r JOIN venues v ON v.id = r.venue_id
     WHERE r.id = NEW.resource_id;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION match_requests_place_set() IS
    'Trigger: a match inserted without venue_latitude and venue_longitude takes its venue''s.';

CREATE OR REPLACE TRIGGER match_requests_place BEFORE INSERT ON match_requests
    FOR EACH ROW WHEN (NEW.venue_latitude IS NULL OR NEW.venue_longitude IS NULL)
    EXECUTE FUNCTION match_requests_place_set();

-- A venue that moves takes its matches with it; so does a court given to another venue.
CREATE OR REPLACE FUNCTION match_requests_place_follow() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_TABLE_NAME = 'venues' THEN
        UPDATE match_requests m
           SET venue_latitude = NEW.latitude, venue_longitude = NEW.longitude
          FROM resources r
         WHERE r.venue_id = NEW.id AND m.resource_id = r.id;
    ELSE
        UPDATE match_requests m
           SET venue_latitude = v.latitude, venue_longitude = v.longitude
          FROM venues v
         WHERE v.id = NEW.venue_id AND m.resource_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION match_requests_place_follow() IS
    'Trigger: the matches of a venue that moves, or of a court given to another venue, take the venue''s place.';

CREATE OR REPLACE TRIGGER venues_match_place AFTER UPDATE OF latitude, longitude ON venues
    FOR EACH ROW
    WHEN (OLD.latitude IS DISTINCT FROM NEW.latitude OR OLD.longitude IS DISTINCT FROM NEW.longitude)
    EXECUTE FUNCTION match_requests_place_follow();

CREATE OR REPLACE TRIGGER resources_match_place AFTER UPDATE OF venue_id ON resources
    FOR EACH ROW WHEN (OLD.venue_id IS DISTINCT FROM NEW.venue_id)
    EXECUTE FUNCTION match_requests_place_follow();

-- The feed's candidates whatever the day and the kind: the OPEN, PUBLIC matches not started,
-- after the page's key, that open_feed_keeps keeps within p_radius_km of p_centre, each with
-- its distance from the match's own place twice: d, the chord in metres that the indexes of
-- place order by (the page's order: start, then d, then id), and km, the great-circle
-- kilometres the feed shows (rounded to the metre; km never decreases as d grows). A query
-- the planner inlines into each statement of match_open_feed that reads it, so that
-- statement's own conditions (a day, a start time, competitive or not, a level) pick the
-- partial index.
CREATE OR REPLACE FUNCTION open_feed_candidates(p_centre public.earth, p_radius_km numeric, p_level text,
                                                p_from time, p_to time, p_format text, p_now timestamptz,
                                                p_after_start timestamptz, p_after_d double precision,
                                                p_after_id uuid)
    RETURNS TABLE (m match_requests, d double precision, km numeric)
    LANGUAGE sql STABLE
AS $$
    SELECT m, c.d, k.km
      FROM match_requests m
     CROSS JOIN LATERAL (SELECT earth_point(m.venue_latitude, m.venue_longitude) <-> p_centre) c(d)
     CROSS JOIN LATERAL (SELECT round((chord_metres(c.d) / 1000)::numeric, 3)) k(km)
     WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.starts_at > p_now
       AND m.starts_at >= GREATEST(p_now, p_after_start)
       AND open_feed_keeps(m, p_level, p_from, p_to, p_format)
       AND k.km <= p_radius_km
       AND (p_after_start IS NULL
            OR (m.starts_at, c.d, m.id) > (p_after_start, p_after_d, p_after_id));
$$;
COMMENT ON FUNCTION open_feed_candidates(public.earth, numeric, text, time, time, text,
                                         timestamptz, timestamptz, double precision, uuid) IS
    'The open-match feed''s candidates after a page''s key, with their distance; inlined.';

-- A start time's open public matches by place: what a day read a start time at a time reads,
-- nearest first (an ordered scan: the GiST index gives the rows by distance).
CREATE INDEX IF NOT EXISTS match_requests_open_start_place_idx ON match_requests
    USING gist (starts_at, earth_point(venue_latitude, venue_longitude))
    WHERE status = 'OPEN' AND visibility = 'PUBLIC';
COMMENT ON INDEX match_requests_open_start_place_idx IS
    'The open-match feed of a busy day: a start time''s OPEN, PUBLIC matches, nearest first.';

-- The open-match feed of p_caller: OPEN, PUBLIC matches that have not started, within
-- p_radius_km of (p_lat, p_lng), with a place no player takes and no offer holds, that the
-- caller could join now: of the caller's level when competitive, not one the caller is in or
-- that overlaps another match of theirs (match_player_busy), not refused by the club's
-- booking rules (asked only of a venue that sets one); optionally on p_date (the venue's local
-- date), starting from p_from to p_to, in p_format. Sorted by start, distance (the exact one,
-- d of open_feed_candidates) and id, from after the key p_after ([startsAt, d, id]); p_limit
-- rows of (the match object with distanceKm and freePlaces, its key). The per-player checks
-- run only for the matches read, and the objects are built for the page only.
--
-- It first counts the matches within the box of the radius, of the caller's level or
-- friendly, on p_date or on any day, on the two GiST indexes of place (stopping at
-- p_near_max + 1). With at most p_near_max it reads those and sorts them. With more, the
-- place is busy and a page fills within the first start times: it reads one start time at a
-- time, nearest first (match_requests_open_start_place_idx, one ordered scan within the box,
-- read as the page needs it; the matches of one place, at one distance, put in id order as
-- they come: a sort above the scan would read ahead). The next start time is the next of an
-- open match (match_requests_starts_idx), or on p_date the next of the caller's level or a
-- friendly one (match_requests_open_level_idx, match_requests_open_friendly_idx). So a page
-- reads about the rows it shows however many matches the city has at that time (the
-- competitive ones of other levels that are nearer are read and passed over), and a place
-- with nothing near reads nothing. Both ways give the same pages (tests/69-open-matches.bats
-- reads the feed both ways, which is what p_near_max is a parameter for; -1 reads a start
-- time at a time without counting). Each statement writes out its partial index's
-- condition, as a generic plan uses a partial index only when the statement's own conditions
-- imply the index's.
CREATE OR REPLACE FUNCTION match_open_feed(p_caller uuid, p_lat double precision, p_lng double precision,
                                           p_radius_km numeric, p_date date, p_from time, p_to time,
                                           p_format text, p_limit integer, p_after json,
                                           p_now timestamptz DEFAULT now(),
                                           p_near_max integer DEFAULT 100)
    RETURNS TABLE (doc json, key json)
    LANGUAGE plpgsql STABLE
    -- the plans that read in order and stop when the page is full: no full sort, no hash,
    -- merge or bitmap plan. No JIT: the near matches' one sort carries the cost that turning
    -- sorts off adds, far above the threshold of compiling the statement, and compiling
    -- costs far more than sorting the few rows
    SET enable_sort = off SET enable_hashjoin = off SET enable_bitmapscan = off
    SET enable_mergejoin = off SET jit = off
AS $$
DECLARE
    v_near integer;
    v_level text := match_player_level(p_caller);
    v_after_start timestamptz := (p_after->>0)::timestamptz;
    v_after_d double precision := (p_after->>1)::double precision;
    v_after_id uuid := (p_after->>2)::uuid;
    v_centre public.earth := earth_point(p_lat, p_lng);
    v_box public.cube := earth_box(v_centre, p_radius_km * 1000);
    v_day_from date := COALESCE(p_date, '-infinity');  -- the days read: p_date, or all
    v_day_to date := COALESCE(p_date, 'infinity');
    v_by_start boolean := false;    -- the days are read a start time at a time
    v_start timestamptz;            -- the start time read then
    feed refcursor;                 -- the candidates in the page's order: the near ones of
                                    -- the days read, sorted; or the start time v_start's in
                                    -- distance order, the matches of one place in any order
    cm match_requests;              -- the candidate read, its exact distance and its km
    cd double precision;
    ckm numeric;
    c record;                       -- a row of feed
    nx record;                      -- by start time: the next row of feed, read ahead
    have_next boolean := false;
    run match_requests[] := '{}';   -- by start time: the matches at distance cd, in id order,
    run_i integer := 1;             -- from run[run_i] on still to be read
    n integer := 0;
BEGIN
    -- how many matches of the days read are near (up to one more than p_near_max): the
    -- indexes of place only, without the other filters
    SELECT count(*) INTO v_near
      FROM (SELECT FROM match_requests m
             WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND m.competitive
               AND m.booking_date BETWEEN v_day_from AND v_day_to AND m.skill_level = v_level
               AND v_box @> earth_point(m.venue_latitude, m.venue_longitude)
            UNION ALL
            SELECT FROM match_requests m
             WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC' AND NOT m.competitive
               AND m.booking_date BETWEEN v_day_from AND v_day_to
               AND v_box @> earth_point(m.venue_latitude, m.venue_longitude)
             LIMIT p_near_max + 1) x;
    IF v_near <= p_near_max THEN
        -- few near: read them by place and sort them. OFFSET 0 fences the union: with sorts
        -- turned off the planner would rather read a whole index in start order
        OPEN feed FOR
            SELECT s.m, s.d, s.km
              FROM (SELECT f.m, f.d, f.km
                      FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to,
                                                p_format, p_now, v_after_start, v_after_d,
                                                v_after_id) f
                     WHERE (f.m).booking_date BETWEEN v_day_from AND v_day_to
                       AND (f.m).competitive AND (f.m).skill_level = v_level
                       AND v_box @> earth_point((f.m).venue_latitude, (f.m).venue_longitude)
                    UNION ALL
                    SELECT f.m, f.d, f.km
                      FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to,
                                                p_format, p_now, v_after_start, v_after_d,
                                                v_after_id) f
                     WHERE (f.m).booking_date BETWEEN v_day_from AND v_day_to
                       AND NOT (f.m).competitive
                       AND v_box @> earth_point((f.m).venue_latitude, (f.m).venue_longitude)
                    OFFSET 0) s
             ORDER BY (s.m).starts_at, s.d, (s.m).id;
    ELSE
        v_by_start := true;
    END IF;
    LOOP
        IF NOT v_by_start THEN
            FETCH feed INTO c;
            EXIT WHEN NOT FOUND;
            cm := c.m;
            cd := c.d;
            ckm := c.km;
        ELSIF run_i <= cardinality(run) THEN
            -- the next match of the place read
            cm := run[run_i];
            run_i := run_i + 1;
        ELSIF NOT have_next THEN
            -- every row of v_start read (or none yet): the next start time of an open match
            -- (of the day: of the caller's level or a friendly one; the first row of each in
            -- start order, as min() could be read from the index of place, unordered, whole),
            -- and its near matches nearest first (the index's order)
            IF p_date IS NULL THEN
                SELECT m.starts_at INTO v_start
                  FROM match_requests m
                 WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC'
                   AND m.starts_at > COALESCE(v_start, p_now)
                   AND m.starts_at >= COALESCE(v_after_start, p_now)
                 ORDER BY m.starts_at LIMIT 1;    -- none: NULL
            ELSE
                SELECT LEAST((SELECT m.starts_at FROM match_requests m
                               WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC'
                                 AND m.competitive AND m.booking_date = p_date
                                 AND m.skill_level = v_level
                                 AND m.starts_at > COALESCE(v_start, p_now)
                                 AND m.starts_at >= COALESCE(v_after_start, p_now)
                               ORDER BY m.starts_at LIMIT 1),
                             (SELECT m.starts_at FROM match_requests m
                               WHERE m.status = 'OPEN' AND m.visibility = 'PUBLIC'
                                 AND NOT m.competitive AND m.booking_date = p_date
                                 AND m.starts_at > COALESCE(v_start, p_now)
                                 AND m.starts_at >= COALESCE(v_after_start, p_now)
                               ORDER BY m.starts_at LIMIT 1))
                  INTO v_start;
            END IF;
            EXIT WHEN v_start IS NULL;
            IF feed IS NOT NULL THEN
                CLOSE feed;
            END IF;
            OPEN feed FOR
                SELECT f.m, f.d, f.km
                  FROM open_feed_candidates(v_centre, p_radius_km, v_level, p_from, p_to,
                                            p_format, p_now, v_after_start, v_after_d,
                                            v_after_id) f
                 WHERE (f.m).starts_at = v_start
                   AND (f.m).booking_date BETWEEN v_day_from AND v_day_to
                   AND v_box @> earth_point((f.m).venue_latitude, (f.m).venue_longitude)
                 ORDER BY f.d;
            FETCH feed INTO nx;
            have_next := FOUND;
            CONTINUE;
        ELSE
            -- the row read ahead, and the matches at its very distance (one place) after
            -- it, put in id order
            cm := nx.m;
            cd := nx.d;
            ckm := nx.km;
            FETCH feed INTO nx;
            have_next := FOUND;
            IF have_next AND nx.d = cd THEN
                run := ARRAY[cm];
                WHILE have_next AND nx.d = cd LOOP
                    run := run || nx.m;
                    FETCH feed INTO nx;
                    have_next := FOUND;
                END LOOP;
                SELECT array_agg(x ORDER BY x.id) INTO run FROM unnest(run) x;
                cm := run[1];
                run_i := 2;
            END IF;
        END IF;
        CONTINUE WHEN match_player_busy(cm, p_caller)
                   OR ((SELECT venue_sets_rules(v)
                          FROM resources r JOIN venues v ON v.id = r.venue_id
                         WHERE r.id = cm.resource_id)
                       AND booking_rules_refusal(cm.resource_id, p_caller, cm.starts_at,
                                                 p_now) IS NOT NULL);
        doc := (left(json_match_request(cm, false)::text, -1)
                || format(', "distanceKm" : %s, "freePlaces" : {"TEAM_A" : %s, "TEAM_B" : %s}}',
                          ckm, cm.team_size - cm.team_a_count - cm.offers_a,
                          cm.team_size - cm.team_b_count - cm.offers_b))::json;
        key := json_build_array(api_ts(cm.starts_at), cd, cm.id);
        RETURN NEXT;
        n := n + 1;
        EXIT WHEN n >= p_limit;
    END LOOP;
    IF feed IS NOT NULL THEN
        CLOSE feed;
    END IF;
END $$;
COMMENT ON FUNCTION match_open_feed(uuid, double precision, double precision, numeric, date,
                                    time, time, text, integer, json, timestamptz, integer) IS
    'The open matches near a point a player could join now, a page at a time.';
