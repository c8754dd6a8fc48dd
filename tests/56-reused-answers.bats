#!/usr/bin/env bats
# GET /api/resources/{id}/slots, GET /api/owner/venues and GET /api/match/search reuse their
# answers: an ETag a client can send back (If-None-Match, 304 while nothing changed) and, in
# the FastCGI modes, the answer a worker keeps (common/cache.h). None may ever be stale: every
# write that can change the slots (a booking, a cancellation, a schedule, a price rule, a
# holiday, the booking rules, a suspension) and the lapse of a payment hold, which no write
# marks, change the next answer; so does every write to what an owner's list shows, and to
# the venues and players a search shows or counts, and the lapse of a ban.
# Each check asks 8 times, so that in pool mode every worker has kept the answer before the
# change and must give the new one after it.

load test_helper
load match_helper

# the validator (the versions the answer was read under, dotted) and its key's hash, then
# until when it holds if nothing is written ("f": until a write)
ETAG_RE='^"[0-9]+(\.[0-9]+)*\.[0-9a-f]{8}-([0-9]+|f)"$'

setup() {
	reset_db
	match_world
	DAY=$(weekday_date 3)
	OWNER=$(token owner1 OWNER)
}

# ask [CURL_HEADER]: $ASK, by default the slots of $COURT on $DAY, with $ASK_TOKEN if set.
ask() {
	local path=${ASK:-/api/resources/$COURT/slots?date=$DAY} args=()
	[ -z "${ASK_TOKEN:-}" ] || args+=(-t "$ASK_TOKEN")
	[ $# -eq 0 ] || args+=(-H "$1")
	req GET "$path" "${args[@]}"
}

# the Cache-Control of the answers asked
CC=no-cache

# settled: the answer asked 8 times is the same 200 every time, with a validator; sets
# BODY and TAG.
settled() {
	local i
	BODY="" TAG=""
	for i in 1 2 3 4 5 6 7 8; do
		ask
		expect 200 || return 1
		[ "$(header Cache-Control)" = "$CC" ] || { echo "Cache-Control: $(header Cache-Control)" >&2; return 1; }
		[[ $(header ETag) =~ $ETAG_RE ]] || { echo "ETag: $(header ETag)" >&2; return 1; }
		if [ $i = 1 ]; then
			BODY=$HTTP_BODY TAG=$(header ETag) LINK=$(header Link)
		elif [ "$HTTP_BODY" != "$BODY" ] || [ "$(header ETag)" != "$TAG" ] ||
			[ "$(header Link)" != "$LINK" ]; then
			echo "answer $i differs: $(header ETag) $(header Link) $HTTP_BODY" >&2
			return 1
		fi
	done
}

# changed JQ_FILTER WANT: after a change, 8 answers in a row (and one to the old tag) are
# 200 with a new tag and a body that differs from BODY, each with FILTER giving WANT.
changed() {
	local i old=$BODY old_tag=$TAG
	for i in 1 2 3 4 5 6 7 8 9; do
		if [ $i = 9 ]; then ask "If-None-Match: $old_tag"; else ask; fi
		expect 200 || return 1
		[ "$HTTP_BODY" != "$old" ] || { echo "answer $i is the old one" >&2; return 1; }
		[ "$(header ETag)" != "$old_tag" ] || { echo "answer $i has the old tag" >&2; return 1; }
		[ "$(jqr -c "$1")" = "$2" ] || { echo "answer $i: $(jqr -c "$1"), want $2" >&2; return 1; }
	done
	settled
}

# gone: after a change that hides the court, 8 answers in a row (and one to the old tag)
# are 404.
gone() {
	local i
	for i in 1 2 3 4 5 6 7 8 9; do
		if [ $i = 9 ]; then ask "If-None-Match: $TAG"; else ask; fi
		expect_problem 404 NOT_FOUND || return 1
		[ "$(header Cache-Control)" = no-store ] || return 1
		[ -z "$(header ETag)" ] || return 1
	done
}

# booked: org opens a match on $COURT on $DAY at 18:30 through the API; sets match.
booked() {
	req POST /api/match/requests -t "$(token org)" -d "$(jq -nc --arg r "$COURT" --arg d "$DAY" \
		'{resourceId: $r, bookingDate: $d, startTime: "18:30:00", slotDurationMinutes: 90,
		  format: "TWO_VS_TWO", skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70}')"
	expect 201 || return 1
	match=$(jqr .id)
}

# at TIME: the slot starting at TIME of the last answer, as "available price".
AT='map(select(.startTime == $t)) | .[0] | "\(.available) \(.price)"'

@test "a slots answer carries a validator; sent back, the answer is 304 without a body" {
	# (the fixture's writes stamped versions: the kept free slots of its court,
	# sql/areas/30_slots.sql)
	written=$(sql "SELECT count(*), max(version), sum(version) FROM availability_day_versions")
	settled
	[ "$(jqr length)" = 9 ]
	ask "If-None-Match: $TAG"
	expect 304 -
	[ -z "$(header Content-Type)" ]
	[ "$(header ETag)" = "$TAG" ]
	[ "$(header Cache-Control)" = no-cache ]
	# weak, in a list, with blanks: still the same answer
	ask "If-None-Match: W/$TAG"
	expect 304 -
	ask "If-None-Match: \"0.0.0-f\", $TAG ,\"x\""
	expect 304 -
	# another tag, a tag of another answer, "*" and junk: the whole answer
	for h in '"0.0.0-f"' "${TAG/-/0-}" '*' 'nonsense' '""'; do
		ask "If-None-Match: $h"
		expect 200
		[ "$HTTP_BODY" = "$BODY" ]
		[ "$(header ETag)" = "$TAG" ]
	done
	# nothing was written by reading
	[ "$(sql "SELECT count(*), max(version), sum(version) FROM availability_day_versions")" = "$written" ]
}

@test "a match created through the API takes its slot in the very next answer" {
	settled
	[ "$(jqr --arg t 18:30:00 "$AT")" = "true 20" ]
	booked
	changed "map(select(.startTime == \"18:30:00\")) | .[0].available" false
	# and its cancellation through the API frees it again
	req DELETE "/api/match/requests/$match" -t "$(token org)"
	expect 204 -
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$match'")" = CANCELLED ]
	changed "map(select(.startTime == \"18:30:00\")) | .[0].available" true
}

@test "a payment hold that lapses frees its slot with no write at all" {
	fixture_hold "$COURT" "$DAY" 09:30 11:00 PENDING_PAYMENT "now() + interval '15 seconds'"
	expires=$(sql "SELECT (extract(epoch FROM expires_at) * 1000000)::bigint FROM match_requests")
	settled
	[ "$(jqr -c 'map(select(.startTime == "09:30:00")) | .[0].available')" = false ]
	# the answer says it holds until the hold lapses, to the microsecond
	[ "${TAG##*-}" = "$expires\"" ]
	# the hold's row version and its court and date's availability version, which any write
	# to either would change
	rows() {
		sql "SELECT m.xmin || ' ' || m.ctid || ' ' || v.version
		       FROM match_requests m
		       JOIN availability_day_versions v ON v.resource_id = m.resource_id
		                                       AND v.booking_date = m.booking_date"
	}
	before=$(rows)
	[ -n "$before" ]
	until [ "$(sql "SELECT now() >= expires_at FROM match_requests")" = t ]; do sleep 0.2; done
	changed "map(select(.startTime == \"09:30:00\")) | .[0].available" true
	[ "$(sql "SELECT status FROM match_requests")" = PENDING_PAYMENT ]
	[ "$(rows)" = "$before" ]
	# the sweeper ends the lapsed hold: no answer can tell, so clients' validators stay
	# good (request_slots_unchanged, sql/areas/30_slots.sql), and the search's kept slots
	# were right already
	timeout 60 "$COURTS_BUILD/cron/sweep" >/dev/null
	[ "$(sql "SELECT status FROM match_requests")" = CANCELLED ]
	ask "If-None-Match: $TAG"
	expect 304 -
	settled
	[ "$(jqr -c 'map(select(.startTime == "09:30:00")) | .[0].available')" = true ]
	[ "$(sql "SELECT count(*) FROM free_slots_drift()")" = 0 ]
}

@test "a schedule changed through the API changes the next answer" {
	settled
	dow=$(LC_ALL=C date -d "$DAY" +%A)
	req PUT "/api/owner/resources/$COURT/schedules" -t "$OWNER" \
		-d "{\"dayOfWeek\": \"${dow^^}\", \"openingTime\": \"10:00:00\", \"closingTime\": \"13:00:00\"}"
	expect 200
	changed 'map(.startTime) | join(",")' 10:00:00,11:30:00
}

@test "a price rule added or removed through the API changes the next answer" {
	settled
	[ "$(jqr --arg t 08:00:00 "$AT")" = "true 20" ]
	sql "DELETE FROM price_rules WHERE resource_id = '$COURT' AND day_type = 'WEEKDAY'"
	req POST "/api/owner/resources/$COURT/price-rules" -t "$OWNER" \
		-d '{"dayType": "WEEKDAY", "startTime": "08:00:00", "endTime": "24:00:00", "price": 24.50, "currency": "EUR"}'
	expect 200
	rule=$(sql "SELECT id FROM price_rules WHERE resource_id = '$COURT' AND day_type = 'WEEKDAY'")
	changed "map(select(.startTime == \"08:00:00\")) | .[0].price" 24.5
	req DELETE "/api/owner/resources/$COURT/price-rules/$rule" -t "$OWNER"
	expect 204 -
	changed "map(select(.startTime == \"08:00:00\")) | .[0] | [.available, .price]" '[false,null]'
}

@test "a holiday added or removed through the API changes the next answer" {
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$COURT', 'HOLIDAY', '00:00', '24:00', 40.00, 'EUR')"
	settled
	req POST "/api/owner/venues/$VENUE/holidays" -t "$OWNER" -d "{\"date\": \"$DAY\", \"name\": \"Fiesta\"}"
	expect 201
	changed 'map(.price) | unique' '[40]'
	req DELETE "/api/owner/venues/$VENUE/holidays/$DAY" -t "$OWNER"
	expect 204 -
	changed 'map(.price) | unique' '[20]'
}

@test "booking rules set through the API change the next answer" {
	settled
	# the booking window ends before $DAY: every slot becomes unavailable
	req PUT "/api/owner/venues/$VENUE/booking-rules" -t "$OWNER" \
		-d '{"maxUpcomingPerPlayer": null, "maxPerPlayerPerDay": null, "maxPerPlayerPerWeek": null, "bookingWindowDays": 1, "minNoticeMinutes": null}'
	expect 200
	changed 'map(.available) | unique' '[false]'
}

@test "a court or venue suspended through the API hides its slots from the next answer" {
	settled
	req PATCH "/api/owner/resources/$COURT/suspend" -t "$OWNER"
	expect 204 -
	gone
	sql "UPDATE resources SET status = 'ACTIVE', suspended_by = NULL WHERE id = '$COURT'"
	settled
	req PATCH "/api/owner/venues/$VENUE/suspend" -t "$OWNER"
	expect 204 -
	gone
}

@test "what cannot change the slots leaves the validator as it is" {
	fixture_hold "$COURT" "$DAY" 12:30 14:00 OPEN
	M=$(sql "SELECT id FROM match_requests")
	settled
	# a player joins and pays: the court was already taken
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_B
	[ "$(sql "SELECT team_b_count FROM match_requests")" = 1 ]
	ask "If-None-Match: $TAG"
	expect 304 -
	# the match fills, then is confirmed: moves between statuses that both take the court
	[ "$(sql "SELECT match_move(ARRAY['$M'::uuid], 'JOIN', now())")" = "$M" ]
	[ "$(sql "SELECT match_move(ARRAY['$M'::uuid], 'CHECKIN', now())")" = "$M" ]
	[ "$(sql "SELECT status FROM match_requests")" = CONFIRMED ]
	ask "If-None-Match: $TAG"
	expect 304 -
	[ "$(sql "SELECT count(*) FROM free_slots_drift()")" = 0 ]
	# another court's and another day's changes
	other=$(fixture_court "$VENUE" 60)
	fixture_hold "$other" "$DAY" 09:00 10:00 PENDING_PAYMENT
	# (the day after DAY: weekday_date 4 is DAY itself when DAY + 1 is a Saturday)
	fixture_hold "$COURT" "$(date -d "$DAY + 1 day" +%F)" 09:30 11:00 PENDING_PAYMENT
	ask "If-None-Match: $TAG"
	expect 304 -
}

@test "a request cancelled once it is over, or cancelled again, leaves the validator as it is" {
	# a weekday at least two days back: every slot of it has started, in any time zone
	local past=$(date -u -d '2 days ago' +%F)
	while [ "$(date -u -d "$past" +%u)" -gt 5 ]; do past=$(date -u -d "$past - 1 day" +%F); done
	fixture_hold "$COURT" "$past" 12:30 14:00 MATCHED
	fixture_hold "$COURT" "$DAY" 12:30 14:00 CANCELLED
	ended=$(sql "SELECT id FROM match_requests WHERE booking_date = '$past'")
	gone=$(sql "SELECT id FROM match_requests WHERE booking_date = '$DAY'")
	versions() { sql "SELECT booking_date, version FROM availability_day_versions ORDER BY 1"; }
	before=$(versions)
	ASK="/api/resources/$COURT/slots?date=$past" settled
	[ "$(jqr -c 'map(.available) | unique')" = '[false]' ]
	past_tag=$TAG
	settled
	# the match that was played is cancelled: every slot it overlapped has started
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER'
	      WHERE id = '$ended'" >/dev/null
	# a cancelled request written again: it takes no slot before or after
	sql "UPDATE match_requests SET expires_at = now() + interval '1 hour', updated_at = now()
	      WHERE id = '$gone'" >/dev/null
	[ "$(versions)" = "$before" ]
	ASK="/api/resources/$COURT/slots?date=$past" ask "If-None-Match: $past_tag"
	expect 304 -
	ask "If-None-Match: $TAG"
	expect 304 -
	[ "$(sql "SELECT count(*) FROM free_slots_drift()")" = 0 ]
	# and bringing the cancelled request back takes its slot in the next answer
	sql "UPDATE match_requests SET status = 'MATCHED', cancel_reason = NULL WHERE id = '$gone'" >/dev/null
	changed "map(select(.startTime == \"12:30:00\")) | .[0].available" false
}

# ---- the slots answers kept in the database (plain CGI) --------------------------------------

# a kept slots answer with its first slot's price set to one no price rule gives (an answer the
# API could give)
MARK_PRICE="jsonb_set(slots::jsonb, '{0,price}', '1.23')::json"

# kept_row: the kept row of $COURT on $DAY, as "validator|valid_until in epoch us or -|slots"
kept_row() {
	sql "SELECT validator || '|' || COALESCE(epoch_us(valid_until)::text, '-') || '|' || slots
	       FROM slot_answers_kept WHERE resource_id = '$COURT' AND booking_date = '$DAY'"
}

@test "a plain CGI keeps a court's slots answer in the database and serves it from there" {
	settled
	if [ "$COURTS_MODE" != cgi ]; then
		# the workers keep their answers themselves
		[ "$(sql "SELECT count(*) FROM slot_answers_kept")" = 0 ]
		return 0
	fi
	# the row is the answer: its validator and until are the ETag's, its slots the body
	[ "$(sql "SELECT count(*) FROM slot_answers_kept")" = 1 ]
	row=$(kept_row)
	validator=${row%%|*} until=${row#*|}
	until=${until%%|*}
	[ "$TAG" = "\"$validator.${TAG#*\"*.*.*.}" ]
	[[ $TAG == *"-${until/-/f}\"" ]]
	[ "$(printf '%s' "${row#*|*|}" | jq -cS .)" = "$(printf '%s' "$BODY" | jq -cS .)" ]
	# a kept answer is what the next request sends (a marker written over it shows it: a
	# price no rule gives), with the same tag, and 304 for that tag
	sql "UPDATE slot_answers_kept SET slots = $MARK_PRICE" >/dev/null
	ask
	expect 200
	[ "$(jqr '.[0].price')" = 1.23 ]
	[ "$(header ETag)" = "$TAG" ]
	ask "If-None-Match: $TAG"
	expect 304 -
	# a write that changes the slots changes the validator: the marker is never sent again,
	# the new answer is computed and kept in its place
	sql "SELECT availability_day_bump('$COURT', '$DAY')" >/dev/null
	ask
	expect 200
	[ "$HTTP_BODY" = "$BODY" ]
	[ "$(header ETag)" != "$TAG" ]
	[ "$(kept_row)" != "$row" ]
	[ "$(sql "SELECT count(*) FROM slot_answers_kept")" = 1 ]
	# a client's tag of the answer computed again, once no longer kept, is still 304
	tag=$(header ETag)
	sql "DELETE FROM slot_answers_kept" >/dev/null
	ask "If-None-Match: $tag"
	expect 304 -
	[ "$(header ETag)" = "$tag" ]
	[ "$(sql "SELECT count(*) FROM slot_answers_kept")" = 1 ]
	# so is one whose time has passed (valid_until), whatever its validator
	sql "UPDATE slot_answers_kept SET slots = $MARK_PRICE, valid_until = now()" >/dev/null
	ask
	expect 200
	[ "$HTTP_BODY" = "$BODY" ]
	[ "$(sql "SELECT slots -> 0 ->> 'price' FROM slot_answers_kept")" != 1.23 ]
	# an answer that may not be shown is never kept: a date too far ahead, an unknown court,
	# a suspended one
	ASK="/api/resources/$COURT/slots?date=$(date -u -d '+400 days' +%F)" ask
	expect 400
	ASK="/api/resources/00000000-0000-4000-8000-000000000001/slots?date=$DAY" ask
	expect 404
	req PATCH "/api/owner/resources/$COURT/suspend" -t "$OWNER"
	expect 204 -
	ask
	expect 404
	[ "$(sql "SELECT count(*) FROM slot_answers_kept")" = 1 ]
	[ "$(sql "SELECT count(*) FROM slot_answer_kept('$COURT', '$DAY')")" = 0 ]
}

@test "the sweeper forgets the kept answers that can no longer be served, and only those" {
	# four kept answers of the court, as slot_answer_keep keeps them: one current, one a
	# write made stale, one whose time has passed, one of a date before yesterday
	d2=$(date -u -d "$DAY + 1 day" +%F) d3=$(date -u -d "$DAY + 2 days" +%F)
	past=$(date -u -d '3 days ago' +%F)
	for d in "$DAY" "$d2" "$d3" "$past"; do
		sql "SELECT count(*) FROM slot_answer_keep('$COURT', '$d')" >/dev/null
	done
	[ "$(sql "SELECT count(*) FROM slot_answers_kept")" = 4 ]
	sql "SELECT availability_day_bump('$COURT', '$d2')" >/dev/null
	sql "UPDATE slot_answers_kept SET valid_until = now() - interval '1 second'
	      WHERE booking_date = '$d3'" >/dev/null
	# and three owner list pages: one current, one a write made stale, one kept 30 days ago
	owner1=$(user_id owner1) owner2=$(user_id owner2)
	for k in "$owner1 -" "$owner1 5" "$owner2 -"; do
		set -- $k
		sql "SELECT owner_list_keep('$1', true, '$2', '-', owner_list_scopes('$1'),
		                            owner_list_version('$1'), '[]', '')" >/dev/null
	done
	sql "SELECT version_bump('$owner2')" >/dev/null
	sql "UPDATE owner_lists_kept SET kept_at = now() - interval '30 days 1 second'
	      WHERE page_limit = '5'" >/dev/null
	run timeout 60 "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ $output == *" kept_answers_forgotten=5 "* ]] || { echo "$output" >&2; return 1; }
	[ "$(sql "SELECT booking_date FROM slot_answers_kept")" = "$DAY" ]
	[ "$(sql "SELECT count(*) FROM slot_answer_kept('$COURT', '$DAY')")" = 1 ]
	[ "$(sql "SELECT user_id || ' ' || page_limit FROM owner_lists_kept")" = "$owner1 -" ]
	[ "$(sql "SELECT count(*) FROM owner_list_kept('$owner1', true, '-', '-')")" = 1 ]
	run timeout 60 "$COURTS_BUILD/cron/sweep"
	[[ $output == *" kept_answers_forgotten=0 "* ]]
}

# ---- GET /api/owner/venues ------------------------------------------------------------

# owner_list [QUERY]: the next asks read owner1's venue list.
owner_list() {
	ASK="/api/owner/venues${1:-}" ASK_TOKEN=$OWNER CC="private, no-cache"
}

@test "an owner's list carries a validator; sent back, the answer is 304 without a body" {
	owner_list
	settled
	[ "$(jqr 'map(.id) | join(",")')" = "$VENUE" ]
	ask "If-None-Match: $TAG"
	expect 304 -
	[ "$(header ETag)" = "$TAG" ]
	[ "$(header Cache-Control)" = "private, no-cache" ]
	# the tag is no key to another owner's list
	req GET /api/owner/venues -t "$(token owner2 OWNER)" -H "If-None-Match: $TAG"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	# nor are a token's answers kept for another
	fixture_venue owner2 >/dev/null
	req GET /api/owner/venues -t "$(token owner2 OWNER)"
	expect 200
	[ "$(jqr length)" = 1 ] && [ "$(jqr '.[0].id')" != "$VENUE" ]
}

@test "an owner's venue created, edited, pictured or given a court through the API changes the next list" {
	owner_list
	settled
	req POST /api/owner/venues -t "$OWNER" -d '{"name":"Club Norte","street":"Calle Mayor 1",
		"city":"Madrid","country":"Spain","latitude":40.4168,"longitude":-3.7038}'
	expect 201
	new=$(jqr .id)
	changed 'map(.name) | join(",")' "Club Central,Club Norte"
	req PUT "/api/owner/venues/$new" -t "$OWNER" -d '{"name":"Club Sur","street":"Calle Mayor 1",
		"city":"Madrid","country":"Spain","latitude":40.4168,"longitude":-3.7038}'
	expect 200
	changed 'map(.name) | join(",")' "Club Central,Club Sur"
	req POST "/api/owner/venues/$new/images" -t "$OWNER" \
		-d '{"url":"https://img.example/a.jpg","publicId":"a"}'
	expect 200
	changed "map(select(.id == \"$new\")) | .[0].images | length" 1
	req POST "/api/owner/venues/$new/resources" -t "$OWNER" \
		-d '{"name":"Pista 1","type":"PADEL_COURT","slotDurationMinutes":90}'
	expect 201
	changed "map(select(.id == \"$new\")) | .[0].resourceCount" 1
	# an administrator's decision too
	req PATCH "/api/admin/venues/$new/approve" -t "$(token admin1 ADMIN)"
	[ "$HTTP_STATUS" = 200 ] || [ "$HTTP_STATUS" = 204 ]
	changed "map(select(.id == \"$new\")) | .[0].status" ACTIVE
}

@test "another owner's writes leave an owner's list as it is" {
	owner_list
	settled
	other=$(fixture_venue owner2)
	fixture_court "$other" 90 >/dev/null
	sql "UPDATE venues SET name = 'Elsewhere' WHERE id = '$other'"
	ask "If-None-Match: $TAG"
	expect 304 -
}

@test "a page of an owner's list is kept with its link to the next page" {
	sleep 0.01
	second=$(fixture_venue owner1)
	owner_list "?limit=1"
	settled
	[ "$(jqr 'map(.id) | join(",")')" = "$VENUE" ]
	[[ $LINK == *'rel="next"'* ]]
	next=$(sed -E 's/^<[^>]*(\/api\/owner\/venues[^>]*)>.*/\1/' <<<"$LINK")
	owner_list "${next#/api/owner/venues}"
	settled
	[ "$(jqr 'map(.id) | join(",")')" = "$second" ]
	[ -z "$LINK" ]
	# a bad cursor is still a 400, never a kept answer
	owner_list "?limit=1&cursor=nope"
	ask
	expect_problem 400 VALIDATION_FAILED cursor
	[ -z "$(header ETag)" ]
}

@test "a plain CGI keeps an owner's list page in the database, with its link, and serves it from there" {
	sleep 0.01
	second=$(fixture_venue owner1)
	owner_list "?limit=1"
	settled
	if [ "$COURTS_MODE" != cgi ]; then
		[ "$(sql "SELECT count(*) FROM owner_lists_kept")" = 0 ]
		return 0
	fi
	owner1=$(sql "SELECT id FROM users WHERE subject = 'owner1'")
	# the row is the page as this caller asked it, with the scopes and validator of its tag
	[ "$(sql "SELECT user_id || ' ' || as_owner || ' ' || page_limit || ' ' || page_cursor
	            || ' ' || scopes::text FROM owner_lists_kept")" = "$owner1 true 1 - {$owner1}" ]
	validator=$(sql "SELECT validator FROM owner_lists_kept")
	[ "$validator" = "$(sql "SELECT owner_list_version('$owner1')")" ]
	[[ $TAG == "\"$validator."*'-f"' ]]
	[ "$(sql "SELECT body FROM owner_lists_kept" | jq -cS .)" = "$(printf '%s' "$BODY" | jq -cS .)" ]
	[ "$(sql "SELECT headers FROM owner_lists_kept")" = "Link: $LINK"$'\r' ]
	# the kept page is what the next request sends, Link and all (a marker shows it: a name
	# no venue has)
	sql "UPDATE owner_lists_kept
	        SET body = jsonb_set(body::jsonb, '{0,name}', '\"Kept Page\"')::text" >/dev/null
	ask
	expect 200
	[ "$(jqr '.[0].name')" = "Kept Page" ]
	[ "$(header ETag)" = "$TAG" ]
	[ "$(header Link)" = "$LINK" ]
	ask "If-None-Match: $TAG"
	expect 304 -
	# a write the list shows is never answered from the kept page
	req PUT "/api/owner/venues/$VENUE" -t "$OWNER" -d '{"name":"Club Este","street":"Calle Mayor 1",
		"city":"Madrid","country":"Spain","latitude":40.4168,"longitude":-3.7038}'
	expect 200
	ask
	expect 200
	[ "$(jqr '.[0].name')" = "Club Este" ]
	[ "$(header ETag)" != "$TAG" ]
	[ "$(sql "SELECT count(*) FROM owner_lists_kept")" = 1 ]
	[ "$(sql "SELECT body FROM owner_lists_kept" | jq -r '.[0].name')" = "Club Este" ]
	# a staff member's page is kept under their scopes: theirs, then the owner's; a write of
	# the owner's, or a staff role given at another venue, is never answered from it
	req PUT "/api/owner/venues/$VENUE/staff/staffer" -t "$OWNER" -d '{"role": "MANAGER"}'
	[ "$HTTP_STATUS" = 201 ]
	owner_list
	ASK_TOKEN=$(token staffer)
	settled
	[ "$(jqr -c 'map(.name + " " + .myRole)')" = '["Club Este MANAGER"]' ]
	staffer=$(sql "SELECT id FROM users WHERE subject = 'staffer'")
	[ "$(sql "SELECT scopes::text FROM owner_lists_kept WHERE user_id = '$staffer'")" = "{$staffer,$owner1}" ]
	req PUT "/api/owner/venues/$VENUE" -t "$OWNER" -d '{"name":"Club Oeste","street":"Calle Mayor 1",
		"city":"Madrid","country":"Spain","latitude":40.4168,"longitude":-3.7038}'
	expect 200
	changed 'map(.name) | join(",")' "Club Oeste"
	req PUT "/api/owner/venues/$second/staff/staffer" -t "$OWNER" -d '{"role": "DESK"}'
	[ "$HTTP_STATUS" = 201 ]
	changed 'map(.myRole) | join(",")' "MANAGER,DESK"
}

# ---- GET /api/match/search -------------------------------------------------------------
# A FastCGI process keeps a search from the second time it is asked one (cgi-bin/search.c):
# the first answer of a process carries no tag. Plain CGI never keeps or tags a search.

# search_asks [LAT] [QUERY]: the next asks read a search around (LAT, -3.7038), by default
# the club's place, on $DAY, as "searcher".
search_asks() {
	ASK="/api/match/search?lat=${1:-40.4168}&lng=-3.7038&date=$DAY&startTimeFrom=08:00:00&startTimeTo=22:00:00${2:-}"
	ASK_TOKEN=$(token searcher) CC="private, no-cache"
}

# kept: the search asked until a process has kept it, then 8 times more: the same 200 every
# time, with its tag when tagged (a worker that has not kept it yet answers untagged, and
# no-store); sets BODY and TAG. In plain CGI every answer is untagged, TAG is empty.
kept() {
	local i
	BODY="" TAG=""
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		ask
		expect 200 || return 1
		[ -n "$(header ETag)" ] && break
		[ "$(header Cache-Control)" = no-store ] ||
			{ echo "Cache-Control: $(header Cache-Control)" >&2; return 1; }
	done
	BODY=$HTTP_BODY TAG=$(header ETag)
	if [ "$COURTS_MODE" = cgi ]; then
		[ -z "$TAG" ] || { echo "plain CGI tagged a search: $TAG" >&2; return 1; }
	else
		[[ $TAG =~ $ETAG_RE ]] || { echo "no tag after $i asks: ETag $TAG" >&2; return 1; }
	fi
	for i in 1 2 3 4 5 6 7 8; do
		ask
		expect 200 || return 1
		[ "$HTTP_BODY" = "$BODY" ] || { echo "answer $i differs: $HTTP_BODY" >&2; return 1; }
		if [ -n "$(header ETag)" ]; then
			[ "$(header ETag)" = "$TAG" ] || { echo "answer $i: ETag $(header ETag)" >&2; return 1; }
			[ "$(header Cache-Control)" = "$CC" ] || return 1
		else
			[ "$(header Cache-Control)" = no-store ] || return 1
		fi
	done
}

# renewed JQ_FILTER WANT: after a change, 8 answers in a row (and one to the old tag) are 200
# with a body that differs from BODY and no old tag, each with FILTER giving WANT; then kept.
renewed() {
	local i old=$BODY old_tag=$TAG
	for i in 1 2 3 4 5 6 7 8 9; do
		if [ $i = 9 ] && [ -n "$old_tag" ]; then ask "If-None-Match: $old_tag"; else ask; fi
		expect 200 || return 1
		[ "$HTTP_BODY" != "$old" ] || { echo "answer $i is the old one" >&2; return 1; }
		[ -z "$old_tag" ] || [ "$(header ETag)" != "$old_tag" ] ||
			{ echo "answer $i has the old tag" >&2; return 1; }
		[ "$(jqr -c "$1")" = "$2" ] || { echo "answer $i: $(jqr -c "$1"), want $2" >&2; return 1; }
	done
	kept
}

@test "a search asked again carries a validator; sent back, the answer is 304 without a body" {
	search_asks
	kept
	[ "$(jqr length)" = 9 ]
	[ "$(jqr -c 'map(.eligiblePlayersNearby) | unique')" = '[1]' ]
	if [ "$COURTS_MODE" = cgi ]; then
		# nothing to confirm: a tag it never gave is no answer of its
		ask 'If-None-Match: "1-f"'
		expect 200
		[ "$HTTP_BODY" = "$BODY" ]
		[ -z "$(header ETag)" ]
		return
	fi
	ask "If-None-Match: $TAG"
	expect 304 -
	[ -z "$(header Content-Type)" ]
	[ "$(header ETag)" = "$TAG" ]
	[ "$(header Cache-Control)" = "private, no-cache" ]
	ask "If-None-Match: W/$TAG"
	expect 304 -
	for h in '"0-f"' "${TAG/-/0-}" '*' 'nonsense'; do
		ask "If-None-Match: $h"
		expect 200
		[ "$HTTP_BODY" = "$BODY" ]
	done
	# the tag is no key to the search of another date
	ASK="${ASK/date=$DAY/date=$(date -d "$DAY + 1 day" +%F)}" ask "If-None-Match: $TAG"
	expect 200
}

@test "a worker sends a search it kept again: a change written without a stamp shows only once stamped" {
	search_asks
	kept
	[ "$(jqr -r '.[0].venueName')" = "Club Central" ]
	# the venue renamed behind the triggers' back: no version moves, which no write of the
	# service does
	sql "SET session_replication_role = replica;
	     UPDATE venues SET name = 'Club Renamed' WHERE id = '$VENUE'"
	local i old=0
	for i in 1 2 3 4 5 6 7 8; do
		ask
		expect 200
		case $(jqr -r '.[0].venueName') in
		"Club Central") [ "$(header ETag)" = "$TAG" ]; old=$((old + 1)) ;;
		"Club Renamed") ;;
		*) false ;;
		esac
	done
	# plain CGI works every answer out; in the FastCGI modes the worker that kept the search
	# answers with it (requests one after another go to the same idle worker, tests/07)
	if [ "$COURTS_MODE" = cgi ]; then [ "$old" = 0 ]; else [ "$old" -ge 1 ]; fi
	# the venue's version stamped, as every write of the service does: the next answer is new
	sql "SELECT version_bump('$VENUE')" >/dev/null
	renewed '.[0].venueName' 'Club Renamed'
}

@test "a match booked, paid or cancelled through the API changes the next search" {
	search_asks
	kept
	[ "$(jqr -r 'map(.startTime) | join(",")')" = 08:00:00,09:30:00,11:00:00,12:30:00,14:00:00,15:30:00,17:00:00,18:30:00,20:00:00 ]
	booked
	renewed 'map(.startTime) | index("18:30:00")' null
	req POST "/api/match/requests/$match/confirm-payment" -t "$(token org)"
	expect 200
	kept
	[ "$(jqr -c 'map(.startTime) | index("18:30:00")')" = null ]
	req DELETE "/api/match/requests/$match" -t "$(token org)"
	expect 204 -
	renewed 'map(.startTime) | index("18:30:00") | . != null' true
}

@test "a payment hold that lapses puts its slot back in the next search with no write at all" {
	fixture_hold "$COURT" "$DAY" 09:30 11:00 PENDING_PAYMENT "now() + interval '15 seconds'"
	expires=$(sql "SELECT epoch_us(expires_at) FROM match_requests")
	search_asks
	kept
	[ "$(jqr -c 'map(.startTime) | index("09:30:00")')" = null ]
	# the answer holds until the hold lapses, to the microsecond
	[ "$COURTS_MODE" = cgi ] || [ "${TAG##*-}" = "$expires\"" ]
	until [ "$(sql "SELECT now() >= expires_at FROM match_requests")" = t ]; do sleep 0.2; done
	renewed 'map(.startTime) | index("09:30:00") | . != null' true
	[ "$(sql "SELECT status FROM match_requests")" = PENDING_PAYMENT ]
}

@test "a schedule, a price rule, a holiday or booking rules set through the API change the next search" {
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$COURT', 'HOLIDAY', '00:00', '24:00', 40.00, 'EUR')"
	search_asks
	kept
	dow=$(LC_ALL=C date -d "$DAY" +%A)
	req PUT "/api/owner/resources/$COURT/schedules" -t "$OWNER" \
		-d "{\"dayOfWeek\": \"${dow^^}\", \"openingTime\": \"10:00:00\", \"closingTime\": \"13:00:00\"}"
	expect 200
	renewed 'map(.startTime) | join(",")' '10:00:00,11:30:00'
	rule=$(sql "SELECT id FROM price_rules WHERE resource_id = '$COURT' AND day_type = 'WEEKDAY'")
	req DELETE "/api/owner/resources/$COURT/price-rules/$rule" -t "$OWNER"
	expect 204 -
	renewed 'length' 0
	req POST "/api/owner/resources/$COURT/price-rules" -t "$OWNER" \
		-d '{"dayType": "WEEKDAY", "startTime": "08:00:00", "endTime": "24:00:00", "price": 24.50, "currency": "EUR"}'
	expect 200
	renewed 'map(.price) | unique' '[24.5]'
	req POST "/api/owner/venues/$VENUE/holidays" -t "$OWNER" -d "{\"date\": \"$DAY\", \"name\": \"Fiesta\"}"
	expect 201
	renewed 'map(.price) | unique' '[40]'
	req PUT "/api/owner/venues/$VENUE/booking-rules" -t "$OWNER" \
		-d '{"maxUpcomingPerPlayer": null, "maxPerPlayerPerDay": null, "maxPerPlayerPerWeek": null, "bookingWindowDays": 1, "minNoticeMinutes": null}'
	expect 200
	renewed 'length' 0
}

@test "a court suspended, a venue renamed or moved away through the API changes the next search" {
	search_asks
	kept
	req PATCH "/api/owner/resources/$COURT/suspend" -t "$OWNER"
	expect 204 -
	renewed 'length' 0
	req PATCH "/api/owner/resources/$COURT/reactivate" -t "$OWNER"
	expect 204 -
	renewed 'length' 9
	venue() {	# venue NAME LAT: the club's details as PUT takes them
		jq -nc --arg n "$1" --argjson lat "$2" '{name: $n, street: "Calle Mayor 1", city: "Madrid",
			country: "Spain", latitude: $lat, longitude: -3.7038}'
	}
	req PUT "/api/owner/venues/$VENUE" -t "$OWNER" -d "$(venue "Club Norte" 40.4168)"
	expect 200
	renewed 'map(.venueName) | unique' '["Club Norte"]'
	# 30 km north, in other cells of the grid: gone from the search where it was
	req PUT "/api/owner/venues/$VENUE" -t "$OWNER" -d "$(venue "Club Norte" 40.6868)"
	expect 200
	renewed 'length' 0
	# and found where it is now
	search_asks 40.6868
	kept
	[ "$(jqr 'length')" = 9 ]
	[ "$(jqr -r '.[0].venueLatitude')" = 40.6868 ]
}

@test "players who move in, move away or change level change the next search's count" {
	search_asks 40.4168 "&skillLevel=INTERMEDIATE"
	kept
	[ "$(jqr -c 'map(.eligiblePlayersNearby) | unique')" = '[1]' ]
	# profiled LEVEL LAT COUNT: the newcomer's profile put through the API with that level
	# and home latitude; the next searches count COUNT players
	profiled() {
		req PUT /api/players/me -t "$(token newcomer)" -d "$(jq -nc --arg l "$1" \
			--argjson lat "$2" '{displayName: "Newcomer", skillLevel: $l, homeLatitude: $lat,
			homeLongitude: -3.70, matchNotifications: true}')"
		expect 200 || return 1
		renewed 'map(.eligiblePlayersNearby) | unique' "[$3]"
	}
	profiled INTERMEDIATE 40.42 2
	profiled ADVANCED 40.42 1
	profiled INTERMEDIATE 40.42 2
	# 40 km north, in another cell: no longer nearby
	profiled INTERMEDIATE 40.78 1
}

@test "a ban that lapses counts its player in the next search with no write at all" {
	P=$(fixture_player banned INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET banned_until = now() + interval '15 seconds' WHERE user_id = '$P'"
	ends=$(sql "SELECT epoch_us(banned_until) FROM players WHERE user_id = '$P'")
	search_asks
	kept
	[ "$(jqr -c 'map(.eligiblePlayersNearby) | unique')" = '[1]' ]
	[ "$COURTS_MODE" = cgi ] || [ "${TAG##*-}" = "$ends\"" ]
	until [ "$(sql "SELECT now() >= banned_until FROM players WHERE user_id = '$P'")" = t ]; do
		sleep 0.2
	done
	renewed 'map(.eligiblePlayersNearby) | unique' '[2]'
}

@test "what cannot change a search leaves its validator as it is" {
	search_asks
	kept
	# another date's booking, a club and a player far away, a name in a profile
	fixture_hold "$COURT" "$(date -d "$DAY + 1 day" +%F)" 09:30 11:00 PENDING_PAYMENT
	far=$(fixture_venue owner2 ACTIVE 41.40 2.17)
	fixture_court "$far" >/dev/null
	sql "UPDATE venues SET name = 'Elsewhere' WHERE id = '$far'"
	fixture_player faraway INTERMEDIATE 41.40 2.17 >/dev/null
	sql "UPDATE players SET display_name = 'Renamed' WHERE user_id = '$ORG'"
	if [ "$COURTS_MODE" = cgi ]; then
		ask
		expect 200
		[ "$HTTP_BODY" = "$BODY" ]
		return
	fi
	ask "If-None-Match: $TAG"
	expect 304 -
}
