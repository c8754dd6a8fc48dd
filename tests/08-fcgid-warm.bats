#!/usr/bin/env bats
# mod_fcgid's processes started before the first burst (docs/operations.md, "Plain CGI or
# FastCGI"): `scripts/stack.sh warm` gives a program 16 processes, each with its database
# session, and mod_fcgid keeps them past its idle timeout; the warm-up's header does nothing
# without the Apache's own token (nor in a pool: tests/07-pool.bats). At most
# FCGID_CONCURRENCY requests of a program work at once; the others wait for a turn.
# Runs against an Apache of its own under mod_fcgid, with an idle timeout of 2 s looked at
# every second (apache/httpd.conf keeps 600 s and 120 s).
# Any mode.

load test_helper

setup_file() {
	WARM_URL=$(COURTS_MODE=fastcgi extra_apache fcgidwarm FCGID_WARM="public players" \
		FCGID_IDLE_TIMEOUT=2 FCGID_IDLE_SCAN=1 3>&-)
	WARM_STATE=$COURTS_STATE/extra-fcgidwarm
	export WARM_URL WARM_STATE
}

# procs PROGRAM: how many processes of PROGRAM mod_fcgid runs for the test's Apache
procs() { "$COURTS_ROOT/scripts/stack.sh" fcgid-count "$WARM_STATE" "$1"; }

@test "the warm-up starts 16 processes of each program named, with their sessions, and they outlive the idle timeout" {
	[ "$(procs public)" = 16 ]
	[ "$(procs players)" = 16 ]
	[ "$(procs owner)" = 0 ]
	log=$WARM_STATE/apache/logs/access.log
	# the warm-up's requests, answered 204 after their hold
	[ "$(grep -c '"GET /api/venues HTTP/1.1" 204 ' "$log")" -ge 16 ]
	[ "$(grep -c '"GET /api/players/me HTTP/1.1" 204 ' "$log")" -ge 16 ]
	# each process opened its database session during its hold (one each, named after it)
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'public'")" -ge 16 ]
	# past the idle timeout and two of mod_fcgid's looks: none ended
	sleep 5
	[ "$(procs public)" = 16 ]
	[ "$(procs players)" = 16 ]
	# and they serve
	req GET /api/venues -b "$WARM_URL"
	expect 200 application/json
}

@test "a request with the warm-up header and another token is served as any other" {
	t0=$(now_ms)
	req GET /api/venues -b "$WARM_URL" -H "X-Courts-Warm-Up: 00000000000000000000000000000000"
	expect 200 application/json
	[ "$(jq -r 'type' <<<"$HTTP_BODY")" = array ]
	# not held: the hold is 3 s
	[ $(($(now_ms) - t0)) -lt 2500 ]
	# the Apache's own token: held, then 204 with no body
	t0=$(now_ms)
	run curl -s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' --max-time 20 \
		-H "X-Courts-Warm-Up: $(cat "$WARM_STATE/apache/warm.token")" "$WARM_URL/api/venues"
	[ "$output" = 204 ]
	[ ! -s "$BATS_TEST_TMPDIR/body" ]
	[ $(($(now_ms) - t0)) -ge 3000 ]
}

# lock_waiters: the PIDs of public.cgi's sessions that wait for a lock, one a line
lock_waiters() {
	sql "SELECT pid FROM pg_stat_activity WHERE application_name = 'public'
		AND wait_event_type = 'Lock' ORDER BY pid"
}

# waiting_on_lock: how many sessions of public.cgi wait for a lock
waiting_on_lock() { lock_waiters | wc -l; }

# three_blocked BASE: three requests of public.cgi at once while the venues are locked; once
# the first waits on the lock (and a second more), prints how many wait on it, then lets
# them through and checks that all three were answered 200
three_blocked() {
	local i n deadline
	held_open "LOCK TABLE venues IN ACCESS EXCLUSIVE MODE"
	for i in 1 2 3; do
		curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$1/api/venues" \
			>"$BATS_TEST_TMPDIR/code-$i" 3>&- &
	done
	deadline=$((SECONDS + 10))
	until [ "$(waiting_on_lock)" -ge 1 ]; do
		[ $SECONDS -lt $deadline ] || { echo "no request reached the lock" >&2; held_commit; return 1; }
		sleep 0.05
	done
	sleep 1
	n=$(waiting_on_lock)
	held_commit
	wait
	for i in 1 2 3; do
		[ "$(cat "$BATS_TEST_TMPDIR/code-$i")" = 200 ] || { echo "request $i: $(cat "$BATS_TEST_TMPDIR/code-$i")" >&2; return 1; }
	done
	echo "$n"
}

@test "under mod_fcgid at most FCGID_CONCURRENCY requests of a program work at once, the others wait for a turn" {
	reset_db
	# the default, 4: all three reach the database
	[ "$(three_blocked "$WARM_URL")" = 3 ]
	# one at a time: the two others wait for their turn, not in the database
	one=$(COURTS_MODE=fastcgi extra_apache turns1 FCGID_CONCURRENCY=1 FCGID_WARM=public 3>&-)
	[ "$(three_blocked "$one")" = 1 ]
	# the turns are files beside the programs' sockets, with the queue's lock and its FIFO
	dir=$COURTS_STATE/extra-turns1/apache/run/fcgid
	[ -f "$dir/courts-turn.public.0" ]
	[ ! -e "$dir/courts-turn.public.1" ]
	[ -f "$dir/courts-turn.public.queue" ]
	[ -p "$dir/courts-turn.public.given" ]
}

# turn_holder FILE: the PID of the process that holds FILE's lock (flock), from /proc/locks
turn_holder() {
	awk -v ino="$(stat -c %i "$1")" '$2 == "FLOCK" && $4 == "WRITE" {
		n = split($6, d, ":"); if (d[n] == ino) print $5 }' /proc/locks
}

@test "a request waiting for a turn takes the first one given back, whichever it is, the turn of a process that died included" {
	reset_db
	two=$(COURTS_MODE=fastcgi extra_apache turns2 FCGID_CONCURRENCY=2 FCGID_WARM=public 3>&-)
	dir=$COURTS_STATE/extra-turns2/apache/run/fcgid
	held_open "LOCK TABLE venues IN ACCESS EXCLUSIVE MODE"
	# one after the other: the first two take the two turns and wait on the lock, the third
	# waits for a turn
	for i in 1 2 3; do
		curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$two/api/venues" \
			>"$BATS_TEST_TMPDIR/code-$i" 3>&- &
		deadline=$((SECONDS + 10))
		until [ "$(waiting_on_lock)" -ge $((i < 2 ? i : 2)) ]; do
			[ $SECONDS -lt $deadline ] || { echo "request $i reached no lock" >&2; held_commit; return 1; }
			sleep 0.05
		done
	done
	sleep 1
	before=$(lock_waiters)
	[ "$(wc -l <<<"$before")" = 2 ] || { echo "waiting on the lock: $before" >&2; held_commit; return 1; }
	# the process holding the second turn is killed, so nothing of its own gives the turn
	# back: the kernel does, and the third request takes it (when a request waited on the
	# turn of its own process, the third could wait for the first instead: three runs in three)
	pid=$(turn_holder "$dir/courts-turn.public.1")
	[ -n "$pid" ]
	[ -n "$(turn_holder "$dir/courts-turn.public.0")" ]
	# mod_fcgid logs the request it lost with the process
	expect_log apache 'End of script output before headers: public\.cgi'
	# its database session, still waiting on the lock, finds its client gone once it has it
	expect_log postgres 'FATAL:  connection to client lost'
	kill -KILL "$pid"
	deadline=$((SECONDS + 5))
	until lock_waiters | grep -qvxF -f <(echo "$before"); do
		[ $SECONDS -lt $deadline ] || { echo "the third request took no turn" >&2; held_commit; return 1; }
		sleep 0.05
	done
	held_commit
	wait
	# the first and third answered; the second's process is gone
	codes=$(for i in 1 2 3; do cat "$BATS_TEST_TMPDIR/code-$i"; echo; done | sort | tr '\n' ' ')
	[[ $codes == "200 200 5"??" " ]] || { echo "answers: $codes" >&2; return 1; }
}
