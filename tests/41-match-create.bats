#!/usr/bin/env bats
# POST /api/match/requests: a player holds a free court slot; the request awaits payment.

load test_helper
load match_helper

TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
	DAY=$(weekday_date 3)
}

# create_body [JQ_FILTER]: a valid body for $COURT on $DAY at 18:30, changed by the filter.
create_body() {
	jq -nc --arg r "$COURT" --arg d "$DAY" '{resourceId: $r, bookingDate: $d,
		startTime: "18:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", customMessage: "Friendly game, bring balls",
		searchLat: 40.42, searchLng: -3.70, searchRadiusKm: 5} | '"${1:-.}"
}

# raw NAME: the literal JSON text of top-level field NAME of the last body (money keeps
# its two decimals there, which jq 1.6 would drop).
raw() {
	grep -o "\"$1\" : [^,}]*" <<<"$HTTP_BODY" | head -n 1 | sed 's/^[^:]*: //'
}

# nothing_written: no request, player, payment, invitation or notification exists.
nothing_written() {
	[ "$(sql "SELECT (SELECT count(*) FROM match_requests) + (SELECT count(*) FROM match_players)
	          + (SELECT count(*) FROM payments) + (SELECT count(*) FROM invitations)
	          + (SELECT count(*) FROM notifications)")" = 0 ]
}

@test "creating a match request answers 201 with the request awaiting payment and the organizer as first player" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	id=$(jqr .id)
	[[ $id =~ $UUID_RE ]]
	[ "$(jqr 'keys_unsorted | join(",")')" = "id,resourceId,bookingDate,startTime,endTime,format,skillLevel,visibility,competitive,status,invitationToken,availableSlots,pricePerPlayer,currency,courtPrice,organizerId,customMessage,expiresAt,createdAt,players,waitlistLength,result,myPayment" ]
	# the organizer's own share, owed until the hold's end; no provider: no client secret
	[ "$(jqr -c '.myPayment | [.status, .currency, .clientSecret]')" = '["PENDING","EUR",null]' ]
	[ "$(raw amount)" = 5.00 ]
	[ "$(jqr .myPayment.expiresAt)" = "$(jqr .expiresAt)" ]
	[ "$(jqr .resourceId)" = "$COURT" ]
	[ "$(jqr .bookingDate)" = "$DAY" ]
	[ "$(jqr .startTime)" = 18:30:00 ]
	[ "$(jqr .endTime)" = 20:00:00 ]
	[ "$(jqr .format)" = TWO_VS_TWO ]
	[ "$(jqr .skillLevel)" = INTERMEDIATE ]
	[ "$(jqr -c '[.visibility, .competitive]')" = '["PUBLIC",true]' ]
	[ "$(jqr .result)" = null ]
	[ "$(jqr .status)" = PENDING_PAYMENT ]
	[[ $(jqr .invitationToken) =~ $UUID_RE ]]
	[ "$(jqr .invitationToken)" != "$id" ]
	[ "$(jqr .availableSlots)" = 3 ]
	[ "$(raw pricePerPlayer)" = 5.00 ]
	[ "$(jqr .currency)" = EUR ]
	[ "$(raw courtPrice)" = 20.00 ]
	[ "$(jqr .organizerId)" = "$ORG" ]
	[ "$(jqr .customMessage)" = "Friendly game, bring balls" ]
	[[ $(jqr .expiresAt) =~ $TS_RE ]]
	[[ $(jqr .createdAt) =~ $TS_RE ]]
	[ "$(jqr '.players | length')" = 1 ]
	[ "$(jqr '.players[0] | keys_unsorted | join(",")')" = "playerId,team,role,joinedAt,checkedIn,checkedInAt" ]
	[ "$(jqr '.players[0].playerId')" = "$ORG" ]
	[ "$(jqr '.players[0].team')" = TEAM_A ]
	[ "$(jqr '.players[0].role')" = ORGANIZER ]
	[[ $(jqr '.players[0].joinedAt') =~ $TS_RE ]]
	[ "$(jqr '.players[0].checkedIn')" = false ]
	[ "$(jqr '.players[0].checkedInAt')" = null ]

	# the row: instants from the venue's zone, a 900 s payment window shown as expiresAt
	[ "$(sql "SELECT starts_at = timestamp '$DAY 18:30' AT TIME ZONE 'Europe/Madrid'
	             AND ends_at = timestamp '$DAY 20:00' AT TIME ZONE 'Europe/Madrid'
	             AND expires_at - created_at = interval '900 seconds'
	             AND api_ts(expires_at) = '$(jqr .expiresAt)'
	             AND organizer_id = '$ORG' AND team_size = 2 AND team_a_count = 1
	             AND team_b_count = 0 AND search_latitude = 40.42 AND search_longitude = -3.70
	             AND search_radius_km = 5 AND cancel_reason IS NULL
	           FROM match_requests WHERE id = '$id'")" = t ]
	# the organizer's payment, pending
	[ "$(sql "SELECT player_id || ' ' || kind || ' ' || amount || ' ' || currency || ' ' || status
	            || ' ' || coalesce(provider_ref, '-') FROM payments")" = "$ORG PAYMENT 5.00 EUR PENDING -" ]
	# nobody is invited or told before the payment
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]

	# the organizer reads it back, in the list of their requests too
	req GET "/api/match/requests/$id" -t "$TOKEN"
	expect 200
	[ "$(jqr .id)" = "$id" ]
	[ "$(jqr .status)" = PENDING_PAYMENT ]
	req GET /api/match/requests/my -t "$TOKEN"
	expect 200
	[ "$(jqr 'length')" = 1 ]
	[ "$(jqr '.[0].id')" = "$id" ]
}

# uuid_ms ID: the milliseconds since 1970 in the first 48 bits of a UUID of version 7
uuid_ms() { local h=${1//-/}; echo $((16#${h:0:12})); }

@test "a match and its rows get keys in the order they are made (UUID version 7); its invitation token stays random (version 4)" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	first=$(jqr .id)
	made=$(date -u -d "$(jqr .createdAt)" +%s%3N)
	token=$(jqr .invitationToken)
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.startTime = "20:00:00"')"
	expect 201
	second=$(jqr .id)
	# version 7 with RFC 9562's variant, made within seconds of the match's createdAt
	[ "${first:14:1}" = 7 ]
	[[ ${first:19:1} == [89ab] ]]
	ms=$(uuid_ms "$first")
	[ "$ms" -ge "$made" ]
	[ "$ms" -lt $((made + 10000)) ]
	# the later match sorts after the earlier one, as text and as the uuid type
	[[ $second > $first ]]
	[ "$(sql "SELECT '$second'::uuid > '$first'::uuid")" = t ]
	# the token, a secret, carries no time: version 4
	[ "${token:14:1}" = 4 ]
	[ "$(sql "SELECT count(*) FILTER (WHERE substr(invitation_token::text, 15, 1) = '4')
	          FROM match_requests")" = 2 ]
	# the organizers' places and their payments alike, each made within seconds of its match
	[ "$(sql "SELECT count(*) FROM match_players p JOIN payments y ON y.entry_id = p.id
	          WHERE substr(p.id::text, 15, 1) = '7' AND substr(y.id::text, 15, 1) = '7'
	            AND abs(('x' || left(replace(y.id::text, '-', ''), 12))::bit(48)::bigint
	                    - ('x' || left(replace(p.match_request_id::text, '-', ''), 12))::bit(48)::bigint)
	                < 10000")" = 2 ]
}

@test "a ONE_VS_ONE request has one free place and each player pays half" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.format = "ONE_VS_ONE" | del(.customMessage, .searchRadiusKm)')"
	expect 201
	[ "$(jqr .format)" = ONE_VS_ONE ]
	[ "$(jqr .availableSlots)" = 1 ]
	[ "$(raw pricePerPlayer)" = 10.00 ]
	[ "$(jqr .customMessage)" = null ]
	[ "$(sql "SELECT team_size || ' ' || search_radius_km FROM match_requests")" = "1 10.000" ]
	[ "$(sql "SELECT amount || ' ' || status FROM payments")" = "10.00 PENDING" ]
}

@test "uneven prices are split down to the cent and the organizer's share takes the remainder" {
	sql "UPDATE price_rules SET price = 10.01 WHERE resource_id = '$COURT'"
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.format = "AMERICANO"')"
	expect 201
	[ "$(jqr .format)" = AMERICANO ]
	[ "$(jqr .availableSlots)" = 3 ]
	[ "$(raw pricePerPlayer)" = 2.50 ]
	[ "$(raw courtPrice)" = 10.01 ]
	[ "$(sql "SELECT amount FROM payments WHERE player_id = '$ORG'")" = 2.51 ]
	# three joined shares plus the organizer's add up to the court price exactly
	[ "$(sql "SELECT price_per_player * 3 + (SELECT amount FROM payments) = court_price
	           FROM match_requests")" = t ]
}

@test "the held slot is no longer available" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	[ "$(sql "SELECT available FROM resource_slots('$COURT', '$DAY') WHERE start_time = '18:30'")" = f ]
	[ "$(sql "SELECT available FROM resource_slots('$COURT', '$DAY') WHERE start_time = '17:00'")" = t ]
	if [ -x "$COURTS_BUILD/cgi-bin/public.cgi" ]; then
		req GET "/api/resources/$COURT/slots?date=$DAY"
		expect 200
		[ "$(jqr '.[] | select(.startTime == "18:30:00") | .available')" = false ]
		[ "$(jqr '.[] | select(.startTime == "17:00:00") | .available')" = true ]
	fi
}

@test "a second request for the same slot is 409 SLOT_TAKEN and writes nothing" {
	# the exclusion constraint decides, as designed: PostgreSQL logs the refused insert
	expect_log postgres 'conflicting key value violates exclusion constraint "match_requests_no_double_booking"'
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	first=$(jqr .id)
	user_id other >/dev/null
	req POST /api/match/requests -t "$(token other)" -d "$(create_body '.format = "ONE_VS_ONE"')"
	expect_problem 409 SLOT_TAKEN
	# the organizer cannot hold it twice either
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect_problem 409 SLOT_TAKEN
	[ "$(sql "SELECT string_agg(id::text, ',') FROM match_requests")" = "$first" ]
	[ "$(sql "SELECT count(*) FROM match_players")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments")" = 1 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "a slot of a cancelled request can be held again" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER'"
	req POST /api/match/requests -t "$(token other)" -d "$(create_body)"
	expect 201
	[ "$(sql "SELECT count(*) FROM match_requests WHERE status = 'PENDING_PAYMENT'")" = 1 ]
}

@test "hours the court is closed and starts off the slot grid are 409 SLOT_NOT_OFFERED" {
	for start in 07:00:00 21:30:00 09:00:00 18:31:00; do
		req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".startTime = \"$start\"")"
		expect_problem 409 SLOT_NOT_OFFERED
	done
	# a day the court is closed
	dow=$(date -d "$DAY" +%u)
	sql "UPDATE resource_schedules SET opening_time = NULL, closing_time = NULL
	     WHERE resource_id = '$COURT' AND day_of_week = $dow"
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect_problem 409 SLOT_NOT_OFFERED
	nothing_written
}

@test "a slot length other than the court's is 409 SLOT_NOT_OFFERED" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.slotDurationMinutes = 60')"
	expect_problem 409 SLOT_NOT_OFFERED
	nothing_written
}

@test "a slot that has started is 409 SLOT_IN_PAST" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".bookingDate = \"$(local_date -1)\"")"
	expect_problem 409 SLOT_IN_PAST
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".bookingDate = \"$(local_date -400)\" | .startTime = \"08:00:00\"")"
	expect_problem 409 SLOT_IN_PAST
	nothing_written
}

@test "a slot no price rule covers is 409 NOT_BOOKABLE" {
	sql "DELETE FROM price_rules WHERE resource_id = '$COURT' AND day_type = 'WEEKDAY'"
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$COURT', 'WEEKDAY', '08:00', '12:00', 20.00, 'EUR')"
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect_problem 409 NOT_BOOKABLE
	nothing_written
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.startTime = "09:30:00"')"
	expect 201
}

@test "a court players cannot see is 404" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.resourceId = "00000000-0000-4000-8000-000000000000"')"
	expect_problem 404 NOT_FOUND
	suspended=$(fixture_court "$VENUE" 90 SUSPENDED)
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".resourceId = \"$suspended\"")"
	expect_problem 404 NOT_FOUND
	pending=$(fixture_court "$VENUE" 90 PENDING_APPROVAL)
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".resourceId = \"$pending\"")"
	expect_problem 404 NOT_FOUND
	hidden=$(fixture_court "$(fixture_venue owner2 SUSPENDED)" 90)
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".resourceId = \"$hidden\"")"
	expect_problem 404 NOT_FOUND
	nothing_written
}

@test "a body without the required fields is 400 naming each of them" {
	req POST /api/match/requests -t "$TOKEN" -d '{}'
	expect_problem 400 VALIDATION_FAILED resourceId bookingDate startTime slotDurationMinutes \
		format skillLevel searchLat searchLng
	[ "$(jqr '.errors | length')" = 8 ]
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.searchLat = null | .format = null')"
	expect_problem 400 VALIDATION_FAILED searchLat format
	nothing_written
}

@test "malformed values are 400 naming each field" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.resourceId = "court-1"
		| .bookingDate = "2030-02-30" | .startTime = "25:00:00" | .slotDurationMinutes = 90.5
		| .format = "THREE_VS_THREE" | .skillLevel = "ANY" | .customMessage = 7
		| .searchLat = 91 | .searchLng = -181 | .searchRadiusKm = 0')"
	expect_problem 400 VALIDATION_FAILED resourceId bookingDate startTime slotDurationMinutes \
		format skillLevel customMessage searchLat searchLng searchRadiusKm
	[ "$(jqr '.errors | length')" = 10 ]
	nothing_written
}

@test "ANY is not a skill level a match can have" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.skillLevel = "ANY"')"
	expect_problem 400 VALIDATION_FAILED skillLevel
	nothing_written
}

@test "out-of-range numbers and a long message are 400" {
	# two strings, not one and a substring: ${s:1} counts bytes where the locale is not UTF-8
	long=$(printf 'é%.0s' $(seq 501))
	most=$(printf 'é%.0s' $(seq 500))
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".searchRadiusKm = 100.5
		| .slotDurationMinutes = 0 | .searchLat = -90.01 | .searchLng = 180.5
		| .customMessage = \"$long\" | .startTime = \"18:30\"")"
	expect_problem 400 VALIDATION_FAILED searchRadiusKm slotDurationMinutes searchLat searchLng \
		customMessage startTime
	nothing_written
	# 500 characters (1000 bytes) and the edges of the ranges are fine
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".searchRadiusKm = 100
		| .searchLat = -90 | .searchLng = 180 | .customMessage = \"$most\"")"
	expect 201
	[ "$(jqr '.customMessage | length')" = 500 ]
}

@test "a body that is not JSON is refused" {
	req POST /api/match/requests -t "$TOKEN" -d 'resourceId=1' -H 'Content-Type: application/x-www-form-urlencoded'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	req POST /api/match/requests -t "$TOKEN" -d '{"resourceId":'
	expect_problem 400 MALFORMED_JSON
	nothing_written
}

@test "creating without a valid token is 401" {
	req POST /api/match/requests -d "$(create_body)"
	expect_problem 401 UNAUTHORIZED
	[ -n "$(header WWW-Authenticate)" ]
	req POST /api/match/requests -t not.a.token -d "$(create_body)"
	expect_problem 401 INVALID_TOKEN
	nothing_written
}

@test "the list of my requests has only mine, upcoming first, cancelled ones included" {
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body ".bookingDate = \"$(weekday_date 10)\"")"
	expect 201
	later=$(jqr .id)
	# paid, so that it is no longer one of the player's MAX_UNPAID_HOLDS unpaid holds
	req POST "/api/match/requests/$later/confirm-payment" -t "$TOKEN"
	expect 200
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	sooner=$(jqr .id)
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body '.startTime = "08:00:00"')"
	expect 201
	cancelled=$(jqr .id)
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER' WHERE id = '$cancelled'"
	req POST /api/match/requests -t "$(token other)" -d "$(create_body '.startTime = "11:00:00"')"
	expect 201
	theirs=$(jqr .id)

	req GET /api/match/requests/my -t "$TOKEN"
	expect 200
	[ "$(jqr 'map(.id) | join(",")')" = "$cancelled,$sooner,$later" ]
	[ "$(jqr '.[0].status')" = CANCELLED ]
	req GET /api/match/requests/my -t "$(token other)"
	expect 200
	[ "$(jqr 'map(.id) | join(",")')" = "$theirs" ]
	req GET /api/match/requests/my -t "$(token nobody)"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	req GET "/api/match/requests/$theirs" -t "$TOKEN"
	expect_problem 404 NOT_FOUND
	req GET /api/match/requests/my
	expect_problem 401 UNAUTHORIZED
}

@test "creates through connections a PostgreSQL restart ended are made on new ones: none is lost" {
	# the restart ends every session, an autovacuum worker's included: the server says so
	expect_log postgres 'FATAL:  terminating (connection|autovacuum process) due to administrator command|FATAL:  the database system is shutting down'
	# A create is one statement, its own transaction, never sent twice: a connection the
	# server ended must be found before it is sent, not after. Here nothing else goes first
	# on the request's connection: no write budget (an operator's choice), and a token the
	# worker knows (one worker a program in pool mode) needs no look-up of its user.
	url=$(extra_apache onestatement WRITE_BUDGET_PER_MINUTE=0 MAX_UNPAID_HOLDS=20 FCGI_WORKERS=1)
	slots=(08:00:00 09:30:00 11:00:00 12:30:00 14:00:00 15:30:00 17:00:00 18:30:00)
	for s in "${slots[@]:0:4}"; do
		req POST /api/match/requests -b "$url" -t "$TOKEN" -d "$(create_body ".startTime = \"$s\"")"
		expect 201
	done
	"$COURTS_ROOT/scripts/stack.sh" restart-pg "$COURTS_STATE"
	for s in "${slots[@]:4:4}"; do
		req POST /api/match/requests -b "$url" -t "$TOKEN" -d "$(create_body ".startTime = \"$s\"")"
		expect 201
	done
	[ "$(sql "SELECT count(*) FROM match_requests WHERE status = 'PENDING_PAYMENT'")" = 8 ]
	[ "$(sql "SELECT count(*) FROM payments")" = 8 ]
}
