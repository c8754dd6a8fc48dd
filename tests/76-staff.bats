#!/usr/bin/env bats
# A venue's staff (sql/areas/68_staff.sql, cgi-bin/owner.c): the owner gives users of the
# identity provider a role at a venue, MANAGER or DESK, whose tokens need no role; each owner
# route admits the staff its route table says (STAFF_ flags), and every write on a venue is
# recorded with who made it.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

# The rule of every owner route: who of a venue may use it besides the owner (OWNER: nobody;
# MANAGER: managers; DESK: managers and DESK staff), or LIST for the routes without a venue.
# A route of cgi-bin/owner.c missing here fails the first test.
RULES="GET /api/owner/venues LIST
POST /api/owner/venues LIST
PUT /api/owner/venues/{venueId} MANAGER
PATCH /api/owner/venues/{venueId}/suspend OWNER
PATCH /api/owner/venues/{venueId}/reactivate OWNER
POST /api/owner/venues/{venueId}/images MANAGER
DELETE /api/owner/venues/{venueId}/images/{imageId} MANAGER
GET /api/owner/venues/{venueId}/booking-rules DESK
PUT /api/owner/venues/{venueId}/booking-rules MANAGER
GET /api/owner/venues/{venueId}/calendar MANAGER
POST /api/owner/venues/{venueId}/calendar/rotate MANAGER
GET /api/owner/venues/{venueId}/holidays DESK
POST /api/owner/venues/{venueId}/holidays MANAGER
DELETE /api/owner/venues/{venueId}/holidays/{date:date} MANAGER
POST /api/owner/venues/{venueId}/resources MANAGER
GET /api/owner/resources LIST
PUT /api/owner/resources/{resourceId}/schedules MANAGER
POST /api/owner/resources/{resourceId}/price-rules MANAGER
DELETE /api/owner/resources/{resourceId}/price-rules/{ruleId} MANAGER
PATCH /api/owner/resources/{resourceId}/suspend MANAGER
PATCH /api/owner/resources/{resourceId}/reactivate MANAGER
POST /api/owner/resources/{resourceId}/images MANAGER
DELETE /api/owner/resources/{resourceId}/images/{imageId} MANAGER
POST /api/owner/resources/{resourceId}/blocks DESK
GET /api/owner/resources/{resourceId}/blocks DESK
DELETE /api/owner/resources/{resourceId}/blocks/{blockId} DESK
GET /api/owner/venues/{venueId}/day DESK
GET /api/owner/venues/{venueId}/report MANAGER
POST /api/owner/matches/{matchRequestId}/cancel MANAGER
POST /api/owner/matches/{matchRequestId}/checkin/{playerId} DESK
PUT /api/owner/venues/{venueId}/staff/{subject:text} OWNER
DELETE /api/owner/venues/{venueId}/staff/{subject:text} OWNER
GET /api/owner/venues/{venueId}/staff MANAGER
GET /api/owner/venues/{venueId}/audit MANAGER"

setup() {
	reset_db
	match_world
	RUN=$BATS_TEST_NUMBER-$RANDOM
	OWNER=$(token owner1 OWNER)
	MGR_SUB=mgr-$RUN
	DESK_SUB=desk-$RUN
	MGR=$(token "$MGR_SUB")
	DESK=$(token "$DESK_SUB")
	D=$(weekday_date 3)
}

# staff SUB ROLE: the owner gives SUB the role at $VENUE.
staff() {
	req PUT "/api/owner/venues/$VENUE/staff/$1" -t "$OWNER" -d "{\"role\": \"$2\"}"
	[ "$HTTP_STATUS" = 201 ] || [ "$HTTP_STATUS" = 200 ] || { echo "staff $1 $2: $HTTP_STATUS $HTTP_BODY" >&2; return 1; }
}

# route_table: "METHOD PATTERN" of every route of cgi-bin/owner.c, with its STAFF_ flag.
route_table() {
	tr '\n\t' '  ' <"$COURTS_ROOT/cgi-bin/owner.c" |
		grep -oE '\{ "[A-Z]+", "/api/owner[^"]*", *[a-z_]+, *AUTH_[A-Z]+, *[A-Z_| ]*\}' |
		sed -E 's/^\{ "([A-Z]+)", "([^"]+)", *[a-z_]+, *AUTH_[A-Z]+, *([A-Z_| ]*)\}$/\1 \2 \3/'
}

# concrete PATTERN: the pattern with this test's ids.
concrete() {
	local p=$1
	p=${p//\{venueId\}/$VENUE}
	p=${p//\{resourceId\}/$COURT}
	p=${p//\{matchRequestId\}/$M}
	p=${p//\{date:date\}/$D}
	p=${p//\{subject:text\}/someone-$RUN}
	p=${p//\{imageId\}/$(cat /proc/sys/kernel/random/uuid)}
	p=${p//\{ruleId\}/$(cat /proc/sys/kernel/random/uuid)}
	p=${p//\{blockId\}/$(cat /proc/sys/kernel/random/uuid)}
	p=${p//\{playerId\}/$(cat /proc/sys/kernel/random/uuid)}
	echo "$p"
}

@test "every owner route has a staff rule here, and the route table gives it that rule" {
	local method pattern flags rule want n=0
	while read -r method pattern flags; do
		n=$((n + 1))
		rule=$(grep -F "$method $pattern " <<<"$RULES" | awk '{ print $3 }')
		[ -n "$rule" ] || { echo "$method $pattern has no rule in tests/76-staff.bats" >&2; return 1; }
		case $flags in
		*STAFF_DESK*) want=DESK ;;
		*STAFF_MANAGER*) want=MANAGER ;;
		*) want=OWNER ;;
		esac
		[ "$rule" = LIST ] && [[ $pattern != *'{'* ]] && want=LIST
		[ "$rule" = "$want" ] || { echo "$method $pattern: the table says $want, the rule $rule" >&2; return 1; }
	done < <(route_table)
	[ "$n" = "$(wc -l <<<"$RULES")" ]
}

@test "a MANAGER and DESK staff are refused, route by route, what their role does not allow, and only that" {
	full_match "3 hours"
	staff "$MGR_SUB" MANAGER
	staff "$DESK_SUB" DESK
	local method pattern rule path who tok allowed
	while read -r method pattern rule; do
		[ "$rule" != LIST ] || continue
		for who in MANAGER DESK; do
			if [ "$who" = MANAGER ]; then tok=$MGR; else tok=$DESK; fi
			case $who.$rule in
			*.DESK | MANAGER.MANAGER) allowed=1 ;;
			*) allowed=0 ;;
			esac
			path=$(concrete "$pattern")
			if [ "$method" = GET ] || [ "$method" = DELETE ] || [ "$method" = PATCH ]; then
				req "$method" "$path" -t "$tok"
			else
				req "$method" "$path" -t "$tok" -d '{}'
			fi
			if [ $allowed = 1 ]; then
				[ "$HTTP_STATUS" != 403 ] || { echo "$who $method $pattern: refused: $HTTP_BODY" >&2; return 1; }
			else
				expect_problem 403 FORBIDDEN || { echo "$who $method $pattern" >&2; return 1; }
			fi
		done
	done <<<"$RULES"
	# nothing the refused writes tried is recorded; the venue is as it was
	[ "$(sql "SELECT status FROM venues WHERE id = '$VENUE'")" = ACTIVE ]
	[ "$(sql "SELECT count(*) FROM venue_staff")" = 2 ]
}

@test "the owner gives, changes and takes back a staff role; a sub not seen yet is accepted" {
	req PUT "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$OWNER" -d '{"role": "MANAGER"}'
	expect 201
	uid=$(sql "SELECT id FROM users WHERE subject = '$MGR_SUB'")
	same 'del(.createdAt, .updatedAt)' "{\"venueId\": \"$VENUE\", \"userId\": \"$uid\",
		\"subject\": \"$MGR_SUB\", \"role\": \"MANAGER\", \"addedBy\": \"$(user_id owner1)\"}"
	req PUT "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$OWNER" -d '{"role": "DESK"}'
	expect 200
	[ "$(jqr .role)" = DESK ]
	req PUT "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$OWNER" -d '{"role": "OWNER"}'
	expect_problem 400 VALIDATION_FAILED role
	req PUT "/api/owner/venues/$VENUE/staff/owner1" -t "$OWNER" -d '{"role": "MANAGER"}'
	expect_problem 409 STAFF_IS_OWNER
	req PUT "/api/owner/venues/$VENUE/staff/$(printf 'x%.0s' $(seq 1 256))" -t "$OWNER" -d '{"role": "DESK"}'
	expect_problem 400 VALIDATION_FAILED subject
	staff "$DESK_SUB" DESK
	req GET "/api/owner/venues/$VENUE/staff" -t "$OWNER"
	expect 200
	[ "$(jqr '[.[] | .subject + " " + .role] | join(",")')" = "$MGR_SUB DESK,$DESK_SUB DESK" ]
	req DELETE "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$OWNER"
	expect 204 -
	req DELETE "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$OWNER"
	expect_problem 404 NOT_FOUND
	# no place on any staff and no OWNER role: 403 on the owner routes, as before
	req GET /api/owner/venues -t "$MGR"
	expect_problem 403 FORBIDDEN
	req GET "/api/owner/venues/$VENUE/day?date=$D" -t "$MGR"
	expect_problem 403 FORBIDDEN
	# another owner's staff routes: 404
	req PUT "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$(token owner2 OWNER)" -d '{"role": "DESK"}'
	expect_problem 404 NOT_FOUND
}

@test "staff see the venues and courts they staff with their role, and staff of one venue get 404 on another" {
	other=$(fixture_venue owner2)
	other_court=$(fixture_court "$other")
	staff "$DESK_SUB" DESK
	req GET /api/owner/venues -t "$DESK"
	expect 200
	same '[.[] | [.id, .myRole]]' "[[\"$VENUE\", \"DESK\"]]"
	etag=$(header etag)
	req GET /api/owner/resources -t "$DESK"
	expect 200
	same '[.[] | [.id, .myRole]]' "[[\"$COURT\", \"DESK\"]]"
	req GET /api/owner/venues -t "$OWNER"
	expect 200
	same '[.[] | [.id, .myRole]]' "[[\"$VENUE\", \"OWNER\"]]"
	# the owner's change is news to the staff's list
	req GET /api/owner/venues -t "$DESK" -H "If-None-Match: $etag"
	expect 304 -
	req PUT "/api/owner/venues/$VENUE" -t "$OWNER" -d '{"name": "Club Norte", "street": "s", "city": "Madrid", "country": "Spain", "latitude": 40.4, "longitude": -3.7}'
	expect 200
	req GET /api/owner/venues -t "$DESK" -H "If-None-Match: $etag"
	expect 200
	[ "$(jqr '.[0].name')" = "Club Norte" ]
	# another venue: as if it did not exist
	req GET "/api/owner/venues/$other/day?date=$D" -t "$DESK"
	expect_problem 404 NOT_FOUND
	req POST "/api/owner/resources/$other_court/blocks" -t "$DESK" \
		-d "{\"date\": \"$D\", \"startTime\": \"10:00:00\", \"endTime\": \"11:00:00\", \"kind\": \"DESK\"}"
	expect_problem 404 NOT_FOUND
	# staff cannot open venues of their own without the OWNER role
	req POST /api/owner/venues -t "$DESK" -d '{"name": "Mine", "street": "s", "city": "Madrid", "country": "Spain", "latitude": 40.4, "longitude": -3.7}'
	expect_problem 403 FORBIDDEN
	[ "$(sql "SELECT count(*) FROM venues")" = 2 ]
}

@test "DESK staff keep to DESK blocks, check players in, and every write on the venue is recorded with who made it" {
	full_match "10 minutes"
	staff "$MGR_SUB" MANAGER
	staff "$DESK_SUB" DESK
	desk_id=$(sql "SELECT id FROM users WHERE subject = '$DESK_SUB'")
	mgr_id=$(sql "SELECT id FROM users WHERE subject = '$MGR_SUB'")
	req POST "/api/owner/resources/$COURT/blocks" -t "$DESK" \
		-d "{\"date\": \"$D\", \"startTime\": \"20:00:00\", \"endTime\": \"21:00:00\", \"kind\": \"MAINTENANCE\"}"
	expect_problem 403 FORBIDDEN
	req POST "/api/owner/resources/$COURT/blocks" -t "$DESK" \
		-d "{\"date\": \"$D\", \"startTime\": \"20:00:00\", \"endTime\": \"21:00:00\", \"kind\": \"DESK\", \"cancelMatches\": true}"
	expect_problem 403 FORBIDDEN
	req POST "/api/owner/resources/$COURT/blocks" -t "$DESK" \
		-d "{\"date\": \"$D\", \"startTime\": \"20:00:00\", \"endTime\": \"21:00:00\", \"kind\": \"DESK\", \"customerName\": \"Ana\", \"amount\": 15}"
	expect 201
	desk_block=$(jqr .id)
	[ "$(sql "SELECT created_by FROM court_blocks WHERE id = '$desk_block'")" = "$desk_id" ]
	req POST "/api/owner/resources/$COURT/blocks" -t "$MGR" \
		-d "{\"date\": \"$D\", \"startTime\": \"08:00:00\", \"endTime\": \"09:00:00\", \"kind\": \"MAINTENANCE\"}"
	expect 201
	maint=$(jqr .id)
	req DELETE "/api/owner/resources/$COURT/blocks/$maint" -t "$DESK"
	expect_problem 403 FORBIDDEN
	[ "$(sql "SELECT count(*) FROM court_blocks")" = 2 ]
	req POST "/api/owner/matches/$M/checkin/$P1" -t "$DESK"
	expect 204 -
	[ "$(sql "SELECT checked_in_by FROM match_players WHERE match_request_id = '$M' AND player_id = '$P1'")" = "$desk_id" ]
	req POST "/api/owner/venues/$VENUE/holidays" -t "$MGR" -d "{\"date\": \"$D\", \"name\": \"Fiesta\"}"
	expect 201
	req DELETE "/api/owner/resources/$COURT/blocks/$desk_block" -t "$DESK"
	expect 204 -
	# the record: who, their role, what, on what, the body; the refused writes are not in it
	[ "$(sql "SELECT string_agg(u.subject || ' ' || a.role || ' ' || a.method || ' ' || a.route || ' ' || a.status, ',' ORDER BY a.id)
	            FROM venue_audit a JOIN users u ON u.id = a.user_id WHERE a.venue_id = '$VENUE'")" = \
	  "owner1 OWNER PUT /api/owner/venues/{venueId}/staff/{subject:text} 201,owner1 OWNER PUT /api/owner/venues/{venueId}/staff/{subject:text} 201,$DESK_SUB DESK POST /api/owner/resources/{resourceId}/blocks 201,$MGR_SUB MANAGER POST /api/owner/resources/{resourceId}/blocks 201,$DESK_SUB DESK POST /api/owner/matches/{matchRequestId}/checkin/{playerId} 204,$MGR_SUB MANAGER POST /api/owner/venues/{venueId}/holidays 201,$DESK_SUB DESK DELETE /api/owner/resources/{resourceId}/blocks/{blockId} 204" ]
	req GET "/api/owner/venues/$VENUE/audit?limit=2" -t "$MGR"
	expect 200
	same '.[0] | del(.id, .madeAt)' "{\"userId\": \"$desk_id\", \"subject\": \"$DESK_SUB\", \"role\": \"DESK\",
		\"method\": \"DELETE\", \"route\": \"/api/owner/resources/{resourceId}/blocks/{blockId}\",
		\"path\": \"/api/owner/resources/$COURT/blocks/$desk_block\", \"status\": 204, \"request\": null}"
	same '.[1] | [.subject, .role, .route, .request]' "[\"$MGR_SUB\", \"MANAGER\", \"/api/owner/venues/{venueId}/holidays\", {\"date\": \"$D\", \"name\": \"Fiesta\"}]"
	[ -n "$(header link)" ]
	req GET "/api/owner/venues/$VENUE/audit" -t "$DESK"
	expect_problem 403 FORBIDDEN
	req GET "/api/owner/venues/$VENUE/audit" -t "$OWNER"
	expect 200
	[ "$(jqr length)" = 7 ]
}

@test "a staff member taken off the staff cannot write a moment later, and a write in flight ends first" {
	staff "$MGR_SUB" MANAGER
	mgr_id=$(sql "SELECT id FROM users WHERE subject = '$MGR_SUB'")
	# a write of the manager in flight holds their staff row: the removal waits for it
	held_open "SELECT * FROM venue_staff WHERE user_id = '$mgr_id' FOR SHARE"
	req DELETE "/api/owner/venues/$VENUE/staff/$MGR_SUB" -t "$OWNER" &
	pid=$!
	for _ in $(seq 1 100); do
		[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%venue_staff_remove%'")" = 1 ] && break
		sleep 0.05
	done
	[ "$(sql "SELECT count(*) FROM venue_staff")" = 1 ]
	held_commit
	wait "$pid"
	[ "$(sql "SELECT count(*) FROM venue_staff")" = 0 ]
	req POST "/api/owner/venues/$VENUE/holidays" -t "$MGR" -d "{\"date\": \"$D\", \"name\": \"Late\"}"
	expect_problem 403 FORBIDDEN
	[ "$(sql "SELECT count(*) FROM venue_holidays")" = 0 ]
}
