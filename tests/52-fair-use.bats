#!/usr/bin/env bats
# Fair use: a cap on unpaid holds per player, the club's booking rules on every way into a
# match, and a cap on venues awaiting approval per owner.

load test_helper
load match_helper

SLOTS="08:00:00 09:30:00 11:00:00 12:30:00 14:00:00 15:30:00 17:00:00 18:30:00 20:00:00"

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
	OWNER=$(token owner1 OWNER)
}

# create DATE START [TOKEN]: a match request on $COURT.
create() {
	req POST /api/match/requests -t "${3:-$TOKEN}" -d "{\"resourceId\":\"$COURT\",
		\"bookingDate\":\"$1\",\"startTime\":\"$2\",\"slotDurationMinutes\":90,
		\"format\":\"TWO_VS_TWO\",\"skillLevel\":\"INTERMEDIATE\",\"searchLat\":40.42,\"searchLng\":-3.70}"
}

# answers: "count status" of the concurrent answers in $BATS_TEST_TMPDIR/status.N.
answers() {
	local f
	for f in "$BATS_TEST_TMPDIR"/status.*; do echo "$(cat "$f")"; done | LC_ALL=C sort | uniq -c |
		awk '{print $1 " " $2}' | paste -sd ,
}

# paid DATE START: create, then pay (paid matches are not holds).
paid() {
	create "$1" "$2"
	[ "$HTTP_STATUS" = 201 ] || return 0
	req POST "/api/match/requests/$(jqr .id)/confirm-payment" -t "$TOKEN"
	expect 200
	HTTP_STATUS=201
}

rules() {
	req PUT "/api/owner/venues/$VENUE/booking-rules" -t "$OWNER" -d "$1"
}

@test "a third unpaid hold is 409 HOLD_LIMIT; paying, cancelling or a lapse frees a place" {
	day=$(weekday_date 3)
	create "$day" 08:00:00
	expect 201
	first=$(jqr .id)
	create "$day" 09:30:00
	expect 201
	second=$(jqr .id)
	create "$day" 11:00:00
	expect_problem 409 HOLD_LIMIT
	[[ "$(jqr .detail)" == *2* ]]
	[ "$(sql "SELECT count(*) FROM match_requests")" = 2 ]

	req POST "/api/match/requests/$first/confirm-payment" -t "$TOKEN"
	expect 200
	create "$day" 11:00:00
	expect 201
	third=$(jqr .id)
	create "$day" 12:30:00
	expect_problem 409 HOLD_LIMIT
	req DELETE "/api/match/requests/$second" -t "$TOKEN"
	expect 204 -
	create "$day" 12:30:00
	expect 201
	# a lapsed hold does not count, whether or not the sweeper ran
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$third'" >/dev/null
	create "$day" 14:00:00
	expect 201
	[ "$(sql "SELECT count(*) FROM match_requests WHERE status = 'PENDING_PAYMENT' AND expires_at > now()")" = 2 ]
}

@test "the hold limit reads the player's own holds, however many other players hold" {
	expect_autovacuum_yield
	day=$(weekday_date 3)
	create "$day" 08:00:00
	expect 201
	# Statistics from a table of 500 past matches of 500 players and 20 live holds, or no live
	# hold but the player's one (a table analyzed in a quiet hour, or right after a load), then
	# 3,000 live holds of other players made since (expiring later than anything ANALYZE saw),
	# as a busy hour leaves them: the count the limit runs, in the plans PL/pgSQL really makes (with
	# the values for a session's first calls, which is every call in plain CGI; auto_explain
	# shows the nested statements), goes by the player's index and reads only their hold.
	# Each in one transaction, rolled back.
	# holds FROM TO: matches g = FROM..TO of other players on $COURT, a date each: the first
	# 500 past (cancelled), the next 20 live for a minute, the rest for ten; with their
	# venue's place, which the trigger turned off here would set
	holds() {
		echo "INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
		          end_time, starts_at, ends_at, format, skill_level, status, team_size,
		          court_price, price_per_player, currency, search_latitude, search_longitude,
		          search_radius_km, expires_at, cancel_reason, venue_latitude, venue_longitude)
		      SELECT '$COURT', gen_random_uuid(), current_date + 400 + g, '10:00', '11:30',
		             now(), now() + interval '90 minutes', 'TWO_VS_TWO', 'INTERMEDIATE',
		             CASE WHEN g <= 500 THEN 'CANCELLED' ELSE 'PENDING_PAYMENT' END, 2, 20.00,
		             5.00, 'EUR', 40.42, -3.70, 5,
		             now() + CASE WHEN g <= 520 THEN interval '1 minute' ELSE interval '10 minutes' END,
		             CASE WHEN g <= 500 THEN 'ORGANIZER' END, v.latitude, v.longitude
		        FROM generate_series($1, $2) g, venues v WHERE v.id = '$VENUE';"
	}
	for analyzed in 520 500; do
		plans=$(sql "BEGIN; SET LOCAL session_replication_role = replica;
		             $(holds 1 "$analyzed")
		             ANALYZE match_requests;
		             $(holds $((analyzed + 1)) 3520)
		             SET LOCAL session_replication_role = origin;
		             LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
		             SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off;
		             SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;
		             SELECT hold_limit_check('$ORG', 2, now() + interval '5 minutes') FROM generate_series(1, 7);
		             ROLLBACK" 2>&1)
		[ "$(grep -c 'Index Scan using match_requests_organizer_expiry_idx on match_requests .*(actual rows=1 loops=1)' \
			<<<"$plans")" = 7 ] ||
			{ echo "analyzed $analyzed: $plans" >&2; false; }
		[ "$(grep -A1 'Index Scan using match_requests_organizer_expiry_idx' <<<"$plans" |
			grep -c 'Index Cond: ((organizer_id = \$1) AND (expires_at > \$3))')" = 7 ]
		# no row read and left: in the count's own plans (the lock on the player's row may
		# read a small users table from end to end, as its statistics advise)
		counts=$(awk '/^NOTICE:/ { keep = 0 } /Query Text: p_max IS NOT NULL/ { keep = 1 } keep' <<<"$plans")
		[ "$(grep -c 'Query Text: p_max IS NOT NULL' <<<"$counts")" = 7 ]
		! grep -q 'Rows Removed by Filter' <<<"$counts" || { echo "$plans" >&2; false; }
		[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]
	done
}

@test "twenty concurrent creates by one player leave exactly two holds" {
	i=0
	# three different days: a slot taken twice would be refused SLOT_TAKEN, not HOLD_LIMIT
	for day in $(weekday_dates 3 3); do
		for s in $SLOTS; do
			i=$((i + 1))
			[ $i -le 20 ] || break
			curl -s -o "$BATS_TEST_TMPDIR/body.$i" -w '%{http_code}' -X POST \
				-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
				--data-binary "{\"resourceId\":\"$COURT\",\"bookingDate\":\"$day\",\"startTime\":\"$s\",
					\"slotDurationMinutes\":90,\"format\":\"TWO_VS_TWO\",\"skillLevel\":\"INTERMEDIATE\",
					\"searchLat\":40.42,\"searchLng\":-3.70}" \
				"$BASE_URL/api/match/requests" >"$BATS_TEST_TMPDIR/status.$i" &
		done
	done
	wait
	got=$(answers)
	[ "$got" = "2 201,18 409" ] || { echo "answers: $got" >&2; cat "$BATS_TEST_TMPDIR"/body.* >&2; return 1; }
	for f in $(grep -l '^409$' "$BATS_TEST_TMPDIR"/status.*); do
		[ "$(jq -r .code "${f/status./body.}")" = HOLD_LIMIT ]
	done
	[ "$(sql "SELECT count(*) FROM match_requests")" = 2 ]
}

@test "booking rules: none on a new venue, the owner's only, every field checked" {
	req GET "/api/owner/venues/$VENUE/booking-rules" -t "$OWNER"
	expect 200
	same . '{"maxUpcomingPerPlayer":null,"maxPerPlayerPerDay":null,"maxPerPlayerPerWeek":null,
		"bookingWindowDays":null,"minNoticeMinutes":null}'
	rules '{"maxUpcomingPerPlayer":0,"maxPerPlayerPerDay":-1,"maxPerPlayerPerWeek":2.5,
		"bookingWindowDays":367,"minNoticeMinutes":"soon"}'
	expect_problem 400 VALIDATION_FAILED maxUpcomingPerPlayer maxPerPlayerPerDay \
		maxPerPlayerPerWeek bookingWindowDays minNoticeMinutes
	[ "$(sql "SELECT count(*) FROM venues WHERE max_upcoming_per_player IS NOT NULL
	           OR booking_window_days IS NOT NULL")" = 0 ]
	rules '{"maxUpcomingPerPlayer":3,"bookingWindowDays":14,"minNoticeMinutes":null}'
	expect 200
	same . '{"maxUpcomingPerPlayer":3,"maxPerPlayerPerDay":null,"maxPerPlayerPerWeek":null,
		"bookingWindowDays":14,"minNoticeMinutes":null}'
	[ "$(sql "SELECT max_upcoming_per_player || ' ' || booking_window_days FROM venues")" = "3 14" ]
	req PUT "/api/owner/venues/$VENUE/booking-rules" -t "$(token owner2 OWNER)" -d '{}'
	expect_problem 404 NOT_FOUND
	req GET "/api/owner/venues/$VENUE/booking-rules" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
}

@test "slots beyond the booking window or inside the notice are unavailable and refused" {
	rules '{"bookingWindowDays":2}'
	expect 200
	far=$(weekday_date 4)
	req GET "/api/resources/$COURT/slots?date=$far"
	expect 200
	[ "$(jqr '[.[] | select(.available)] | length')" = 0 ]
	create "$far" 09:30:00
	expect_problem 409 OUTSIDE_BOOKING_WINDOW
	[[ "$(jqr .detail)" == *"2 days"* ]]

	rules '{"minNoticeMinutes":2880}'
	expect 200
	req GET "/api/resources/$COURT/slots?date=$(local_date 1)"
	expect 200
	[ "$(jqr '[.[] | select(.available)] | length')" = 0 ]
	create "$far" 09:30:00
	expect 201
	create "$(local_date 1)" 20:00:00 "$(token other)"
	expect_problem 409 TOO_SHORT_NOTICE
	[ "$(sql "SELECT count(*) FROM match_requests")" = 1 ]
}

@test "the upcoming limit holds for creating, joining by link and accepting an invitation" {
	rules '{"maxUpcomingPerPlayer":1}'
	expect 200
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	m1=$(sql_match "$ORG" OPEN '3 days')
	m2=$(sql_match "$ORG" OPEN '4 days')
	link=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m1'")
	req POST "/api/match/join/$link" -t "$(token p1)" -d '{"team":"TEAM_B"}'
	expect 200
	link=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m2'")
	req POST "/api/match/join/$link" -t "$(token p1)" -d '{"team":"TEAM_B"}'
	expect_problem 409 UPCOMING_LIMIT
	inv=$(sql "INSERT INTO invitations (match_request_id, player_id) VALUES ('$m2', '$P1') RETURNING id")
	req POST "/api/match/invitations/$inv/accept" -t "$(token p1)" -d '{"team":"TEAM_B"}'
	expect_problem 409 UPCOMING_LIMIT
	create "$(weekday_date 6)" 09:30:00 "$(token p1)"
	expect_problem 409 UPCOMING_LIMIT
	[ "$(sql "SELECT count(*) FROM match_players WHERE player_id = '$P1'")" = 1 ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = PENDING ]
	# leaving frees the place under the rule
	req DELETE "/api/match/requests/$m1/leave" -t "$(token p1)"
	expect 204 -
	req POST "/api/match/invitations/$inv/accept" -t "$(token p1)" -d '{"team":"TEAM_B"}'
	expect 200
}

@test "daily and weekly limits count the player's matches at the venue on that local day and ISO week" {
	rules '{"maxPerPlayerPerDay":1,"maxPerPlayerPerWeek":2}'
	expect 200
	monday=$(TZ=Europe/Madrid date -d "next monday +7 days" +%F)
	paid "$monday" 09:30:00
	paid "$monday" 14:00:00
	expect_problem 409 DAILY_LIMIT
	paid "$(date -d "$monday +1 day" +%F)" 14:00:00
	[ "$HTTP_STATUS" = 201 ]
	paid "$(date -d "$monday +2 days" +%F)" 14:00:00
	expect_problem 409 WEEKLY_LIMIT
	# the next ISO week is another week
	paid "$(date -d "$monday +7 days" +%F)" 14:00:00
	[ "$HTTP_STATUS" = 201 ]
	# a cancelled match no longer counts
	req DELETE "/api/match/requests/$(sql "SELECT id FROM match_requests WHERE booking_date = '$monday'")" -t "$TOKEN"
	expect 204 -
	paid "$monday" 14:00:00
	[ "$HTTP_STATUS" = 201 ]
}

@test "twenty concurrent joins by one player stop at the upcoming limit exactly" {
	rules '{"maxUpcomingPerPlayer":1}'
	expect 200
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	T1=$(token p1)
	for i in $(seq 20); do
		m=$(sql_match "$ORG" OPEN "$((2 + i)) days")
		link=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
		curl -s -o "$BATS_TEST_TMPDIR/body.$i" -w '%{http_code}' -X POST \
			-H "Authorization: Bearer $T1" -H 'Content-Type: application/json' \
			--data-binary '{"team":"TEAM_B"}' "$BASE_URL/api/match/join/$link" \
			>"$BATS_TEST_TMPDIR/status.$i" &
	done
	wait
	got=$(answers)
	[ "$got" = "1 200,19 409" ] || { echo "answers: $got" >&2; cat "$BATS_TEST_TMPDIR"/body.* >&2; return 1; }
	[ "$(sql "SELECT count(*) FROM match_players WHERE player_id = '$P1'")" = 1 ]
}

@test "an owner with MAX_PENDING_VENUES venues awaiting approval gets 409 PENDING_LIMIT" {
	body='{"name":"Club","street":"Calle 1","city":"Madrid","country":"Spain","latitude":40.4,"longitude":-3.7}'
	other=$(token owner3 OWNER)
	for i in $(seq 10); do
		req POST /api/owner/venues -t "$other" -d "$body"
		expect 201
	done
	req POST /api/owner/venues -t "$other" -d "$body"
	expect_problem 409 PENDING_LIMIT
	[[ "$(jqr .detail)" == *10* ]]
	[ "$(sql "SELECT count(*) FROM venues v JOIN users u ON u.id = v.owner_id WHERE u.subject = 'owner3'")" = 10 ]
	# once one is approved, there is room again
	sql "UPDATE venues SET status = 'ACTIVE' WHERE id = (SELECT v.id FROM venues v JOIN users u
	     ON u.id = v.owner_id WHERE u.subject = 'owner3' LIMIT 1)" >/dev/null
	req POST /api/owner/venues -t "$other" -d "$body"
	expect 201
}

@test "a limit set to a value it cannot take says so in the error log, and its default applies" {
	expect_log apache 'setting MAX_UNPAID_HOLDS=0 is not a whole number from 1 to 1000; 2 applies'
	url=$(extra_apache bad-holds MAX_UNPAID_HOLDS=0)
	day=$(weekday_date 3)
	req POST /api/match/requests -t "$TOKEN" -b "$url" -d "{\"resourceId\":\"$COURT\",
		\"bookingDate\":\"$day\",\"startTime\":\"08:00:00\",\"slotDurationMinutes\":90,
		\"format\":\"TWO_VS_TWO\",\"skillLevel\":\"INTERMEDIATE\",\"searchLat\":40.42,\"searchLng\":-3.70}"
	expect 201
	create "$day" 09:30:00
	expect 201
	req POST /api/match/requests -t "$TOKEN" -b "$url" -d "{\"resourceId\":\"$COURT\",
		\"bookingDate\":\"$day\",\"startTime\":\"11:00:00\",\"slotDurationMinutes\":90,
		\"format\":\"TWO_VS_TWO\",\"skillLevel\":\"INTERMEDIATE\",\"searchLat\":40.42,\"searchLng\":-3.70}"
	expect_problem 409 HOLD_LIMIT
	grep -q 'setting MAX_UNPAID_HOLDS=0 is not a whole number from 1 to 1000; 2 applies' \
		"$COURTS_STATE/extra-bad-holds/apache/logs/error.log"
}
