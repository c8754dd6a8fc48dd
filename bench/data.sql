-- data.sql: the benchmark data sets, generated with set-based SQL (one INSERT ... SELECT per
-- table) from a fixed random seed, so every run loads the same data. bench/run.sh runs it as
-- the superuser into an empty, migrated database:
--
--   psql -v venues=10000 -v players=200000 -v requests=50000 -v issuer=ISS -f bench/data.sql
--
--   CITY  = venues 10000, players 200000, requests 50000
--   SMALL = venues   100, players   2000, requests   500 (the same city at 1/100 scale)
--
-- Shape: every venue is ACTIVE, in Europe/Madrid, at a random point of one metropolitan area
-- (latitude 40.2..40.7, longitude -3.95..-3.45, about 55 x 42 km); owner N (token subject
-- bench-owner-N) owns venues 20(N-1)+1 .. 20N. Every venue has 4 ACTIVE courts: courts whose
-- number is a multiple of 4 have 60-minute slots (tennis), the others 90-minute slots (padel);
-- all open 08:00-22:00 every day (9 slots of 90 or 14 slots of 60 minutes) with a WEEKDAY and
-- a WEEKEND price rule over the whole day. Players (subject bench-player-N) have a home in the
-- same area and a skill level. Live match requests: request n (0-based) is on court
-- n mod courts, on day 1..14 ahead and at a slot derived from n, so no two overlap; every fifth
-- is MATCHED with 4 players, the others OPEN with the organizer alone; every player of a
-- request has a PAID payment. Ids are md5-derived from the numbers (bench-venue-N,
-- bench-resource-N, bench-request-N), so run.sh can name them without asking.

\set ON_ERROR_STOP on
SELECT :venues * 4 AS courts, (:venues + 19) / 20 AS owners \gset

BEGIN;
SELECT setseed(0.4242);

-- settings that make the load itself faster; they end with the transaction. With
-- session_replication_role = replica no trigger fires: no foreign-key checks (every id is
-- derived from the same numbers), no match_players counter trigger (the rows carry their
-- team counters, checked at the end), no players cell trigger (the cells are filled at
-- the end) and no trigger of a match's place (the requests carry their venue's).
SET LOCAL synchronous_commit = off;
SET LOCAL work_mem = '64MB';
SET LOCAL session_replication_role = replica;

INSERT INTO users (id, issuer, subject, created_at)
SELECT md5('bench-owner-' || o)::uuid, :'issuer', 'bench-owner-' || o, now() - interval '400 days'
  FROM generate_series(1, :owners) o;

INSERT INTO users (id, issuer, subject, created_at)
SELECT md5('bench-player-' || p)::uuid, :'issuer', 'bench-player-' || p, now() - interval '300 days'
  FROM generate_series(1, :players) p;

INSERT INTO venues (id, owner_id, name, description, street, city, country, postal_code,
                    latitude, longitude, timezone, status, created_at, updated_at)
SELECT md5('bench-venue-' || i)::uuid,
       md5('bench-owner-' || ((i - 1) / 20 + 1))::uuid,
       'Bench Club ' || i, 'Padel and tennis club number ' || i,
       'Calle Bench ' || i, 'Madrid', 'Spain', lpad((28000 + i % 1000)::text, 5, '0'),
       40.2 + random() * 0.5, -3.95 + random() * 0.5, 'Europe/Madrid', 'ACTIVE',
       now() - interval '200 days' + make_interval(secs => i),
       now() - interval '200 days' + make_interval(secs => i)
  FROM generate_series(1, :venues) i;

INSERT INTO resources (id, venue_id, name, type, slot_duration_minutes, status, created_at,
                       updated_at)
SELECT md5('bench-resource-' || c)::uuid,
       md5('bench-venue-' || ((c - 1) / 4 + 1))::uuid,
       'Court ' || ((c - 1) % 4 + 1),
       CASE WHEN c % 4 = 0 THEN 'TENNIS_COURT' ELSE 'PADEL_COURT' END,
       CASE WHEN c % 4 = 0 THEN 60 ELSE 90 END,
       'ACTIVE',
       now() - interval '190 days' + make_interval(secs => c),
       now() - interval '190 days' + make_interval(secs => c)
  FROM generate_series(1, :courts) c;

INSERT INTO resource_schedules (resource_id, day_of_week, opening_time, closing_time)
SELECT md5('bench-resource-' || c)::uuid, d, time '08:00', time '22:00'
  FROM generate_series(1, :courts) c, generate_series(1, 7) d;

INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
SELECT md5('bench-resource-' || c)::uuid, t.day_type, time '00:00', time '24:00',
       t.base + c % 12, 'EUR'
  FROM generate_series(1, :courts) c,
       (VALUES ('WEEKDAY', 14.00), ('WEEKEND', 20.00)) AS t(day_type, base);

INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude,
                     created_at, updated_at)
SELECT md5('bench-player-' || p)::uuid, 'Player ' || p,
       (ARRAY['BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL'])[1 + floor(random() * 4)::int],
       40.2 + random() * 0.5, -3.95 + random() * 0.5,
       now() - interval '300 days', now() - interval '300 days'
  FROM generate_series(1, :players) p;

-- the live requests, with the team counters their match_players rows below add up to
CREATE TEMP TABLE bench_req ON COMMIT DROP AS
SELECT n, c, d.booking_date,
       time '08:00' + make_interval(mins => slot * dur) AS start_time,
       time '08:00' + make_interval(mins => (slot + 1) * dur) AS end_time,
       1 + (n::bigint * 7919) % :players AS p1,
       1 + (n::bigint * 7919 + 104729) % :players AS p2,
       1 + (n::bigint * 7919 + 2 * 104729) % :players AS p3,
       1 + (n::bigint * 7919 + 3 * 104729) % :players AS p4,
       n % 5 = 0 AS matched,
       (CASE WHEN extract(isodow FROM d.booking_date) IN (6, 7) THEN 20.00 ELSE 14.00 END
        + c % 12)::numeric(12, 2) AS court_price
  FROM (SELECT n, n % :courts + 1 AS c, n / :courts AS k,
               CASE WHEN (n % :courts + 1) % 4 = 0 THEN 60 ELSE 90 END AS dur,
               (n * 7 + n / :courts * 3) % CASE WHEN (n % :courts + 1) % 4 = 0 THEN 14 ELSE 9 END
                   AS slot
          FROM generate_series(0, :requests - 1) n) g
 CROSS JOIN LATERAL (
       SELECT (now() AT TIME ZONE 'Europe/Madrid')::date + 1 + (g.c + g.k * 5) % 14
              AS booking_date) d;

INSERT INTO match_requests (id, resource_id, organizer_id, booking_date, start_time, end_time,
                            starts_at, ends_at, format, skill_level, status, team_size,
                            team_a_count, team_b_count, court_price, price_per_player, currency,
                            search_latitude, search_longitude, search_radius_km, expires_at,
                            created_at, updated_at, venue_latitude, venue_longitude)
SELECT md5('bench-request-' || b.n)::uuid, md5('bench-resource-' || b.c)::uuid,
       md5('bench-player-' || b.p1)::uuid, b.booking_date, b.start_time, b.end_time,
       (b.booking_date + b.start_time) AT TIME ZONE 'Europe/Madrid',
       (b.booking_date + b.end_time) AT TIME ZONE 'Europe/Madrid',
       'TWO_VS_TWO', pl.skill_level, CASE WHEN b.matched THEN 'MATCHED' ELSE 'OPEN' END, 2,
       CASE WHEN b.matched THEN 2 ELSE 1 END, CASE WHEN b.matched THEN 2 ELSE 0 END,
       b.court_price, trunc(b.court_price / 4, 2), 'EUR', v.latitude, v.longitude, 10,
       now() - interval '45 minutes', now() - interval '1 hour', now() - interval '50 minutes',
       v.latitude, v.longitude
  FROM bench_req b
  JOIN players pl ON pl.user_id = md5('bench-player-' || b.p1)::uuid
  JOIN venues v ON v.id = md5('bench-venue-' || ((b.c - 1) / 4 + 1))::uuid;

INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
SELECT md5('bench-request-' || b.n)::uuid, md5('bench-player-' || x.p)::uuid, x.team, x.role,
       now() - interval '1 hour' + make_interval(mins => x.ord)
  FROM bench_req b
 CROSS JOIN LATERAL (VALUES (1, b.p1, 'TEAM_A', 'ORGANIZER'), (2, b.p2, 'TEAM_A', 'PLAYER'),
                            (3, b.p3, 'TEAM_B', 'PLAYER'), (4, b.p4, 'TEAM_B', 'PLAYER'))
       AS x(ord, p, team, role)
 WHERE x.ord = 1 OR b.matched;

INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status, provider_ref,
                      created_at, updated_at, entry_id)
SELECT md5('bench-request-' || b.n)::uuid, md5('bench-player-' || x.p)::uuid, 'PAYMENT',
       CASE WHEN x.ord = 1 THEN b.court_price - 3 * trunc(b.court_price / 4, 2)
            ELSE trunc(b.court_price / 4, 2) END,
       'EUR', 'PAID', 'bench-' || b.n || '-' || x.ord,
       now() - interval '50 minutes', now() - interval '50 minutes', mp.id
  FROM bench_req b
 CROSS JOIN LATERAL (VALUES (1, b.p1), (2, b.p2), (3, b.p3), (4, b.p4)) AS x(ord, p)
  JOIN match_players mp ON mp.match_request_id = md5('bench-request-' || b.n)::uuid
                       AND mp.player_id = md5('bench-player-' || x.p)::uuid
 WHERE x.ord = 1 OR b.matched;

-- what the trigger would have kept: team counters equal to the players in each team
DO $$
BEGIN
    IF EXISTS (SELECT 1
                 FROM match_requests m
                 LEFT JOIN (SELECT match_request_id,
                                   count(*) FILTER (WHERE team = 'TEAM_A') AS a,
                                   count(*) FILTER (WHERE team = 'TEAM_B') AS b
                              FROM match_players
                             WHERE left_at IS NULL
                             GROUP BY match_request_id) p ON p.match_request_id = m.id
                WHERE (m.team_a_count, m.team_b_count)
                      IS DISTINCT FROM (COALESCE(p.a, 0), COALESCE(p.b, 0))) THEN
        RAISE EXCEPTION 'bench data: team counters do not match match_players';
    END IF;
END $$;

-- what the players' statement triggers would have kept: the eligible-player cells
-- (sql/areas/40_players.sql)
INSERT INTO player_home_cells (cell_lat, cell_lng, skill_level, reliability_score, players)
SELECT cell_lat, cell_lng, skill_level, reliability_score, players FROM player_home_cells_counted;

-- and the search's free slots (sql/areas/30_slots.sql): the kept dates filled again for the
-- courts loaded, as the sweeper fills a new date
UPDATE free_slot_dates SET complete = false, filled_after = NULL;
DO $$
BEGIN
    LOOP
        EXIT WHEN (SELECT k.dates_added + k.courts_filled FROM free_slot_dates_keep(5000) k) = 0;
    END LOOP;
END $$;

COMMIT;

VACUUM ANALYZE;
