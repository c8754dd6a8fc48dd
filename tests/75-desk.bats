#!/usr/bin/env bats
# The club's desk (sql/areas/67_desk.sql, cgi-bin/owner.c): court blocks and desk bookings,
# the matches in their way called off by the club, the owner's cancellation, check-in at the
# desk, the day sheet, and the report of revenue and occupancy.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	OWNER=$(token owner1 OWNER)
	D=$(weekday_date 3)
}

# block BODY_JQ [RESOURCE]: POST a block on $COURT (or RESOURCE) with the body built by jq
# from {date: $D} and the filter.
block() {
	req POST "/api/owner/resources/${2:-$COURT}/blocks" -t "$OWNER" \
		-d "$(jq -nc --arg d "$D" '{date: $d} | '"$1")"
}

# slot_available START: whether $COURT's slot at START on $D is available.
slot_available() {
	sql "SELECT available FROM resource_slots('$COURT', '$D') WHERE start_time = '$1'"
}

# search_starts: the start times the search finds on $D between 09:00 and 12:00, comma-joined.
search_starts() {
	req GET "/api/match/search?lat=40.4168&lng=-3.7038&date=$D&startTimeFrom=09:00:00&startTimeTo=12:00:00" \
		-t "$(token org)"
	expect 200
	jqr '[.[].startTime] | join(",")'
}

# match_body START [DATE]: a match request body on $COURT at START on $D (or DATE).
match_body() {
	jq -nc --arg r "$COURT" --arg d "${2:-$D}" --arg s "$1" '{resourceId: $r, bookingDate: $d,
		startTime: $s, slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70, searchRadiusKm: 5}'
}

# over MATCH [JQ]: the block body covering MATCH's date and times, kind MAINTENANCE.
over() {
	sql "SELECT json_build_object('date', booking_date, 'startTime', api_time(start_time),
	            'endTime', api_time(end_time), 'kind', 'MAINTENANCE', 'note', 'Flooded by rain')
	       FROM match_requests WHERE id = '$1'" | jq -c "${2:-.}"
}

@test "a block closes its slots to the slots answer, the search and a new match, and its delete opens them" {
	[ "$(search_starts)" = 09:30:00,11:00:00 ]
	block '. + {startTime: "09:30:00", endTime: "11:00:00", kind: "MAINTENANCE", note: "New net"}'
	expect 201
	[[ $(jqr .id) =~ $UUID_RE ]]
	id=$(jqr .id)
	same 'del(.id, .createdAt)' "{\"resourceId\": \"$COURT\", \"date\": \"$D\",
		\"startTime\": \"09:30:00\", \"endTime\": \"11:00:00\", \"kind\": \"MAINTENANCE\",
		\"note\": \"New net\", \"customerName\": null, \"amount\": null, \"currency\": null}"
	[[ $(jqr .createdAt) =~ ^[0-9-]{10}T[0-9:]{8}\.[0-9]{3}Z$ ]]
	[ "$(sql "SELECT count(*) FROM court_blocks WHERE id = '$id' AND created_by = '$(user_id owner1)'")" = 1 ]
	[ "$(slot_available 09:30)" = f ]
	[ "$(slot_available 11:00)" = t ]
	req GET "/api/resources/$COURT/slots?date=$D"
	expect 200
	[ "$(jqr '.[] | select(.startTime == "09:30:00") | .available')" = false ]
	[ "$(search_starts)" = 11:00:00 ]
	req POST /api/match/requests -t "$(token org)" -d "$(match_body 09:30:00)"
	expect_problem 409 SLOT_BLOCKED
	[ "$(sql "SELECT count(*) FROM match_requests")" = 0 ]

	req DELETE "/api/owner/resources/$COURT/blocks/$id" -t "$OWNER"
	expect 204 -
	[ "$(slot_available 09:30)" = t ]
	[ "$(search_starts)" = 09:30:00,11:00:00 ]
	req POST /api/match/requests -t "$(token org)" -d "$(match_body 09:30:00)"
	expect 201
	req DELETE "/api/owner/resources/$COURT/blocks/$id" -t "$OWNER"
	expect_problem 404 NOT_FOUND
}

@test "a series skips the week a block closes, with the code SLOT_BLOCKED" {
	second=$(date -u -d "$D + 7 days" +%F)
	block ". + {date: \"$second\", startTime: \"18:00:00\", endTime: \"20:00:00\", kind: \"LESSON\"}"
	expect 201
	req POST /api/match/series -t "$(token org)" \
		-d "$(match_body 18:30:00 | jq -c '. + {weeks: 3}')"
	expect 201
	[ "$(jqr '.created | length')" = 2 ]
	same .skipped "[{\"bookingDate\": \"$second\", \"code\": \"SLOT_BLOCKED\"}]"
}

@test "a block over matches is 409 MATCHES_IN_THE_WAY naming them, and writes nothing" {
	full_match "20 hours"
	req POST "/api/owner/resources/$COURT/blocks" -t "$OWNER" -d "$(over "$M")"
	expect_problem 409 MATCHES_IN_THE_WAY
	same .matchRequestIds "[\"$M\"]"
	[ "$(sql "SELECT count(*) FROM court_blocks")" = 0 ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$M'")" = MATCHED ]
}

@test "with cancelMatches the club calls the matches off: every share refunded in full, every player told the note, no reliability lost" {
	# 20 hours ahead: the organizer cancelling would not be refunded; the club refunds everyone
	full_match "20 hours"
	req POST "/api/owner/resources/$COURT/blocks" -t "$OWNER" \
		-d "$(over "$M" '. + {cancelMatches: true}')"
	expect 201
	[ "$(jqr .kind)" = MAINTENANCE ]
	[ "$(sql "SELECT status || ' ' || cancel_reason || ' ' || cancel_note FROM match_requests WHERE id = '$M'")" = "CANCELLED CLUB Flooded by rain" ]
	[ "$(sql "SELECT string_agg(player_id || ' ' || amount || ' ' || status, ',' ORDER BY player_id)
	            FROM payments WHERE match_request_id = '$M' AND kind = 'REFUND'")" = \
	  "$(sql "SELECT string_agg(player_id || ' 5.00 REFUNDED', ',' ORDER BY player_id)
	            FROM match_players WHERE match_request_id = '$M'")" ]
	# the ledger: every payment refunded once
	[ "$(sql "SELECT count(*) FROM payments p WHERE p.match_request_id = '$M' AND p.kind = 'PAYMENT'
	            AND NOT EXISTS (SELECT 1 FROM payments r WHERE r.refund_of = p.id)")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_CANCELLED'
	            AND payload->>'matchRequestId' = '$M' AND payload->>'reason' = 'CLUB'
	            AND payload->>'note' = 'Flooded by rain' AND payload->>'refund' = '5.00'")" = 4 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	[ "$(sql "SELECT string_agg(DISTINCT reliability_score::text, ',') FROM players")" = 100 ]
}

@test "an open match called off by a block leaves the open-match feed" {
	fixture_player me INTERMEDIATE 40.42 -3.70 >/dev/null
	M=$(sql_match "$ORG" OPEN "30 hours")
	req GET "/api/match/open?lat=40.42&lng=-3.70" -t "$(token me)"
	expect 200
	[ "$(jqr '[.[].id] | join(",")')" = "$M" ]
	req POST "/api/owner/resources/$COURT/blocks" -t "$OWNER" \
		-d "$(over "$M" '. + {kind: "EVENT", cancelMatches: true}')"
	expect 201
	req GET "/api/match/open?lat=40.42&lng=-3.70" -t "$(token me)"
	expect 200
	[ "$(jqr length)" = 0 ]
}

@test "a match that has started cannot be called off by a block: 409 MATCH_STARTED naming it" {
	# started ten minutes ago, or at midnight when that is later: a match cut at midnight
	# would end before now, and a block over it end in the past
	M=$(sql_matches "$ORG" MATCHED "
	         SELECT x::date AS d, x::time AS st,
	                CASE WHEN (x + interval '90 minutes')::date = x::date
	                     THEN (x + interval '90 minutes')::time ELSE time '24:00' END AS et
	           FROM (SELECT greatest(date_trunc('minute', now() AT TIME ZONE 'Europe/Madrid')
	                                 - interval '10 minutes',
	                                 date_trunc('day', now() AT TIME ZONE 'Europe/Madrid')) AS x) s")
	req POST "/api/owner/resources/$COURT/blocks" -t "$OWNER" \
		-d "$(over "$M" '. + {cancelMatches: true}')"
	expect_problem 409 MATCH_STARTED
	same .matchRequestIds "[\"$M\"]"
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$M'") $(sql "SELECT count(*) FROM court_blocks")" = "MATCHED 0" ]
}

@test "a weekly block makes every week or, when one week collides, none" {
	block '. + {startTime: "08:00:00", endTime: "09:30:00", kind: "LESSON", note: "Juniors", weeks: 3}'
	expect 201
	[ "$(jqr '[.[].date] | join(",")')" = "$D,$(date -u -d "$D + 7 days" +%F),$(date -u -d "$D + 14 days" +%F)" ]
	[ "$(jqr '[.[].kind, .[].note] | unique | join(",")')" = Juniors,LESSON ]
	# the third week of a later series collides with an event
	block ". + {date: \"$(date -u -d "$D + 28 days" +%F)\", startTime: \"12:00:00\", endTime: \"13:00:00\", kind: \"EVENT\"}"
	expect 201
	block '. + {date: "'"$(date -u -d "$D + 14 days" +%F)"'", startTime: "11:30:00", endTime: "12:30:00", kind: "MAINTENANCE", weeks: 3}'
	expect_problem 409 BLOCK_OVERLAP
	[ "$(sql "SELECT count(*) FROM court_blocks")" = 4 ]
	# weeks: 1 is an array of one
	block ". + {date: \"$(date -u -d "$D + 1 days" +%F)\", startTime: \"20:00:00\", endTime: \"24:00:00\", kind: \"EVENT\", weeks: 1}"
	expect 201
	[ "$(jqr 'type + " " + (length | tostring) + " " + .[0].endTime')" = "array 1 24:00:00" ]
}

@test "a desk booking holds the court with its customer and the amount in the court's currency" {
	block '. + {startTime: "20:00:00", endTime: "21:30:00", kind: "DESK", customerName: "Ana Ruiz", amount: 24.5}'
	expect 201
	same '[.kind, .customerName, .amount, .currency]' '["DESK", "Ana Ruiz", 24.5, "EUR"]'
	grep -q '"amount" : 24.50' <<<"$HTTP_BODY"
	[ "$(slot_available 20:00)" = f ]
	# on a court without prices, an amount has no currency
	bare=$(sql "INSERT INTO resources (venue_id, name, type, slot_duration_minutes, status)
	            VALUES ('$VENUE', 'Court 9', 'PADEL_COURT', 60, 'ACTIVE') RETURNING id")
	block '. + {startTime: "20:00:00", endTime: "21:00:00", kind: "DESK", amount: 10}' "$bare"
	expect_problem 409 NO_CURRENCY
	block '. + {startTime: "20:00:00", endTime: "21:00:00", kind: "DESK", customerName: "Leo"}' "$bare"
	expect 201
	same '[.customerName, .amount, .currency]' '["Leo", null, null]'
}

@test "a block is refused with every invalid field, in the past, or on a court that is not the caller's" {
	block '. + {startTime: "11:00:00", endTime: "10:00:00", kind: "NAP", customerName: "Ana", weeks: 0}'
	expect_problem 400 VALIDATION_FAILED endTime kind weeks
	block '. + {startTime: "10:00:00", endTime: "11:00:00", kind: "LESSON", customerName: "Ana", amount: 5}'
	expect_problem 400 VALIDATION_FAILED customerName amount
	req POST "/api/owner/resources/$COURT/blocks" -t "$OWNER" -d '{"kind": "EVENT"}'
	expect_problem 400 VALIDATION_FAILED date startTime endTime
	block ". + {date: \"$(local_date -1)\", startTime: \"10:00:00\", endTime: \"11:00:00\", kind: \"EVENT\"}"
	expect_problem 409 BLOCK_IN_PAST
	req POST "/api/owner/resources/$COURT/blocks" -t "$(token owner2 OWNER)" \
		-d "{\"date\": \"$D\", \"startTime\": \"10:00:00\", \"endTime\": \"11:00:00\", \"kind\": \"EVENT\"}"
	expect_problem 404 NOT_FOUND
	req GET "/api/owner/resources/$COURT/blocks" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
	[ "$(sql "SELECT count(*) FROM court_blocks")" = 0 ]
}

@test "blocks are listed by date and start, from and to included, a page at a time" {
	for k in 0 1 2 3; do
		block ". + {date: \"$(date -u -d "$D + $k days" +%F)\", startTime: \"21:00:00\", endTime: \"22:00:00\", kind: \"MAINTENANCE\"}"
		expect 201
	done
	block '. + {startTime: "08:00:00", endTime: "09:00:00", kind: "EVENT"}'
	expect 201
	req GET "/api/owner/resources/$COURT/blocks?from=$D&to=$(date -u -d "$D + 2 days" +%F)&limit=2" -t "$OWNER"
	expect 200
	[ "$(jqr '[.[] | .date + " " + .startTime] | join(",")')" = "$D 08:00:00,$D 21:00:00" ]
	next=$(header link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
	[[ $next == "/api/owner/resources/$COURT/blocks?"*cursor=* ]]
	req GET "$next" -t "$OWNER"
	expect 200
	[ "$(jqr '[.[] | .date] | join(",")')" = "$(date -u -d "$D + 1 days" +%F),$(date -u -d "$D + 2 days" +%F)" ]
	req GET "/api/owner/resources/$COURT/blocks" -t "$OWNER"
	expect 200
	[ "$(jqr length)" = 5 ]
	req GET "/api/owner/resources/$COURT/blocks?from=tomorrow" -t "$OWNER"
	expect_problem 400 VALIDATION_FAILED from
}

@test "the owner calls a match off with a reason: every share refunded in full, every player told, no reliability lost" {
	full_match "10 hours"
	req POST "/api/owner/matches/$M/cancel" -t "$OWNER" -d '{}'
	expect_problem 400 VALIDATION_FAILED reason
	req POST "/api/owner/matches/$M/cancel" -t "$(token owner2 OWNER)" -d '{"reason": "x"}'
	expect_problem 404 NOT_FOUND
	req POST "/api/owner/matches/$M/cancel" -t "$OWNER" -d '{"reason": "Lights broken"}'
	expect 204 -
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests WHERE id = '$M'")" = "CANCELLED CLUB" ]
	[ "$(sql "SELECT count(*) || ' ' || sum(amount) FROM payments WHERE match_request_id = '$M' AND kind = 'REFUND' AND status = 'REFUNDED'")" = "4 20.00" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_CANCELLED' AND payload->>'note' = 'Lights broken'")" = 4 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	req POST "/api/owner/matches/$M/cancel" -t "$OWNER" -d '{"reason": "Lights broken"}'
	expect_problem 409 INVALID_STATE
	M2=$(sql_match "$ORG" OPEN "-5 minutes")
	req POST "/api/owner/matches/$M2/cancel" -t "$OWNER" -d '{"reason": "Too late"}'
	expect_problem 409 MATCH_STARTED
}

@test "the desk checks in a player without a phone, in the GPS check-in's window; the last one confirms the match" {
	full_match "10 minutes"
	req POST "/api/owner/matches/$M/checkin/$P1" -t "$OWNER"
	expect 204 -
	[ "$(sql "SELECT checked_in_by FROM match_players WHERE match_request_id = '$M' AND player_id = '$P1'")" = "$(user_id owner1)" ]
	req POST "/api/owner/matches/$M/checkin/$P1" -t "$OWNER"
	expect 204 -
	req POST "/api/owner/matches/$M/checkin/$(user_id stranger)" -t "$OWNER"
	expect_problem 404 NOT_FOUND
	req POST "/api/owner/matches/$M/checkin/$P2" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
	for p in "$ORG" "$P2" "$P3"; do
		req POST "/api/owner/matches/$M/checkin/$p" -t "$OWNER"
		expect 204 -
	done
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$M'")" = CONFIRMED ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_CONFIRMED'")" = 4 ]
	later=$(sql_match "$ORG" MATCHED "5 hours")
	req POST "/api/owner/matches/$later/checkin/$ORG" -t "$OWNER"
	expect_problem 409 CHECKIN_TOO_EARLY
}

@test "the day sheet shows every court by name with its matches and blocks in start order, hours open and free" {
	sql "UPDATE resources SET name = 'Pista B' WHERE id = '$COURT'" >/dev/null
	other=$(fixture_court "$VENUE" 60)
	sql "UPDATE resources SET name = 'Pista A' WHERE id = '$other'" >/dev/null
	M=$(sql_matches "$ORG" OPEN "SELECT date '$D' AS d, time '18:30' AS st, time '20:00' AS et")
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_B
	block '. + {startTime: "20:00:00", endTime: "21:30:00", kind: "DESK", customerName: "Ana", amount: 30}'
	expect 201
	desk=$(jqr .id)
	block '. + {startTime: "08:00:00", endTime: "09:30:00", kind: "MAINTENANCE", note: "Sweep"}'
	expect 201
	maint=$(jqr .id)
	req GET "/api/owner/venues/$VENUE/day?date=$D" -t "$OWNER"
	expect 200
	same 'del(.courts)' "{\"venueId\": \"$VENUE\", \"date\": \"$D\", \"timeZone\": \"Europe/Madrid\",
		\"hoursOpen\": 28, \"hoursFree\": 23.5}"
	same '[.courts[] | [.name, .hoursOpen, .hoursFree, (.items | length)]]' \
		'[["Pista A", 14, 14, 0], ["Pista B", 14, 9.5, 3]]'
	same '.courts[1].items[0]' "{\"kind\": \"MAINTENANCE\", \"blockId\": \"$maint\",
		\"startTime\": \"08:00:00\", \"endTime\": \"09:30:00\", \"note\": \"Sweep\",
		\"customerName\": null, \"amount\": null, \"currency\": null}"
	same '.courts[1].items[1] | del(.players)' "{\"kind\": \"MATCH\", \"matchRequestId\": \"$M\",
		\"status\": \"OPEN\", \"startTime\": \"18:30:00\", \"endTime\": \"20:00:00\",
		\"format\": \"TWO_VS_TWO\", \"placesTaken\": 2, \"placesFree\": 2, \"amountPaid\": 10,
		\"amountOwed\": 10, \"currency\": \"EUR\", \"checkedIn\": 0}"
	same '[.courts[1].items[1].players[] | [.playerId, .displayName, .team, .role, .checkedIn]]' \
		"[[\"$ORG\", \"org\", \"TEAM_A\", \"ORGANIZER\", false], [\"$P1\", \"p1\", \"TEAM_B\", \"PLAYER\", false]]"
	same '.courts[1].items[2]' "{\"kind\": \"DESK\", \"blockId\": \"$desk\",
		\"startTime\": \"20:00:00\", \"endTime\": \"21:30:00\", \"note\": null,
		\"customerName\": \"Ana\", \"amount\": 30, \"currency\": \"EUR\"}"
	req GET "/api/owner/venues/$VENUE/day?date=$D" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
	req GET "/api/owner/venues/$VENUE/day" -t "$OWNER"
	expect_problem 400 VALIDATION_FAILED date
}

# report_day: a day of a court open 08:00-22:00 (the fixture) yesterday: three matches (two
# played, with one player of the first never checked in; one cancelled after a share was
# paid and refunded), a desk booking of 25.00 and two hours of maintenance. Sets Y.
report_day() {
	Y=$(local_date -1)
	m1=$(sql_matches "$ORG" COMPLETED "SELECT date '$Y' AS d, time '09:00' AS st, time '10:30' AS et")
	m2=$(sql_matches "$ORG" COMPLETED "SELECT date '$Y' AS d, time '12:00' AS st, time '13:30' AS et")
	m3=$(sql_matches "$ORG" OPEN "SELECT date '$Y' AS d, time '18:00' AS st, time '19:30' AS et")
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	P2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	P3=$(fixture_player p3 INTERMEDIATE 40.42 -3.70)
	for m in "$m1" "$m2"; do
		sql_join "$m" "$P1" TEAM_A
		sql_join "$m" "$P2" TEAM_B
		sql_join "$m" "$P3" TEAM_B
	done
	sql "UPDATE match_players SET checked_in_at = now() - interval '1 day'
	      WHERE match_request_id IN ('$m1', '$m2') AND NOT (match_request_id = '$m1' AND player_id = '$P3');
	     UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER' WHERE id = '$m3'" >/dev/null
	sql_refund "$m3" "$ORG" >/dev/null
	# a hold never paid is no match cancelled, and no money
	hold=$(sql_matches "$ORG" PENDING_PAYMENT "SELECT date '$Y' AS d, time '15:00' AS st, time '16:30' AS et")
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'PAYMENT_EXPIRED' WHERE id = '$hold';
	     UPDATE payments SET status = 'CANCELLED' WHERE match_request_id = '$hold'" >/dev/null
	owner=$(user_id owner1)
	sql "INSERT INTO court_blocks (resource_id, block_date, start_time, end_time, kind,
	         customer_name, amount, currency, created_by)
	     VALUES ('$COURT', '$Y', '10:30', '12:00', 'DESK', 'Ana', 25.00, 'EUR', '$owner'),
	            ('$COURT', '$Y', '20:00', '22:00', 'MAINTENANCE', NULL, NULL, NULL, '$owner')" >/dev/null
}

@test "the report's figures of a day equal the hand-computed ones, and the total adds the days" {
	report_day
	req GET "/api/owner/venues/$VENUE/report?from=$(local_date -2)&to=$Y" -t "$OWNER"
	expect 200
	same 'del(.days, .total)' "{\"venueId\": \"$VENUE\", \"from\": \"$(local_date -2)\", \"to\": \"$Y\", \"currency\": \"EUR\"}"
	# open 14 h; booked 3 h (two played matches); desk 1.5 h; maintenance 2 h;
	# occupancy (3 + 1.5) / (14 - 2) = 0.375; paid 20 + 20 + 5, refunded 5
	same '.days[1]' "{\"date\": \"$Y\", \"hoursOpen\": 14, \"hoursBooked\": 3,
		\"hoursBlocked\": {\"MAINTENANCE\": 2, \"LESSON\": 0, \"EVENT\": 0, \"DESK\": 1.5},
		\"occupancy\": 0.375, \"paid\": 45, \"refunded\": 5, \"net\": 40, \"deskRevenue\": 25,
		\"matchesPlayed\": 2, \"matchesCancelled\": 1, \"noShows\": 1}"
	same '.days[0] | [.date, .hoursOpen, .hoursBooked, .occupancy, .paid, .matchesPlayed]' \
		"[\"$(local_date -2)\", 14, 0, 0, 0, 0]"
	# 4.5 hours in use of 26 available: 0.17307...
	same '.total' '{"hoursOpen": 28, "hoursBooked": 3,
		"hoursBlocked": {"MAINTENANCE": 2, "LESSON": 0, "EVENT": 0, "DESK": 1.5},
		"occupancy": 0.1731, "paid": 45, "refunded": 5, "net": 40, "deskRevenue": 25,
		"matchesPlayed": 2, "matchesCancelled": 1, "noShows": 1}'
	grep -q '"paid" : 45.00' <<<"$HTTP_BODY"
	grep -q '"occupancy" : 0.3750' <<<"$HTTP_BODY"
}

@test "the report as CSV reads back in a CSV parser: the JSON's names, a row per day, the total" {
	report_day
	req GET "/api/owner/venues/$VENUE/report?from=$(local_date -2)&to=$Y" -t "$OWNER" \
		-H 'Accept: text/csv'
	expect 200 text/csv
	[[ $(header content-disposition) == "attachment; filename=\"report-$(local_date -2)-$Y.csv\"" ]]
	printf '%s' "$HTTP_BODY" >"$BATS_TEST_TMPDIR/report.csv"
	run python3 -c '
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(json.dumps([[r["date"], r["hoursOpen"], r["hoursBlocked.DESK"], r["occupancy"], r["net"],
                   r["deskRevenue"], r["noShows"]] for r in rows]))' "$BATS_TEST_TMPDIR/report.csv"
	[ "$status" = 0 ]
	[ "$output" = "[[\"$(local_date -2)\", \"14.00\", \"0.00\", \"0.0000\", \"0.00\", \"0.00\", \"0\"], [\"$Y\", \"14.00\", \"1.50\", \"0.3750\", \"40.00\", \"25.00\", \"1\"], [\"total\", \"28.00\", \"1.50\", \"0.1731\", \"40.00\", \"25.00\", \"1\"]]" ]
	[ "$(head -n 1 "$BATS_TEST_TMPDIR/report.csv")" = $'date,hoursOpen,hoursBooked,hoursBlocked.MAINTENANCE,hoursBlocked.LESSON,hoursBlocked.EVENT,hoursBlocked.DESK,occupancy,paid,refunded,net,deskRevenue,matchesPlayed,matchesCancelled,noShows\r' ]
}

@test "the report takes at most 366 days in order, and a currency when the venue has more than one" {
	req GET "/api/owner/venues/$VENUE/report?from=$D&to=$(date -u -d "$D - 1 days" +%F)" -t "$OWNER"
	expect_problem 400 VALIDATION_FAILED to
	req GET "/api/owner/venues/$VENUE/report?from=$D&to=$(date -u -d "$D + 366 days" +%F)" -t "$OWNER"
	expect_problem 400 VALIDATION_FAILED to
	req GET "/api/owner/venues/$VENUE/report?from=$D&to=$(date -u -d "$D + 365 days" +%F)" -t "$OWNER"
	expect 200
	[ "$(jqr '.days | length')" = 366 ]
	req GET "/api/owner/venues/$VENUE/report?to=$D&currency=eur" -t "$OWNER"
	expect_problem 400 VALIDATION_FAILED from currency
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$(fixture_court "$VENUE")', 'HOLIDAY', '08:00', '22:00', 25.00, 'GBP')" >/dev/null
	req GET "/api/owner/venues/$VENUE/report?from=$D&to=$D" -t "$OWNER"
	expect_problem 400 CURRENCY_REQUIRED
	req GET "/api/owner/venues/$VENUE/report?from=$D&to=$D&currency=GBP" -t "$OWNER"
	expect 200
	[ "$(jqr .currency)" = GBP ]
	req GET "/api/owner/venues/$VENUE/report?from=$D&to=$D" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
}
