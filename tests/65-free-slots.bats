#!/usr/bin/env bats
# The free slots kept for the search (sql/areas/30_slots.sql): every write that changes a
# court's day changes them in its own transaction, the clock (a lapsed hold, the notice
# period, the booking window) changes the next answer without any write, the kept answer is
# the worked-out one, the sweeper keeps the dates, and concurrent writers never leave them
# wrong.
# Any mode.

load test_helper

LAT=40.4168
LNG=-3.7038

setup() {
	reset_db
	D=$(local_date 3)
	OWNER=owner-$BATS_TEST_NUMBER-$RANDOM
}

# drift: the slots on which the kept rows and the worked-out ones differ (none expected).
drift() {
	sql "SELECT count(*) FROM free_slots_drift()"
}

# answers DATE [NOW_SQL]: the search's slots from the kept rows and worked out, for several
# windows, lengths, radii and limits, one line each: "kept-md5 computed-md5 rows".
answers() {
	sql "SELECT (SELECT md5(string_agg(k::text, ',')) FROM search_free_slots($LAT, $LNG, w.r, '$1',
	                 w.f, w.t, w.d, w.l, ${2:-now()}) k)
	         || ' ' || (SELECT md5(string_agg(c::text, ',')) || ' ' || count(*)
	                      FROM search_slots_computed($LAT, $LNG, w.r, '$1', w.f, w.t, w.d, w.l,
	                                                 ${2:-now()}) c)
	       FROM (VALUES (10, '00:00'::time, '23:59'::time, 90, 50), (10, '18:00', '20:00', 90, 50),
	                    (10, '00:00', '23:59', 60, 50), (1, '00:00', '23:59', 90, 3),
	                    (50, '09:00', '12:00', 90, 2)) w(r, f, t, d, l)"
}

# agree DATE [NOW_SQL]: the kept slots are right and both ways give the same answers.
agree() {
	local line
	[ "$(drift)" = 0 ] || { sql "SELECT * FROM free_slots_drift()"; return 1; }
	while read -r kept computed rows; do
		[ "$kept" = "$computed" ] || { echo "kept $kept, computed $computed ($rows rows)"; return 1; }
	done <<<"$(answers "$1" "${2:-}")"
}

# starts COURT [DATE]: the kept start times of a court on a date, comma-separated.
starts() {
	sql "SELECT array_to_string(start_times, ',') FROM free_slots
	      WHERE resource_id = '$1' AND booking_date = '${2:-$D}'"
}

@test "the dates around today are kept, complete, and the search's near dates read them" {
	# yesterday to 14 days ahead in UTC dates, filled when the database was made
	run sql "SELECT count(*), bool_and(complete), min(booking_date) - (now() AT TIME ZONE 'UTC')::date,
	                max(booking_date) - (now() AT TIME ZONE 'UTC')::date FROM free_slot_dates"
	[ "$output" = "16|t|-1|14" ]
	venue=$(fixture_venue "$OWNER")
	court=$(fixture_court "$venue")
	# 08:00-22:00 in 90-minute slots
	[ "$(starts "$court")" = "08:00:00,09:30:00,11:00:00,12:30:00,14:00:00,15:30:00,17:00:00,18:30:00,20:00:00" ]
	agree "$D"
	# the API's answer is the same whether the date is kept or worked out
	T=$(token "me-$RANDOM")
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$D&startTimeFrom=00:00:00&startTimeTo=23:59:00" -t "$T"
	expect 200
	kept=$(jqr -c .)
	[ "$(jqr length)" -gt 0 ]
	sql "UPDATE free_slot_dates SET complete = false WHERE booking_date = '$D'"
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$D&startTimeFrom=00:00:00&startTimeTo=23:59:00" -t "$T"
	expect 200
	[ "$(jqr -c .)" = "$kept" ]
	sql "UPDATE free_slot_dates SET complete = true WHERE booking_date = '$D'"
	# a date beyond the kept ones is worked out
	far=$(local_date 40)
	[ "$(sql "SELECT count(*) FROM free_slot_dates WHERE booking_date = '$far'")" = 0 ]
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$far&startTimeFrom=09:00:00&startTimeTo=10:00:00" -t "$T"
	expect 200
	[ "$(jqr '.[0].startTime')" = 09:30:00 ]
}

@test "every write that changes a court's day changes the kept slots in its own transaction" {
	venue=$(fixture_venue "$OWNER")
	court=$(fixture_court "$venue")
	other=$(fixture_court "$venue" 60)
	agree "$D"

	# a request takes time; paying keeps it; cancelling frees it
	fixture_hold "$court" "$D" 09:30 11:00 PENDING_PAYMENT
	[ "$(starts "$court")" = "08:00:00,09:30:00,11:00:00,12:30:00,14:00:00,15:30:00,17:00:00,18:30:00,20:00:00" ]
	[ "$(sql "SELECT held_until[2] > now() AND held_until[1] IS NULL FROM free_slots WHERE resource_id = '$court' AND booking_date = '$D'")" = t ]
	agree "$D"
	sql "UPDATE match_requests SET status = 'OPEN' WHERE resource_id = '$court'"
	[ "$(starts "$court")" = "08:00:00,11:00:00,12:30:00,14:00:00,15:30:00,17:00:00,18:30:00,20:00:00" ]
	agree "$D"
	sql "UPDATE match_requests SET status = 'MATCHED' WHERE resource_id = '$court'"
	agree "$D"
	# a request moved to another time and date frees the first and takes the second
	sql "UPDATE match_requests SET start_time = '12:30', end_time = '14:00', booking_date = '$(local_date 4)'
	      WHERE resource_id = '$court'"
	[ "$(starts "$court")" = "08:00:00,09:30:00,11:00:00,12:30:00,14:00:00,15:30:00,17:00:00,18:30:00,20:00:00" ]
	[[ "$(starts "$court" "$(local_date 4)")" != *12:30:00* ]]
	agree "$D"
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER' WHERE resource_id = '$court'"
	[[ "$(starts "$court" "$(local_date 4)")" == *12:30:00* ]]
	agree "$D"
	# a request on a 60-minute court overlapping two of its slots
	fixture_hold "$other" "$D" 08:30 09:30 OPEN
	[[ "$(starts "$other")" == 10:00:00,11:00:00,* ]]
	agree "$D"
	sql "DELETE FROM match_requests WHERE resource_id = '$other'"
	[[ "$(starts "$other")" == 08:00:00,* ]]
	agree "$D"

	# the schedule: hours changed, the day closed, opened again
	dow=$(TZ=Europe/Madrid date -d "$D" +%u)
	sql "UPDATE resource_schedules SET opening_time = '10:00', closing_time = '13:00'
	      WHERE resource_id = '$court' AND day_of_week = $dow"
	[ "$(starts "$court")" = "10:00:00,11:30:00" ]
	agree "$D"
	sql "UPDATE resource_schedules SET opening_time = NULL, closing_time = NULL
	      WHERE resource_id = '$court' AND day_of_week = $dow"
	[ -z "$(starts "$court")" ]
	agree "$D"
	sql "UPDATE resource_schedules SET opening_time = '08:00', closing_time = '22:00'
	      WHERE resource_id = '$court' AND day_of_week = $dow"
	[ -n "$(starts "$court")" ]

	# price rules: a holiday rule, the holiday, the rules gone
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$court', 'HOLIDAY', '00:00', '24:00', 45.00, 'EUR')"
	agree "$D"
	sql "INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$venue', '$D', 'Fiesta')"
	[ "$(sql "SELECT DISTINCT p FROM free_slots, unnest(prices) p WHERE resource_id = '$court' AND booking_date = '$D'")" = 45.00 ]
	agree "$D"
	sql "UPDATE venue_holidays SET date = '$(local_date 5)' WHERE venue_id = '$venue'"
	[ "$(sql "SELECT DISTINCT p FROM free_slots, unnest(prices) p WHERE resource_id = '$court' AND booking_date = '$D'")" != 45.00 ]
	agree "$D"
	sql "DELETE FROM venue_holidays WHERE venue_id = '$venue'"
	agree "$D"
	sql "DELETE FROM price_rules WHERE resource_id = '$court'"
	[ -z "$(starts "$court")" ]
	agree "$D"
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$court', 'WEEKDAY', '00:00', '24:00', 21.00, 'EUR'),
	            ('$court', 'WEEKEND', '00:00', '24:00', 31.00, 'EUR')"
	agree "$D"

	# the court: renamed, another slot length, suspended, active again
	sql "UPDATE resources SET name = 'Centre Court' WHERE id = '$court'"
	[ "$(sql "SELECT resource_name FROM free_slots WHERE resource_id = '$court' AND booking_date = '$D'")" = "Centre Court" ]
	agree "$D"
	sql "UPDATE resources SET slot_duration_minutes = 60 WHERE id = '$court'"
	[ "$(sql "SELECT slot_minutes, cardinality(start_times) FROM free_slots WHERE resource_id = '$court' AND booking_date = '$D'")" = "60|14" ]
	agree "$D"
	sql "UPDATE resources SET status = 'SUSPENDED', suspended_by = 'OWNER' WHERE id = '$court'"
	[ "$(sql "SELECT count(*) FROM free_slots WHERE resource_id = '$court'")" = 0 ]
	agree "$D"
	sql "UPDATE resources SET status = 'ACTIVE', suspended_by = NULL WHERE id = '$court'"
	[ "$(sql "SELECT count(*) FROM free_slots WHERE resource_id = '$court'")" = 16 ]
	agree "$D"

	# the venue: suspended and back; its time zone, notice and booking window (read live)
	sql "UPDATE venues SET status = 'SUSPENDED', suspended_by = 'ADMIN' WHERE id = '$venue'"
	[ "$(sql "SELECT count(*) FROM free_slots WHERE venue_id = '$venue'")" = 0 ]
	agree "$D"
	sql "UPDATE venues SET status = 'ACTIVE', suspended_by = NULL WHERE id = '$venue'"
	[ "$(sql "SELECT count(*) FROM free_slots WHERE venue_id = '$venue'")" = 32 ]
	agree "$D"
	sql "UPDATE venues SET timezone = 'America/New_York' WHERE id = '$venue'"
	agree "$D"
	agree "$(local_date 0)"
	sql "UPDATE venues SET min_notice_minutes = 2880, booking_window_days = 4 WHERE id = '$venue'"
	agree "$D"
	agree "$(local_date 1)"
	agree "$(local_date 5)"

	# a new court, written schedule and rules in one transaction; a rolled-back booking
	third=$(fixture_court "$venue")
	[ "$(sql "SELECT count(*) FROM free_slots WHERE resource_id = '$third'")" = 16 ]
	sql "BEGIN; UPDATE resources SET status = 'SUSPENDED', suspended_by = 'OWNER' WHERE id = '$third'; ROLLBACK"
	[ "$(sql "SELECT count(*) FROM free_slots WHERE resource_id = '$third'")" = 16 ]
	agree "$D"
}

@test "a request's write stamps each court day it leaves or comes to once, kept or not" {
	venue=$(fixture_venue "$OWNER")
	court=$(fixture_court "$venue")
	far=$(local_date 40)
	[ "$(sql "SELECT count(*) FROM free_slot_dates WHERE booking_date IN ('$D', '$far')")" = 1 ]
	# stamps SQL: SQL run in a transaction; prints how many day versions it wrote
	stamps() {
		sql "BEGIN; $1; SELECT n_tup_ins + n_tup_upd FROM pg_stat_xact_user_tables
		      WHERE relname = 'availability_day_versions'; COMMIT"
	}
	# day DATE: the version of the court's DATE
	day() { sql "SELECT version FROM availability_day_versions WHERE resource_id = '$court' AND booking_date = '$1'"; }
	fixture_hold "$court" "$D" 09:30 11:00 PENDING_PAYMENT
	[[ "$(starts "$court")" == 08:00:00,09:30:00,* ]]
	# paid: the slot is taken, its day stamped once
	v=$(day "$D")
	[ "$(stamps "UPDATE match_requests SET status = 'MATCHED' WHERE resource_id = '$court'")" = 1 ]
	[ "$(day "$D")" -gt "$v" ]
	[[ "$(starts "$court")" == 08:00:00,11:00:00,* ]]
	agree "$D"
	# moved to a date beyond the kept ones: the day left and the day come to, once each
	v=$(day "$D")
	[ "$(stamps "UPDATE match_requests SET booking_date = '$far' WHERE resource_id = '$court'")" = 2 ]
	[ "$(day "$D")" -gt "$v" ]
	[ -n "$(day "$far")" ]
	[[ "$(starts "$court")" == 08:00:00,09:30:00,* ]]
	agree "$D"
	# another time on that date, then back to a kept date
	v=$(day "$far")
	[ "$(stamps "UPDATE match_requests SET start_time = '12:30', end_time = '14:00' WHERE resource_id = '$court'")" = 1 ]
	[ "$(day "$far")" -gt "$v" ]
	v=$(day "$far") w=$(day "$D")
	[ "$(stamps "UPDATE match_requests SET booking_date = '$D' WHERE resource_id = '$court'")" = 2 ]
	[ "$(day "$far")" -gt "$v" ]
	[ "$(day "$D")" -gt "$w" ]
	[[ "$(starts "$court")" == 08:00:00,09:30:00,11:00:00,14:00:00,* ]]
	agree "$D"
	# gone, and written anew: the day stamped once for each
	v=$(day "$D")
	row=$(sql "SELECT row_to_json(m) FROM match_requests m WHERE resource_id = '$court'")
	[ "$(stamps "DELETE FROM match_requests WHERE resource_id = '$court'")" = 1 ]
	[ "$(day "$D")" -gt "$v" ]
	[[ "$(starts "$court")" == 08:00:00,09:30:00,11:00:00,12:30:00,* ]]
	agree "$D"
	v=$(day "$D")
	[ "$(stamps "INSERT INTO match_requests
	             SELECT * FROM json_populate_record(NULL::match_requests, \$j\$$row\$j\$)")" = 1 ]
	[ "$(day "$D")" -gt "$v" ]
	[[ "$(starts "$court")" == 08:00:00,09:30:00,11:00:00,14:00:00,* ]]
	agree "$D"
}

@test "the clock changes the kept answer without any write: a hold's expiry, the notice, the booking window" {
	venue=$(fixture_venue "$OWNER")
	court=$(fixture_court "$venue")
	fixture_hold "$court" "$D" 09:30 11:00 PENDING_PAYMENT "now() + interval '1 hour'"
	at() { sql "SELECT count(*) FROM search_free_slots($LAT, $LNG, 10, '$D', '09:30', '09:30', 90, 50, $1)"; }
	[ "$(at "now()")" = 0 ]
	[ "$(at "now() + interval '59 minutes'")" = 0 ]
	[ "$(at "now() + interval '1 hour'")" = 1 ]
	agree "$D" "now() + interval '59 minutes'"
	agree "$D" "now() + interval '61 minutes'"
	# the sweeper cancels the lapsed hold later: nothing is refreshed, nothing drifts
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE resource_id = '$court'"
	sql "SELECT match_expire_holds(ARRAY(SELECT id FROM match_requests WHERE resource_id = '$court'))" >/dev/null
	[ "$(sql "SELECT status FROM match_requests WHERE resource_id = '$court'")" = CANCELLED ]
	[ "$(sql "SELECT held_until[2] IS NOT NULL FROM free_slots WHERE resource_id = '$court' AND booking_date = '$D'")" = t ]
	[ "$(at "now()")" = 1 ]
	agree "$D"
	# notice: two days; booking window: four days (the slots' own instants in Madrid)
	sql "UPDATE venues SET min_notice_minutes = 2880, booking_window_days = 4 WHERE id = '$venue'"
	for d in 1 2 3 4 5; do
		agree "$(local_date $d)"
		agree "$(local_date $d)" "now() + interval '1 day'"
	done
	[ "$(sql "SELECT count(*) FROM search_free_slots($LAT, $LNG, 10, '$(local_date 1)', '00:00', '23:59', 90, 50)")" = 0 ]
	[ "$(sql "SELECT count(*) FROM search_free_slots($LAT, $LNG, 10, '$(local_date 6)', '00:00', '23:59', 90, 50)")" = 0 ]
	[ "$(sql "SELECT count(*) FROM search_free_slots($LAT, $LNG, 10, '$(local_date 3)', '00:00', '23:59', 90, 50)")" = 9 ]
}

@test "the sweeper adds the missing dates and fills them a batch of courts at a time" {
	venue=$(fixture_venue "$OWNER")
	for i in 1 2 3 4 5; do fixture_court "$venue" >/dev/null; done
	# three dates lost (a sweeper that did not run for days), one more half filled
	sql "DELETE FROM free_slot_dates WHERE booking_date >= (now() AT TIME ZONE 'UTC')::date + 12;
	     DELETE FROM free_slots WHERE booking_date >= (now() AT TIME ZONE 'UTC')::date + 12"
	[ "$(sql "SELECT count(*) FROM free_slot_dates")" = 13 ]
	# step by step, two courts a step: one step adds the dates, three fill each
	run sql "SELECT dates_added, courts_filled FROM free_slot_dates_keep(2)"
	[ "$output" = "3|0" ]
	[ "$(sql "SELECT count(*) FILTER (WHERE NOT complete) FROM free_slot_dates")" = 3 ]
	# a date being filled is refreshed by writes already, and searched the slow way
	first=$(sql "SELECT min(booking_date) FROM free_slot_dates WHERE NOT complete")
	run sql "SELECT dates_added, courts_filled FROM free_slot_dates_keep(2)"
	[ "$output" = "0|2" ]
	[ "$(sql "SELECT count(*) FROM free_slots WHERE booking_date = '$first'")" = 2 ]
	[ "$(sql "SELECT complete FROM free_slot_dates WHERE booking_date = '$first'")" = f ]
	[ "$(sql "SELECT md5(string_agg(s::text, ',')) FROM search_slots($LAT, $LNG, 10, '$first', '00:00', '23:59', 90, 50) s")" = \
	  "$(sql "SELECT md5(string_agg(s::text, ',')) FROM search_slots_computed($LAT, $LNG, 10, '$first', '00:00', '23:59', 90, 50) s")" ]
	steps=0
	while [ "$(sql "SELECT dates_added + courts_filled FROM free_slot_dates_keep(2)")" != 0 ]; do
		steps=$((steps + 1))
	done
	[ "$steps" -eq 8 ]
	[ "$(sql "SELECT count(*), bool_and(complete) FROM free_slot_dates")" = "16|t" ]
	agree "$first"
	# the sweeper does the same in one run and says how many dates it added
	sql "DELETE FROM free_slot_dates WHERE booking_date = (now() AT TIME ZONE 'UTC')::date + 14"
	run "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ "$output" == *" slot_dates_added=1 "* ]]
	[ "$(sql "SELECT count(*), bool_and(complete) FROM free_slot_dates")" = "16|t" ]
	[ "$(drift)" = 0 ]
	# a date from the day before yesterday is forgotten with its slots
	old=$(sql "SELECT (now() AT TIME ZONE 'UTC')::date - 2")
	sql "INSERT INTO free_slot_dates (booking_date, complete) VALUES ('$old', true)"
	run "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ "$output" == *" slot_dates_added=0 "* ]]
	[ "$(sql "SELECT count(*) FROM free_slot_dates WHERE booking_date < (now() AT TIME ZONE 'UTC')::date - 1")" = 0 ]
}

@test "the sweeper forgets the search versions of days long past, and only those" {
	# (sql/0048_search_answer_kept.sql: a version per cell and day; -infinity and infinity
	# are every date's and players')
	sql "INSERT INTO search_area_versions (day, cell_lat, cell_lng, version)
	     SELECT d, 404, -38, nextval('availability_version_seq')
	       FROM unnest(ARRAY['-infinity', 'infinity']::date[] ||
	                   ARRAY(SELECT (now() AT TIME ZONE 'UTC')::date + n
	                           FROM generate_series(-4, 1) n)) d
	     ON CONFLICT DO NOTHING"
	before=$(sql "SELECT count(*) FROM search_area_versions")
	run "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	# three days ago in UTC and before are past in every time zone; the day before yesterday stays
	[ "$(sql "SELECT string_agg(CASE WHEN day IN ('-infinity', 'infinity') THEN day::text
	                                 ELSE (day - (now() AT TIME ZONE 'UTC')::date)::text END,
	                            ' ' ORDER BY day)
	            FROM search_area_versions WHERE cell_lat = 404 AND cell_lng = -38")" = \
	  "-infinity -2 -1 0 1 infinity" ]
	[ "$(sql "SELECT count(*) FROM search_area_versions")" = $((before - 2)) ]
}

@test "writers at once, and a fill under way, leave the kept slots exact" {
	venue=$(fixture_venue "$OWNER")
	courts=()
	for i in 1 2 3; do courts+=("$(fixture_court "$venue" 60)"); done
	org=$(user_id organizer)
	# the last kept date is filled again, one court a step, while 3 x 14 bookings and their
	# cancellations run on it and on D in parallel
	last=$(sql "SELECT max(booking_date) FROM free_slot_dates")
	sql "UPDATE free_slot_dates SET complete = false, filled_after = NULL WHERE booking_date = '$last'"
	(for i in $(seq 1 40); do sql "SELECT courts_filled FROM free_slot_dates_keep(1)" >/dev/null; done) &
	filler=$!
	pids=()
	for c in "${courts[@]}"; do
		for h in 08 09 10 11 12 13 14 15 16 17 18 19 20 21; do
			for day in "$D" "$last"; do
				sql "INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
				         end_time, starts_at, ends_at, format, skill_level, status, team_size,
				         court_price, price_per_player, currency, search_latitude, search_longitude,
				         search_radius_km, expires_at)
				     SELECT '$c', '$org', d, '$h:00', '$h:59', (d + time '$h:00') AT TIME ZONE 'Europe/Madrid',
				         (d + time '$h:59') AT TIME ZONE 'Europe/Madrid', 'TWO_VS_TWO', 'INTERMEDIATE',
				         'PENDING_PAYMENT', 2, 20.00, 5.00, 'EUR', $LAT, $LNG, 10, now() + interval '15 minutes'
				       FROM (SELECT date '$day' AS d) x;
				     UPDATE match_requests SET status = CASE WHEN $h % 2 = 0 THEN 'OPEN' ELSE 'CANCELLED' END,
				            cancel_reason = CASE WHEN $h % 2 = 0 THEN NULL ELSE 'ORGANIZER' END
				      WHERE resource_id = '$c' AND booking_date = '$day' AND start_time = '$h:00'" >/dev/null &
				pids+=($!)
			done
		done
	done
	status=0
	for p in "${pids[@]}"; do wait "$p" || status=1; done
	wait "$filler" || status=1
	[ "$status" -eq 0 ]
	[ "$(sql "SELECT complete FROM free_slot_dates WHERE booking_date = '$last'")" = t ]
	[ "$(drift)" = 0 ]
	# the even hours are taken on every court, the odd ones free again
	[ "$(starts "${courts[0]}")" = "09:00:00,11:00:00,13:00:00,15:00:00,17:00:00,19:00:00,21:00:00" ]
	[ "$(starts "${courts[2]}" "$last")" = "09:00:00,11:00:00,13:00:00,15:00:00,17:00:00,19:00:00,21:00:00" ]
	agree "$D"
	agree "$last"
}
