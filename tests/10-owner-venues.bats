#!/usr/bin/env bats
# Owner venues (endpoints 1-7) and venue holidays: success paths with every field, every
# rejection, the suspend / reactivate state rules, and the OWNER role on every owner route.

load test_helper

UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
NOWHERE=00000000-0000-4000-8000-000000000001
OLD=2020-01-01T00:00:00.000Z
VENUE='{"name":"Club Norte","description":"Eight padel courts","street":"Calle Mayor 1",
	"city":"Madrid","country":"Spain","postalCode":"28013","latitude":40.4168,
	"longitude":-3.7038}'

setup() {
	reset_db
	# a fresh subject per test: FastCGI workers keep (iss, sub) -> id across requests
	A=alice-$BATS_TEST_NUMBER-$RANDOM
	TA=$(token "$A" OWNER)
	AID=$(user_id "$A")
}

# venue_with FILTER: the sample venue body changed by a jq filter, compact.
venue_with() {
	jq -c "$1" <<<"$VENUE"
}

# aged_venue [STATUS] [SUSPENDED_BY]: a venue of A created and last changed on 2020-01-01,
# so that a later change of updated_at shows; prints its id.
aged_venue() {
	local id
	id=$(fixture_venue "$A" "${1:-ACTIVE}")
	sql "UPDATE venues SET created_at = '$OLD', updated_at = '$OLD' WHERE id = '$id'" >/dev/null
	[ -z "${2:-}" ] || sql "UPDATE venues SET suspended_by = '$2' WHERE id = '$id'" >/dev/null
	echo "$id"
}

# venue_row ID: the stored venue, one line, for before / after comparisons.
venue_row() {
	sql "SELECT v::text FROM venues v WHERE id = '$1'"
}

# ---- role and token -----------------------------------------------------------------------

owner_routes() {
	local u=$NOWHERE
	printf '%s\n' "GET /api/owner/venues" "POST /api/owner/venues" "PUT /api/owner/venues/$u" \
		"PATCH /api/owner/venues/$u/suspend" "PATCH /api/owner/venues/$u/reactivate" \
		"POST /api/owner/venues/$u/images" "DELETE /api/owner/venues/$u/images/$u" \
		"GET /api/owner/venues/$u/holidays" "POST /api/owner/venues/$u/holidays" \
		"DELETE /api/owner/venues/$u/holidays/2030-12-25" \
		"POST /api/owner/venues/$u/resources" "GET /api/owner/resources" \
		"PUT /api/owner/resources/$u/schedules" "POST /api/owner/resources/$u/price-rules" \
		"DELETE /api/owner/resources/$u/price-rules/$u" \
		"PATCH /api/owner/resources/$u/suspend" "PATCH /api/owner/resources/$u/reactivate" \
		"POST /api/owner/resources/$u/images" "DELETE /api/owner/resources/$u/images/$u"
}

@test "every owner route answers 401 with a Bearer challenge when no token is sent" {
	while read -r method path; do
		if [ "$method" = POST ] || [ "$method" = PUT ]; then
			req "$method" "$path" -d "$VENUE"
		else
			req "$method" "$path"
		fi
		expect_problem 401 UNAUTHORIZED || { echo "$method $path" >&2; return 1; }
		[[ "$(header WWW-Authenticate)" == Bearer* ]]
	done < <(owner_routes)
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "every owner route answers 403 FORBIDDEN to a token without the OWNER role" {
	player=$(token "player-$RANDOM")
	admin=$(token "admin-$RANDOM" ADMIN)
	while read -r method path; do
		for t in "$player" "$admin"; do
			if [ "$method" = POST ] || [ "$method" = PUT ]; then
				req "$method" "$path" -t "$t" -d "$VENUE"
			else
				req "$method" "$path" -t "$t"
			fi
			expect_problem 403 FORBIDDEN || { echo "$method $path" >&2; return 1; }
		done
	done < <(owner_routes)
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "an invalid token is 401 INVALID_TOKEN" {
	req GET /api/owner/venues -t "$TA.x"
	expect_problem 401 INVALID_TOKEN
	req GET /api/owner/venues -t "$(token "$A" OWNER -e -120)"
	expect_problem 401 INVALID_TOKEN
}

@test "a wrong method on an owner path is 405 with Allow" {
	req DELETE /api/owner/venues -t "$TA"
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = "GET, POST" ]
}

# ---- list ---------------------------------------------------------------------------------

@test "an owner without venues gets an empty list" {
	req GET /api/owner/venues -t "$TA"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
}

@test "the list shows every venue of the caller, oldest first, with images and resourceCount" {
	v1=$(aged_venue)
	v2=$(fixture_venue "$A" REJECTED)
	sql "UPDATE venues SET name = 'Second', created_at = '2021-01-01' WHERE id = '$v2';
	     INSERT INTO venue_images (venue_id, url, public_id, created_at)
	     VALUES ('$v1', 'https://cdn.example/b.jpg', 'b', '2020-01-02'),
	            ('$v1', 'https://cdn.example/a.jpg', 'a', '2020-01-01')" >/dev/null
	fixture_court "$v1" >/dev/null
	fixture_court "$v1" 60 PENDING_APPROVAL >/dev/null
	req GET /api/owner/venues -t "$TA"
	expect 200
	[ "$(jqr 'length')" = 2 ]
	[ "$(jqr '.[0].id')" = "$v1" ]
	[ "$(jqr '.[1].id')" = "$v2" ]
	same '.[0] | del(.images)' "{\"id\":\"$v1\",\"ownerId\":\"$AID\",\"name\":\"Club Central\",
		\"description\":null,\"street\":\"Calle Mayor 1\",\"city\":\"Madrid\",
		\"country\":\"Spain\",\"postalCode\":null,\"latitude\":40.4168,\"longitude\":-3.7038,
		\"timezone\":\"Europe/Madrid\",\"status\":\"ACTIVE\",\"rejectReason\":null,
		\"resourceCount\":2,\"createdAt\":\"$OLD\",\"updatedAt\":\"$OLD\",\"myRole\":\"OWNER\"}"
	same '.[0].images | map(del(.id))' \
		'[{"url":"https://cdn.example/a.jpg","publicId":"a"},{"url":"https://cdn.example/b.jpg","publicId":"b"}]'
	[[ "$(jqr '.[0].images[0].id')" =~ $UUID_RE ]]
	[ "$(jqr '.[0].images[0].id')" = "$(sql "SELECT id FROM venue_images WHERE public_id = 'a'")" ]
	same '.[1] | {name, status, rejectReason, images, resourceCount}' \
		'{"name":"Second","status":"REJECTED","rejectReason":"Blurry photos","images":[],"resourceCount":0}'
}

@test "the list does not show venues of other owners" {
	fixture_venue "other-$RANDOM" >/dev/null
	mine=$(fixture_venue "$A")
	req GET /api/owner/venues -t "$TA"
	expect 200
	[ "$(jqr '[.[].id] | join(",")')" = "$mine" ]
}

# ---- create -------------------------------------------------------------------------------

@test "creating a venue answers 201 with every field, PENDING_APPROVAL, and stores it" {
	req POST /api/owner/venues -t "$TA" -d "$VENUE"
	expect 201
	same 'del(.id, .createdAt, .updatedAt)' "{\"ownerId\":\"$AID\",\"name\":\"Club Norte\",
		\"description\":\"Eight padel courts\",\"street\":\"Calle Mayor 1\",\"city\":\"Madrid\",
		\"country\":\"Spain\",\"postalCode\":\"28013\",\"latitude\":40.4168,
		\"longitude\":-3.7038,\"timezone\":\"Europe/Madrid\",\"status\":\"PENDING_APPROVAL\",
		\"rejectReason\":null,\"images\":[],\"resourceCount\":0}"
	id=$(jqr .id)
	[[ "$id" =~ $UUID_RE ]]
	[[ "$(jqr .createdAt)" =~ $TS_RE ]]
	[ "$(jqr .updatedAt)" = "$(jqr .createdAt)" ]
	[ "$(sql "SELECT owner_id, name, description, street, city, country, postal_code, latitude,
	              longitude, timezone, status, suspended_by IS NULL, reject_reason IS NULL,
	              api_ts(created_at)
	         FROM venues WHERE id = '$id'")" = \
	  "$AID|Club Norte|Eight padel courts|Calle Mayor 1|Madrid|Spain|28013|40.4168|-3.7038|Europe/Madrid|PENDING_APPROVAL|t|t|$(jqr .createdAt)" ]
	[ "$(sql 'SELECT count(*) FROM venues')" = 1 ]
}

@test "a venue may be created with only the required fields; the optional ones are null" {
	req POST /api/owner/venues -t "$TA" -d "$(venue_with 'del(.description, .postalCode)')"
	expect 201
	[ "$(jqr .description)" = null ]
	[ "$(jqr .postalCode)" = null ]
	req POST /api/owner/venues -t "$TA" -d "$(venue_with '.description = null | .postalCode = null')"
	expect 201
	[ "$(jqr '.description, .postalCode' | tr '\n' ' ')" = "null null " ]
	[ "$(sql 'SELECT count(*) FROM venues WHERE description IS NULL AND postal_code IS NULL')" = 2 ]
}

@test "a venue takes the time zone it is given, and latitude and longitude at their limits" {
	req POST /api/owner/venues -t "$TA" \
		-d "$(venue_with '.timezone = "America/New_York" | .latitude = -90 | .longitude = 180')"
	expect 201
	same '{timezone, latitude, longitude}' '{"timezone":"America/New_York","latitude":-90,"longitude":180}'
	[ "$(sql "SELECT timezone, latitude, longitude FROM venues")" = "America/New_York|-90|180" ]
}

@test "creating a venue with blank name, street, city and country is 400 naming each" {
	req POST /api/owner/venues -t "$TA" \
		-d "$(venue_with '.name = "" | .street = "   " | .city = "\t" | .country = " "')"
	expect_problem 400 VALIDATION_FAILED name street city country
	[ "$(jqr '.errors | length')" = 4 ]
	[ "$(jqr '.errors[0].message')" = "must not be blank" ]
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "creating a venue without the required fields is 400 naming each" {
	req POST /api/owner/venues -t "$TA" -d '{"description":"only this"}'
	expect_problem 400 VALIDATION_FAILED name street city country latitude longitude
	[ "$(jqr '.errors | length')" = 6 ]
	req POST /api/owner/venues -t "$TA" -d "$(venue_with '.name = null | .latitude = null')"
	expect_problem 400 VALIDATION_FAILED name latitude
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "creating a venue with fields of the wrong JSON type is 400 naming each" {
	req POST /api/owner/venues -t "$TA" \
		-d "$(venue_with '.name = 42 | .latitude = "40.4" | .longitude = true | .city = ["M"] | .postalCode = 28013 | .description = {}')"
	expect_problem 400 VALIDATION_FAILED name latitude longitude city postalCode description
	[ "$(jqr '.errors | length')" = 6 ]
	[ "$(jqr '.errors[] | select(.field == "latitude") | .message')" = "must be a number" ]
	[ "$(jqr '.errors[] | select(.field == "name") | .message')" = "must be a string" ]
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "creating a venue with latitude 91 or longitude 181 is 400" {
	for f in '.latitude = 91' '.latitude = -90.5' '.longitude = 181' '.longitude = -180.01'; do
		req POST /api/owner/venues -t "$TA" -d "$(venue_with "$f")"
		expect_problem 400 VALIDATION_FAILED "$(cut -c2- <<<"${f%% *}")"
	done
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "creating a venue with an unknown or blank time zone is 400 on timezone" {
	for tz in '"Mars/Olympus_Mons"' '"europe/madrid"' '""' '"Europe/Madrid; DROP TABLE venues"' 7; do
		req POST /api/owner/venues -t "$TA" -d "$(venue_with ".timezone = $tz")"
		expect_problem 400 VALIDATION_FAILED timezone
		[ "$(jqr '.errors | length')" = 1 ]
	done
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "a body that is not well-formed JSON is 400 MALFORMED_JSON" {
	for body in '{"name": "Club"' '{"name": "Club"} trailing' '[1, 2]' '"a string"' 'name=Club'; do
		req POST /api/owner/venues -t "$TA" -d "$body"
		expect_problem 400 MALFORMED_JSON || { echo "body: $body" >&2; return 1; }
	done
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "a body that is not JSON by its Content-Type is 415" {
	req POST /api/owner/venues -t "$TA" -d "$VENUE" -H 'Content-Type: text/plain'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	req POST /api/owner/venues -t "$TA" -d "name=Club" \
		-H 'Content-Type: application/x-www-form-urlencoded'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "a JSON Content-Type with a charset is accepted" {
	req POST /api/owner/venues -t "$TA" -d "$VENUE" -H 'Content-Type: application/json; charset=utf-8'
	expect 201
}

@test "a body over 64 KiB is 413 and nothing is stored" {
	big=$(head -c 70000 /dev/zero | tr '\0' a)
	req POST /api/owner/venues -t "$TA" -d "$(venue_with ".description = \"$big\"")"
	expect_problem 413 BODY_TOO_LARGE
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

@test "a string longer than 2000 characters is 400" {
	long=$(head -c 2001 /dev/zero | tr '\0' a)
	req POST /api/owner/venues -t "$TA" -d "$(venue_with ".name = \"$long\"")"
	expect_problem 400 VALIDATION_FAILED name
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

# ---- update -------------------------------------------------------------------------------

@test "updating a venue replaces its fields, keeps status and time zone, and bumps updatedAt" {
	id=$(aged_venue)
	sql "UPDATE venues SET timezone = 'Atlantic/Canary', description = 'old' WHERE id = '$id'" >/dev/null
	req PUT "/api/owner/venues/$id" -t "$TA" \
		-d '{"name":"Club Sur","street":"Avenida 2","city":"Sevilla","country":"España","latitude":37.38,"longitude":-5.98,"postalCode":"41001"}'
	expect 200
	same 'del(.updatedAt)' "{\"id\":\"$id\",\"ownerId\":\"$AID\",\"name\":\"Club Sur\",
		\"description\":null,\"street\":\"Avenida 2\",\"city\":\"Sevilla\",\"country\":\"España\",
		\"postalCode\":\"41001\",\"latitude\":37.38,\"longitude\":-5.98,
		\"timezone\":\"Atlantic/Canary\",\"status\":\"ACTIVE\",\"rejectReason\":null,
		\"images\":[],\"resourceCount\":0,\"createdAt\":\"$OLD\"}"
	[[ "$(jqr .updatedAt)" =~ $TS_RE ]]
	[ "$(jqr .updatedAt)" != "$OLD" ]
	[ "$(sql "SELECT name, description IS NULL, city, country, timezone, status,
	              api_ts(updated_at), updated_at > now() - interval '1 minute'
	         FROM venues WHERE id = '$id'")" = \
	  "Club Sur|t|Sevilla|España|Atlantic/Canary|ACTIVE|$(jqr .updatedAt)|t" ]
}

@test "updating a venue with a time zone changes it" {
	id=$(aged_venue)
	req PUT "/api/owner/venues/$id" -t "$TA" -d "$(venue_with '.timezone = "Europe/London"')"
	expect 200
	[ "$(jqr .timezone)" = Europe/London ]
	[ "$(sql "SELECT timezone FROM venues WHERE id = '$id'")" = Europe/London ]
}

@test "updating a rejected venue resubmits it for approval and drops the reason" {
	id=$(aged_venue REJECTED)
	req PUT "/api/owner/venues/$id" -t "$TA" -d "$VENUE"
	expect 200
	same '{status, rejectReason}' '{"status":"PENDING_APPROVAL","rejectReason":null}'
	[ "$(sql "SELECT status, reject_reason IS NULL FROM venues WHERE id = '$id'")" = "PENDING_APPROVAL|t" ]
}

@test "updating a suspended or pending venue keeps its status" {
	s=$(aged_venue SUSPENDED)
	p=$(aged_venue PENDING_APPROVAL)
	req PUT "/api/owner/venues/$s" -t "$TA" -d "$VENUE"
	expect 200
	[ "$(jqr .status)" = SUSPENDED ]
	req PUT "/api/owner/venues/$p" -t "$TA" -d "$VENUE"
	expect 200
	[ "$(jqr .status)" = PENDING_APPROVAL ]
	[ "$(sql "SELECT status || '/' || COALESCE(suspended_by, '-') FROM venues ORDER BY status")" = \
	  "PENDING_APPROVAL/-
SUSPENDED/OWNER" ]
}

@test "updating a venue with invalid fields is 400 and changes nothing" {
	id=$(aged_venue)
	before=$(venue_row "$id")
	req PUT "/api/owner/venues/$id" -t "$TA" \
		-d "$(venue_with '.name = " " | .street = "" | .city = null | del(.country) | .latitude = 91 | .longitude = "x" | .timezone = "Nowhere/Land"')"
	expect_problem 400 VALIDATION_FAILED name street city country latitude longitude timezone
	[ "$(venue_row "$id")" = "$before" ]
	req PUT "/api/owner/venues/$id" -t "$TA" -d '{"name": '
	expect_problem 400 MALFORMED_JSON
	req PUT "/api/owner/venues/$id" -t "$TA" -d "$VENUE" -H 'Content-Type: text/csv'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	[ "$(venue_row "$id")" = "$before" ]
}

@test "updating an unknown venue is 404; a malformed venue id is 400" {
	req PUT "/api/owner/venues/$NOWHERE" -t "$TA" -d "$VENUE"
	expect_problem 404 NOT_FOUND
	req PUT /api/owner/venues/not-a-uuid -t "$TA" -d "$VENUE"
	expect_problem 400 VALIDATION_FAILED venueId
	[ "$(sql 'SELECT count(*) FROM venues')" = 0 ]
}

# ---- suspend / reactivate -----------------------------------------------------------------

@test "suspending an active venue answers 204 and marks it suspended by the owner" {
	id=$(aged_venue)
	req PATCH "/api/owner/venues/$id/suspend" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT status, suspended_by, updated_at > '$OLD' FROM venues WHERE id = '$id'")" = \
	  "SUSPENDED|OWNER|t" ]
}

@test "suspending a venue that is not active is 409 INVALID_STATE and changes nothing" {
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		id=$(aged_venue $st)
		before=$(venue_row "$id")
		req PATCH "/api/owner/venues/$id/suspend" -t "$TA"
		expect_problem 409 INVALID_STATE
		[ "$(venue_row "$id")" = "$before" ]
	done
}

@test "reactivating a venue the owner suspended answers 204 and makes it active" {
	id=$(aged_venue SUSPENDED)
	req PATCH "/api/owner/venues/$id/reactivate" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT status, suspended_by IS NULL, updated_at > '$OLD' FROM venues WHERE id = '$id'")" = \
	  "ACTIVE|t|t" ]
}

@test "a venue suspended by an administrator cannot be reactivated by its owner" {
	id=$(aged_venue SUSPENDED ADMIN)
	before=$(venue_row "$id")
	req PATCH "/api/owner/venues/$id/reactivate" -t "$TA"
	expect_problem 409 SUSPENDED_BY_ADMIN
	[ "$(venue_row "$id")" = "$before" ]
	[ "$(sql "SELECT status, suspended_by FROM venues WHERE id = '$id'")" = "SUSPENDED|ADMIN" ]
}

@test "reactivating a venue that is not suspended is 409 INVALID_STATE" {
	for st in ACTIVE PENDING_APPROVAL REJECTED; do
		id=$(aged_venue $st)
		before=$(venue_row "$id")
		req PATCH "/api/owner/venues/$id/reactivate" -t "$TA"
		expect_problem 409 INVALID_STATE
		[ "$(venue_row "$id")" = "$before" ]
	done
}

@test "suspend and reactivate of an unknown venue are 404, of a malformed id 400" {
	for action in suspend reactivate; do
		req PATCH "/api/owner/venues/$NOWHERE/$action" -t "$TA"
		expect_problem 404 NOT_FOUND
		req PATCH "/api/owner/venues/123/$action" -t "$TA"
		expect_problem 400 VALIDATION_FAILED venueId
	done
}

@test "suspend then reactivate round-trips" {
	id=$(aged_venue)
	req PATCH "/api/owner/venues/$id/suspend" -t "$TA"
	expect 204 -
	req PATCH "/api/owner/venues/$id/reactivate" -t "$TA"
	expect 204 -
	req GET /api/owner/venues -t "$TA"
	[ "$(jqr '.[0].status')" = ACTIVE ]
}

# ---- images -------------------------------------------------------------------------------

@test "adding an image answers 200 with the venue including it, in order, and bumps updatedAt" {
	id=$(aged_venue)
	req POST "/api/owner/venues/$id/images" -t "$TA" \
		-d '{"url":"https://cdn.example.com/v/1.jpg","publicId":"v/1"}'
	expect 200
	[ "$(jqr .id)" = "$id" ]
	[ "$(jqr '.images | length')" = 1 ]
	img=$(jqr '.images[0].id')
	[[ "$img" =~ $UUID_RE ]]
	same '.images' "[{\"id\":\"$img\",\"url\":\"https://cdn.example.com/v/1.jpg\",\"publicId\":\"v/1\"}]"
	[ "$(jqr .createdAt)" = "$OLD" ]
	[ "$(jqr .updatedAt)" != "$OLD" ]
	[ "$(jqr .status)" = ACTIVE ]
	req POST "/api/owner/venues/$id/images" -t "$TA" \
		-d '{"url":"http://cdn.example.com/v/2.jpg?w=800","publicId":"v/2"}'
	expect 200
	[ "$(jqr '[.images[].publicId] | join(",")')" = "v/1,v/2" ]
	[ "$(sql "SELECT string_agg(url || ' ' || public_id, ',' ORDER BY created_at)
	         FROM venue_images WHERE venue_id = '$id'")" = \
	  "https://cdn.example.com/v/1.jpg v/1,http://cdn.example.com/v/2.jpg?w=800 v/2" ]
	[ "$(sql "SELECT api_ts(updated_at) FROM venues WHERE id = '$id'")" = "$(jqr .updatedAt)" ]
}

@test "adding an image with a blank, missing or non-http url or publicId is 400 and stores nothing" {
	id=$(aged_venue)
	before=$(venue_row "$id")
	req POST "/api/owner/venues/$id/images" -t "$TA" -d '{"url":" ","publicId":""}'
	expect_problem 400 VALIDATION_FAILED url publicId
	req POST "/api/owner/venues/$id/images" -t "$TA" -d '{}'
	expect_problem 400 VALIDATION_FAILED url publicId
	req POST "/api/owner/venues/$id/images" -t "$TA" -d '{"url":5,"publicId":["p"]}'
	expect_problem 400 VALIDATION_FAILED url publicId
	for url in ftp://cdn.example.com/a.jpg cdn.example.com/a.jpg /a.jpg https:// 'https://cdn.example.com/a b.jpg' javascript:alert; do
		req POST "/api/owner/venues/$id/images" -t "$TA" -d "{\"url\":\"$url\",\"publicId\":\"p\"}"
		expect_problem 400 VALIDATION_FAILED url || { echo "url: $url" >&2; return 1; }
		[ "$(jqr '.errors | length')" = 1 ]
	done
	[ "$(sql 'SELECT count(*) FROM venue_images')" = 0 ]
	[ "$(venue_row "$id")" = "$before" ]
}

@test "adding an image to an unknown venue is 404" {
	req POST "/api/owner/venues/$NOWHERE/images" -t "$TA" -d '{"url":"https://c.example/a.jpg","publicId":"a"}'
	expect_problem 404 NOT_FOUND
	[ "$(sql 'SELECT count(*) FROM venue_images')" = 0 ]
}

@test "adding an image to a rejected venue resubmits it for approval" {
	id=$(aged_venue REJECTED)
	req POST "/api/owner/venues/$id/images" -t "$TA" -d '{"url":"https://c.example/a.jpg","publicId":"a"}'
	expect 200
	same '{status, rejectReason}' '{"status":"PENDING_APPROVAL","rejectReason":null}'
}

@test "deleting an image answers 204, removes it and bumps the venue's updatedAt" {
	id=$(aged_venue)
	img=$(sql "INSERT INTO venue_images (venue_id, url, public_id)
	           VALUES ('$id', 'https://c.example/a.jpg', 'a') RETURNING id")
	keep=$(sql "INSERT INTO venue_images (venue_id, url, public_id)
	            VALUES ('$id', 'https://c.example/b.jpg', 'b') RETURNING id")
	req DELETE "/api/owner/venues/$id/images/$img" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT string_agg(id::text, ',') FROM venue_images")" = "$keep" ]
	[ "$(sql "SELECT updated_at > '$OLD' FROM venues WHERE id = '$id'")" = t ]
	req DELETE "/api/owner/venues/$id/images/$img" -t "$TA"
	expect_problem 404 NOT_FOUND
}

@test "deleting an image of another venue of the same owner through this venue is 404" {
	v1=$(aged_venue)
	v2=$(aged_venue)
	img=$(sql "INSERT INTO venue_images (venue_id, url, public_id)
	           VALUES ('$v2', 'https://c.example/a.jpg', 'a') RETURNING id")
	before1=$(venue_row "$v1")
	req DELETE "/api/owner/venues/$v1/images/$img" -t "$TA"
	expect_problem 404 NOT_FOUND
	[ "$(sql 'SELECT count(*) FROM venue_images')" = 1 ]
	[ "$(venue_row "$v1")" = "$before1" ]
	req DELETE "/api/owner/venues/$v1/images/nope" -t "$TA"
	expect_problem 400 VALIDATION_FAILED imageId
}

# ---- holidays -----------------------------------------------------------------------------

@test "adding a holiday answers 201 with date and name and stores it" {
	id=$(aged_venue)
	req POST "/api/owner/venues/$id/holidays" -t "$TA" -d '{"date":"2030-12-25","name":"Navidad"}'
	expect 201
	same . '{"date":"2030-12-25","name":"Navidad"}'
	[ "$(sql "SELECT date, name FROM venue_holidays WHERE venue_id = '$id'")" = "2030-12-25|Navidad" ]
}

@test "the holidays of a venue are listed by date" {
	id=$(aged_venue)
	req GET "/api/owner/venues/$id/holidays" -t "$TA"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	for d in 2030-12-25 2030-01-06 2030-08-15; do
		req POST "/api/owner/venues/$id/holidays" -t "$TA" -d "{\"date\":\"$d\",\"name\":\"H $d\"}"
		expect 201
	done
	req GET "/api/owner/venues/$id/holidays" -t "$TA"
	expect 200
	same . '[{"date":"2030-01-06","name":"H 2030-01-06"},{"date":"2030-08-15","name":"H 2030-08-15"},{"date":"2030-12-25","name":"H 2030-12-25"}]'
}

@test "a second holiday on the same date is 409 HOLIDAY_EXISTS" {
	# the primary key decides, as designed: PostgreSQL logs the refused insert
	expect_log postgres 'duplicate key value violates unique constraint "venue_holidays_pkey"'
	id=$(aged_venue)
	req POST "/api/owner/venues/$id/holidays" -t "$TA" -d '{"date":"2030-12-25","name":"Navidad"}'
	expect 201
	req POST "/api/owner/venues/$id/holidays" -t "$TA" -d '{"date":"2030-12-25","name":"Christmas"}'
	expect_problem 409 HOLIDAY_EXISTS
	[ "$(sql "SELECT string_agg(name, ',') FROM venue_holidays")" = Navidad ]
}

@test "a holiday with a bad date or a blank name is 400 and stores nothing" {
	id=$(aged_venue)
	for body in '{"date":"2030-02-30","name":"X"}' '{"date":"25/12/2030","name":"X"}' \
		'{"date":20301225,"name":"X"}' '{"name":"X"}'; do
		req POST "/api/owner/venues/$id/holidays" -t "$TA" -d "$body"
		expect_problem 400 VALIDATION_FAILED date
	done
	req POST "/api/owner/venues/$id/holidays" -t "$TA" -d '{"date":"2030-12-25","name":"  "}'
	expect_problem 400 VALIDATION_FAILED name
	req POST "/api/owner/venues/$id/holidays" -t "$TA" -d '{}'
	expect_problem 400 VALIDATION_FAILED date name
	[ "$(sql 'SELECT count(*) FROM venue_holidays')" = 0 ]
}

@test "holidays of an unknown venue are 404" {
	req GET "/api/owner/venues/$NOWHERE/holidays" -t "$TA"
	expect_problem 404 NOT_FOUND
	req POST "/api/owner/venues/$NOWHERE/holidays" -t "$TA" -d '{"date":"2030-12-25","name":"X"}'
	expect_problem 404 NOT_FOUND
	req DELETE "/api/owner/venues/$NOWHERE/holidays/2030-12-25" -t "$TA"
	expect_problem 404 NOT_FOUND
	[ "$(sql 'SELECT count(*) FROM venue_holidays')" = 0 ]
}

@test "deleting a holiday answers 204; an unknown date is 404 and a malformed one 400" {
	id=$(aged_venue)
	sql "INSERT INTO venue_holidays (venue_id, date, name)
	     VALUES ('$id', '2030-12-25', 'Navidad'), ('$id', '2030-01-01', 'Año Nuevo')" >/dev/null
	req DELETE "/api/owner/venues/$id/holidays/2030-12-25" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT string_agg(date::text, ',') FROM venue_holidays")" = 2030-01-01 ]
	req DELETE "/api/owner/venues/$id/holidays/2030-12-25" -t "$TA"
	expect_problem 404 NOT_FOUND
	req DELETE "/api/owner/venues/$id/holidays/2030-13-01" -t "$TA"
	expect_problem 400 VALIDATION_FAILED date
	[ "$(sql 'SELECT count(*) FROM venue_holidays')" = 1 ]
}
