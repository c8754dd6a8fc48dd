#!/usr/bin/env bats
# Owners are isolated: owner B gets 404 (never 403, never 409) on every owner route that
# touches owner A's venues, courts, images, price rules and holidays, A's data is unchanged
# afterwards, and neither owner's lists show the other's things.

load test_helper

setup() {
	reset_db
	# fresh subjects per test: FastCGI workers keep (iss, sub) -> id across requests
	A=alice-$BATS_TEST_NUMBER-$RANDOM
	B=bob-$BATS_TEST_NUMBER-$RANDOM
	TA=$(token "$A" OWNER)
	TB=$(token "$B" OWNER)
	AID=$(user_id "$A")
	BID=$(user_id "$B")

	# A: an active venue with a court, images, a holiday; a venue and a court that A
	# suspended (reactivating them would succeed for A)
	VA=$(fixture_venue "$A")
	VA2=$(fixture_venue "$A" SUSPENDED)
	CA=$(fixture_court "$VA")
	CA2=$(fixture_court "$VA" 60 SUSPENDED)
	RA=$(sql "SELECT id FROM price_rules WHERE resource_id = '$CA' AND day_type = 'WEEKDAY'")
	IVA=$(sql "INSERT INTO venue_images (venue_id, url, public_id)
	           VALUES ('$VA', 'https://cdn.example/a-venue.jpg', 'a-venue') RETURNING id")
	IRA=$(sql "INSERT INTO resource_images (resource_id, url, public_id)
	           VALUES ('$CA', 'https://cdn.example/a-court.jpg', 'a-court') RETURNING id")
	sql "INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$VA', '2030-12-25', 'Navidad')" >/dev/null

	# B: the same kinds of things
	VB=$(fixture_venue "$B")
	CB=$(fixture_court "$VB")
	IVB=$(sql "INSERT INTO venue_images (venue_id, url, public_id)
	           VALUES ('$VB', 'https://cdn.example/b-venue.jpg', 'b-venue') RETURNING id")
	sql "INSERT INTO resource_images (resource_id, url, public_id)
	     VALUES ('$CB', 'https://cdn.example/b-court.jpg', 'b-court')" >/dev/null

	# every stored row, so that "nothing changed" covers every table an owner route writes
	BEFORE=$(everything)
}

# everything: every row of every table the owner routes write, sorted, one per line.
everything() {
	sql "SELECT string_agg(x, E'\n' ORDER BY x) FROM (
	         SELECT 'venue ' || v::text AS x FROM venues v
	         UNION ALL SELECT 'vimg ' || i::text FROM venue_images i
	         UNION ALL SELECT 'hol ' || h::text FROM venue_holidays h
	         UNION ALL SELECT 'court ' || r::text FROM resources r
	         UNION ALL SELECT 'sched ' || s::text FROM resource_schedules s
	         UNION ALL SELECT 'rule ' || p::text FROM price_rules p
	         UNION ALL SELECT 'rimg ' || i::text FROM resource_images i) rows"
}

# b_404 METHOD PATH [BODY]: owner B calls; the answer must be a 404 NOT_FOUND.
b_404() {
	if [ $# -gt 2 ]; then req "$1" "$2" -t "$TB" -d "$3"; else req "$1" "$2" -t "$TB"; fi
	expect_problem 404 NOT_FOUND || { echo "as B: $1 $2" >&2; return 1; }
}

VENUE='{"name":"Taken over","street":"S 1","city":"Madrid","country":"Spain","latitude":1,"longitude":2}'
IMAGE='{"url":"https://cdn.example/evil.jpg","publicId":"evil"}'

@test "owner B gets 404 on every venue route for owner A's venues and A's data is unchanged" {
	b_404 PUT "/api/owner/venues/$VA" "$VENUE"
	b_404 PATCH "/api/owner/venues/$VA/suspend"
	b_404 PATCH "/api/owner/venues/$VA2/suspend"
	b_404 PATCH "/api/owner/venues/$VA2/reactivate"
	b_404 PATCH "/api/owner/venues/$VA/reactivate"
	b_404 POST "/api/owner/venues/$VA/images" "$IMAGE"
	b_404 DELETE "/api/owner/venues/$VA/images/$IVA"
	b_404 GET "/api/owner/venues/$VA/holidays"
	b_404 POST "/api/owner/venues/$VA/holidays" '{"date":"2030-01-01","name":"New year"}'
	b_404 POST "/api/owner/venues/$VA/holidays" '{"date":"2030-12-25","name":"Clash"}'
	b_404 DELETE "/api/owner/venues/$VA/holidays/2030-12-25"
	b_404 POST "/api/owner/venues/$VA/resources" '{"name":"Intruder","type":"PADEL_COURT","slotDurationMinutes":60}'
	[ "$(everything)" = "$BEFORE" ]
}

@test "owner B gets 404 on every court route for owner A's courts and A's data is unchanged" {
	b_404 PUT "/api/owner/resources/$CA/schedules" '{"dayOfWeek":"MONDAY"}'
	b_404 POST "/api/owner/resources/$CA/price-rules" \
		'{"dayType":"HOLIDAY","startTime":"08:00:00","endTime":"10:00:00","price":1,"currency":"EUR"}'
	b_404 POST "/api/owner/resources/$CA/price-rules" \
		'{"dayType":"WEEKDAY","startTime":"08:00:00","endTime":"10:00:00","price":1,"currency":"EUR"}'
	b_404 DELETE "/api/owner/resources/$CA/price-rules/$RA"
	b_404 PATCH "/api/owner/resources/$CA/suspend"
	b_404 PATCH "/api/owner/resources/$CA2/suspend"
	b_404 PATCH "/api/owner/resources/$CA2/reactivate"
	b_404 PATCH "/api/owner/resources/$CA/reactivate"
	b_404 POST "/api/owner/resources/$CA/images" "$IMAGE"
	b_404 DELETE "/api/owner/resources/$CA/images/$IRA"
	[ "$(everything)" = "$BEFORE" ]
}

@test "owner B cannot reach A's images, rules or holidays through B's own venue and court" {
	b_404 DELETE "/api/owner/venues/$VB/images/$IVA"
	b_404 DELETE "/api/owner/resources/$CB/images/$IRA"
	b_404 DELETE "/api/owner/resources/$CB/price-rules/$RA"
	b_404 DELETE "/api/owner/venues/$VB/holidays/2030-12-25"
	# nor B's own image through A's venue
	b_404 DELETE "/api/owner/venues/$VA/images/$IVB"
	# and nothing of anyone changed, B's own updated_at included
	[ "$(everything)" = "$BEFORE" ]
}

@test "a 404 for another owner's venue or court reads exactly like one for an unknown id" {
	nowhere=00000000-0000-4000-8000-000000000001
	for pair in "PUT /api/owner/venues/%s" "PATCH /api/owner/venues/%s/suspend" \
		"PATCH /api/owner/resources/%s/reactivate" "POST /api/owner/resources/%s/images"; do
		method=${pair%% *} fmt=${pair#* }
		id=$VA
		body=$VENUE
		if [[ $fmt == *resources* ]]; then id=$CA2 body=$IMAGE; fi
		if [ "$method" = PATCH ]; then req "$method" "$(printf "$fmt" "$id")" -t "$TB"
		else req "$method" "$(printf "$fmt" "$id")" -t "$TB" -d "$body"; fi
		theirs=$(jq -c 'del(.requestId, .instance)' <<<"$HTTP_BODY")
		if [ "$method" = PATCH ]; then req "$method" "$(printf "$fmt" "$nowhere")" -t "$TB"
		else req "$method" "$(printf "$fmt" "$nowhere")" -t "$TB" -d "$body"; fi
		expect_problem 404 NOT_FOUND
		[ "$(jq -c 'del(.requestId, .instance)' <<<"$HTTP_BODY")" = "$theirs" ]
	done
	[ "$(everything)" = "$BEFORE" ]
}

@test "each owner's venue list shows only their own venues" {
	req GET /api/owner/venues -t "$TB"
	expect 200
	[ "$(jqr '[.[].id] | join(",")')" = "$VB" ]
	[ "$(jqr '[.[].ownerId] | unique | join(",")')" = "$BID" ]
	[ "$(jqr '.[0].images | map(.id) | join(",")')" = "$IVB" ]
	req GET /api/owner/venues -t "$TA"
	expect 200
	[ "$(jqr '[.[].id] | sort | join(",")')" = "$(printf '%s\n' "$VA" "$VA2" | sort | paste -sd,)" ]
	[ "$(jqr '[.[].ownerId] | unique | join(",")')" = "$AID" ]
}

@test "each owner's court list shows only the courts of their own venues" {
	req GET /api/owner/resources -t "$TB"
	expect 200
	[ "$(jqr '[.[].id] | join(",")')" = "$CB" ]
	[ "$(jqr '[.[].venueId] | unique | join(",")')" = "$VB" ]
	req GET /api/owner/resources -t "$TA"
	expect 200
	[ "$(jqr '[.[].id] | sort | join(",")')" = "$(printf '%s\n' "$CA" "$CA2" | sort | paste -sd,)" ]
	[ "$(jqr '[.[].venueId] | unique | join(",")')" = "$VA" ]
}

@test "owner A still manages A's things after B's attempts" {
	b_404 DELETE "/api/owner/venues/$VA/holidays/2030-12-25"
	b_404 DELETE "/api/owner/resources/$CA/price-rules/$RA"
	req GET "/api/owner/venues/$VA/holidays" -t "$TA"
	expect 200
	[ "$(jq -c . <<<"$HTTP_BODY")" = '[{"date":"2030-12-25","name":"Navidad"}]' ]
	req DELETE "/api/owner/resources/$CA/price-rules/$RA" -t "$TA"
	expect 204 -
	req PATCH "/api/owner/resources/$CA2/reactivate" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT count(*) FROM price_rules WHERE id = '$RA'")" = 0 ]
	[ "$(sql "SELECT status FROM resources WHERE id = '$CA2'")" = ACTIVE ]
}
