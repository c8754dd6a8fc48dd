#!/usr/bin/env bats
# Reads on a replica: a real streaming replica of the suite's cluster (pg_basebackup -R, a hot
# standby on its own Unix socket) behind DATABASE_READ_URL. Which server answered is read from
# the data itself: with the replica's replay paused, a change made on the primary shows only
# in answers read from the primary.

load test_helper

LAT=40.4168
LNG=-3.7038

setup_file() {
	REPLICA_DIR=$COURTS_STATE/extra-replica
	READ_URL=$("$COURTS_ROOT/scripts/stack.sh" replica "$COURTS_STATE" "$REPLICA_DIR" 3>&-)
	REPLICA_ADMIN="host='$REPLICA_DIR/pgsock' port=5432 dbname=courts user=postgres"
	REPLICA_URL=$(extra_apache replicaweb DATABASE_READ_URL="$READ_URL")
	export REPLICA_DIR READ_URL REPLICA_ADMIN REPLICA_URL
}

setup() {
	reset_db
	RUN=$BATS_TEST_NUMBER-$RANDOM
	OWNER=owner-$RUN
	replica_running || "$COURTS_ROOT/scripts/stack.sh" replica "$COURTS_STATE" "$REPLICA_DIR" >/dev/null 3>&-
	replica_sql "SELECT pg_wal_replay_resume()" >/dev/null
	caught_up
}

teardown() {
	# a paused replica would hold the next tests' data back
	! replica_running || replica_sql "SELECT pg_wal_replay_resume()" >/dev/null || true
}

# replica_marks: where the pause mark of this suite's read URL is, as common/db.c names it: the
# user the programs run as (www-data under root) and the FNV-1a hash of the URL's bytes, in
# TMPDIR if the program has it (a pool started from this shell) or /tmp (Apache passes none).
# Only this mark is removed: others in a shared directory are other suites' or other users'.
replica_marks() {
	local uid h=2166136261 i c
	uid=$(if [ "$(id -u)" = 0 ]; then id -u www-data; else id -u; fi)
	local LC_ALL=C
	for ((i = 0; i < ${#READ_URL}; i++)); do
		printf -v c '%d' "'${READ_URL:i:1}"
		h=$((((h ^ (c & 255)) * 16777619) & 0xffffffff))
	done
	printf '%s/courts-replica-down.%s.%08x\n' /tmp "$uid" "$h"
	[ "${TMPDIR:-/tmp}" = /tmp ] || printf '%s/courts-replica-down.%s.%08x\n' "$TMPDIR" "$uid" "$h"
}

replica_running() {
	[ -f "$REPLICA_DIR/pg/postmaster.pid" ]
}

# replica_sql SQL: runs on the replica as the superuser.
replica_sql() {
	psql "$REPLICA_ADMIN" -X -q -tA -v ON_ERROR_STOP=1 -c "$1"
}

# caught_up: waits (at most 30 s) until the replica has replayed all the primary has written.
# The insert position, not the write position: the suite's cluster commits asynchronously, so
# the last commits may still be in WAL buffers, behind the write position.
caught_up() {
	local lsn i
	lsn=$(sql "SELECT pg_current_wal_insert_lsn()")
	for i in $(seq 1 300); do
		[ "$(replica_sql "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")" = t ] && return 0
		sleep 0.1
	done
	echo "the replica did not catch up with $lsn" >&2
	return 1
}

# pause: the replica stops replaying (it still receives): what the primary changes from now
# on is not on the replica.
# Replay can stop between a record that takes an ACCESS EXCLUSIVE lock and the one that
# releases it: autovacuum truncating a table that reset_db emptied logs such a lock. A paused
# replica would hold it for good, and every read of that table would wait until its statement
# timeout. So a pause that holds a replayed lock is undone and taken again, at a later point.
pause() {
	for _ in $(seq 1 20); do
		caught_up
		replica_sql "SELECT pg_wal_replay_pause()" >/dev/null
		paused || return 1
		[ "$(replica_sql "SELECT count(*) FROM pg_locks
			WHERE locktype = 'relation' AND mode = 'AccessExclusiveLock'")" = 0 ] && return 0
		replica_sql "SELECT pg_wal_replay_resume()" >/dev/null
		sleep 0.2
	done
	echo "every pause held a lock replayed from the primary" >&2
	return 1
}

paused() {
	for _ in $(seq 1 100); do
		[ "$(replica_sql "SELECT pg_get_wal_replay_pause_state()")" = paused ] && return 0
		sleep 0.05
	done
	return 1
}

@test "the public reads and the search come from the replica; owner lists, profiles and writes from the primary" {
	venue=$(fixture_venue "$OWNER" ACTIVE "$LAT" "$LNG")
	court=$(fixture_court "$venue")
	pause
	sql "UPDATE venues SET name = 'Renamed on the primary' WHERE id = '$venue'"
	# read from the replica: not yet
	req GET "/api/venues/$venue" -b "$REPLICA_URL"
	expect 200
	[ "$(jqr .name)" = "Club Central" ]
	req GET "/api/venues?lat=$LAT&lng=$LNG&radiusKm=5" -b "$REPLICA_URL"
	expect 200
	[ "$(jqr '[.. | objects | select(.id? == "'"$venue"'") | .name] | first')" = "Club Central" ]
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$(local_date 3)&startTimeFrom=09:00:00&startTimeTo=10:00:00" \
		-b "$REPLICA_URL" -t "$(token "searcher-$RUN")"
	expect 200
	[ "$(jqr '.[0].venueName')" = "Club Central" ] || {
		echo "search answered: $HTTP_BODY; replica at $(replica_sql "SELECT pg_last_wal_replay_lsn()
			|| ' ' || pg_get_wal_replay_pause_state()"), primary at $(sql "SELECT pg_current_wal_insert_lsn()")" >&2
		replica_sql "SELECT count(*) || ' courts, ' || (SELECT count(*) FROM resource_schedules) || ' schedules'
			FROM resources" >&2
		return 1
	}
	# read from the primary: the owner's own list sees the change at once
	req GET /api/owner/venues -b "$REPLICA_URL" -t "$(token "$OWNER" OWNER)"
	expect 200
	[ "$(jqr '.[] | select(.id == "'"$venue"'") | .name')" = "Renamed on the primary" ]
	# a player's own profile, written and read back at once
	req PUT /api/players/me -b "$REPLICA_URL" -t "$(token "searcher-$RUN")" \
		-d '{"displayName":"Sam","skillLevel":"ADVANCED","homeLatitude":40.42,"homeLongitude":-3.70}'
	expect 200
	req GET /api/players/me -b "$REPLICA_URL" -t "$(token "searcher-$RUN")"
	expect 200
	[ "$(jqr .skillLevel)" = ADVANCED ]
	# replayed: the replica's answers catch up
	replica_sql "SELECT pg_wal_replay_resume()" >/dev/null
	caught_up
	req GET "/api/venues/$venue" -b "$REPLICA_URL"
	expect 200
	[ "$(jqr .name)" = "Renamed on the primary" ]
}

@test "a stale slot list never books a taken court: the booking is checked on the primary" {
	venue=$(fixture_venue "$OWNER" ACTIVE "$LAT" "$LNG")
	court=$(fixture_court "$venue")
	day=$(local_date 3)
	fixture_player "ana-$RUN" INTERMEDIATE 40.42 -3.70 >/dev/null
	fixture_player "ben-$RUN" INTERMEDIATE 40.42 -3.70 >/dev/null
	expect_log postgres 'conflicting key value violates exclusion constraint "match_requests_no_double_booking"'
	pause
	body=$(jq -nc --arg r "$court" --arg d "$day" '{resourceId: $r, bookingDate: $d,
		startTime: "09:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70, searchRadiusKm: 5}')
	req POST /api/match/requests -b "$REPLICA_URL" -t "$(token "ana-$RUN")" -d "$body"
	expect 201
	# the replica still shows the slot free ...
	req GET "/api/resources/$court/slots?date=$day" -b "$REPLICA_URL"
	expect 200
	[ "$(jqr '.[] | select(.startTime == "09:30:00") | .available')" = true ]
	# ... and taking it is refused all the same
	req POST /api/match/requests -b "$REPLICA_URL" -t "$(token "ben-$RUN")" -d "$body"
	expect_problem 409 SLOT_TAKEN
	[ "$(sql "SELECT count(*) FROM match_requests WHERE resource_id = '$court'")" = 1 ]
}

@test "with the replica stopped every route works from the primary, one line says so, and it is used again once back" {
	expect_log apache 'DATABASE_READ_URL does not answer \(.*\); reading from the primary, trying it again every 30 s'
	local log=$COURTS_STATE/extra-replicaweb/apache/logs/error.log before marks mark found
	venue=$(fixture_venue "$OWNER" ACTIVE "$LAT" "$LNG")
	fixture_court "$venue" >/dev/null
	before=$(grep -c 'DATABASE_READ_URL does not answer' "$log" || true)
	"$COURTS_ROOT/scripts/stack.sh" replica-stop "$REPLICA_DIR"
	for _ in 1 2 3 4 5 6; do
		req GET "/api/venues/$venue" -b "$REPLICA_URL"
		expect 200
		[ "$(jqr .name)" = "Club Central" ]
		req GET "/api/venues/$venue/resources" -b "$REPLICA_URL"
		expect 200
	done
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$(local_date 3)&startTimeFrom=09:00:00&startTimeTo=10:00:00" -b "$REPLICA_URL" -t "$(token "searcher-$RUN")"
	expect 200
	req GET /actuator/health -b "$REPLICA_URL"
	expect 200
	# said once: by the first process that found it down (each FastCGI process at most once)
	after=$(grep -c 'DATABASE_READ_URL does not answer' "$log")
	[ "$after" -gt "$before" ]
	[ "$((after - before))" -le 4 ]
	# back: after the pause the replica is tried again and used
	"$COURTS_ROOT/scripts/stack.sh" replica "$COURTS_STATE" "$REPLICA_DIR" >/dev/null 3>&-
	pause
	sql "UPDATE venues SET name = 'Renamed again' WHERE id = '$venue'"
	marks=$(replica_marks) found=0
	while read -r mark; do
		[ ! -f "$mark" ] || { rm "$mark" && found=$((found + 1)); }
	done <<<"$marks"
	[ "$found" -ge 1 ] || { echo "no pause mark among: $marks" >&2; return 1; }
	local deadline=$((SECONDS + 45)) name
	while :; do
		req GET "/api/venues/$venue" -b "$REPLICA_URL"
		name=$(jqr .name)
		[ "$name" = "Club Central" ] && break
		[ $SECONDS -lt $deadline ] || { echo "still read from the primary: $name" >&2; return 1; }
		sleep 1
	done
}

@test "nothing is written through the read connection: the standby's log has no refused write" {
	venue=$(fixture_venue "$OWNER" ACTIVE "$LAT" "$LNG")
	court=$(fixture_court "$venue")
	caught_up
	for path in "/api/venues" "/api/venues/$venue" "/api/venues/$venue/resources" \
		"/api/resources/$court/slots?date=$(local_date 3)"; do
		req GET "$path" -b "$REPLICA_URL"
		expect 200
	done
	req GET "/api/match/search?lat=$LAT&lng=$LNG&date=$(local_date 3)&startTimeFrom=09:00:00&startTimeTo=10:00:00" -b "$REPLICA_URL" -t "$(token "newcomer-$RUN")"
	expect 200
	! grep -q 'read-only transaction' "$REPLICA_DIR/log/postgresql.log" || false
	# and the replica refuses a write, whoever asks
	run psql "$READ_URL" -X -q -tA -c "INSERT INTO users (issuer, subject) VALUES ('x', 'y')"
	[ "$status" -ne 0 ]
	[[ $output == *'read-only transaction'* ]]
}
