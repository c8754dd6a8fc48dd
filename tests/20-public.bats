#!/usr/bin/env bats
# What players see without a token: ACTIVE venues (all, or near a point), the ACTIVE courts
# of an ACTIVE venue, and the slots of a court on a date (cgi-bin/public.c).

load test_helper

VENUE_KEYS="id,ownerId,name,description,street,city,country,postalCode,latitude,longitude,timezone,status,rejectReason,images,resourceCount,createdAt,updatedAt"
RESOURCE_KEYS="id,venueId,name,description,type,slotDurationMinutes,status,rejectReason,schedules,priceRules,images,createdAt,updatedAt"
TS_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'

# Puerta del Sol, Madrid, and a point 0.045 degrees of latitude (about 5 km) north of it.
SOL_LAT=40.4169 SOL_LNG=-3.7035
NORTH_LAT=40.4619

setup() {
	reset_db
}

# venue_at NAME LAT LNG [STATUS]: an owner1 venue called NAME; prints its id.
venue_at() {
	local id
	id=$(fixture_venue owner1 "${4:-ACTIVE}" "$2" "$3")
	sql "UPDATE venues SET name = '$1' WHERE id = '$id'"
	echo "$id"
}

# km LAT1 LNG1 LAT2 LNG2: great-circle distance (haversine, mean earth radius).
km() {
	awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN {
		r = atan2(0, -1) / 180
		h = sin((c - a) * r / 2) ^ 2 + cos(a * r) * cos(c * r) * sin((d - b) * r / 2) ^ 2
		printf "%.6f\n", 2 * 6371.0088 * atan2(sqrt(h), sqrt(1 - h))
	}'
}

# within_1pct GOT WANT: GOT is within 1 % of WANT.
within_1pct() {
	awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w / 100) }' ||
		{ echo "$1 is not within 1% of $2" >&2; return 1; }
}

# weekday_price DATE: the fixture court's price on that local date.
weekday_price() {
	case $(date -d "$1" +%u) in 6 | 7) echo 30.00 ;; *) echo 20.00 ;; esac
}

# ---- GET /api/venues ---------------------------------------------------------------------

# hold RESOURCE DATE START END STATUS EXPIRES_SQL: a match request on the court.
hold() {
	fixture_hold "$@"
}

@test "without a centre every ACTIVE venue is listed by name, with every field and no distanceKm" {
	zeta=$(venue_at Zeta 41.3874 2.1686)
	alpha=$(venue_at Alpha $SOL_LAT $SOL_LNG)
	venue_at Pending 40.0 -3.0 PENDING_APPROVAL >/dev/null
	venue_at Suspended 40.0 -3.0 SUSPENDED >/dev/null
	venue_at Rejected 40.0 -3.0 REJECTED >/dev/null
	fixture_court "$alpha" 90 >/dev/null
	fixture_court "$alpha" 90 PENDING_APPROVAL >/dev/null
	fixture_court "$alpha" 90 SUSPENDED >/dev/null
	sql "UPDATE venues SET description = 'Eight courts', postal_code = '28013' WHERE id = '$alpha';
	     INSERT INTO venue_images (venue_id, url, public_id)
	     VALUES ('$alpha', 'https://cdn.example/a.jpg', 'venues/a')"
	req GET /api/venues
	expect 200
	[ "$(jqr 'length')" = 2 ]
	[ "$(jqr '.[0].id')" = "$alpha" ]
	[ "$(jqr '.[1].id')" = "$zeta" ]
	[ "$(jqr '.[0] | keys_unsorted | join(",")')" = "$VENUE_KEYS" ]
	[ "$(jqr '.[1] | keys_unsorted | join(",")')" = "$VENUE_KEYS" ]
	[ "$(jqr '.[0].ownerId')" = "$(user_id owner1)" ]
	[ "$(jqr '.[0].name')" = Alpha ]
	[ "$(jqr '.[0].description')" = "Eight courts" ]
	[ "$(jqr '.[0].street')" = "Calle Mayor 1" ]
	[ "$(jqr '.[0].city')" = Madrid ]
	[ "$(jqr '.[0].country')" = Spain ]
	[ "$(jqr '.[0].postalCode')" = 28013 ]
	[ "$(jqr '.[0].latitude')" = $SOL_LAT ]
	[ "$(jqr '.[0].longitude')" = $SOL_LNG ]
	[ "$(jqr '.[0].timezone')" = Europe/Madrid ]
	[ "$(jqr '.[0].status')" = ACTIVE ]
	[ "$(jqr '.[0].rejectReason')" = null ]
	[ "$(jqr '.[0].images | length')" = 1 ]
	[ "$(jqr '.[0].images[0] | keys_unsorted | join(",")')" = id,url,publicId ]
	[ "$(jqr '.[0].images[0].id')" = "$(sql "SELECT id FROM venue_images WHERE venue_id = '$alpha'")" ]
	[ "$(jqr '.[0].images[0].url')" = https://cdn.example/a.jpg ]
	[ "$(jqr '.[0].images[0].publicId')" = venues/a ]
	# players count only the courts they can see
	[ "$(jqr '.[0].resourceCount')" = 1 ]
	[ "$(jqr '.[1].resourceCount')" = 0 ]
	[ "$(jqr '.[1].description')" = null ]
	[ "$(jqr '.[1].images')" = "[]" ]
	[[ "$(jqr '.[0].createdAt')" =~ $TS_RE ]]
	[[ "$(jqr '.[0].updatedAt')" =~ $TS_RE ]]
}

@test "with no ACTIVE venue the list is empty" {
	venue_at Pending $SOL_LAT $SOL_LNG PENDING_APPROVAL >/dev/null
	req GET /api/venues
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
}

@test "a centre lists the ACTIVE venues within 10 km, nearest first, with distanceKm" {
	north=$(venue_at North $NORTH_LAT $SOL_LNG)
	sol=$(venue_at Sol $SOL_LAT $SOL_LNG)
	venue_at Toledo 39.8628 -4.0273 >/dev/null
	venue_at "Pending at Sol" $SOL_LAT $SOL_LNG PENDING_APPROVAL >/dev/null
	venue_at "Suspended at Sol" $SOL_LAT $SOL_LNG SUSPENDED >/dev/null
	venue_at "Rejected at Sol" $SOL_LAT $SOL_LNG REJECTED >/dev/null
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = Sol,North ]
	[ "$(jqr '.[0].id')" = "$sol" ]
	[ "$(jqr '.[1].id')" = "$north" ]
	[ "$(jqr '.[0] | keys_unsorted | join(",")')" = "$VENUE_KEYS,distanceKm" ]
	[ "$(jqr '.[1] | keys_unsorted | join(",")')" = "$VENUE_KEYS,distanceKm" ]
	[ "$(jqr '.[0].distanceKm')" = 0 ]
	within_1pct "$(jqr '.[1].distanceKm')" "$(km $SOL_LAT $SOL_LNG $NORTH_LAT $SOL_LNG)"
	# rounded to metres: three decimals at most
	[[ "$(jqr '.[1].distanceKm')" =~ ^5\.[0-9]{1,3}$ ]]
	[ "$(jqr '.[1].status')" = ACTIVE ]
	[ "$(jqr '.[1].name')" = North ]
}

@test "radiusKm widens and narrows the search" {
	venue_at North $NORTH_LAT $SOL_LNG >/dev/null
	venue_at Sol $SOL_LAT $SOL_LNG >/dev/null
	venue_at Toledo 39.8628 -4.0273 >/dev/null
	venue_at Valencia 39.4699 -0.3763 >/dev/null
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG&radiusKm=100"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = Sol,North,Toledo ]
	within_1pct "$(jqr '.[2].distanceKm')" "$(km $SOL_LAT $SOL_LNG 39.8628 -4.0273)"
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG&radiusKm=4.5"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = Sol ]
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG&radiusKm=500"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = Sol,North,Toledo,Valencia ]
	within_1pct "$(jqr '.[3].distanceKm')" "$(km $SOL_LAT $SOL_LNG 39.4699 -0.3763)"
}

@test "a venue inside the search box but beyond the radius is left out" {
	# 4 km north and 4 km east of Sol: about 5.66 km away, inside the 5 km earth_box
	venue_at Corner 40.452833 -3.656320 >/dev/null
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG&radiusKm=5"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG&radiusKm=6"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = Corner ]
	within_1pct "$(jqr '.[0].distanceKm')" "$(km $SOL_LAT $SOL_LNG 40.452833 -3.656320)"
}

@test "a centre far from every venue gives an empty list" {
	venue_at Sol $SOL_LAT $SOL_LNG >/dev/null
	req GET "/api/venues?lat=40.7128&lng=-74.0060"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
	req GET "/api/venues?lat=40.7128&lng=-74.0060&radiusKm=500"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
}

@test "venues at equal distance are listed by id" {
	a=$(venue_at A $SOL_LAT $SOL_LNG)
	b=$(venue_at B $SOL_LAT $SOL_LNG)
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG"
	expect 200
	[ "$(jqr 'map(.id) | join(",")')" = "$(printf '%s\n' "$a" "$b" | sort | paste -sd,)" ]
}

@test "a half-given centre, a bad centre and a bad radius are 400" {
	venue_at Sol $SOL_LAT $SOL_LNG >/dev/null
	req GET "/api/venues?lat=$SOL_LAT"
	expect_problem 400 VALIDATION_FAILED lng
	req GET "/api/venues?lng=$SOL_LNG"
	expect_problem 400 VALIDATION_FAILED lat
	req GET "/api/venues?lat=91&lng=0"
	expect_problem 400 VALIDATION_FAILED lat
	req GET "/api/venues?lat=0&lng=-180.5"
	expect_problem 400 VALIDATION_FAILED lng
	req GET "/api/venues?lat=north&lng=west"
	expect_problem 400 VALIDATION_FAILED lat lng
	for radius in 0 -1 500.01 1000 ten; do
		req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG&radiusKm=$radius"
		expect_problem 400 VALIDATION_FAILED radiusKm
	done
	req GET "/api/venues?radiusKm=5"
	expect_problem 400 VALIDATION_FAILED radiusKm
}

@test "the radius search is answered from venues_earth_idx" {
	expect_autovacuum_yield
	# enough venues far away that the planner prefers the index to reading them all
	sql "INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude,
	         timezone, status)
	     SELECT '$(user_id owner1)', 'Far ' || i, 'Street', 'City', 'Country',
	            -60 + (i % 100) * 1.2, 10 + (i / 100) * 3, 'UTC', 'ACTIVE'
	       FROM generate_series(0, 4999) i;
	     ANALYZE venues"
	venue_at Sol $SOL_LAT $SOL_LNG >/dev/null
	scans() {
		sql "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'venues_earth_idx'"
	}
	before=$(scans)
	req GET "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG"
	expect 200
	[ "$(jqr 'map(.name) | join(",")')" = Sol ]
	# statistics reach the view when the serving backend flushes them: poll for it
	deadline=$((SECONDS + 20))
	until [ "$(scans)" -gt "$before" ]; do
		[ $SECONDS -lt $deadline ] || { echo "venues_earth_idx was not used" >&2; return 1; }
		sleep 0.2
	done
}

# ---- GET /api/venues/{venueId} -----------------------------------------------------------

@test "an ACTIVE venue is shown with every field" {
	id=$(venue_at Sol $SOL_LAT $SOL_LNG)
	fixture_court "$id" 90 >/dev/null
	fixture_court "$id" 60 REJECTED >/dev/null
	req GET "/api/venues/$id"
	expect 200
	[ "$(jqr 'keys_unsorted | join(",")')" = "$VENUE_KEYS" ]
	[ "$(jqr .id)" = "$id" ]
	[ "$(jqr .ownerId)" = "$(user_id owner1)" ]
	[ "$(jqr .name)" = Sol ]
	[ "$(jqr .status)" = ACTIVE ]
	[ "$(jqr .latitude)" = $SOL_LAT ]
	[ "$(jqr .longitude)" = $SOL_LNG ]
	[ "$(jqr .resourceCount)" = 1 ]
	[ "$(jqr .rejectReason)" = null ]
	[ "$(jqr .images)" = "[]" ]
	[ "$(jqr .createdAt)" = "$(sql "SELECT api_ts(created_at) FROM venues WHERE id = '$id'")" ]
	[ "$(jqr .updatedAt)" = "$(sql "SELECT api_ts(updated_at) FROM venues WHERE id = '$id'")" ]
}

@test "a venue that is not ACTIVE, or unknown, is 404; a bad id is 400" {
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		id=$(venue_at "$st" $SOL_LAT $SOL_LNG $st)
		req GET "/api/venues/$id"
		expect_problem 404 NOT_FOUND
	done
	req GET /api/venues/00000000-0000-4000-8000-000000000000
	expect_problem 404 NOT_FOUND
	req GET /api/venues/not-a-uuid
	expect_problem 400 VALIDATION_FAILED venueId
}

# ---- GET /api/venues/{venueId}/resources (17) --------------------------------------------

@test "a venue's ACTIVE courts are listed oldest first with schedules, price rules and images" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	second=$(fixture_court "$venue" 60)
	first=$(fixture_court "$venue" 90)
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do fixture_court "$venue" 90 $st >/dev/null; done
	sql "UPDATE resources SET created_at = now() - interval '2 days', name = 'Court A',
	         description = 'Glass walls'
	      WHERE id = '$first';
	     UPDATE resources SET created_at = now() - interval '1 day', name = 'Court B',
	         type = 'TENNIS_COURT'
	      WHERE id = '$second';
	     UPDATE resource_schedules SET opening_time = NULL, closing_time = NULL
	      WHERE resource_id = '$first' AND day_of_week = 7;
	     INSERT INTO resource_images (resource_id, url, public_id)
	     VALUES ('$first', 'https://cdn.example/c.jpg', 'courts/c')"
	req GET "/api/venues/$venue/resources"
	expect 200
	[ "$(jqr 'length')" = 2 ]
	[ "$(jqr 'map(.id) | join(",")')" = "$first,$second" ]
	[ "$(jqr '.[0] | keys_unsorted | join(",")')" = "$RESOURCE_KEYS" ]
	[ "$(jqr '.[1] | keys_unsorted | join(",")')" = "$RESOURCE_KEYS" ]
	[ "$(jqr '.[0].venueId')" = "$venue" ]
	[ "$(jqr '.[0].name')" = "Court A" ]
	[ "$(jqr '.[0].description')" = "Glass walls" ]
	[ "$(jqr '.[0].type')" = PADEL_COURT ]
	[ "$(jqr '.[0].slotDurationMinutes')" = 90 ]
	[ "$(jqr '.[0].status')" = ACTIVE ]
	[ "$(jqr '.[0].rejectReason')" = null ]
	[ "$(jqr '.[0].schedules | length')" = 7 ]
	[ "$(jqr '.[0].schedules | map(.dayOfWeek) | join(",")')" = MONDAY,TUESDAY,WEDNESDAY,THURSDAY,FRIDAY,SATURDAY,SUNDAY ]
	[ "$(jqr -c '.[0].schedules[0]')" = '{"dayOfWeek":"MONDAY","openingTime":"08:00:00","closingTime":"22:00:00"}' ]
	[ "$(jqr -c '.[0].schedules[6]')" = '{"dayOfWeek":"SUNDAY","openingTime":null,"closingTime":null}' ]
	[ "$(jqr '.[0].priceRules | length')" = 2 ]
	[ "$(jqr '.[0].priceRules[0] | keys_unsorted | join(",")')" = id,dayType,startTime,endTime,price,currency ]
	[ "$(jqr -c '.[0].priceRules | map([.dayType, .startTime, .endTime, .price, .currency])')" = \
		'[["WEEKDAY","00:00:00","24:00:00",20,"EUR"],["WEEKEND","00:00:00","24:00:00",30,"EUR"]]' ]
	[ "$(jqr '.[0].priceRules[0].id')" = \
		"$(sql "SELECT id FROM price_rules WHERE resource_id = '$first' AND day_type = 'WEEKDAY'")" ]
	# money keeps its two decimals on the wire
	grep -Eq '"price" ?: ?20\.00' <<<"$HTTP_BODY"
	[ "$(jqr -c '.[0].images | map([.url, .publicId])')" = '[["https://cdn.example/c.jpg","courts/c"]]' ]
	[ "$(jqr '.[0].images[0].id')" = "$(sql "SELECT id FROM resource_images WHERE resource_id = '$first'")" ]
	[[ "$(jqr '.[0].createdAt')" =~ $TS_RE ]]
	[[ "$(jqr '.[0].updatedAt')" =~ $TS_RE ]]
	[ "$(jqr '.[1].name')" = "Court B" ]
	[ "$(jqr '.[1].type')" = TENNIS_COURT ]
	[ "$(jqr '.[1].slotDurationMinutes')" = 60 ]
	[ "$(jqr '.[1].images')" = "[]" ]
}

@test "an ACTIVE venue without ACTIVE courts lists none" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	fixture_court "$venue" 90 PENDING_APPROVAL >/dev/null
	req GET "/api/venues/$venue/resources"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
}

@test "the courts of a venue that is not ACTIVE, or unknown, are 404; a bad id is 400" {
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		venue=$(venue_at "$st" $SOL_LAT $SOL_LNG $st)
		fixture_court "$venue" 90 >/dev/null
		req GET "/api/venues/$venue/resources"
		expect_problem 404 NOT_FOUND
	done
	req GET /api/venues/00000000-0000-4000-8000-000000000000/resources
	expect_problem 404 NOT_FOUND
	req GET /api/venues/123/resources
	expect_problem 400 VALIDATION_FAILED venueId
}

# ---- GET /api/resources/{id}/slots (18) --------------------------------------------------

@test "tomorrow's slots are all listed with price, a held slot unavailable" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 90)
	day=$(local_date 1)
	hold "$court" "$day" 09:30 11:00 PENDING_PAYMENT "now() + interval '15 minutes'"
	# an expired payment hold and a cancelled request hold nothing
	hold "$court" "$day" 12:30 14:00 PENDING_PAYMENT "now() - interval '1 minute'"
	hold "$court" "$day" 14:00 15:30 CANCELLED "now() - interval '1 hour'"
	req GET "/api/resources/$court/slots?date=$day"
	expect 200
	p=$(weekday_price "$day")
	want=""
	for s in 08:00:00,09:30:00,true 09:30:00,11:00:00,false 11:00:00,12:30:00,true \
		12:30:00,14:00:00,true 14:00:00,15:30:00,true 15:30:00,17:00:00,true \
		17:00:00,18:30:00,true 18:30:00,20:00:00,true 20:00:00,21:30:00,true; do
		IFS=, read -r a b ok <<<"$s"
		want+="${want:+,}{\"startTime\":\"$a\",\"endTime\":\"$b\",\"available\":$ok,\"price\":${p%.00},\"currency\":\"EUR\"}"
	done
	[ "$(jqr -c .)" = "[$want]" ]
	[ "$(grep -Eo '"price" ?: ?[0-9.]+' <<<"$HTTP_BODY" | sort -u | grep -Eo '[0-9.]+$')" = "$p" ]
}

@test "today's slots that have started are unavailable" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 30)
	sql "UPDATE resource_schedules SET opening_time = '00:00', closing_time = '24:00'
	      WHERE resource_id = '$court'"
	day=$(local_date 0)
	before=$(date +%s)
	req GET "/api/resources/$court/slots?date=$day"
	after=$(date +%s)
	expect 200
	[ "$(jqr length)" = 48 ]
	[ "$(jqr '.[47].endTime')" = 24:00:00 ]
	checked=0
	while IFS=, read -r start ok; do
		at=$(TZ=Europe/Madrid date -d "$day $start" +%s)
		# a slot starting while the request ran may go either way
		if [ "$at" -le "$before" ]; then
			[ "$ok" = false ] || { echo "$start should have started" >&2; return 1; }
		elif [ "$at" -gt "$after" ]; then
			[ "$ok" = true ] || { echo "$start should be available" >&2; return 1; }
		fi
		checked=$((checked + 1))
	done < <(jqr '.[] | "\(.startTime),\(.available)"')
	[ "$checked" = 48 ]
}

@test "a past date lists its slots, all unavailable" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 90)
	req GET "/api/resources/$court/slots?date=$(local_date -1)"
	expect 200
	[ "$(jqr length)" = 9 ]
	[ "$(jqr 'map(.available) | unique | join(",")')" = false ]
}

@test "a slot that no price rule covers is unavailable with a null price and currency" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 120)
	sql "DELETE FROM price_rules WHERE resource_id = '$court';
	     INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$court', 'WEEKDAY', '08:00', '10:00', 12.50, 'USD'),
	            ('$court', 'WEEKEND', '08:00', '10:00', 12.50, 'USD')"
	req GET "/api/resources/$court/slots?date=$(local_date 2)"
	expect 200
	[ "$(jqr length)" = 7 ]
	[ "$(jqr -c '.[0]')" = '{"startTime":"08:00:00","endTime":"10:00:00","available":true,"price":12.5,"currency":"USD"}' ]
	grep -Eq '"price" ?: ?12\.50' <<<"$HTTP_BODY"
	[ "$(jqr -c '.[1]')" = '{"startTime":"10:00:00","endTime":"12:00:00","available":false,"price":null,"currency":null}' ]
	[ "$(jqr -c '.[1:] | map([.available, .price, .currency]) | unique')" = '[[false,null,null]]' ]
}

@test "a closed day has no slots" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 90)
	sql "UPDATE resource_schedules SET opening_time = NULL, closing_time = NULL
	      WHERE resource_id = '$court'"
	req GET "/api/resources/$court/slots?date=$(local_date 1)"
	expect 200
	[ "$HTTP_BODY" = "[]" ]
}

@test "the date is required, must be a real date and at most 366 days ahead" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 90)
	req GET "/api/resources/$court/slots"
	expect_problem 400 VALIDATION_FAILED date
	for d in 2030-02-30 2030-6-1 tomorrow "$(local_date 1)T00:00:00"; do
		req GET "/api/resources/$court/slots?date=$d"
		expect_problem 400 VALIDATION_FAILED date
	done
	req GET "/api/resources/$court/slots?date=$(local_date 367)"
	expect_problem 400 VALIDATION_FAILED date
	req GET "/api/resources/$court/slots?date=$(local_date 366)"
	expect 200
	[ "$(jqr length)" = 9 ]
}

@test "slots of a court or venue that is not ACTIVE, or of an unknown court, are 404" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		court=$(fixture_court "$venue" 90 $st)
		req GET "/api/resources/$court/slots?date=$(local_date 1)"
		expect_problem 404 NOT_FOUND
		hidden=$(venue_at "$st" $SOL_LAT $SOL_LNG $st)
		court=$(fixture_court "$hidden" 90)
		req GET "/api/resources/$court/slots?date=$(local_date 1)"
		expect_problem 404 NOT_FOUND
	done
	req GET "/api/resources/00000000-0000-4000-8000-000000000000/slots?date=$(local_date 1)"
	expect_problem 404 NOT_FOUND
	req GET "/api/resources/nope/slots?date=$(local_date 1)"
	expect_problem 400 VALIDATION_FAILED id
}

@test "public endpoints need no token and ignore one that is sent" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	court=$(fixture_court "$venue" 90)
	users=$(sql "SELECT count(*) FROM users")
	for path in /api/venues "/api/venues?lat=$SOL_LAT&lng=$SOL_LNG" "/api/venues/$venue" \
		"/api/venues/$venue/resources" "/api/resources/$court/slots?date=$(local_date 1)"; do
		req GET "$path"
		expect 200
		req GET "$path" -t not.a.token
		expect 200
	done
	# nothing was written: no local user for a caller
	[ "$(sql "SELECT count(*) FROM users")" = "$users" ]
}

@test "a write method on a public path is 405 with Allow: GET" {
	venue=$(venue_at Sol $SOL_LAT $SOL_LNG)
	req POST /api/venues -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = GET ]
	req DELETE "/api/venues/$venue"
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = GET ]
}
