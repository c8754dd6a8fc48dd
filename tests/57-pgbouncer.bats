#!/usr/bin/env bats
# PGBOUNCER=1 (scripts/stack.sh): a pgbouncer of the stack's own in transaction mode between
# the programs and PostgreSQL, on a Unix socket. The programs must work unchanged behind it:
# no prepared statement may outlive its transaction (DB_PREPARE=0), the settings their libpq
# options carry (time zone, statement timeout) come from pgbouncer's server sessions, and the
# search keeps its plan, whose setting travels with the call (match_search_rows). Every
# request goes through it and PostgreSQL forks no backend per request. It starts and stops
# with the stack, by its PID.

load test_helper
load match_helper

setup_file() {
	PGB=$(extra_apache pgbouncer PGBOUNCER=1 PGBOUNCER_POOL_SIZE=4)
	PGB_STATE=$COURTS_STATE/extra-pgbouncer
	export PGB PGB_STATE
}

setup() {
	reset_db
}

# pgb_stat COLUMN: a column of pgbouncer's SHOW STATS for the database courts.
pgb_stat() {
	psql "host=$PGB_STATE/pgbsock port=6432 dbname=pgbouncer user=courts" -X -q -tA -F' ' \
		-c "SHOW STATS" | awk -v col="$1" '$1 == "courts" { n = $col } END { print n + 0 }'
}

# running PID: the process exists and is not a zombie (a daemon's parent may never reap it)
running() {
	[ -n "$(ps -o stat= -p "$1" 2>/dev/null | grep -v '^Z')" ]
}

@test "behind pgbouncer the programs are served through its socket, with their settings" {
	[ -S "$PGB_STATE/pgbsock/.s.PGSQL.6432" ]
	grep -q "SetEnv DATABASE_URL \"host='$PGB_STATE/pgbsock' port=6432 dbname=courts user=courts\"" \
		"$PGB_STATE/apache/env.conf"
	grep -qx 'SetEnv DB_PREPARE "0"' "$PGB_STATE/apache/env.conf"
	# the same answers as without it
	req GET /actuator/health -b "$PGB"
	expect 200
	[ "$(jqr .status)" = UP ]
	# the server sessions have the settings the programs' options would have given
	[ "$(psql "host=$PGB_STATE/pgbsock port=6432 dbname=courts user=courts" -X -tA \
		-c "SELECT current_setting('TimeZone') || ' ' || current_setting('statement_timeout')")" = "UTC 15s" ]
}

@test "a player's journey behind pgbouncer: slots, search, a match created, paid and cancelled" {
	match_world
	xacts=$(pgb_stat 2)
	backends=$(sql "SELECT count(*) FROM pg_stat_activity WHERE usename = 'courts'")
	day=$(weekday_date 3)
	for i in 1 2 3; do
		req GET "/api/resources/$COURT/slots?date=$day" -b "$PGB"
		expect 200
		[ "$(jqr length)" = 9 ]
	done
	req GET "/api/match/search?lat=40.42&lng=-3.70&date=$day&startTimeFrom=18:00:00&startTimeTo=20:00:00" \
		-t "$(token org)" -b "$PGB"
	expect 200
	[ "$(jqr -c '[.[].resourceId] | unique')" = "[\"$COURT\"]" ]
	req POST /api/match/requests -t "$(token org)" -b "$PGB" -d "$(jq -nc --arg r "$COURT" --arg d "$day" \
		'{resourceId: $r, bookingDate: $d, startTime: "18:30:00", slotDurationMinutes: 90,
		  format: "TWO_VS_TWO", skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70}')"
	expect 201
	match=$(jqr .id)
	req POST "/api/match/requests/$match/confirm-payment" -t "$(token org)" -b "$PGB"
	expect 200
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$match'")" = OPEN ]
	req DELETE "/api/match/requests/$match" -t "$(token org)" -b "$PGB"
	expect 204 -
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$match'")" = CANCELLED ]
	# a refusal rolls back as one transaction there too
	req POST /api/match/requests -t "$(token org)" -b "$PGB" -d '{"resourceId": "nope"}'
	expect_problem 400 VALIDATION_FAILED resourceId
	# every request went through pgbouncer, and its four server sessions were all it took
	[ "$(pgb_stat 2)" -gt $((xacts + 8)) ]
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE usename = 'courts'")" -le $((backends + 4)) ]
}

@test "pgbouncer stops with its stack, by its PID, and its log stays quiet" {
	pid=$(cat "$PGB_STATE/pgbouncer/pgbouncer.pid")
	running "$pid"
	# nothing but its start-up lines while things go right
	! grep -v -e 'LOG kernel file descriptor limit' -e 'LOG listening on' -e 'LOG process up' \
		"$COURTS_STATE/extra-pgbouncer/log/pgbouncer.log" || false
	"$COURTS_ROOT/scripts/stack.sh" stop-apache "$PGB_STATE" 3>&-
	! running "$pid" || false
	[ ! -e "$PGB_STATE/pgbouncer/pgbouncer.pid" ]
	[ ! -S "$PGB_STATE/pgbsock/.s.PGSQL.6432" ]
}
