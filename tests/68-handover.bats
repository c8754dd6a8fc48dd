#!/usr/bin/env bats
# Hand-over of a place (sql/areas/65_places.sql): an absence or a leave naming
# {"substitutePlayerId"} gives the freed place to that player first, as an invitation of kind
# HANDOVER; when it lapses or is declined the place goes to the waiting list, then to ordinary
# invitations. Whoever takes and pays the place until 2 hours before the start refunds the
# leaver in full, and a late absence then costs no reliability.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	SUB=$(fixture_player sub INTERMEDIATE 40.42 -3.70)
	W1=$(fixture_player w1 INTERMEDIATE 40.42 -3.70)
}

# absent PLAYER BODY: PLAYER reports absence from $M with BODY; 204 expected.
absent() {
	req POST "/api/match/requests/$M/absence" -t "$(token "$1")" -d "$2"
	expect 204 -
}

# handover: "status late_penalty event team" of $M's hand-over.
handover() {
	sql "SELECT status || ' ' || late_penalty || ' ' || event || ' ' || team
	       FROM match_handovers WHERE match_request_id = '$M'"
}

# refunds_of PLAYER_ID: "amount refunded-payment" of each refund of the player in $M.
refunds_of() {
	sql "SELECT r.amount || ' ' || r.refund_of FROM payments r
	      WHERE r.match_request_id = '$M' AND r.player_id = '$1' AND r.kind = 'REFUND'"
}

# paid_by PLAYER_ID: the id of the player's payment in $M (their only join).
paid_by() {
	sql "SELECT id FROM payments WHERE match_request_id = '$M' AND player_id = '$1'
	        AND kind = 'PAYMENT'"
}

# accept PLAYER TEAM: PLAYER accepts their invitation to $M into TEAM; 200 expected.
accept() {
	local inv
	inv=$(sql "SELECT i.id FROM invitations i JOIN users u ON u.id = i.player_id
	            WHERE i.match_request_id = '$M' AND u.subject = '$1'")
	req POST "/api/match/invitations/$inv/accept" -t "$(token "$1")" -d "{\"team\": \"$2\"}"
	expect 200
}

@test "a late absence naming a substitute hands them the place, exclusively, and defers the penalty" {
	full_match '20 hours'
	req POST "/api/match/requests/$M/waitlist" -t "$(token w1)" -d '{"team": "ANY"}'
	expect 201
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	[ "$(invitation_of "$SUB")" = "HANDOVER PENDING TEAM_B" ]
	[ "$(sql "SELECT expires_at - sent_at FROM invitations WHERE player_id = '$SUB'")" = 00:15:00 ]
	[ "$(handover)" = "OPEN true ABSENCE TEAM_B" ]
	[ "$(sql "SELECT window_ends_at = (SELECT starts_at FROM match_requests WHERE id = '$M') - interval '2 hours'
	            FROM match_handovers")" = t ]
	# the place is the substitute's: not offered to the waiting list, no substitutes invited
	[ "$(counters)" = "OPEN 01 21" ]
	[ "$(invitation_of "$W1")" = "" ]
	[ "$(sql "SELECT count(*) FROM invitations WHERE kind = 'SUBSTITUTE'")" = 0 ]
	# the penalty waits for the hand-over; no refund yet
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	[ "$(refunds_of "$P2")" = "" ]
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$SUB'")
	[ "$(sql "SELECT payload::text FROM notifications WHERE recipient_id = '$SUB'")" = \
		"$(sql "SELECT jsonb_build_object('matchRequestId', '$M', 'invitationId', '$inv',
		                                  'team', 'TEAM_B', 'expiresAt', api_ts(expires_at),
		                                  'fromPlayerId', '$P2')::text
		          FROM invitations WHERE id = '$inv'")" ]
	[ "$(sql "SELECT type FROM notifications WHERE recipient_id = '$SUB'")" = HANDOVER_OFFERED ]
	req GET /api/match/invitations -t "$(token sub)"
	expect 200
	[ "$(jqr -c '[.[] | {id, kind, status, team, matchStatus, availableSlots}]')" = \
		"[{\"id\":\"$inv\",\"kind\":\"HANDOVER\",\"status\":\"PENDING\",\"team\":\"TEAM_B\",\"matchStatus\":\"OPEN\",\"availableSlots\":0}]" ]
	# nobody else takes it, by the link or into it
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	req POST "/api/match/join/$token_m" -t "$(token w1)" -d '{"team": "TEAM_B"}'
	expect_problem 409 TEAM_FULL
	req POST "/api/match/join/$token_m" -t "$(token sub)" -d '{"team": "TEAM_A"}'
	expect_problem 409 OFFER_FOR_OTHER_TEAM
	[ "$(counters)" = "OPEN 01 21" ]
}

@test "the substitute taking the place refunds the absent player in full and lifts the late penalty" {
	full_match '20 hours'
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	accept sub TEAM_B
	[ "$(jqr .status)" = MATCHED ]
	[ "$(counters)" = "MATCHED 00 22" ]
	[ "$(invitation_of "$SUB")" = "HANDOVER ACCEPTED TEAM_B" ]
	# the refund names the absent player's payment, once; the substitute paid their share
	[ "$(refunds_of "$P2")" = "5.00 $(paid_by "$P2")" ]
	[ "$(sql "SELECT amount || ' ' || status FROM payments WHERE player_id = '$SUB'")" = "5.00 PAID" ]
	[ "$(handover)" = "REFILLED true ABSENCE TEAM_B" ]
	[ "$(sql "SELECT refill_entry_id = (SELECT id FROM match_players WHERE player_id = '$SUB')
	            FROM match_handovers")" = t ]
	[ "$(sql "SELECT type || ' ' || payload::text FROM notifications
	           WHERE recipient_id = '$P2' AND type = 'PLACE_HANDED_OVER'")" = \
		"PLACE_HANDED_OVER {\"refund\": \"5.00\", \"playerId\": \"$SUB\", \"matchRequestId\": \"$M\"}" ]
	# the window closing later changes nothing: no penalty, no second refund
	sql "UPDATE match_handovers SET window_ends_at = now() - interval '1 second'" >/dev/null
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$P2'")" = 100 ]
	[ "$(refunds_of "$P2")" = "5.00 $(paid_by "$P2")" ]
	# the ledger: every payment refunded at most once, and what the players hold is what they paid for
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 1 ]
	[ "$(sql "SELECT sum(CASE kind WHEN 'PAYMENT' THEN amount ELSE -amount END) FROM payments
	           WHERE match_request_id = '$M'")" = 20.00 ]
}

@test "a lapsed hand-over goes to the waiting list, and whoever takes the place in time refunds the leaver" {
	full_match '20 hours'
	req POST "/api/match/requests/$M/waitlist" -t "$(token w1)" -d '{"team": "TEAM_B"}'
	expect 201
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	sql "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE player_id = '$SUB'" >/dev/null
	# without the sweeper: the next write of the match passes it on (here: the substitute's late accept)
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$SUB'")
	req POST "/api/match/invitations/$inv/accept" -t "$(token sub)" -d '{"team": "TEAM_B"}'
	expect_problem 409 INVALID_STATE
	[ "$(invitation_of "$SUB")" = "HANDOVER EXPIRED TEAM_B" ]
	[ "$(invitation_of "$W1")" = "OFFER PENDING TEAM_B" ]
	# the waiting list took its turn, so no ordinary invitations went out
	[ "$(sql "SELECT count(*) FROM invitations WHERE kind = 'SUBSTITUTE'")" = 0 ]
	[ "$(handover)" = "OPEN true ABSENCE TEAM_B" ]
	accept w1 TEAM_B
	[ "$(jqr .status)" = MATCHED ]
	[ "$(handover)" = "REFILLED true ABSENCE TEAM_B" ]
	[ "$(refunds_of "$P2")" = "5.00 $(paid_by "$P2")" ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
}

@test "a declined hand-over with nobody waiting goes to ordinary substitute invitations" {
	full_match '3 days'
	NEAR=$(fixture_player near INTERMEDIATE 40.42 -3.70)
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	[ "$(sql "SELECT count(*) FROM invitations WHERE kind = 'SUBSTITUTE'")" = 0 ]
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$SUB'")
	req POST "/api/match/invitations/$inv/decline" -t "$(token sub)"
	expect 204 -
	[ "$(invitation_of "$SUB")" = "HANDOVER DECLINED TEAM_B" ]
	[ "$(counters)" = "OPEN 00 21" ]
	# eligible players not in the match nor invited yet: near and w1 (not p2, who played)
	[ "$(sql "SELECT string_agg(u.subject || ':' || i.kind || ':' || i.status, ',' ORDER BY u.subject)
	            FROM invitations i JOIN users u ON u.id = i.player_id
	           WHERE i.match_request_id = '$M' AND i.kind = 'SUBSTITUTE'")" = \
		"near:SUBSTITUTE:PENDING,w1:SUBSTITUTE:PENDING" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE recipient_id = '$NEAR'
	             AND type = 'SUBSTITUTE_INVITATION'")" = 1 ]
	# an absence three days ahead is not late: no penalty is waiting
	[ "$(handover)" = "OPEN false ABSENCE TEAM_B" ]
	accept near TEAM_B
	[ "$(handover)" = "REFILLED false ABSENCE TEAM_B" ]
	[ "$(refunds_of "$P2")" = "5.00 $(paid_by "$P2")" ]
}

@test "a hand-over window that closes unfilled costs the late penalty then, by the sweeper or the next write" {
	full_match '20 hours'
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	sql "UPDATE match_handovers SET window_ends_at = now() - interval '1 second'" >/dev/null
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[ "$(handover)" = "LAPSED true ABSENCE TEAM_B" ]
	[ "$(sql "SELECT kind || ' ' || delta FROM reliability_events WHERE player_id = '$P2'")" = "LATE_ABSENCE -10" ]
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$P2'")" = 90 ]
	# the substitute may still come (their invitation is open), but the leaver is not refunded
	accept sub TEAM_B
	[ "$(refunds_of "$P2")" = "" ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 1 ]
	# without the sweeper, any write of the match closes a window: here a join by the link
	M2=$(sql_match "$ORG" MATCHED '23 hours')
	P5=$(fixture_player p5 INTERMEDIATE 40.42 -3.70)
	sql_join "$M2" "$P1" TEAM_A
	sql_join "$M2" "$P5" TEAM_B
	sql_join "$M2" "$P3" TEAM_B
	req POST "/api/match/requests/$M2/absence" -t "$(token p5)" -d "{\"substitutePlayerId\": \"$W1\"}"
	expect 204 -
	sql "UPDATE match_handovers SET window_ends_at = now() - interval '1 second'
	      WHERE match_request_id = '$M2'" >/dev/null
	sql "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE player_id = '$W1'" >/dev/null
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M2'")
	req POST "/api/match/join/$token_m" -t "$(token latecomer)" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(sql "SELECT status FROM match_handovers WHERE match_request_id = '$M2'")" = LAPSED ]
	[ "$(sql "SELECT kind FROM reliability_events WHERE player_id = '$P5'")" = LATE_ABSENCE ]
	[ "$(sql "SELECT count(*) FROM payments WHERE player_id = '$P5' AND kind = 'REFUND'")" = 0 ]
}

@test "every closed hand-over window is settled, however small the sweeper's batch, when no offer lapses" {
	# two matches whose substitutes declined: each has only its window left to close, so the
	# offers rule settles a match without an offer lapsing; batches of one must go on to the
	# second
	full_match '20 hours'
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	M1=$M
	M=$(sql_match "$ORG" MATCHED '23 hours')
	P5=$(fixture_player p5 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_A
	sql_join "$M" "$P5" TEAM_B
	sql_join "$M" "$P3" TEAM_B
	absent p5 "{\"substitutePlayerId\": \"$W1\"}"
	for who in sub w1; do
		inv=$(sql "SELECT i.id FROM invitations i JOIN users u ON u.id = i.player_id
		            WHERE i.kind = 'HANDOVER' AND u.subject = '$who'")
		req POST "/api/match/invitations/$inv/decline" -t "$(token "$who")"
		expect 204 -
	done
	sql "UPDATE match_handovers SET window_ends_at = now() - interval '1 second'" >/dev/null
	run --separate-stderr env SWEEP_BATCH=1 "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ $output == *" offers_lapsed=0 "* ]]
	[ "$(sql "SELECT string_agg(status || ' ' || late_penalty, ',') FROM match_handovers")" = \
		"LAPSED true,LAPSED true" ]
	[ "$(sql "SELECT string_agg(kind || ' ' || match_request_id, ',' ORDER BY match_request_id)
	            FROM reliability_events")" = \
		"$(sql "SELECT string_agg('LATE_ABSENCE ' || id, ',' ORDER BY id) FROM match_requests
		         WHERE id IN ('$M1', '$M')")" ]
	# a second run finds nothing left
	run --separate-stderr env SWEEP_BATCH=1 "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 2 ]
}

@test "an absence after the hand-over window still invites the substitute, with the penalty at once and no refund" {
	full_match '90 minutes'
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	[ "$(invitation_of "$SUB")" = "HANDOVER PENDING TEAM_B" ]
	[ "$(handover)" = "LAPSED false ABSENCE TEAM_B" ]
	[ "$(sql "SELECT kind FROM reliability_events WHERE player_id = '$P2'")" = LATE_ABSENCE ]
	accept sub TEAM_B
	[ "$(jqr .status)" = MATCHED ]
	[ "$(refunds_of "$P2")" = "" ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 1 ]
}

@test "a leave naming a substitute is refunded once, when it happens, and hands the place over" {
	full_match '4 days'
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)" -d "{\"substitutePlayerId\": \"$SUB\"}"
	expect 204 -
	[ "$(refunds_of "$P1")" = "5.00 $(paid_by "$P1")" ]
	[ "$(invitation_of "$SUB")" = "HANDOVER PENDING TEAM_A" ]
	[ "$(handover)" = "OPEN false LEAVE TEAM_A" ]
	[ "$(counters)" = "OPEN 10 12" ]
	accept sub TEAM_A
	[ "$(handover)" = "REFILLED false LEAVE TEAM_A" ]
	[ "$(refunds_of "$P1")" = "5.00 $(paid_by "$P1")" ]
	[ "$(sql "SELECT payload->>'refund' IS NULL FROM notifications
	           WHERE recipient_id = '$P1' AND type = 'PLACE_HANDED_OVER'")" = t ]
	# a leave without a body behaves as before
	req DELETE "/api/match/requests/$M/leave" -t "$(token p3)"
	expect 204 -
	[ "$(sql "SELECT count(*) FROM match_handovers")" = 1 ]
}

@test "a substitute that is unknown, the caller, busy or malformed is refused and nothing is written" {
	full_match '20 hours'
	# w1 plays at that time on another court
	OTHER=$(COURT=$(fixture_court "$VENUE" 90) sql_match_beside "$M" "$ORG" OPEN)
	sql_join "$OTHER" "$W1" TEAM_B
	for body in '{"substitutePlayerId": "nope"}' '{"substitutePlayerId": 7}' \
		"{\"substitutePlayerId\": \"$P2\"}"; do
		req POST "/api/match/requests/$M/absence" -t "$(token p2)" -d "$body"
		expect_problem 400 VALIDATION_FAILED substitutePlayerId
	done
	req POST "/api/match/requests/$M/absence" -t "$(token p2)" \
		-d '{"substitutePlayerId": "00000000-0000-4000-8000-000000000000"}'
	expect_problem 404 SUBSTITUTE_NOT_FOUND
	for busy in "$P3" "$W1"; do
		req POST "/api/match/requests/$M/absence" -t "$(token p2)" -d "{\"substitutePlayerId\": \"$busy\"}"
		expect_problem 409 SUBSTITUTE_UNAVAILABLE
	done
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)" -d '[1]'
	expect_problem 400 MALFORMED_JSON
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)" -d "{\"substitutePlayerId\": \"$SUB\"}" \
		-H 'Content-Type: text/plain'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	# nothing half-written: everyone still plays, no invitation, hand-over, notice or penalty
	[ "$(counters)" = "MATCHED 00 22" ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	[ "$(sql "SELECT count(*) FROM match_handovers")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	# a null substitute is no substitute
	absent p2 '{"substitutePlayerId": null}'
	[ "$(sql "SELECT count(*) FROM match_handovers")" = 0 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 1 ]
}

@test "a repeated absence with its Idempotency-Key answers the same, another body under the key is 422" {
	full_match '3 days'
	req POST "/api/match/requests/$M/absence" -t "$(token p2)" -H 'Idempotency-Key: gone-1' \
		-d "{\"substitutePlayerId\": \"$SUB\"}"
	expect 204 -
	req POST "/api/match/requests/$M/absence" -t "$(token p2)" -H 'Idempotency-Key: gone-1' \
		-d "{\"substitutePlayerId\": \"$SUB\"}"
	expect 204 -
	req POST "/api/match/requests/$M/absence" -t "$(token p2)" -H 'Idempotency-Key: gone-1' \
		-d "{\"substitutePlayerId\": \"$W1\"}"
	expect_problem 422 IDEMPOTENCY_KEY_REUSED
	[ "$(sql "SELECT count(*) FROM match_handovers")" = 1 ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 1 ]
}

@test "a lapsing hand-over rushed by its substitute and ten others has one taker and one refund" {
	full_match '20 hours'
	absent p2 "{\"substitutePlayerId\": \"$SUB\"}"
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$SUB'")
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	sql "UPDATE invitations SET expires_at = now() + interval '300 milliseconds' WHERE id = '$inv'" >/dev/null
	sleep 0.25
	for k in $(seq 1 10); do
		curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(token "rush$k")" \
			-H 'Content-Type: application/json' --data-binary '{"team": "TEAM_B"}' \
			"$BASE_URL/api/match/join/$token_m" >"$BATS_TEST_TMPDIR/rush$k" &
	done
	curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(token sub)" \
		-H 'Content-Type: application/json' --data-binary '{"team": "TEAM_B"}' \
		"$BASE_URL/api/match/invitations/$inv/accept" >"$BATS_TEST_TMPDIR/sub" &
	wait
	[ "$(cat "$BATS_TEST_TMPDIR"/rush* "$BATS_TEST_TMPDIR/sub" | sort | uniq -c | tr -s ' ')" = \
		"$(printf ' 1 200\n 10 409')" ]
	[ "$(counters)" = "MATCHED 00 22" ]
	[ "$(handover)" = "REFILLED true ABSENCE TEAM_B" ]
	[ "$(refunds_of "$P2")" = "5.00 $(paid_by "$P2")" ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	# the one who got in is the one who paid, and the one the hand-over names
	[ "$(sql "SELECT count(*) FROM payments WHERE match_request_id = '$M' AND kind = 'PAYMENT'")" = 5 ]
	[ "$(sql "SELECT mp.player_id FROM match_handovers h JOIN match_players mp ON mp.id = h.refill_entry_id")" = \
		"$(sql "SELECT player_id FROM match_players WHERE match_request_id = '$M' AND team = 'TEAM_B'
		          AND left_at IS NULL AND player_id <> '$P3'")" ]
}
