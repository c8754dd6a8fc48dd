#!/usr/bin/env bats
# Set-up for newcomers: the README's `make run` works for whoever runs it from wherever the
# checkout is (an unprivileged user whose PATH is Debian's default, from a path with a space;
# root, from a checkout inside a directory only root may enter, as /root is), and says in one
# line what it arranged. Before it starts anything it refuses a public key the server cannot
# read or that does not fit JWT_ALGORITHM, and a port in use. A key that becomes unreadable
# while the server runs answers 503, not 500. The suite itself passes whatever the caller's
# locale, time zone and umask. `make install-tools` works where systemd is not the init (a
# container), and `make run` needs neither Node.js nor npm.
#
# The checkouts are copies of this one, its files and its build (so nothing is rebuilt), under
# the suite's state directory. Every `make run` started here is stopped through its process
# group and every server it started is checked gone by PID, pass or fail (teardown_file).

load test_helper

setup_file() {
	SETUP_DIR=$COURTS_STATE/setup
	mkdir -p "$SETUP_DIR"
	chmod 755 "$SETUP_DIR"
	: >"$SETUP_DIR/runs"
	export SETUP_DIR
	# the unprivileged user: a throwaway one when we are root, else the caller itself
	UNPRIV=$(throwaway_user courts-t "$SETUP_DIR/home" "$SETUP_DIR")
	if [ "$(id -u)" -eq 0 ]; then
		AS_ROOT_CMD=
	# root's cases need root: passwordless sudo will do
	elif sudo -n true 2>/dev/null; then
		AS_ROOT_CMD="sudo -n"
	else
		AS_ROOT_CMD=none
	fi
	export UNPRIV AS_ROOT_CMD
	USER_CHECKOUT="$SETUP_DIR/home/my projects/courts"
	checkout_copy "$USER_CHECKOUT"
	[ "$(id -u)" -ne 0 ] || chown -R "$UNPRIV:" "$SETUP_DIR/home"
	# root's checkout inside a directory only root may enter, as /root is
	ROOT_CHECKOUT=$SETUP_DIR/private/courts
	if [ "$AS_ROOT_CMD" != none ]; then
		checkout_copy "$SETUP_DIR/copy"
		as_root mkdir -p "$SETUP_DIR/private"
		as_root chmod 700 "$SETUP_DIR/private"
		as_root cp -a "$SETUP_DIR/copy" "$ROOT_CHECKOUT"
		as_root chown -R root: "$ROOT_CHECKOUT"
		rm -rf "$SETUP_DIR/copy"
	fi
	export USER_CHECKOUT ROOT_CHECKOUT
}

teardown_file() {
	local pgid runner dir state pid moved=()
	while IFS='|' read -r pgid runner dir; do
		[ -n "$pgid" ] || continue
		# a group whose make run still runs in that checkout (PIDs are reused)
		if [ "$(as_root readlink "/proc/$pgid/cwd" 2>/dev/null)" = "$(as_root readlink -f "$dir")" ]; then
			signal_group "$runner" TERM "$pgid"
			wait_group_gone "$pgid" || signal_group "$runner" KILL "$pgid"
		fi
		# what an interrupted `make run` may have left running, stopped by its recorded PIDs
		as_runner "$runner" "$dir/scripts/stack.sh" stop "$dir/var" 3>&- || true
		state=$(as_root readlink -f "$dir/var")
		[[ $state != /var/lib/courts/* ]] || moved+=("$state")
	done < <(sort -u "$SETUP_DIR/runs")
	# PIDs are reused: only a process that still is the server of that state is ours
	while read -r pid state; do
		ours "$pid" "$state" || continue
		echo "# server $pid of $state was still running: killed" >&3
		as_root kill -KILL "$pid" 2>/dev/null || true
	done < <(cat "$SETUP_DIR/pids" 2>/dev/null)
	for state in "${moved[@]}"; do
		as_root rm -rf "$state"
		as_root rmdir /var/lib/courts 2>/dev/null || true
	done
	throwaway_user_remove "$SETUP_DIR"
	as_root rm -rf "$SETUP_DIR"
}

# ---- helpers ------------------------------------------------------------------------------

# checkout_copy DEST: this checkout's files (tracked and new, not ignored), its build and its
# npm packages (openapi/node_modules, installed by make install).
checkout_copy() {
	mkdir -p "$1"
	if git -C "$COURTS_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
		tree_tar "$COURTS_ROOT" | tar -C "$1" -xf -
	else
		tar -C "$COURTS_ROOT" --exclude=./var --exclude='./build*' --exclude=./bench/work \
			--exclude=./bench/express/node_modules \
			-cf - . | tar -C "$1" -xf -
	fi
	# timestamps kept: make finds the build up to date
	cp -a "$COURTS_BUILD" "$1/build"
	[ ! -d "$COURTS_ROOT/openapi/node_modules" ] || [ -d "$1/openapi/node_modules" ] ||
		cp -a "$COURTS_ROOT/openapi/node_modules" "$1/openapi/"
}

as_root() {
	case $AS_ROOT_CMD in
	'' | none) "$@" ;;
	*) $AS_ROOT_CMD "$@" ;;
	esac
}

# runner_cmd root|user: RUNNER_CMD runs a command as root, or as the unprivileged user, each
# with a fresh login's environment (Debian's PATH for it, no locale, no make variables).
runner_cmd() {
	if [ "$1" = root ]; then
		RUNNER_CMD=(env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/sh PATH=$DEBIAN_ROOT_PATH)
		case $AS_ROOT_CMD in '' | none) ;; *) RUNNER_CMD=($AS_ROOT_CMD "${RUNNER_CMD[@]}") ;; esac
	else
		local LOGIN_CMD
		login_cmd "$UNPRIV" "$SETUP_DIR/home"
		RUNNER_CMD=("${LOGIN_CMD[@]}")
	fi
}

as_runner() {
	runner_cmd "$1"
	shift
	"${RUNNER_CMD[@]}" "$@"
}

# in_checkout RUNNER DIR CMD...: CMD run by RUNNER inside the checkout DIR, as the README says.
in_checkout() {
	local runner=$1 dir=$2
	shift 2
	as_runner "$runner" sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@"
}

# signal_group RUNNER SIGNAL PGID: what Ctrl-C in a terminal does, with SIGNAL.
signal_group() {
	if [ "$1" = root ]; then as_root kill -"$2" -- "-$3"; else kill -"$2" -- "-$3"; fi 2>/dev/null
}

# need_root: root's cases (tagged needs:root) run as root, or through passwordless sudo;
# otherwise they say why (scripts/test.sh leaves them out then, and says so).
need_root() {
	[ "$AS_ROOT_CMD" != none ] ||
		skip "needs root or passwordless sudo (sudo -n true failed for $(id -un)): run make test as root to check a checkout only root may enter"
}

alive() {
	local stat
	stat=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$stat" ] && [ "${stat:0:1}" != Z ]
}

# ours PID STATE: PID runs and is a server of STATE (its command line names the directory).
ours() {
	alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

wait_group_gone() {
	local deadline=$((SECONDS + 60))
	while pgrep -g "$1" >/dev/null; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.1
	done
}

# start_run NAME RUNNER DIR [make run arguments...]: `make run` in DIR in a session of its own,
# waited for until it says it is running. Sets RUN_LOG, RUN_PGID, RUN_PORT, RUN_STATE and the
# PIDs APACHE_PID and PG_PID.
start_run() {
	local name=$1 runner=$2 dir=$3 deadline
	shift 3
	RUN_LOG=$SETUP_DIR/$name.log
	RUN_PORT=$(free_port)
	rm -f "$SETUP_DIR/$name.pgid"
	runner_cmd "$runner"
	# the session leader writes its PID: it is the group that make run and its children
	# share, as in a terminal, where Ctrl-C signals the whole group. A background job of a
	# shell without job control starts with SIGINT ignored: env gives it back its default.
	setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$SETUP_DIR/$name.pgid" \
		env --default-signal=INT "${RUNNER_CMD[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" \
		make run PORT="$RUN_PORT" MODE="$COURTS_MODE" "$@" >"$RUN_LOG" 2>&1 </dev/null 3>&- &
	deadline=$((SECONDS + 60))
	until [ -s "$SETUP_DIR/$name.pgid" ]; do
		[ $SECONDS -lt $deadline ] || { echo "make run did not start" >&2; return 1; }
		sleep 0.05
	done
	RUN_PGID=$(cat "$SETUP_DIR/$name.pgid")
	echo "$RUN_PGID|$runner|$dir" >>"$SETUP_DIR/runs"
	deadline=$((SECONDS + 180))
	until grep -q '^courts is running' "$RUN_LOG"; do
		if ! pgrep -g "$RUN_PGID" >/dev/null || [ $SECONDS -gt $deadline ]; then
			echo "make run did not say it is running:" >&2
			cat "$RUN_LOG" >&2
			return 1
		fi
		sleep 0.1
	done
	RUN_STATE=$(as_root readlink -f "$dir/var")
	APACHE_PID=$(as_root cat "$RUN_STATE/apache/run/httpd.pid")
	PG_PID=$(as_root head -n 1 "$RUN_STATE/pg/postmaster.pid")
	printf '%s %s\n' "$APACHE_PID" "$RUN_STATE" "$PG_PID" "$RUN_STATE" >>"$SETUP_DIR/pids"
	ours "$APACHE_PID" "$RUN_STATE" && ours "$PG_PID" "$RUN_STATE"
}

# stop_run RUNNER: Ctrl-C, then make run and everything it started must be gone.
stop_run() {
	signal_group "$1" INT "$RUN_PGID"
	wait_group_gone "$RUN_PGID" || { echo "make run did not end" >&2; return 1; }
	! ours "$APACHE_PID" "$RUN_STATE" || { echo "Apache $APACHE_PID still runs" >&2; return 1; }
	! ours "$PG_PID" "$RUN_STATE" || { echo "PostgreSQL $PG_PID still runs" >&2; return 1; }
	grep -q '^stopping Apache and PostgreSQL' "$RUN_LOG"
	# nothing listens on the port any more
	! (echo >"/dev/tcp/127.0.0.1/$RUN_PORT") 2>/dev/null || false
}

# make_run_refused RUNNER DIR [make run arguments...]: make run must end non-zero before it
# starts anything (the time limit only keeps a wrong pass from hanging the suite).
make_run_refused() {
	local runner=$1 dir=$2
	shift 2
	RUN_PORT=$(free_port)
	# no process group to stop, but var/ may have moved: teardown_file removes it
	echo "0|$runner|$dir" >>"$SETUP_DIR/runs"
	run in_checkout "$runner" "$dir" timeout -k 10 120 make run PORT="$RUN_PORT" \
		MODE="$COURTS_MODE" "$@" 3>&-
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	[ "$status" -ne 137 ]
	[[ "$output" != *'courts is running'* ]]
	! (echo >"/dev/tcp/127.0.0.1/$RUN_PORT") 2>/dev/null || false
}

# owner_round_trip RUNNER DIR: a token from `make -s token` inside the checkout registers a
# venue, which the owner's list then shows.
owner_round_trip() {
	local tok base=http://127.0.0.1:$RUN_PORT
	tok=$(in_checkout "$1" "$2" make -s token SUB=olivia ROLES=OWNER)
	req POST /api/owner/venues -b "$base" -t "$tok" -d '{"name":"Club Sol","street":"Calle Mayor 1",
		"city":"Madrid","country":"Spain","latitude":40.4168,"longitude":-3.7038}'
	expect 201
	req GET /api/owner/venues -b "$base" -t "$tok"
	expect 200
	[ "$(jqr '.[0].name')" = "Club Sol" ]
}

# ---- make run -----------------------------------------------------------------------------

@test "an unprivileged user with Debian's PATH runs make run from a path with a space; Ctrl-C stops it all" {
	start_run user user "$USER_CHECKOUT"
	cat "$RUN_LOG"
	# what it arranged, in one line: at least the PATH that finds apache2
	[ "$(grep -c '^setup:' "$RUN_LOG")" = 1 ]
	grep '^setup:' "$RUN_LOG" | grep -q '/usr/sbin.* added to PATH'
	# both servers run as the user
	[ "$(ps -o user:32= -p "$APACHE_PID")" = "$UNPRIV" ]
	[ "$(ps -o user:32= -p "$PG_PID")" = "$UNPRIV" ]
	req GET /actuator/health -b "http://127.0.0.1:$RUN_PORT"
	expect 200
	[ "$HTTP_BODY" = '{"status":"UP"}' ]
	owner_round_trip user "$USER_CHECKOUT"
	stop_run user
}

@test "make run needs neither Node.js nor npm: the API's description and its page come from openapi/dist" {
	local dir="$SETUP_DIR/home/no node/courts" shims=$SETUP_DIR/home/no-node-bin c
	checkout_copy "$dir"
	rm -rf "$dir/openapi/node_modules" "$dir/build/openapi"
	mkdir -p "$shims"
	for c in node npm npx; do
		printf '#!/bin/sh\necho "%s must not run: $*" >&2\nexit 1\n' "$c" >"$shims/$c"
		chmod +x "$shims/$c"
	done
	[ "$(id -u)" -ne 0 ] || chown -R "$UNPRIV:" "$SETUP_DIR/home"
	start_run no-node user "$dir" PATH="$shims:$DEBIAN_USER_PATH"
	cat "$RUN_LOG"
	! grep -q 'must not run' "$RUN_LOG" || false
	req GET /actuator/health -b "http://127.0.0.1:$RUN_PORT"
	expect 200
	req GET /api/openapi.json -b "http://127.0.0.1:$RUN_PORT"
	expect 200 application/json
	cmp -s <(printf '%s\n' "$HTTP_BODY") "$COURTS_ROOT/openapi/dist/openapi.json"
	req GET /api/docs -b "http://127.0.0.1:$RUN_PORT"
	expect 200 text/html
	req GET /api/docs/swagger-ui-bundle.js -b "http://127.0.0.1:$RUN_PORT"
	expect 200 text/javascript
	[ ! -e "$dir/openapi/node_modules" ]
	stop_run user
}

# bats test_tags=needs:root
@test "root runs make run from a checkout inside a mode-700 directory: the state moves where postgres and www-data reach it" {
	need_root
	local private=$SETUP_DIR/private dir=$ROOT_CHECKOUT
	start_run root root "$dir"
	cat "$RUN_LOG"
	# one line says where the state went and why, and that the programs are served from a copy
	[ "$(grep -c '^setup:' "$RUN_LOG")" = 1 ]
	line=$(grep '^setup:' "$RUN_LOG")
	[[ "$line" == *"state in /var/lib/courts/"*"linked from var/ (postgres cannot enter $dir)"* ]]
	[[ "$line" == *"served from a copy in $RUN_STATE/served (www-data cannot reach $dir/build)"* ]]
	# (read as root: a sudo user cannot look inside the private directory)
	[ "$(as_root readlink "$dir/var")" = "$RUN_STATE" ]
	[[ "$RUN_STATE" == /var/lib/courts/courts-* ]]
	# nothing was opened up: the directory is still root's alone
	[ "$(stat -c %a "$private")" = 700 ]
	[ "$(ps -o user:32= -p "$PG_PID")" = postgres ]
	ps -o user:32= --ppid "$APACHE_PID" | grep -qx www-data
	owner_round_trip root "$dir"
	run in_checkout root "$dir" make -s sweep
	[ "$status" -eq 0 ]
	[[ "$output" == sweep:* ]]
	stop_run root
	# a second run finds the state where the first left it, and says nothing more than the first
	start_run root-again root "$dir"
	cat "$RUN_LOG"
	[ "$(as_root readlink -f "$dir/var")" = "$RUN_STATE" ]
	[ "$(grep -c '^setup:' "$RUN_LOG")" = 1 ]
	! grep -q 'NOTICE' "$RUN_LOG" || false
	owner_round_trip root "$dir"
	# the venue of the first run is still there
	[ "$(jqr length)" = 2 ]
	stop_run root
}

@test "make run refuses a public key its user cannot read, naming the file, and starts nothing" {
	local keys=$SETUP_DIR/home/keys
	as_runner user mkdir -p "$keys"
	as_runner user openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		-out "$keys/private.pem" 2>/dev/null
	as_runner user openssl pkey -in "$keys/private.pem" -pubout -out "$keys/public.pem"
	as_runner user chmod 000 "$keys/public.pem"
	make_run_refused user "$USER_CHECKOUT" JWT_PUBLIC_KEY_FILE="$keys/public.pem"
	[ "$(grep -c '^make run:' <<<"$output")" = 1 ]
	grep -q "^make run: JWT_PUBLIC_KEY_FILE $keys/public.pem is not readable by you" <<<"$output"
}

# bats test_tags=needs:root
@test "as root, make run refuses a public key www-data cannot read (in a mode-700 directory)" {
	need_root
	local keys=$SETUP_DIR/root-keys
	as_root mkdir -p "$keys"
	as_root chmod 700 "$keys"
	as_root openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		-out "$keys/private.pem" 2>/dev/null
	as_root openssl pkey -in "$keys/private.pem" -pubout -out "$keys/public.pem"
	as_root chmod 644 "$keys/public.pem"
	make_run_refused root "$ROOT_CHECKOUT" JWT_PUBLIC_KEY_FILE="$keys/public.pem"
	[ "$(grep -c '^make run:' <<<"$output")" = 1 ]
	grep -q "^make run: JWT_PUBLIC_KEY_FILE $keys/public.pem is not readable by www-data, the user the server runs as" <<<"$output"
}

@test "make run refuses a key that is not what JWT_ALGORITHM verifies with, and an unknown algorithm" {
	local key=$COURTS_STATE/keys/jwt_public.pem
	make_run_refused user "$USER_CHECKOUT" JWT_ALGORITHM=ES256 JWT_PUBLIC_KEY_FILE="$key"
	grep -q "^make run: JWT_PUBLIC_KEY_FILE $key is not an EC P-256 key, which JWT_ALGORITHM=ES256 needs" <<<"$output"
	make_run_refused user "$USER_CHECKOUT" JWT_ALGORITHM=HS256 JWT_PUBLIC_KEY_FILE="$key"
	grep -q '^make run: JWT_ALGORITHM=HS256 is not supported' <<<"$output"
	make_run_refused user "$USER_CHECKOUT" JWT_PUBLIC_KEY_FILE="$USER_CHECKOUT/README.md"
	grep -q "^make run: JWT_PUBLIC_KEY_FILE $USER_CHECKOUT/README.md is not a PEM public key" <<<"$output"
}

@test "make run refuses a JWKS file that is missing or holds no usable key, and an unknown MODE, in one line each" {
	local dir=$SETUP_DIR/home/jwks
	as_runner user mkdir -p "$dir"
	make_run_refused user "$USER_CHECKOUT" JWT_JWKS_FILE="$dir/missing.json"
	[ "$(grep -c '^make run:' <<<"$output")" = 1 ]
	grep -q "^make run: JWT_JWKS_FILE $dir/missing.json does not exist: fetch it once with JWT_JWKS_URL=" <<<"$output"
	as_runner user sh -c "printf '{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]}' >'$dir/oct.json'"
	make_run_refused user "$USER_CHECKOUT" JWT_JWKS_FILE="$dir/oct.json"
	[ "$(grep -c '^make run:' <<<"$output")" = 1 ]
	grep -q "^make run: JWT_JWKS_FILE $dir/oct.json has no usable signing key" <<<"$output"
	make_run_refused user "$USER_CHECKOUT" MODE=fcgid
	grep -q '^MODE=fcgid is not a run mode: use cgi, fastcgi (mod_fcgid) or pool$' <<<"$output"
}

@test "make run refuses a port in use, naming it" {
	run in_checkout user "$USER_CHECKOUT" timeout -k 10 120 make run PORT="$COURTS_PORT" \
		MODE="$COURTS_MODE" 3>&-
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	[ "$(grep -c '^make run:' <<<"$output")" = 1 ]
	grep -q "^make run: port $COURTS_PORT on 127.0.0.1 is in use" <<<"$output"
	# the suite's own server still answers
	req GET /actuator/health
	expect 200
}

# ---- at run time --------------------------------------------------------------------------

@test "a key that becomes unreadable while the server runs: 503 AUTH_UNAVAILABLE, 401 without a token, and back" {
	local keys=$COURTS_STATE/runtime-key url owner
	mkdir -p "$keys"
	chmod 755 "$keys"
	cp "$JWT_PUBLIC_KEY_FILE" "$keys/public.pem"
	chmod 644 "$keys/public.pem"
	url=$(extra_apache runtime-key JWT_PUBLIC_KEY_FILE="$keys/public.pem")
	expect_log apache 'error: cannot open JWT public key .*/runtime-key/public\.pem'
	owner=$(token olivia OWNER)
	req GET /api/owner/venues -b "$url" -t "$owner"
	expect 200
	# unreadable by the programs (they run as www-data under root). Another program than
	# the one that answered: a FastCGI process that read the key keeps it, a new one cannot;
	# a pool read it at its start and hands it to every worker
	chmod 000 "$keys/public.pem"
	req GET /api/players/me -b "$url" -t "$(token ana)"
	if [ "$COURTS_MODE" = pool ]; then
		expect 200
		chmod 644 "$keys/public.pem"
		return 0
	fi
	expect_problem 503 AUTH_UNAVAILABLE
	[ "$(jqr .requestId)" = "$(header X-Request-Id)" ]
	! grep -qi 'pem\|key\|runtime' <<<"$HTTP_BODY" || false
	# no token at all is still the caller's mistake
	req GET /api/owner/venues -b "$url"
	expect_problem 401 UNAUTHORIZED
	[ -n "$(header WWW-Authenticate)" ]
	# routes without a token go on working
	req GET /api/venues -b "$url"
	expect 200
	# readable again: picked up without a restart
	chmod 644 "$keys/public.pem"
	req GET /api/players/me -b "$url" -t "$(token ana)"
	expect 200
}

# ---- the suite itself ---------------------------------------------------------------------

# suite_subset ENV...: a subset of this suite (the test that counted bytes as characters),
# started afresh from a fresh login's environment plus ENV, under umask 077.
suite_subset() {
	run env -i PATH="$(debian_path)" HOME="$HOME" MODE="$COURTS_MODE" COURTS_BUILD="$COURTS_BUILD" \
		TMPDIR="${TMPDIR:-/tmp}" "$@" bash -c 'umask 077; cd "$1" &&
		bats --tap --filter "long message" tests/41-match-create.bats' _ "$COURTS_ROOT" 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^ok 1 out-of-range numbers and a long message are 400' <<<"$output"
	! grep -q '^not ok' <<<"$output" || false
}

# One caller per mode, so that `make test` (both modes) covers both without running the
# subset four times.
@test "the suite passes for a caller with no locale and no TZ (cgi), or LC_ALL=C and a far TZ (fastcgi), under umask 077" {
	if [ "$COURTS_MODE" = cgi ]; then
		suite_subset
	else
		suite_subset LC_ALL=C TZ=Pacific/Kiritimati
	fi
}

# make install on a fresh machine whose init is not systemd (a container): Debian's pgbouncer
# package enables its service, and the step that turns it off must not fail there. The
# package tools are stand-ins that record their calls; pgbouncer is the one package missing.
@test "make install-tools turns Debian's pgbouncer service off without failing where systemd is not running" {
	local shims=$BATS_TEST_TMPDIR/shims calls=$BATS_TEST_TMPDIR/calls
	mkdir -p "$shims"
	: >"$calls"
	cat >"$shims/dpkg-query" <<-'SH'
	#!/bin/sh
	# every package installed but pgbouncer
	for last; do :; done
	[ "$last" != pgbouncer ] || exit 1
	printf 'install ok installed'
	SH
	cat >"$shims/apt-get" <<-SH
	#!/bin/sh
	echo "apt-get \$*" >>"$calls"
	SH
	cat >"$shims/systemctl" <<-SH
	#!/bin/sh
	echo "systemctl \$*" >>"$calls"
	case " \$* " in
	*" is-enabled "*) exit 0 ;;
	*" --now "*|*" stop "*)
		[ -d /run/systemd/system ] && exit 0
		echo "System has not been booted with systemd as init system (PID 1). Can't operate." >&2
		exit 1 ;;
	esac
	SH
	cat >"$shims/service" <<-SH
	#!/bin/sh
	echo "service \$*" >>"$calls"
	case "\$2" in status) exit 0 ;; esac
	SH
	chmod +x "$shims"/*
	if [ "$(id -u)" -ne 0 ]; then
		# sudo resets PATH: a stand-in that keeps it
		printf '#!/bin/sh\nexec "$@"\n' >"$shims/sudo"
		chmod +x "$shims/sudo"
	fi
	run env PATH="$shims:$PATH" make -C "$COURTS_ROOT" --no-print-directory install-tools
	echo "$output"
	cat "$calls"
	[ "$status" -eq 0 ]
	[[ "$output" == *"setup: the system's pgbouncer service left stopped and disabled"* ]]
	grep -q '^apt-get install .*pgbouncer' "$calls"
	grep -qx 'systemctl disable -q pgbouncer' "$calls"
	! grep -q -- '--now' "$calls" || false
	if [ -d /run/systemd/system ]; then
		grep -qx 'systemctl stop pgbouncer' "$calls"
	else
		grep -qx 'service pgbouncer stop' "$calls"
		! grep -q '^systemctl stop' "$calls" || false
	fi
}

@test "the build says nothing while it succeeds, the compiler's errors when it fails, and its commands with V=1" {
	local b=$BATS_TEST_TMPDIR/b
	run bash -c "cd \"\$COURTS_ROOT\" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make BUILD='$b' '$b/common/arena.o' '$b/unit/url' 2>&1"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "$output" >&2; false; }
	rm -f "$b/common/arena.o"
	run bash -c "cd \"\$COURTS_ROOT\" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make BUILD='$b' V=1 '$b/common/arena.o' 2>&1"
	[ "$status" -eq 0 ]
	[[ $output == *"-Werror"*"-c -o $b/common/arena.o common/arena.c"* ]]
	# a compiler that fails (one that says what a real one says): its words, and make's line
	printf '#!/bin/sh\necho "common/arena.c:1:1: error: nope undeclared" >&2\nexit 1\n' \
		>"$BATS_TEST_TMPDIR/cc"
	chmod +x "$BATS_TEST_TMPDIR/cc"
	rm -f "$b/common/arena.o"
	run bash -c "cd \"\$COURTS_ROOT\" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make BUILD='$b' CC='$BATS_TEST_TMPDIR/cc' '$b/common/arena.o' 2>&1"
	[ "$status" -ne 0 ]
	[[ $output == *"common/arena.c:1:1: error: nope undeclared"*"Error 1"* ]]
}
