# Fixtures shared by the match request bats files: matches and players made straight in SQL,
# independent of the endpoints under test. Load after test_helper; sql_match and full_match
# read $COURT and $ORG.

# match_world: the scene of most match tests, made in SQL: owner1's ACTIVE venue with one
# 90-minute court, and the player org (INTERMEDIATE, living nearby) who organizes; sets
# VENUE, COURT and ORG.
match_world() {
	VENUE=$(fixture_venue owner1)
	COURT=$(fixture_court "$VENUE" 90)
	ORG=$(fixture_player org INTERMEDIATE 40.42 -3.70)
}

# sql_matches ORGANIZER_ID STATUS SLOTS_SQL: a TWO_VS_TWO INTERMEDIATE match on $COURT for
# each row (d, st, et) of SLOTS_SQL, a local date, start and end time in Europe/Madrid, players
# searched within 5 km of (40.42, -3.70), the organizer on TEAM_A having paid 5.00 of the
# 20.00 court; prints their ids.
sql_matches() {
	sql "WITH k AS ($3),
	     m AS (
	         INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
	             end_time, starts_at, ends_at, format, skill_level, status, team_size,
	             team_a_count, court_price, price_per_player, currency, search_latitude,
	             search_longitude, search_radius_km, expires_at)
	         SELECT '$COURT', '$1', d, st, et, (d + st) AT TIME ZONE 'Europe/Madrid',
	                (d + et) AT TIME ZONE 'Europe/Madrid', 'TWO_VS_TWO', 'INTERMEDIATE', '$2',
	                2, 1, 20.00, 5.00, 'EUR', 40.42, -3.70, 5, now() + interval '15 minutes'
	           FROM k
	         RETURNING id, organizer_id),
	     o AS (INSERT INTO match_players (match_request_id, player_id, team, role)
	           SELECT id, organizer_id, 'TEAM_A', 'ORGANIZER' FROM m
	           RETURNING id, match_request_id, player_id)
	     INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	         entry_id)
	     SELECT match_request_id, player_id, 'PAYMENT', 5.00, 'EUR', 'PAID', id FROM o
	     RETURNING match_request_id"
}

# sql_match ORGANIZER_ID STATUS OFFSET: one such match starting at now() + OFFSET (whole
# minutes; local date and times consistent in Europe/Madrid); prints its id.
sql_match() {
	sql_matches "$1" "$2" "
	         SELECT ls::date AS d, ls::time AS st,
	                CASE WHEN (ls + interval '90 minutes')::date = ls::date
	                     THEN (ls + interval '90 minutes')::time ELSE time '24:00' END AS et
	           FROM (SELECT date_trunc('minute', now() + interval '$3')
	                        AT TIME ZONE 'Europe/Madrid' AS ls) x"
}

# sql_match_beside MATCH ORGANIZER_ID STATUS: as sql_match, on $COURT at the very date and
# times of MATCH (an overlap whatever the hour: a match late in the evening is cut at
# midnight, so one that starts minutes later may fall on the next day).
sql_match_beside() {
	sql_matches "$2" "$3" "SELECT booking_date AS d, start_time AS st, end_time AS et
	                         FROM match_requests WHERE id = '$1'"
}

# sql_join MATCH PLAYER_ID TEAM: the player joined the match and paid 5.00 for this join.
sql_join() {
	sql "WITH e AS (INSERT INTO match_players (match_request_id, player_id, team, role)
	                VALUES ('$1', '$2', '$3', 'PLAYER') RETURNING id)
	     INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	         entry_id)
	     SELECT '$1', '$2', 'PAYMENT', 5.00, 'EUR', 'PAID', id FROM e"
}

# sql_refund MATCH PLAYER_ID: the payment of the player's latest join was refunded.
sql_refund() {
	sql "INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	         refund_of)
	     SELECT p.match_request_id, p.player_id, 'REFUND', p.amount, p.currency, 'REFUNDED', p.id
	       FROM payments p JOIN match_players mp ON mp.id = p.entry_id
	      WHERE p.match_request_id = '$1' AND p.player_id = '$2' AND p.kind = 'PAYMENT'
	      ORDER BY mp.joined_at DESC LIMIT 1"
}

# full_match OFFSET: a MATCHED match of the organizer with p1 (TEAM_A), p2 and p3 (TEAM_B),
# all INTERMEDIATE players living nearby; sets M, P1, P2, P3.
full_match() {
	M=$(sql_match "$ORG" MATCHED "$1")
	P1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	P2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	P3=$(fixture_player p3 INTERMEDIATE 40.42 -3.70)
	sql_join "$M" "$P1" TEAM_A
	sql_join "$M" "$P2" TEAM_B
	sql_join "$M" "$P3" TEAM_B
}

# weekday_date N: the first Monday..Friday at least N days ahead in Europe/Madrid.
weekday_date() {
	weekday_dates "$1" 1
}

# weekday_dates N COUNT: the first COUNT Mondays..Fridays at least N days ahead in
# Europe/Madrid, one per line, all different (weekday_date of N, N + 1 and N + 2 may be the
# same Monday).
weekday_dates() {
	local n=$1 left=$2 d
	while [ "$left" -gt 0 ]; do
		d=$(local_date "$n")
		if [ "$(date -d "$d" +%u)" -le 5 ]; then echo "$d"; left=$((left - 1)); fi
		n=$((n + 1))
	done
}

# invitation_of PLAYER_ID: "kind status team" of the player's invitation to $M ("" without one).
invitation_of() {
	sql "SELECT kind || ' ' || status || ' ' || coalesce(team, '-') FROM invitations
	      WHERE match_request_id = '$M' AND player_id = '$1'"
}

# counters: $M's status, open offers (and hand-overs) of each team, players of each team.
counters() {
	sql "SELECT status || ' ' || offers_a || offers_b || ' ' || team_a_count || team_b_count
	       FROM match_requests WHERE id = '$M'"
}
