#!/usr/bin/env bats
# Open matches (sql/areas/70_open_matches.sql): a match is PUBLIC or PRIVATE, competitive or
# friendly; GET /api/match/open lists the open public matches near a point that the caller
# could join now, and POST /api/match/requests/{id}/join joins one of them.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	ME=$(fixture_player me INTERMEDIATE 40.42 -3.70)
}

# feed QUERY: GET /api/match/open?lat=40.42&lng=-3.70&QUERY as me; 200 expected.
feed() {
	req GET "/api/match/open?lat=40.42&lng=-3.70${1:+&$1}" -t "$(token me)"
	expect 200
}

# open_on COURT OFFSET [TERMS_SQL]: an OPEN match of org on COURT starting at now() + OFFSET,
# with TERMS_SQL (say "visibility = 'PRIVATE'") set while it awaited payment, as the API
# sets them (they are fixed once paid); prints its id.
open_on() {
	open_held "$(COURT=$1 sql_match "$ORG" PENDING_PAYMENT "$2")" "${3:-}"
}

# open_held ID [TERMS_SQL]: the held match ID with TERMS_SQL set, then paid (OPEN); prints ID.
open_held() {
	[ -z "${2:-}" ] || sql "UPDATE match_requests SET $2 WHERE id = '$1'" >/dev/null
	sql "UPDATE match_requests SET status = 'OPEN' WHERE id = '$1'" >/dev/null
	echo "$1"
}

# body_of DATE START: a create body for $COURT on DATE at START.
body_of() {
	echo "{\"resourceId\": \"$COURT\", \"bookingDate\": \"$1\", \"startTime\": \"$2\",
	       \"slotDurationMinutes\": 90, \"format\": \"TWO_VS_TWO\", \"skillLevel\": \"INTERMEDIATE\",
	       \"searchLat\": 40.42, \"searchLng\": -3.70${3:+, $3}}"
}

@test "a match is PUBLIC and competitive unless opened PRIVATE or friendly; bad values are 400 and write nothing" {
	day=$(weekday_date 5)
	req POST /api/match/requests -t "$(token org)" -d "$(body_of "$day" 11:00:00)"
	expect 201
	[ "$(jqr -c '[.visibility, .competitive]')" = '["PUBLIC",true]' ]
	[ "$(jqr '.invitationToken | test("^[0-9a-f-]{36}$")')" = true ]
	req POST /api/match/requests -t "$(token org)" \
		-d "$(body_of "$day" 12:30:00 '"visibility": "PRIVATE", "competitive": false')"
	expect 201
	[ "$(jqr -c '[.visibility, .competitive]')" = '["PRIVATE",false]' ]
	[ "$(sql "SELECT visibility || ' ' || competitive FROM match_requests WHERE id = '$(jqr .id)'")" = "PRIVATE false" ]
	for bad in '"visibility": "SECRET"' '"visibility": 1' '"competitive": "yes"'; do
		req POST /api/match/requests -t "$(token org)" -d "$(body_of "$day" 14:00:00 "$bad")"
		expect_problem 400 VALIDATION_FAILED "$(cut -d'"' -f2 <<<"$bad")"
	done
	[ "$(sql "SELECT count(*) FROM match_requests")" = 2 ]
	# a series passes them to every date
	req POST /api/match/series -t "$(token org2)" \
		-d "$(body_of "$day" 17:00:00 '"visibility": "PRIVATE", "competitive": false, "weeks": 2')"
	expect 201
	[ "$(jqr -c '[.created[] | [.visibility, .competitive]] | unique')" = '[["PRIVATE",false]]' ]
}

@test "visibility and competitiveness are fixed once the match is paid (a trigger)" {
	held=$(sql_match "$ORG" PENDING_PAYMENT '3 days')
	sql "UPDATE match_requests SET visibility = 'PRIVATE', competitive = false WHERE id = '$held'"
	paid=$(open_on "$(fixture_court "$VENUE" 90)" '3 days')
	# as the service's role, whose refusals the server does not log
	run psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 \
		-c "UPDATE match_requests SET visibility = 'PRIVATE' WHERE id = '$paid'"
	[ "$status" -ne 0 ]
	[[ "$output" == *INVALID_STATE* ]]
	run psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 \
		-c "UPDATE match_requests SET competitive = false WHERE id = '$paid'"
	[ "$status" -ne 0 ]
	[ "$(sql "SELECT visibility || ' ' || competitive FROM match_requests WHERE id = '$paid'")" = "PUBLIC true" ]
	[ "$(sql "SELECT visibility || ' ' || competitive FROM match_requests WHERE id = '$held'")" = "PRIVATE false" ]
}

@test "the feed lists the open public matches the caller could join, soonest first, with distance and free places" {
	near=$(open_on "$COURT" '2 days')
	friendly=$(open_on "$(fixture_court "$VENUE" 90)" '3 days' "skill_level = 'ADVANCED', competitive = false")
	# left out: private, full, another level, started, far away, the caller's own, at the
	# time of the caller's other match, every free place held by offers
	private=$(open_on "$(fixture_court "$VENUE" 90)" '2 days' "visibility = 'PRIVATE'")
	full_match '4 days'
	other_level=$(open_on "$(fixture_court "$VENUE" 90)" '2 days' "skill_level = 'ADVANCED'")
	started=$(open_on "$(fixture_court "$VENUE" 90)" '-10 minutes')
	FAR_VENUE=$(fixture_venue owner2 ACTIVE 40.69 -3.70)	# 30 km north
	far=$(open_on "$(fixture_court "$FAR_VENUE" 90)" '2 days')
	own=$(COURT=$(fixture_court "$VENUE" 90) sql_match "$ME" OPEN '5 days')
	busy=$(open_on "$(fixture_court "$VENUE" 90)" '6 days')
	mine_then=$(COURT=$(fixture_court "$VENUE" 90) sql_match_beside "$busy" "$ME" OPEN)
	held=$(open_on "$(fixture_court "$VENUE" 90)" '7 days')
	sql_join "$held" "$P1" TEAM_A
	sql "INSERT INTO invitations (match_request_id, player_id, kind, team, expires_at)
	     SELECT '$held', u, 'OFFER', 'TEAM_B', now() + interval '15 minutes'
	       FROM unnest(ARRAY['$P2', '$P3']::uuid[]) u" >/dev/null
	feed
	[ "$(jqr -c '[.[].id]')" = "[\"$near\",\"$friendly\"]" ]
	# each item: the match object without its link token, with distanceKm and freePlaces
	[ "$(jqr -c '.[0] | keys_unsorted')" = \
		'["id","resourceId","bookingDate","startTime","endTime","format","skillLevel","visibility","competitive","status","invitationToken","availableSlots","pricePerPlayer","currency","courtPrice","organizerId","customMessage","expiresAt","createdAt","players","waitlistLength","result","distanceKm","freePlaces"]' ]
	[ "$(jqr -c '.[0] | [.invitationToken, .status, .visibility, .competitive, .availableSlots, .freePlaces]')" = \
		'[null,"OPEN","PUBLIC",true,3,{"TEAM_A":1,"TEAM_B":2}]' ]
	[ "$(jqr -c '.[1] | [.skillLevel, .competitive]')" = '["ADVANCED",false]' ]
	km=$(sql "SELECT earth_distance(ll_to_earth(40.42, -3.70), ll_to_earth(40.4168, -3.7038)) / 1000")
	[ "$(jqr --argjson km "$km" '.[0].distanceKm - $km | fabs < 0.001')" = true ]
	[ "$(jqr '.[0].distanceKm | tostring | test("^[0-9]+[.][0-9]{1,3}$")')" = true ]
	# a wider radius brings the far venue in
	feed "radiusKm=100"
	[ "$(jqr -c '[.[].id] | index("'"$far"'") != null')" = true ]
	[ "$(jqr length)" = 3 ]
	feed "date=$(sql "SELECT booking_date FROM match_requests WHERE id = '$friendly'")"
	[ "$(jqr -c '[.[].id]')" = "[\"$friendly\"]" ]
	feed "format=ONE_VS_ONE"
	[ "$(jqr length)" = 0 ]
	start=$(sql "SELECT start_time FROM match_requests WHERE id = '$near'")
	feed "from=$start&to=$start"
	[ "$(jqr -c '[.[].id] | index("'"$near"'") != null')" = true ]
	# a player of another level sees the friendly match only
	fixture_player adv ADVANCED 40.42 -3.70 >/dev/null
	req GET '/api/match/open?lat=40.42&lng=-3.70' -t "$(token adv)"
	expect 200
	[ "$(jqr -c '[.[].id] | sort')" = "$(jq -cn --arg a "$friendly" --arg b "$other_level" '[$a, $b] | sort')" ]
}

@test "the feed pages with a cursor and checks its parameters" {
	a=$(open_on "$COURT" '2 days')
	b=$(open_on "$(fixture_court "$VENUE" 90)" '2 days 3 hours')
	c=$(open_on "$(fixture_court "$VENUE" 90)" '3 days')
	feed "limit=2"
	[ "$(jqr -c '[.[].id]')" = "[\"$a\",\"$b\"]" ]
	next=$(header Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
	[[ $next == /api/match/open\?*cursor=* ]]
	req GET "$next" -t "$(token me)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$c\"]" ]
	[ -z "$(header Link)" ]
	# a day's feed pages within that day, in start order, and never shows another day's
	for offset in '4 days' '4 days 1 hour' '4 days 2 hours' '5 days'; do
		id=$(open_on "$(fixture_court "$VENUE" 90)" "$offset")
		[ "$offset" != '4 days 1 hour' ] || day=$(sql "SELECT booking_date FROM match_requests WHERE id = '$id'")
	done
	want=$(sql "SELECT json_agg(id ORDER BY starts_at, id) FROM match_requests
	             WHERE booking_date = '$day' AND status = 'OPEN'")
	got='[]'
	next="/api/match/open?lat=40.42&lng=-3.70&date=$day&limit=1"
	while [ -n "$next" ]; do
		req GET "$next" -t "$(token me)"
		expect 200
		[ "$(jqr length)" = 1 ]
		got=$(jq -c --argjson page "$(jqr -c '[.[].id]')" '. + $page' <<<"$got")
		next=$(header Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
	done
	[ "$got" = "$(jq -c . <<<"$want")" ]
	req GET '/api/match/open?lng=-3.70&radiusKm=0&from=20:00:00&to=19:00:00&format=SIX&date=2026-02-30&limit=0' -t "$(token me)"
	expect_problem 400 VALIDATION_FAILED
	[ "$(jqr -c '[.errors[].field] | sort')" = '["date","format","lat","limit","radiusKm","to"]' ]
	req GET '/api/match/open?lat=40.42&lng=-3.70'
	expect_problem 401 UNAUTHORIZED
}

# day_pages LIMIT DAY: the ids of DAY's feed as me, page after page of LIMIT, as one JSON array
day_pages() {
	local got='[]' next="/api/match/open?lat=40.42&lng=-3.70&date=$2&limit=$1"
	while [ -n "$next" ]; do
		req GET "$next" -t "$(token me)"
		expect 200
		got=$(jq -c --argjson page "$(jqr -c '[.[].id]')" '. + $page' <<<"$got")
		next=$(header Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
	done
	echo "$got"
}

# feed_sql DAY LIMIT NEAR_MAX: DAY's feed (every day's when DAY is empty) as me from
# match_open_feed with p_near_max NEAR_MAX, page after page of LIMIT in one transaction;
# prints its items ([doc, key] each) as one JSON array
feed_sql() {
	local day=NULL
	[ -z "$1" ] || day="'$1'"
	sql "CREATE FUNCTION pg_temp.walk() RETURNS json LANGUAGE plpgsql AS \$\$
	     DECLARE
	         k json;
	         r record;
	         items json[] := '{}';
	         n integer;
	     BEGIN
	         LOOP
	             n := 0;
	             FOR r IN SELECT * FROM match_open_feed('$ME', 40.42, -3.70, 10, $day, NULL, NULL,
	                                                    NULL, $2, k, now(), $3) LOOP
	                 items := items || json_build_array(r.doc, r.key);
	                 k := r.key;
	                 n := n + 1;
	             END LOOP;
	             EXIT WHEN n < $2;
	         END LOOP;
	         RETURN array_to_json(items);
	     END \$\$;
	     SELECT pg_temp.walk()"
}


# same_pages DAY WANT LIMIT...: DAY's feed as me, page after page of each LIMIT, is the ids
# WANT (a JSON array) by HTTP, and the same items and keys read both ways
# (sql/areas/70_open_matches.sql: the near matches by place and sorted, p_near_max 300, or a
# start time at a time, 0), and without a date too when EVERY_DAY is 1 (DAY the only day
# with matches); sets near to the items of the last LIMIT
same_pages() {
	local day=$1 want limit
	want=$(jq -c . <<<"$2")
	shift 2
	for limit in "$@"; do
		[ "$(day_pages "$limit" "$day")" = "$want" ]
		near=$(feed_sql "$day" "$limit" 300)
		[ "$(jq -c '[.[][0].id]' <<<"$near")" = "$want" ]
		[ "$(feed_sql "$day" "$limit" 0)" = "$near" ]
		if [ "${EVERY_DAY:-0}" = 1 ]; then
			[ "$(feed_sql "" "$limit" 300)" = "$near" ]
			[ "$(feed_sql "" "$limit" 0)" = "$near" ]
		fi
	done
}

@test "a day's feed merges the caller's level and the friendly matches in start order, across pages" {
	# (sql/areas/70_open_matches.sql: the two are read apart and merged) two of them at one
	# instant at one venue, ordered by id; a competitive match of another level left out
	for spec in "4 days|" "4 days 30 minutes|competitive = false, skill_level = 'ADVANCED'" \
		"4 days 1 hour|skill_level = 'ADVANCED'" "4 days 90 minutes|" \
		"4 days 2 hours|competitive = false" "4 days 2 hours|" \
		"4 days 150 minutes|competitive = false, skill_level = 'BEGINNER'"; do
		if [ "${spec%%|*}" = '4 days 2 hours' ] && [ -n "${tie:-}" ]; then
			# the second of the two at the very instant of the first: made by its own
			# offset from now(), it started a minute later when a minute ended between the two
			open_held "$(COURT=$(fixture_court "$VENUE" 90) sql_match_beside "$tie" "$ORG" PENDING_PAYMENT)" \
				"${spec#*|}" >/dev/null
		else
			id=$(open_on "$(fixture_court "$VENUE" 90)" "${spec%%|*}" "${spec#*|}")
			[ "${spec%%|*}" != '4 days 2 hours' ] || tie=$id
		fi
	done
	day=$(sql "SELECT booking_date FROM match_requests WHERE id = '$tie'")
	want=$(sql "SELECT json_agg(id ORDER BY starts_at, id) FROM match_requests
	             WHERE booking_date = '$day' AND status = 'OPEN'
	               AND (NOT competitive OR skill_level = 'INTERMEDIATE')")
	# both kinds, and the two at one instant, are on that day
	[ "$(sql "SELECT count(DISTINCT competitive) FROM match_requests WHERE id IN
	             (SELECT json_array_elements_text('$want')::uuid)")" = 2 ]
	[ "$(sql "SELECT count(*) FROM match_requests
	             WHERE starts_at = (SELECT starts_at FROM match_requests WHERE id = '$tie')
	               AND (NOT competitive OR skill_level = 'INTERMEDIATE')")" = 2 ]
	# the pages by HTTP, and read both ways: every field of every item
	same_pages "$day" "$want" 1 2 20
}

@test "a busy day is read a start time at a time, nearest first: start, distance, id, and a page reads about what it shows" {
	# (sql/areas/70_open_matches.sql) sixteen clubs north of the caller, 0.6 to 7.8 km, a court
	# and a match at 10:00 each: three of another level (passed over), a friendly one, a
	# private one (not listed); two clubs 0.3 m apart (one distance to the metre, two exact
	# ones) and two at one place (their matches in id order); two matches at 11:30
	day=$(local_date 4)
	courts=()
	for i in $(seq 1 14) 7.00006 3; do
		lat=$(awk -v i="$i" 'BEGIN { printf "%.7f", 40.42 + 0.005 * i }')
		venue=$(fixture_venue owner1 ACTIVE "$lat" -3.70)
		courts+=("$(fixture_court "$venue" 90)")
	done
	for i in "${!courts[@]}"; do
		case $i in
		1 | 4 | 8) terms="skill_level = 'ADVANCED'" ;;
		3) terms="competitive = false, skill_level = 'BEGINNER'" ;;
		10) terms="visibility = 'PRIVATE'" ;;
		*) terms= ;;
		esac
		open_held "$(COURT=${courts[$i]} sql_matches "$ORG" PENDING_PAYMENT \
			"SELECT date '$day' AS d, time '10:00' AS st, time '11:30' AS et")" "$terms" >/dev/null
	done
	for i in 0 5; do
		open_held "$(COURT=${courts[$i]} sql_matches "$ORG" PENDING_PAYMENT \
			"SELECT date '$day' AS d, time '11:30' AS st, time '13:00' AS et")" >/dev/null
	done
	want=$(sql "SELECT json_agg(id ORDER BY starts_at, earth_point(venue_latitude, venue_longitude)
	                                                   <-> earth_point(40.42, -3.70), id)
	              FROM match_requests
	             WHERE booking_date = '$day' AND status = 'OPEN' AND visibility = 'PUBLIC'
	               AND (NOT competitive OR skill_level = 'INTERMEDIATE')")
	[ "$(jq length <<<"$want")" = 14 ]
	# the two clubs 0.3 m apart: one distance shown, the nearer first whatever their ids
	req GET "/api/match/open?lat=40.42&lng=-3.70&date=$day&limit=20" -t "$(token me)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "$(jq -c . <<<"$want")" ]
	near=$(sql "SELECT id FROM match_requests WHERE resource_id = '${courts[6]}'")
	far=$(sql "SELECT id FROM match_requests WHERE resource_id = '${courts[14]}'")
	[ "$(jqr --arg a "$near" --arg b "$far" \
		'[.[] | select(.id == $a or .id == $b)] | [.[].id == $a, .[0].distanceKm == .[1].distanceKm]')" \
		= "$(jq -n '[true, false, true]')" ]
	# the two at one place: in id order
	a=$(sql "SELECT id FROM match_requests WHERE resource_id = '${courts[2]}'")
	b=$(sql "SELECT id FROM match_requests WHERE resource_id = '${courts[15]}'")
	[ "$(jqr --arg a "$a" --arg b "$b" '[.[].id | select(. == $a or . == $b)] | . == sort')" = true ]
	# the pages by HTTP, read both ways, with and without a date (the only day with
	# matches is this one): every field and key of every item; the key's distance is the
	# exact one
	EVERY_DAY=1 same_pages "$day" "$want" 1 2 3 20
	[ "$(sql "SELECT earth_point(venue_latitude, venue_longitude) <-> earth_point(40.42, -3.70)
	            = ('$near'::json -> 0 -> 1 ->> 1)::float8
	            FROM match_requests WHERE id = ('$near'::json -> 0 -> 0 ->> 'id')::uuid")" = t ]
	# a page of three at 10:00, when the day is read a start time at a time (p_near_max -1:
	# without counting the near ones first), reads the nearest rows of that start time from
	# its index (the three, the match of another level passed over among them, and the next
	# one the ordered scan looks at), not its fifteen (the index's entries returned in this
	# transaction, before and after)
	[ "$(sql "CREATE FUNCTION pg_temp.page_reads() RETURNS text LANGUAGE plpgsql AS \$\$
	          DECLARE
	              before bigint := pg_stat_get_xact_tuples_returned(
	                                   'match_requests_open_start_place_idx'::regclass);
	              n bigint;
	          BEGIN
	              SELECT count(*) INTO n
	                FROM match_open_feed('$ME', 40.42, -3.70, 10, '$day', NULL, NULL, NULL, 3,
	                                     NULL, now(), -1);
	              RETURN n || ' ' || pg_stat_get_xact_tuples_returned(
	                                     'match_requests_open_start_place_idx'::regclass) - before;
	          END \$\$;
	          SELECT pg_temp.page_reads()")" = '3 5' ]
	[ "$(sql "SELECT count(*) FROM match_requests WHERE booking_date = '$day' AND start_time = '10:00'
	            AND status = 'OPEN' AND visibility = 'PUBLIC'")" = 15 ]
	# the caller plays at 10:00: every match then is passed over (the two at one place
	# among them), both ways, and the pages go on at 11:30
	sql_join "$(sql "SELECT id FROM match_requests WHERE resource_id = '${courts[12]}'")" "$ME" TEAM_B
	want=$(sql "SELECT json_agg(id ORDER BY earth_point(venue_latitude, venue_longitude)
	                                        <-> earth_point(40.42, -3.70), id)
	              FROM match_requests WHERE booking_date = '$day' AND start_time = '11:30'")
	[ "$(jq length <<<"$want")" = 2 ]
	EVERY_DAY=1 same_pages "$day" "$want" 1 20
}

@test "a match is where its venue is: a venue that moves, or a court given to another, moves its matches in the feed" {
	m=$(open_on "$COURT" '2 days')
	day=$(sql "SELECT booking_date FROM match_requests WHERE id = '$m'")
	[ "$(sql "SELECT venue_latitude || ' ' || venue_longitude FROM match_requests WHERE id = '$m'")" = "40.4168 -3.7038" ]
	# the owner moves the club 30 km north
	req PUT "/api/owner/venues/$VENUE" -t "$(token owner1 OWNER)" \
		-d '{"name": "Club Central", "street": "Calle Mayor 1", "city": "Madrid", "country": "Spain",
		     "latitude": 40.69, "longitude": -3.7038}'
	expect 200
	[ "$(sql "SELECT venue_latitude || ' ' || venue_longitude FROM match_requests WHERE id = '$m'")" = "40.69 -3.7038" ]
	for q in '' "date=$day"; do
		feed "$q"
		[ "$(jqr length)" = 0 ]
		feed "radiusKm=100${q:+&$q}"
		[ "$(jqr -c '[.[].id]')" = "[\"$m\"]" ]
		km=$(sql "SELECT earth_distance(ll_to_earth(40.42, -3.70), ll_to_earth(40.69, -3.7038)) / 1000")
		[ "$(jqr --argjson km "$km" '.[0].distanceKm - $km | fabs < 0.001')" = true ]
	done
	# a court given to another venue, where the caller is (no route does it; the schema keeps
	# a match with its court's venue whoever does)
	here=$(fixture_venue owner1 ACTIVE 40.42 -3.70)
	sql "UPDATE resources SET venue_id = '$here' WHERE id = '$COURT'" >/dev/null
	[ "$(sql "SELECT venue_latitude || ' ' || venue_longitude FROM match_requests WHERE id = '$m'")" = "40.42 -3.7" ]
	for q in '' "date=$day"; do
		feed "$q"
		[ "$(jqr -c '[.[] | [.id, .distanceKm == 0]]')" = "[[\"$m\",true]]" ]
	done
}

@test "joining from the feed takes a place and pays as the link does; another level, a private match and a full team are refused" {
	m=$(open_on "$COURT" '2 days')
	req POST "/api/match/requests/$m/join" -t "$(token me)" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .id)" = "$m" ]
	[ "$(jqr -c '[.players[] | select(.playerId == "'"$ME"'") | .team]')" = '["TEAM_B"]' ]
	[ "$(jqr '.invitationToken | test("^[0-9a-f-]{36}$")')" = true ]
	[ "$(sql "SELECT kind || ' ' || amount || ' ' || status FROM payments
	           WHERE match_request_id = '$m' AND player_id = '$ME'")" = "PAYMENT 5.00 PAID" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE recipient_id = '$ORG' AND type = 'PLAYER_JOINED'")" = 1 ]
	req POST "/api/match/requests/$m/join" -t "$(token me)" -d '{"team": "TEAM_B"}'
	expect_problem 409 ALREADY_IN_MATCH
	# another level: LEVEL_MISMATCH, unless the match is friendly
	fixture_player adv ADVANCED 40.42 -3.70 >/dev/null
	req POST "/api/match/requests/$m/join" -t "$(token adv)" -d '{"team": "TEAM_A"}'
	expect_problem 409 LEVEL_MISMATCH
	friendly=$(open_on "$(fixture_court "$VENUE" 90)" '3 days' "competitive = false")
	req POST "/api/match/requests/$friendly/join" -t "$(token adv)" -d '{"team": "TEAM_A"}'
	expect 200
	# a player without a level joins friendly matches only
	req POST "/api/match/requests/$m/join" -t "$(token nolevel)" -d '{"team": "TEAM_A"}'
	expect_problem 409 LEVEL_MISMATCH
	# a private match does not exist for anyone outside it; its players get the usual answer
	private=$(open_on "$(fixture_court "$VENUE" 90)" '4 days' "visibility = 'PRIVATE'")
	req POST "/api/match/requests/$private/join" -t "$(token me)" -d '{"team": "TEAM_B"}'
	expect_problem 404 NOT_FOUND
	req POST "/api/match/requests/$private/join" -t "$(token org)" -d '{"team": "TEAM_B"}'
	expect_problem 409 ALREADY_IN_MATCH
	req POST /api/match/requests/00000000-0000-4000-8000-000000000000/join -t "$(token me)" \
		-d '{"team": "TEAM_B"}'
	expect_problem 404 NOT_FOUND
	# a full team, bad input
	req POST "/api/match/requests/$friendly/join" -t "$(token me)" -d '{"team": "TEAM_A"}'
	expect_problem 409 TEAM_FULL
	req POST "/api/match/requests/$friendly/join" -t "$(token me)" -d '{"team": "TEAM_C"}'
	expect_problem 400 VALIDATION_FAILED team
	[ "$(sql "SELECT count(*) FROM match_players WHERE player_id = '$ME'")" = 1 ]
}

@test "a club's booking rules keep a match out of the feed and refuse the join" {
	m=$(open_on "$COURT" '2 days')
	sql "UPDATE venues SET max_upcoming_per_player = 1 WHERE id = '$VENUE'" >/dev/null
	other=$(COURT=$(fixture_court "$VENUE" 90) sql_match "$ME" OPEN '5 days')
	feed
	[ "$(jqr length)" = 0 ]
	req POST "/api/match/requests/$m/join" -t "$(token me)" -d '{"team": "TEAM_B"}'
	expect_problem 409 UPCOMING_LIMIT
	sql "UPDATE venues SET max_upcoming_per_player = 2 WHERE id = '$VENUE'" >/dev/null
	feed
	[ "$(jqr -c '[.[].id]')" = "[\"$m\"]" ]
	[ -n "$other" ]
}

@test "a private match invites nobody when paid; a public one invites the players of its level nearby" {
	day=$(weekday_date 5)
	req POST /api/match/requests -t "$(token org)" -d "$(body_of "$day" 11:00:00 '"visibility": "PRIVATE"')"
	expect 201
	private=$(jqr .id)
	req POST "/api/match/requests/$private/confirm-payment" -t "$(token org)"
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(sql "SELECT count(*) FROM invitations WHERE match_request_id = '$private'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_INVITATION'")" = 0 ]
	req POST /api/match/requests -t "$(token org)" -d "$(body_of "$day" 12:30:00)"
	expect 201
	public=$(jqr .id)
	req POST "/api/match/requests/$public/confirm-payment" -t "$(token org)"
	expect 200
	[ "$(sql "SELECT player_id FROM invitations WHERE match_request_id = '$public'")" = "$ME" ]
}
