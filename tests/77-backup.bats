#!/usr/bin/env bats
# Any mode.
# Backups and point-in-time recovery with pgBackRest (scripts/backup.sh, docs/operations.md,
# "Backups"), on a cluster of this file's own that archives its WAL (the suite's runs without):
# a full backup, a set A written, the time noted, a set B written, an incremental backup; then
# `make restore` to that time into a new data directory, a cluster started there on its own
# socket, and A found whole, B not at all, the free slots and the ledger consistent. Both
# clusters live in directories with a space in their paths, as a checkout may.

load test_helper
load match_helper

# the tables A and B write, each as count and digest of its rows in a fixed order
TABLES="users venues resources resource_schedules price_rules players match_requests match_players payments"

snapshot() {
	local t q=""
	for t in $TABLES; do
		q+="${q:+ UNION ALL }SELECT '$t', count(*), md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM $t x"
	done
	sql "$q"
}

setup_file() {
	BK=$(mktemp -d "${TMPDIR:-/tmp}/courts-backup.XXXXXX")
	chmod 755 "$BK"
	export BK
	PG_ARCHIVE=1 "$COURTS_ROOT/scripts/stack.sh" db "$BK/live cluster" >"$BK/stack.log" 2>&1 ||
		{ cat "$BK/stack.log" >&2; return 1; }
	# shellcheck disable=SC1091
	. "$BK/live cluster/env"
	"$COURTS_ROOT/scripts/migrate.sh" "$DATABASE_URL" >/dev/null
	"$COURTS_BUILD/cron/sweep" >/dev/null
	export LIVE_ADMIN=$PSQL_ADMIN LIVE_URL=$DATABASE_URL
}

teardown_file() {
	[ -n "${BK:-}" ] || return 0
	# each cluster by the PID of its postmaster.pid (pg_ctl stop), pass or fail
	"$COURTS_ROOT/scripts/stack.sh" stop "$BK/restored cluster" || true
	"$COURTS_ROOT/scripts/stack.sh" stop "$BK/live cluster" || true
	if [ -n "${KEEP_STATE:-}" ]; then echo "# backup state kept in $BK" >&3; else rm -rf "$BK"; fi
}

setup() {
	export PSQL_ADMIN=$LIVE_ADMIN DATABASE_URL=$LIVE_URL
}

@test "make restore refuses a time without a date, a clock time and an offset: exit 2, nothing written" {
	for bad in yesterday 2026-12-04 '2026-12-04T13:45:00' '2026-12-04 13:45' '2026-13-45T99:00:00Z' \
		'2026-12-04T13:45:00+01:00 and more'; do
		run "$COURTS_ROOT/scripts/backup.sh" restore "$bad" "$BK/live cluster"
		[ "$status" -eq 2 ]
		[[ $output == *"is not an ISO 8601 timestamp with its offset"* ]]
	done
	run make -s -C "$COURTS_ROOT" restore TIME=yesterday STATE="$BK/live cluster"
	[ "$status" -ne 0 ]
	[[ $output == *"make restore: TIME='yesterday' is not an ISO 8601 timestamp with its offset: give e.g. TIME="* ]]
	run make -s -C "$COURTS_ROOT" restore TIME=2999-01-01T00:00:00Z STATE="$BK/live cluster"
	[ "$status" -ne 0 ]
	[[ $output == *"is in the future"* ]]
	[ ! -e "$BK/live cluster/restore" ]
	# the cluster archives, and nothing was backed up or restored
	[ "$(sql "SHOW archive_mode")" = on ]
	[ -z "$(ls -A "$BK/live cluster/backup/backup/courts" 2>/dev/null | grep -v '^backup\.')" ]
}

@test "a restore to a noted time holds every row written before it and none written after" {
	local t0 full incr restore T before
	t0=$SECONDS
	run make -s -C "$COURTS_ROOT" backup STATE="$BK/live cluster"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"make backup: full backup "* ]]
	full=$((SECONDS - t0))

	# set A: a venue with a court, four players, a MATCHED match each of them paid
	match_world
	full_match '5 days'
	A_VENUE=$VENUE A_COURT=$COURT A_M=$M A_PLAYERS="$ORG $P1 $P2 $P3"
	sql "SELECT pg_switch_wal()" >/dev/null
	# the time, by the database's clock, after A was committed
	T=$(sql "SELECT to_char(clock_timestamp(), 'YYYY-MM-DD\"T\"HH24:MI:SS.USTZH:TZM')")
	before=$(snapshot)
	sleep 0.2

	# set B: another owner's venue and court, a player, a match held and paid
	B_VENUE=$(fixture_venue owner2)
	COURT=$(fixture_court "$B_VENUE" 60)
	B_COURT=$COURT
	B_ORG=$(fixture_player orgb ADVANCED 40.43 -3.71)
	B_M=$(sql_match "$B_ORG" OPEN '6 days')
	[ "$(snapshot)" != "$before" ]

	t0=$SECONDS
	run make -s -C "$COURTS_ROOT" backup STATE="$BK/live cluster"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"make backup: incr backup "* ]]
	incr=$((SECONDS - t0))

	t0=$SECONDS
	run make -s -C "$COURTS_ROOT" restore TIME="$T" STATE="$BK/live cluster" RESTORE_DIR="$BK/restored cluster"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"restored into $BK/restored cluster/pg"* ]]
	[[ $output == *"scripts/stack.sh db $BK/restored cluster"* ]]
	# a new data directory: the live cluster still runs, with B
	[ "$(sql "SELECT count(*) FROM match_requests WHERE id = '$B_M'")" = 1 ]
	"$COURTS_ROOT/scripts/stack.sh" db "$BK/restored cluster" >"$BK/restored-stack.log" 2>&1 ||
		{ cat "$BK/restored-stack.log"; false; }
	restore=$((SECONDS - t0))
	echo "# backup: full ${full} s, incremental ${incr} s; restore and recovery ${restore} s" >&3

	# shellcheck disable=SC1091
	. "$BK/restored cluster/env"
	[ "$PSQL_ADMIN" != "$LIVE_ADMIN" ]
	[ "$(sql "SELECT pg_is_in_recovery()")" = f ]
	# the whole of A, as it was at T
	[ "$(snapshot)" = "$before" ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$A_M'")" = MATCHED ]
	[ "$(sql "SELECT count(*) FROM venues WHERE id = '$A_VENUE'")" = 1 ]
	[ "$(sql "SELECT count(*) FROM resources WHERE id = '$A_COURT'")" = 1 ]
	for p in $A_PLAYERS; do
		[ "$(sql "SELECT count(*) FROM players WHERE user_id = '$p'")" = 1 ]
		# the ledger (tests/47-match-ledger.bats): paid minus refunded is the share each owes
		[ "$(sql "SELECT COALESCE(sum(CASE WHEN kind = 'PAYMENT' THEN amount ELSE -amount END), 0)
		            FROM payments WHERE match_request_id = '$A_M' AND player_id = '$p'
		             AND (kind = 'REFUND' OR status = 'PAID')")" = 5.00 ]
	done
	# none of B
	[ "$(sql "SELECT count(*) FROM venues WHERE id = '$B_VENUE'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM resources WHERE id = '$B_COURT'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM players WHERE user_id = '$B_ORG'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM match_requests WHERE id = '$B_M'")" = 0 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE match_request_id = '$B_M'")" = 0 ]
	# consistent: the search's free slots, and every refund of the ledger names a PAID payment
	# of the same player and match for its whole amount, none refunded twice
	[ "$(sql "SELECT count(*) FROM free_slots_drift()")" = 0 ]
	refunds_ok
	# and it takes writes, as the service's
	[ "$(psql "$DATABASE_URL" -X -qtA -c "SELECT count(*) FROM match_requests")" -ge 1 ]
	sql "UPDATE venues SET name = 'Club Central restored' WHERE id = '$A_VENUE'"
}
