#!/usr/bin/env bats
# The FastCGI pool supervisor (common/pool.c), run directly on a socket of the test's own
# (no Apache involved): dead workers are replaced at once; a connection wakes one idle worker,
# not all of them; only a worker that keeps dying right after its start is held back, with a
# growing delay; a stop takes moments.
# The systemd units shipped for the pools (apache/systemd/, rendered by `make build`) are
# checked with systemd-analyze and their service is run the way systemd would run it.
# Any mode.

load test_helper

setup() {
	SOCK="$BATS_TEST_TMPDIR/pool.sock"
	LOG="$BATS_TEST_TMPDIR/pool.log"
}

teardown() {
	[ -z "${SUP:-}" ] || { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; } || true
	[ -z "${APP:-}" ] || kill -KILL "$APP" 2>/dev/null || true
}

# pool_up N [PROGRAM]: starts PROGRAM (default health) as a pool of N workers on $SOCK; sets
# SUP.
pool_up() {
	FCGI_LISTEN=$SOCK FCGI_WORKERS=$1 "$COURTS_BUILD/cgi-bin/${2:-health}.cgi" 2>"$LOG" 3>&- &
	SUP=$!
	wait_workers "$1"
}

# wait_workers N [EXCLUDED_PIDS]: polls until the supervisor has N workers, none of them in
# EXCLUDED_PIDS; prints nothing, fails after 5 s.
wait_workers() {
	local deadline=$((SECONDS + 5)) pids
	while :; do
		pids=$(pgrep -P "$SUP" || true)
		if [ "$(grep -c . <<<"$pids")" -eq "$1" ] && ! grep -qxF -f <(printf '%s\n' ${2:-none}) <<<"$pids"; then
			return 0
		fi
		[ $SECONDS -lt $deadline ] || { echo "workers: $pids (want $1, not ${2:-})" >&2; return 1; }
		sleep 0.02
	done
}

fcgi_info() {
	REQUEST_METHOD=GET REQUEST_URI=/actuator/info SERVER_PROTOCOL=HTTP/1.1 \
		cgi-fcgi -bind -connect "$SOCK"
}

@test "four workers killed at once are all replaced within two seconds and serve at once" {
	pool_up 4
	fcgi_info | grep -q '"name":"courts"'
	old=$(pgrep -P "$SUP" | tr '\n' ' ')
	t0=$(now_ms)
	kill -KILL $old
	wait_workers 4 "$old"
	elapsed=$(($(now_ms) - t0))
	# one second per dead worker before (4 s for four); now at once: about 0.1 s, the bound
	# leaves room for a machine busy with other suites
	[ "$elapsed" -lt 2000 ] || { echo "took $elapsed ms" >&2; return 1; }
	fcgi_info | grep -q '"name":"courts"'
	[ "$(grep -c 'ended (status 9); restarting' "$LOG")" = 4 ]
}

# voluntary_switches PID: how often the process has gone to sleep so far
voluntary_switches() {
	awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/status"
}

@test "a connection wakes one idle worker, not all of them" {
	pool_up 4
	fcgi_info | grep -q '"name":"courts"'
	local workers w before=() after=() i deltas
	workers=$(pgrep -P "$SUP")
	for w in $workers; do before+=("$(voluntary_switches "$w")"); done
	for i in $(seq 40); do
		fcgi_info | grep -q '"name":"courts"'
	done
	for w in $workers; do after+=("$(voluntary_switches "$w")"); done
	deltas=$(for i in "${!before[@]}"; do echo $((after[i] - before[i])); done | sort -n)
	# every idle worker woke for every connection when they waited with select: 40 and more
	# each; now the three that served least, together, woke for fewer than half of them
	[ "$(head -n 3 <<<"$deltas" | awk '{ n += $1 } END { print n }')" -lt 20 ] ||
		{ echo "sleeps per worker over 40 requests:" $deltas >&2; return 1; }
}

@test "a worker that keeps dying right after its start is restarted with a growing delay" {
	pool_up 1
	seen=""
	deadline=$(($(now_ms) + 2500))
	while [ "$(now_ms)" -lt "$deadline" ]; do
		for p in $(pgrep -P "$SUP" || true); do
			kill -KILL "$p" 2>/dev/null || true
			[[ " $seen " == *" $p "* ]] || seen+=" $p"
		done
		sleep 0.02
	done
	starts=$(wc -w <<<"$seen")
	# without a delay a kill every 20 ms would have seen about a hundred starts
	[ "$starts" -ge 3 ] && [ "$starts" -le 10 ] || { echo "$starts starts" >&2; return 1; }
	grep -q 'times in a row right after its start; next start in 500 ms' "$LOG"
	# and the supervisor still stops at once while it waits to start one
	t0=$(now_ms)
	kill -TERM "$SUP"
	wait "$SUP" || true
	SUP=
	[ $(($(now_ms) - t0)) -lt 1000 ]
}

# venues_locked: a session of its own holds the venues table (ACCESS EXCLUSIVE) until
# venues_unlocked, so that a request reading it waits in the middle of its work.
venues_locked() {
	held_open "LOCK TABLE venues IN ACCESS EXCLUSIVE MODE"
}

venues_unlocked() {
	held_commit
}

# waiting_on_lock: the number of the program's sessions that wait for a lock
waiting_on_lock() {
	sql "SELECT count(*) FROM pg_stat_activity
	     WHERE usename = 'courts' AND wait_event_type = 'Lock' AND query LIKE '%venues%'"
}

# ended PID: waits up to 5 s for process PID to end (a zombie left for a parent to reap has)
ended() {
	local deadline=$((SECONDS + 5)) st
	while st=$(ps -o stat= -p "$1") && [ "${st:0:1}" != Z ]; do
		[ $SECONDS -lt $deadline ] || { echo "process $1 still runs" >&2; return 1; }
		sleep 0.02
	done
}

# venues_answer FILE: an answer to GET /api/venues, as the program wrote it, is a 200 JSON
# list of $venue alone
venues_answer() {
	local answer=$1
	head -n 1 "$answer" | grep -q '^Status: 200' || { cat "$answer" >&2; return 1; }
	grep -qi '^Content-Type: application/json' "$answer"
	[ "$(sed '1,/^\r\?$/d' "$answer" | jq -r 'map(.id) | join(",")')" = "$venue" ]
}

# stopped_in_flight WHOM: with one worker, a request for the public venue list waits on the
# locked table and a second one waits in the socket's queue while the worker (WHOM=worker, as
# mod_fcgid stops its processes) or the supervisor (WHOM=pool) gets SIGTERM; both are answered
# in full, then the worker ends.
stopped_in_flight() {
	reset_db
	venue=$(fixture_venue stopper)
	pool_up 1 public
	worker=$(pgrep -P "$SUP")
	venues_locked
	clients=()
	for n in 1 2; do
		REQUEST_METHOD=GET REQUEST_URI=/api/venues SERVER_PROTOCOL=HTTP/1.1 \
			cgi-fcgi -bind -connect "$SOCK" >"$BATS_TEST_TMPDIR/answer-$n" 3>&- &
		clients+=($!)
		if [ "$n" = 1 ]; then
			deadline=$((SECONDS + 10))
			until [ "$(waiting_on_lock)" -ge 1 ]; do
				[ $SECONDS -lt $deadline ] || { echo "the request never waited on the lock" >&2; return 1; }
				sleep 0.02
			done
		fi
	done
	# the second client's connection waits in the socket's queue (not yet accepted: no inode)
	deadline=$((SECONDS + 10))
	until [ "$(awk -v p="$SOCK" '$NF == p && $7 == 0' /proc/net/unix | grep -c .)" -ge 1 ]; do
		[ $SECONDS -lt $deadline ] || { echo "the second request was never queued" >&2; return 1; }
		sleep 0.02
	done
	if [ "$1" = pool ]; then kill -TERM "$SUP"; else kill -TERM "$worker"; fi
	# the stop waits for the request: a moment later the worker still serves it
	sleep 0.3
	kill -0 "$worker"
	[ ! -s "$BATS_TEST_TMPDIR/answer-1" ]
	venues_unlocked
	wait "${clients[@]}"
	venues_answer "$BATS_TEST_TMPDIR/answer-1"
	venues_answer "$BATS_TEST_TMPDIR/answer-2"
	# and then it ends, of itself
	ended "$worker"
}

@test "a worker sent SIGTERM in the middle of a request answers it and the queued one in full, then ends" {
	stopped_in_flight worker
	# the supervisor saw it end normally and started another
	wait_workers 1 "$worker"
	grep -q "worker $worker ended (status 0); restarting" "$LOG"
	REQUEST_METHOD=GET REQUEST_URI=/api/venues SERVER_PROTOCOL=HTTP/1.1 \
		cgi-fcgi -bind -connect "$SOCK" | head -n 1 | grep -q '^Status: 200'
}

@test "a pool stopped in the middle of a request answers it and the queued one in full, then ends" {
	stopped_in_flight pool
	wait "$SUP" || true
	SUP=
	[ ! -e "$SOCK" ]
}

# listener_pid SOCKET: the process whose standard input is the socket listening at SOCKET
listener_pid() {
	local ino f
	ino=$(awk -v p="$1" '$NF == p { print $7; exit }' /proc/net/unix)
	[ -n "$ino" ] || return 1
	for f in /proc/[0-9]*/fd/0; do
		if [ "$(readlink "$f" 2>/dev/null)" = "socket:[$ino]" ]; then
			f=${f%/fd/0}
			echo "${f#/proc/}"
			return 0
		fi
	done
	return 1
}

@test "a process started as mod_fcgid starts it, stopped between a connection and its request, answers it" {
	reset_db
	venue=$(fixture_venue stopper)
	# the listening socket on standard input, as mod_fcgid hands it to its processes
	cgi-fcgi -start -connect "$SOCK" "$COURTS_BUILD/cgi-bin/public.cgi" 2>"$LOG" 3>&-
	APP=$(listener_pid "$SOCK")
	dir="$BATS_TEST_TMPDIR/client"
	mkdir "$dir"
	node "$COURTS_ROOT/tests/fcgi-client.mjs" "$SOCK" "$dir" /api/venues 3>&- &
	client=$!
	deadline=$((SECONDS + 10))
	until [ -e "$dir/connected" ]; do
		[ $SECONDS -lt $deadline ] || { echo "the client did not connect" >&2; return 1; }
		sleep 0.01
	done
	# the program has taken the connection and waits for the request when the stop comes, as
	# at a graceful restart, where mod_fcgid's process manager stops every process it has
	sleep 0.1
	kill -TERM "$APP"
	sleep 0.2
	touch "$dir/go"
	wait "$client" || { cat "$LOG" >&2; return 1; }
	venues_answer "$dir/answer"
	ended "$APP"
	APP=
	[ ! -s "$LOG" ] || { cat "$LOG" >&2; return 1; }
}

@test "a process of mod_fcgid stopped while it starts answers the request already queued, then ends" {
	reset_db
	# the key file is a pipe: the program waits at its start until the key comes through it
	key="$BATS_TEST_TMPDIR/key.pipe"
	mkfifo "$key"
	JWT_PUBLIC_KEY_FILE=$key cgi-fcgi -start -connect "$SOCK" "$COURTS_BUILD/cgi-bin/players.cgi" \
		2>"$LOG" 3>&-
	APP=$(listener_pid "$SOCK")
	tok=$(token early-stop)
	REQUEST_METHOD=GET REQUEST_URI=/api/players/me SERVER_PROTOCOL=HTTP/1.1 \
		HTTP_AUTHORIZATION="Bearer $tok" cgi-fcgi -bind -connect "$SOCK" \
		>"$BATS_TEST_TMPDIR/answer" 3>&- &
	client=$!
	# the request waits in the socket's queue (not yet accepted: no inode)
	deadline=$((SECONDS + 10))
	until [ "$(awk -v p="$SOCK" '$NF == p && $7 == 0' /proc/net/unix | grep -c .)" -ge 1 ]; do
		[ $SECONDS -lt $deadline ] || { echo "the request was never queued" >&2; return 1; }
		sleep 0.02
	done
	# the stop comes while the program starts, as mod_fcgid's process manager stops a process
	# it has just started at a graceful restart: the program holds it
	kill -TERM "$APP"
	sleep 0.2
	st=$(ps -o stat= -p "$APP") && [ "${st:0:1}" != Z ] ||
		{ echo "the stop ended the program before it served the queued request" >&2; return 1; }
	timeout 10 cp "$JWT_PUBLIC_KEY_FILE" "$key"
	wait "$client"
	head -n 1 "$BATS_TEST_TMPDIR/answer" | grep -q '^Status: 200' ||
		{ cat "$BATS_TEST_TMPDIR/answer" "$LOG" >&2; return 1; }
	grep -qi '^Content-Type: application/json' "$BATS_TEST_TMPDIR/answer"
	[ "$(sed '1,/^\r\?$/d' "$BATS_TEST_TMPDIR/answer" | jq -r .playerId)" = "$(sql "SELECT id FROM users WHERE subject = 'early-stop'")" ]
	[ "$(sql "SELECT count(*) FROM players p JOIN users u ON u.id = p.user_id WHERE u.subject = 'early-stop'")" = 1 ]
	ended "$APP"
	APP=
	[ ! -s "$LOG" ] || { cat "$LOG" >&2; return 1; }
}

@test "a pool's worker given mod_fcgid's warm-up token serves a request carrying it as any other" {
	# (the warm-up is mod_fcgid's, tests/08-fcgid-warm.bats: a pool has its workers already)
	export COURTS_FCGID_WARM_TOKEN=0123456789abcdef0123456789abcdef
	pool_up 1
	REQUEST_METHOD=GET REQUEST_URI=/actuator/health SERVER_PROTOCOL=HTTP/1.1 \
		HTTP_X_COURTS_WARM_UP=$COURTS_FCGID_WARM_TOKEN \
		timeout 10 cgi-fcgi -bind -connect "$SOCK" >"$BATS_TEST_TMPDIR/answer" 3>&-
	head -n 1 "$BATS_TEST_TMPDIR/answer" | grep -q '^Status: 200' ||
		{ cat "$BATS_TEST_TMPDIR/answer" >&2; return 1; }
	[ "$(sed '1,/^\r\?$/d' "$BATS_TEST_TMPDIR/answer" | jq -r .status)" = UP ]
	[ ! -s "$LOG" ]
}

@test "a pool stops in moments and removes its socket" {
	pool_up 4
	t0=$(now_ms)
	kill -TERM "$SUP"
	wait "$SUP" || true
	SUP=
	elapsed=$(($(now_ms) - t0))
	[ "$elapsed" -lt 2000 ] || { echo "took $elapsed ms" >&2; return 1; }
	[ ! -e "$SOCK" ]
}

@test "the systemd units of the pools pass systemd-analyze verify, one instance per program" {
	units="$BATS_TEST_TMPDIR/units"
	mkdir -p "$units"
	cp "$COURTS_BUILD/systemd/courts-pool@.service" "$COURTS_BUILD/systemd/courts-pools.target" "$units/"
	wants=$(unit_value "$units/courts-pools.target" Wants)
	# every program, and nothing else
	[ "$(tr ' ' '\n' <<<"$wants" | sort)" = "$(for p in "$COURTS_BUILD"/cgi-bin/*.cgi; do
		echo "courts-pool@$(basename "$p" .cgi).service"; done | sort)" ]
	for u in $wants; do ln -s courts-pool@.service "$units/$u"; done
	out=$(cd "$units" && systemd-analyze verify ./courts-pools.target $(printf './%s ' $wants) 2>&1) ||
		{ echo "$out" >&2; return 1; }
	# and silent: no unknown setting, no warning
	[ -z "$out" ] || { echo "$out" >&2; return 1; }
	# the service runs as the web server's user, restarts, and stops by its supervisor
	[ "$(unit_value "$units/courts-pool@.service" User)" = www-data ]
	[ "$(unit_value "$units/courts-pool@.service" KillMode)" = mixed ]
	[ "$(unit_value "$units/courts-pool@.service" Restart)" = on-failure ]
	# the documented pool set-up points Apache at the units' socket directory
	grep -qF 'COURTS_POOL "/run/courts-pool"' "$COURTS_ROOT/docs/operations.md"
}

@test "a pool started as its systemd unit says answers on the unit's socket and stops on SIGTERM" {
	unit="$COURTS_BUILD/systemd/courts-pool@.service"
	runtime="$BATS_TEST_TMPDIR/run"	# %t
	mkdir -p "$runtime/$(unit_value "$unit" RuntimeDirectory)"
	# Environment= and ExecStart= with %i = health and %t = the test's runtime directory
	envs=()
	while IFS= read -r w; do
		w=${w//%i/health}
		envs+=("${w//%t/$runtime}")
	done < <(unit_words "$(unit_value "$unit" Environment)")
	mapfile -t cmd < <(unit_words "$(unit_value "$unit" ExecStart)")
	cmd[0]=${cmd[0]//%i/health}
	[ "${#cmd[@]}" = 1 ]
	[ "${cmd[0]}" = "$(cd "$COURTS_BUILD" && pwd -P)/cgi-bin/health.cgi" ]
	SOCK="$runtime/courts-pool/health.sock"
	printf '%s\n' "${envs[@]}" | grep -qxF "FCGI_LISTEN=$SOCK"
	env "${envs[@]}" "${cmd[0]}" 2>"$LOG" 3>&- &
	SUP=$!
	wait_workers "$(printf '%s\n' "${envs[@]}" | sed -n 's/^FCGI_WORKERS=//p')"
	fcgi_info | grep -q '"name":"courts"'
	workers=$(pgrep -P "$SUP")
	# KillMode=mixed: SIGTERM to the supervisor alone ends its workers and its socket
	kill -TERM "$SUP"
	wait "$SUP" || true
	SUP=
	[ ! -e "$SOCK" ]
	for w in $workers; do
		! kill -0 "$w" 2>/dev/null || { echo "worker $w still runs" >&2; return 1; }
	done
}
