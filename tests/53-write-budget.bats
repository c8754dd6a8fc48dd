#!/usr/bin/env bats
# The write budget: each player or owner may write WRITE_BUDGET_BURST times in a row and then
# WRITE_BUDGET_PER_MINUTE times a minute; past it, 429 problem+json with Retry-After. The
# bucket lives in the database, so every run mode (and every worker) sees the same one.

load test_helper

setup_file() {
	# the shipped defaults, and a server whose bucket hardly refills, for exact counts
	DEFAULTS=$(extra_apache budget WRITE_BUDGET_PER_MINUTE=60 WRITE_BUDGET_BURST=20)
	SLOW=$(extra_apache budget-slow WRITE_BUDGET_PER_MINUTE=1 WRITE_BUDGET_BURST=20)
	export DEFAULTS SLOW
}

setup() {
	reset_db
}

profile() {
	echo '{"displayName":"Ana","skillLevel":"INTERMEDIATE","homeLatitude":40.42,"homeLongitude":-3.70,"matchNotifications":true}'
}

@test "with the defaults, twenty writes in a row pass and then 429 with Retry-After; the bucket refills" {
	ana=$(token ana)
	start=$SECONDS
	n=0
	while [ $n -lt 200 ]; do
		req PUT /api/players/me -t "$ana" -d "$(profile)" -b "$DEFAULTS"
		[ "$HTTP_STATUS" = 200 ] || break
		n=$((n + 1))
	done
	expect_problem 429 RATE_LIMITED
	# the burst, plus what refilled at one a second while the writes went on
	[ $n -ge 20 ] && [ $n -le $((20 + SECONDS - start + 1)) ] || { echo "passed: $n" >&2; return 1; }
	[ "$(header Retry-After)" = 1 ]
	# reading is not writing
	req GET /api/players/me -t "$ana" -b "$DEFAULTS"
	expect 200
	# another caller has a budget of its own
	req PUT /api/players/me -t "$(token ben)" -d "$(profile)" -b "$DEFAULTS"
	expect 200
	# after Retry-After, one more write passes
	deadline=$((SECONDS + 5))
	while :; do
		req PUT /api/players/me -t "$ana" -d "$(profile)" -b "$DEFAULTS"
		[ "$HTTP_STATUS" = 429 ] && [ $SECONDS -lt $deadline ] || break
		sleep 0.2
	done
	expect 200
}

@test "administrators are exempt" {
	admin=$(token root ADMIN)
	for i in $(seq 25); do
		req PATCH "/api/admin/venues/00000000-0000-4000-8000-000000000000/approve" -t "$admin" -b "$SLOW"
		expect_problem 404 NOT_FOUND
	done
}

@test "thirty concurrent writes by one caller: exactly the burst passes, whatever the worker" {
	carla=$(token carla)
	for i in $(seq 30); do
		curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $carla" \
			-H 'Content-Type: application/json' --data-binary "$(profile)" \
			"$SLOW/api/players/me" >"$BATS_TEST_TMPDIR/status.$i" &
	done
	wait
	got=$(for f in "$BATS_TEST_TMPDIR"/status.*; do echo "$(cat "$f")"; done | LC_ALL=C sort |
		uniq -c | awk '{print $1 " " $2}' | paste -sd ,)
	[ "$got" = "20 200,10 429" ] || { echo "answers: $got" >&2; return 1; }
	# the refusal says how long: a minute for one write a minute
	req PUT /api/players/me -t "$carla" -d "$(profile)" -b "$SLOW"
	expect_problem 429 RATE_LIMITED
	[ "$(header Retry-After)" -ge 30 ] && [ "$(header Retry-After)" -le 60 ]
}
