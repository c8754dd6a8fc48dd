#!/usr/bin/env bats
# DELETE /api/match/requests/{id}: the organizer cancels before the start; everyone is told
# and refunded per the cancellation policy.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
}

# cancelled_for PLAYER_ID: "reason refund" of the MATCH_CANCELLED notifications of PLAYER_ID
# about $M ("null" for no refund).
cancelled_for() {
	sql "SELECT (payload->>'reason') || ' ' || (payload->'refund')::text FROM notifications
	      WHERE type = 'MATCH_CANCELLED' AND recipient_id = '$1'
	        AND payload->>'matchRequestId' = '$M'"
}

# refunds: "player amount status" of every refund, sorted.
refunds() {
	sql "SELECT player_id || ' ' || amount || ' ' || status FROM payments
	      WHERE kind = 'REFUND'" | LC_ALL=C sort
}

@test "cancelling 24 hours or more ahead refunds everyone who paid, the organizer too" {
	M=$(sql_match "$ORG" OPEN '72 hours')
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_B
	# p2 left earlier and was refunded then
	P2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P2" TEAM_B
	sql "UPDATE match_players SET left_at = now(), left_reason = 'LEFT' WHERE player_id = '$P2'"
	sql_refund "$M" "$P2"
	S1=$(fixture_player s1 INTERMEDIATE 40.42 -3.70)
	S2=$(fixture_player s2 INTERMEDIATE 40.42 -3.70)
	sql "INSERT INTO invitations (match_request_id, player_id, status, responded_at)
	     VALUES ('$M', '$S1', 'PENDING', NULL), ('$M', '$S2', 'DECLINED', now())"

	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED ORGANIZER" ]
	[ "$(refunds)" = "$(printf '%s\n' "$ORG 5.00 REFUNDED" "$P1 5.00 REFUNDED" "$P2 5.00 REFUNDED" | LC_ALL=C sort)" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'PAYMENT' AND status <> 'PAID'")" = 0 ]
	[ "$(sql "SELECT player_id || ' ' || status FROM invitations" | LC_ALL=C sort)" = "$(printf '%s\n' "$S1 EXPIRED" "$S2 DECLINED" | LC_ALL=C sort)" ]
	# every player still in the match is told, with what comes back to them
	[ "$(cancelled_for "$ORG")" = 'ORGANIZER "5.00"' ]
	[ "$(cancelled_for "$P1")" = 'ORGANIZER "5.00"' ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 2 ]
	[ "$(sql "SELECT DISTINCT (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(payload) k)::text FROM notifications")" = "{matchRequestId,reason,refund}" ]

	req GET "/api/match/requests/$M" -t "$(token p1)"
	expect 200
	[ "$(jqr .status)" = CANCELLED ]
	req GET /api/match/requests/my -t "$TOKEN"
	expect 200
	[ "$(jqr 'map(.id + " " + .status) | join(",")')" = "$M CANCELLED" ]
}

@test "cancelling less than 24 hours ahead refunds the joined players but not the organizer" {
	full_match '5 hours'
	sql "INSERT INTO invitations (match_request_id, player_id) VALUES ('$M', '$(fixture_player s1 INTERMEDIATE 40.42 -3.70)')"
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED ORGANIZER" ]
	[ "$(refunds)" = "$(printf '%s\n' "$P1 5.00 REFUNDED" "$P2 5.00 REFUNDED" "$P3 5.00 REFUNDED" | LC_ALL=C sort)" ]
	[ "$(sql "SELECT status FROM payments WHERE kind = 'PAYMENT' AND player_id = '$ORG'")" = PAID ]
	[ "$(cancelled_for "$ORG")" = 'ORGANIZER null' ]
	for p in "$P1" "$P2" "$P3"; do
		[ "$(cancelled_for "$p")" = 'ORGANIZER "5.00"' ]
	done
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
	[ "$(sql "SELECT status FROM invitations")" = EXPIRED ]
}

@test "cancelling a request awaiting payment cancels the payment and frees the slot" {
	day=$(weekday_date 3)
	req POST /api/match/requests -t "$TOKEN" -d "$(jq -nc --arg r "$COURT" --arg d "$day" '{resourceId: $r,
		bookingDate: $d, startTime: "18:30:00", slotDurationMinutes: 90, format: "ONE_VS_ONE",
		skillLevel: "ADVANCED", searchLat: 40.42, searchLng: -3.70}')"
	expect 201
	M=$(jqr .id)
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED ORGANIZER" ]
	[ "$(sql "SELECT kind || ' ' || status FROM payments")" = "PAYMENT CANCELLED" ]
	[ "$(cancelled_for "$ORG")" = 'ORGANIZER null' ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 1 ]
	[ "$(sql "SELECT available FROM resource_slots('$COURT', '$day') WHERE start_time = '18:30'")" = t ]
	req POST "/api/match/requests/$M/confirm-payment" -t "$TOKEN"
	expect_problem 409 INVALID_STATE
}

@test "a hold past its payment window ends as PAYMENT_EXPIRED when its organizer cancels it" {
	day=$(weekday_date 3)
	req POST /api/match/requests -t "$TOKEN" -d "$(jq -nc --arg r "$COURT" --arg d "$day" '{resourceId: $r,
		bookingDate: $d, startTime: "18:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "ADVANCED", searchLat: 40.42, searchLng: -3.70}')"
	expect 201
	M=$(jqr .id)
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second'"
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED PAYMENT_EXPIRED" ]
	[ "$(sql "SELECT status FROM payments")" = CANCELLED ]
	[ "$(sql "SELECT type FROM notifications WHERE recipient_id = '$ORG'")" = PAYMENT_EXPIRED ]
}

@test "cancelling a cancelled match is 204 and changes nothing" {
	full_match '72 hours'
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	before=$(sql "SELECT count(*) || ' ' || max(updated_at) FROM payments")
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT count(*) || ' ' || max(updated_at) FROM payments")" = "$before" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 4 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
	[ "$(sql "SELECT cancel_reason FROM match_requests")" = ORGANIZER ]
}

@test "only the organizer cancels: another player gets 403, a stranger and an unknown id 404" {
	full_match '72 hours'
	req DELETE "/api/match/requests/$M" -t "$(token p1)"
	expect_problem 403 NOT_ORGANIZER
	req DELETE "/api/match/requests/$M" -t "$(token stranger)"
	expect_problem 404 NOT_FOUND
	req DELETE /api/match/requests/00000000-0000-4000-8000-000000000000 -t "$TOKEN"
	expect_problem 404 NOT_FOUND
	req DELETE "/api/match/requests/$M"
	expect_problem 401 UNAUTHORIZED
	[ "$(sql "SELECT status FROM match_requests")" = MATCHED ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "a match that has started, is confirmed or completed cannot be cancelled" {
	full_match '-10 minutes'
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect_problem 409 MATCH_STARTED
	sql "UPDATE match_requests SET status = 'OPEN'"
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect_problem 409 MATCH_STARTED
	sql "UPDATE match_requests SET status = 'CONFIRMED'"
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect_problem 409 INVALID_STATE
	sql "UPDATE match_requests SET status = 'COMPLETED'"
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect_problem 409 INVALID_STATE
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}
