#!/usr/bin/env bats
# Concurrent match requests for one court slot: the database, not a check in the program,
# decides who gets it (exclusion constraint match_requests_no_double_booking).

load test_helper
load match_helper

RACERS=20

setup() {
	reset_db
	VENUE=$(fixture_venue owner1)
	COURT=$(fixture_court "$VENUE" 90)
	DAY=$(weekday_date 3)
	for i in $(seq "$RACERS"); do
		RACER_ID[i]=$(user_id "racer$i")
		RACER_TOKEN[i]=$(token "racer$i")
	done
}

# race: every racer asks for $COURT on $DAY at 18:30 at the same time; each answer lands in
# $BATS_TEST_TMPDIR/status.N and body.N.
race() {
	local i body
	body=$(jq -nc --arg r "$COURT" --arg d "$DAY" '{resourceId: $r, bookingDate: $d,
		startTime: "18:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70}')
	for i in $(seq "$RACERS"); do
		curl -s -o "$BATS_TEST_TMPDIR/body.$i" -w '%{http_code}' -X POST \
			-H "Authorization: Bearer ${RACER_TOKEN[i]}" -H 'Content-Type: application/json' \
			--data-binary "$body" "$BASE_URL/api/match/requests" >"$BATS_TEST_TMPDIR/status.$i" &
	done
	wait
}

# one_winner: exactly one answer was 201 and the nineteen others 409 (all shown otherwise).
one_winner() {
	local got
	got=$(for f in "$BATS_TEST_TMPDIR"/status.*; do echo "$(cat "$f")"; done | LC_ALL=C sort | uniq -c | awk '{print $1 " " $2}' | paste -sd ,)
	[ "$got" = "1 201,$((RACERS - 1)) 409" ] || {
		echo "answers: $got" >&2
		for f in "$BATS_TEST_TMPDIR"/body.*; do cat "$f" >&2; echo >&2; done
		return 1
	}
}

# winner: the number of the racer who got 201.
winner() {
	grep -l '^201$' "$BATS_TEST_TMPDIR"/status.* | sed 's/.*status\.//'
}

# losers_all_slot_taken: every 409 body is a problem+json SLOT_TAKEN.
losers_all_slot_taken() {
	local f
	for f in $(grep -l '^409$' "$BATS_TEST_TMPDIR"/status.*); do
		jq -e '.code == "SLOT_TAKEN" and .status == 409' "${f/status./body.}" >/dev/null ||
			{ echo "unexpected answer: $(cat "${f/status./body.}")" >&2; return 1; }
	done
}

@test "twenty players racing for one slot: exactly one holds it, nineteen get 409 SLOT_TAKEN" {
	# the exclusion constraint decides each race: PostgreSQL logs every refused insert
	expect_log postgres 'conflicting key value violates exclusion constraint "match_requests_no_double_booking"'
	race
	one_winner
	losers_all_slot_taken
	w=$(winner)
	[ "$(jq -r .status "$BATS_TEST_TMPDIR/body.$w")" = PENDING_PAYMENT ]
	[ "$(jq -r .organizerId "$BATS_TEST_TMPDIR/body.$w")" = "${RACER_ID[w]}" ]
	# one request, one organizer, one payment: the losers left nothing behind
	[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]
	[ "$(sql "SELECT id || ' ' || organizer_id || ' ' || status FROM match_requests")" = "$(jq -r .id "$BATS_TEST_TMPDIR/body.$w") ${RACER_ID[w]} PENDING_PAYMENT" ]
	[ "$(sql "SELECT player_id FROM match_players")" = "${RACER_ID[w]}" ]
	[ "$(sql "SELECT player_id || ' ' || status FROM payments")" = "${RACER_ID[w]} PENDING" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
	[ "$(sql "SELECT available FROM resource_slots('$COURT', '$DAY') WHERE start_time = '18:30'")" = f ]
}

@test "racing for a slot whose hold has lapsed: the hold ends once and one racer gets the slot" {
	expect_log postgres 'conflicting key value violates exclusion constraint "match_requests_no_double_booking"'
	old_org=$(user_id old)
	old=$(sql "WITH m AS (
	         INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
	             end_time, starts_at, ends_at, format, skill_level, team_size, team_a_count,
	             court_price, price_per_player, currency, search_latitude, search_longitude,
	             search_radius_km, expires_at)
	         VALUES ('$COURT', '$old_org', '$DAY', '18:30', '20:00',
	             timestamp '$DAY 18:30' AT TIME ZONE 'Europe/Madrid',
	             timestamp '$DAY 20:00' AT TIME ZONE 'Europe/Madrid', 'TWO_VS_TWO',
	             'INTERMEDIATE', 2, 1, 20.00, 5.00, 'EUR', 40.42, -3.70, 10,
	             now() - interval '1 second')
	         RETURNING id, organizer_id),
	     o AS (INSERT INTO match_players (match_request_id, player_id, team, role)
	           SELECT id, organizer_id, 'TEAM_A', 'ORGANIZER' FROM m
	           RETURNING id, match_request_id, player_id)
	     INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	         entry_id)
	     SELECT match_request_id, player_id, 'PAYMENT', 5.00, 'EUR', 'PENDING', id FROM o
	     RETURNING match_request_id")
	race
	one_winner
	losers_all_slot_taken
	w=$(winner)
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests WHERE id = '$old'")" = "CANCELLED PAYMENT_EXPIRED" ]
	[ "$(sql "SELECT organizer_id FROM match_requests WHERE status <> 'CANCELLED'")" = "${RACER_ID[w]}" ]
	[ "$(sql "SELECT count(*) FROM match_requests")" = 2 ]
	[ "$(sql "SELECT status FROM payments WHERE match_request_id = '$old'")" = CANCELLED ]
	[ "$(sql "SELECT count(*) FROM payments")" = 2 ]
	# the old organizer is told exactly once
	[ "$(sql "SELECT recipient_id || ' ' || type FROM notifications")" = "$old_org PAYMENT_EXPIRED" ]
}

# Two inserters of one court's day used to meet in the exclusion constraint's check: each
# inserts its row, then scans for a conflict, and when both insert before either scans, each
# waits for the other; PostgreSQL's deadlock detector ended one of them a second later, and
# its request got 409 CONCURRENT_UPDATE instead of SLOT_TAKEN. It happened most when a hold
# in flight was rolled back and the holds waiting for it scanned again at once (without the
# queue of match_hold, sql/areas/60_lifecycle.sql, 78 of 80 transactions here were so ended,
# with RACE_ROUNDS=10).
# Eight sessions race for one slot, each holding it for a moment and letting it go: every
# hold is made, one after another, and no session is ever ended by the deadlock detector.
@test "sessions racing for one slot, each letting it go: every hold made in turn, never a deadlock" {
	local rounds=${RACE_ROUNDS:-100} deadlocks
	# the holds made, counted by a sequence (a rollback keeps its steps)
	sql "CREATE SEQUENCE race_held" >/dev/null
	# each session a player of its own (one player's holds queue on its account)
	cat >"$BATS_TEST_TMPDIR/race.sql" <<-SQL
		BEGIN;
		SELECT match_hold('$COURT', (SELECT id FROM users ORDER BY id OFFSET :client_id LIMIT 1),
		                  '$DAY', '18:30', 90, 'TWO_VS_TWO', 'INTERMEDIATE', NULL, 40.42, -3.70,
		                  10, 600);
		SELECT pg_sleep(0.001), nextval('race_held');
		ROLLBACK;
	SQL
	deadlocks=$(sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
	run pgbench -n -c 8 -j 2 -t "$rounds" --max-tries=1 --failures-detailed \
		-f "$BATS_TEST_TMPDIR/race.sql" "$PSQL_ADMIN"
	held=$(sql "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM race_held")
	sql "DROP SEQUENCE race_held"
	echo "$output" | grep -E '^number of|aborted|ERROR' >&2 || true
	[ "$status" = 0 ]
	grep -q "^number of transactions actually processed: $((8 * rounds))/$((8 * rounds))\$" <<<"$output"
	grep -q '^number of failed transactions: 0 ' <<<"$output"
	[ "$held" = $((8 * rounds)) ]
	[ "$(sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")" = "$deadlocks" ]
	[ "$(sql "SELECT count(*) FROM match_requests")" = 0 ]
}
