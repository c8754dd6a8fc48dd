#!/usr/bin/env bats
# The waiting list of a full match (POST and DELETE /api/match/requests/{id}/waitlist) and its
# exclusive timed offers: a freed place goes to the first free player on the list, as an
# invitation of kind OFFER that nobody else can take until it is accepted, declined or lapses
# (sql/areas/65_places.sql).

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	# a full doubles match four days ahead: org and p1 in TEAM_A, p2 and p3 in TEAM_B
	full_match '4 days'
	W1=$(fixture_player w1 INTERMEDIATE 40.42 -3.70)
	W2=$(fixture_player w2 INTERMEDIATE 40.42 -3.70)
	W3=$(fixture_player w3 INTERMEDIATE 40.42 -3.70)
}

# wait_for SUB TEAM: the player SUB joins the waiting list of $M for TEAM; 201 expected.
wait_for() {
	req POST "/api/match/requests/$M/waitlist" -t "$(token "$1")" -d "{\"team\": \"$2\"}"
	expect 201
}

# entry_of PLAYER_ID: the ended reason of the player's latest entry on $M's list ("-" while waiting).
entry_of() {
	sql "SELECT coalesce(ended_reason, '-') FROM match_waitlist
	      WHERE match_request_id = '$M' AND player_id = '$1' ORDER BY joined_at DESC LIMIT 1"
}

@test "joining the waiting list answers 201 with the entry and its place in line" {
	wait_for w1 TEAM_B
	[ "$(jqr 'keys_unsorted | join(",")')" = matchRequestId,playerId,team,position,joinedAt ]
	[ "$(jqr .matchRequestId)" = "$M" ]
	[ "$(jqr .playerId)" = "$W1" ]
	[ "$(jqr .team)" = TEAM_B ]
	[ "$(jqr .position)" = 1 ]
	[[ $(jqr .joinedAt) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z$ ]]
	wait_for w2 ANY
	[ "$(jqr .position)" = 2 ]
	wait_for w3 TEAM_A
	[ "$(jqr .position)" = 3 ]
	# the match shows how long the list is; nothing else about the match changed
	req GET "/api/match/requests/$M" -t "$(token org)"
	expect 200
	[ "$(jqr .waitlistLength)" = 3 ]
	[ "$(jqr .status)" = MATCHED ]
	[ "$(jqr .availableSlots)" = 0 ]
	[ "$(sql "SELECT string_agg(u.subject || ':' || w.team, ',' ORDER BY w.joined_at, w.id)
	            FROM match_waitlist w JOIN users u ON u.id = w.player_id
	           WHERE w.ended_at IS NULL")" = w1:TEAM_B,w2:ANY,w3:TEAM_A ]
}

@test "the waiting list refuses an open match, a player in it, a second entry, a started match and bad input" {
	wait_for w1 TEAM_B
	req POST "/api/match/requests/$M/waitlist" -t "$(token w1)" -d '{"team": "ANY"}'
	expect_problem 409 ALREADY_WAITING
	req POST "/api/match/requests/$M/waitlist" -t "$(token p2)" -d '{"team": "ANY"}'
	expect_problem 409 ALREADY_IN_MATCH
	for team in '"TEAM_C"' null 3; do
		req POST "/api/match/requests/$M/waitlist" -t "$(token w2)" -d "{\"team\": $team}"
		expect_problem 400 VALIDATION_FAILED team
	done
	req POST "/api/match/requests/$M/waitlist" -t "$(token w2)" -d '{}'
	expect_problem 400 VALIDATION_FAILED team
	req POST /api/match/requests/00000000-0000-4000-8000-000000000000/waitlist -t "$(token w2)" \
		-d '{"team": "ANY"}'
	expect_problem 404 NOT_FOUND
	open=$(sql_match "$ORG" OPEN '5 days')
	req POST "/api/match/requests/$open/waitlist" -t "$(token w2)" -d '{"team": "ANY"}'
	expect_problem 409 MATCH_NOT_FULL
	started=$(sql_match "$ORG" MATCHED '-10 minutes')
	req POST "/api/match/requests/$started/waitlist" -t "$(token w2)" -d '{"team": "ANY"}'
	expect_problem 409 MATCH_STARTED
	[ "$(sql "SELECT count(*) FROM match_waitlist")" = 1 ]
}

@test "leaving the waiting list moves the others up; leaving it twice is 404" {
	wait_for w1 TEAM_B
	wait_for w2 ANY
	req DELETE "/api/match/requests/$M/waitlist" -t "$(token w1)"
	expect 204 -
	[ "$(entry_of "$W1")" = LEFT ]
	req DELETE "/api/match/requests/$M/waitlist" -t "$(token w1)"
	expect_problem 404 NOT_FOUND
	# w2 is first now, and w1 may queue again, behind
	wait_for w1 TEAM_B
	[ "$(jqr .position)" = 2 ]
	req GET "/api/match/requests/$M" -t "$(token org)"
	[ "$(jqr .waitlistLength)" = 2 ]
}

@test "a freed place is offered to the first player waiting for its team, and only they can take it" {
	wait_for w1 TEAM_A
	wait_for w2 TEAM_B
	wait_for w3 ANY
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	expect 204 -
	# w2 waits for TEAM_B (w1 for TEAM_A only): the offer is w2's, and w2 leaves the list
	[ "$(invitation_of "$W2")" = "OFFER PENDING TEAM_B" ]
	[ "$(invitation_of "$W1")" = "" ]
	[ "$(entry_of "$W2")" = OFFERED ]
	[ "$(entry_of "$W1")" = - ]
	[ "$(counters)" = "OPEN 01 21" ]
	[ "$(sql "SELECT expires_at - sent_at FROM invitations WHERE player_id = '$W2'")" = 00:15:00 ]
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$W2'")
	[ "$(sql "SELECT payload::text FROM notifications WHERE recipient_id = '$W2' AND type = 'PLACE_OFFERED'")" = \
		"$(sql "SELECT jsonb_build_object('matchRequestId', '$M', 'invitationId', '$inv', 'team', 'TEAM_B',
		                                  'expiresAt', api_ts(expires_at))::text
		          FROM invitations WHERE id = '$inv'")" ]
	# w2 sees it among their invitations
	req GET /api/match/invitations -t "$(token w2)"
	expect 200
	[ "$(jqr -c '[.[] | {id, kind, status, team, matchStatus, availableSlots}]')" = \
		"[{\"id\":\"$inv\",\"kind\":\"OFFER\",\"status\":\"PENDING\",\"team\":\"TEAM_B\",\"matchStatus\":\"OPEN\",\"availableSlots\":0}]" ]
	[ "$(jqr '.[0].expiresAt')" = "$(sql "SELECT api_ts(expires_at) FROM invitations WHERE id = '$inv'")" ]
	# the match shows the place as held, not free
	req GET "/api/match/requests/$M" -t "$(token org)"
	[ "$(jqr .availableSlots)" = 0 ]
	[ "$(jqr .waitlistLength)" = 2 ]
	# nobody else takes it: not by the link, not into the other team
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	req POST "/api/match/join/$token_m" -t "$(token outsider)" -d '{"team": "TEAM_B"}'
	expect_problem 409 TEAM_FULL
	req POST "/api/match/join/$token_m" -t "$(token w1)" -d '{"team": "TEAM_A"}'
	expect_problem 409 TEAM_FULL
	# the offer is for TEAM_B
	req POST "/api/match/invitations/$inv/accept" -t "$(token w2)" -d '{"team": "TEAM_A"}'
	expect_problem 409 OFFER_FOR_OTHER_TEAM
	req POST "/api/match/invitations/$inv/accept" -t "$(token w2)" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .status)" = MATCHED ]
	[ "$(jqr .availableSlots)" = 0 ]
	[ "$(jqr '[.players[] | select(.playerId == "'"$W2"'") | .team] | join(",")')" = TEAM_B ]
	[ "$(counters)" = "MATCHED 00 22" ]
	[ "$(invitation_of "$W2")" = "OFFER ACCEPTED TEAM_B" ]
	[ "$(sql "SELECT amount || ' ' || status FROM payments WHERE player_id = '$W2'")" = "5.00 PAID" ]
	# the others still wait, in order
	[ "$(sql "SELECT string_agg(u.subject, ',' ORDER BY w.joined_at) FROM match_waitlist w
	           JOIN users u ON u.id = w.player_id WHERE w.ended_at IS NULL")" = w1,w3 ]
}

@test "the offered player may also take the place through the link, into the offer's team" {
	wait_for w1 ANY
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)"
	expect 204 -
	[ "$(invitation_of "$W1")" = "OFFER PENDING TEAM_A" ]
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	req POST "/api/match/join/$token_m" -t "$(token w1)" -d '{"team": "TEAM_B"}'
	expect_problem 409 OFFER_FOR_OTHER_TEAM
	req POST "/api/match/join/$token_m" -t "$(token w1)" -d '{"team": "TEAM_A"}'
	expect 200
	[ "$(invitation_of "$W1")" = "OFFER ACCEPTED TEAM_A" ]
	[ "$(counters)" = "MATCHED 00 22" ]
}

@test "a declined offer passes to the next player waiting, and with nobody left the place is free to all" {
	wait_for w1 TEAM_B
	wait_for w2 ANY
	req DELETE "/api/match/requests/$M/leave" -t "$(token p3)"
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$W1'")
	req POST "/api/match/invitations/$inv/decline" -t "$(token w1)"
	expect 204 -
	[ "$(invitation_of "$W1")" = "OFFER DECLINED TEAM_B" ]
	[ "$(invitation_of "$W2")" = "OFFER PENDING TEAM_B" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE recipient_id = '$W2' AND type = 'PLACE_OFFERED'")" = 1 ]
	[ "$(counters)" = "OPEN 01 21" ]
	inv2=$(sql "SELECT id FROM invitations WHERE player_id = '$W2'")
	req POST "/api/match/invitations/$inv2/decline" -t "$(token w2)"
	expect 204 -
	[ "$(counters)" = "OPEN 00 21" ]
	req GET "/api/match/requests/$M" -t "$(token org)"
	[ "$(jqr .availableSlots)" = 1 ]
	[ "$(jqr .waitlistLength)" = 0 ]
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	req POST "/api/match/join/$token_m" -t "$(token outsider)" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .status)" = MATCHED ]
}

@test "a lapsed offer passes on: shown as expired, refused when accepted, and the next player is offered without the sweeper" {
	wait_for w1 TEAM_B
	wait_for w2 TEAM_B
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$W1'")
	sql "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = '$inv'" >/dev/null
	# a read shows it lapsed, and it is no longer among w1's invitations
	req GET /api/match/invitations -t "$(token w1)"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	req POST "/api/match/invitations/$inv/accept" -t "$(token w1)" -d '{"team": "TEAM_B"}'
	expect_problem 409 INVALID_STATE
	# the refusal passed the place on: w2 holds it now
	[ "$(invitation_of "$W1")" = "OFFER EXPIRED TEAM_B" ]
	[ "$(invitation_of "$W2")" = "OFFER PENDING TEAM_B" ]
	[ "$(counters)" = "OPEN 01 21" ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE player_id = '$W1'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE player_id = '$W1'")" = 0 ]
}

@test "the sweeper passes lapsed offers on and counts them" {
	wait_for w1 TEAM_B
	wait_for w2 ANY
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	sql "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE player_id = '$W1'" >/dev/null
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ $output == *" offers_lapsed=1 "* ]]
	[ "$(invitation_of "$W1")" = "OFFER EXPIRED TEAM_B" ]
	[ "$(invitation_of "$W2")" = "OFFER PENDING TEAM_B" ]
	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[[ $output == *" offers_lapsed=0 "* ]]
	[ "$(invitation_of "$W2")" = "OFFER PENDING TEAM_B" ]
}

@test "a player busy in another match at that time, or banned, is passed over and stays on the list" {
	wait_for w1 TEAM_B
	wait_for w2 TEAM_B
	wait_for w3 TEAM_B
	# w1 plays another match that overlaps (another court, same time); w2 is banned
	court2=$(fixture_court "$VENUE" 90)
	other=$(COURT=$court2 sql_match_beside "$M" "$ORG" OPEN)
	sql_join "$other" "$W1" TEAM_B
	sql "UPDATE players SET banned_until = now() + interval '1 day' WHERE user_id = '$W2'" >/dev/null
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	expect 204 -
	[ "$(invitation_of "$W3")" = "OFFER PENDING TEAM_B" ]
	[ "$(invitation_of "$W1")" = "" ]
	[ "$(invitation_of "$W2")" = "" ]
	[ "$(entry_of "$W1")" = - ]
	[ "$(entry_of "$W2")" = - ]
}

@test "an absence offers the place to the list first; substitutes invited cannot take the held place" {
	wait_for w1 TEAM_B
	sub=$(fixture_player sub INTERMEDIATE 40.42 -3.70)
	req POST "/api/match/requests/$M/absence" -t "$(token p3)"
	expect 204 -
	[ "$(invitation_of "$W1")" = "OFFER PENDING TEAM_B" ]
	[ "$(invitation_of "$sub")" = "SUBSTITUTE PENDING -" ]
	sinv=$(sql "SELECT id FROM invitations WHERE player_id = '$sub'")
	req POST "/api/match/invitations/$sinv/accept" -t "$(token sub)" -d '{"team": "TEAM_B"}'
	expect_problem 409 TEAM_FULL
	[ "$(counters)" = "OPEN 01 21" ]
}

@test "a cancelled match ends its waiting list and its open offers" {
	wait_for w1 TEAM_B
	wait_for w2 TEAM_B
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	req DELETE "/api/match/requests/$M" -t "$(token org)"
	expect 204 -
	[ "$(invitation_of "$W1")" = "OFFER EXPIRED TEAM_B" ]
	[ "$(entry_of "$W2")" = MATCH_ENDED ]
	[ "$(counters)" = "CANCELLED 00 21" ]
}

@test "the database refuses an offer for a place that is taken, and a second offer for one place" {
	# the match is full: no offer can hold a place in it
	run sql "INSERT INTO invitations (match_request_id, player_id, kind, team, expires_at)
	         VALUES ('$M', '$W1', 'OFFER', 'TEAM_B', now() + interval '15 minutes')"
	[ "$status" -ne 0 ]
	[[ $output == *match_requests_offered_places* ]]
	expect_log postgres 'violates check constraint "match_requests_offered_places"'
	sql "UPDATE match_players SET left_at = now(), left_reason = 'LEFT'
	      WHERE match_request_id = '$M' AND player_id = '$P2'" >/dev/null
	sql "INSERT INTO invitations (match_request_id, player_id, kind, team, expires_at)
	     VALUES ('$M', '$W1', 'OFFER', 'TEAM_B', now() + interval '15 minutes')" >/dev/null
	run sql "INSERT INTO invitations (match_request_id, player_id, kind, team, expires_at)
	         VALUES ('$M', '$W2', 'OFFER', 'TEAM_B', now() + interval '15 minutes')"
	[ "$status" -ne 0 ]
	[[ $output == *match_requests_offered_places* ]]
	# nor can a player take the place the offer holds
	run sql "INSERT INTO match_players (match_request_id, player_id, team, role)
	         VALUES ('$M', '$W3', 'TEAM_B', 'PLAYER')"
	[ "$status" -ne 0 ]
	[[ $output == *match_requests_offered_places* ]]
	[ "$(counters)" = "MATCHED 01 21" ]
}

@test "twenty players rushing a held place by the link while its offer is accepted: the offered player alone gets it" {
	wait_for w1 TEAM_B
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$W1'")
	token_m=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	for k in $(seq 1 20); do
		curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(token "rush$k")" \
			-H 'Content-Type: application/json' --data-binary '{"team": "TEAM_B"}' \
			"$BASE_URL/api/match/join/$token_m" >"$BATS_TEST_TMPDIR/rush$k" &
	done
	curl -s -o "$BATS_TEST_TMPDIR/offer.body" -w '%{http_code}\n' -X POST \
		-H "Authorization: Bearer $(token w1)" -H 'Content-Type: application/json' \
		--data-binary '{"team": "TEAM_B"}' "$BASE_URL/api/match/invitations/$inv/accept" \
		>"$BATS_TEST_TMPDIR/offer.code" &
	wait
	[ "$(cat "$BATS_TEST_TMPDIR/offer.code")" = 200 ]
	[ "$(cat "$BATS_TEST_TMPDIR"/rush* | sort | uniq -c | tr -s ' ')" = " 20 409" ]
	[ "$(sql "SELECT string_agg(player_id::text, ',' ORDER BY player_id) FROM match_players
	           WHERE match_request_id = '$M' AND left_at IS NULL AND team = 'TEAM_B'")" = \
		"$(sql "SELECT string_agg(x::text, ',' ORDER BY x) FROM unnest(ARRAY['$P3', '$W1']::uuid[]) x")" ]
	[ "$(counters)" = "MATCHED 00 22" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE match_request_id = '$M' AND status = 'PAID'
	             AND player_id <> ALL (ARRAY['$ORG', '$P1', '$P2', '$P3', '$W1']::uuid[])")" = 0 ]
}

@test "an offer lapsing while it is accepted has one outcome: joined, or expired and passed on" {
	wait_for w1 TEAM_B
	wait_for w2 TEAM_B
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)"
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$W1'")
	sql "UPDATE invitations SET expires_at = now() + interval '400 milliseconds' WHERE id = '$inv'" >/dev/null
	sleep 0.35
	curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(token w1)" \
		-H 'Content-Type: application/json' --data-binary '{"team": "TEAM_B"}' \
		"$BASE_URL/api/match/invitations/$inv/accept" >"$BATS_TEST_TMPDIR/code" &
	"$COURTS_BUILD/cron/sweep" >/dev/null &
	wait
	code=$(cat "$BATS_TEST_TMPDIR/code")
	if [ "$code" = 200 ]; then
		[ "$(invitation_of "$W1")" = "OFFER ACCEPTED TEAM_B" ]
		[ "$(invitation_of "$W2")" = "" ]
		[ "$(counters)" = "MATCHED 00 22" ]
	else
		[ "$code" = 409 ]
		[ "$(invitation_of "$W1")" = "OFFER EXPIRED TEAM_B" ]
		[ "$(invitation_of "$W2")" = "OFFER PENDING TEAM_B" ]
		[ "$(counters)" = "OPEN 01 21" ]
		[ "$(sql "SELECT count(*) FROM match_players WHERE player_id = '$W1'")" = 0 ]
	fi
}
