#!/usr/bin/env bats
# An administrator reviews venues and courts: lists and looks at them, approves, rejects,
# suspends and reactivates them (cgi-bin/admin.c). Every test runs for both kinds: venues
# and resources have the same transitions, and their tables the same names as their paths.

load test_helper

VENUE_KEYS="id,ownerId,name,description,street,city,country,postalCode,latitude,longitude,timezone,status,rejectReason,images,resourceCount,createdAt,updatedAt"
RESOURCE_KEYS="id,venueId,name,description,type,slotDurationMinutes,status,rejectReason,schedules,priceRules,images,createdAt,updatedAt"
KINDS="venues resources"
UNKNOWN=00000000-0000-4000-8000-000000000000

setup() {
	reset_db
	ADMIN=$(token admin1 ADMIN)
	# a FastCGI owner.cgi remembers the local id of each token subject it saw, and reset_db
	# gives a subject a new id: an owner subject of its own per test keeps the two in step
	OWNER_SUB="admin-bats-owner-$BATS_TEST_NUMBER"
}

# thing KIND STATUS [SUSPENDED_BY]: a venue, or a court of an ACTIVE venue, of OWNER_SUB in that
# state, last changed long ago (so a change shows in updated_at); prints its id.
thing() {
	local id
	if [ "$1" = venues ]; then
		id=$(fixture_venue "$OWNER_SUB" "$2")
	else
		id=$(fixture_court "$(fixture_venue "$OWNER_SUB")" 90 "$2")
	fi
	sql "UPDATE $1 SET updated_at = '2020-01-01', suspended_by = COALESCE(NULLIF('${3:-}', ''), suspended_by)
	      WHERE id = '$id'"
	echo "$id"
}

# state KIND ID: "status|suspended_by|reject_reason|changed", changed t when updated_at moved.
state() {
	sql "SELECT status || '|' || COALESCE(suspended_by, '') || '|' || COALESCE(reject_reason, '')
	            || '|' || (updated_at > '2020-01-01')::text
	       FROM $1 WHERE id = '$2'"
}

# patch KIND ID ACTION [BODY] [TOKEN]
patch() {
	local body=${4:-} tok=${5:-$ADMIN}
	if [ -n "$body" ]; then
		req PATCH "/api/admin/$1/$2/$3" -t "$tok" -d "$body"
	else
		req PATCH "/api/admin/$1/$2/$3" -t "$tok"
	fi
}

# ---- approve -----------------------------------------------------------------------------

@test "an admin approves a pending venue or court: ACTIVE and visible to players" {
	for kind in $KINDS; do
		id=$(thing $kind PENDING_APPROVAL)
		patch $kind "$id" approve
		expect 204 -
		[ "$(state $kind "$id")" = "ACTIVE|||true" ]
	done
	venue=$(sql "SELECT id FROM venues ORDER BY created_at LIMIT 1")
	req GET "/api/venues/$venue"
	expect 200
	court=$(sql "SELECT id FROM resources")
	req GET "/api/resources/$court/slots?date=$(local_date 1)"
	expect 200
}

@test "approving from any state but PENDING_APPROVAL is 409 INVALID_STATE and changes nothing" {
	for kind in $KINDS; do
		for st in ACTIVE SUSPENDED:OWNER SUSPENDED:ADMIN REJECTED; do
			id=$(thing $kind "${st%%:*}" "$(sed -n 's/.*://p' <<<"$st")")
			before=$(state $kind "$id")
			patch $kind "$id" approve
			expect_problem 409 INVALID_STATE
			[[ "$(jqr .detail)" == *"${st%%:*}"* ]]
			[ "$(state $kind "$id")" = "$before" ]
			[[ "$before" == *"|false" ]]
		done
	done
}

# ---- reject ------------------------------------------------------------------------------

@test "an admin rejects a pending venue or court with a reason the owner sees" {
	for kind in $KINDS; do
		id=$(thing $kind PENDING_APPROVAL)
		patch $kind "$id" reject '{"reason": "  Photos are blurry  "}'
		expect 204 -
		[ "$(state $kind "$id")" = "REJECTED||Photos are blurry|true" ]
	done
	req GET /api/owner/venues -t "$(token "$OWNER_SUB" OWNER)"
	expect 200
	[ "$(jqr '.[0].status')" = REJECTED ]
	[ "$(jqr '.[0].rejectReason')" = "Photos are blurry" ]
}

@test "rejecting needs a reason that is not blank, and changes nothing without one" {
	for kind in $KINDS; do
		id=$(thing $kind PENDING_APPROVAL)
		for body in '{}' '{"reason": ""}' '{"reason": "   "}' '{"reason": null}' '{"reason": 7}'; do
			patch $kind "$id" reject "$body"
			expect_problem 400 VALIDATION_FAILED reason
		done
		req PATCH "/api/admin/$kind/$id/reject" -t "$ADMIN"
		expect_problem 415 UNSUPPORTED_MEDIA_TYPE
		patch $kind "$id" reject '"Blurry"'
		expect_problem 400 MALFORMED_JSON
		[ "$(state $kind "$id")" = "PENDING_APPROVAL|||false" ]
	done
}

@test "rejecting from any state but PENDING_APPROVAL is 409 INVALID_STATE and changes nothing" {
	for kind in $KINDS; do
		for st in ACTIVE SUSPENDED:OWNER SUSPENDED:ADMIN REJECTED; do
			id=$(thing $kind "${st%%:*}" "$(sed -n 's/.*://p' <<<"$st")")
			before=$(state $kind "$id")
			patch $kind "$id" reject '{"reason": "Not a court"}'
			expect_problem 409 INVALID_STATE
			[ "$(state $kind "$id")" = "$before" ]
		done
	done
}

# ---- suspend -----------------------------------------------------------------------------

@test "an admin suspends an ACTIVE venue or court: players no longer see it" {
	for kind in $KINDS; do
		id=$(thing $kind ACTIVE)
		patch $kind "$id" suspend
		expect 204 -
		[ "$(state $kind "$id")" = "SUSPENDED|ADMIN||true" ]
	done
	venue=$(sql "SELECT id FROM venues WHERE status = 'SUSPENDED'")
	req GET "/api/venues/$venue"
	expect_problem 404 NOT_FOUND
	court=$(sql "SELECT id FROM resources")
	req GET "/api/resources/$court/slots?date=$(local_date 1)"
	expect_problem 404 NOT_FOUND
}

@test "an admin takes over a suspension made by the owner" {
	for kind in $KINDS; do
		id=$(thing $kind SUSPENDED OWNER)
		patch $kind "$id" suspend
		expect 204 -
		[ "$(state $kind "$id")" = "SUSPENDED|ADMIN||true" ]
	done
}

@test "suspending a pending, rejected or admin-suspended one is 409 INVALID_STATE" {
	for kind in $KINDS; do
		for st in PENDING_APPROVAL SUSPENDED:ADMIN REJECTED; do
			id=$(thing $kind "${st%%:*}" "$(sed -n 's/.*://p' <<<"$st")")
			before=$(state $kind "$id")
			patch $kind "$id" suspend
			expect_problem 409 INVALID_STATE
			[[ "$(jqr .detail)" == *"${st%%:*}"* ]]
			[ "$(state $kind "$id")" = "$before" ]
		done
	done
}

# ---- reactivate --------------------------------------------------------------------------

@test "an admin reactivates a venue or court suspended by the owner or by an admin" {
	for kind in $KINDS; do
		for by in OWNER ADMIN; do
			id=$(thing $kind SUSPENDED $by)
			patch $kind "$id" reactivate
			expect 204 -
			[ "$(state $kind "$id")" = "ACTIVE|||true" ]
		done
	done
}

@test "reactivating one that is not suspended is 409 INVALID_STATE and changes nothing" {
	for kind in $KINDS; do
		for st in ACTIVE PENDING_APPROVAL REJECTED; do
			id=$(thing $kind $st)
			before=$(state $kind "$id")
			patch $kind "$id" reactivate
			expect_problem 409 INVALID_STATE
			[[ "$(jqr .detail)" == *"$st"* ]]
			[ "$(state $kind "$id")" = "$before" ]
		done
	done
}

@test "the owner cannot lift an admin suspension; the admin can" {
	owner=$(token "$OWNER_SUB" OWNER)
	for kind in $KINDS; do
		id=$(thing $kind ACTIVE)
		patch $kind "$id" suspend
		expect 204 -
		req PATCH "/api/owner/$kind/$id/reactivate" -t "$owner"
		expect_problem 409 SUSPENDED_BY_ADMIN
		[ "$(state $kind "$id")" = "SUSPENDED|ADMIN||true" ]
		patch $kind "$id" reactivate
		expect 204 -
		[ "$(state $kind "$id")" = "ACTIVE|||true" ]
	done
}

# ---- lists and single objects ------------------------------------------------------------

@test "the venue list shows every venue oldest first and filters by status" {
	for st in REJECTED ACTIVE PENDING_APPROVAL SUSPENDED; do
		id=$(fixture_venue "$OWNER_SUB" $st)
		sql "UPDATE venues SET name = '$st' WHERE id = '$id'"
	done
	sql "UPDATE venues SET created_at = now() - interval '1 day' WHERE status = 'SUSPENDED'"
	active=$(sql "SELECT id FROM venues WHERE status = 'ACTIVE'")
	fixture_court "$active" 90 >/dev/null
	fixture_court "$active" 90 PENDING_APPROVAL >/dev/null
	req GET /api/admin/venues -t "$ADMIN"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = SUSPENDED,REJECTED,ACTIVE,PENDING_APPROVAL ]
	[ "$(jqr 'map(.id) | join(",")')" = \
		"$(sql "SELECT string_agg(id::text, ',' ORDER BY created_at, id) FROM venues")" ]
	for i in 0 1 2 3; do
		[ "$(jqr ".[$i] | keys_unsorted | join(\",\")")" = "$VENUE_KEYS" ]
	done
	[ "$(jqr '.[1].rejectReason')" = "Blurry photos" ]
	[ "$(jqr '.[1].status')" = REJECTED ]
	# the admin counts every court of the venue, not only the ones players see
	[ "$(jqr '.[2].resourceCount')" = 2 ]
	[ "$(jqr '.[2].ownerId')" = "$(user_id "$OWNER_SUB")" ]
	for st in PENDING_APPROVAL ACTIVE SUSPENDED REJECTED; do
		req GET "/api/admin/venues?status=$st" -t "$ADMIN"
		expect 200
		[ "$(jqr 'map(.status) | join(",")')" = $st ]
	done
	sql "UPDATE venues SET status = 'ACTIVE', suspended_by = NULL WHERE status = 'SUSPENDED'"
	req GET "/api/admin/venues?status=SUSPENDED" -t "$ADMIN"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	for bad in active BOGUS "ACTIVE,REJECTED"; do
		req GET "/api/admin/venues?status=$bad" -t "$ADMIN"
		expect_problem 400 VALIDATION_FAILED status
	done
}

@test "the court list shows every court oldest first and filters by status" {
	venue=$(fixture_venue "$OWNER_SUB" PENDING_APPROVAL)
	for st in REJECTED ACTIVE PENDING_APPROVAL SUSPENDED; do
		id=$(fixture_court "$venue" 90 $st)
		sql "UPDATE resources SET name = '$st' WHERE id = '$id'"
	done
	sql "UPDATE resources SET created_at = now() - interval '1 day' WHERE status = 'SUSPENDED'"
	req GET /api/admin/resources -t "$ADMIN"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = SUSPENDED,REJECTED,ACTIVE,PENDING_APPROVAL ]
	for i in 0 1 2 3; do
		[ "$(jqr ".[$i] | keys_unsorted | join(\",\")")" = "$RESOURCE_KEYS" ]
		[ "$(jqr ".[$i].venueId")" = "$venue" ]
		[ "$(jqr ".[$i].schedules | length")" = 7 ]
		[ "$(jqr ".[$i].priceRules | length")" = 2 ]
	done
	[ "$(jqr '.[1].rejectReason')" = "Net missing" ]
	for st in PENDING_APPROVAL ACTIVE SUSPENDED REJECTED; do
		req GET "/api/admin/resources?status=$st" -t "$ADMIN"
		expect 200
		[ "$(jqr 'map(.status) | join(",")')" = $st ]
	done
	req GET "/api/admin/resources?status=GONE" -t "$ADMIN"
	expect_problem 400 VALIDATION_FAILED status
}

@test "one venue or court is shown to an admin whatever its status" {
	venue=$(fixture_venue "$OWNER_SUB" REJECTED)
	court=$(fixture_court "$venue" 60 SUSPENDED)
	req GET "/api/admin/venues/$venue" -t "$ADMIN"
	expect 200
	[ "$(jqr 'keys_unsorted | join(",")')" = "$VENUE_KEYS" ]
	[ "$(jqr .id)" = "$venue" ]
	[ "$(jqr .status)" = REJECTED ]
	[ "$(jqr .rejectReason)" = "Blurry photos" ]
	[ "$(jqr .resourceCount)" = 1 ]
	req GET "/api/admin/resources/$court" -t "$ADMIN"
	expect 200
	[ "$(jqr 'keys_unsorted | join(",")')" = "$RESOURCE_KEYS" ]
	[ "$(jqr .id)" = "$court" ]
	[ "$(jqr .venueId)" = "$venue" ]
	[ "$(jqr .status)" = SUSPENDED ]
	[ "$(jqr .slotDurationMinutes)" = 60 ]
	req GET "/api/admin/venues/$UNKNOWN" -t "$ADMIN"
	expect_problem 404 NOT_FOUND
	req GET "/api/admin/resources/$UNKNOWN" -t "$ADMIN"
	expect_problem 404 NOT_FOUND
	req GET /api/admin/venues/x -t "$ADMIN"
	expect_problem 400 VALIDATION_FAILED venueId
	req GET /api/admin/resources/x -t "$ADMIN"
	expect_problem 400 VALIDATION_FAILED resourceId
}

# ---- ids, tokens and roles ---------------------------------------------------------------

@test "every transition answers 404 for an unknown id and 400 for a bad one" {
	for kind in $KINDS; do
		param=venueId
		[ $kind = venues ] || param=resourceId
		for action in approve reject suspend reactivate; do
			patch $kind $UNKNOWN $action '{"reason": "x"}'
			expect_problem 404 NOT_FOUND
			patch $kind 12345678-1234-1234-1234-12345678901 $action '{"reason": "x"}'
			expect_problem 400 VALIDATION_FAILED $param
		done
	done
}

@test "admin endpoints need a token (401) with the ADMIN role (403) and change nothing otherwise" {
	owner=$(token "$OWNER_SUB" OWNER)
	player=$(token player1)
	venue=$(thing venues PENDING_APPROVAL)
	court=$(thing resources ACTIVE)
	paths="GET:/api/admin/venues GET:/api/admin/venues/$venue GET:/api/admin/resources
	       GET:/api/admin/resources/$court"
	for action in approve reject suspend reactivate; do
		paths+=" PATCH:/api/admin/venues/$venue/$action PATCH:/api/admin/resources/$court/$action"
	done
	for mp in $paths; do
		m=${mp%%:*} path=${mp#*:}
		req "$m" "$path"
		expect_problem 401 UNAUTHORIZED
		[[ "$(header WWW-Authenticate)" == Bearer* ]]
		req "$m" "$path" -t "$owner" -d '{"reason": "x"}'
		expect_problem 403 FORBIDDEN
		req "$m" "$path" -t "$player" -d '{"reason": "x"}'
		expect_problem 403 FORBIDDEN
	done
	[ "$(state venues "$venue")" = "PENDING_APPROVAL|||false" ]
	[ "$(state resources "$court")" = "ACTIVE|||false" ]
}

@test "a token carrying ADMIN among other roles is an admin" {
	id=$(thing venues PENDING_APPROVAL)
	patch venues "$id" approve "" "$(token boss1 'OWNER ADMIN')"
	expect 204 -
	[ "$(state venues "$id")" = "ACTIVE|||true" ]
}
