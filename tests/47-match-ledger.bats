#!/usr/bin/env bats
# The ledger over a player's whole history in a match: a payment per join, a refund per
# payment, and paid minus refunded equal to what the player owes at every point, whatever
# the order of joins, leaves, absences and the organizer's cancellation.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	TOKEN=$(token org)
	PTOKEN=$(token p1)
}

# balance PLAYER_ID: paid minus refunded by the player in $M.
balance() {
	sql "SELECT COALESCE(sum(CASE WHEN kind = 'PAYMENT' THEN amount ELSE -amount END), 0)
	       FROM payments WHERE match_request_id = '$M' AND player_id = '$1'
	        AND (kind = 'REFUND' OR status = 'PAID')"
}

join_link() {
	req POST "/api/match/join/$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")" \
		-t "$PTOKEN" -d '{"team":"TEAM_B"}'
}

@test "a player may leave, rejoin by the link and leave again: each join paid once and refunded once" {
	M=$(sql_match "$ORG" OPEN '5 days')
	join_link
	expect 200
	[ "$(balance "$P1")" = 5.00 ]
	req DELETE "/api/match/requests/$M/leave" -t "$PTOKEN"
	expect 204 -
	[ "$(balance "$P1")" = 0.00 ]
	join_link
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(balance "$P1")" = 5.00 ]
	req DELETE "/api/match/requests/$M/leave" -t "$PTOKEN"
	expect 204 -
	[ "$(balance "$P1")" = 0.00 ]

	# two joins, each with its own payment, each payment with its own refund
	[ "$(sql "SELECT count(*) FROM match_players WHERE player_id = '$P1' AND left_reason = 'LEFT'")" = 2 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE player_id = '$P1' AND kind = 'PAYMENT' AND status = 'PAID'")" = 2 ]
	[ "$(sql "SELECT count(DISTINCT entry_id) FROM payments WHERE player_id = '$P1' AND kind = 'PAYMENT'")" = 2 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE player_id = '$P1' AND kind = 'REFUND'")" = 2 ]
	refunds_ok
	# the organizer, who stayed, has paid exactly the share
	[ "$(balance "$ORG")" = 5.00 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_LEFT' AND recipient_id = '$ORG'")" = 2 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_JOINED' AND recipient_id = '$ORG'")" = 2 ]
}

@test "cancelling after a rejoin refunds every payment exactly once" {
	M=$(sql_match "$ORG" OPEN '5 days')
	join_link
	expect 200
	req DELETE "/api/match/requests/$M/leave" -t "$PTOKEN"
	expect 204 -
	join_link
	expect 200

	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED ORGANIZER" ]
	[ "$(balance "$P1")" = 0.00 ]
	[ "$(balance "$ORG")" = 0.00 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 3 ]
	[ "$(sql "SELECT count(*) FROM payments p WHERE kind = 'PAYMENT' AND status = 'PAID'
	           AND NOT EXISTS (SELECT 1 FROM payments r WHERE r.refund_of = p.id)")" = 0 ]
	refunds_ok
	# told once each, with what came back for the join they were in
	[ "$(sql "SELECT payload->>'refund' FROM notifications WHERE type = 'MATCH_CANCELLED' AND recipient_id = '$P1'")" = 5.00 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_CANCELLED'")" = 2 ]
	# a second cancel changes nothing
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 3 ]
}

@test "an absent player who rejoins and then leaves is refunded the second join only" {
	M=$(sql_match "$ORG" OPEN '5 days')
	join_link
	expect 200
	req POST "/api/match/requests/$M/absence" -t "$PTOKEN"
	expect 204 -
	# an absence keeps the payment: the place was given up late
	[ "$(balance "$P1")" = 5.00 ]
	join_link
	expect 200
	[ "$(balance "$P1")" = 10.00 ]
	req DELETE "/api/match/requests/$M/leave" -t "$PTOKEN"
	expect 204 -
	[ "$(balance "$P1")" = 5.00 ]
	[ "$(sql "SELECT mp.left_reason FROM payments r JOIN payments p ON p.id = r.refund_of
	           JOIN match_players mp ON mp.id = p.entry_id WHERE r.kind = 'REFUND'")" = LEFT ]
	refunds_ok
}

@test "every status change is one of match_transitions, recorded in order" {
	M=$(sql_match "$ORG" OPEN '5 days')
	P2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	P3=$(fixture_player p3 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P2" TEAM_A
	sql_join "$M" "$P3" TEAM_B
	join_link
	expect 200
	[ "$(jqr .status)" = MATCHED ]
	req DELETE "/api/match/requests/$M/leave" -t "$PTOKEN"
	expect 204 -
	req DELETE "/api/match/requests/$M" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT string_agg(from_status || '>' || event || '>' || to_status, ' ' ORDER BY id)
	           FROM match_status_changes WHERE match_request_id = '$M'")" = \
		"OPEN>JOIN>MATCHED MATCHED>LEAVE>OPEN OPEN>CANCEL>CANCELLED" ]
	[ "$(sql "SELECT count(*) FROM match_status_changes c
	           LEFT JOIN match_transitions t USING (from_status, event, to_status)
	          WHERE t.event IS NULL")" = 0 ]
}
