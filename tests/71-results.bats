#!/usr/bin/env bats
# Results and Glicko-2 ratings (sql/areas/75_results.sql): a player of a played match reports
# its result, the other team confirms or disputes it (the sweeper confirms it 48 hours after
# the end), and a confirmed result of a competitive match moves every player's rating once.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

setup() {
	reset_db
	match_world
}

# report PLAYER SETS: PLAYER reports SETS for $M; 201 expected.
report() {
	req POST "/api/match/requests/$M/result" -t "$(token "$1")" -d "{\"sets\": $2}"
	expect 201
}

# rating_of PLAYER_ID: "rating deviation rated_matches" as stored, two decimals.
rating_of() {
	sql "SELECT round(rating::numeric, 2) || ' ' || round(deviation::numeric, 2) || ' ' || rated_matches
	       FROM player_ratings WHERE player_id = '$1'"
}

@test "the Glicko-2 period reproduces Glickman's example" {
	[ "$(sql "SELECT round(r::numeric, 4) || ' ' || round(rd::numeric, 4) || ' ' || round(sigma::numeric, 6)
	            FROM glicko2_period(1500, 200, 0.06, ARRAY[1400, 1550, 1700], ARRAY[30, 100, 300],
	                                ARRAY[1, 0, 0])")" = "1464.0507 151.5165 0.059996" ]
	# a period without games only widens the deviation: sqrt(phi^2 + sigma^2)
	[ "$(sql "SELECT round(r::numeric, 2) || ' ' || round(rd::numeric, 4)
	            FROM glicko2_period(1500, 200, 0.06, '{}', '{}', '{}')")" = "1500.00 200.2714" ]
}

@test "over random histories, a win never lowers a rating and a loss never raises it" {
	# 300 players, 30 rated periods each, against random sides of one or two opponents
	run sql "DO \$\$
	DECLARE
	    r double precision; rd double precision; s double precision;
	    o double precision[]; ord double precision[]; score double precision;
	    g record; n integer := 0;
	BEGIN
	    PERFORM setseed(0.1234);
	    FOR i IN 1 .. 300 LOOP
	        r := 800 + random() * 1600; rd := 350; s := 0.06;
	        FOR j IN 1 .. 30 LOOP
	            o := ARRAY[800 + random() * 1600];
	            ord := ARRAY[30 + random() * 320];
	            score := CASE WHEN random() < 0.5 THEN 1 ELSE 0 END;
	            SELECT * INTO g FROM glicko2_period(r, rd, s, o, ord, ARRAY[score]);
	            IF (score = 1 AND g.r < r) OR (score = 0 AND g.r > r)
	               OR g.rd <= 0 OR g.sigma <= 0 THEN
	                RAISE EXCEPTION 'player %, game %: % % % -> % % %', i, j, r, rd, score, g.r, g.rd, g.sigma;
	            END IF;
	            r := g.r; rd := g.rd; s := g.sigma; n := n + 1;
	        END LOOP;
	    END LOOP;
	    RAISE NOTICE 'periods %', n;
	END \$\$"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"periods 9000"* ]]
}

@test "a player of a played match reports its result; the match shows it and the other team is told" {
	full_match '-100 minutes'
	report p1 '[[6, 4], [3, 6], [10, 8]]'
	[ "$(jqr -c '[.sets, .winner, .status, .reportedBy]')" = "[[[6,4],[3,6],[10,8]],\"TEAM_A\",\"PENDING\",\"$P1\"]" ]
	[[ $(jqr .reportedAt) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T ]]
	req GET "/api/match/requests/$M" -t "$(token p2)"
	expect 200
	[ "$(jqr -c .result)" = '{"sets":[[6,4],[3,6],[10,8]],"winner":"TEAM_A","status":"PENDING"}' ]
	[ "$(sql "SELECT string_agg(u.subject, ',' ORDER BY u.subject) FROM notifications n
	           JOIN users u ON u.id = n.recipient_id WHERE n.type = 'RESULT_REPORTED'")" = p2,p3 ]
	# one result per match
	req POST "/api/match/requests/$M/result" -t "$(token p2)" -d '{"sets": [[4, 6], [6, 3], [8, 10]]}'
	expect_problem 409 RESULT_EXISTS
	[ "$(sql "SELECT count(*) FROM match_results")" = 1 ]
}

@test "a result is refused before the match is played, for an AMERICANO, from a stranger, and when its sets are not a result" {
	full_match '2 days'
	req POST "/api/match/requests/$M/result" -t "$(token p1)" -d '{"sets": [[6, 4], [6, 4]]}'
	expect_problem 409 MATCH_NOT_PLAYED
	sql "UPDATE match_requests SET starts_at = now() - interval '1 hour' WHERE id = '$M'" >/dev/null
	req POST "/api/match/requests/$M/result" -t "$(token stranger)" -d '{"sets": [[6, 4], [6, 4]]}'
	expect_problem 404 NOT_FOUND
	for sets in '[]' '[[6, 4], [6, 4], [6, 4], [6, 4], [6, 4], [6, 4]]' '[[6, 6]]' \
		'[[6, 4], [4, 6]]' '[[6]]' '[[6, -1]]' '[[6, 4.5]]' '[[100, 2]]' '"6-4"' '[["6", "4"]]' 'null'; do
		req POST "/api/match/requests/$M/result" -t "$(token p1)" -d "{\"sets\": $sets}"
		expect_problem 400 VALIDATION_FAILED sets
	done
	sql "UPDATE match_requests SET format = 'AMERICANO' WHERE id = '$M'" >/dev/null
	req POST "/api/match/requests/$M/result" -t "$(token p1)" -d '{"sets": [[6, 4], [6, 4]]}'
	expect_problem 409 NO_RESULT_FOR_FORMAT
	[ "$(sql "SELECT count(*) FROM match_results")" = 0 ]
	# the schema refuses what is not a result, whatever the code does
	run sql "INSERT INTO match_results (match_request_id, sets, winner, status, reported_by,
	             reported_team, reported_at)
	         VALUES ('$M', '[[6, 4], [4, 6]]', 'TEAM_A', 'PENDING', '$P1', 'TEAM_A', now())"
	[ "$status" -ne 0 ]
	[[ $output == *match_results_sets_valid* ]]
	expect_log postgres 'violates check constraint "match_results_sets_valid"'
}

@test "the other team confirms: every player's rating moves once, as one Glicko-2 period against the other side" {
	full_match '-100 minutes'
	report p3 '[[2, 6], [3, 6]]'
	req POST "/api/match/requests/$M/result/confirm" -t "$(token p2)"
	expect_problem 403 SAME_TEAM
	req POST "/api/match/requests/$M/result/confirm" -t "$(token p3)"
	expect_problem 403 SAME_TEAM
	req POST "/api/match/requests/$M/result/confirm" -t "$(token org)"
	expect 200
	[ "$(jqr -c '[.winner, .status]')" = '["TEAM_B","CONFIRMED"]' ]
	# everyone started at 1500 / 350 (INTERMEDIATE): one game against a side of 1500 / 350
	win=$(sql "SELECT round(r::numeric, 2) || ' ' || round(rd::numeric, 2) || ' 1'
	             FROM glicko2_period(1500, 350, 0.06, ARRAY[1500], ARRAY[350], ARRAY[1])")
	loss=$(sql "SELECT round(r::numeric, 2) || ' ' || round(rd::numeric, 2) || ' 1'
	              FROM glicko2_period(1500, 350, 0.06, ARRAY[1500], ARRAY[350], ARRAY[0])")
	[ "$(rating_of "$P2")" = "$win" ]
	[ "$(rating_of "$P3")" = "$win" ]
	[ "$(rating_of "$ORG")" = "$loss" ]
	[ "$(rating_of "$P1")" = "$loss" ]
	[ "${win%% *}" != 1500.00 ]
	# a repeat changes nothing; disputing it now is refused
	req POST "/api/match/requests/$M/result/confirm" -t "$(token p1)"
	expect 200
	req POST "/api/match/requests/$M/result/dispute" -t "$(token org)" -d '{"reason": "wrong"}'
	expect_problem 409 RESULT_CONFIRMED
	[ "$(sql "SELECT count(*) FROM rating_changes")" = 4 ]
	[ "$(rating_of "$P2")" = "$win" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'RESULT_CONFIRMED'")" = 4 ]
	# the profile shows it
	req GET /api/players/me -t "$(token p2)"
	expect 200
	[ "$(jqr -c '[.rating, .ratingDeviation, .ratedMatches, .effectiveSkillLevel]')" = \
		"[${win%% *},$(cut -d' ' -f2 <<<"$win"),1,\"INTERMEDIATE\"]" ]
	# and the list of results, with the rating before and after
	req GET /api/players/me/results -t "$(token p2)"
	expect 200
	[ "$(jqr -c '[.[] | [.matchRequestId, .team, .won, .status, .ratingBefore, .deviationBefore, .ratingAfter]]')" = \
		"[[\"$M\",\"TEAM_B\",true,\"CONFIRMED\",1500,350,${win%% *}]]" ]
}

@test "a disputed result moves nothing, cannot be confirmed, and the reporting team is told why" {
	full_match '-100 minutes'
	report p1 '[[6, 4], [6, 4]]'
	req POST "/api/match/requests/$M/result/dispute" -t "$(token p1)" -d '{"reason": "no"}'
	expect_problem 403 SAME_TEAM
	req POST "/api/match/requests/$M/result/dispute" -t "$(token p2)" -d '{}'
	expect_problem 400 VALIDATION_FAILED reason
	req POST "/api/match/requests/$M/result/dispute" -t "$(token p2)" -d '{"reason": "It was 4-6 4-6"}'
	expect 200
	[ "$(jqr .status)" = DISPUTED ]
	req POST "/api/match/requests/$M/result/confirm" -t "$(token p3)"
	expect_problem 409 RESULT_DISPUTED
	[ "$(sql "SELECT count(*) FROM player_ratings")" = 0 ]
	[ "$(sql "SELECT string_agg(u.subject || ':' || (n.payload->>'reason'), ',' ORDER BY u.subject)
	           FROM notifications n JOIN users u ON u.id = n.recipient_id
	          WHERE n.type = 'RESULT_DISPUTED'")" = "org:It was 4-6 4-6,p1:It was 4-6 4-6" ]
	# the sweeper leaves a disputed result alone
	sql "UPDATE match_requests SET starts_at = starts_at - interval '3 days',
	                               ends_at = ends_at - interval '3 days' WHERE id = '$M'" >/dev/null
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ $output == *" results_confirmed=0 "* ]]
	[ "$(sql "SELECT status FROM match_results")" = DISPUTED ]
}

@test "a friendly match's confirmed result moves no rating" {
	# friendly from the start, as the API sets it while the hold awaits payment
	M=$(sql_match "$ORG" PENDING_PAYMENT '-100 minutes')
	sql "UPDATE match_requests SET competitive = false WHERE id = '$M';
	     UPDATE match_requests SET status = 'MATCHED' WHERE id = '$M'" >/dev/null
	for p in p1:TEAM_A p2:TEAM_B p3:TEAM_B; do
		sql_join "$M" "$(fixture_player "${p%%:*}" INTERMEDIATE 40.42 -3.70)" "${p#*:}"
	done
	report p1 '[[6, 4], [6, 4]]'
	req POST "/api/match/requests/$M/result/confirm" -t "$(token p2)"
	expect 200
	[ "$(jqr .status)" = CONFIRMED ]
	[ "$(sql "SELECT count(*) FROM player_ratings") $(sql "SELECT count(*) FROM rating_changes")" = "0 0" ]
}

@test "the sweeper confirms and rates an undisputed result 48 hours after the end, once" {
	full_match '-100 minutes'
	report p1 '[[6, 4], [6, 4]]'
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[[ $output == *" results_confirmed=0 "* ]]
	sql "UPDATE match_requests SET starts_at = starts_at - interval '48 hours',
	                               ends_at = ends_at - interval '48 hours' WHERE id = '$M'" >/dev/null
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ $output == *" results_confirmed=1 "* ]]
	[ "$(sql "SELECT status || ' ' || (answered_by IS NULL) || ' ' || (rated_at IS NOT NULL) FROM match_results")" = "CONFIRMED true true" ]
	[ "$(sql "SELECT count(*) FROM rating_changes")" = 4 ]
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[[ $output == *" results_confirmed=0 "* ]]
	[ "$(sql "SELECT count(*) FROM rating_changes")" = 4 ]
	[ "$(sql "SELECT max(rated_matches) FROM player_ratings")" = 1 ]
}

@test "two confirmations at once rate the match once" {
	full_match '-100 minutes'
	report p1 '[[6, 4], [6, 4]]'
	for p in p2 p3; do
		curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(token "$p")" \
			"$BASE_URL/api/match/requests/$M/result/confirm" >"$BATS_TEST_TMPDIR/$p" &
	done
	wait
	[ "$(cat "$BATS_TEST_TMPDIR/p2" "$BATS_TEST_TMPDIR/p3")" = $'200\n200' ]
	[ "$(sql "SELECT count(*) || ' ' || count(DISTINCT player_id) FROM rating_changes")" = "4 4" ]
	[ "$(sql "SELECT string_agg(DISTINCT rated_matches::text, ',') FROM player_ratings")" = 1 ]
}

@test "a settled rating sets the effective level, which the feed and joining use; idle months widen the deviation" {
	ME=$(fixture_player me INTERMEDIATE 40.42 -3.70)
	sql "INSERT INTO player_ratings (player_id, rating, deviation, volatility, rated_matches, rated_at)
	     VALUES ('$ME', 1900, 100, 0.06, 5, now())" >/dev/null
	req GET /api/players/me -t "$(token me)"
	expect 200
	[ "$(jqr -c '[.skillLevel, .effectiveSkillLevel, .rating, .ratingDeviation, .ratedMatches]')" = \
		'["INTERMEDIATE","ADVANCED",1900,100,5]' ]
	m=$(sql_match "$ORG" OPEN '2 days')
	req POST "/api/match/requests/$m/join" -t "$(token me)" -d '{"team": "TEAM_B"}'
	expect_problem 409 LEVEL_MISMATCH
	# unsettled (deviation 150 or more): the declared level again
	sql "UPDATE player_ratings SET deviation = 150 WHERE player_id = '$ME'" >/dev/null
	req GET /api/players/me -t "$(token me)"
	[ "$(jqr .effectiveSkillLevel)" = INTERMEDIATE ]
	# 65 days without a rated match: two empty periods
	sql "UPDATE player_ratings SET deviation = 100, rated_at = now() - interval '65 days'
	      WHERE player_id = '$ME'" >/dev/null
	want=$(sql "SELECT round(b.rd::numeric, 2)
	              FROM glicko2_period(1900, 100, 0.06, '{}', '{}', '{}') a,
	                   glicko2_period(1900, a.rd, 0.06, '{}', '{}', '{}') b")
	req GET /api/players/me -t "$(token me)"
	[ "$(jqr .ratingDeviation)" = "$want" ]
	[ "$(jqr .rating)" = 1900 ]
	# a new player starts from the declared level
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	req GET /api/players/me -t "$(token pro)"
	[ "$(jqr -c '[.rating, .ratingDeviation, .ratedMatches, .effectiveSkillLevel]')" = '[2100,350,0,"PROFESSIONAL"]' ]
}

@test "invitations, the waiting list and the search's count go by the effective level, which lapses with idle time alone" {
	ME=$(fixture_player me INTERMEDIATE 40.42 -3.70)
	ADV=$(fixture_player adv ADVANCED 40.42 -3.70)
	# a settled ADVANCED rating: kept on the profile with the instant it unsettles, the first
	# 30-day empty period after which the deviation is 150 or more
	sql "INSERT INTO player_ratings (player_id, rating, deviation, volatility, rated_matches, rated_at)
	     VALUES ('$ME', 1900, 100, 0.06, 5, now())" >/dev/null
	[ "$(sql "SELECT rated_level FROM players WHERE user_id = '$ME'")" = ADVANCED ]
	[ "$(sql "SELECT (player_rating(user_id, rated_level_until - interval '1 second')).deviation < 150
	             AND (player_rating(user_id, rated_level_until)).deviation >= 150
	             AND rated_level_until > now() + interval '1 year'
	            FROM players WHERE user_id = '$ME'")" = t ]
	[ "$(sql "SELECT count(*) FROM player_home_cells_drift()")" = 0 ]
	# paying an ADVANCED match invites the players of that effective level nearby
	day=$(weekday_date 5)
	req POST /api/match/requests -t "$(token org)" -d "{\"resourceId\": \"$COURT\", \"bookingDate\": \"$day\",
		\"startTime\": \"11:00:00\", \"slotDurationMinutes\": 90, \"format\": \"TWO_VS_TWO\",
		\"skillLevel\": \"ADVANCED\", \"searchLat\": 40.42, \"searchLng\": -3.70}"
	expect 201
	adv_match=$(jqr .id)
	req POST "/api/match/requests/$adv_match/confirm-payment" -t "$(token org)"
	expect 200
	[ "$(sql "SELECT string_agg(u.subject, ',' ORDER BY u.subject) FROM invitations i
	            JOIN users u ON u.id = i.player_id WHERE i.match_request_id = '$adv_match'")" = adv,me ]
	[ "$(sql "SELECT count(*) FROM eligible_players(40.42, -3.70, 5, 'INTERMEDIATE', 0) WHERE user_id = '$ME'")" = 0 ]
	# the waiting list of a full competitive match takes its level only; a private one is 404
	full_match '4 days'
	req POST "/api/match/requests/$M/waitlist" -t "$(token me)" -d '{"team": "ANY"}'
	expect_problem 409 LEVEL_MISMATCH
	private=$(COURT=$(fixture_court "$VENUE" 90) sql_match "$ORG" PENDING_PAYMENT '4 days')
	sql "UPDATE match_requests SET visibility = 'PRIVATE' WHERE id = '$private';
	     UPDATE match_requests SET status = 'MATCHED' WHERE id = '$private'" >/dev/null
	req POST "/api/match/requests/$private/waitlist" -t "$(token me)" -d '{"team": "ANY"}'
	expect_problem 404 NOT_FOUND
	req POST "/api/match/requests/$private/waitlist" -t "$(token org)" -d '{"team": "ANY"}'
	expect_problem 409 ALREADY_IN_MATCH
	# years without a rated match: the band has lapsed and the declared level is back, with
	# no write when it happened
	sql "UPDATE player_ratings SET rated_at = now() - interval '20 years' WHERE player_id = '$ME'" >/dev/null
	[ "$(sql "SELECT rated_level || ' ' || (rated_level_until < now()) FROM players WHERE user_id = '$ME'")" = "ADVANCED true" ]
	req GET /api/players/me -t "$(token me)"
	[ "$(jqr .effectiveSkillLevel)" = INTERMEDIATE ]
	[ "$(sql "SELECT count(*) FROM eligible_players(40.42, -3.70, 5, 'INTERMEDIATE', 0) WHERE user_id = '$ME'")" = 1 ]
	req POST "/api/match/requests/$M/waitlist" -t "$(token me)" -d '{"team": "ANY"}'
	expect 201
	# the search's count: the cells leave out a level that depends on the clock, the walk
	# counts it; both agree
	[ "$(sql "SELECT count(*) FROM player_home_cells_drift()")" = 0 ]
	[ "$(sql "SELECT sum(players) FROM player_home_cells WHERE skill_level = 'INTERMEDIATE'")" = \
		"$(sql "SELECT count(*) FROM players WHERE skill_level = 'INTERMEDIATE' AND user_id <> '$ME'
		          AND home_latitude IS NOT NULL")" ]
	[ "$(sql "SELECT eligible_players_count(40.42, -3.70, 5, 'INTERMEDIATE', 0, '$ORG', 100)")" = \
		"$(sql "SELECT eligible_players_count_walk(40.42, -3.70, 5, 'INTERMEDIATE', 0, '$ORG', 100)")" ]
	# a band equal to the declared level does not depend on the clock: counted by the cells
	sql "UPDATE player_ratings SET rating = 1500, rated_at = now() WHERE player_id = '$ME'" >/dev/null
	[ "$(sql "SELECT rated_level FROM players WHERE user_id = '$ME'")" = INTERMEDIATE ]
	[ "$(sql "SELECT count(*) FROM player_home_cells_drift()")" = 0 ]
	[ "$(sql "SELECT sum(players) FROM player_home_cells WHERE skill_level = 'INTERMEDIATE'")" = \
		"$(sql "SELECT count(*) FROM players WHERE skill_level = 'INTERMEDIATE' AND home_latitude IS NOT NULL")" ]
}
