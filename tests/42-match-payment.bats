#!/usr/bin/env bats
# POST /api/match/requests/{id}/confirm-payment: the organizer pays within the window, the
# match opens and the eligible players nearby are invited; a lapsed hold frees the slot.

load test_helper
load match_helper

TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
	DAY=$(weekday_date 3)
}

# create_body [JQ_FILTER]: a valid body for $COURT on $DAY at 18:30, players searched within
# 5 km of (40.42, -3.70), changed by the filter.
create_body() {
	jq -nc --arg r "$COURT" --arg d "$DAY" '{resourceId: $r, bookingDate: $d,
		startTime: "18:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70,
		searchRadiusKm: 5} | '"${1:-.}"
}

# create [BASE_URL]: the organizer holds the slot; sets MATCH.
create() {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)" ${1:+-b "$1"}
	expect 201
	MATCH=$(jqr .id)
}

# ids of the players who may be invited, and of those who may not, around (40.42, -3.70)
neighbours() {
	ELIGIBLE=$( {
		fixture_player near1 INTERMEDIATE 40.43 -3.69
		fixture_player near2 INTERMEDIATE 40.40 -3.72
		id=$(fixture_player was-banned INTERMEDIATE 40.42 -3.71)
		sql "UPDATE players SET banned_until = now() - interval '1 day' WHERE user_id = '$id'"
		echo "$id"
		id=$(fixture_player just-reliable INTERMEDIATE 40.41 -3.70)
		sql "UPDATE players SET reliability_score = 50 WHERE user_id = '$id'"
		echo "$id"
	} | LC_ALL=C sort)
	fixture_player better ADVANCED 40.42 -3.70 >/dev/null
	fixture_player far INTERMEDIATE 41.3851 2.1734 >/dev/null
	fixture_player just-outside INTERMEDIATE 40.4700 -3.70 >/dev/null
	id=$(fixture_player banned INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET banned_until = now() + interval '20 days' WHERE user_id = '$id'"
	id=$(fixture_player unreliable INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET reliability_score = 49 WHERE user_id = '$id'"
	id=$(fixture_player quiet INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET match_notifications = false WHERE user_id = '$id'"
	user_id no-profile >/dev/null
	id=$(fixture_player homeless INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET home_latitude = NULL, home_longitude = NULL WHERE user_id = '$id'"
}

@test "confirming the payment opens the match, marks the payment PAID and invites exactly the eligible players" {
	neighbours
	create
	created=$HTTP_BODY
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN"
	expect 200
	[ "$(jqr .id)" = "$MATCH" ]
	[ "$(jqr .status)" = OPEN ]
	# everything else is as it was when created, but the organizer's own share: paid
	[ "$(jqr -S 'del(.status, .myPayment)')" = "$(jq -S 'del(.status, .myPayment)' <<<"$created")" ]
	[ "$(jqr -c '.myPayment | [.status, .amount, .currency, .expiresAt, .clientSecret]')" = '["PAID",5,"EUR",null,null]' ]
	[ "$(jq -c '.myPayment | [.status, .expiresAt == $created.expiresAt]' --argjson created "$created" <<<"$created")" = '["PENDING",true]' ]
	[ "$(jqr .availableSlots)" = 3 ]
	[[ $(jqr .expiresAt) =~ $TS_RE ]]
	[ "$(jqr '.players | length')" = 1 ]
	[ "$(jqr '.players[0] | "\(.playerId) \(.team) \(.role) \(.checkedIn) \(.checkedInAt)"')" = "$ORG TEAM_A ORGANIZER false null" ]
	[[ $(jqr '.players[0].joinedAt') =~ $TS_RE ]]

	[ "$(sql "SELECT status FROM match_requests WHERE id = '$MATCH'")" = OPEN ]
	[ "$(sql "SELECT player_id || ' ' || kind || ' ' || amount || ' ' || status FROM payments")" = "$ORG PAYMENT 5.00 PAID" ]
	# invited: the eligible players, nobody else, and never the organizer
	[ "$(sql "SELECT player_id FROM invitations ORDER BY player_id")" = "$ELIGIBLE" ]
	[ "$(sql "SELECT DISTINCT match_request_id || ' ' || kind || ' ' || status
	              || ' ' || (responded_at IS NULL) || ' ' || (sent_at IS NOT NULL) FROM invitations")" = "$MATCH INVITE PENDING true true" ]
	# one MATCH_INVITATION per invitation, to the invited player, naming both
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
	[ "$(sql "SELECT count(*) FROM notifications n
	          JOIN invitations i ON i.id::text = n.payload->>'invitationId' AND i.player_id = n.recipient_id
	         WHERE n.type = 'MATCH_INVITATION' AND n.payload->>'matchRequestId' = '$MATCH'
	           AND (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(n.payload) k)
	               = ARRAY['invitationId', 'matchRequestId']
	           AND n.read_at IS NULL AND n.delivered_at IS NULL")" = 4 ]
}

@test "a body sent with the confirmation is ignored" {
	create
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN" -d '{"providerReference":"pi_123"}'
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(sql "SELECT status || ' ' || coalesce(provider_ref, '-') FROM payments")" = "PAID -" ]
}

@test "nobody eligible: the match opens and nobody is invited or told" {
	fixture_player better ADVANCED 40.42 -3.70 >/dev/null
	create
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN"
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "confirming twice is 409 INVALID_STATE and invites nobody again" {
	neighbours
	create
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN"
	expect 200
	fixture_player latecomer INTERMEDIATE 40.42 -3.70 >/dev/null
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN"
	expect_problem 409 INVALID_STATE
	[ "$(sql "SELECT count(*) FROM invitations")" = 4 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
	[ "$(sql "SELECT count(*) || ' ' || min(status) FROM payments")" = "1 PAID" ]
}

@test "only the organizer confirms: another player gets 403, a stranger and an unknown id 404" {
	create
	mate=$(fixture_player mate INTERMEDIATE 40.42 -3.70)
	sql "INSERT INTO match_players (match_request_id, player_id, team, role)
	     VALUES ('$MATCH', '$mate', 'TEAM_B', 'PLAYER')"
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$(token mate)"
	expect_problem 403 NOT_ORGANIZER
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$(token stranger)"
	expect_problem 404 NOT_FOUND
	req POST /api/match/requests/00000000-0000-4000-8000-000000000000/confirm-payment -t "$TOKEN"
	expect_problem 404 NOT_FOUND
	req POST /api/match/requests/not-a-uuid/confirm-payment -t "$TOKEN"
	expect_problem 400 VALIDATION_FAILED id
	req POST "/api/match/requests/$MATCH/confirm-payment"
	expect_problem 401 UNAUTHORIZED
	[ "$(sql "SELECT status FROM match_requests")" = PENDING_PAYMENT ]
	[ "$(sql "SELECT status FROM payments")" = PENDING ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "confirming after the payment window is 409 PAYMENT_WINDOW_PASSED and cancels the hold" {
	neighbours
	create
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN"
	expect_problem 409 PAYMENT_WINDOW_PASSED
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED PAYMENT_EXPIRED" ]
	[ "$(sql "SELECT kind || ' ' || status FROM payments")" = "PAYMENT CANCELLED" ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	[ "$(sql "SELECT recipient_id || ' ' || type || ' ' || payload::text FROM notifications")" = "$ORG PAYMENT_EXPIRED {\"matchRequestId\": \"$MATCH\"}" ]
	# asking again changes nothing more
	req POST "/api/match/requests/$MATCH/confirm-payment" -t "$TOKEN"
	expect_problem 409 PAYMENT_WINDOW_PASSED
	[ "$(sql "SELECT count(*) FROM notifications")" = 1 ]
	req GET "/api/match/requests/$MATCH" -t "$TOKEN"
	expect 200
	[ "$(jqr .status)" = CANCELLED ]
}

@test "a hold lapses after PAYMENT_HOLD_SECONDS: the slot is free again and goes to the next player" {
	url=$(extra_apache hold PAYMENT_HOLD_SECONDS=2)
	create "$url"
	old=$MATCH
	[ "$(sql "SELECT expires_at - created_at FROM match_requests WHERE id = '$old'")" = 00:00:02 ]
	deadline=$((SECONDS + 20))
	until [ "$(sql "SELECT expires_at <= now() FROM match_requests WHERE id = '$old'")" = t ]; do
		[ $SECONDS -lt $deadline ] || { echo "the hold never lapsed" >&2; return 1; }
		sleep 0.2
	done
	# free again although nothing has touched the row yet
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$old'")" = PENDING_PAYMENT ]
	[ "$(sql "SELECT available FROM resource_slots('$COURT', '$DAY') WHERE start_time = '18:30'")" = t ]

	next=$(fixture_player next INTERMEDIATE 40.42 -3.70)
	req POST /api/match/requests -t "$(token next)" -d "$(create_body)"
	expect 201
	new=$(jqr .id)
	[ "$(jqr .status)" = PENDING_PAYMENT ]
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests WHERE id = '$old'")" = "CANCELLED PAYMENT_EXPIRED" ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$new'")" = PENDING_PAYMENT ]
	[ "$(sql "SELECT status FROM payments WHERE match_request_id = '$old'")" = CANCELLED ]
	[ "$(sql "SELECT player_id || ' ' || status FROM payments WHERE match_request_id = '$new'")" = "$next PENDING" ]
	[ "$(sql "SELECT recipient_id || ' ' || type || ' ' || (payload->>'matchRequestId') FROM notifications")" = "$ORG PAYMENT_EXPIRED $old" ]

	req POST "/api/match/requests/$old/confirm-payment" -t "$TOKEN"
	expect_problem 409 PAYMENT_WINDOW_PASSED
	[ "$(sql "SELECT count(*) FROM notifications")" = 1 ]
	# the new holder pays in time
	req POST "/api/match/requests/$new/confirm-payment" -t "$(token next)"
	expect 200
	[ "$(jqr .status)" = OPEN ]
}
