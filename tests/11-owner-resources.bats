#!/usr/bin/env bats
# Owner resources (endpoints 8-16): courts, their weekly schedules, price rules, images and
# suspension, with every field of the answers, every rejection, and the stored state after.

load test_helper

UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
NOWHERE=00000000-0000-4000-8000-000000000001
OLD=2020-01-01T00:00:00.000Z
COURT='{"name":"Pista 3","type":"PADEL_COURT","slotDurationMinutes":90,"description":"Glass walls"}'
RULE='{"dayType":"WEEKDAY","startTime":"08:00:00","endTime":"14:00:00","price":25.5,"currency":"EUR"}'

setup() {
	reset_db
	# a fresh subject per test: FastCGI workers keep (iss, sub) -> id across requests
	A=alice-$BATS_TEST_NUMBER-$RANDOM
	TA=$(token "$A" OWNER)
	AID=$(user_id "$A")
	V=$(fixture_venue "$A")
	sql "UPDATE venues SET created_at = '$OLD', updated_at = '$OLD' WHERE id = '$V'" >/dev/null
}

# with JSON FILTER: JSON changed by a jq filter, compact.
with() {
	jq -c "$2" <<<"$1"
}

# court [VENUE] [STATUS] [SUSPENDED_BY]: a court without schedules, rules or images, created
# and last changed on 2020-01-01 so that a change of updated_at shows; prints its id.
court() {
	local st=${2:-ACTIVE}
	sql "INSERT INTO resources (venue_id, name, type, slot_duration_minutes, status,
	         suspended_by, reject_reason, created_at, updated_at)
	     VALUES ('${1:-$V}', 'Pista 1', 'PADEL_COURT', 90, '$st',
	         CASE WHEN '$st' = 'SUSPENDED' THEN '${3:-OWNER}' END,
	         CASE WHEN '$st' = 'REJECTED' THEN 'Net missing' END, '$OLD', '$OLD')
	     RETURNING id"
}

# court_state ID: the stored court with its schedules, rules and images, one line, for
# before / after comparisons.
court_state() {
	sql "SELECT r::text
	        || ' S:' || COALESCE((SELECT string_agg(s::text, ';' ORDER BY day_of_week)
	                                FROM resource_schedules s WHERE s.resource_id = r.id), '')
	        || ' P:' || COALESCE((SELECT string_agg(p::text, ';' ORDER BY p.id)
	                                FROM price_rules p WHERE p.resource_id = r.id), '')
	        || ' I:' || COALESCE((SELECT string_agg(i::text, ';' ORDER BY i.id)
	                                FROM resource_images i WHERE i.resource_id = r.id), '')
	       FROM resources r WHERE r.id = '$1'"
}

# bumped ID: the court's updated_at moved past 2020-01-01 and the answer shows it.
bumped() {
	[ "$(sql "SELECT api_ts(updated_at) FROM resources WHERE id = '$1'")" = "$(jqr .updatedAt)" ]
	[ "$(jqr .updatedAt)" != "$OLD" ]
	[ "$(jqr .createdAt)" = "$OLD" ]
}

# ---- list ---------------------------------------------------------------------------------

@test "an owner without courts gets an empty list" {
	req GET /api/owner/resources -t "$TA"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
}

@test "the list shows every court of every venue of the caller with schedules, rules and images" {
	v2=$(fixture_venue "$A" PENDING_APPROVAL)
	sql "UPDATE venues SET created_at = '2021-01-01' WHERE id = '$v2'" >/dev/null
	c2=$(court "$v2" PENDING_APPROVAL)
	c1=$(fixture_court "$V")
	sql "INSERT INTO resource_images (resource_id, url, public_id)
	     VALUES ('$c1', 'https://cdn.example/c.jpg', 'c')" >/dev/null
	fixture_court "$(fixture_venue "other-$RANDOM")" >/dev/null
	req GET /api/owner/resources -t "$TA"
	expect 200
	[ "$(jqr '[.[].id] | join(",")')" = "$c1,$c2" ]
	same '.[0] | del(.createdAt, .updatedAt, .priceRules[].id, .images[].id)' "{\"id\":\"$c1\",
		\"venueId\":\"$V\",\"name\":\"Court 1\",\"description\":null,\"type\":\"PADEL_COURT\",
		\"slotDurationMinutes\":90,\"status\":\"ACTIVE\",\"rejectReason\":null,
		\"schedules\":[$(for d in MONDAY TUESDAY WEDNESDAY THURSDAY FRIDAY SATURDAY SUNDAY; do
			printf '{"dayOfWeek":"%s","openingTime":"08:00:00","closingTime":"22:00:00"},' $d
		done | sed 's/,$//')],
		\"priceRules\":[{\"dayType\":\"WEEKDAY\",\"startTime\":\"00:00:00\",\"endTime\":\"24:00:00\",\"price\":20.00,\"currency\":\"EUR\"},
		                {\"dayType\":\"WEEKEND\",\"startTime\":\"00:00:00\",\"endTime\":\"24:00:00\",\"price\":30.00,\"currency\":\"EUR\"}],
		\"images\":[{\"url\":\"https://cdn.example/c.jpg\",\"publicId\":\"c\"}],
		\"myRole\":\"OWNER\"}"
	[[ "$(jqr '.[0].priceRules[0].id')" =~ $UUID_RE ]]
	[[ "$(jqr '.[0].images[0].id')" =~ $UUID_RE ]]
	[[ "$(jqr '.[0].createdAt')" =~ $TS_RE ]]
	same '.[1]' "{\"id\":\"$c2\",\"venueId\":\"$v2\",\"name\":\"Pista 1\",\"description\":null,
		\"type\":\"PADEL_COURT\",\"slotDurationMinutes\":90,\"status\":\"PENDING_APPROVAL\",
		\"rejectReason\":null,\"schedules\":[],\"priceRules\":[],\"images\":[],
		\"createdAt\":\"$OLD\",\"updatedAt\":\"$OLD\",\"myRole\":\"OWNER\"}"
}

# ---- create -------------------------------------------------------------------------------

@test "creating a court answers 201 with every field, PENDING_APPROVAL, and stores it" {
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d "$COURT"
	expect 201
	same 'del(.id, .createdAt, .updatedAt)' "{\"venueId\":\"$V\",\"name\":\"Pista 3\",
		\"description\":\"Glass walls\",\"type\":\"PADEL_COURT\",\"slotDurationMinutes\":90,
		\"status\":\"PENDING_APPROVAL\",\"rejectReason\":null,\"schedules\":[],\"priceRules\":[],
		\"images\":[]}"
	id=$(jqr .id)
	[[ "$id" =~ $UUID_RE ]]
	[[ "$(jqr .createdAt)" =~ $TS_RE ]]
	[ "$(jqr .updatedAt)" = "$(jqr .createdAt)" ]
	[ "$(sql "SELECT venue_id, name, description, type, slot_duration_minutes, status,
	              suspended_by IS NULL, reject_reason IS NULL, api_ts(created_at)
	         FROM resources WHERE id = '$id'")" = \
	  "$V|Pista 3|Glass walls|PADEL_COURT|90|PENDING_APPROVAL|t|t|$(jqr .createdAt)" ]
	req GET /api/owner/venues -t "$TA"
	[ "$(jqr '.[0].resourceCount')" = 1 ]
}

@test "a court may be a tennis court, without description, with 15 or 240 minute slots" {
	req POST "/api/owner/venues/$V/resources" -t "$TA" \
		-d '{"name":"Central","type":"TENNIS_COURT","slotDurationMinutes":15}'
	expect 201
	same '{type, slotDurationMinutes, description}' '{"type":"TENNIS_COURT","slotDurationMinutes":15,"description":null}'
	req POST "/api/owner/venues/$V/resources" -t "$TA" \
		-d '{"name":"Long","type":"TENNIS_COURT","slotDurationMinutes":240,"description":null}'
	expect 201
	[ "$(jqr .slotDurationMinutes)" = 240 ]
	[ "$(sql "SELECT string_agg(slot_duration_minutes::text, ',' ORDER BY slot_duration_minutes)
	         FROM resources")" = "15,240" ]
}

@test "creating a court with a blank name or without the required fields is 400" {
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d "$(with "$COURT" '.name = "  "')"
	expect_problem 400 VALIDATION_FAILED name
	[ "$(jqr '.errors | length')" = 1 ]
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d '{"description":"x"}'
	expect_problem 400 VALIDATION_FAILED name type slotDurationMinutes
	[ "$(jqr '.errors | length')" = 3 ]
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d '{"name":null,"type":null,"slotDurationMinutes":null}'
	expect_problem 400 VALIDATION_FAILED name type slotDurationMinutes
	[ "$(sql 'SELECT count(*) FROM resources')" = 0 ]
}

@test "creating a court with fields of the wrong JSON type is 400 naming each" {
	req POST "/api/owner/venues/$V/resources" -t "$TA" \
		-d '{"name":7,"type":1,"slotDurationMinutes":"90","description":false}'
	expect_problem 400 VALIDATION_FAILED name type slotDurationMinutes description
	[ "$(jqr '.errors | length')" = 4 ]
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d "$(with "$COURT" '.slotDurationMinutes = 90.5')"
	expect_problem 400 VALIDATION_FAILED slotDurationMinutes
	[ "$(sql 'SELECT count(*) FROM resources')" = 0 ]
}

@test "creating a court of an unknown type is 400" {
	for t in SQUASH_COURT padel_court '' PADEL; do
		req POST "/api/owner/venues/$V/resources" -t "$TA" -d "$(with "$COURT" ".type = \"$t\"")"
		expect_problem 400 VALIDATION_FAILED type
		[[ "$(jqr '.errors[0].message')" == *PADEL_COURT*TENNIS_COURT* ]]
	done
	[ "$(sql 'SELECT count(*) FROM resources')" = 0 ]
}

@test "a slot duration outside 15-240 minutes or not a multiple of 5 is 400" {
	for m in 10 241 62 0 -15 14 245 1000; do
		req POST "/api/owner/venues/$V/resources" -t "$TA" -d "$(with "$COURT" ".slotDurationMinutes = $m")"
		expect_problem 400 VALIDATION_FAILED slotDurationMinutes || { echo "minutes $m" >&2; return 1; }
	done
	[ "$(sql 'SELECT count(*) FROM resources')" = 0 ]
}

@test "creating a court at an unknown venue is 404; a malformed venue id is 400" {
	req POST "/api/owner/venues/$NOWHERE/resources" -t "$TA" -d "$COURT"
	expect_problem 404 NOT_FOUND
	req POST /api/owner/venues/xyz/resources -t "$TA" -d "$COURT"
	expect_problem 400 VALIDATION_FAILED venueId
	[ "$(sql 'SELECT count(*) FROM resources')" = 0 ]
}

@test "creating a court with a malformed or non-JSON body is 400 or 415" {
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d '{"name":"x",}'
	expect_problem 400 MALFORMED_JSON
	req POST "/api/owner/venues/$V/resources" -t "$TA" -d "$COURT" -H 'Content-Type: text/plain'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
	req POST "/api/owner/venues/$V/resources" -t "$TA" \
		-d "$(with "$COURT" ".description = \"$(head -c 70000 /dev/zero | tr '\0' d)\"")"
	expect_problem 413 BODY_TOO_LARGE
	[ "$(sql 'SELECT count(*) FROM resources')" = 0 ]
}

# ---- schedules ----------------------------------------------------------------------------

@test "setting a day's schedule answers 200 with the court and stores the day" {
	c=$(court)
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
		-d '{"dayOfWeek":"MONDAY","openingTime":"08:00:00","closingTime":"22:30:00"}'
	expect 200
	same 'del(.updatedAt)' "{\"id\":\"$c\",\"venueId\":\"$V\",\"name\":\"Pista 1\",
		\"description\":null,\"type\":\"PADEL_COURT\",\"slotDurationMinutes\":90,
		\"status\":\"ACTIVE\",\"rejectReason\":null,
		\"schedules\":[{\"dayOfWeek\":\"MONDAY\",\"openingTime\":\"08:00:00\",\"closingTime\":\"22:30:00\"}],
		\"priceRules\":[],\"images\":[],\"createdAt\":\"$OLD\"}"
	bumped "$c"
	[ "$(sql "SELECT day_of_week, opening_time, closing_time FROM resource_schedules
	         WHERE resource_id = '$c'")" = "1|08:00:00|22:30:00" ]
}

@test "setting a day again replaces it; days are listed Monday to Sunday" {
	c=$(court)
	for body in '{"dayOfWeek":"SUNDAY","openingTime":"09:00:00","closingTime":"14:00:00"}' \
		'{"dayOfWeek":"WEDNESDAY","openingTime":"07:00:00","closingTime":"23:00:00"}' \
		'{"dayOfWeek":"SUNDAY","openingTime":"10:00:00","closingTime":"24:00:00"}'; do
		req PUT "/api/owner/resources/$c/schedules" -t "$TA" -d "$body"
		expect 200
	done
	same .schedules '[{"dayOfWeek":"WEDNESDAY","openingTime":"07:00:00","closingTime":"23:00:00"},
		{"dayOfWeek":"SUNDAY","openingTime":"10:00:00","closingTime":"24:00:00"}]'
	[ "$(sql "SELECT count(*), max(closing_time) FROM resource_schedules WHERE resource_id = '$c'")" = \
	  "2|24:00:00" ]
}

@test "both times null or absent close the day" {
	c=$(court)
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
		-d '{"dayOfWeek":"FRIDAY","openingTime":"08:00:00","closingTime":"22:00:00"}'
	expect 200
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
		-d '{"dayOfWeek":"FRIDAY","openingTime":null,"closingTime":null}'
	expect 200
	same .schedules '[{"dayOfWeek":"FRIDAY","openingTime":null,"closingTime":null}]'
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" -d '{"dayOfWeek":"SATURDAY"}'
	expect 200
	same .schedules '[{"dayOfWeek":"FRIDAY","openingTime":null,"closingTime":null},
		{"dayOfWeek":"SATURDAY","openingTime":null,"closingTime":null}]'
	[ "$(sql "SELECT string_agg(day_of_week || ':' || (opening_time IS NULL AND closing_time IS NULL), ','
	             ORDER BY day_of_week) FROM resource_schedules")" = "5:true,6:true" ]
}

@test "a closing time not after the opening time is 400 and changes nothing" {
	c=$(court)
	sql "INSERT INTO resource_schedules VALUES ('$c', 1, '08:00', '22:00')" >/dev/null
	before=$(court_state "$c")
	for pair in '"22:00:00","08:00:00"' '"10:00:00","10:00:00"' '"00:00:00","00:00:00"'; do
		req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
			-d "{\"dayOfWeek\":\"MONDAY\",\"openingTime\":${pair%%,*},\"closingTime\":${pair#*,}}"
		expect_problem 400 VALIDATION_FAILED closingTime
		[ "$(jqr '.errors[0].message')" = "must be after openingTime" ]
	done
	[ "$(court_state "$c")" = "$before" ]
}

@test "only one of the two times is 400 and changes nothing" {
	c=$(court)
	before=$(court_state "$c")
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" -d '{"dayOfWeek":"MONDAY","openingTime":"08:00:00"}'
	expect_problem 400 VALIDATION_FAILED closingTime
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
		-d '{"dayOfWeek":"MONDAY","openingTime":null,"closingTime":"22:00:00"}'
	expect_problem 400 VALIDATION_FAILED openingTime
	[ "$(court_state "$c")" = "$before" ]
}

@test "a schedule with an unknown day or malformed times is 400 and changes nothing" {
	c=$(court)
	before=$(court_state "$c")
	for day in '"monday"' '"MON"' '"HOLIDAY"' 1 null; do
		req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
			-d "{\"dayOfWeek\":$day,\"openingTime\":\"08:00:00\",\"closingTime\":\"22:00:00\"}"
		expect_problem 400 VALIDATION_FAILED dayOfWeek || { echo "day $day" >&2; return 1; }
	done
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" -d '{"openingTime":"08:00:00","closingTime":"22:00:00"}'
	expect_problem 400 VALIDATION_FAILED dayOfWeek
	for t in '"8:00"' '"08:00"' '"25:00:00"' '"08:60:00"' 800 '"24:00:01"'; do
		req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
			-d "{\"dayOfWeek\":\"MONDAY\",\"openingTime\":\"08:00:00\",\"closingTime\":$t}"
		expect_problem 400 VALIDATION_FAILED closingTime || { echo "time $t" >&2; return 1; }
	done
	req PUT "/api/owner/resources/$c/schedules" -t "$TA" \
		-d '{"dayOfWeek":"MONDAY","openingTime":"24:00:00","closingTime":"24:00:00"}'
	expect_problem 400 VALIDATION_FAILED openingTime
	[ "$(court_state "$c")" = "$before" ]
}

@test "a schedule of an unknown court is 404; a malformed court id is 400" {
	req PUT "/api/owner/resources/$NOWHERE/schedules" -t "$TA" -d '{"dayOfWeek":"MONDAY"}'
	expect_problem 404 NOT_FOUND
	req PUT /api/owner/resources/0000/schedules -t "$TA" -d '{"dayOfWeek":"MONDAY"}'
	expect_problem 400 VALIDATION_FAILED resourceId
	[ "$(sql 'SELECT count(*) FROM resource_schedules')" = 0 ]
}

# ---- price rules --------------------------------------------------------------------------

@test "adding a price rule answers 200 with the court including the rule and stores it" {
	c=$(court)
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$RULE"
	expect 200
	[ "$(jqr .id)" = "$c" ]
	rule=$(jqr '.priceRules[0].id')
	[[ "$rule" =~ $UUID_RE ]]
	same .priceRules "[{\"id\":\"$rule\",\"dayType\":\"WEEKDAY\",\"startTime\":\"08:00:00\",
		\"endTime\":\"14:00:00\",\"price\":25.50,\"currency\":\"EUR\"}]"
	[[ "$HTTP_BODY" =~ \"price\"\ *:\ *25\.50[^0-9] ]]
	same '{status, schedules, images}' '{"status":"ACTIVE","schedules":[],"images":[]}'
	bumped "$c"
	[ "$(sql "SELECT id, day_type, start_time, end_time, price, currency FROM price_rules")" = \
	  "$rule|WEEKDAY|08:00:00|14:00:00|25.50|EUR" ]
}

@test "rules may end at 24:00:00, touch each other, and repeat a range on another day type" {
	c=$(court)
	for body in "$RULE" \
		"$(with "$RULE" '.startTime = "14:00:00" | .endTime = "24:00:00" | .price = 30')" \
		"$(with "$RULE" '.dayType = "HOLIDAY" | .price = 40.05 | .currency = "USD"')" \
		"$(with "$RULE" '.dayType = "WEEKEND" | .startTime = "00:00:00"')"; do
		req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$body"
		expect 200
	done
	same '.priceRules | map(del(.id))' '[
		{"dayType":"WEEKDAY","startTime":"08:00:00","endTime":"14:00:00","price":25.50,"currency":"EUR"},
		{"dayType":"WEEKDAY","startTime":"14:00:00","endTime":"24:00:00","price":30.00,"currency":"EUR"},
		{"dayType":"WEEKEND","startTime":"00:00:00","endTime":"14:00:00","price":25.50,"currency":"EUR"},
		{"dayType":"HOLIDAY","startTime":"08:00:00","endTime":"14:00:00","price":40.05,"currency":"USD"}]'
	[ "$(sql "SELECT string_agg(price::text, ',' ORDER BY price) FROM price_rules")" = \
	  "25.50,25.50,30.00,40.05" ]
}

@test "a rule overlapping another of the same day type is 409 PRICE_RULE_OVERLAP" {
	# the exclusion constraint decides, as designed: PostgreSQL logs the refused insert
	expect_log postgres 'conflicting key value violates exclusion constraint "price_rules_no_overlap"'
	c=$(court)
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$c', 'WEEKDAY', '08:00', '14:00', 20, 'EUR')" >/dev/null
	before=$(court_state "$c")
	for range in '07:00:00 08:00:01' '13:59:59 20:00:00' '09:00:00 10:00:00' '00:00:00 24:00:00'; do
		req POST "/api/owner/resources/$c/price-rules" -t "$TA" \
			-d "$(with "$RULE" ".startTime = \"${range% *}\" | .endTime = \"${range#* }\"")"
		expect_problem 409 PRICE_RULE_OVERLAP || { echo "range $range" >&2; return 1; }
	done
	# the rejected request wrote nothing, not even the court's updated_at
	[ "$(court_state "$c")" = "$before" ]
	[ "$(sql 'SELECT count(*) FROM price_rules')" = 1 ]
}

@test "a price that is not positive or has more than two decimals is 400" {
	c=$(court)
	before=$(court_state "$c")
	for p in 0 -5 -0.01 12.345 0.001 '"12.50"' null 10000000000; do
		req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$(with "$RULE" ".price = $p")"
		expect_problem 400 VALIDATION_FAILED price || { echo "price $p" >&2; return 1; }
		[ "$(jqr '.errors | length')" = 1 ]
	done
	[ "$(court_state "$c")" = "$before" ]
}

@test "a currency that is not three upper-case letters is 400" {
	c=$(court)
	before=$(court_state "$c")
	for cur in '"eur"' '"EURO"' '"EU"' '"E1R"' '""' 978 null; do
		req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$(with "$RULE" ".currency = $cur")"
		expect_problem 400 VALIDATION_FAILED currency || { echo "currency $cur" >&2; return 1; }
	done
	[ "$(court_state "$c")" = "$before" ]
}

@test "a rule with an unknown day type or bad times is 400 and changes nothing" {
	c=$(court)
	before=$(court_state "$c")
	for dt in '"weekday"' '"MONDAY"' '"WORKDAY"' 0; do
		req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$(with "$RULE" ".dayType = $dt")"
		expect_problem 400 VALIDATION_FAILED dayType
	done
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" \
		-d "$(with "$RULE" '.startTime = "14:00:00" | .endTime = "08:00:00"')"
	expect_problem 400 VALIDATION_FAILED endTime
	[ "$(jqr '.errors[0].message')" = "must be after startTime" ]
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" \
		-d "$(with "$RULE" '.startTime = "14:00:00" | .endTime = "14:00:00"')"
	expect_problem 400 VALIDATION_FAILED endTime
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" \
		-d "$(with "$RULE" '.startTime = "24:00:00" | .endTime = "24:00:00"')"
	expect_problem 400 VALIDATION_FAILED startTime
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$(with "$RULE" '.startTime = "8am"')"
	expect_problem 400 VALIDATION_FAILED startTime
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d '{}'
	expect_problem 400 VALIDATION_FAILED dayType startTime endTime price currency
	[ "$(jqr '.errors | length')" = 5 ]
	[ "$(court_state "$c")" = "$before" ]
}

@test "a rule for an unknown court is 404" {
	req POST "/api/owner/resources/$NOWHERE/price-rules" -t "$TA" -d "$RULE"
	expect_problem 404 NOT_FOUND
	[ "$(sql 'SELECT count(*) FROM price_rules')" = 0 ]
}

@test "deleting a price rule answers 204, removes it and bumps the court's updatedAt" {
	c=$(court)
	gone=$(sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	            VALUES ('$c', 'WEEKDAY', '08:00', '14:00', 20, 'EUR') RETURNING id")
	kept=$(sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	            VALUES ('$c', 'WEEKEND', '08:00', '14:00', 20, 'EUR') RETURNING id")
	req DELETE "/api/owner/resources/$c/price-rules/$gone" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT string_agg(id::text, ',') FROM price_rules")" = "$kept" ]
	[ "$(sql "SELECT updated_at > '$OLD' FROM resources WHERE id = '$c'")" = t ]
	req DELETE "/api/owner/resources/$c/price-rules/$gone" -t "$TA"
	expect_problem 404 NOT_FOUND
	req DELETE "/api/owner/resources/$c/price-rules/rule-1" -t "$TA"
	expect_problem 400 VALIDATION_FAILED ruleId
}

@test "a price rule of another court of the same owner cannot be deleted through this court" {
	c1=$(court)
	c2=$(court)
	rule=$(sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	            VALUES ('$c2', 'WEEKDAY', '08:00', '14:00', 20, 'EUR') RETURNING id")
	before=$(court_state "$c1")
	req DELETE "/api/owner/resources/$c1/price-rules/$rule" -t "$TA"
	expect_problem 404 NOT_FOUND
	[ "$(sql 'SELECT count(*) FROM price_rules')" = 1 ]
	[ "$(court_state "$c1")" = "$before" ]
}

# ---- suspend / reactivate -----------------------------------------------------------------

@test "suspending an active court answers 204 and marks it suspended by the owner" {
	c=$(court)
	req PATCH "/api/owner/resources/$c/suspend" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT status, suspended_by, updated_at > '$OLD' FROM resources WHERE id = '$c'")" = \
	  "SUSPENDED|OWNER|t" ]
	# the venue is not touched
	[ "$(sql "SELECT status, api_ts(updated_at) FROM venues WHERE id = '$V'")" = "ACTIVE|$OLD" ]
}

@test "suspending a court that is not active is 409 INVALID_STATE and changes nothing" {
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		c=$(court "$V" $st)
		before=$(court_state "$c")
		req PATCH "/api/owner/resources/$c/suspend" -t "$TA"
		expect_problem 409 INVALID_STATE
		[ "$(court_state "$c")" = "$before" ]
	done
}

@test "reactivating a court the owner suspended answers 204 and makes it active" {
	c=$(court "$V" SUSPENDED)
	req PATCH "/api/owner/resources/$c/reactivate" -t "$TA"
	expect 204 -
	[ "$(sql "SELECT status, suspended_by IS NULL, updated_at > '$OLD' FROM resources WHERE id = '$c'")" = \
	  "ACTIVE|t|t" ]
}

@test "a court suspended by an administrator cannot be reactivated by its owner" {
	c=$(court "$V" SUSPENDED ADMIN)
	before=$(court_state "$c")
	req PATCH "/api/owner/resources/$c/reactivate" -t "$TA"
	expect_problem 409 SUSPENDED_BY_ADMIN
	[ "$(court_state "$c")" = "$before" ]
	[ "$(sql "SELECT status, suspended_by FROM resources WHERE id = '$c'")" = "SUSPENDED|ADMIN" ]
}

@test "reactivating a court that is not suspended is 409 INVALID_STATE" {
	for st in ACTIVE PENDING_APPROVAL REJECTED; do
		c=$(court "$V" $st)
		before=$(court_state "$c")
		req PATCH "/api/owner/resources/$c/reactivate" -t "$TA"
		expect_problem 409 INVALID_STATE
		[ "$(court_state "$c")" = "$before" ]
	done
}

@test "suspend and reactivate of an unknown court are 404, of a malformed id 400" {
	for action in suspend reactivate; do
		req PATCH "/api/owner/resources/$NOWHERE/$action" -t "$TA"
		expect_problem 404 NOT_FOUND
		req PATCH "/api/owner/resources/zzz/$action" -t "$TA"
		expect_problem 400 VALIDATION_FAILED resourceId
	done
}

# ---- images -------------------------------------------------------------------------------

@test "adding an image answers 200 with the court including it, in order, and bumps updatedAt" {
	c=$(court)
	req POST "/api/owner/resources/$c/images" -t "$TA" -d '{"url":"https://cdn.example/r/1.jpg","publicId":"r/1"}'
	expect 200
	[ "$(jqr .id)" = "$c" ]
	img=$(jqr '.images[0].id')
	[[ "$img" =~ $UUID_RE ]]
	same .images "[{\"id\":\"$img\",\"url\":\"https://cdn.example/r/1.jpg\",\"publicId\":\"r/1\"}]"
	bumped "$c"
	req POST "/api/owner/resources/$c/images" -t "$TA" -d '{"url":"HTTP://CDN.example/r/2.png","publicId":"r/2"}'
	expect 200
	[ "$(jqr '[.images[].publicId] | join(",")')" = "r/1,r/2" ]
	[ "$(sql "SELECT string_agg(url || ' ' || public_id, ',' ORDER BY created_at)
	         FROM resource_images WHERE resource_id = '$c'")" = \
	  "https://cdn.example/r/1.jpg r/1,HTTP://CDN.example/r/2.png r/2" ]
}

@test "adding an image with a blank, missing or non-http url or publicId is 400 and stores nothing" {
	c=$(court)
	before=$(court_state "$c")
	req POST "/api/owner/resources/$c/images" -t "$TA" -d '{"url":"","publicId":"  "}'
	expect_problem 400 VALIDATION_FAILED url publicId
	req POST "/api/owner/resources/$c/images" -t "$TA" -d '{"publicId":"p"}'
	expect_problem 400 VALIDATION_FAILED url
	req POST "/api/owner/resources/$c/images" -t "$TA" -d '{"url":"https://c.example/a.jpg"}'
	expect_problem 400 VALIDATION_FAILED publicId
	for url in 'mailto:a@b.c' 'c.example/a.jpg' 'https:///a.jpg' 'http://'; do
		req POST "/api/owner/resources/$c/images" -t "$TA" -d "{\"url\":\"$url\",\"publicId\":\"p\"}"
		expect_problem 400 VALIDATION_FAILED url || { echo "url $url" >&2; return 1; }
	done
	[ "$(court_state "$c")" = "$before" ]
	req POST "/api/owner/resources/$NOWHERE/images" -t "$TA" -d '{"url":"https://c.example/a.jpg","publicId":"a"}'
	expect_problem 404 NOT_FOUND
	[ "$(sql 'SELECT count(*) FROM resource_images')" = 0 ]
}

@test "deleting a court image answers 200 with the court without it" {
	c=$(court)
	gone=$(sql "INSERT INTO resource_images (resource_id, url, public_id)
	            VALUES ('$c', 'https://c.example/a.jpg', 'a') RETURNING id")
	kept=$(sql "INSERT INTO resource_images (resource_id, url, public_id)
	            VALUES ('$c', 'https://c.example/b.jpg', 'b') RETURNING id")
	req DELETE "/api/owner/resources/$c/images/$gone" -t "$TA"
	expect 200
	[ "$(jqr .id)" = "$c" ]
	same .images "[{\"id\":\"$kept\",\"url\":\"https://c.example/b.jpg\",\"publicId\":\"b\"}]"
	bumped "$c"
	[ "$(sql "SELECT string_agg(id::text, ',') FROM resource_images")" = "$kept" ]
	req DELETE "/api/owner/resources/$c/images/$gone" -t "$TA"
	expect_problem 404 NOT_FOUND
	req DELETE "/api/owner/resources/$c/images/x" -t "$TA"
	expect_problem 400 VALIDATION_FAILED imageId
}

@test "an image of another court or of a venue cannot be deleted through this court" {
	c1=$(court)
	c2=$(court)
	other=$(sql "INSERT INTO resource_images (resource_id, url, public_id)
	             VALUES ('$c2', 'https://c.example/a.jpg', 'a') RETURNING id")
	vimg=$(sql "INSERT INTO venue_images (venue_id, url, public_id)
	            VALUES ('$V', 'https://c.example/v.jpg', 'v') RETURNING id")
	before=$(court_state "$c1")
	for img in "$other" "$vimg"; do
		req DELETE "/api/owner/resources/$c1/images/$img" -t "$TA"
		expect_problem 404 NOT_FOUND
	done
	[ "$(court_state "$c1")" = "$before" ]
	[ "$(sql 'SELECT (SELECT count(*) FROM resource_images) + (SELECT count(*) FROM venue_images)')" = 2 ]
}

# ---- resubmission -------------------------------------------------------------------------

@test "a rejected court is resubmitted for approval when its schedules, rules or images change" {
	for change in schedules price-rules images; do
		c=$(court "$V" REJECTED)
		case $change in
		schedules) req PUT "/api/owner/resources/$c/schedules" -t "$TA" -d '{"dayOfWeek":"MONDAY"}' ;;
		price-rules) req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$RULE" ;;
		images) req POST "/api/owner/resources/$c/images" -t "$TA" -d '{"url":"https://c.example/a.jpg","publicId":"a"}' ;;
		esac
		expect 200
		same '{status, rejectReason}' '{"status":"PENDING_APPROVAL","rejectReason":null}'
		[ "$(sql "SELECT status, reject_reason IS NULL FROM resources WHERE id = '$c'")" = "PENDING_APPROVAL|t" ]
	done
}

@test "changing a suspended court's setup keeps it suspended" {
	c=$(court "$V" SUSPENDED ADMIN)
	req POST "/api/owner/resources/$c/price-rules" -t "$TA" -d "$RULE"
	expect 200
	[ "$(jqr .status)" = SUSPENDED ]
	[ "$(sql "SELECT status, suspended_by FROM resources WHERE id = '$c'")" = "SUSPENDED|ADMIN" ]
}
