#!/usr/bin/env bats
# resource_slots(resource, date, p_now) (sql/areas/30_slots.sql), the one place that generates
# slots, prices them and decides availability, tested in SQL with a fixed "now".
# Dates: 2030-06-03 is a Monday; NOW is two days before it.
# Any mode.

load test_helper

NOW="2030-06-01 00:00:00+00"
MON=2030-06-03

setup() {
	reset_db
}

# slots RESOURCE DATE [NOW]: one line per slot, "start|end|available|price|currency".
slots() {
	sql "SELECT start_time, end_time, available, price, currency
	       FROM resource_slots('$1', '$2', '${3:-$NOW}')"
}

# availability RESOURCE DATE [NOW]: the available flags of the slots in order, e.g. "fftt".
availability() {
	sql "SELECT string_agg(CASE WHEN available THEN 't' ELSE 'f' END, '' ORDER BY start_time)
	       FROM resource_slots('$1', '$2', '${3:-$NOW}')"
}

# hold RESOURCE DATE START END STATUS [EXPIRES_AT]: fixture_hold with a literal expiry that
# defaults to a day after NOW.
hold() {
	fixture_hold "$1" "$2" "$3" "$4" "$5" "'${6:-2030-06-02 00:00:00+00}'"
}

@test "slots run back to back from opening by the slot duration and the last ends by closing" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	# 08:00-22:00 by 90 minutes: nine slots, the last 20:00-21:30 (21:30-23:00 would not fit)
	run slots "$court" $MON
	[ "$status" -eq 0 ]
	[ "$output" = "08:00:00|09:30:00|t|20.00|EUR
09:30:00|11:00:00|t|20.00|EUR
11:00:00|12:30:00|t|20.00|EUR
12:30:00|14:00:00|t|20.00|EUR
14:00:00|15:30:00|t|20.00|EUR
15:30:00|17:00:00|t|20.00|EUR
17:00:00|18:30:00|t|20.00|EUR
18:30:00|20:00:00|t|20.00|EUR
20:00:00|21:30:00|t|20.00|EUR" ]
}

@test "a slot that would end exactly at closing is kept" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 60)
	sql "UPDATE resource_schedules SET opening_time = '09:00', closing_time = '12:00'
	      WHERE resource_id = '$court' AND day_of_week = 1"
	run slots "$court" $MON
	[ "$output" = "09:00:00|10:00:00|t|20.00|EUR
10:00:00|11:00:00|t|20.00|EUR
11:00:00|12:00:00|t|20.00|EUR" ]
}

@test "a closing time of 24:00 gives a last slot ending at 24:00:00" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 60)
	sql "UPDATE resource_schedules SET opening_time = '21:00', closing_time = '24:00'
	      WHERE resource_id = '$court' AND day_of_week = 1"
	run slots "$court" $MON
	[ "$output" = "21:00:00|22:00:00|t|20.00|EUR
22:00:00|23:00:00|t|20.00|EUR
23:00:00|24:00:00|t|20.00|EUR" ]
}

@test "a day closed with null times, or never set, has no slots" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	sql "UPDATE resource_schedules SET opening_time = NULL, closing_time = NULL
	      WHERE resource_id = '$court' AND day_of_week = 1;
	     DELETE FROM resource_schedules WHERE resource_id = '$court' AND day_of_week = 2"
	[ "$(sql "SELECT count(*) FROM resource_slots('$court', '2030-06-03', '$NOW')")" = 0 ]
	[ "$(sql "SELECT count(*) FROM resource_slots('$court', '2030-06-04', '$NOW')")" = 0 ]
	# Wednesday is untouched
	[ "$(sql "SELECT count(*) FROM resource_slots('$court', '2030-06-05', '$NOW')")" = 9 ]
}

@test "an unknown court has no slots" {
	[ "$(sql "SELECT count(*) FROM resource_slots(gen_random_uuid(), '$MON', '$NOW')")" = 0 ]
}

@test "the WEEKDAY rule prices Monday to Friday and the WEEKEND rule Saturday and Sunday" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	run sql "SELECT string_agg(DISTINCT s.price::text || s.currency, ',')
	           FROM generate_series(date '2030-06-03', date '2030-06-09', interval '1 day') d,
	                resource_slots('$court', d::date, '$NOW') s
	          GROUP BY d ORDER BY d"
	[ "$output" = "20.00EUR
20.00EUR
20.00EUR
20.00EUR
20.00EUR
30.00EUR
30.00EUR" ]
}

@test "a HOLIDAY rule beats the WEEKDAY rule on a venue holiday, and only there" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$court', 'HOLIDAY', '10:00', '14:00', 45.50, 'EUR');
	     INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$venue', '$MON', 'Fiesta')"
	# a rule covers the slots that start inside it: 11:00 and 12:30, not 09:30 nor 14:00
	run sql "SELECT string_agg(start_time::text || '=' || price, ',' ORDER BY start_time)
	           FROM resource_slots('$court', '$MON', '$NOW')"
	[ "$output" = "08:00:00=20.00,09:30:00=20.00,11:00:00=45.50,12:30:00=45.50,14:00:00=20.00,15:30:00=20.00,17:00:00=20.00,18:30:00=20.00,20:00:00=20.00" ]
	# the next Monday is no holiday: the HOLIDAY rule does not apply
	run sql "SELECT string_agg(DISTINCT price::text, ',')
	           FROM resource_slots('$court', '2030-06-10', '$NOW')"
	[ "$output" = "20.00" ]
	[ "$(availability "$court" $MON)" = ttttttttt ]
}

@test "on a holiday without a covering HOLIDAY rule the normal rule of the day applies" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	# a Saturday holiday and no HOLIDAY rule at all: the WEEKEND rule
	sql "INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$venue', '2030-06-08', 'Fiesta')"
	run sql "SELECT string_agg(DISTINCT price::text || currency, ',')
	           FROM resource_slots('$court', '2030-06-08', '$NOW')"
	[ "$output" = "30.00EUR" ]
	[ "$(availability "$court" 2030-06-08)" = ttttttttt ]
	# another venue's holiday changes nothing here
	other=$(fixture_venue owner2)
	sql "INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$court', 'HOLIDAY', '00:00', '24:00', 99.00, 'EUR');
	     INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$other', '$MON', 'Elsewhere')"
	run sql "SELECT string_agg(DISTINCT price::text, ',') FROM resource_slots('$court', '$MON', '$NOW')"
	[ "$output" = "20.00" ]
}

@test "a slot that no rule covers is unavailable and has no price" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	sql "DELETE FROM price_rules WHERE resource_id = '$court';
	     INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$court', 'WEEKDAY', '08:00', '12:00', 18.00, 'GBP')"
	run slots "$court" $MON
	[ "$output" = "08:00:00|09:30:00|t|18.00|GBP
09:30:00|11:00:00|t|18.00|GBP
11:00:00|12:30:00|t|18.00|GBP
12:30:00|14:00:00|f||
14:00:00|15:30:00|f||
15:30:00|17:00:00|f||
17:00:00|18:30:00|f||
18:30:00|20:00:00|f||
20:00:00|21:30:00|f||" ]
}

@test "slots that have started are unavailable, judged in the venue's time zone" {
	madrid=$(fixture_venue owner1 ACTIVE 40.4168 -3.7038 Europe/Madrid)
	newyork=$(fixture_venue owner2 ACTIVE 40.7128 -74.0060 America/New_York)
	court_mad=$(fixture_court "$madrid" 90)
	court_ny=$(fixture_court "$newyork" 90)
	at="2030-06-03 12:00:00+00"
	# 12:00 UTC is 14:00 in Madrid (CEST) and 08:00 in New York (EDT); a slot starting
	# exactly now has started
	[ "$(availability "$court_mad" $MON "$at")" = ffffftttt ]
	[ "$(availability "$court_ny" $MON "$at")" = ftttttttt ]
	# one second earlier the slot starting at 14:00 in Madrid is still ahead
	[ "$(availability "$court_mad" $MON "2030-06-03 11:59:59+00")" = ffffttttt ]
	# the day before is all past, the day after all ahead
	[ "$(availability "$court_mad" 2030-06-02 "$at")" = fffffffff ]
	[ "$(availability "$court_ny" 2030-06-04 "$at")" = ttttttttt ]
}

@test "a live match request makes every slot it overlaps unavailable" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	# OPEN 10:00-11:30 overlaps 09:30-11:00 and 11:00-12:30; an unexpired payment hold and
	# a MATCHED request hold their slots too
	hold "$court" $MON 10:00 11:30 OPEN
	hold "$court" $MON 14:00 15:30 PENDING_PAYMENT "2030-06-01 00:15:00+00"
	hold "$court" $MON 20:00 21:30 MATCHED
	[ "$(availability "$court" $MON)" = tfftftttf ]
	# the same times on another day or another court are free
	other=$(fixture_court "$venue" 90)
	[ "$(availability "$court" 2030-06-04)" = ttttttttt ]
	[ "$(availability "$other" $MON)" = ttttttttt ]
}

@test "a PENDING_PAYMENT hold whose expiry has passed does not hold the slot" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	hold "$court" $MON 08:00 09:30 PENDING_PAYMENT "2030-05-31 23:59:00+00"
	hold "$court" $MON 09:30 11:00 PENDING_PAYMENT "$NOW"
	hold "$court" $MON 11:00 12:30 PENDING_PAYMENT "2030-06-01 00:00:01+00"
	# expired a minute ago, expiring exactly now: free; expiring in a second: held
	[ "$(availability "$court" $MON)" = ttftttttt ]
	# a second later that hold has expired too
	[ "$(availability "$court" $MON "2030-06-01 00:00:01+00")" = ttttttttt ]
}

@test "a CANCELLED request does not hold the slot" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	hold "$court" $MON 08:00 09:30 CANCELLED
	hold "$court" $MON 08:00 09:30 CANCELLED
	[ "$(availability "$court" $MON)" = ttttttttt ]
}

@test "requests of the days before and after hold none of the day's slots, even at midnight" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 60)
	sql "UPDATE resource_schedules SET opening_time = '00:00', closing_time = '24:00'
	      WHERE resource_id = '$court'"
	free=tttttttttttttttttttttttt
	[ "$(availability "$court" $MON)" = $free ]
	# Sunday's request ending at 24:00 and Tuesday's starting at 00:00 touch Monday at its
	# two ends, and hold their own days' slots only
	hold "$court" 2030-06-02 23:00 24:00 MATCHED
	hold "$court" 2030-06-04 00:00 01:00 PENDING_PAYMENT
	[ "$(availability "$court" $MON)" = $free ]
	[ "$(availability "$court" 2030-06-02)" = ${free%t}f ]
	[ "$(availability "$court" 2030-06-04)" = f${free#t} ]
	# Monday's own requests at its two ends hold its first and last slots, the payment hold
	# until its expiry
	hold "$court" $MON 00:00 00:30 PENDING_PAYMENT "2030-06-01 00:10:00+00"
	hold "$court" $MON 23:30 24:00 CONFIRMED
	[ "$(availability "$court" $MON)" = "f${free:2}f" ]
	[ "$(sql "SELECT start_time, held_until FROM court_day_slots('$court', '$MON')
	           WHERE held_until IS NOT NULL")" = "00:00:00|2030-06-01 00:10:00+00" ]
	[ "$(availability "$court" $MON "2030-06-01 00:10:00+00")" = "${free:1}f" ]
}

@test "a court that is not ACTIVE has every slot unavailable" {
	venue=$(fixture_venue owner1)
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		court=$(fixture_court "$venue" 90 $st)
		[ "$(availability "$court" $MON)" = fffffffff ]
		# prices are still shown
		[ "$(sql "SELECT string_agg(DISTINCT price::text, ',') FROM resource_slots('$court', '$MON', '$NOW')")" = 20.00 ]
	done
}

@test "a court of a venue that is not ACTIVE has every slot unavailable" {
	for st in PENDING_APPROVAL SUSPENDED REJECTED; do
		venue=$(fixture_venue "owner-$st" $st)
		court=$(fixture_court "$venue" 90)
		[ "$(availability "$court" $MON)" = fffffffff ]
	done
}

@test "a court without price rules has every slot unavailable and unpriced" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 120)
	sql "DELETE FROM price_rules WHERE resource_id = '$court'"
	run slots "$court" $MON
	[ "$output" = "08:00:00|10:00:00|f||
10:00:00|12:00:00|f||
12:00:00|14:00:00|f||
14:00:00|16:00:00|f||
16:00:00|18:00:00|f||
18:00:00|20:00:00|f||
20:00:00|22:00:00|f||" ]
}

# ---- slot_answer: until when an answer holds (sql/areas/20_versions.sql) -----------------

# until RESOURCE DATE NOW: slot_answer's valid_until in UTC, or "" for none.
until_utc() {
	sql "SELECT to_char(valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')
	       FROM slot_answer('$1', '$2', '$3')"
}

@test "an answer holds until the next slot starts, as long as nothing else changes it" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	# 08:00 in Madrid on Monday is 06:00 UTC (summer time)
	[ "$(until_utc "$court" $MON "$NOW")" = "2030-06-03 06:00:00.000000" ]
	# at 09:00 in Madrid the next to start is the 09:30 slot
	[ "$(until_utc "$court" $MON "2030-06-03 07:00:00+00")" = "2030-06-03 07:30:00.000000" ]
	# once the last slot has started, time changes nothing more
	[ "$(until_utc "$court" $MON "2030-06-03 18:00:00+00")" = "" ]
	[ "$(sql "SELECT slots IS NOT NULL FROM slot_answer('$court', '$MON', '2030-06-03 18:00:00+00')")" = t ]
}

@test "an answer holds until the next slot enters the notice period or the booking window" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	sql "UPDATE venues SET min_notice_minutes = 120 WHERE id = '$venue'"
	[ "$(until_utc "$court" $MON "$NOW")" = "2030-06-03 04:00:00.000000" ]
	# a booking window of a day opens Monday's 08:00 slot on Sunday at 08:00 in Madrid
	sql "UPDATE venues SET min_notice_minutes = NULL, booking_window_days = 1 WHERE id = '$venue'"
	[ "$(until_utc "$court" $MON "$NOW")" = "2030-06-02 06:00:00.000000" ]
	[ "$(availability "$court" $MON)" = fffffffff ]
	[ "$(availability "$court" $MON "2030-06-02 06:00:00+00")" = tffffffff ]
}

@test "an answer holds until a payment hold on that court and date lapses" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	hold "$court" $MON 09:30 11:00 PENDING_PAYMENT "2030-06-01 12:00:00.25+00"
	[ "$(until_utc "$court" $MON "$NOW")" = "2030-06-01 12:00:00.250000" ]
	# a hold of another day, or of a paid match, changes nothing by lapsing
	other=$(fixture_court "$venue" 90)
	hold "$other" $MON 09:30 11:00 OPEN "2030-06-01 11:00:00+00"
	hold "$other" 2030-06-04 09:30 11:00 PENDING_PAYMENT "2030-06-01 11:00:00+00"
	[ "$(until_utc "$other" $MON "$NOW")" = "2030-06-03 06:00:00.000000" ]
}

@test "the validator changes with every write that can change the slots, and only those" {
	venue=$(fixture_venue owner1)
	court=$(fixture_court "$venue" 90)
	v() { sql "SELECT validator FROM slot_validator('$court', '$MON')"; }
	seen=" $(v) "
	fresh() {	# the validator is one never seen before
		local now
		now=$(v)
		[[ $seen != *" $now "* ]] || { echo "validator $now seen before" >&2; return 1; }
		seen+="$now "
	}
	hold "$court" $MON 09:30 11:00 PENDING_PAYMENT; fresh
	sql "UPDATE match_requests SET expires_at = expires_at + interval '1 minute'"; fresh
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER'"; fresh
	sql "DELETE FROM match_requests"; fresh
	sql "INSERT INTO venue_holidays (venue_id, date, name) VALUES ('$venue', '$MON', 'Fiesta')"; fresh
	sql "DELETE FROM venue_holidays"; fresh
	sql "UPDATE resource_schedules SET closing_time = '21:00' WHERE resource_id = '$court'"; fresh
	sql "UPDATE price_rules SET price = 21 WHERE resource_id = '$court'"; fresh
	sql "UPDATE venues SET min_notice_minutes = 30 WHERE id = '$venue'"; fresh
	sql "UPDATE resources SET slot_duration_minutes = 60 WHERE id = '$court'"; fresh
	# the versions stay valid if their rows are emptied: a value is never handed out twice
	sql "DELETE FROM answer_versions"
	sql "UPDATE resources SET slot_duration_minutes = 90 WHERE id = '$court'"; fresh
	# another court's or another date's requests, and a match's players, leave it alone
	before=$(v)
	other=$(fixture_court "$venue" 90)
	hold "$other" $MON 09:30 11:00 OPEN
	hold "$court" 2030-06-04 09:30 11:00 OPEN
	sql "UPDATE match_requests SET team_a_count = 2, team_b_count = 1"
	[ "$(v)" = "$before" ]
}
