#!/usr/bin/env bats
# Idempotency-Key: a write repeated with the same key and request returns the first answer
# and does the work once; another request under the same key is 422; a failed write stores
# nothing; the work and the stored answer commit together, so a client whose connection died
# after the commit gets the original answer on retry.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
	DAY=$(weekday_date 4)
}

teardown() {
	sql "DROP TRIGGER IF EXISTS idem_slow_commit ON idempotency_keys;
	     DROP FUNCTION IF EXISTS idem_slow_commit();
	     DROP TABLE IF EXISTS idem_release" >/dev/null 2>&1 || true
}

create_body() {
	echo "{\"resourceId\":\"$COURT\",\"bookingDate\":\"$DAY\",\"startTime\":\"${1:-09:30:00}\",
	      \"slotDurationMinutes\":90,\"format\":\"TWO_VS_TWO\",\"skillLevel\":\"INTERMEDIATE\",
	      \"searchLat\":40.42,\"searchLng\":-3.70}"
}

@test "a create repeated with the same key answers the first 201 again and books once" {
	req POST /api/match/requests -t "$TOKEN" -H 'Idempotency-Key: create-1' -d "$(create_body)"
	expect 201
	first=$HTTP_BODY
	[ -z "$(header Idempotent-Replayed)" ]
	req POST /api/match/requests -t "$TOKEN" -H 'Idempotency-Key: create-1' -d "$(create_body)"
	expect 201
	[ "$HTTP_BODY" = "$first" ]
	[ "$(header Idempotent-Replayed)" = true ]
	[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments")" = 1 ]
	[ "$(sql "SELECT status || ' ' || content_type FROM idempotency_keys WHERE key = 'create-1'")" = "201 application/json" ]
	# without a key, the same body is a new request: the slot is taken now
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect_problem 409 SLOT_TAKEN
}

@test "the same key with another request is 422 and does nothing" {
	req POST /api/match/requests -t "$TOKEN" -H 'Idempotency-Key: k' -d "$(create_body 09:30:00)"
	expect 201
	req POST /api/match/requests -t "$TOKEN" -H 'Idempotency-Key: k' -d "$(create_body 12:30:00)"
	expect_problem 422 IDEMPOTENCY_KEY_REUSED
	[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]
	# the key is the caller's: another player may use the same text
	fixture_player ana INTERMEDIATE 40.42 -3.70 >/dev/null
	req POST /api/match/requests -t "$(token ana)" -H 'Idempotency-Key: k' -d "$(create_body 12:30:00)"
	expect 201
	[ "$(sql "SELECT count(*) FROM match_requests")" = 2 ]
}

@test "a refused write stores no answer, so its repeat runs again" {
	M=$(sql_match "$ORG" OPEN '30 hours')
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_B
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)" -H 'Idempotency-Key: leave-1'
	expect_problem 409 LEAVE_TOO_LATE
	[ "$(sql "SELECT count(*) FROM idempotency_keys")" = 0 ]
	# the same key once the rule allows it (the match moved further away)
	sql "UPDATE match_requests SET starts_at = starts_at + interval '3 days',
	         ends_at = ends_at + interval '3 days'" >/dev/null
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)" -H 'Idempotency-Key: leave-1'
	expect 204 -
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)" -H 'Idempotency-Key: leave-1'
	expect 204 -
	[ "$(header Idempotent-Replayed)" = true ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 1 ]
}

@test "payment, joins and owner creates replay their first answer" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	M=$(jqr .id)
	req POST "/api/match/requests/$M/confirm-payment" -t "$TOKEN" -H 'Idempotency-Key: pay'
	expect 200
	paid=$HTTP_BODY
	req POST "/api/match/requests/$M/confirm-payment" -t "$TOKEN" -H 'Idempotency-Key: pay'
	expect 200
	[ "$HTTP_BODY" = "$paid" ]
	[ "$(sql "SELECT count(*) FROM match_status_changes WHERE event = 'PAY'")" = 1 ]

	fixture_player ben INTERMEDIATE 40.42 -3.70 >/dev/null
	link=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	for i in 1 2; do
		req POST "/api/match/join/$link" -t "$(token ben)" -H 'Idempotency-Key: join' \
			-d '{"team":"TEAM_B"}'
		expect 200
	done
	[ "$(header Idempotent-Replayed)" = true ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_at IS NULL")" = 2 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'PAYMENT' AND status = 'PAID'")" = 2 ]

	owner=$(token owner1 OWNER)
	for i in 1 2; do
		req POST /api/owner/venues -t "$owner" -H 'Idempotency-Key: venue-1' \
			-d '{"name":"Club Luna","street":"Calle 2","city":"Madrid","country":"Spain","latitude":40.4,"longitude":-3.7}'
		expect 201
	done
	[ "$(sql "SELECT count(*) FROM venues WHERE name = 'Club Luna'")" = 1 ]
}

@test "a key that is empty, too long or not visible ASCII is 400" {
	long=$(printf 'k%.0s' $(seq 1 256))
	req POST /api/match/requests -t "$TOKEN" -H "Idempotency-Key: $long" -d "$(create_body)"
	expect_problem 400 VALIDATION_FAILED Idempotency-Key
	req POST /api/match/requests -t "$TOKEN" -H "Idempotency-Key: two words" -d "$(create_body)"
	expect_problem 400 VALIDATION_FAILED Idempotency-Key
	[ "$(sql "SELECT count(*) FROM match_requests")" = 0 ]
}

# descendants PID: every process below PID.
descendants() {
	local kids k
	kids=$(ps -eo pid=,ppid= | awk -v p="$1" '$2 == p { print $1 }')
	for k in $kids; do
		echo "$k"
		descendants "$k"
	done
}

# this suite's processes running the requests program (never another suite's)
requests_programs() {
	local roots r
	roots="$(cat "$COURTS_STATE/apache/run/httpd.pid") $(cat "$COURTS_STATE"/apache/run/pool/*.pid 2>/dev/null)"
	for r in $roots; do
		descendants "$r"
	done | while read -r pid; do
		grep -qa 'requests' "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
	done | sort -u
}

@test "a program killed after the commit: the retry gets the original answer, nothing twice" {
	# commits of answers stall until the test has killed the program that waits for one
	# (a row in idem_release), however long finding it takes on a busy machine; at most 60 s
	sql "CREATE TABLE idem_release (); GRANT SELECT ON idem_release TO courts;
	     CREATE FUNCTION idem_slow_commit() RETURNS trigger LANGUAGE plpgsql AS \$\$
	     BEGIN
	         FOR i IN 1..1200 LOOP
	             EXIT WHEN EXISTS (SELECT FROM idem_release);
	             PERFORM pg_sleep(0.05);
	         END LOOP;
	         RETURN NULL;
	     END \$\$;
	     CREATE CONSTRAINT TRIGGER idem_slow_commit AFTER UPDATE ON idempotency_keys
	         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION idem_slow_commit()" >/dev/null
	curl -s -o "$BATS_TEST_TMPDIR/first" -w '%{http_code}' -X POST "$BASE_URL/api/match/requests" \
		-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
		-H 'Idempotency-Key: crash-1' --data-binary "$(create_body)" >"$BATS_TEST_TMPDIR/first.status" &
	client=$!
	deadline=$((SECONDS + 10))
	until [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")" = 1 ]; do
		[ $SECONDS -lt $deadline ] || { echo "the commit never stalled" >&2; return 1; }
		sleep 0.05
	done
	# what the server says of a program killed mid-request, in each mode
	expect_log apache 'End of script output before headers: requests\.cgi|AH01067: Failed to read FastCGI header|AH01075: Error dispatching request|mod_fcgid: error reading data|mod_fcgid: ap_pass_brigade failed'
	expect_log postgres 'FATAL:  connection to client lost|could not send data to client'
	pids=$(requests_programs)
	[ -n "$pids" ]
	kill -KILL $pids
	wait "$client" || true
	# the client never saw a 201
	[ "$(cat "$BATS_TEST_TMPDIR/first.status")" != 201 ]
	sql "INSERT INTO idem_release DEFAULT VALUES" >/dev/null
	deadline=$((SECONDS + 20))
	until [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")" = 0 ]; do
		[ $SECONDS -lt $deadline ] || { echo "the commit did not end" >&2; return 1; }
		sleep 0.05
	done
	teardown
	[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]

	# the retry, once a program serves again, answers what was committed
	deadline=$((SECONDS + 10))
	while :; do
		req POST /api/match/requests -t "$TOKEN" -H 'Idempotency-Key: crash-1' -d "$(create_body)"
		[ "$HTTP_STATUS" = 201 ] || [ $SECONDS -ge $deadline ] && break
		sleep 0.2
	done
	expect 201
	[ "$(header Idempotent-Replayed)" = true ]
	[ "$(jqr .id)" = "$(sql "SELECT id FROM match_requests")" ]
	[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments")" = 1 ]
}

@test "the sweeper forgets keys older than 24 hours and keeps younger ones" {
	ORG_ID=$(user_id org)
	sql "INSERT INTO idempotency_keys (user_id, key, request_hash, status, created_at)
	     VALUES ('$ORG_ID', 'old', 'h', 204, now() - interval '25 hours'),
	            ('$ORG_ID', 'young', 'h', 204, now() - interval '23 hours')" >/dev/null
	run "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ $output == *" idempotency_keys_expired=1 "* ]]
	[ "$(sql "SELECT string_agg(key, ' ') FROM idempotency_keys")" = young ]
}
