#!/usr/bin/env bats
# Match search (endpoint 19): free slots of bookable courts near a point, with the number of
# players a match opened there would invite; filters, defaults, order, validation, and the
# venue radius filter running on venues_earth_idx.

load test_helper

LAT=40.4168
LNG=-3.7038

setup() {
	reset_db
	# fresh subjects per test: FastCGI workers keep (iss, sub) -> id across requests
	RUN=$BATS_TEST_NUMBER-$RANDOM
	OWNER=owner-$RUN
	ME=me-$RUN
	T=$(token "$ME")
	D=$(local_date 3)
	# the fixture courts cost 20.00 on weekdays and 30.00 at weekends
	if [ "$(TZ=Europe/Madrid date -d '+3 days' +%u)" -ge 6 ]; then PRICE=30.00; else PRICE=20.00; fi
}

# search QUERY: GET /api/match/search around the centre on D with QUERY appended.
search() {
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$D&$1" -t "$T"
}

# venue_at LAT_OFFSET [STATUS] [NAME]: a venue LAT_OFFSET degrees north of the centre
# (0.01 degree of latitude is 1.113 km on earthdistance's sphere); prints its id.
venue_at() {
	local id
	id=$(fixture_venue "$OWNER" "${2:-ACTIVE}" "$(awk -v a="$LAT" -v b="$1" 'BEGIN { print a + b }')" "$LNG")
	[ -z "${3:-}" ] || sql "UPDATE venues SET name = '$3', city = '$3 City' WHERE id = '$id'"
	echo "$id"
}

# hold COURT START STATUS [EXPIRES_SQL]: a match request holding COURT on $D from START for 90 min.
hold() {
	fixture_hold "$1" "$D" "$2" "$(date -u -d "1970-01-01 $2 UTC + 90 minutes" +%T)" "$3" "${4:-}"
}

@test "search lists the free slots of a nearby court with every field" {
	venue=$(venue_at 0)
	court=$(fixture_court "$venue")
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00'
	expect 200
	[ "$(jqr length)" = 2 ]
	[ "$(jqr -c '.[0] | keys_unsorted')" = '["resourceId","resourceName","resourceType","venueId","venueName","venueCity","venueLatitude","venueLongitude","distanceKm","startTime","endTime","price","currency","eligiblePlayersNearby"]' ]
	[ "$(jqr '.[0].resourceId')" = "$court" ]
	[ "$(jqr '.[0].resourceName')" = "Court 1" ]
	[ "$(jqr '.[0].resourceType')" = PADEL_COURT ]
	[ "$(jqr '.[0].venueId')" = "$venue" ]
	[ "$(jqr '.[0].venueName')" = "Club Central" ]
	[ "$(jqr '.[0].venueCity')" = Madrid ]
	[ "$(jqr '.[0].venueLatitude')" = 40.4168 ]
	[ "$(jqr '.[0].venueLongitude')" = -3.7038 ]
	[ "$(jqr '.[0].distanceKm')" = 0 ]
	[ "$(jqr '.[0].startTime')" = 09:30:00 ]
	[ "$(jqr '.[0].endTime')" = 11:00:00 ]
	[ "$(jqr '.[0].currency')" = EUR ]
	[ "$(jqr '.[0].eligiblePlayersNearby')" = 0 ]
	[ "$(jqr '.[1].startTime')" = 11:00:00 ]
	[ "$(jqr '.[1].endTime')" = 12:30:00 ]
	# exact money with two decimals, distance with three, as the body writes them
	[ "$(grep -oE '"price" ?: ?[0-9.]*' <<<"$HTTP_BODY" | sed 's/.*: *//' | sort -u)" = "$PRICE" ]
	[ "$(grep -oE '"distanceKm" ?: ?[0-9.]*' <<<"$HTTP_BODY" | sed 's/.*: *//' | sort -u)" = 0.000 ]
}

@test "the start time window includes both of its ends" {
	court=$(fixture_court "$(venue_at 0)")
	search 'startTimeFrom=09:30:00&startTimeTo=11:00:00'
	expect 200
	[ "$(jqr -c '[.[].startTime]')" = '["09:30:00","11:00:00"]' ]
	search 'startTimeFrom=08:00:00&startTimeTo=08:00:00'
	expect 200
	[ "$(jqr -c '[.[] | [.startTime, .endTime]]')" = '[["08:00:00","09:30:00"]]' ]
	search 'startTimeFrom=00:00:00&startTimeTo=23:59:59'
	expect 200
	[ "$(jqr -c '[.[].startTime]')" = '["08:00:00","09:30:00","11:00:00","12:30:00","14:00:00","15:30:00","17:00:00","18:30:00","20:00:00"]' ]
	search 'startTimeFrom=20:00:01&startTimeTo=23:59:59'
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "only venues within the radius are searched, nearest first, with the distance in km" {
	near=$(venue_at 0 ACTIVE Near)
	far=$(venue_at 0.05 ACTIVE Far)	# 5.56 km north
	c_near=$(fixture_court "$near")
	c_far=$(fixture_court "$far")
	search 'radiusKm=5&startTimeFrom=11:00:00&startTimeTo=11:00:00'
	expect 200
	[ "$(jqr -c '[.[].venueName]')" = '["Near"]' ]
	search 'radiusKm=6&startTimeFrom=09:30:00&startTimeTo=11:00:00'
	expect 200
	[ "$(jqr -c '[.[] | [.venueName, .startTime]]')" = '[["Near","09:30:00"],["Near","11:00:00"],["Far","09:30:00"],["Far","11:00:00"]]' ]
	[ "$(jqr '.[2].resourceId')" = "$c_far" ]
	[ "$(jqr '.[2].venueCity')" = "Far City" ]
	[ "$(jqr '.[2].venueLatitude')" = 40.4668 ]
	# great-circle distance within 1% of the known 5.56 km (0.05 degree of latitude)
	[ "$(jqr '(.[2].distanceKm - 5.56 | fabs) < 0.0556')" = true ]
	[[ "$(grep -oE '"distanceKm" ?: ?[0-9.]*' <<<"$HTTP_BODY" | tail -n 1 | sed 's/.*: *//')" =~ ^5\.[0-9]{3}$ ]]
}

@test "results are sorted by distance, then start time, then court" {
	venue=$(venue_at 0.02)
	c1=$(fixture_court "$venue")
	c2=$(fixture_court "$venue")
	c3=$(fixture_court "$(venue_at 0.01)")
	search 'startTimeFrom=09:30:00&startTimeTo=11:00:00'
	expect 200
	[ "$(jqr length)" = 6 ]
	[ "$(jqr -c '[.[] | [.distanceKm, .startTime, .resourceId]] | . == sort')" = true ]
	first=$(printf '%s\n' "$c1" "$c2" | sort | head -n 1)
	second=$(printf '%s\n' "$c1" "$c2" | sort | tail -n 1)
	[ "$(jqr -c '[.[].resourceId]')" = "[\"$c3\",\"$c3\",\"$first\",\"$second\",\"$first\",\"$second\"]" ]
}

@test "only courts whose slot length is the one asked are searched (90 minutes by default)" {
	venue=$(venue_at 0)
	c90=$(fixture_court "$venue" 90)
	c60=$(fixture_court "$venue" 60)
	search 'startTimeFrom=09:00:00&startTimeTo=10:00:00'
	expect 200
	[ "$(jqr -c '[.[] | [.resourceId, .startTime, .endTime]]')" = "[[\"$c90\",\"09:30:00\",\"11:00:00\"]]" ]
	search 'startTimeFrom=09:00:00&startTimeTo=10:00:00&slotDurationMinutes=60'
	expect 200
	[ "$(jqr -c '[.[] | [.resourceId, .startTime, .endTime]]')" = "[[\"$c60\",\"09:00:00\",\"10:00:00\"],[\"$c60\",\"10:00:00\",\"11:00:00\"]]" ]
	search 'startTimeFrom=09:00:00&startTimeTo=10:00:00&slotDurationMinutes=120'
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "the date decides the slots: a closed day or a past date has none" {
	court=$(fixture_court "$(venue_at 0)")
	dow=$(TZ=Europe/Madrid date -d '+3 days' +%u)
	sql "UPDATE resource_schedules SET opening_time = NULL, closing_time = NULL
	     WHERE resource_id = '$court' AND day_of_week = $dow"
	search 'startTimeFrom=08:00:00&startTimeTo=20:00:00'
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	D=$(local_date 4)
	search 'startTimeFrom=08:00:00&startTimeTo=20:00:00'
	expect 200
	[ "$(jqr length)" = 9 ]
	[ "$(jqr -c '[.[].resourceId] | unique')" = "[\"$court\"]" ]
	D=$(local_date -1)
	search 'startTimeFrom=00:00:00&startTimeTo=23:59:59'
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	D=2020-01-06
	search 'startTimeFrom=00:00:00&startTimeTo=23:59:59'
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "today only slots that have not started are offered" {
	fixture_court "$(venue_at 0)" >/dev/null
	D=$(local_date 0)
	before=$(TZ=Europe/Madrid date +%T)
	search 'startTimeFrom=00:00:00&startTimeTo=23:59:59'
	expect 200
	[ "$(jqr --arg t "$before" '[.[] | select(.startTime <= $t)] | length')" = 0 ]
}

@test "a slot held by a live match request is not offered, a lapsed payment hold's slot is" {
	court=$(fixture_court "$(venue_at 0)")
	hold "$court" 09:30 PENDING_PAYMENT "now() - interval '1 minute'"
	hold "$court" 11:00 OPEN
	hold "$court" 12:30 CANCELLED
	hold "$court" 14:00 PENDING_PAYMENT
	hold "$court" 15:30 MATCHED
	hold "$court" 17:00 CONFIRMED
	search 'startTimeFrom=08:00:00&startTimeTo=18:30:00'
	expect 200
	[ "$(jqr -c '[.[].startTime]')" = '["08:00:00","09:30:00","12:30:00","18:30:00"]' ]
}

@test "courts players cannot book are not searched" {
	fixture_court "$(venue_at 0.002)" 90 SUSPENDED >/dev/null
	fixture_court "$(venue_at 0.003)" 90 PENDING_APPROVAL >/dev/null
	fixture_court "$(venue_at 0.004 SUSPENDED)" >/dev/null
	fixture_court "$(venue_at 0.005 PENDING_APPROVAL)" >/dev/null
	fixture_court "$(venue_at 0.006 REJECTED)" >/dev/null
	unpriced=$(fixture_court "$(venue_at 0.007)")
	sql "DELETE FROM price_rules WHERE resource_id = '$unpriced'"
	ok=$(fixture_court "$(venue_at 0.008)")
	search 'startTimeFrom=11:00:00&startTimeTo=11:00:00'
	expect 200
	[ "$(jqr -c '[.[].resourceId]')" = "[\"$ok\"]" ]
}

@test "the defaults are those of the spec: 10 km, 90 minutes, TWO_VS_TWO, any skill" {
	fixture_court "$(venue_at 0.081 ACTIVE Nine)" >/dev/null	# 9.0 km
	fixture_court "$(venue_at 0.099 ACTIVE Eleven)" >/dev/null	# 11.0 km
	fixture_court "$(venue_at 0 ACTIVE Here)" 60 >/dev/null
	fixture_player "beginner-$RUN" BEGINNER 40.42 -3.70 >/dev/null
	fixture_player "pro-$RUN" PROFESSIONAL 40.42 -3.70 >/dev/null
	search 'startTimeFrom=11:00:00&startTimeTo=11:00:00'
	expect 200
	defaults=$HTTP_BODY
	[ "$(jqr -c '[.[] | [.venueName, .startTime, .eligiblePlayersNearby]]')" = '[["Nine","11:00:00",2]]' ]
	search 'startTimeFrom=11:00:00&startTimeTo=11:00:00&radiusKm=10&slotDurationMinutes=90&format=TWO_VS_TWO&skillLevel=ANY'
	expect 200
	[ "$HTTP_BODY" = "$defaults" ]
	# the format does not change which courts fit
	for f in ONE_VS_ONE AMERICANO; do
		search "startTimeFrom=11:00:00&startTimeTo=11:00:00&format=$f"
		expect 200
		[ "$HTTP_BODY" = "$defaults" ]
	done
	search 'startTimeFrom=11:00:00&startTimeTo=11:00:00&radiusKm=12'
	expect 200
	[ "$(jqr -c '[.[].venueName]')" = '["Nine","Eleven"]' ]
}

@test "eligiblePlayersNearby counts the players a match would invite, never the caller" {
	fixture_court "$(venue_at 0)" >/dev/null
	fixture_player "$ME" INTERMEDIATE 40.42 -3.70 >/dev/null
	fixture_player "ok-$RUN" INTERMEDIATE 40.42 -3.70 >/dev/null
	fixture_player "ok2-$RUN" INTERMEDIATE 40.45 -3.68 >/dev/null
	fixture_player "adv-$RUN" ADVANCED 40.41 -3.71 >/dev/null
	fixture_player "far-$RUN" INTERMEDIATE 40.8668 -3.7038 >/dev/null	# 50 km
	banned=$(fixture_player "banned-$RUN" INTERMEDIATE 40.42 -3.70)
	unbanned=$(fixture_player "unbanned-$RUN" INTERMEDIATE 40.42 -3.70)
	flaky=$(fixture_player "flaky-$RUN" INTERMEDIATE 40.42 -3.70)
	quiet=$(fixture_player "quiet-$RUN" INTERMEDIATE 40.42 -3.70)
	noskill=$(fixture_player "noskill-$RUN" INTERMEDIATE 40.42 -3.70)
	user_id "nohome-$RUN" >/dev/null
	sql "UPDATE players SET banned_until = now() + interval '10 days' WHERE user_id = '$banned';
	     UPDATE players SET banned_until = now() - interval '1 day' WHERE user_id = '$unbanned';
	     UPDATE players SET reliability_score = 49 WHERE user_id = '$flaky';
	     UPDATE players SET match_notifications = false WHERE user_id = '$quiet';
	     UPDATE players SET skill_level = NULL WHERE user_id = '$noskill';
	     INSERT INTO players (user_id, skill_level) VALUES ('$(user_id "nohome-$RUN")', 'INTERMEDIATE')"
	# ok, ok2, unbanned
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00&skillLevel=INTERMEDIATE'
	expect 200
	[ "$(jqr length)" = 2 ]
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[3]' ]
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00&skillLevel=ADVANCED'
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[1]' ]
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00&skillLevel=PROFESSIONAL'
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[0]' ]
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00'
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[4]' ]
	# the radius counts players too: the one 50 km away
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00&radiusKm=60&skillLevel=INTERMEDIATE'
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[4]' ]
	# someone else searching counts the first caller
	T=$(token "other-$RUN")
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00&skillLevel=INTERMEDIATE'
	[ "$(jqr -c '[.[].eligiblePlayersNearby] | unique')" = '[4]' ]
}

@test "a centre far from every venue finds nothing" {
	fixture_court "$(venue_at 0)" >/dev/null
	fixture_player "p-$RUN" BEGINNER 0.001 0.001 >/dev/null
	LAT=0 LNG=0
	search 'startTimeFrom=08:00:00&startTimeTo=20:00:00&radiusKm=100'
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "each missing required parameter is named" {
	all="lat=$LAT&lng=$LNG&date=$D&startTimeFrom=09:00:00&startTimeTo=10:00:00"
	for p in lat lng date startTimeFrom startTimeTo; do
		q=$(tr '&' '\n' <<<"$all" | grep -v "^$p=" | paste -sd'&')
		req GET "/api/match/search?$q" -t "$T"
		expect_problem 400 VALIDATION_FAILED "$p"
		[ "$(jqr '.errors | length')" = 1 ]
		[ "$(jqr '.errors[0].message')" = "is required" ]
		req GET "/api/match/search?$q&$p=" -t "$T"
		expect_problem 400 VALIDATION_FAILED "$p"
	done
	req GET /api/match/search -t "$T"
	expect_problem 400 VALIDATION_FAILED lat lng date startTimeFrom startTimeTo
	[ "$(jqr '.errors | length')" = 5 ]
}

@test "wrong parameter values are named" {
	all="lat=$LAT&lng=$LNG&date=$D&startTimeFrom=09:00:00&startTimeTo=10:00:00"
	for bad in lat=91 lat=-90.5 lat=north lng=180.1 lng=-181 radiusKm=0 radiusKm=-1 radiusKm=100.01 \
		radiusKm=ten slotDurationMinutes=14 slotDurationMinutes=241 slotDurationMinutes=90.5 \
		format=FIVE_A_SIDE format=two_vs_two skillLevel=EXPERT skillLevel=any date=2025-02-30 \
		date=tomorrow; do
		name=${bad%%=*}
		q=$(tr '&' '\n' <<<"$all" | grep -v "^$name=" | paste -sd'&')
		req GET "/api/match/search?$q&$bad" -t "$T"
		expect_problem 400 VALIDATION_FAILED "$name"
		[ "$(jqr '.errors | length')" = 1 ] || { echo "$bad: $HTTP_BODY" >&2; false; }
	done
	search 'startTimeFrom=25:00:00&startTimeTo=9:00'
	expect_problem 400 VALIDATION_FAILED startTimeFrom startTimeTo
	search 'startTimeFrom=12:00:00&startTimeTo=11:59:59'
	expect_problem 400 VALIDATION_FAILED startTimeTo
	[ "$(jqr '.errors[0].message')" = "must not be before startTimeFrom" ]
}

@test "the date may be at most 366 days ahead and the radius at most 100 km" {
	fixture_court "$(venue_at 0)" >/dev/null
	D=$(date -u -d '+367 days' +%F)
	search 'startTimeFrom=09:00:00&startTimeTo=10:00:00'
	expect_problem 400 VALIDATION_FAILED date
	D=$(date -u -d '+366 days' +%F)
	search 'startTimeFrom=09:00:00&startTimeTo=10:00:00&radiusKm=100'
	expect 200
	[ "$(jqr length)" = 1 ]
	search 'startTimeFrom=09:00:00&startTimeTo=10:00:00&radiusKm=0.5'
	expect 200
	[ "$(jqr length)" = 1 ]
}

@test "search needs a token" {
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$D&startTimeFrom=09:00:00&startTimeTo=10:00:00"
	expect_problem 401 UNAUTHORIZED
	req POST /api/match/search -t "$T" -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
}

@test "the venue radius filter of the search statement runs on venues_earth_idx" {
	expect_autovacuum_yield
	near=$(venue_at 0.01)
	court=$(fixture_court "$near")
	# a realistic table: two thousand venues with a court each, all far from Madrid
	owner=$(user_id "$OWNER")
	sql "INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude, timezone, status)
	     SELECT '$owner', 'Far ' || g, 'Street', 'City', 'Country', -40 + (g % 50) * 0.6,
	            110 + (g / 50) * 0.9, 'Australia/Sydney', 'ACTIVE'
	       FROM generate_series(1, 2000) g;
	     INSERT INTO resources (venue_id, name, type, slot_duration_minutes, status)
	     SELECT id, 'Court', 'PADEL_COURT', 90, 'ACTIVE' FROM venues WHERE name LIKE 'Far %';
	     ANALYZE venues; ANALYZE resources"
	# the statement cgi-bin/search.c sends runs the search with its own settings
	stmt=$(sed -n '/"SELECT \* FROM match_search_rows/,/)",$/p' "$COURTS_ROOT/cgi-bin/search.c" |
		sed -E 's/^[[:space:]]*"//; s/",?$//' | tr -d '\n')
	[[ "$stmt" == 'SELECT * FROM match_search_rows($1::float8, '*'$11::int)' ]]
	[ "$(sql "SELECT array_to_string(proconfig, ' ') FROM pg_proc WHERE proname = 'match_search_rows'")" = \
		"enable_bitmapscan=off" ]
	grep -q 'FROM search_slots(p_lat, p_lng, p_radius_km, p_date, p_from, p_to, p_duration, p_limit,' \
		<<<"$(sql "SELECT prosrc FROM pg_proc WHERE proname = 'match_search_rows'")"
	# which reads the kept free slots for a date near today and works them out court by court
	# for one further ahead (sql/areas/85_search.sql); either way, in the plans PL/pgSQL
	# really runs (custom ones, then generic ones from the sixth call of a session; auto_explain
	# shows the nested statements), venues come nearest first straight from the index (KNN),
	# so that the LIMIT stops there
	for day in "$(local_date 40)" "$D"; do
		[ "$(sql "SELECT count(*) FROM free_slot_dates WHERE booking_date = '$day' AND complete")" = \
		  "$([ "$day" = "$D" ] && echo 1 || echo 0)" ]
		args="('$LAT', '$LNG', '10', '$day', '09:00:00', '12:00:00', '90', 'ANY', '50', '$(user_id "$ME")', '50')"
		plans=$(sql "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
		             SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;
		             SELECT (SELECT count(*) FROM match_search_rows${args%\'50\')}50 + g - g))
		               FROM generate_series(1, 7) g" 2>&1)
		[ "$(grep -c 'Index Scan using venues_earth_idx' <<<"$plans")" -ge 7 ] || { echo "$plans" >&2; false; }
		# (earth_point is inlined: the order is its expression's distance to the centre)
		[ "$(grep -A3 'Index Scan using venues_earth_idx' <<<"$plans" |
			grep -c 'Order By: (((cube(cube(cube(.* <-> ')" -ge 7 ]
		# (the kept slots' statement is planned to stop there whatever the table sizes)
		[ "$day" != "$D" ] || [ "$(grep -c 'Incremental Sort' <<<"$plans")" -ge 7 ] || { echo "$plans" >&2; false; }
		! grep -q 'Seq Scan on venues' <<<"$plans" || { echo "$plans" >&2; false; }
	done
	# the eligible players are counted nearest first too, in the statement the wrapper really
	# runs (auto_explain shows the nested statements' plans), among two thousand homes far away
	fixture_player near1 INTERMEDIATE "$LAT" "$LNG" >/dev/null
	sql "INSERT INTO users (issuer, subject) SELECT 'https://far.example/', 'far-' || g
	       FROM generate_series(1, 2000) g ON CONFLICT DO NOTHING;
	     INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude)
	     SELECT u.id, u.subject, 'INTERMEDIATE', -40 + (g % 50) * 0.6, 110 + (g / 50) * 0.9
	       FROM generate_series(1, 2000) g
	       JOIN users u ON u.issuer = 'https://far.example/' AND u.subject = 'far-' || g;
	     ANALYZE players"
	plans=$(sql "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
	             SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;
	             SELECT count(*) FROM match_search_rows$args" 2>&1)
	grep -q 'Index Scan using players_home_earth_idx' <<<"$plans" || { echo "$plans" >&2; false; }
	grep -A3 'Index Scan using players_home_earth_idx' <<<"$plans" |
		grep -q 'Order By: (((cube(cube(cube(.* <-> '
	! grep -q 'Bitmap' <<<"$plans" || { echo "$plans" >&2; false; }
	# and the answer is still the one near court
	search 'startTimeFrom=09:00:00&startTimeTo=12:00:00'
	expect 200
	[ "$(jqr -c '[.[].resourceId] | unique')" = "[\"$court\"]" ]
}

@test "limit caps the results to the nearest slots, and must be between 1 and 200" {
	near=$(venue_at 0.01)
	far=$(venue_at 0.05)
	c_near=$(fixture_court "$near")
	c_far=$(fixture_court "$far")
	# each court has three slots starting 08:00-12:00 (08:00, 09:30, 11:00)
	search 'startTimeFrom=08:00:00&startTimeTo=12:00:00&limit=3'
	expect 200
	[ "$(jqr length)" = 3 ]
	[ "$(jqr -c '[.[].resourceId] | unique')" = "[\"$c_near\"]" ]
	search 'startTimeFrom=08:00:00&startTimeTo=12:00:00&limit=4'
	expect 200
	[ "$(jqr -c '[.[].resourceId]')" = "[\"$c_near\",\"$c_near\",\"$c_near\",\"$c_far\"]" ]
	for bad in 0 201 x; do
		search "startTimeFrom=09:00:00&startTimeTo=12:00:00&limit=$bad"
		expect_problem 400 VALIDATION_FAILED limit
	done
}

@test "match_search, the answer in one row for clients of the schema, is the service's answer" {
	near=$(venue_at 0.01 ACTIVE Near)
	far=$(venue_at 0.05 ACTIVE Far)
	fixture_court "$near" >/dev/null
	fixture_court "$far" 60 >/dev/null
	fixture_court "$far" >/dev/null
	fixture_player "p1-$RUN" INTERMEDIATE 40.42 -3.70 >/dev/null
	fixture_player "p2-$RUN" ADVANCED 40.42 -3.70 >/dev/null
	me=$(user_id "$ME")
	# match_search (sql/areas/85_search.sql) takes the arguments cgi-bin/search.c gives
	# match_search_rows
	answer() {	# answer FROM TO SKILL LIMIT: match_search's two columns, date_ok|results
		sql "SELECT date_ok, results FROM match_search($LAT, $LNG, 10, '$D', '$1', '$2', 90,
		     '$3', 50, '$me', $4)"
	}
	for q in '08:00:00 12:00:00 ANY 50' '09:00:00 20:00:00 INTERMEDIATE 50' \
		 '08:00:00 22:00:00 ADVANCED 4'; do
		read -r from to skill limit <<<"$q"
		search "startTimeFrom=$from&startTimeTo=$to&skillLevel=$skill&limit=$limit"
		expect 200
		[ "$(jqr length)" -ge 4 ]
		row=$(answer "$from" "$to" "$skill" "$limit")
		[ "${row%%|*}" = t ]
		# the same slots, in the same order, with the same keys in the same order and values
		[ "$(jq -c . <<<"${row#t|}")" = "$(jqr -c .)" ]
	done
	# money as the service writes it, two decimals
	[[ "${row#t|}" == *"\"price\" : $PRICE,"* ]]
	# no slot in the window: an empty array; a date too far ahead: date_ok false
	[ "$(answer 23:00:00 23:30:00 ANY 50)" = 't|[]' ]
	D=$(date -u -d '+367 days' +%F)
	[ "$(answer 08:00:00 12:00:00 ANY 50)" = 'f|[]' ]
}

@test "search_answer, the search a worker keeps, gives the service's rows, its validator and until when they hold" {
	near=$(venue_at 0.01 ACTIVE Near)
	far=$(venue_at 0.05 ACTIVE Far)
	c1=$(fixture_court "$near")
	fixture_court "$far" 60 >/dev/null
	c3=$(fixture_court "$far")
	fixture_player "p1-$RUN" INTERMEDIATE 40.42 -3.70 >/dev/null
	banned=$(fixture_player "p2-$RUN" ADVANCED 40.42 -3.70)
	me=$(user_id "$ME")
	T0=$(sql "SELECT now()")
	# rows FUNCTION FROM TO SKILL LIMIT NOW: the 15 columns of the service's rows, one a line
	rows() {
		sql "SELECT concat_ws('|', date_ok, eligible, resource_id, resource_name, resource_type,
		            venue_id, venue_name, venue_city, venue_latitude, venue_longitude, distance_km,
		            start_time, end_time, price, currency)
		       FROM $1($LAT, $LNG, 10, '$D', '$2', '$3', 90, '$4', 50, '$me', $5, '$6')"
	}
	# kept FROM TO SKILL LIMIT: "validator until" of search_answer at T0, the same on every row
	kept() {
		sql "SELECT DISTINCT coalesce(validator, '-') || ' ' || coalesce(valid_until::text, 'f')
		       FROM search_answer($LAT, $LNG, 10, '$D', '$1', '$2', 90, '$3', 50, '$me', $4, '$T0')"
	}
	# at US: the instant US microseconds after the epoch
	at() { sql "SELECT timestamptz 'epoch' + $1 * interval '1 microsecond'"; }
	# holds QUERY: whether the rows of QUERY are the same from T0 to just before until, and
	# differ just after it (every case below has a change right there)
	holds() {
		local k until now_rows
		k=$(kept "$@")
		until=${k#* }
		[ "$(wc -l <<<"$k")" = 1 ] && [ "$until" != f ] || { echo "kept: $k" >&2; return 1; }
		now_rows=$(rows search_answer "$@" "$T0")
		[ "$now_rows" = "$(rows match_search_rows "$@" "$T0")" ] || return 1
		[ "$(rows match_search_rows "$@" "$(at $((until - 1)))")" = "$now_rows" ] ||
			{ echo "changed before $until" >&2; return 1; }
		[ "$(rows match_search_rows "$@" "$(at $((until + 1)))")" != "$now_rows" ] ||
			{ echo "no change after $until" >&2; return 1; }
		UNTIL=$until
	}
	# the same rows in the same order, for several windows, skills and limits; a date that is
	# not kept has no validator
	for q in '08:00:00 12:00:00 ANY 50' '09:00:00 20:00:00 INTERMEDIATE 50' \
		 '08:00:00 22:00:00 ADVANCED 4' '23:00:00 23:30:00 ANY 50'; do
		read -r from to skill limit <<<"$q"
		[ "$(rows search_answer "$from" "$to" "$skill" "$limit" "$T0")" = \
		  "$(rows match_search_rows "$from" "$to" "$skill" "$limit" "$T0")" ]
		[[ $(kept "$from" "$to" "$skill" "$limit") =~ ^[0-9]+\.[0-9]+\ ([0-9]+|f)$ ]]
	done
	[ "$(rows search_answer 08:00:00 12:00:00 ANY 50 "$T0" | wc -l)" -ge 4 ]
	[ "$(D=$(local_date 40) rows search_answer 08:00:00 12:00:00 ANY 50 "$T0")" = \
	  "$(D=$(local_date 40) rows match_search_rows 08:00:00 12:00:00 ANY 50 "$T0")" ]
	[ "$(D=$(local_date 40) kept 08:00:00 12:00:00 ANY 50)" = '- f' ]
	# each of what time does to the rows, alone: a payment hold on a court the search goes
	# through lapses; a ban lapses, of a player the count of eligible players passed over;
	# the first slot enters the near club's notice (2 days); the far club's first slot enters
	# its booking window (2 days ahead)
	plus() { sql "SELECT epoch_us('$T0'::timestamptz + interval '$1')"; }
	first_slot_less() {
		sql "SELECT epoch_us(('$D'::date + time '08:00') AT TIME ZONE 'Europe/Madrid' - interval '$1')"
	}
	hold "$c1" 09:30:00 PENDING_PAYMENT "'$T0'::timestamptz + interval '20 minutes'"
	holds 08:00:00 12:00:00 ANY 50
	[ "$UNTIL" = "$(plus '20 minutes')" ]
	sql "DELETE FROM match_requests;
	     UPDATE players SET banned_until = '$T0'::timestamptz + interval '10 minutes'
	      WHERE user_id = '$banned'"
	holds 08:00:00 12:00:00 ANY 50
	[ "$UNTIL" = "$(plus '10 minutes')" ]
	sql "UPDATE players SET banned_until = NULL WHERE user_id = '$banned';
	     UPDATE venues SET min_notice_minutes = 2880 WHERE id = '$near'"
	holds 08:00:00 12:00:00 ANY 50
	[ "$UNTIL" = "$(first_slot_less '2880 minutes')" ]
	sql "UPDATE venues SET min_notice_minutes = NULL WHERE id = '$near';
	     UPDATE venues SET booking_window_days = 2 WHERE id = '$far'"
	holds 08:00:00 12:00:00 ANY 50
	[ "$UNTIL" = "$(first_slot_less '2 days')" ]
	# with its limit reached the search stops: a hold further on is not what ends the answer
	sql "UPDATE venues SET booking_window_days = NULL WHERE id = '$far'"
	hold "$c1" 09:30:00 PENDING_PAYMENT "'$T0'::timestamptz + interval '20 minutes'"
	hold "$c3" 11:00:00 PENDING_PAYMENT "'$T0'::timestamptz + interval '5 minutes'"
	holds 08:00:00 12:00:00 ANY 2
	[ "$UNTIL" = "$(plus '20 minutes')" ]
	holds 08:00:00 12:00:00 ANY 50
	[ "$UNTIL" = "$(plus '5 minutes')" ]
}

@test "a stamp that commits after a greater one of another cell still changes the search's validator" {
	# two clubs of two owners (an edit stamps its owner's list too), in two cells of the grid
	a=$(venue_at 0)
	b=$(fixture_venue "other-$RUN" ACTIVE 40.5068 "$LNG")
	[ "$(sql "SELECT count(DISTINCT search_cell(latitude)) FROM venues")" = 2 ]
	validator() { sql "SELECT search_validator($LAT, $LNG, 20, '$D')"; }
	# an owner's edit of one club, still open: its area's version is drawn
	held_open "UPDATE venues SET name = 'First' WHERE id = '$a'"
	# another owner's edit of the other club commits first, with a greater version
	sql "SET lock_timeout = '10s'; UPDATE venues SET name = 'Second' WHERE id = '$b'"
	before=$(validator)
	greatest=$(sql "SELECT max(version) FROM search_area_versions")
	held_commit
	# the first edit is now committed: the greatest version is the same, the validator is not
	[ "$(sql "SELECT max(version) FROM search_area_versions")" = "$greatest" ]
	[ "$(validator)" != "$before" ]
	[ "$(validator | cut -d. -f1)" -gt "$(cut -d. -f1 <<<"$before")" ]
}
