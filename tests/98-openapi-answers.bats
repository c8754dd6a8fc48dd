#!/usr/bin/env bats
# Every answer the suite received, checked against the API description: req() of
# test_helper.bash keeps each one in $COURTS_STATE/answers, and this file, which runs after
# every other one that makes requests (99-logs makes none), checks them all with
# openapi/check-responses.mjs. So each test of the suite is a test of the contract too: a
# status the document does not declare for the route, or a body that does not hold its
# schema, fails here with the test, the route, the status and the schema path.

load test_helper

check() {
	node "$COURTS_ROOT/openapi/check-responses.mjs" "$COURTS_BUILD/openapi/openapi.json" "$1"
}

# fake_answer DIR METHOD TARGET STATUS TYPE BODY: one answer in the layout req_keep writes
fake_answer() {
	mkdir -p "$1"
	printf '%s\n%s\n%s\n%s\n%s\n%s\n%s' "$2" "$3" "$BASE_URL" "$4" "$5" "a made-up test" "$6" \
		>"$1/$RANDOM$RANDOM"
}

@test "the check refuses an answer whose status, type or body the document does not declare" {
	local d=$BATS_TEST_TMPDIR/answers venue=3f1c2b8e-6a0f-4d7e-9b1a-2c4d5e6f7a8b
	fake_answer "$d" GET "/api/venues/$venue" 200 application/json \
		'{"id":"'$venue'","name":"Club"}'
	run check "$d"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -qF "GET /api/venues/{venueId} 200: body fails the schema at /: must have required property 'ownerId'" <<<"$output"
	grep -qF '(schema #/components/schemas/Venue/required)' <<<"$output"
	grep -q 'in test: a made-up test' <<<"$output"

	rm -rf "$d"
	fake_answer "$d" DELETE "/api/venues/$venue" 204 '' ''
	fake_answer "$d" GET "/api/match/search?lat=1" 418 application/problem+json '{}'
	fake_answer "$d" GET /actuator/info 200 text/html '<p>hi</p>'
	run check "$d"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -qF "DELETE /api/venues/{venueId} (method not served) 204: status not declared" <<<"$output"
	grep -qF "GET /api/match/search 418: status not declared" <<<"$output"
	grep -qF "GET /actuator/info 200: Content-Type text/html not declared" <<<"$output"
}

@test "the check takes the answers the document declares, Apache's own and the test-only route's" {
	local d=$BATS_TEST_TMPDIR/answers
	req GET /actuator/health
	fake_answer "$d" GET /actuator/health "$HTTP_STATUS" "$HTTP_TYPE" "$HTTP_BODY"
	req GET /api/match/requests/my
	fake_answer "$d" GET /api/match/requests/my "$HTTP_STATUS" "$HTTP_TYPE" "$HTTP_BODY"
	req PATCH /api/venues
	fake_answer "$d" PATCH /api/venues "$HTTP_STATUS" "$HTTP_TYPE" "$HTTP_BODY"
	req GET /api/no/such/thing
	fake_answer "$d" GET /api/no/such/thing "$HTTP_STATUS" "$HTTP_TYPE" "$HTTP_BODY"
	req GET /courts-test/status/502
	fake_answer "$d" GET /courts-test/status/502 "$HTTP_STATUS" "$HTTP_TYPE" "$HTTP_BODY"
	run check "$d"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '# 5 answers checked against the document: 2 of routes' <<<"$output"
	grep -q '1 of a method not served, 1 of no route, 1 of the test-only route' <<<"$output"
}

@test "every answer the suite received is as the API description declares" {
	local n
	n=$(find "$COURTS_STATE/answers" -type f 2>/dev/null | wc -l)
	echo "# $n answers kept by this run of the suite" >&3
	[ "$n" -gt 0 ]
	run check "$COURTS_STATE/answers"
	echo "$output"
	echo "$output" | tail -n 1 >&3
	[ "$status" -eq 0 ]
}
