#!/usr/bin/env bats
# The schema itself: statistics can be gathered whatever the search path (autovacuum runs
# with an empty one), and the radius searches keep their index scans (sql/0009_earth_point.sql).

load test_helper

setup() {
	reset_db
}

@test "ANALYZE of every table succeeds with an empty search path, as autovacuum runs it" {
	expect_autovacuum_yield
	owner=$(user_id "owner-$RANDOM")
	sql "INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude, timezone, status)
	     SELECT '$owner', 'V' || g, 'S', 'C', 'Spain', 40 + g * 0.001, -3.7, 'Europe/Madrid', 'ACTIVE'
	       FROM generate_series(1, 50) g"
	for i in 1 2 3 4 5; do fixture_player "stats-$i-$RANDOM" INTERMEDIATE 40.4 -3.7 >/dev/null; done
	tables=$(sql "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables
	              WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1")
	[ "$(wc -l <<<"$tables")" -ge 10 ]
	for t in $tables; do
		run sql "SET search_path = ''; ANALYZE $t"
		[ "$status" -eq 0 ] || { echo "ANALYZE $t: $output" >&2; return 1; }
	done
	# and the statistics are there: players and venues were never analyzed before
	[ "$(sql "SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND tablename = 'players'")" -gt 0 ]
	[ "$(sql "SELECT count(*) FROM pg_stats WHERE tablename = 'venues_earth_idx'")" -gt 0 ]
}

@test "no function of the schema calls ll_to_earth, whose body depends on the search path" {
	run sql "SELECT p.proname FROM pg_proc p
	          WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'
	            AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
	                             AND d.objid = p.oid AND d.deptype = 'e')
	            AND pg_get_functiondef(p.oid) ~ 'll_to_earth\('"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "still calling ll_to_earth: $output" >&2; return 1; }
	run grep -rn 'll_to_earth' "$COURTS_ROOT/cgi-bin/public.c" "$COURTS_ROOT/cgi-bin/search.c"
	[ "$status" -ne 0 ]
}

@test "eligible players and the venue radius search still read their GiST indexes" {
	expect_autovacuum_yield
	owner=$(user_id "owner-$RANDOM")
	sql "INSERT INTO users (issuer, subject) SELECT 'https://stats.example/', 'p' || g FROM generate_series(1, 3000) g
	     ON CONFLICT DO NOTHING;
	     INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude)
	     SELECT id, 'P', 'INTERMEDIATE', 35 + (random() * 8), -8 + (random() * 10)
	       FROM users WHERE issuer = 'https://stats.example/';
	     INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude, timezone, status)
	     SELECT '$owner', 'V' || g, 'S', 'C', 'Spain', 35 + (g % 80) * 0.1, -8 + (g / 80) * 0.1,
	            'Europe/Madrid', 'ACTIVE' FROM generate_series(1, 3000) g;
	     ANALYZE players; ANALYZE venues"
	plan=$(sql "EXPLAIN SELECT count(*) FROM eligible_players(40.4, -3.7, 5, 'INTERMEDIATE', 50)")
	grep -q 'players_home_earth_idx' <<<"$plan" || { echo "$plan" >&2; return 1; }
	plan=$(sql "EXPLAIN SELECT count(*) FROM venues v
	            WHERE v.status = 'ACTIVE'
	              AND earth_box(earth_point(40.4, -5.0), 5000) @> earth_point(v.latitude, v.longitude)")
	grep -q 'venues_earth_idx' <<<"$plan" || { echo "$plan" >&2; return 1; }
	# the venue list (cgi-bin/public.c) answers from the index as before
	req GET '/api/venues?lat=40.4&lng=-5.0&radiusKm=20'
	expect 200
	[ "$(jqr 'length')" -gt 0 ]
}
