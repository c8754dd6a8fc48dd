#!/usr/bin/env bats
# Calendar feeds (issue: players' features, part 3): a secret iCalendar URL per player and
# per venue, read without a token by calendar apps. Each feed is parsed by a real iCalendar
# parser (Python's icalendar, Debian's python3-icalendar) and checked against the database.

load test_helper
load match_helper

setup() {
	reset_db
	match_world
	sql "UPDATE venues SET name = 'Club Central; Norte, Madrid', postal_code = '28013'
	      WHERE id = '$VENUE'" >/dev/null
	TORG=$(token org)
	DAY=$(weekday_date 3)
}

# feed_url TOKEN: the player's feed URL, checked; prints it.
feed_url() {
	req GET /api/players/me/calendar -t "$1"
	expect 200
	jqr .url
}

# feed URL [-H ...]: GET the feed at URL (absolute) without a token.
feed() {
	local url=$1
	shift
	req GET "${url#"$BASE_URL"}" "$@"
}

# events: the VEVENTs of the last body as the parser reads them, one line each, in start
# order: uid|status|sequence|start (UTC)|end (UTC)|summary|location|geo. Fails unless every
# content line ends in CRLF and is at most 75 octets.
events() {
	/usr/bin/python3 - "$BATS_TEST_TMPDIR/resp.body" <<-'PY'
	import sys
	from datetime import timezone
	from icalendar import Calendar
	raw = open(sys.argv[1], 'rb').read()
	assert raw.endswith(b'\r\n'), 'no CRLF at the end'
	for line in raw.split(b'\r\n')[:-1]:
	    assert b'\n' not in line and b'\r' not in line, 'a bare line break'
	    assert len(line) <= 75, 'a line of %d octets' % len(line)
	    line.decode('utf-8')
	cal = Calendar.from_ical(raw)
	assert cal.name == 'VCALENDAR' and str(cal['VERSION']) == '2.0' and cal['PRODID']
	rows = []
	for ev in cal.walk('VEVENT'):
	    s = ev.decoded('DTSTART').astimezone(timezone.utc)
	    e = ev.decoded('DTEND').astimezone(timezone.utc)
	    assert ev.decoded('DTSTAMP').tzinfo is not None
	    geo = ev.get('GEO')
	    rows.append((s, '|'.join([str(ev['UID']), str(ev['STATUS']), str(ev['SEQUENCE']),
	                              s.strftime('%Y-%m-%dT%H:%M:%SZ'), e.strftime('%Y-%m-%dT%H:%M:%SZ'),
	                              str(ev['SUMMARY']), str(ev['LOCATION']),
	                              '%s;%s' % (geo.latitude, geo.longitude)])))
	for _, r in sorted(rows, key=lambda x: x[0]):
	    print(r)
	PY
}

# utc MATCH COLUMN: a match's instant (starts_at, ends_at) as the events print it.
utc() {
	sql "SELECT to_char($2 AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
	       FROM match_requests WHERE id = '$1'"
}

@test "a player's feed URL is made once, the feed needs no token, and rotating retires the old URL" {
	url=$(feed_url "$TORG")
	[[ "$url" =~ ^${BASE_URL}/api/calendar/[0-9a-f]{64}\.ics$ ]] || { echo "$url" >&2; false; }
	[ "$(feed_url "$TORG")" = "$url" ]
	[ "$(sql "SELECT count(*) FROM calendar_feeds WHERE player_id = '$ORG'")" = 1 ]
	feed "$url"
	expect 200 text/calendar
	[[ "$(header Content-Type)" == "text/calendar; charset=utf-8" ]]
	[ "$(header Cache-Control)" = "private, no-cache" ]
	[ "$(events)" = "" ]
	grep -q $'^X-WR-CALNAME:My matches\r$' "$BATS_TEST_TMPDIR/resp.body"
	# a token sent anyway changes nothing
	feed "$url" -H "Authorization: Bearer $(token someone-else)"
	expect 200 text/calendar
	req POST /api/players/me/calendar/rotate -t "$TORG"
	expect 200
	new=$(jqr .url)
	[[ "$new" =~ ^${BASE_URL}/api/calendar/[0-9a-f]{64}\.ics$ ]]
	[ "$new" != "$url" ]
	[ "$(feed_url "$TORG")" = "$new" ]
	[ "$(sql "SELECT secret FROM calendar_feeds WHERE player_id = '$ORG'")" = "$(basename "$new" .ics)" ]
	feed "$url"
	expect_problem 404 NOT_FOUND
	feed "$new"
	expect 200 text/calendar
	# the URL routes need a token; the feed is read-only
	req GET /api/players/me/calendar
	expect_problem 401 UNAUTHORIZED
	req POST /api/players/me/calendar/rotate
	expect_problem 401 UNAUTHORIZED
	req POST "${new#"$BASE_URL"}"
	expect_problem 405 METHOD_NOT_ALLOWED
}

@test "a wrong or unknown secret is a 404 problem, whatever its shape" {
	for path in /api/calendar/abc.ics "/api/calendar/$(printf 'a%.0s' {1..64}).ics" \
		"/api/calendar/$(printf 'A%.0s' {1..64}).ics" /api/calendar/%FF%FE.ics \
		"/api/calendar/$(sql "SELECT calendar_secret()").ics"; do
		req GET "$path"
		expect_problem 404 NOT_FOUND
	done
	# the secret without .ics is no route
	url=$(feed_url "$TORG")
	req GET "$(basename "${url#"$BASE_URL"}" .ics | sed 's|^|/api/calendar/|')"
	expect_problem 404 NOT_FOUND
}

@test "the feed lists the player's matches as a calendar app reads them, and nobody else's" {
	req POST /api/match/requests -t "$TORG" -d "$(jq -nc --arg r "$COURT" --arg d "$DAY" \
		'{resourceId: $r, bookingDate: $d, startTime: "18:30:00", slotDurationMinutes: 90,
		  format: "TWO_VS_TWO", skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70}')"
	expect 201
	A=$(jqr .id)
	# a match of someone else, which org joins, and one org has nothing to do with
	other=$(fixture_player other INTERMEDIATE 40.42 -3.70)
	# (a day and two days after A: DAY, a weekday, may itself be 5 days ahead)
	after_a() { sql "SELECT ceil(extract(epoch FROM starts_at + interval '$1' - now()) / 60)::int || ' minutes'
	                   FROM match_requests WHERE id = '$A'"; }
	B=$(sql_match "$other" OPEN "$(after_a '1 day')")
	sql_join "$B" "$ORG" TEAM_B >/dev/null
	C=$(sql_match "$other" OPEN "$(after_a '2 days')")
	sql "UPDATE match_requests SET status = 'CONFIRMED' WHERE id = '$B'" >/dev/null
	feed "$(feed_url "$TORG")"
	expect 200 text/calendar
	run events
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	where="Club Central; Norte, Madrid, Court 1, Calle Mayor 1, 28013 Madrid, Spain"
	[ "${lines[0]}" = "match-$A@courts|TENTATIVE|2|$(utc "$A" starts_at)|$(utc "$A" ends_at)|Padel 2 vs 2 at Club Central; Norte, Madrid|$where|40.4168;-3.7038" ]
	[ "${lines[1]}" = "match-$B@courts|CONFIRMED|1|$(utc "$B" starts_at)|$(utc "$B" ends_at)|Padel 2 vs 2 at Club Central; Norte, Madrid|$where|40.4168;-3.7038" ]
	[ "${#lines[@]}" = 2 ]
	! grep -q "$C" "$BATS_TEST_TMPDIR/resp.body" || false
	# the escaping as written (RFC 5545 TEXT): the parser's reading above undid it
	grep -q 'SUMMARY:Padel 2 vs 2 at Club Central\\; Norte\\, Madrid' "$BATS_TEST_TMPDIR/resp.body"
	# 18:30 at the venue is what the app shows in the venue's zone
	[ "$(TZ=Europe/Madrid date -d "$(utc "$A" starts_at)" +%F\ %T)" = "$DAY 18:30:00" ]
}

@test "leaving, a cancellation or a lapsed hold makes the event CANCELLED with a higher SEQUENCE; the ETag follows" {
	full_match "3 days"
	T1=$(token p1)
	url=$(feed_url "$T1")
	feed "$url"
	expect 200 text/calendar
	tag=$(header ETag)
	[[ "$tag" =~ ^\"[0-9a-f]{32}-f\"$ ]]
	IFS='|' read -r uid st seq _ <<<"$(events)"
	[ "$uid|$st" = "match-$M@courts|TENTATIVE" ]
	# unchanged: 304 without a body, for the tag alone or in a list, weak or strong
	for inm in "$tag" "\"x\", $tag" "W/$tag"; do
		feed "$url" -H "If-None-Match: $inm"
		expect 304 -
		[ "$(header ETag)" = "$tag" ]
	done
	# p1 leaves (more than 24 hours ahead: refunded)
	req DELETE "/api/match/requests/$M/leave" -t "$T1"
	expect 204 -
	feed "$url" -H "If-None-Match: $tag"
	expect 200 text/calendar
	[ "$(header ETag)" != "$tag" ]
	IFS='|' read -r uid st seq2 _ <<<"$(events)"
	[ "$uid|$st" = "match-$M@courts|CANCELLED" ]
	[ "$seq2" -gt "$seq" ]
	grep -q $'^TRANSP:TRANSPARENT\r$' "$BATS_TEST_TMPDIR/resp.body"
	# the organizer still plays: TENTATIVE for them until they call it off
	url_org=$(feed_url "$TORG")
	feed "$url_org"
	IFS='|' read -r uid st seq3 _ <<<"$(events)"
	[ "$st" = TENTATIVE ]
	req DELETE "/api/match/requests/$M" -t "$TORG"
	expect 204 -
	feed "$url_org"
	IFS='|' read -r uid st seq4 _ <<<"$(events)"
	[ "$uid|$st" = "match-$M@courts|CANCELLED" ]
	[ "$seq4" -gt "$seq3" ]
	# a payment hold that lapsed is cancelled at once, before any sweeper recorded it
	H=$(sql_match "$ORG" PENDING_PAYMENT "6 days")
	feed "$url_org"
	[ "$(events | grep "match-$H@" | cut -d'|' -f2)" = TENTATIVE ]
	before=$(events | grep "match-$H@" | cut -d'|' -f3)
	sql "UPDATE match_requests SET expires_at = now() - interval '1 minute' WHERE id = '$H'" >/dev/null
	feed "$url_org"
	[ "$(events | grep "match-$H@" | cut -d'|' -f2)" = CANCELLED ]
	lapsed=$(events | grep "match-$H@" | cut -d'|' -f3)
	[ "$lapsed" -gt "$before" ]
	# and once the sweeper records it, the event stays as it was: same SEQUENCE
	"$COURTS_BUILD/cron/sweep" >/dev/null
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$H'")" = CANCELLED ]
	feed "$url_org"
	[ "$(events | grep "match-$H@" | cut -d'|' -f2,3)" = "CANCELLED|$lapsed" ]
}

@test "a week of daylight-saving change at the venue, hour by hour, is at the right instants" {
	# Europe/Madrid moves from +01:00 to +02:00 at 02:00 on 28 March 2027; 02:00-02:59
	# does not exist that day. A one-hour match at every other hour of 25-31 March.
	P=$(fixture_player dst INTERMEDIATE 40.42 -3.70)
	sql_matches "$P" OPEN "
	         SELECT d::date AS d, make_time(h, 0, 0) AS st,
	                CASE WHEN h = 23 THEN time '24:00' ELSE make_time(h + 1, 0, 0) END AS et
	           FROM generate_series(date '2027-03-25', date '2027-03-31', interval '1 day') d,
	                generate_series(0, 23) h
	          WHERE NOT (d = date '2027-03-28' AND h = 2)" >/dev/null
	feed "$(feed_url "$(token dst)")"
	expect 200 text/calendar
	# the parser's instants, read back in the venue's zone by Python's own zone data: each
	# event starts and ends on the hour it was booked for, an hour long in local time
	/usr/bin/python3 - "$BATS_TEST_TMPDIR/resp.body" <<-'PY'
	import sys
	from datetime import date, datetime, time, timedelta, timezone
	from zoneinfo import ZoneInfo
	from icalendar import Calendar
	madrid = ZoneInfo('Europe/Madrid')
	got = {}
	for ev in Calendar.from_ical(open(sys.argv[1], 'rb').read()).walk('VEVENT'):
	    s = ev.decoded('DTSTART').astimezone(madrid)
	    e = ev.decoded('DTEND').astimezone(madrid)
	    assert str(ev['SUMMARY']).startswith('Padel 2 vs 2 at '), ev['SUMMARY']
	    got[(s.date(), s.hour)] = (s, e)
	want = [(date(2027, 3, 25) + timedelta(days=d), h) for d in range(7) for h in range(24)
	        if not (d == 3 and h == 2)]
	assert sorted(got) == sorted(want), sorted(set(want) ^ set(got))
	for (d, h), (s, e) in got.items():
	    assert (s.minute, s.second) == (0, 0), (d, h, s)
	    if (d, h) == (date(2027, 3, 28), 1):
	        continue
	    end = datetime.combine(d, time(h)) + timedelta(hours=1)
	    assert (e.replace(tzinfo=None) == end), (d, h, s, e)
	# the hour of the change itself, booked 01:00-02:00: 02:00 is 03:00 +02:00 that night,
	# one real hour after 01:00 +01:00
	s, e = got[(date(2027, 3, 28), 1)]
	assert e.astimezone(timezone.utc) - s.astimezone(timezone.utc) == timedelta(hours=1) \
	    and s.utcoffset() == timedelta(hours=1) \
	    and e.utcoffset() == timedelta(hours=2), (s, e)
	print(len(got))
	PY
}

@test "an owner's venue feed shows every court's booked time and no player" {
	TOWN=$(token owner1 OWNER)
	court2=$(fixture_court "$VENUE")
	sql "UPDATE resources SET name = 'Court 2', type = 'TENNIS_COURT' WHERE id = '$court2'" >/dev/null
	sql "UPDATE players SET display_name = 'Ana Secret' WHERE user_id = '$ORG'" >/dev/null
	A=$(sql_match "$ORG" OPEN "3 days")
	COURT=$court2
	B=$(sql_match "$ORG" MATCHED "4 days")
	X=$(sql_match "$ORG" OPEN "5 days")
	sql "UPDATE match_requests SET status = 'CANCELLED', cancel_reason = 'ORGANIZER'
	      WHERE id = '$X'" >/dev/null
	req GET "/api/owner/venues/$VENUE/calendar" -t "$TOWN"
	expect 200
	url=$(jqr .url)
	[[ "$url" =~ ^${BASE_URL}/api/calendar/[0-9a-f]{64}\.ics$ ]]
	[ "$(sql "SELECT count(*) FROM calendar_feeds WHERE venue_id = '$VENUE'")" = 1 ]
	feed "$url"
	expect 200 text/calendar
	run events
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[ "${lines[0]}" = "booking-$A@courts|CONFIRMED|0|$(utc "$A" starts_at)|$(utc "$A" ends_at)|Court 1 booked (Padel 2 vs 2)|Court 1, Club Central; Norte, Madrid|40.4168;-3.7038" ]
	[ "${lines[1]}" = "booking-$B@courts|CONFIRMED|0|$(utc "$B" starts_at)|$(utc "$B" ends_at)|Court 2 booked (Tennis 2 vs 2)|Court 2, Club Central; Norte, Madrid|40.4168;-3.7038" ]
	[ "${lines[2]}" = "booking-$X@courts|CANCELLED|0|$(utc "$X" starts_at)|$(utc "$X" ends_at)|Court 2 booked (Tennis 2 vs 2)|Court 2, Club Central; Norte, Madrid|40.4168;-3.7038" ]
	[ "${#lines[@]}" = 3 ]
	# nobody is named: neither the display name nor an id of a player
	! grep -q -e 'Ana Secret' -e "$ORG" "$BATS_TEST_TMPDIR/resp.body" || false
	grep -qF $'X-WR-CALNAME:Club Central\\; Norte\\, Madrid: booked courts\r' "$BATS_TEST_TMPDIR/resp.body"
	# another owner's venue is not found; a player is not an owner
	req GET "/api/owner/venues/$VENUE/calendar" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
	req POST "/api/owner/venues/$VENUE/calendar/rotate" -t "$(token owner2 OWNER)"
	expect_problem 404 NOT_FOUND
	req GET "/api/owner/venues/$VENUE/calendar" -t "$TORG"
	expect_problem 403 FORBIDDEN
	[ "$(sql "SELECT count(*) FROM calendar_feeds")" = 1 ]
	# rotating: the old URL is gone, the new one answers
	req POST "/api/owner/venues/$VENUE/calendar/rotate" -t "$TOWN"
	expect 200
	new=$(jqr .url)
	[ "$new" != "$url" ]
	feed "$url"
	expect_problem 404 NOT_FOUND
	feed "$new"
	expect 200 text/calendar
}

@test "PUBLIC_URL decides the origin of the feed URLs" {
	base=$(extra_apache calweb PUBLIC_URL=https://courts.example.com)
	req GET /api/players/me/calendar -t "$TORG" -b "$base"
	expect 200
	[[ "$(jqr .url)" =~ ^https://courts\.example\.com/api/calendar/[0-9a-f]{64}\.ics$ ]]
	"$COURTS_ROOT/scripts/stack.sh" stop-apache "$COURTS_STATE/extra-calweb"
}
