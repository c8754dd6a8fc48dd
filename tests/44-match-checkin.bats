#!/usr/bin/env bats
# POST /api/match/requests/{id}/checkin?lat=&lng=&accuracy=: players of a full match check in
# at the venue around the start; when all have, the match is CONFIRMED.

load test_helper
load match_helper

TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
AT_VENUE='lat=40.4170&lng=-3.7040&accuracy=15'	# about 28 m from the venue (40.4168, -3.7038)

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
}

# checkin WHO QUERY: WHO checks in to $M.
checkin() {
	req POST "/api/match/requests/$M/checkin?$2" -t "$(token "$1")"
}

# checked_in: ids of the players of $M who have checked in, sorted.
checked_in() {
	sql "SELECT player_id FROM match_players
	      WHERE match_request_id = '$M' AND checked_in_at IS NOT NULL ORDER BY 1"
}

@test "a player of a full match checks in at the venue shortly before the start" {
	full_match '10 minutes'
	checkin p1 "$AT_VENUE"
	expect 204 -
	[ "$(checked_in)" = "$P1" ]
	[ "$(sql "SELECT checked_in_at BETWEEN now() - interval '1 minute' AND now() FROM match_players WHERE player_id = '$P1'")" = t ]
	[ "$(sql "SELECT status FROM match_requests")" = MATCHED ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
	req GET "/api/match/requests/$M" -t "$TOKEN"
	expect 200
	[ "$(jqr .status)" = MATCHED ]
	[ "$(jqr '.players | length')" = 4 ]
	[ "$(jqr '.players[] | select(.playerId == "'"$P1"'") | "\(.team) \(.role) \(.checkedIn)"')" = "TEAM_A PLAYER true" ]
	[ "$(jqr '.players[] | select(.playerId == "'"$P1"'") | .checkedInAt')" = "$(sql "SELECT api_ts(checked_in_at) FROM match_players WHERE player_id = '$P1'")" ]
	[[ $(jqr '.players[] | select(.playerId == "'"$P1"'") | .checkedInAt') =~ $TS_RE ]]
	[ "$(jqr '[.players[] | select(.playerId != "'"$P1"'") | "\(.checkedIn) \(.checkedInAt)"] | unique | join(",")')" = "false null" ]
}

@test "checking in again changes nothing" {
	full_match '10 minutes'
	checkin p1 "$AT_VENUE"
	expect 204 -
	first=$(sql "SELECT checked_in_at FROM match_players WHERE player_id = '$P1'")
	checkin p1 "$AT_VENUE"
	expect 204 -
	checkin p1 'lat=40.5&lng=-3.5&accuracy=500'
	expect 204 -
	[ "$(sql "SELECT checked_in_at FROM match_players WHERE player_id = '$P1'")" = "$first" ]
	[ "$(sql "SELECT status FROM match_requests")" = MATCHED ]
}

@test "when every player has checked in the match is CONFIRMED and all are told" {
	full_match '10 minutes'
	for p in org p1 p2; do
		checkin $p "$AT_VENUE"
		expect 204 -
	done
	[ "$(sql "SELECT status FROM match_requests")" = MATCHED ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
	checkin p3 'lat=40.4168&lng=-3.7038&accuracy=0'
	expect 204 -
	[ "$(sql "SELECT status FROM match_requests")" = CONFIRMED ]
	[ "$(checked_in)" = "$(printf '%s\n' "$ORG" "$P1" "$P2" "$P3" | LC_ALL=C sort)" ]
	[ "$(sql "SELECT recipient_id || ' ' || payload::text FROM notifications WHERE type = 'MATCH_CONFIRMED'" | LC_ALL=C sort)" = "$(printf "%s {\"matchRequestId\": \"$M\"}\n" "$ORG" "$P1" "$P2" "$P3" | LC_ALL=C sort)" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
	req GET "/api/match/requests/$M" -t "$(token p3)"
	expect 200
	[ "$(jqr .status)" = CONFIRMED ]
	[ "$(jqr '[.players[].checkedIn] | unique | join(",")')" = true ]
	# a CONFIRMED match still takes (repeated) check-ins, and tells nobody again
	checkin p3 "$AT_VENUE"
	expect 204 -
	[ "$(sql "SELECT count(*) FROM notifications")" = 4 ]
}

@test "a player who left does not count and cannot check in" {
	full_match '10 minutes'
	sql "UPDATE match_players SET left_at = now(), left_reason = 'ABSENT' WHERE player_id = '$P3'"
	checkin p3 "$AT_VENUE"
	expect_problem 404 NOT_FOUND
	[ "$(sql "SELECT count(*) FROM match_players WHERE checked_in_at IS NOT NULL")" = 0 ]
}

@test "more than the check-in radius from the venue is 409 TOO_FAR" {
	full_match '10 minutes'
	checkin p1 'lat=40.4300&lng=-3.7038&accuracy=10'
	expect_problem 409 TOO_FAR
	# about 222 m north: out; about 189 m: in
	checkin p1 'lat=40.4188&lng=-3.7038&accuracy=10'
	expect_problem 409 TOO_FAR
	[ "$(checked_in)" = "" ]
	checkin p1 'lat=40.4185&lng=-3.7038&accuracy=10'
	expect 204 -
	[ "$(checked_in)" = "$P1" ]
}

@test "a position less accurate than 100 m is 409 INACCURATE_POSITION" {
	full_match '10 minutes'
	checkin p1 'lat=40.4170&lng=-3.7040&accuracy=100.5'
	expect_problem 409 INACCURATE_POSITION
	[ "$(checked_in)" = "" ]
	checkin p1 'lat=40.4170&lng=-3.7040&accuracy=100'
	expect 204 -
	[ "$(checked_in)" = "$P1" ]
}

@test "check-in opens 30 minutes before the start and closes at the end" {
	full_match '2 hours'
	checkin p1 "$AT_VENUE"
	expect_problem 409 CHECKIN_TOO_EARLY
	sql "DELETE FROM payments; DELETE FROM match_players; DELETE FROM match_requests"
	full_match '-3 hours'
	checkin p1 "$AT_VENUE"
	expect_problem 409 CHECKIN_CLOSED
	sql "DELETE FROM payments; DELETE FROM match_players; DELETE FROM match_requests"
	full_match '29 minutes'
	checkin p1 "$AT_VENUE"
	expect 204 -
	[ "$(checked_in)" = "$P1" ]
}

@test "only a full match takes check-ins" {
	M=$(sql_match "$ORG" OPEN '10 minutes')
	checkin org "$AT_VENUE"
	expect_problem 409 INVALID_STATE
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER'"
	checkin org "$AT_VENUE"
	expect_problem 409 INVALID_STATE
	[ "$(checked_in)" = "" ]
}

@test "check-in needs a player of the match, a token and a valid position" {
	full_match '10 minutes'
	checkin stranger "$AT_VENUE"
	expect_problem 404 NOT_FOUND
	req POST "/api/match/requests/$M/checkin?$AT_VENUE"
	expect_problem 401 UNAUTHORIZED
	checkin p1 ''
	expect_problem 400 VALIDATION_FAILED lat lng accuracy
	checkin p1 'lat=91&lng=east&accuracy=-1'
	expect_problem 400 VALIDATION_FAILED lat lng accuracy
	[ "$(jqr '.errors | length')" = 3 ]
	checkin p1 'lat=40.4170&lng=-181&accuracy=5'
	expect_problem 400 VALIDATION_FAILED lng
	[ "$(checked_in)" = "" ]
}
