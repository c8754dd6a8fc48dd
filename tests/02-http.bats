#!/usr/bin/env bats
# Request handling every program shares (common/http.c): bodies, media types, size cap, path
# parameters, routing, trailing slashes, percent-decoding, query strings, request ids and
# what 5xx answers show. Exercised through real endpoints: POST /api/owner/venues for bodies,
# GET /api/venues for query strings and public paths.

load test_helper

NOWHERE=00000000-0000-4000-8000-000000000001
# one line, ASCII only: its length in bytes is ${#VENUE}
VENUE='{"name":"Club Norte","street":"Calle Sol 2","city":"Madrid","country":"Spain",'
VENUE+='"latitude":40.45,"longitude":-3.69}'

setup() {
	reset_db
	# users outlive reset_db (as in production): a subject of this test's own
	OWNER=owner-$BATS_TEST_NUMBER-$RANDOM
	TOK=$(token "$OWNER" OWNER)
}

teardown() {
	# the 500 test hides a table; never leave it hidden for the next test
	if [ "$(sql "SELECT to_regclass('venues_hidden') IS NOT NULL")" = t ]; then
		sql "ALTER TABLE venues_hidden RENAME TO venues"
	fi
}

venues_count() {
	sql "SELECT count(*) FROM venues"
}

# expect_request_id: the problem body names the request id the X-Request-Id header gives.
expect_request_id() {
	local id
	id=$(header X-Request-Id)
	[[ "$id" =~ ^[0-9a-f]{16}$ ]] || { echo "X-Request-Id '$id'" >&2; return 1; }
	[ "$(jqr .requestId)" = "$id" ] || { echo "requestId $(jqr .requestId) vs $id" >&2; return 1; }
}

# ---- bodies ---------------------------------------------------------------------------------

@test "a well-formed venue body is read and stored (the baseline for the body tests)" {
	req POST /api/owner/venues -t "$TOK" -d "$VENUE"
	expect 201
	[ "$(jqr .name)" = "Club Norte" ]
	[ "$(jqr .status)" = PENDING_APPROVAL ]
	[ "$(venues_count)" = 1 ]
}

@test "malformed JSON is 400 MALFORMED_JSON and nothing is written" {
	req POST /api/owner/venues -t "$TOK" -d '{"name":"Club Norte",'
	expect_problem 400 MALFORMED_JSON
	[ "$(jqr '.errors | length')" = 0 ]
	req POST /api/owner/venues -t "$TOK" -d '{name: "Club Norte"}'
	expect_problem 400 MALFORMED_JSON
	[ "$(venues_count)" = 0 ]
}

@test "text after the JSON object is 400 MALFORMED_JSON" {
	req POST /api/owner/venues -t "$TOK" -d "$VENUE x"
	expect_problem 400 MALFORMED_JSON
	req POST /api/owner/venues -t "$TOK" -d "$VENUE$VENUE"
	expect_problem 400 MALFORMED_JSON
	[ "$(venues_count)" = 0 ]
}

@test "white space around the JSON object is fine" {
	req POST /api/owner/venues -t "$TOK" -d $'\n  '"$VENUE"$'\n\t \n'
	expect 201
	[ "$(venues_count)" = 1 ]
}

@test "a NUL byte inside the body is 400 MALFORMED_JSON" {
	printf '%s\0{"x":1}' "$VENUE" >"$BATS_TEST_TMPDIR/nul.json"
	status=$(curl -s -o "$BATS_TEST_TMPDIR/out" -w '%{http_code}' -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary @"$BATS_TEST_TMPDIR/nul.json" \
		"$BASE_URL/api/owner/venues")
	[ "$status" = 400 ]
	[ "$(jq -r .code "$BATS_TEST_TMPDIR/out")" = MALFORMED_JSON ]
	[ "$(venues_count)" = 0 ]
}

@test "a JSON array body is 400: the body must be an object" {
	req POST /api/owner/venues -t "$TOK" -d "[$VENUE]"
	expect_problem 400 MALFORMED_JSON
	[[ "$(jqr .detail)" == *object* ]]
	req POST /api/owner/venues -t "$TOK" -d '"Club Norte"'
	expect_problem 400 MALFORMED_JSON
	req POST /api/owner/venues -t "$TOK" -d 'null'
	expect_problem 400 MALFORMED_JSON
	[ "$(venues_count)" = 0 ]
}

@test "Content-Type text/plain is 415 UNSUPPORTED_MEDIA_TYPE even for a JSON body" {
	req POST /api/owner/venues -t "$TOK" -d "$VENUE" -H 'Content-Type: text/plain'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	req POST /api/owner/venues -t "$TOK" -d "$VENUE" \
		-H 'Content-Type: application/x-www-form-urlencoded'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	[ "$(venues_count)" = 0 ]
}

@test "a body without Content-Type is 415 UNSUPPORTED_MEDIA_TYPE" {
	req POST /api/owner/venues -t "$TOK" -d "$VENUE" -H 'Content-Type:'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	[ "$(venues_count)" = 0 ]
}

@test "application/json with a charset parameter, in any case, is accepted" {
	req POST /api/owner/venues -t "$TOK" -d "$VENUE" -H 'Content-Type: Application/JSON; charset=utf-8'
	expect 201
	[ "$(venues_count)" = 1 ]
}

@test "a missing body is 400 BODY_REQUIRED" {
	req POST /api/owner/venues -t "$TOK" -H 'Content-Type: application/json'
	expect_problem 400 BODY_REQUIRED
	req POST /api/owner/venues -t "$TOK" -d ''
	expect_problem 400 BODY_REQUIRED
	[ "$(venues_count)" = 0 ]
}

@test "a body of 70,000 bytes is 413 BODY_TOO_LARGE and nothing is written" {
	pad=$(head -c $((70000 - ${#VENUE})) /dev/zero | tr '\0' ' ')
	body="$VENUE$pad"
	[ ${#body} = 70000 ]
	req POST /api/owner/venues -t "$TOK" -d "$body"
	expect_problem 413 BODY_TOO_LARGE
	expect_request_id
	[ "$(venues_count)" = 0 ]
}

@test "a body of exactly 65,536 bytes is accepted" {
	pad=$(head -c $((65536 - ${#VENUE})) /dev/zero | tr '\0' ' ')
	body="$VENUE$pad"
	[ ${#body} = 65536 ]
	req POST /api/owner/venues -t "$TOK" -d "$body"
	expect 201
	[ "$(venues_count)" = 1 ]
	pad=$(head -c $((65537 - ${#VENUE})) /dev/zero | tr '\0' ' ')
	req POST /api/owner/venues -t "$TOK" -d "$VENUE$pad"
	expect_problem 413 BODY_TOO_LARGE
	[ "$(venues_count)" = 1 ]
}

@test "a body of 200 KB is the program's problem+json 413, in both modes" {
	# mod_fcgid reads the whole body first: its FcgidMaxRequestLen must not cut in before
	head -c 200000 /dev/zero | tr '\0' ' ' >"$BATS_TEST_TMPDIR/big.json"
	status=$(curl -s -o "$BATS_TEST_TMPDIR/out" -w '%{http_code} %{content_type}' \
		-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
		--data-binary @"$BATS_TEST_TMPDIR/big.json" "$BASE_URL/api/owner/venues") || true
	[ "$status" = "413 application/problem+json" ] || { echo "got $status" >&2; return 1; }
	[ "$(jq -r .code "$BATS_TEST_TMPDIR/out")" = BODY_TOO_LARGE ]
	[ "$(venues_count)" = 0 ]
}

@test "a body of 2 MB is refused with 413, not a dropped connection" {
	head -c 2000000 /dev/zero | tr '\0' ' ' >"$BATS_TEST_TMPDIR/big.json"
	status=$(curl -s -o "$BATS_TEST_TMPDIR/out" -w '%{http_code}' -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary @"$BATS_TEST_TMPDIR/big.json" \
		"$BASE_URL/api/owner/venues") || true
	[ "$status" = 413 ] || { echo "got HTTP '$status' (000: connection dropped)" >&2; return 1; }
	[ "$(venues_count)" = 0 ]
}

@test "answers name no request header in Vary: the size check reads Content-Length unseen" {
	# httpd.conf refuses a body over 1 MiB by its Content-Length before any program runs;
	# read plainly, mod_rewrite would name that header in every answer's Vary
	local path
	for path in /actuator/health /api/venues; do
		req GET "$path"
		expect 200
		[ -z "$(header Vary)" ] || { echo "$path: Vary: $(header Vary)" >&2; return 1; }
	done
	req POST /api/owner/venues -t "$TOK" -d "$VENUE"
	expect 201
	[ -z "$(header Vary)" ] || { echo "POST: Vary: $(header Vary)" >&2; return 1; }
	req GET /api/owner/venues -t "$TOK"
	expect 200
	[ -z "$(header Vary)" ] || { echo "owner list: Vary: $(header Vary)" >&2; return 1; }
}

@test "a body sent to a route that takes none is ignored" {
	req PATCH /api/owner/venues/$NOWHERE/suspend -t "$TOK" -d 'not json' -H 'Content-Type: text/plain'
	expect_problem 404 NOT_FOUND
}

@test "the size cap is checked before the token" {
	pad=$(head -c 70000 /dev/zero | tr '\0' ' ')
	req POST /api/owner/venues -d "$VENUE$pad"
	expect_problem 413 BODY_TOO_LARGE
}

@test "the token is checked before the body" {
	req POST /api/owner/venues -d '{"name":' -H 'Content-Type: text/plain'
	expect_problem 401 UNAUTHORIZED
}

# ---- path parameters and routing ------------------------------------------------------------

@test "a bad UUID in a path is 400 VALIDATION_FAILED naming the parameter" {
	req PUT /api/owner/venues/not-a-uuid -t "$TOK" -d "$VENUE"
	expect_problem 400 VALIDATION_FAILED venueId
	[ "$(jqr '.errors | length')" = 1 ]
	[ "$(jqr '.errors[0].message')" = "must be a UUID" ]
	req GET /api/venues/12345678-1234-1234-1234-12345678901
	expect_problem 400 VALIDATION_FAILED venueId
	req GET /api/resources/zzzzzzzz-1234-1234-1234-123456789012/slots?date=2030-01-01
	expect_problem 400 VALIDATION_FAILED id
	[ "$(venues_count)" = 0 ]
}

@test "two bad path parameters are both named" {
	req DELETE /api/owner/venues/x/images/y -t "$TOK"
	expect_problem 400 VALIDATION_FAILED venueId imageId
	[ "$(jqr '.errors | length')" = 2 ]
}

@test "a bad date in a path is 400 naming the parameter, and saying which way it is bad" {
	req DELETE /api/owner/venues/$NOWHERE/holidays/2023-02-29 -t "$TOK"
	expect_problem 400 VALIDATION_FAILED date
	[ "$(jqr '.errors[0].message')" = "is not a date on the calendar" ]
	req DELETE /api/owner/venues/$NOWHERE/holidays/2023-2-28 -t "$TOK"
	expect_problem 400 VALIDATION_FAILED date
	[ "$(jqr '.errors[0].message')" = "must be a date YYYY-MM-DD" ]
	# the same in a body (of a venue of the caller's: who may act on a venue is settled
	# before its body is read, and a venue of nobody's is 404) and in a query
	mine=$(fixture_venue "$OWNER")
	req POST /api/owner/venues/$mine/holidays -t "$TOK" -d '{"date":"2026-02-30","name":"x"}'
	expect_problem 400 VALIDATION_FAILED date
	[ "$(jqr '.errors[0].message')" = "is not a date on the calendar" ]
	req GET "/api/resources/$NOWHERE/slots?date=2026-04-31"
	expect_problem 400 VALIDATION_FAILED date
	[ "$(jqr '.errors[0].message')" = "is not a date on the calendar" ]
}

@test "an upper-case UUID in a path is accepted" {
	id=$(fixture_venue "$OWNER")
	req GET "/api/venues/${id^^}"
	expect 200
	[ "$(jqr .id)" = "$id" ]
}

@test "an unknown path is a problem+json 404 from every program" {
	for path in /api /api/owner /api/owner/nothing /api/owner/venues/$NOWHERE/nothing \
		/api/venues/$NOWHERE/nothing /api/match/requests/$NOWHERE/nothing/more \
		/api/match/nothing /actuator/nothing; do
		req GET "$path" -t "$TOK"
		expect_problem 404 NOT_FOUND || { echo "path $path" >&2; return 1; }
		[ "$(jqr .instance)" = "$path" ]
		expect_request_id
	done
}

@test "a wrong method is 405 METHOD_NOT_ALLOWED with Allow listing the methods" {
	req DELETE /api/owner/venues -t "$TOK"
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = "GET, POST" ]
	req PATCH /api/owner/venues/$NOWHERE -t "$TOK"
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = PUT ]
	req GET /api/owner/venues/$NOWHERE/suspend -t "$TOK"
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = PATCH ]
	req POST /api/venues -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = GET ]
	req PUT /api/match/requests/$NOWHERE -t "$TOK" -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = "GET, DELETE" ]
	[ "$(venues_count)" = 0 ]
}

@test "a trailing slash is accepted" {
	id=$(fixture_venue "$OWNER")
	req GET /api/owner/venues/ -t "$TOK"
	expect 200
	[ "$(jqr 'length')" = 1 ]
	[ "$(jqr '.[0].id')" = "$id" ]
	req GET "/api/venues/$id/"
	expect 200
	[ "$(jqr .id)" = "$id" ]
	req POST /api/owner/venues/ -t "$TOK" -d "$VENUE"
	expect 201
	[ "$(venues_count)" = 2 ]
}

@test "percent-encoded path segments are decoded" {
	id=$(fixture_venue "$OWNER")
	req GET "/api/venues/${id//-/%2D}"
	expect 200
	[ "$(jqr .id)" = "$id" ]
	req GET /api/own%65r/v%65nues -t "$TOK"
	expect 200
	[ "$(jqr '.[0].id')" = "$id" ]
}

# ---- query strings --------------------------------------------------------------------------

@test "query names and values are percent-decoded" {
	id=$(fixture_venue "$OWNER" ACTIVE 40.4168 -3.7038)
	req GET '/api/venues?l%61t=40%2E4168&lng=-3.7038&radius%4Bm=1%30'
	expect 200
	[ "$(jqr 'length')" = 1 ]
	[ "$(jqr '.[0].id')" = "$id" ]
	[ "$(jqr '.[0].distanceKm')" = 0 ]
}

@test "'+' in a query value is a space, '%2B' a plus sign" {
	fixture_venue "$OWNER" ACTIVE 40.4168 -3.7038 >/dev/null
	# ' 5' is not a number; '+5' is
	req GET '/api/venues?lat=40.4168&lng=-3.7038&radiusKm=+5'
	expect_problem 400 VALIDATION_FAILED radiusKm
	[ "$(jqr '.errors[0].message')" = "must be a number" ]
	req GET '/api/venues?lat=40.4168&lng=-3.7038&radiusKm=%2B5'
	expect 200
	[ "$(jqr 'length')" = 1 ]
}

@test "'%20' in a query value is a space" {
	req GET '/api/venues?lat=40.4168&lng=-3.7038&radiusKm=5%20'
	expect_problem 400 VALIDATION_FAILED radiusKm
	req GET '/api/venues?lat=40.4168&lng=-3.7038&radiusKm=5'
	expect 200
}

@test "percent-encoded colons in a time query are decoded" {
	q="lat=40.4168&lng=-3.7038&date=$(local_date 1)&startTimeTo=22:00:00"
	req GET "/api/match/search?$q&startTimeFrom=08%3A00%3A00" -t "$TOK"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	req GET "/api/match/search?$q&startTimeFrom=08+00+00" -t "$TOK"
	expect_problem 400 VALIDATION_FAILED startTimeFrom
}

# ---- request ids and errors -----------------------------------------------------------------

@test "every answer carries an X-Request-Id that problem bodies repeat" {
	req GET /api/venues
	expect 200
	ok_id=$(header X-Request-Id)
	[[ "$ok_id" =~ ^[0-9a-f]{16}$ ]]
	req GET /api/owner/venues
	expect_problem 401 UNAUTHORIZED
	expect_request_id
	req POST /api/owner/venues -t "$TOK" -d '[1]'
	expect_problem 400 MALFORMED_JSON
	expect_request_id
	req POST /api/owner/venues -t "$TOK" -d "$VENUE" -H 'Content-Type: text/plain'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	expect_request_id
	req DELETE /api/venues
	expect_problem 405 METHOD_NOT_ALLOWED
	expect_request_id
	req POST /api/owner/venues -t "$TOK" -d '{"name":" "}'
	expect_problem 400 VALIDATION_FAILED name street city country latitude longitude
	expect_request_id
	[ "$(header X-Request-Id)" != "$ok_id" ]
}

@test "request ids differ between requests" {
	ids=()
	for _ in 1 2 3 4 5; do
		req GET /api/venues
		ids+=("$(header X-Request-Id)")
	done
	[ "$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)" = 5 ]
}

@test "a 500 shows the request id and nothing internal; the cause is in the log" {
	expect_autovacuum_yield
	expect_log apache 'public\[[0-9]+\] req=[0-9a-f]+ error: query failed 42P01: (ERROR:  )?relation "venues" does not exist'
	expect_log postgres 'ERROR:  relation "venues" does not exist'
	sql "ALTER TABLE venues RENAME TO venues_hidden"
	req GET /api/venues
	expect_problem 500 INTERNAL_ERROR
	expect_request_id
	id=$(header X-Request-Id)
	run grep -iE 'venues_hidden|relation|select|sql|postgres|does not exist|ERROR:' <<<"$HTTP_BODY"
	[ "$status" -ne 0 ]
	[ "$(jqr '.errors | length')" = 0 ]
	sql "ALTER TABLE venues_hidden RENAME TO venues"
	log="$COURTS_STATE/apache/logs/error.log"
	deadline=$((SECONDS + 10))
	until grep -q "req=$id .*42P01" "$log"; do
		[ $SECONDS -lt $deadline ] || { echo "no log line for $id" >&2; return 1; }
		sleep 0.1
	done
	# the same program answers again once the table is back
	req GET /api/venues
	expect 200
}

@test "a 503 when the database is unreachable shows nothing internal" {
	expect_log apache 'req=[0-9a-f]+ error: database (unavailable|connect failed).*/nowhere/'
	url=$(extra_apache nodb-http \
		DATABASE_URL="host=$COURTS_STATE/nowhere port=1 dbname=x connect_timeout=2")
	req GET /api/venues -b "$url"
	expect_problem 503 DATABASE_UNAVAILABLE
	expect_request_id
	run grep -iE 'nowhere|host=|port|socket|connect|postgres|libpq' <<<"$HTTP_BODY"
	[ "$status" -ne 0 ]
	req GET /api/owner/venues -b "$url" -t "$TOK"
	expect_problem 503 DATABASE_UNAVAILABLE
	expect_request_id
}
