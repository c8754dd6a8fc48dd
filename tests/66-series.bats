#!/usr/bin/env bats
# Weekly series (POST /api/match/series, GET and DELETE /api/match/series/{id}): the same
# court and time every week, each date an ordinary match request with its own payment hold;
# a date that cannot be booked is skipped with a stable code, never a reason to refuse the
# rest.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
	DAY=$(weekday_date 3)
}

# plus DAYS: $DAY + DAYS, YYYY-MM-DD.
plus() {
	date -u -d "$DAY + $1 days" +%F
}

# series_body [JQ_FILTER]: a 4-week series on $COURT from $DAY at 18:30, changed by the filter.
series_body() {
	jq -nc --arg r "$COURT" --arg d "$DAY" '{resourceId: $r, bookingDate: $d,
		startTime: "18:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", customMessage: "Tuesday club night",
		searchLat: 40.42, searchLng: -3.70, searchRadiusKm: 5, weeks: 4} | '"${1:-.}"
}

# nothing_written: no series, request, player, payment or notification exists.
nothing_written() {
	[ "$(sql "SELECT (SELECT count(*) FROM match_series) + (SELECT count(*) FROM match_series_matches)
	          + (SELECT count(*) FROM match_requests) + (SELECT count(*) FROM match_players)
	          + (SELECT count(*) FROM payments) + (SELECT count(*) FROM notifications)")" = 0 ]
}

@test "a 4-week series answers 201 with four requests a week apart, each awaiting its own payment" {
	req POST /api/match/series -t "$TOKEN" -d "$(series_body)"
	expect 201
	[ "$(jqr 'keys_unsorted | join(",")')" = id,created,skipped ]
	id=$(jqr .id)
	[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]
	[ "$(jqr '[.created[].bookingDate] | join(",")')" = "$DAY,$(plus 7),$(plus 14),$(plus 21)" ]
	[ "$(jqr '.created | map(.status) | unique | join(",")')" = PENDING_PAYMENT ]
	[ "$(jqr --arg court "$COURT" --arg org "$ORG" '.created | map(.resourceId == $court and .startTime == "18:30:00" and
	          .endTime == "20:00:00" and .format == "TWO_VS_TWO" and .skillLevel == "INTERMEDIATE"
	          and .organizerId == $org and .customMessage == "Tuesday club night"
	          and .courtPrice == 20 and .pricePerPlayer == 5 and .currency == "EUR"
	          and .availableSlots == 3 and (.expiresAt | type) == "string"
	          and (.players | length) == 1) | all')" = true ]
	[ "$(jqr '[.created[].id] | unique | length')" = 4 ]
	[ "$(jqr '.skipped')" = "[]" ]
	# in the database: the series, its four dates, four holds with one pending payment each
	[ "$(sql "SELECT organizer_id = '$ORG' AND resource_id = '$COURT' AND first_date = '$DAY'
	              AND start_time = '18:30' AND weeks = 4 AND skipped = '[]' AND cancelled_at IS NULL
	            FROM match_series WHERE id = '$id'")" = t ]
	[ "$(sql "SELECT string_agg(m.booking_date::text || ':' || m.status || ':' || p.status || ':' || p.amount, ','
	                            ORDER BY m.booking_date)
	            FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id
	            JOIN payments p ON p.match_request_id = m.id
	           WHERE sm.series_id = '$id'")" = \
		"$DAY:PENDING_PAYMENT:PENDING:5.00,$(plus 7):PENDING_PAYMENT:PENDING:5.00,$(plus 14):PENDING_PAYMENT:PENDING:5.00,$(plus 21):PENDING_PAYMENT:PENDING:5.00" ]
	# each is an ordinary request: its organizer reads it and pays it alone
	second=$(jqr '.created[1].id')
	req GET "/api/match/requests/$second" -t "$TOKEN"
	expect 200
	[ "$(jqr .bookingDate)" = "$(plus 7)" ]
	req POST "/api/match/requests/$second/confirm-payment" -t "$TOKEN"
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(sql "SELECT string_agg(m.status, ',' ORDER BY m.booking_date)
	            FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id
	           WHERE sm.series_id = '$id'")" = PENDING_PAYMENT,OPEN,PENDING_PAYMENT,PENDING_PAYMENT ]
}

@test "dates that cannot be booked are skipped with their codes and the others are made" {
	# the third week taken, the fourth and fifth beyond a 20-day booking window; a holiday the
	# second week is booked at the court's holiday price (a holiday prices, it does not close)
	sql "INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$VENUE', '$(plus 7)', 'Fiesta');
	     INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$COURT', 'HOLIDAY', '00:00', '24:00', 36.00, 'EUR');
	     UPDATE venues SET booking_window_days = 20 WHERE id = '$VENUE'" >/dev/null
	fixture_hold "$COURT" "$(plus 14)" 19:00 20:30 OPEN
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 5')"
	expect 201
	[ "$(jqr '[.created[] | "\(.bookingDate):\(.courtPrice)"] | join(",")')" = "$DAY:20,$(plus 7):36" ]
	same .skipped "[{\"bookingDate\": \"$(plus 14)\", \"code\": \"SLOT_TAKEN\"},
	               {\"bookingDate\": \"$(plus 21)\", \"code\": \"OUTSIDE_BOOKING_WINDOW\"},
	               {\"bookingDate\": \"$(plus 28)\", \"code\": \"OUTSIDE_BOOKING_WINDOW\"}]"
	id=$(jqr .id)
	# nothing of a skipped date is left
	[ "$(sql "SELECT string_agg(booking_date::text, ',' ORDER BY booking_date) FROM match_requests
	           WHERE organizer_id = '$ORG'")" = "$DAY,$(plus 7)" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE player_id = '$ORG'")" = 2 ]
	[ "$(sql "SELECT string_agg(m.booking_date::text, ',' ORDER BY m.booking_date)
	            FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id
	           WHERE sm.series_id = '$id'")" = "$DAY,$(plus 7)" ]
	[ "$(sql "SELECT jsonb_array_length(skipped) FROM match_series WHERE id = '$id'")" = 3 ]
	# the series reads back the same
	req GET "/api/match/series/$id" -t "$TOKEN"
	expect 200
	[ "$(jqr '[.created[].bookingDate] | join(",")')" = "$DAY,$(plus 7)" ]
	[ "$(jqr '[.skipped[].code] | join(",")')" = SLOT_TAKEN,OUTSIDE_BOOKING_WINDOW,OUTSIDE_BOOKING_WINDOW ]
}

@test "the club's per-week rule skips the weeks the player already plays there" {
	sql "UPDATE venues SET max_per_player_per_week = 1 WHERE id = '$VENUE'" >/dev/null
	sql_matches "$ORG" OPEN "SELECT date '$(plus 7)' AS d, time '10:00' AS st, time '11:30' AS et" >/dev/null
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 3')"
	expect 201
	[ "$(jqr '[.created[].bookingDate] | join(",")')" = "$DAY,$(plus 14)" ]
	same .skipped "[{\"bookingDate\": \"$(plus 7)\", \"code\": \"WEEKLY_LIMIT\"}]"
}

@test "a series of which no date can be booked is 409 NO_BOOKABLE_DATE and writes nothing" {
	fixture_hold "$COURT" "$DAY" 18:30 20:00 OPEN
	fixture_hold "$COURT" "$(plus 7)" 18:00 19:30 MATCHED
	before=$(sql "SELECT count(*) FROM match_requests")
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 2')"
	expect_problem 409 NO_BOOKABLE_DATE
	[[ $(jqr .detail) == *"$DAY SLOT_TAKEN, $(plus 7) SLOT_TAKEN"* ]]
	[ "$(sql "SELECT count(*) FROM match_requests")" = "$before" ]
	[ "$(sql "SELECT (SELECT count(*) FROM match_series) + (SELECT count(*) FROM match_series_matches)
	          + (SELECT count(*) FROM payments WHERE player_id = '$ORG')")" = 0 ]
	# off the court's grid every week: the same
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.startTime = "18:40:00"')"
	expect_problem 409 NO_BOOKABLE_DATE
	# and the court closed on that weekday
	sql "DELETE FROM resource_schedules WHERE resource_id = '$COURT'
	       AND day_of_week = extract(isodow FROM date '$DAY')" >/dev/null
	req POST /api/match/series -t "$TOKEN" -d "$(series_body ".weeks = 3 | .bookingDate = \"$(plus 14)\"")"
	expect_problem 409 NO_BOOKABLE_DATE
	[[ $(jqr .detail) == *"$(plus 14) SLOT_NOT_OFFERED, $(plus 21) SLOT_NOT_OFFERED, $(plus 28) SLOT_NOT_OFFERED"* ]]
	[ "$(sql "SELECT count(*) FROM match_series")" = 0 ]
}

@test "bad input is 400 naming each field, and nothing is written" {
	for weeks in 0 27 -1 1.5 '"4"' null; do
		req POST /api/match/series -t "$TOKEN" -d "$(series_body ".weeks = $weeks")"
		expect_problem 400 VALIDATION_FAILED weeks
	done
	req POST /api/match/series -t "$TOKEN" -d "$(series_body 'del(.weeks)')"
	expect_problem 400 VALIDATION_FAILED weeks
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 30 | del(.resourceId) | .bookingDate = "2026-02-30"')"
	expect_problem 400 VALIDATION_FAILED weeks resourceId bookingDate
	req POST /api/match/series -t "$TOKEN" -d '[]'
	expect 400
	nothing_written
}

@test "an unknown or suspended court is 404 and writes nothing" {
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.resourceId = "00000000-0000-4000-8000-000000000000"')"
	expect_problem 404 NOT_FOUND
	sql "UPDATE resources SET status = 'SUSPENDED', suspended_by = 'OWNER' WHERE id = '$COURT'" >/dev/null
	req POST /api/match/series -t "$TOKEN" -d "$(series_body)"
	expect_problem 404 NOT_FOUND
	nothing_written
}

@test "a series counts once toward the unpaid-holds limit" {
	req POST /api/match/series -t "$TOKEN" -d "$(series_body)"
	expect 201
	# MAX_UNPAID_HOLDS is 2: the series (four holds) and one single hold
	req POST /api/match/requests -t "$TOKEN" -d "$(series_body "del(.weeks) | .bookingDate = \"$(plus 1)\"")"
	expect 201
	req POST /api/match/requests -t "$TOKEN" -d "$(series_body "del(.weeks) | .bookingDate = \"$(plus 2)\"")"
	expect_problem 409 HOLD_LIMIT
	req POST /api/match/series -t "$TOKEN" -d "$(series_body ".bookingDate = \"$(plus 3)\"")"
	expect_problem 409 HOLD_LIMIT
	[ "$(sql "SELECT count(*) FROM match_series")" = 1 ]
	[ "$(sql "SELECT count(*) FROM match_requests WHERE status = 'PENDING_PAYMENT'")" = 5 ]
	# paying every date of the series frees its place: a new hold is taken again
	for m in $(sql "SELECT match_request_id FROM match_series_matches"); do
		req POST "/api/match/requests/$m/confirm-payment" -t "$TOKEN"
		expect 200
	done
	req POST /api/match/requests -t "$TOKEN" -d "$(series_body "del(.weeks) | .bookingDate = \"$(plus 2)\"")"
	expect 201
}

@test "only the organizer reads a series; anyone else and an unknown id get 404" {
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 2')"
	expect 201
	id=$(jqr .id)
	first=$(jqr '.created[0].id')
	req POST "/api/match/requests/$first/confirm-payment" -t "$TOKEN"
	expect 200
	req GET "/api/match/series/$id" -t "$TOKEN"
	expect 200
	[ "$(jqr 'keys_unsorted | join(",")')" = id,created,skipped ]
	[ "$(jqr .id)" = "$id" ]
	[ "$(jqr '[.created[].status] | join(",")')" = OPEN,PENDING_PAYMENT ]
	[ "$(jqr '.created[0].players[0].playerId')" = "$ORG" ]
	req GET "/api/match/series/$id" -t "$(token someone-else)"
	expect_problem 404 NOT_FOUND
	req GET /api/match/series/00000000-0000-4000-8000-000000000000 -t "$TOKEN"
	expect_problem 404 NOT_FOUND
	req GET /api/match/series/not-a-uuid -t "$TOKEN"
	expect_problem 400 VALIDATION_FAILED id
	req GET "/api/match/series/$id"
	expect 401
}

@test "cancelling a series cancels and refunds its coming matches and leaves the rest as they are" {
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 4')"
	expect 201
	id=$(jqr .id)
	mapfile -t ms < <(jqr '.created[].id')
	# week 1 paid and joined by p1; week 2 confirmed (all checked in); week 3 started an
	# hour ago (made so in SQL); week 4 still awaiting payment
	req POST "/api/match/requests/${ms[0]}/confirm-payment" -t "$TOKEN"
	expect 200
	p1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	sql_join "${ms[0]}" "$p1" TEAM_B
	sql "UPDATE match_requests SET status = 'CONFIRMED' WHERE id = '${ms[1]}';
	     UPDATE payments SET status = 'PAID' WHERE match_request_id = '${ms[1]}';
	     UPDATE match_requests SET status = 'OPEN',
	            starts_at = now() - interval '1 hour', ends_at = now() + interval '30 minutes'
	      WHERE id = '${ms[2]}';
	     UPDATE payments SET status = 'PAID' WHERE match_request_id = '${ms[2]}'" >/dev/null
	# not the organizer: 404, nothing changes
	req DELETE "/api/match/series/$id" -t "$(token p1)"
	expect_problem 404 NOT_FOUND
	[ "$(sql "SELECT count(*) FROM match_requests WHERE status = 'CANCELLED'")" = 0 ]
	req DELETE "/api/match/series/$id" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT string_agg(m.status || ':' || coalesce(m.cancel_reason, '-'), ',' ORDER BY m.booking_date)
	            FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id
	           WHERE sm.series_id = '$id'")" = \
		CANCELLED:ORGANIZER,CONFIRMED:-,OPEN:-,CANCELLED:ORGANIZER ]
	# week 1 as one cancel: both refunded in full (more than 24 h ahead), both told
	[ "$(sql "SELECT string_agg(p.player_id::text || ':' || p.amount, ',' ORDER BY p.player_id)
	            FROM payments p WHERE p.match_request_id = '${ms[0]}' AND p.kind = 'REFUND'
	             AND p.status = 'REFUNDED'")" = \
		"$(sql "SELECT string_agg(x || ':5.00', ',' ORDER BY x) FROM unnest(ARRAY['$ORG', '$p1']::text[]) x")" ]
	[ "$(sql "SELECT string_agg(recipient_id || ':' || (payload->>'refund'), ',' ORDER BY recipient_id)
	            FROM notifications WHERE type = 'MATCH_CANCELLED'
	             AND payload->>'matchRequestId' = '${ms[0]}'")" = \
		"$(sql "SELECT string_agg(x || ':5.00', ',' ORDER BY x) FROM unnest(ARRAY['$ORG', '$p1']::text[]) x")" ]
	# week 4 was only held: its pending payment is cancelled, nothing refunded
	[ "$(sql "SELECT string_agg(kind || ':' || status, ',') FROM payments
	           WHERE match_request_id = '${ms[3]}'")" = PAYMENT:CANCELLED ]
	[ "$(sql "SELECT cancelled_at IS NOT NULL FROM match_series WHERE id = '$id'")" = t ]
	# again: 204 and nothing more changes
	before=$(sql "SELECT (SELECT count(*) FROM payments) || '/' || (SELECT count(*) FROM notifications)
	                     || '/' || (SELECT count(*) FROM match_status_changes)
	                     || '/' || (SELECT cancelled_at FROM match_series WHERE id = '$id')")
	req DELETE "/api/match/series/$id" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT (SELECT count(*) FROM payments) || '/' || (SELECT count(*) FROM notifications)
	                 || '/' || (SELECT count(*) FROM match_status_changes)
	                 || '/' || (SELECT cancelled_at FROM match_series WHERE id = '$id')")" = "$before" ]
	req DELETE /api/match/series/00000000-0000-4000-8000-000000000000 -t "$TOKEN"
	expect_problem 404 NOT_FOUND
}

@test "one date is cancelled alone with the ordinary cancel, the series keeps the others" {
	req POST /api/match/series -t "$TOKEN" -d "$(series_body '.weeks = 3')"
	expect 201
	id=$(jqr .id)
	second=$(jqr '.created[1].id')
	req DELETE "/api/match/requests/$second" -t "$TOKEN"
	expect 204 -
	req GET "/api/match/series/$id" -t "$TOKEN"
	expect 200
	[ "$(jqr '[.created[].status] | join(",")')" = PENDING_PAYMENT,CANCELLED,PENDING_PAYMENT ]
	# the freed date is bookable again, by anyone
	req POST /api/match/requests -t "$(token other)" -d "$(series_body "del(.weeks) | .bookingDate = \"$(plus 7)\"")"
	expect 201
}

@test "a series retried with the same Idempotency-Key answers the first answer and makes one series" {
	req POST /api/match/series -t "$TOKEN" -H 'Idempotency-Key: tuesdays' -d "$(series_body)"
	expect 201
	first=$HTTP_BODY
	req POST /api/match/series -t "$TOKEN" -H 'Idempotency-Key: tuesdays' -d "$(series_body)"
	expect 201
	[ "$HTTP_BODY" = "$first" ]
	[ "$(sql "SELECT count(*) FROM match_series")" = 1 ]
	[ "$(sql "SELECT count(*) FROM match_requests")" = 4 ]
	req POST /api/match/series -t "$TOKEN" -H 'Idempotency-Key: tuesdays' -d "$(series_body '.weeks = 2')"
	expect 422
}

@test "two series of one court and time made at once book each date once" {
	t2=$(token rival)
	fixture_player rival INTERMEDIATE 40.42 -3.70 >/dev/null
	body=$(series_body '.weeks = 6')
	for k in 1 2 3 4; do
		tok=$TOKEN
		[ $((k % 2)) = 0 ] && tok=$t2
		curl -s -o "$BATS_TEST_TMPDIR/s$k" -w '%{http_code}\n' -X POST \
			-H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
			--data-binary "$body" "$BASE_URL/api/match/series" >"$BATS_TEST_TMPDIR/c$k" &
	done
	wait
	# every date is booked by exactly one series; every other series lists it as taken
	[ "$(sql "SELECT count(*) FROM match_requests WHERE status <> 'CANCELLED'")" = 6 ]
	[ "$(sql "SELECT count(DISTINCT booking_date) FROM match_requests")" = 6 ]
	made=0
	for k in 1 2 3 4; do
		code=$(cat "$BATS_TEST_TMPDIR/c$k")
		if [ "$code" = 201 ]; then
			n=$(jq '.created | length' "$BATS_TEST_TMPDIR/s$k")
			[ "$(jq '(.created | length) + (.skipped | length)' "$BATS_TEST_TMPDIR/s$k")" = 6 ]
			[ "$(jq '[.skipped[].code] | unique | map(select(. != "SLOT_TAKEN")) | length' \
				"$BATS_TEST_TMPDIR/s$k")" = 0 ]
			made=$((made + n))
		else
			# (the answer is shown when it is another: CONCURRENT_UPDATE once, from the
			# deadlock of two holds that the queue of match_hold removes,
			# sql/areas/60_lifecycle.sql)
			[ "$code" = 409 ] && [ "$(jq -r .code "$BATS_TEST_TMPDIR/s$k")" = NO_BOOKABLE_DATE ] ||
				{ echo "series $k answered $code: $(cat "$BATS_TEST_TMPDIR/s$k")" >&2; false; }
		fi
	done
	[ "$made" = 6 ]
}
