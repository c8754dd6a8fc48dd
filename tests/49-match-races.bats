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
