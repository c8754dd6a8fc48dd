#!/usr/bin/env bats
# A player's invitations (endpoints 22-24) and joining by the shareable token (25): the
# answers with every field, what they write (players, payments, notifications, counters),
# every rejection, the match filling up, and concurrent joins of the last place.

load test_helper

UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
NOWHERE=00000000-0000-4000-8000-000000000001

setup() {
	reset_db
	# fresh subjects per test: FastCGI workers keep (iss, sub) -> id across requests
	RUN=$BATS_TEST_NUMBER-$RANDOM
	ORG=org-$RUN ANA=ana-$RUN BEA=bea-$RUN CAR=car-$RUN
	ORG_ID=$(user_id "$ORG") ANA_ID=$(user_id "$ANA") BEA_ID=$(user_id "$BEA")
	CAR_ID=$(user_id "$CAR")
	TA=$(token "$ANA") TB=$(token "$BEA") TC=$(token "$CAR")
	VENUE=$(fixture_venue "owner-$RUN")
	COURT=$(fixture_court "$VENUE")
}

# fixture_match [FORMAT] [STATUS] [DAYS] [START]: a match of ORG on COURT, DAYS ahead
# (default 5) at START (default 10:00) local time, court price 20.00 EUR, the organizer on
# TEAM_A with a PAID payment; prints its id.
fixture_match() {
	local format=${1:-TWO_VS_TWO} status=${2:-OPEN} days=${3:-5} start=${4:-10:00}
	local size=2 ppp=5.00 date id
	[ "$format" = ONE_VS_ONE ] && size=1 ppp=10.00
	date=$(local_date "$days")
	id=$(sql "INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
	              end_time, starts_at, ends_at, format, skill_level, status, team_size,
	              team_a_count, court_price, price_per_player, currency, custom_message,
	              search_latitude, search_longitude, search_radius_km, expires_at, cancel_reason)
	          VALUES ('$COURT', '$ORG_ID', '$date', '$start', time '$start' + interval '90 min',
	              ('$date'::date + time '$start') AT TIME ZONE 'Europe/Madrid',
	              ('$date'::date + time '$start' + interval '90 min') AT TIME ZONE 'Europe/Madrid',
	              '$format', 'INTERMEDIATE', '$status', $size, 1, 20.00, $ppp, 'EUR', 'Friendly game',
	              40.4168, -3.7038, 10, now() + interval '15 min',
	              CASE WHEN '$status' = 'CANCELLED' THEN 'ORGANIZER' END)
	          RETURNING id")
	add_player "$id" "$ORG_ID" TEAM_A ORGANIZER
	echo "$id"
}

# add_player MATCH USER_ID TEAM [ROLE]: puts a player in the match with a PAID payment.
add_player() {
	sql "WITH e AS (INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
	                VALUES ('$1', '$2', '$3', '${4:-PLAYER}', now() - interval '1 hour')
	                RETURNING id)
	     INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	         entry_id)
	     SELECT m.id, '$2', 'PAYMENT', m.price_per_player, m.currency, 'PAID', e.id
	       FROM match_requests m, e WHERE m.id = '$1'" >/dev/null
}

# invite MATCH USER_ID [STATUS] [AGE]: an invitation sent AGE ago (default 1 hour); prints its id.
invite() {
	sql "INSERT INTO invitations (match_request_id, player_id, status, sent_at, responded_at)
	     VALUES ('$1', '$2', '${3:-PENDING}', now() - interval '${4:-1 hour}',
	         CASE WHEN '${3:-PENDING}' IN ('ACCEPTED', 'DECLINED') THEN now() END)
	     RETURNING id"
}

# counts MATCH: "status|team_a|team_b|active players|payments|notifications" of a match.
counts() {
	sql "SELECT concat_ws('|', m.status, m.team_a_count, m.team_b_count,
	         (SELECT count(*) FROM match_players p WHERE p.match_request_id = m.id AND p.left_at IS NULL),
	         (SELECT count(*) FROM payments y WHERE y.match_request_id = m.id),
	         (SELECT count(*) FROM notifications n WHERE n.payload->>'matchRequestId' = m.id::text))
	     FROM match_requests m WHERE m.id = '$1'"
}

@test "the invitation list shows the caller's pending invitations to open future matches, newest first" {
	m1=$(fixture_match)
	sql "UPDATE resources SET name = 'Pista 7' WHERE id = '$COURT'"
	old=$(invite "$m1" "$ANA_ID" PENDING '2 hours')
	COURT=$(fixture_court "$VENUE")
	m2=$(fixture_match ONE_VS_ONE OPEN 6 18:00)
	new=$(invite "$m2" "$ANA_ID" PENDING '5 minutes')
	# not listed: answered, expired, not OPEN, started, someone else's
	COURT=$(fixture_court "$VENUE")
	m3=$(fixture_match TWO_VS_TWO MATCHED 7)
	invite "$m3" "$ANA_ID" >/dev/null
	COURT=$(fixture_court "$VENUE")
	m4=$(fixture_match TWO_VS_TWO OPEN -1)
	invite "$m4" "$ANA_ID" >/dev/null
	COURT=$(fixture_court "$VENUE")
	m5=$(fixture_match TWO_VS_TWO OPEN 8)
	invite "$m5" "$ANA_ID" DECLINED >/dev/null
	invite "$m1" "$BEA_ID" >/dev/null
	COURT=$(fixture_court "$VENUE")
	m6=$(fixture_match TWO_VS_TWO OPEN 9)
	invite "$m6" "$ANA_ID" EXPIRED >/dev/null

	req GET /api/match/invitations -t "$TA"
	expect 200
	[ "$(jqr -c '[.[].id]')" = "[\"$new\",\"$old\"]" ]
	[ "$(jqr '.[1].id')" = "$old" ]
	[ "$(jqr '.[1].matchRequestId')" = "$m1" ]
	[ "$(jqr '.[1].kind')" = INVITATION ]
	[ "$(jqr '.[1].status')" = PENDING ]
	[ "$(jqr '.[1].team')" = null ]
	[ "$(jqr '.[1].expiresAt')" = null ]
	[ "$(jqr '.[1].sentAt')" = "$(sql "SELECT api_ts(sent_at) FROM invitations WHERE id = '$old'")" ]
	[ "$(jqr '.[1].respondedAt')" = null ]
	[ "$(jqr '.[1].bookingDate')" = "$(local_date 5)" ]
	[ "$(jqr '.[1].startTime')" = 10:00:00 ]
	[ "$(jqr '.[1].endTime')" = 11:30:00 ]
	[ "$(jqr '.[1].format')" = TWO_VS_TWO ]
	[ "$(jqr '.[1].skillLevel')" = INTERMEDIATE ]
	[ "$(jqr '.[1].matchStatus')" = OPEN ]
	[ "$(jqr '.[1].availableSlots')" = 3 ]
	[ "$(jqr '.[1].pricePerPlayer')" = 5 ]
	[ "$(jqr '.[1].resourceName')" = "Pista 7" ]
	[ "$(jqr '.[1].venueName')" = "Club Central" ]
	[ "$(jqr '.[1].venueCity')" = Madrid ]
	[ "$(jqr '.[1] | has("invitationToken")')" = false ]
	[ "$(jqr '.[0].format')" = ONE_VS_ONE ]
	[ "$(jqr '.[0].availableSlots')" = 1 ]
	[ "$(jqr '.[0].startTime')" = 18:00:00 ]

	req GET /api/match/invitations -t "$TC"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "accepting an invitation joins the team, records the payment and tells the other players" {
	m=$(fixture_match)
	add_player "$m" "$BEA_ID" TEAM_B
	inv=$(invite "$m" "$ANA_ID")
	req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .id)" = "$m" ]
	[ "$(jqr .resourceId)" = "$COURT" ]
	[ "$(jqr .bookingDate)" = "$(local_date 5)" ]
	[ "$(jqr .startTime)" = 10:00:00 ]
	[ "$(jqr .endTime)" = 11:30:00 ]
	[ "$(jqr .format)" = TWO_VS_TWO ]
	[ "$(jqr .skillLevel)" = INTERMEDIATE ]
	[ "$(jqr .status)" = OPEN ]
	[ "$(jqr .invitationToken)" = "$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")" ]
	[ "$(jqr .availableSlots)" = 1 ]
	[ "$(jqr .pricePerPlayer)" = 5 ]
	[[ "$HTTP_BODY" == *'"pricePerPlayer" : 5.00'* ]]
	[[ "$(jqr .expiresAt)" =~ $TS_RE ]]
	[ "$(jqr '.players | length')" = 3 ]
	# players in joining order: the organizer, Bea an hour ago, Ana now
	[ "$(jqr -c '[.players[] | [.playerId, .team, .role, .checkedIn, .checkedInAt]]')" = \
	  "[[\"$ORG_ID\",\"TEAM_A\",\"ORGANIZER\",false,null],[\"$BEA_ID\",\"TEAM_B\",\"PLAYER\",false,null],[\"$ANA_ID\",\"TEAM_B\",\"PLAYER\",false,null]]" ]
	[[ "$(jqr '.players[2].joinedAt')" =~ $TS_RE ]]
	[ "$(jqr '.players[2].joinedAt')" = "$(sql "SELECT api_ts(joined_at) FROM match_players WHERE player_id = '$ANA_ID'")" ]

	[ "$(sql "SELECT status, responded_at > now() - interval '1 minute' FROM invitations WHERE id = '$inv'")" = "ACCEPTED|t" ]
	[ "$(sql "SELECT team, role, left_at IS NULL FROM match_players WHERE match_request_id = '$m' AND player_id = '$ANA_ID'")" = "TEAM_B|PLAYER|t" ]
	[ "$(sql "SELECT kind, amount, currency, status FROM payments WHERE match_request_id = '$m' AND player_id = '$ANA_ID'")" = "PAYMENT|5.00|EUR|PAID" ]
	[ "$(counts "$m")" = "OPEN|1|2|3|3|2" ]
	[ "$(sql "SELECT string_agg(recipient_id::text, ',' ORDER BY recipient_id) FROM notifications WHERE type = 'PLAYER_JOINED'")" = \
	  "$(printf '%s\n' "$ORG_ID" "$BEA_ID" | sort | paste -sd,)" ]
	[ "$(sql "SELECT DISTINCT payload::text FROM notifications")" = \
	  "{\"team\": \"TEAM_B\", \"playerId\": \"$ANA_ID\", \"matchRequestId\": \"$m\"}" ]
}

@test "taking the last place makes the match MATCHED, expires the other invitations and tells everyone" {
	m=$(fixture_match ONE_VS_ONE)
	inv=$(invite "$m" "$ANA_ID")
	other=$(invite "$m" "$BEA_ID")
	declined=$(invite "$m" "$CAR_ID" DECLINED)
	req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .status)" = MATCHED ]
	[ "$(jqr .availableSlots)" = 0 ]
	[ "$(jqr .pricePerPlayer)" = 10 ]
	[ "$(jqr -c '[.players[] | [.playerId, .team, .role]]')" = \
	  "[[\"$ORG_ID\",\"TEAM_A\",\"ORGANIZER\"],[\"$ANA_ID\",\"TEAM_B\",\"PLAYER\"]]" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = ACCEPTED ]
	[ "$(sql "SELECT status, responded_at IS NULL FROM invitations WHERE id = '$other'")" = "EXPIRED|t" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$declined'")" = DECLINED ]
	[ "$(counts "$m")" = "MATCHED|1|1|2|2|3" ]
	[ "$(sql "SELECT string_agg(recipient_id::text, ',' ORDER BY recipient_id) FROM notifications WHERE type = 'MATCH_FULL'")" = \
	  "$(printf '%s\n' "$ORG_ID" "$ANA_ID" | sort | paste -sd,)" ]
	[ "$(sql "SELECT DISTINCT payload::text FROM notifications WHERE type = 'MATCH_FULL'")" = "{\"matchRequestId\": \"$m\"}" ]
	[ "$(sql "SELECT recipient_id FROM notifications WHERE type = 'PLAYER_JOINED'")" = "$ORG_ID" ]

	# the expired invitation can no longer be used, and the match takes nobody else
	req POST "/api/match/invitations/$other/accept" -t "$TB" -d '{"team": "TEAM_A"}'
	expect_problem 409 INVALID_STATE
	req GET /api/match/invitations -t "$TB"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "a full team is refused with TEAM_FULL and nothing is written" {
	m=$(fixture_match)
	add_player "$m" "$BEA_ID" TEAM_A
	inv=$(invite "$m" "$ANA_ID")
	before=$(counts "$m")
	req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_A"}'
	expect_problem 409 TEAM_FULL
	[ "$(counts "$m")" = "$before" ]
	[ "$(sql "SELECT status, responded_at IS NULL FROM invitations WHERE id = '$inv'")" = "PENDING|t" ]
	# the other team still has room
	req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(counts "$m")" = "OPEN|2|1|3|3|2" ]
}

@test "the database refuses a player too many whatever the code does" {
	expect_log postgres 'violates check constraint "match_requests_team_capacity"'
	m=$(fixture_match ONE_VS_ONE)
	run sql "INSERT INTO match_players (match_request_id, player_id, team, role)
	         VALUES ('$m', '$ANA_ID', 'TEAM_A', 'PLAYER')"
	[ "$status" -ne 0 ]
	[[ "$output" == *match_requests_team_capacity* ]]
	[ "$(counts "$m")" = "OPEN|1|0|1|1|0" ]
}

@test "a player already in the match cannot join it again" {
	m=$(fixture_match)
	add_player "$m" "$ANA_ID" TEAM_B
	inv=$(invite "$m" "$ANA_ID")
	before=$(counts "$m")
	req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 409 ALREADY_IN_MATCH
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	req POST "/api/match/join/$token" -t "$TA" -d '{"team": "TEAM_A"}'
	expect_problem 409 ALREADY_IN_MATCH
	# the organizer too
	req POST "/api/match/join/$token" -t "$(token "$ORG")" -d '{"team": "TEAM_B"}'
	expect_problem 409 ALREADY_IN_MATCH
	[ "$(counts "$m")" = "$before" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = PENDING ]
}

@test "another player's invitation and an unknown one are not found" {
	m=$(fixture_match)
	theirs=$(invite "$m" "$BEA_ID")
	before=$(counts "$m")
	req POST "/api/match/invitations/$theirs/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 404 NOT_FOUND
	req POST "/api/match/invitations/$NOWHERE/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 404 NOT_FOUND
	req POST "/api/match/invitations/$theirs/decline" -t "$TA"
	expect_problem 404 NOT_FOUND
	req POST "/api/match/invitations/$NOWHERE/decline" -t "$TA"
	expect_problem 404 NOT_FOUND
	req POST /api/match/invitations/nope/accept -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 400 VALIDATION_FAILED id
	[ "$(counts "$m")" = "$before" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$theirs'")" = PENDING ]
}

@test "an invitation already answered cannot be accepted or declined" {
	m=$(fixture_match)
	for st in DECLINED ACCEPTED EXPIRED; do
		sql "DELETE FROM invitations"
		inv=$(invite "$m" "$ANA_ID" "$st")
		req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
		expect_problem 409 INVALID_STATE
		req POST "/api/match/invitations/$inv/decline" -t "$TA"
		expect_problem 409 INVALID_STATE
		[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = "$st" ]
	done
	[ "$(counts "$m")" = "OPEN|1|0|1|1|0" ]
}

@test "joining a match that is not open is refused with MATCH_NOT_OPEN, a started one with MATCH_STARTED" {
	for st in PENDING_PAYMENT MATCHED CONFIRMED COMPLETED CANCELLED; do
		COURT=$(fixture_court "$VENUE")
		m=$(fixture_match TWO_VS_TWO "$st")
		inv=$(invite "$m" "$ANA_ID")
		req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
		expect_problem 409 MATCH_NOT_OPEN
		token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
		req POST "/api/match/join/$token" -t "$TB" -d '{"team": "TEAM_B"}'
		expect_problem 409 MATCH_NOT_OPEN
		[ "$(counts "$m")" = "$st|1|0|1|1|0" ]
		[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = PENDING ]
	done
	# OPEN, but its start time has passed (the sweeper has not run yet)
	COURT=$(fixture_court "$VENUE")
	m=$(fixture_match TWO_VS_TWO OPEN 0 00:00)
	inv=$(invite "$m" "$ANA_ID")
	req POST "/api/match/invitations/$inv/accept" -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 409 MATCH_STARTED
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	req POST "/api/match/join/$token" -t "$TB" -d '{"team": "TEAM_B"}'
	expect_problem 409 MATCH_STARTED
	[ "$(counts "$m")" = "OPEN|1|0|1|1|0" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = PENDING ]
}

@test "the team must be given as TEAM_A or TEAM_B" {
	m=$(fixture_match)
	inv=$(invite "$m" "$ANA_ID")
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	for body in '{}' '{"team": null}' '{"team": "TEAM_C"}' '{"team": 1}'; do
		req POST "/api/match/invitations/$inv/accept" -t "$TA" -d "$body"
		expect_problem 400 VALIDATION_FAILED team
		req POST "/api/match/join/$token" -t "$TA" -d "$body"
		expect_problem 400 VALIDATION_FAILED team
	done
	req POST "/api/match/join/$token" -t "$TA" -H 'Content-Type: application/json'
	expect_problem 400 BODY_REQUIRED
	req POST "/api/match/join/$token" -t "$TA"
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	[ "$(counts "$m")" = "OPEN|1|0|1|1|0" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$inv'")" = PENDING ]
}

@test "declining an invitation marks it DECLINED and answers 204" {
	m=$(fixture_match)
	inv=$(invite "$m" "$ANA_ID")
	req POST "/api/match/invitations/$inv/decline" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT status, responded_at > now() - interval '1 minute' FROM invitations WHERE id = '$inv'")" = "DECLINED|t" ]
	[ "$(counts "$m")" = "OPEN|1|0|1|1|0" ]
	req GET /api/match/invitations -t "$TA"
	[ "$HTTP_BODY" = '[]' ]
	req POST "/api/match/invitations/$inv/decline" -t "$TA"
	expect_problem 409 INVALID_STATE
}

@test "anyone holding the token joins the match" {
	m=$(fixture_match)
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	req POST "/api/match/join/$token" -t "$TC" -d '{"team": "TEAM_A"}'
	expect 200
	[ "$(jqr .id)" = "$m" ]
	[[ "$(jqr .invitationToken)" =~ $UUID_RE ]]
	[ "$(jqr .status)" = OPEN ]
	[ "$(jqr .availableSlots)" = 2 ]
	[ "$(jqr .invitationToken)" = "$token" ]
	[ "$(jqr -c '[.players[] | [.playerId, .team, .role, .checkedIn]]')" = \
	  "[[\"$ORG_ID\",\"TEAM_A\",\"ORGANIZER\",false],[\"$CAR_ID\",\"TEAM_A\",\"PLAYER\",false]]" ]
	[ "$(sql "SELECT kind, amount, currency, status FROM payments WHERE player_id = '$CAR_ID'")" = "PAYMENT|5.00|EUR|PAID" ]
	[ "$(sql "SELECT recipient_id, type FROM notifications")" = "$ORG_ID|PLAYER_JOINED" ]
	[ "$(counts "$m")" = "OPEN|2|0|2|2|1" ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
}

@test "joining by token accepts the caller's pending invitation to that match" {
	m=$(fixture_match)
	mine=$(invite "$m" "$ANA_ID")
	theirs=$(invite "$m" "$BEA_ID")
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	req POST "/api/match/join/$token" -t "$TA" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(sql "SELECT status, responded_at IS NOT NULL FROM invitations WHERE id = '$mine'")" = "ACCEPTED|t" ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$theirs'")" = PENDING ]
	[ "$(counts "$m")" = "OPEN|1|1|2|2|1" ]
}

@test "filling the match by token makes it MATCHED with MATCH_FULL for every player" {
	m=$(fixture_match)
	add_player "$m" "$ANA_ID" TEAM_A
	add_player "$m" "$BEA_ID" TEAM_B
	pending=$(invite "$m" "$(user_id "dan-$RUN")")
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	req POST "/api/match/join/$token" -t "$TC" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .status)" = MATCHED ]
	[ "$(jqr .availableSlots)" = 0 ]
	[ "$(sql "SELECT status FROM invitations WHERE id = '$pending'")" = EXPIRED ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_FULL'")" = 4 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_JOINED'")" = 3 ]
	[ "$(counts "$m")" = "MATCHED|2|2|4|4|7" ]
}

@test "an unknown token is not found and a malformed one is a validation error" {
	m=$(fixture_match)
	req POST "/api/match/join/$NOWHERE" -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 404 NOT_FOUND
	# the match id is not its token
	req POST "/api/match/join/$m" -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 404 NOT_FOUND
	req POST /api/match/join/abc -t "$TA" -d '{"team": "TEAM_B"}'
	expect_problem 400 VALIDATION_FAILED token
	[ "$(counts "$m")" = "OPEN|1|0|1|1|0" ]
}

@test "invitation and join routes need a token" {
	m=$(fixture_match)
	inv=$(invite "$m" "$ANA_ID")
	req GET /api/match/invitations
	expect_problem 401 UNAUTHORIZED
	req POST "/api/match/invitations/$inv/accept" -d '{"team": "TEAM_B"}'
	expect_problem 401 UNAUTHORIZED
	req POST "/api/match/invitations/$inv/decline"
	expect_problem 401 UNAUTHORIZED
	req POST "/api/match/join/$NOWHERE" -d '{"team": "TEAM_B"}'
	expect_problem 401 UNAUTHORIZED
	req GET "/api/match/invitations/$inv/accept" -t "$TA"
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = POST ]
}

@test "twenty players racing for the last place: exactly one gets it" {
	m=$(fixture_match)
	add_player "$m" "$ANA_ID" TEAM_A
	add_player "$m" "$BEA_ID" TEAM_B
	token=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m'")
	dir=$BATS_TEST_TMPDIR/race
	mkdir -p "$dir"
	for i in $(seq 1 20); do
		tokens[i]=$(token "racer-$i-$RUN")
	done
	for i in $(seq 1 20); do
		curl -s -o "$dir/$i.body" -w '%{http_code}' -X POST \
			-H "Authorization: Bearer ${tokens[i]}" -H 'Content-Type: application/json' \
			--data-binary '{"team": "TEAM_B"}' "$BASE_URL/api/match/join/$token" >"$dir/$i.status" &
	done
	wait
	ok=0 refused=0
	for i in $(seq 1 20); do
		st=$(cat "$dir/$i.status")
		if [ "$st" = 200 ]; then
			ok=$((ok + 1))
		elif [ "$st" = 409 ]; then
			code=$(jq -r .code "$dir/$i.body")
			[ "$code" = TEAM_FULL ] || [ "$code" = MATCH_NOT_OPEN ] || { echo "racer $i: $code" >&2; false; }
			refused=$((refused + 1))
		else
			echo "racer $i: $st $(cat "$dir/$i.body")" >&2
			false
		fi
	done
	[ "$ok" = 1 ]
	[ "$refused" = 19 ]
	[ "$(counts "$m")" = "MATCHED|2|2|4|4|7" ]
	# no extra row ever existed: every player row and payment ever written is one of the four
	[ "$(sql "SELECT count(*) FROM match_players WHERE match_request_id = '$m'")" = 4 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE match_request_id = '$m'")" = 4 ]
}

@test "joins through connections a PostgreSQL restart ended are made on new ones: none is lost" {
	# the restart ends every session, an autovacuum worker's included: the server says so
	expect_log postgres 'FATAL:  terminating (connection|autovacuum process) due to administrator command|FATAL:  the database system is shutting down'
	# A join is one statement, its own transaction, never sent twice (match_request_json,
	# sql/areas/90_json.sql): a connection the server ended must be found before it is sent.
	# Nothing else goes first on it: no write budget, and a token the worker knows (one
	# worker a program in pool mode).
	url=$(extra_apache joinonce WRITE_BUDGET_PER_MINUTE=0 FCGI_WORKERS=1)
	m1=$(fixture_match) m2=$(fixture_match TWO_VS_TWO OPEN 6)
	t1=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m1'")
	t2=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$m2'")
	req POST "/api/match/join/$t1" -b "$url" -t "$TC" -d '{"team": "TEAM_B"}'
	expect 200
	"$COURTS_ROOT/scripts/stack.sh" restart-pg "$COURTS_STATE"
	req POST "/api/match/join/$t2" -b "$url" -t "$TC" -d '{"team": "TEAM_B"}'
	expect 200
	[ "$(jqr .id)" = "$m2" ]
	[ "$(jqr -c '[.players[] | [.playerId, .team]]')" = "[[\"$ORG_ID\",\"TEAM_A\"],[\"$CAR_ID\",\"TEAM_B\"]]" ]
	[ "$(counts "$m1")" = "OPEN|1|1|2|2|1" ]
	[ "$(counts "$m2")" = "OPEN|1|1|2|2|1" ]
}
