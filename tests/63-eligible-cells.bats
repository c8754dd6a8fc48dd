#!/usr/bin/env bats
# The eligible-player count of a search from grid cells (sql/areas/40_players.sql): the
# cells follow every kind of write on players in the same transaction, the count they give
# is the count home by home, and a dense area is answered without walking homes.
# Any mode.

load test_helper

LAT=40.4168
LNG=-3.7038

setup() {
	reset_db
}

# drift: the rows where the cells differ from a count of the players (none expected).
drift() {
	sql "SELECT count(*) FROM player_home_cells_drift()"
}

# cell LAT LNG SKILL [RELIABILITY]: the stored count of one cell.
cell() {
	sql "SELECT COALESCE(sum(players), 0) FROM player_home_cells
	      WHERE cell_lat = home_cell($1) AND cell_lng = home_cell($2) AND skill_level = '$3'
	        AND reliability_score = ${4:-100}"
}

# crowd N LAT LNG SKILL PREFIX: N players at one place, written by one statement.
crowd() {
	sql "INSERT INTO users (issuer, subject)
	     SELECT 'https://crowd.example/', '$5-' || g FROM generate_series(1, $1) g;
	     INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude)
	     SELECT u.id, u.subject, '$4', $2, $3
	       FROM users u WHERE u.issuer = 'https://crowd.example/' AND u.subject LIKE '$5-%'"
}

@test "the cells follow every kind of write on players, in the same transaction" {
	a=$(fixture_player "a-$RANDOM" INTERMEDIATE 40.4168 -3.7038)
	b=$(fixture_player "b-$RANDOM" ADVANCED 40.4168 -3.7038)
	user_id "nohome-$RANDOM" >/dev/null
	[ "$(cell 40.4168 -3.7038 INTERMEDIATE)" = 1 ]
	[ "$(cell 40.4168 -3.7038 ADVANCED)" = 1 ]
	[ "$(drift)" = 0 ]
	# a move inside the cell changes nothing, a move out of it moves the count
	sql "UPDATE players SET home_latitude = 40.4169 WHERE user_id = '$a'"
	[ "$(cell 40.4168 -3.7038 INTERMEDIATE)" = 1 ]
	sql "UPDATE players SET home_latitude = 40.4268 WHERE user_id = '$a'"
	[ "$(cell 40.4168 -3.7038 INTERMEDIATE)" = 0 ]
	[ "$(cell 40.4268 -3.7038 INTERMEDIATE)" = 1 ]
	[ "$(drift)" = 0 ]
	# each condition of eligibility takes the player out and back in
	for change in "skill_level = NULL|skill_level = 'INTERMEDIATE'" \
		"match_notifications = false|match_notifications = true" \
		"home_latitude = NULL, home_longitude = NULL|home_latitude = 40.4268, home_longitude = -3.7038" \
		"banned_until = now() + interval '3 days'|banned_until = NULL"; do
		sql "UPDATE players SET ${change%%|*} WHERE user_id = '$a'"
		[ "$(cell 40.4268 -3.7038 INTERMEDIATE)" = 0 ]
		[ "$(drift)" = 0 ]
		sql "UPDATE players SET ${change#*|} WHERE user_id = '$a'"
		[ "$(cell 40.4268 -3.7038 INTERMEDIATE)" = 1 ]
		[ "$(drift)" = 0 ]
	done
	# a lapsed ban still keeps the player out of the cells (a lower bound), not out of the count
	sql "UPDATE players SET banned_until = now() - interval '1 day' WHERE user_id = '$a'"
	[ "$(cell 40.4268 -3.7038 INTERMEDIATE)" = 0 ]
	[ "$(sql "SELECT eligible_players_count(40.4268, -3.7038, 5, 'INTERMEDIATE', 50, '$b', 100)")" = 1 ]
	# the reliability score is part of the key; a skill change moves between keys
	sql "UPDATE players SET banned_until = NULL, reliability_score = 75 WHERE user_id = '$a'"
	[ "$(cell 40.4268 -3.7038 INTERMEDIATE 75)" = 1 ]
	[ "$(cell 40.4268 -3.7038 INTERMEDIATE)" = 0 ]
	sql "UPDATE players SET skill_level = 'BEGINNER' WHERE user_id = '$b'"
	[ "$(cell 40.4168 -3.7038 ADVANCED)" = 0 ]
	[ "$(cell 40.4168 -3.7038 BEGINNER)" = 1 ]
	[ "$(drift)" = 0 ]
	# many rows in one statement: insert, move, delete
	crowd 300 40.4168 -3.7038 INTERMEDIATE many
	[ "$(cell 40.4168 -3.7038 INTERMEDIATE)" = 300 ]
	sql "UPDATE players SET home_longitude = -3.6938, reliability_score = 90
	      WHERE display_name LIKE 'many-%' AND display_name < 'many-2'"
	[ "$(cell 40.4168 -3.6938 INTERMEDIATE 90)" = 111 ]	# many-1, many-10.., many-100..
	[ "$(cell 40.4168 -3.7038 INTERMEDIATE)" = 189 ]
	[ "$(drift)" = 0 ]
	sql "DELETE FROM players WHERE display_name LIKE 'many-%'"
	[ "$(cell 40.4168 -3.7038 INTERMEDIATE)" = 0 ]
	[ "$(drift)" = 0 ]
	# a write rolled back leaves the cells as they were
	sql "BEGIN; UPDATE players SET home_latitude = 10, home_longitude = 10 WHERE user_id = '$a';
	     ROLLBACK"
	[ "$(cell 40.4268 -3.7038 INTERMEDIATE 75)" = 1 ]
	[ "$(drift)" = 0 ]
	# the profile endpoint writes through the same triggers
	req PUT /api/players/me -t "$(token "api-$RANDOM")" \
		-d '{"skillLevel":"PROFESSIONAL","homeLatitude":40.4168,"homeLongitude":-3.7038}'
	expect 200
	[ "$(cell 40.4168 -3.7038 PROFESSIONAL)" = 1 ]
	[ "$(drift)" = 0 ]
	# and the check itself sees a cell that went wrong
	sql "UPDATE player_home_cells SET players = players + 1
	      WHERE cell_lat = home_cell(40.4168) AND cell_lng = home_cell(-3.7038)
	        AND skill_level = 'PROFESSIONAL'"
	[ "$(drift)" = 1 ]
}

@test "the count from the cells is the count home by home, on random centres" {
	seed=$((RANDOM % 1000))
	echo "# seed $seed" >&3
	# a dense town of 4,000 homes on 0.2 by 0.2 degrees, some banned (lapsed or not), some
	# with a low score or without notifications, and 200 homes scattered far around it
	sql "SELECT setseed($seed / 1000.0);
	     INSERT INTO users (issuer, subject)
	     SELECT 'https://town.example/', 'h-' || g FROM generate_series(1, 4200) g;
	     INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude,
	                          match_notifications, reliability_score, banned_until)
	     SELECT u.id, u.subject,
	            (ARRAY['BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL'])[1 + floor(random() * 4)],
	            CASE WHEN g <= 4000 THEN 40.3 + random() * 0.2 ELSE 39 + random() * 3 END,
	            CASE WHEN g <= 4000 THEN -3.8 + random() * 0.2 ELSE -5 + random() * 3 END,
	            random() > 0.1,
	            (ARRAY[100, 100, 100, 80, 60, 30])[1 + floor(random() * 6)],
	            CASE WHEN random() < 0.05 THEN now() + interval '5 days'
	                 WHEN random() < 0.05 THEN now() - interval '5 days' END
	       FROM generate_series(1, 4200) g
	       JOIN users u ON u.issuer = 'https://town.example/' AND u.subject = 'h-' || g"
	[ "$(drift)" = 0 ]
	# 400 searches: centres in and around the town, radius 0.3 to 40 km (small ones more often), every skill and
	# threshold, caps from 1 to 100, the caller one of the homes or nobody
	out=$(sql "SELECT setseed($seed / 1000.0 + 0.0005);
	     WITH q AS (
	         SELECT 40.25 + random() * 0.3 AS lat, -3.85 + random() * 0.3 AS lng,
	                round((0.3 + power(random(), 3) * 39.7)::numeric, 1) AS radius,
	                (ARRAY['ANY', 'BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL'])[1 + floor(random() * 5)] AS skill,
	                (ARRAY[0, 50, 80])[1 + floor(random() * 3)] AS minrel,
	                (ARRAY[1, 5, 20, 100, 100])[1 + floor(random() * 5)] AS cap,
	                CASE WHEN random() < 0.5
	                     THEN (SELECT user_id FROM players WHERE g > 0 ORDER BY random() LIMIT 1)
	                     ELSE gen_random_uuid() END AS caller
	           FROM generate_series(1, 400) g),
	     c AS (
	         SELECT q.*,
	                eligible_players_count(lat, lng, radius, skill, minrel, caller, cap) AS fast,
	                eligible_players_count_walk(lat, lng, radius, skill, minrel, caller, cap) AS walk,
	                COALESCE(eligible_players_cells(lat, lng, radius, skill, minrel, cap), 0) > cap AS by_cells
	           FROM q)
	     SELECT count(*) FILTER (WHERE fast IS DISTINCT FROM walk) || ' ' ||
	            count(*) FILTER (WHERE by_cells) || ' ' ||
	            count(*) FILTER (WHERE NOT by_cells AND walk > 0) || ' ' ||
	            COALESCE(string_agg(format('(%s, %s, %s, %s, %s, %s, %s): %s, walked %s', lat, lng,
	                                       radius, skill, minrel, caller, cap, fast, walk), '; ')
	                     FILTER (WHERE fast IS DISTINCT FROM walk), '')
	       FROM c" | tail -n 1)
	read -r wrong by_cells walked rest <<<"$out"
	echo "# $wrong differ; $by_cells answered by the cells, $walked walked to a count above 0" >&3
	[ "$wrong" = 0 ] || { echo "$rest" >&2; false; }
	# both ways were taken often enough to mean something
	[ "$by_cells" -ge 60 ]
	[ "$walked" -ge 60 ]
}

@test "a dense area is answered from the cells, and a ban or a move changes the next answer" {
	court=$(fixture_court "$(fixture_venue "owner-$RANDOM" ACTIVE "$LAT" "$LNG")")
	T=$(token "me-$RANDOM")
	D=$(local_date 3)
	q="lat=$LAT&lng=$LNG&date=$D&startTimeFrom=09:00:00&startTimeTo=12:00:00"
	crowd 150 "$LAT" "$LNG" INTERMEDIATE dense
	crowd 3 "$LAT" "$LNG" ADVANCED few
	req GET "/api/match/search?$q" -t "$T"
	expect 200
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[100]' ]
	[ "$(jqr -c '[.[].resourceId] | unique')" = "[\"$court\"]" ]
	req GET "/api/match/search?$q&skillLevel=ADVANCED" -t "$T"
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[3]' ]
	# the statement the endpoint runs reads the cells and no home (auto_explain shows the
	# nested statements' plans)
	stmt="SELECT * FROM match_search_rows($LAT, $LNG, 10, '$D', '09:00', '12:00', 90, 'ANY', 50, gen_random_uuid(), 50)"
	plans=$(sql "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
	             SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;
	             $stmt" 2>&1)
	grep -q 'player_home_cells' <<<"$plans" || { echo "$plans" >&2; false; }
	! grep -q 'players_home_earth_idx' <<<"$plans" || { echo "$plans" >&2; false; }
	# bans of all but 60: the next answer counts the 60 home by home
	sql "UPDATE players SET banned_until = now() + interval '1 day'
	      WHERE display_name LIKE 'dense-%' AND split_part(display_name, '-', 2)::int > 60"
	[ "$(sql "SELECT count(*) FROM players WHERE display_name LIKE 'dense-%' AND banned_until IS NULL")" = 60 ]
	req GET "/api/match/search?$q" -t "$T"
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[63]' ]
	# the crowd moves 30 km away: none left
	sql "UPDATE players SET home_latitude = home_latitude + 0.3 WHERE display_name LIKE 'dense-%'
	                                                              OR display_name LIKE 'few-%'"
	req GET "/api/match/search?$q" -t "$T"
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[0]' ]
	[ "$(drift)" = 0 ]
}

@test "where no block of whole cells fits, the count walks the homes" {
	crowd 5 89.995 10 INTERMEDIATE pole
	crowd 5 10 179.999 INTERMEDIATE edge
	# across a pole or the antimeridian, or a radius under a cell: no cells
	[ "$(sql "SELECT eligible_players_cells(89.99, 10, 50, 'ANY', 0, 100) IS NULL")" = t ]
	[ "$(sql "SELECT eligible_players_cells(10, 179.995, 50, 'ANY', 0, 100) IS NULL")" = t ]
	[ "$(sql "SELECT eligible_players_cells(10, 20, 1.2, 'ANY', 0, 100) IS NULL")" = t ]
	[ "$(sql "SELECT eligible_players_count(89.99, 10, 50, 'ANY', 0, gen_random_uuid(), 100)")" = 5 ]
	[ "$(sql "SELECT eligible_players_count(10, 179.995, 50, 'ANY', 0, gen_random_uuid(), 100)")" = 5 ]
	[ "$(drift)" = 0 ]
}
