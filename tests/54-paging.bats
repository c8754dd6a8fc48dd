#!/usr/bin/env bats
# Paged lists (common/page.h): every list that grows without bound takes limit (default 100,
# at most 500) and a cursor, keeps its bare JSON array, and links to the next page with
# Link: <...>; rel="next" while more remain. The cursor is a key, so following the links
# yields every item once, in the list's order, even while items are added between pages.

load test_helper
load match_helper

LISTS="/api/owner/venues /api/owner/resources /api/admin/venues /api/admin/resources
/api/venues /api/match/requests/my /api/match/invitations /api/notifications"

setup() {
	reset_db
	# a subject of its own per test: a FastCGI program remembers each subject's local id
	OWNER_SUB="paging-owner-$BATS_TEST_NUMBER"
	PLAYER_SUB="paging-player-$BATS_TEST_NUMBER"
	OWNER=$(token "$OWNER_SUB" OWNER)
	ADMIN=$(token paging-admin ADMIN)
	PLAYER=$(token "$PLAYER_SUB")
}

# who PATH: the token that may read the list at PATH.
who() {
	case $1 in
	/api/owner/*) echo "$OWNER" ;;
	/api/admin/*) echo "$ADMIN" ;;
	*) echo "$PLAYER" ;;
	esac
}

# next_link: the target of the last response's Link rel="next", or nothing.
next_link() {
	header Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p'
}

# walk PATH LIMIT [HOOK]: follows the pages of PATH (its query, if any, without limit) from
# the first, each checked: 200, a JSON array of at most LIMIT items, exactly LIMIT when a next
# page is linked, the link keeping the list's own query. Writes the id of every item, in
# order, to $BATS_TEST_TMPDIR/walk and sets PAGES; runs HOOK between two pages.
walk() {
	local path=$1 limit=$2 hook=${3:-} tok next sep='?'
	tok=$(who "${path%%\?*}")
	[[ $path == *\?* ]] && sep='&'
	path="$path${sep}limit=$limit"
	: >"$BATS_TEST_TMPDIR/walk"
	PAGES=0
	while [ -n "$path" ]; do
		req GET "$path" -t "$tok"
		expect 200 || return 1
		[ "$(jqr 'type')" = array ] || { echo "not an array: $HTTP_BODY" >&2; return 1; }
		[ "$(jqr 'length')" -le "$limit" ] || { echo "page over $limit" >&2; return 1; }
		PAGES=$((PAGES + 1))
		jqr '.[].id' >>"$BATS_TEST_TMPDIR/walk"
		next=$(next_link)
		if [ -n "$next" ]; then
			[ "$(jqr 'length')" = "$limit" ] || { echo "short page with a link" >&2; return 1; }
			[[ $next == "${path%%\?*}?"* ]] || { echo "link to another path: $next" >&2; return 1; }
			[[ $next == *"limit=$limit&cursor="* ]] || { echo "link: $next" >&2; return 1; }
			[ -z "$hook" ] || "$hook"
		fi
		path=$next
	done
	[ "$PAGES" -gt 0 ]
}

# whole PATH: the ids of the whole list at PATH (one page of 500), in order.
whole() {
	local sep='?'
	[[ $1 == *\?* ]] && sep='&'
	req GET "$1${sep}limit=500" -t "$(who "${1%%\?*}")"
	expect 200 && [ -z "$(header Link)" ] && jqr '.[].id'
}

# paged_as_whole PATH LIMIT: the list walked LIMIT at a time is the whole list, in its order,
# with no item twice.
paged_as_whole() {
	local want
	want=$(whole "$1") || return 1
	[ -n "$want" ] || { echo "empty list at $1" >&2; return 1; }
	walk "$1" "$2" || return 1
	[ "$(cat "$BATS_TEST_TMPDIR/walk")" = "$want" ] ||
		{ diff <(echo "$want") "$BATS_TEST_TMPDIR/walk" >&2; return 1; }
	[ "$(sort "$BATS_TEST_TMPDIR/walk" | uniq -d)" = "" ]
}

# venues N STATUS [NAME]: N venues of the owner made straight in SQL, created in threes at
# the same instant (so the id breaks ties), long ago.
venues() {
	local owner
	owner=$(user_id "$OWNER_SUB")
	sql "INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude,
	         timezone, status, created_at)
	     SELECT '$owner', '${3:-Club}' || (g % 7), 'Calle Mayor 1', 'Madrid', 'Spain',
	            40.4168 + (g % 4) * 0.01, -3.7038, 'Europe/Madrid', '$2',
	            timestamptz '2026-01-01 10:00+00' + (g / 3) * interval '1 second'
	       FROM generate_series(1, $1) g" >/dev/null
}

# added [LAT]: five more ACTIVE venues of the owner, created now, named after every other
# (a hook of walk: they come after the pages already read in each order of the tests).
added() {
	sql "INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude,
	         timezone, status)
	     SELECT '$(user_id "$OWNER_SUB")', 'Late ' || g, 'Calle Mayor 1', 'Madrid', 'Spain',
	            ${1:-40.4168}, -3.7038, 'Europe/Madrid', 'ACTIVE'
	       FROM generate_series(1, 5) g" >/dev/null
}

# added_far: the same, farther from the centre than every other venue.
added_far() {
	added 40.4668
}

@test "250 venues in pages of 100 with venues added between pages: each once, oldest first" {
	venues 250 ACTIVE
	walk /api/owner/venues 100 added
	# 100 + 100 + the 50 left and the 10 added meanwhile
	[ "$PAGES" = 3 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 260 ]
	[ "$(cat "$BATS_TEST_TMPDIR/walk")" = "$(sql "SELECT id FROM venues ORDER BY created_at, id")" ]
}

@test "the same 250 as a player sees them, by name, and nearest first around a centre" {
	venues 250 ACTIVE
	walk /api/venues 100 added
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 260 ]
	[ "$(sort "$BATS_TEST_TMPDIR/walk" | uniq -d)" = "" ]
	[ "$(sort "$BATS_TEST_TMPDIR/walk")" = "$(sql "SELECT id FROM venues ORDER BY id::text")" ]
	# four distances only: most items tie on the key's first value
	walk '/api/venues?lat=40.4168&lng=-3.7038&radiusKm=50' 100 added_far
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 270 ]
	[ "$(sort "$BATS_TEST_TMPDIR/walk" | uniq -d)" = "" ]
	[ "$(sort "$BATS_TEST_TMPDIR/walk")" = "$(sql "SELECT id FROM venues ORDER BY id::text")" ]
}

@test "without limit a page holds 100 items and links to the rest" {
	venues 130 PENDING_APPROVAL
	req GET /api/owner/venues -t "$OWNER"
	expect 200
	[ "$(jqr 'length')" = 100 ]
	next=$(next_link)
	[[ $next =~ ^/api/owner/venues\?limit=100\&cursor=[A-Za-z0-9_-]+$ ]]
	req GET "$next" -t "$OWNER"
	expect 200
	[ "$(jqr 'length')" = 30 ]
	[ -z "$(header Link)" ]
	# the second page begins right after the first
	[ "$(jqr -r '.[0].id')" = "$(sql "SELECT id FROM venues ORDER BY created_at, id
	                                    OFFSET 100 LIMIT 1")" ]
}

@test "a list that fits one page has no Link header; an empty list is [] without one" {
	req GET /api/owner/venues -t "$OWNER"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	[ -z "$(header Link)" ]
	venues 3 ACTIVE
	req GET '/api/owner/venues?limit=3' -t "$OWNER"
	expect 200
	[ "$(jqr 'length')" = 3 ]
	[ -z "$(header Link)" ]
}

@test "the owner's courts across venues, the admin lists with a status filter, page by page" {
	venues 4 ACTIVE
	venues 3 PENDING_APPROVAL
	for v in $(sql "SELECT id FROM venues"); do
		fixture_court "$v" >/dev/null
		fixture_court "$v" 60 PENDING_APPROVAL >/dev/null
	done
	sql "UPDATE resources SET created_at = timestamptz '2026-01-01 10:00+00'" >/dev/null
	paged_as_whole /api/owner/resources 3
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 14 ]
	paged_as_whole /api/admin/venues 2
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 7 ]
	paged_as_whole '/api/admin/venues?status=ACTIVE' 2
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 4 ]
	paged_as_whole /api/admin/resources 4
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 14 ]
	paged_as_whole '/api/admin/resources?status=PENDING_APPROVAL' 2
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 7 ]
	# the filter travels in the link
	req GET '/api/admin/venues?status=ACTIVE&limit=1' -t "$ADMIN"
	[[ $(next_link) == /api/admin/venues\?status=ACTIVE\&limit=1\&cursor=* ]]
}

@test "my requests page by page: upcoming soonest first, then past ones latest first" {
	COURT=$(fixture_court "$(fixture_venue "$OWNER_SUB")")
	me=$(fixture_player "$PLAYER_SUB" INTERMEDIATE 40.42 -3.70)
	ORG=$(fixture_player paging-org INTERMEDIATE 40.42 -3.70)
	for offset in '-3 days' '2 days' '-1 day' '5 days' '1 day' '-7 days' '3 days'; do
		sql_join "$(sql_match "$ORG" MATCHED "$offset")" "$me" TEAM_B >/dev/null
	done
	# and two of the player's own, one of them over
	for offset in '4 days 3 hours' '-2 days 3 hours'; do
		sql_match "$me" OPEN "$offset" >/dev/null
	done
	paged_as_whole /api/match/requests/my 2
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 9 ]
	[ "$(cat "$BATS_TEST_TMPDIR/walk")" = "$(sql "SELECT id FROM match_requests
	    ORDER BY ends_at <= now(), CASE WHEN ends_at > now() THEN starts_at END,
	             starts_at DESC, id")" ]
}

@test "invitations and notifications page by page, newest first" {
	COURT=$(fixture_court "$(fixture_venue "$OWNER_SUB")")
	me=$(fixture_player "$PLAYER_SUB" INTERMEDIATE 40.42 -3.70)
	ORG=$(fixture_player paging-org INTERMEDIATE 40.42 -3.70)
	for offset in '1 day' '2 days' '3 days' '4 days' '5 days'; do
		m=$(sql_match "$ORG" OPEN "$offset")
		sql "INSERT INTO invitations (match_request_id, player_id, sent_at)
		     VALUES ('$m', '$me', timestamptz '2026-01-01 10:00+00')" >/dev/null
	done
	paged_as_whole /api/match/invitations 2
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk")" = 5 ]
	sql "INSERT INTO notifications (recipient_id, type, payload, created_at)
	     SELECT '$me', 'PLAYER_JOINED', '{}', now() - (g / 2) * interval '1 minute'
	       FROM generate_series(1, 11) g" >/dev/null
	paged_as_whole /api/notifications 3
	[ "$PAGES" = 4 ]
	[ "$(cat "$BATS_TEST_TMPDIR/walk")" = "$(sql "SELECT id FROM notifications
	                                            ORDER BY created_at DESC, id DESC")" ]
}

@test "limit outside 1..500 is 400 on limit for every list" {
	for path in $LISTS; do
		for l in 0 501 -1 abc 1.5; do
			req GET "$path?limit=$l" -t "$(who "$path")"
			expect_problem 400 VALIDATION_FAILED limit
		done
		req GET "$path?limit=500" -t "$(who "$path")"
		expect 200
	done
}

@test "a cursor that is not one of the list's is 400 on cursor" {
	venues 3 ACTIVE
	req GET '/api/owner/venues?limit=1' -t "$OWNER"
	good=$(next_link)
	good=${good##*cursor=}
	# another list's key, a key of the right shape with a date that does not exist, a
	# timestamp that is not one, and bytes that are not base64url or not JSON
	b64() { printf '%s' "$1" | base64 -w0 | tr '+/' '-_' | tr -d '='; }
	for c in "$good" \
	         "$(b64 '["2026-13-01T10:00:00+00:00","00000000-0000-4000-8000-000000000000"]')" \
	         "$(b64 '["yesterday","00000000-0000-4000-8000-000000000000"]')" \
	         "$(b64 '["2026-01-01T10:00:00+00:00","not-a-uuid"]')" \
	         "$(b64 '["2026-01-01T10:00:00+00:00"]')" \
	         "$(b64 '{"after":1}')" '!!!' "$(b64 'not json')"; do
		path=/api/match/requests/my
		[ "$c" = "$good" ] || path=/api/owner/venues
		req GET "$path?cursor=$c" -t "$(who "$path")"
		expect_problem 400 VALIDATION_FAILED cursor
	done
	# and the good one where it belongs
	req GET "/api/owner/venues?limit=1&cursor=$good" -t "$OWNER"
	expect 200
	[ "$(jqr 'length')" = 1 ]
}
