#!/usr/bin/env bats
# DELETE /api/match/requests/{id}/leave and POST /api/match/requests/{id}/absence: a joined
# player withdraws, refunded well ahead, replaced by substitutes late.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
}

# told TYPE: "recipient playerId" of every notification of TYPE, sorted.
told() {
	sql "SELECT recipient_id || ' ' || coalesce(payload->>'playerId', '-') FROM notifications
	      WHERE type = '$1' AND payload->>'matchRequestId' = '$M'" | LC_ALL=C sort
}

# sorted_lines ARGS...: one argument a line, sorted like told().
sorted_lines() {
	printf '%s\n' "$@" | LC_ALL=C sort
}

@test "a player leaving more than 48 hours ahead is refunded, the match reopens and the others are told" {
	full_match '72 hours'
	[ "$(sql "SELECT status || ' ' || team_a_count || ' ' || team_b_count FROM match_requests")" = "MATCHED 2 2" ]
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || team_a_count || ' ' || team_b_count FROM match_requests")" = "OPEN 2 1" ]
	[ "$(sql "SELECT left_reason || ' ' || (left_at IS NOT NULL) FROM match_players WHERE player_id = '$P2'")" = "LEFT true" ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_at IS NOT NULL")" = 1 ]
	# a refund of what was paid; the payment itself stays as it was
	[ "$(sql "SELECT player_id || ' ' || amount || ' ' || currency || ' ' || status FROM payments WHERE kind = 'REFUND'")" = "$P2 5.00 EUR REFUNDED" ]
	[ "$(sql "SELECT status FROM payments WHERE kind = 'PAYMENT' AND player_id = '$P2'")" = PAID ]
	[ "$(told PLAYER_LEFT)" = "$(sorted_lines "$ORG $P2" "$P1 $P2" "$P3 $P2")" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 3 ]

	# the match shows one free place; the player who left no longer sees it
	req GET "/api/match/requests/$M" -t "$TOKEN"
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(jqr .availableSlots)" = 1 ]
	[ "$(jqr '[.players[].playerId] | sort | join(" ")')" = "$(printf '%s\n' "$ORG" "$P1" "$P3" | LC_ALL=C sort | paste -sd ' ')" ]
	[ "$(jqr '.players[] | select(.playerId == "'"$P3"'") | "\(.team) \(.role) \(.checkedIn) \(.checkedInAt)"')" = "TEAM_B PLAYER false null" ]
	req GET "/api/match/requests/$M" -t "$(token p2)"
	expect_problem 404 NOT_FOUND
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	expect_problem 404 NOT_FOUND
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 1 ]
}

@test "leaving an OPEN match keeps it OPEN" {
	M=$(sql_match "$ORG" OPEN '5 days')
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_B
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || team_a_count || ' ' || team_b_count FROM match_requests")" = "OPEN 1 0" ]
	[ "$(told PLAYER_LEFT)" = "$ORG $P1" ]
}

@test "leaving 48 hours or less before the start is 409 LEAVE_TOO_LATE and changes nothing" {
	full_match '47 hours'
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)"
	expect_problem 409 LEAVE_TOO_LATE
	[ "$(sql "SELECT status FROM match_requests")" = MATCHED ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_at IS NULL")" = 4 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "the organizer cannot leave, strangers get 404, and a cancelled match cannot be left" {
	full_match '72 hours'
	req DELETE "/api/match/requests/$M/leave" -t "$TOKEN"
	expect_problem 409 ORGANIZER_CANNOT_LEAVE
	req DELETE "/api/match/requests/$M/leave" -t "$(token stranger)"
	expect_problem 404 NOT_FOUND
	req DELETE /api/match/requests/00000000-0000-4000-8000-000000000000/leave -t "$(token p1)"
	expect_problem 404 NOT_FOUND
	req DELETE "/api/match/requests/$M/leave"
	expect_problem 401 UNAUTHORIZED
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER'"
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)"
	expect_problem 409 INVALID_STATE
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_at IS NULL")" = 4 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "an absence well ahead: no refund, the others are told, substitutes are invited, reliability unchanged" {
	full_match '72 hours'
	sub=$(fixture_player sub INTERMEDIATE 40.43 -3.69)
	invited=$(fixture_player invited INTERMEDIATE 40.41 -3.70)
	fixture_player better ADVANCED 40.42 -3.70 >/dev/null
	fixture_player far INTERMEDIATE 41.3851 2.1734 >/dev/null
	sql "INSERT INTO invitations (match_request_id, player_id, kind, status)
	     VALUES ('$M', '$invited', 'INVITE', 'EXPIRED')"
	req POST "/api/match/requests/$M/absence" -t "$(token p2)"
	expect 204 -
	[ "$(sql "SELECT status || ' ' || team_a_count || ' ' || team_b_count FROM match_requests")" = "OPEN 2 1" ]
	[ "$(sql "SELECT left_reason || ' ' || (left_at IS NOT NULL) FROM match_players WHERE player_id = '$P2'")" = "ABSENT true" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
	[ "$(told PLAYER_ABSENT)" = "$(sorted_lines "$ORG $P2" "$P1 $P2" "$P3 $P2")" ]
	# substitutes: eligible, not invited before, never in the match (the absent player included)
	[ "$(sql "SELECT player_id || ' ' || kind || ' ' || status FROM invitations ORDER BY sent_at, kind")" = "$(printf '%s\n' "$invited INVITE EXPIRED" "$sub SUBSTITUTE PENDING")" ]
	[ "$(sql "SELECT recipient_id || ' ' || (payload->>'invitationId' = (SELECT id::text FROM invitations WHERE player_id = '$sub'))
	          FROM notifications WHERE type = 'SUBSTITUTE_INVITATION' AND payload->>'matchRequestId' = '$M'")" = "$sub true" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$P2'")" = 100 ]
	req GET "/api/match/requests/$M" -t "$(token p2)"
	expect_problem 404 NOT_FOUND
}

@test "an absence inside 24 hours of the start costs 10 reliability points, clamped at 0" {
	full_match '5 hours'
	sql "UPDATE players SET reliability_score = 95 WHERE user_id = '$P1'"
	sql "UPDATE players SET reliability_score = 4 WHERE user_id = '$P2'"
	sql "DELETE FROM players WHERE user_id = '$P3'"
	for p in p1 p2 p3; do
		req POST "/api/match/requests/$M/absence" -t "$(token $p)"
		expect 204 -
	done
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$P1'")" = 85 ]
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$P2'")" = 0 ]
	# a player without a profile gets one, starting from 100
	[ "$(sql "SELECT reliability_score || ' ' || (skill_level IS NULL) FROM players WHERE user_id = '$P3'")" = "90 true" ]
	[ "$(sql "SELECT player_id || ' ' || kind || ' ' || delta FROM reliability_events ORDER BY created_at, player_id" | LC_ALL=C sort)" = "$(sorted_lines "$P1 LATE_ABSENCE -10" "$P2 LATE_ABSENCE -10" "$P3 LATE_ABSENCE -10")" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
	[ "$(sql "SELECT status || ' ' || team_a_count || ' ' || team_b_count FROM match_requests")" = "OPEN 1 0" ]
	# the first absence told three players, the second two, the last one the organizer
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_ABSENT'")" = 6 ]
	[ "$(told PLAYER_ABSENT | grep -c "^$ORG ")" = 3 ]
}

@test "the organizer cannot report an absence, nor anyone after the start" {
	full_match '72 hours'
	req POST "/api/match/requests/$M/absence" -t "$TOKEN"
	expect_problem 409 ORGANIZER_CANNOT_LEAVE
	req POST "/api/match/requests/$M/absence" -t "$(token stranger)"
	expect_problem 404 NOT_FOUND
	req POST "/api/match/requests/$M/absence"
	expect_problem 401 UNAUTHORIZED
	sql "UPDATE match_requests SET status = 'CONFIRMED'"
	req POST "/api/match/requests/$M/absence" -t "$(token p1)"
	expect_problem 409 INVALID_STATE
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_at IS NULL")" = 4 ]

	started=$(sql_match "$ORG" MATCHED '-10 minutes')
	sql_join "$started" "$P1" TEAM_B
	req POST "/api/match/requests/$started/absence" -t "$(token p1)"
	expect_problem 409 MATCH_STARTED
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_at IS NOT NULL")" = 0 ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
}
