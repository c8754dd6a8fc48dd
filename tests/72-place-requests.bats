#!/usr/bin/env bats
# Place requests (sql/areas/65_places.sql): a player of another level asks the players of a
# competitive public match for a place; one reject refuses it, every player's approve grants a
# PLACE invitation held like an offer, or a place on the waiting list when none is free.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	# an OPEN INTERMEDIATE match four days ahead: org and p1 in TEAM_A, p2 in TEAM_B
	M=$(sql_match "$ORG" OPEN '4 days')
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	P2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_A
	sql_join "$M" "$P2" TEAM_B
	ADV=$(fixture_player adv ADVANCED 40.42 -3.70)
}

# ask WHO [BODY]: WHO asks for a place in $M; 201 expected; sets PR.
ask() {
	req POST "/api/match/requests/$M/place-requests" -t "$(token "$1")" ${2:+-d "$2"}
	expect 201
	PR=$(jqr .id)
}

# answer WHO approve|reject [STATUS]: WHO answers $PR; STATUS (200) expected.
answer() {
	req POST "/api/match/place-requests/$PR/$2" -t "$(token "$1")"
	expect "${3:-200}"
}

# open_with TERMS_SQL: an OPEN match of org five days ahead on a court of its own, with
# TERMS_SQL set while it awaited payment (they are fixed once paid); prints its id.
open_with() {
	local id
	id=$(COURT=$(fixture_court "$VENUE" 90) sql_match "$ORG" PENDING_PAYMENT '5 days')
	sql "UPDATE match_requests SET $1 WHERE id = '$id'" >/dev/null
	sql "UPDATE match_requests SET status = 'OPEN' WHERE id = '$id'" >/dev/null
	echo "$id"
}

# told WHO TYPE: how many TYPE notices WHO has about $PR.
told() {
	sql "SELECT count(*) FROM notifications WHERE recipient_id = '$(user_id "$1")'
	        AND type = '$2' AND payload->>'placeRequestId' = '$PR'"
}

@test "a player of another level asks for a place: 201 PENDING, every player in the match is told" {
	ask adv '{"team": "TEAM_B", "message": "I can play the left side"}'
	[ "$(jqr -c 'keys_unsorted')" = \
		'["id","matchRequestId","playerId","displayName","effectiveSkillLevel","rating","team","message","status","answers","awaiting","invitationId","waitlisted","createdAt","updatedAt","match"]' ]
	[ "$(jqr -c '[.matchRequestId, .playerId, .displayName, .effectiveSkillLevel, .rating, .team, .message, .status, .answers, .invitationId, .waitlisted]')" = \
		"[\"$M\",\"$ADV\",\"adv\",\"ADVANCED\",1800,\"TEAM_B\",\"I can play the left side\",\"PENDING\",[],null,false]" ]
	[ "$(jqr -c .awaiting)" = "[\"$ORG\",\"$P1\",\"$P2\"]" ]
	[[ $(jqr .createdAt) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z$ ]]
	# the match as a stranger sees it: no link token
	[ "$(jqr -c '.match | [.id, .status, .skillLevel, .competitive, .invitationToken]')" = \
		"[\"$M\",\"OPEN\",\"INTERMEDIATE\",true,null]" ]
	[[ $PR =~ ^[0-9a-f-]{36}$ ]]
	[ "$(sql "SELECT match_request_id || ' ' || player_id || ' ' || team || ' ' || status FROM place_requests")" = \
		"$M $ADV TEAM_B PENDING" ]
	for who in org p1 p2; do
		[ "$(told "$who" PLACE_REQUESTED)" = 1 ]
	done
	[ "$(sql "SELECT payload->>'playerId' FROM notifications WHERE type = 'PLACE_REQUESTED' LIMIT 1")" = "$ADV" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE recipient_id = '$ADV'")" = 0 ]
	# the requester and the match's players read it; nobody else does
	for who in adv org; do
		req GET "/api/match/place-requests/$PR" -t "$(token "$who")"
		expect 200
		[ "$(jqr .id)" = "$PR" ]
	done
	req GET "/api/match/place-requests/$PR" -t "$(token stranger)"
	expect_problem 404 NOT_FOUND
	req GET "/api/match/place-requests/$PR"
	expect_problem 401 UNAUTHORIZED
	# without a body: either team, no message
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	ask pro
	[ "$(jqr -c '[.team, .message, .effectiveSkillLevel, .rating]')" = '["ANY",null,"PROFESSIONAL",2100]' ]
	req GET "/api/match/place-requests/$PR" -t "$(token adv)"
	expect_problem 404 NOT_FOUND
}

@test "asking for a place is refused to whoever could join, a player in the match or busy elsewhere, twice, and bad input; nothing is written" {
	ask adv
	req POST "/api/match/requests/$M/place-requests" -t "$(token adv)"
	expect_problem 409 PLACE_REQUEST_EXISTS
	# of the match's level: join it
	fixture_player me INTERMEDIATE 40.42 -3.70 >/dev/null
	req POST "/api/match/requests/$M/place-requests" -t "$(token me)"
	expect_problem 409 JOIN_INSTEAD
	req POST "/api/match/requests/$M/place-requests" -t "$(token p1)"
	expect_problem 409 ALREADY_IN_MATCH
	# a friendly match is open to every level
	friendly=$(open_with "competitive = false")
	req POST "/api/match/requests/$friendly/place-requests" -t "$(token adv)"
	expect_problem 409 JOIN_INSTEAD
	# a private match does not exist for a stranger, nor does an unknown one
	private=$(open_with "visibility = 'PRIVATE'")
	req POST "/api/match/requests/$private/place-requests" -t "$(token adv)"
	expect_problem 404 NOT_FOUND
	req POST /api/match/requests/00000000-0000-4000-8000-000000000000/place-requests -t "$(token adv)"
	expect_problem 404 NOT_FOUND
	# confirmed (everyone checked in), started
	confirmed=$(COURT=$(fixture_court "$VENUE" 90) sql_match "$ORG" CONFIRMED '6 days')
	req POST "/api/match/requests/$confirmed/place-requests" -t "$(token adv)"
	expect_problem 409 MATCH_NOT_OPEN
	started=$(COURT=$(fixture_court "$VENUE" 90) sql_match "$ORG" OPEN '-10 minutes')
	req POST "/api/match/requests/$started/place-requests" -t "$(token adv)"
	expect_problem 409 MATCH_STARTED
	# a player in another match at that time
	busy=$(fixture_player busy ADVANCED 40.42 -3.70)
	COURT=$(fixture_court "$VENUE" 90) sql_match_beside "$M" "$busy" OPEN >/dev/null
	req POST "/api/match/requests/$M/place-requests" -t "$(token busy)"
	expect_problem 409 PLAYER_BUSY
	# bad input
	long=$(printf 'x%.0s' $(seq 1 501))
	req POST "/api/match/requests/$M/place-requests" -t "$(token pro)" \
		-d "{\"team\": \"TEAM_C\", \"message\": \"$long\"}"
	expect_problem 400 VALIDATION_FAILED
	[ "$(jqr -c '[.errors[].field] | sort')" = '["message","team"]' ]
	req POST "/api/match/requests/$M/place-requests" -t "$(token pro)" -d '{"team": '
	expect_problem 400 MALFORMED_JSON
	req POST "/api/match/requests/$M/place-requests" -t "$(token pro)"
	expect 201
	[ "$(sql "SELECT count(*) FROM place_requests")" = 2 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLACE_REQUESTED'")" = 6 ]
}

@test "every player approving grants a PLACE invitation, held like an offer, taken into its team and paid" {
	ask adv
	answer org approve
	[ "$(jqr -c '[.status, [.answers[] | [.playerId, .answer]], .awaiting]')" = \
		"[\"PENDING\",[[\"$ORG\",\"APPROVE\"]],[\"$P1\",\"$P2\"]]" ]
	at=$(jqr '.answers[0].answeredAt')
	# again: nothing changes
	answer org approve
	[ "$(jqr '.answers[0].answeredAt')" = "$at" ]
	answer p1 approve
	[ "$(jqr .status)" = PENDING ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	answer p2 approve
	[ "$(jqr -c '[.status, .awaiting, .waitlisted]')" = '["APPROVED",[],false]' ]
	inv=$(jqr .invitationId)
	[ "$(sql "SELECT id || ' ' || player_id || ' ' || kind || ' ' || status || ' ' || team
	            || ' ' || (expires_at - sent_at = interval '15 minutes') FROM invitations")" = \
		"$inv $ADV PLACE PENDING TEAM_B true" ]
	[ "$(sql "SELECT status || ' ' || (decided_at IS NOT NULL) FROM place_requests")" = "APPROVED true" ]
	[ "$(counters)" = "OPEN 01 21" ]
	[ "$(told adv PLACE_REQUEST_APPROVED)" = 1 ]
	[ "$(sql "SELECT (payload->>'invitationId') || ' ' || (payload->>'team') || ' ' || (payload ? 'expiresAt')
	            FROM notifications WHERE type = 'PLACE_REQUEST_APPROVED'")" = "$inv TEAM_B true" ]
	# decided: no more answers
	answer p1 reject 409
	expect_problem 409 PLACE_REQUEST_CLOSED
	# the requester sees it among their invitations, as kind PLACE
	req GET /api/match/invitations -t "$(token adv)"
	expect 200
	[ "$(jqr -c '[.[] | [.id, .kind, .team, .status]]')" = "[[\"$inv\",\"PLACE\",\"TEAM_B\",\"PENDING\"]]" ]
	# the place is held: nobody else takes it by the link
	fixture_player me INTERMEDIATE 40.42 -3.70 >/dev/null
	link=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	req POST "/api/match/join/$link" -t "$(token me)" -d '{"team": "TEAM_B"}'
	expect_problem 409 TEAM_FULL
	req POST "/api/match/invitations/$inv/accept" -t "$(token adv)" -d '{"team": "TEAM_A"}'
	expect_problem 409 OFFER_FOR_OTHER_TEAM
	req POST "/api/match/invitations/$inv/accept" -t "$(token adv)" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .status)" = MATCHED ]
	[ "$(counters)" = "MATCHED 00 22" ]
	[ "$(invitation_of "$ADV")" = "PLACE ACCEPTED TEAM_B" ]
	[ "$(sql "SELECT amount || ' ' || status FROM payments WHERE player_id = '$ADV'")" = "5.00 PAID" ]
}

@test "one reject makes it REJECTED and tells the requester; the rejecter may turn it into an approve" {
	ask adv
	answer org approve
	answer p1 reject
	[ "$(jqr -c '[.status, [.answers[] | .answer], .awaiting]')" = "[\"REJECTED\",[\"APPROVE\",\"REJECT\"],[\"$P2\"]]" ]
	[ "$(told adv PLACE_REQUEST_REJECTED)" = 1 ]
	# the others still answer; a reject stands until its player changes it
	answer p2 approve
	[ "$(jqr .status)" = REJECTED ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	answer p1 approve
	[ "$(jqr .status)" = APPROVED ]
	[ "$(invitation_of "$ADV")" = "PLACE PENDING TEAM_B" ]
	[ "$(told adv PLACE_REQUEST_REJECTED)" = 1 ]
	[ "$(told adv PLACE_REQUEST_APPROVED)" = 1 ]
	# an approve turned into a reject refuses a pending request
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	ask pro
	answer org approve
	answer org reject
	[ "$(jqr -c '[.status, [.answers[] | .answer]]')" = '["REJECTED",["REJECT"]]' ]
	[ "$(told pro PLACE_REQUEST_REJECTED)" = 1 ]
	# only the match's players answer: not the requester, not a stranger
	answer pro approve 404
	expect_problem 404 NOT_FOUND
	answer stranger reject 404
	expect_problem 404 NOT_FOUND
	req POST /api/match/place-requests/00000000-0000-4000-8000-000000000000/approve -t "$(token org)"
	expect_problem 404 NOT_FOUND
	req POST /api/match/place-requests/not-a-uuid/approve -t "$(token org)"
	expect_problem 400 VALIDATION_FAILED id
	# a match that has started closes its open requests
	sql "UPDATE match_requests SET starts_at = now() - interval '1 minute' WHERE id = '$M'" >/dev/null
	answer org approve 409
	expect_problem 409 PLACE_REQUEST_CLOSED
	req GET "/api/match/place-requests/$PR" -t "$(token pro)"
	expect 200
	[ "$(jqr .status)" = CLOSED ]
	[ "$(sql "SELECT status FROM place_requests WHERE id = '$PR'")" = REJECTED ]
}

@test "approved with no place free, the requester waits on the list and is offered the next freed place" {
	ask adv '{"team": "TEAM_A"}'
	# the match fills: p3 must answer too
	P3=$(fixture_player p3 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P3" TEAM_B
	sql "UPDATE match_requests SET status = 'MATCHED' WHERE id = '$M'" >/dev/null
	# a full match takes requests too: its waiting list is for its level only
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	req POST "/api/match/requests/$M/waitlist" -t "$(token pro)" -d '{"team": "ANY"}'
	expect_problem 409 LEVEL_MISMATCH
	req POST "/api/match/requests/$M/place-requests" -t "$(token pro)"
	expect 201
	for who in org p1 p2; do answer "$who" approve; done
	[ "$(jqr -c '[.status, .awaiting]')" = "[\"PENDING\",[\"$P3\"]]" ]
	answer p3 approve
	[ "$(jqr -c '[.status, .invitationId, .waitlisted]')" = '["APPROVED",null,true]' ]
	[ "$(sql "SELECT team || ' ' || coalesce(ended_reason, '-') FROM match_waitlist WHERE player_id = '$ADV'")" = "TEAM_A -" ]
	[ "$(sql "SELECT payload->>'invitationId' IS NULL FROM notifications WHERE type = 'PLACE_REQUEST_APPROVED'")" = t ]
	# p1 leaves TEAM_A: the place is offered to the requester from the list
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)"
	expect 204 -
	[ "$(invitation_of "$ADV")" = "OFFER PENDING TEAM_A" ]
	[ "$(counters)" = "OPEN 10 12" ]
}

@test "a leave settles a request: the only player who rejected leaves, the others had approved" {
	ask adv
	answer org approve
	answer p2 approve
	answer p1 reject
	[ "$(jqr .status)" = REJECTED ]
	req DELETE "/api/match/requests/$M/leave" -t "$(token p1)"
	expect 204 -
	[ "$(sql "SELECT status FROM place_requests WHERE id = '$PR'")" = APPROVED ]
	[ "$(invitation_of "$ADV")" = "PLACE PENDING TEAM_A" ]
	[ "$(told adv PLACE_REQUEST_APPROVED)" = 1 ]
	[ "$(counters)" = "OPEN 10 11" ]
	# a leave that hands its place to a substitute
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	ask pro
	answer org approve
	answer p2 reject
	SUB=$(fixture_player sub INTERMEDIATE 40.42 -3.70)
	req DELETE "/api/match/requests/$M/leave" -t "$(token p2)" -d "{\"substitutePlayerId\": \"$SUB\"}"
	expect 204 -
	# decided when the leave commits, after the hand-over: the substitute keeps the place
	# handed to them, and the requester is granted the other free place of TEAM_B
	[ "$(invitation_of "$SUB")" = "HANDOVER PENDING TEAM_B" ]
	[ "$(sql "SELECT status FROM place_requests WHERE id = '$PR'")" = APPROVED ]
	[ "$(invitation_of "$(user_id pro)")" = "PLACE PENDING TEAM_B" ]
	[ "$(counters)" = "OPEN 12 10" ]
}

@test "a granted place that lapses or is declined passes on like an offer" {
	ask adv
	for who in org p1 p2; do answer "$who" approve; done
	inv=$(jqr .invitationId)
	req POST "/api/match/invitations/$inv/decline" -t "$(token adv)"
	expect 204 -
	[ "$(invitation_of "$ADV")" = "PLACE DECLINED TEAM_B" ]
	[ "$(counters)" = "OPEN 00 21" ]
	# another one lapses: the sweeper's rule ends it
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	ask pro
	for who in org p1 p2; do answer "$who" approve; done
	inv=$(jqr .invitationId)
	[ "$(counters)" = "OPEN 01 21" ]
	sql "UPDATE invitations SET expires_at = now() - interval '1 second', sent_at = now() - interval '16 minutes'
	      WHERE id = '$inv'" >/dev/null
	req GET /api/match/invitations -t "$(token pro)"
	expect 200
	[ "$(jqr length)" = 0 ]
	[ "$(sql "SELECT settled || ' ' || lapsed FROM sweep_offers(10)")" = "1 1" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = EXPIRED ]
	[ "$(counters)" = "OPEN 00 21" ]
}

@test "the list shows the caller's own requests and those waiting for the caller's answer, paged" {
	ask adv
	first=$PR
	fixture_player pro PROFESSIONAL 40.42 -3.70 >/dev/null
	ask pro
	second=$PR
	req GET /api/match/place-requests -t "$(token adv)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$first\"]" ]
	req GET /api/match/place-requests -t "$(token org)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$second\",\"$first\"]" ]
	req GET '/api/match/place-requests?limit=1' -t "$(token org)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$second\"]" ]
	next=$(header Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
	req GET "$next" -t "$(token org)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$first\"]" ]
	# answered, it no longer waits for org; its requester still sees it
	PR=$first
	answer org reject
	req GET /api/match/place-requests -t "$(token org)"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$second\"]" ]
	req GET /api/match/place-requests -t "$(token adv)"
	expect 200
	[ "$(jqr -c '[.[] | [.id, .status]]')" = "[[\"$first\",\"REJECTED\"]]" ]
	req GET '/api/match/place-requests?limit=0' -t "$(token org)"
	expect_problem 400 VALIDATION_FAILED limit
}

@test "the last approvals at once grant one place, once" {
	ask adv
	for who in org p1 p2; do
		curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(token "$who")" \
			"$BASE_URL/api/match/place-requests/$PR/approve" >"$BATS_TEST_TMPDIR/$who" &
	done
	wait
	[ "$(cat "$BATS_TEST_TMPDIR"/org "$BATS_TEST_TMPDIR"/p1 "$BATS_TEST_TMPDIR"/p2 | sort | uniq -c | tr -s ' ')" = ' 3 200' ]
	[ "$(sql "SELECT status FROM place_requests")" = APPROVED ]
	[ "$(sql "SELECT count(*) FROM invitations WHERE kind = 'PLACE'")" = 1 ]
	[ "$(told adv PLACE_REQUEST_APPROVED)" = 1 ]
	[ "$(counters)" = "OPEN 01 21" ]
}

@test "a requester who takes a place by the link is granted nothing: the request reads CLOSED until they leave" {
	ask adv '{"team": "TEAM_B"}'
	answer org approve
	# the link has no level rule: adv joins TEAM_B with it
	link=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$M'")
	req POST "/api/match/join/$link" -t "$(token adv)" -d '{"team": "TEAM_B"}'
	expect 200
	req GET "/api/match/place-requests/$PR" -t "$(token adv)"
	expect 200
	[ "$(jqr -c '[.status, .invitationId, .waitlisted, .awaiting]')" = '["CLOSED",null,false,[]]' ]
	# nobody is asked to answer it, and answers are refused, so it grants nothing
	req GET /api/match/place-requests -t "$(token p1)"
	expect 200
	[ "$(jqr length)" = 0 ]
	answer p1 approve 409
	expect_problem 409 PLACE_REQUEST_CLOSED
	[ "$(sql "SELECT status || ' ' || (decided_at IS NULL) FROM place_requests WHERE id = '$PR'")" = "PENDING true" ]
	[ "$(sql "SELECT count(*) FROM invitations WHERE kind = 'PLACE'")" = 0 ]
	# once they leave it is open again: org's approve stands, p1 and p2 must approve too
	req DELETE "/api/match/requests/$M/leave" -t "$(token adv)"
	expect 204 -
	answer p1 approve
	[ "$(jqr .status)" = PENDING ]
	answer p2 approve
	[ "$(jqr .status)" = APPROVED ]
	[ "$(invitation_of "$ADV")" = "PLACE PENDING TEAM_B" ]
}

@test "a leave decides the open requests at the leave's own instant" {
	ask adv
	answer org approve
	answer p2 approve
	# p1 leaves at an instant of its own (the lifecycle functions take the clock as p_now):
	# the grant and the notice carry it, not the commit's
	at=$(sql "SELECT now() - interval '1 hour'")
	sql "SELECT match_leave('$M', '$P1', '$at')" >/dev/null
	[ "$(sql "SELECT decided_at = '$at' FROM place_requests WHERE id = '$PR'")" = t ]
	[ "$(sql "SELECT sent_at = '$at' AND expires_at = '$at'::timestamptz + interval '15 minutes'
	            FROM invitations WHERE kind = 'PLACE'")" = t ]
	[ "$(sql "SELECT created_at = '$at' FROM notifications WHERE type = 'PLACE_REQUEST_APPROVED'")" = t ]
}
