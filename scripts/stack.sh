#!/usr/bin/env bash
# stack.sh: start and stop the private PostgreSQL cluster and Apache of one state directory.
#
#   scripts/stack.sh check STATE_DIR PORT                  (what `make run` checks first)
#   scripts/stack.sh start STATE_DIR PORT MODE BUILD_DIR   (MODE: cgi, fastcgi or pool)
#   scripts/stack.sh stop  STATE_DIR
#
# STATE_DIR gets pg/ (cluster), pgsock/ (Unix socket), keys/, apache/ (config run dir, logs),
# and served/ when the server's user cannot reach the programs where they were built.
# Everything listens on 127.0.0.1 or a Unix socket only; stop kills by the recorded PIDs.
# Exports nothing: it writes STATE_DIR/env, which callers source. start says in one line
# "setup: ..." what it arranged beyond the usual (with COURTS_SETUP_NOTES from its caller).
set -euo pipefail
# the servers' users read what is made here: its modes must not depend on the caller's umask
umask 022

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
courts_path

# The cluster's settings: pg/courts.conf, included last by postgresql.conf and rewritten at
# every start, so the socket follows the state directory (which may have moved), and sessions
# that choose no time zone get UTC whatever the zone of whoever ran initdb.
pg_conf() {
	local state=$1 conf=$1/pg/postgresql.conf
	grep -qx "include_if_exists = 'courts.conf'" "$conf" ||
		echo "include_if_exists = 'courts.conf'" >>"$conf"
	cat >"$state/pg/courts.conf" <<-CONF
	# written by scripts/stack.sh at every start
	listen_addresses = ''
	port = 5432
	unix_socket_directories = '"${state//\'/\'\'}/pgsock"'
	unix_socket_permissions = 0777
	max_connections = 200
	shared_buffers = ${PG_SHARED_BUFFERS:-128MB}
	fsync = ${PG_FSYNC:-on}
	synchronous_commit = ${PG_SYNC_COMMIT:-on}
	log_min_messages = warning
	timezone = 'UTC'
	CONF
	pgbr_conf "$state"
	pg_owner "$state/pg/courts.conf"
}

# Continuous archiving (docs/operations.md, "Backups"): with PG_ARCHIVE=1 every finished WAL
# segment is pushed by pgBackRest to the repository of STATE/pgbackrest/pgbackrest.conf
# (stanza courts), so that a backup and the WAL after it restore the database to any time
# since. `make run` turns it on; the suite's clusters leave it off (they reset their tables
# thousands of times) unless a test asks for it. archive_mode takes a restart: it is decided
# when the cluster starts. The configuration is written at every start, as courts.conf is:
# the state directory may have moved.
pgbr_conf() {
	local state=$1 dir=$1/pgbackrest repo conf
	repo=${BACKUP_REPO:-$state/backup}
	conf=$dir/pgbackrest.conf
	path_ok "the backup repository" "$repo"
	mkdir -p "$dir" "$dir/lock" "$state/log/pgbackrest" "$repo"
	cat >"$conf" <<-CONF
	# written by scripts/stack.sh at every start (docs/operations.md, "Backups")
	[global]
	repo1-path=$repo
	repo1-retention-full=${BACKUP_RETENTION_FULL:-2}
	start-fast=y
	log-path=$state/log/pgbackrest
	lock-path=$dir/lock
	log-level-console=warn

	[courts]
	pg1-path=$state/pg
	pg1-socket-path=$state/pgsock
	pg1-port=5432
	pg1-user=postgres
	CONF
	chmod 700 "$repo"
	pg_owner "$dir" "$state/log/pgbackrest"
	# the repository's files are PostgreSQL's user's, whoever made the directory
	if is_root && [ "$(stat -c %U "$repo")" != postgres ]; then chown -R postgres:postgres "$repo"; fi
	if [ "${PG_ARCHIVE:-0}" = 1 ]; then
		cat >>"$state/pg/courts.conf" <<-CONF
		archive_mode = on
		archive_command = 'pgbackrest "--config=${conf//\'/\'\'}" --stanza=courts archive-push %p'
		archive_timeout = ${PG_ARCHIVE_TIMEOUT:-300}
		CONF
	else
		echo "archive_mode = off" >>"$state/pg/courts.conf"
	fi
}

pg_start() {
	local state=$1 bin
	bin=$(pg_bin)
	mkdir -p "$state/pg" "$state/pgsock" "$state/log"
	chmod 755 "$state" "$state/pgsock"
	chmod 700 "$state/pg"
	pg_owner "$state/pg" "$state/pgsock"
	touch "$state/log/postgresql.log"
	pg_owner "$state/log/postgresql.log"
	if [ ! -f "$state/pg/PG_VERSION" ]; then
		as_pg "$bin/initdb" -D "$state/pg" -U postgres --auth-local=trust \
			--auth-host=reject -E UTF8 --locale=C.UTF-8 >"$state/log/initdb.log" 2>&1 \
			|| { cat "$state/log/initdb.log" >&2; exit 1; }
	fi
	pg_conf "$state"
	if ! as_pg "$bin/pg_ctl" -D "$state/pg" -l "$state/log/postgresql.log" -w -t 60 start \
		>/dev/null; then
		cat "$state/log/postgresql.log" >&2
		exit 1
	fi
	# a restored data directory (scripts/backup.sh restore) replays WAL up to its target and
	# then promotes itself: it takes writes only after that
	local deadline=$((SECONDS + 600))
	until [ "$(as_pg "$bin/psql" -X -h "$state/pgsock" -U postgres -d postgres -qtAc \
		"SELECT pg_is_in_recovery()")" = f ]; do
		if [ $SECONDS -gt $deadline ]; then
			echo "stack: the cluster of $state is still recovering after 10 minutes" >&2
			tail -n 20 "$state/log/postgresql.log" >&2
			exit 1
		fi
		sleep 0.2
	done
	# the stanza exists before the first segment is archived (idempotent)
	if [ "${PG_ARCHIVE:-0}" = 1 ]; then
		as_pg pgbackrest "--config=$state/pgbackrest/pgbackrest.conf" --stanza=courts \
			stanza-create >"$state/log/stanza-create.log" 2>&1 ||
			{ cat "$state/log/stanza-create.log" >&2; exit 1; }
	fi
	as_pg "$bin/psql" -X -h "$state/pgsock" -U postgres -d postgres -qtAc \
		"SELECT 1 FROM pg_roles WHERE rolname = 'courts'" | grep -q 1 ||
		as_pg "$bin/psql" -X -h "$state/pgsock" -U postgres -d postgres -q \
			-c "CREATE ROLE courts LOGIN" -c "CREATE DATABASE courts OWNER courts"
	# the programs log each failure of theirs once, with its request id (common/sql.c); a
	# refusal such as SLOT_TAKEN is an answer, not an error of the server's. So the server's
	# own log keeps the app role's FATALs only, and everything else of every other role.
	as_pg "$bin/psql" -X -h "$state/pgsock" -U postgres -d postgres -q \
		-c "ALTER ROLE courts SET log_min_messages TO fatal"
	# extensions need a superuser; created here so migrations run as the app role. A re-run
	# finds them: no NOTICE about it.
	as_pg "$bin/psql" -X -h "$state/pgsock" -U postgres -d courts -q \
		-c "SET client_min_messages TO warning" \
		-c "CREATE EXTENSION IF NOT EXISTS cube" \
		-c "CREATE EXTENSION IF NOT EXISTS earthdistance" \
		-c "CREATE EXTENSION IF NOT EXISTS btree_gist" >/dev/null
}

# A streaming replica of the cluster of STATE in REPLICA (pg_basebackup -R: a hot standby
# that follows the primary), with its own Unix socket REPLICA/pgsock; started again as it was
# when REPLICA already holds one. Prints its conninfo, for DATABASE_READ_URL.
replica_start() {
	local state=$1 r=$2 bin
	bin=$(pg_bin)
	mkdir -p "$r/pg" "$r/pgsock" "$r/log"
	chmod 755 "$r" "$r/pgsock"
	chmod 700 "$r/pg"
	touch "$r/log/postgresql.log"
	pg_owner "$r/pg" "$r/pgsock" "$r/log/postgresql.log"
	# REPLICA_NAME: the standby's name to the primary (its application_name, which
	# synchronous_standby_names lists) and its replication slot's, made with it, so that the
	# primary keeps the WAL it has not received while it is stopped (bench/run.sh)
	local named=()
	[ -z "${REPLICA_NAME:-}" ] ||
		named=(-d "application_name=$REPLICA_NAME" -C -S "$REPLICA_NAME")
	if [ ! -f "$r/pg/PG_VERSION" ]; then
		as_pg "$bin/pg_basebackup" -h "$state/pgsock" -U postgres "${named[@]}" -D "$r/pg" -R \
			-X stream -c fast >"$r/log/basebackup.log" 2>&1 ||
			{ cat "$r/log/basebackup.log" >&2; exit 1; }
	fi
	pg_conf "$r"
	if ! as_pg "$bin/pg_ctl" -D "$r/pg" -l "$r/log/postgresql.log" -w -t 60 start >/dev/null; then
		cat "$r/log/postgresql.log" >&2
		exit 1
	fi
	echo "host='${r//\'/\\\'}/pgsock' port=5432 dbname=courts user=courts"
}

pg_stop() {
	local state=$1
	[ -f "$state/pg/postmaster.pid" ] || return 0
	as_pg "$(pg_bin)/pg_ctl" -D "$state/pg" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}

keys_make() {
	local keys=$1
	mkdir -p "$keys"
	if [ ! -f "$keys/jwt_private.pem" ]; then
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
			-out "$keys/jwt_private.pem" 2>/dev/null
		openssl pkey -in "$keys/jwt_private.pem" -pubout -out "$keys/jwt_public.pem"
	fi
	# the server's user reads the public key; only whoever mints tokens reads the private one
	chmod 600 "$keys/jwt_private.pem"
	chmod 644 "$keys/jwt_public.pem"
	chmod 755 "$keys"
}

# PGBOUNCER set: a pgbouncer of this state directory in transaction mode between the programs
# and the database, on a Unix socket only (STATE/pgbsock), started after PostgreSQL and
# stopped before it. A plain CGI then gets a pooled server session instead of forking a
# PostgreSQL backend per request. The programs get its DATABASE_URL and DB_PREPARE=0
# (prepared statements live in a server session, which a transaction pooler hands from client
# to client); what their libpq "options" would have set, each server session gets from here.
# $1 STATE, $2 the conninfo of the database (key=value form).
pgb_start() {
	local state=$1 target=$2 dir=$1/pgbouncer q
	command -v pgbouncer >/dev/null || { echo "stack: PGBOUNCER is set but pgbouncer is missing (make install)" >&2; exit 1; }
	mkdir -p "$dir" "$state/pgbsock"
	chmod 755 "$state/pgbsock"
	q="'${state//\'/\\\'}/pgbsock'"
	echo '"courts" ""' >"$dir/userlist.txt"
	cat >"$dir/pgbouncer.ini" <<-INI
	; written by scripts/stack.sh at every start
	[databases]
	courts = $target timezone=UTC connect_query='SET statement_timeout = 15000'
	[pgbouncer]
	listen_addr =
	listen_port = 6432
	unix_socket_dir = $state/pgbsock
	unix_socket_mode = 0777
	auth_type = trust
	auth_file = $dir/userlist.txt
	pool_mode = transaction
	max_client_conn = 500
	default_pool_size = ${PGBOUNCER_POOL_SIZE:-16}
	ignore_startup_parameters = extra_float_digits, options
	logfile = $state/log/pgbouncer.log
	pidfile = $dir/pgbouncer.pid
	log_connections = 0
	log_disconnections = 0
	log_stats = 0
	; SHOW STATS for the tests and the bench, on its admin database "pgbouncer"
	stats_users = courts
	INI
	# it refuses to run as root: as PostgreSQL's user then
	is_root && chown -R "$(pg_user)" "$dir" "$state/pgbsock"
	touch "$state/log/pgbouncer.log"
	is_root && chown "$(pg_user)" "$state/log/pgbouncer.log"
	if ! as_user "$(pg_user)" pgbouncer -d -q "$dir/pgbouncer.ini"; then
		cat "$state/log/pgbouncer.log" >&2
		exit 1
	fi
	local deadline=$((SECONDS + 20))
	until [ -S "$state/pgbsock/.s.PGSQL.6432" ]; do
		if [ $SECONDS -gt $deadline ]; then
			echo "stack: pgbouncer did not open its socket" >&2
			cat "$state/log/pgbouncer.log" >&2
			exit 1
		fi
		sleep 0.05
	done
	export DATABASE_URL="host=$q port=6432 dbname=courts user=courts" DB_PREPARE=0
}

# (pgbouncer takes SIGTERM as an immediate shutdown: its clients are disconnected)
pgb_stop() {
	pidfile_stop "$1/pgbouncer/pgbouncer.pid"
}

# The programs and apache/ where the server's user can reach them: in place when it can, or
# else a copy in STATE/served (a checkout under a directory only its owner may enter, such as
# /root, or one built under umask 077). mod_fcgid splits the program's path at white space, so
# under FastCGI the programs must also live in a path without any. Sets srv_root and srv_bin.
serve_prepare() {
	local state=$1 build=$2 mode=$3 user why
	user=$(web_user)
	srv_root=$root srv_bin=$build
	if serve_reachable "$user" "$srv_root" "$srv_bin"; then
		[ "$mode" = fastcgi ] && [[ $srv_bin == *[[:space:]]* ]] || return 0
		why="mod_fcgid cannot start programs from a path with a space"
	else
		why="$user cannot reach $build"
	fi
	if [ "$mode" = fastcgi ] && [[ $state == *[[:space:]]* ]]; then
		echo "stack: $why, and the state directory $state has one too: use a state directory without a space" >&2
		exit 1
	fi
	rm -rf "$state/served"
	mkdir -p "$state/served/build"
	cp -R "$build/cgi-bin" "$state/served/build/"
	# the Apache modules (httpd.conf loads them from the build directory)
	[ ! -d "$build/apache" ] || cp -R "$build/apache" "$state/served/build/"
	# the API's description and its page (courts.conf serves them from the build directory)
	[ ! -d "$build/openapi" ] || cp -R "$build/openapi" "$state/served/build/"
	cp -R "$root/apache" "$state/served/"
	chmod -R a+rX,go-w "$state/served"
	srv_root=$state/served srv_bin=$state/served/build
	if ! serve_reachable "$user" "$srv_root" "$srv_bin"; then
		echo "stack: $user (the server's user) cannot run the programs in $srv_bin either: let $user enter $state" >&2
		exit 1
	fi
	setup_note "programs and apache/ served from a copy in $state/served ($why)"
}

serve_reachable() {
	local user=$1 dir=$2 bin=$3 prog
	can "$user" -r "$dir/apache/errors/500.json" || return 1
	for prog in "$bin"/cgi-bin/*.cgi; do
		can "$user" -x "$prog" || return 1
	done
}

# Both servers' users must enter the state directory: sockets, logs and keys live there.
state_reachable() {
	local state=$1 user
	for user in $(pg_user) $(web_user); do
		can "$user" -x "$state" && continue
		echo "stack: $user cannot enter $state: use a state directory under directories every user may enter (for the tests: TMPDIR)" >&2
		exit 1
	done
}

# alive PID: the process exists and is not a zombie waiting for a parent that may never reap it
alive() {
	kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]
}

# pidfile_stop PIDFILE: SIGTERM to the process it names, SIGKILL after 10 s, the file removed;
# nothing when there is no such file
pidfile_stop() {
	local pid deadline
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 10))
	while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$1"
}

# pool mode: every program runs its own supervised set of FastCGI workers on a Unix socket
# (FCGI_LISTEN), which Apache reaches through mod_proxy_fcgi; as www-data when we are root.
pool_start() {
	local state=$1 prog name dir=$1/apache/run/pool as=()
	mkdir -p "$dir"
	if is_root; then
		chown www-data:www-data "$dir"
		as=(setpriv --reuid=www-data --regid=www-data --init-groups)
	fi
	for prog in "$srv_bin"/cgi-bin/*.cgi; do
		name=$(basename "$prog" .cgi)
		FCGI_LISTEN="$dir/$name.sock" FCGI_WORKERS=${FCGI_WORKERS:-4} \
			"${as[@]}" "$prog" >>"$state/apache/logs/error.log" 2>&1 </dev/null &
		echo $! >"$dir/$name.pid"
	done
	local deadline=$((SECONDS + 20))
	for prog in "$srv_bin"/cgi-bin/*.cgi; do
		name=$(basename "$prog" .cgi)
		until [ -S "$dir/$name.sock" ]; do
			if [ $SECONDS -gt $deadline ]; then
				echo "stack: the $name pool did not open its socket" >&2
				exit 1
			fi
			sleep 0.05
		done
	done
}

pool_stop() {
	local pidfile
	for pidfile in "$1"/apache/run/pool/*.pid; do
		pidfile_stop "$pidfile"
	done
}

# mod_fcgid: the token of the warm-up requests (common/http.c, serve_warm), new at every
# start of the Apache of STATE, handed to the programs with the other settings
fcgid_token() {
	local dir=$1/apache t
	t=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	(umask 077 && printf '%s\n' "$t" >"$dir/warm.token")
	printf 'FcgidInitialEnv COURTS_FCGID_WARM_TOKEN "%s"\n' "$t" >>"$dir/env-fcgid.conf"
}

# fcgid_count STATE PROGRAM: how many processes of PROGRAM (public, for public.cgi) mod_fcgid
# runs for the Apache of STATE (children of its process manager, a child of the master)
fcgid_count() {
	local master
	master=$(cat "$1/apache/run/httpd.pid")
	ps -eo pid=,ppid=,args= | awk -v m="$master" -v exe="/cgi-bin/$2.cgi" '
		{ parent[$1] = $2; cmd = $0; sub(/^ *[0-9]+ +[0-9]+ /, "", cmd); args[$1] = cmd }
		END {
			for (p in args)
				if (substr(args[p], length(args[p]) - length(exe) + 1) == exe &&
				    parent[parent[p]] == m)
					n++
			print n + 0
		}'
}

# fcgid_warm STATE PORT [PROGRAM...]: mod_fcgid given FCGID_PROCESSES processes (16, as
# FcgidMinProcessesPerClass keeps) of every program, or of those named, before the first
# burst finds too few of them and each request beyond waits a second (common/http.c,
# serve_warm). As many warm-up requests at once as processes wanted, each held 3 s by the
# process it reached: the requests that sleep meanwhile find none free and have one started.
# A process of mod_fcgid is started one at a time, so a round can end a few short; the next
# round holds those there and starts the rest. Says what it reached when it is short.
fcgid_warm() {
	local state=$1 port=$2 n=${FCGID_PROCESSES:-16} token prog path round i short
	shift 2
	[ $# -gt 0 ] || set -- health owner admin public search requests invitations players payments
	token=$(cat "$state/apache/warm.token")
	for round in 1 2 3; do
		short=()
		for prog; do
			[ "$(fcgid_count "$state" "$prog")" -ge "$n" ] && continue
			short+=("$prog")
			case $prog in
			health) path=/actuator/health ;;
			owner) path=/api/owner/venues ;;
			admin) path=/api/admin/venues ;;
			public) path=/api/venues ;;
			search) path=/api/match/search ;;
			requests) path=/api/match/requests ;;
			invitations) path=/api/match/invitations ;;
			players) path=/api/players/me ;;
			payments) path=/api/payments/webhook ;;
			*) echo "stack: no program $prog to warm up" >&2; return 2 ;;
			esac
			for i in $(seq "$n"); do
				curl -s -o /dev/null --max-time 30 -H "X-Courts-Warm-Up: $token" \
					"http://127.0.0.1:$port$path" &
			done
		done
		[ ${#short[@]} -gt 0 ] || return 0
		wait
		set -- "${short[@]}"
	done
	for prog; do
		i=$(fcgid_count "$state" "$prog")
		[ "$i" -ge "$n" ] || echo "stack: mod_fcgid runs $i processes of $prog.cgi, not $n" >&2
	done
}

# Apache runs the programs of srv_bin (serve_prepare) as the server's user.
apache_start() {
	local state=$1 port=$2 mode=$3 defines=()
	mkdir -p "$state/apache/run" "$state/apache/logs" "$state/apache/htdocs"
	chmod 755 "$state/apache"
	write_env_conf "$state/apache"
	if [ "$mode" = fastcgi ]; then
		defines+=(-D FASTCGI)
		fcgid_token "$state"
	fi
	if [ "$mode" = pool ]; then
		defines+=(-D FCGIPOOL)
		pool_start "$state"
	fi
	is_root && defines+=(-D RUN_AS_WWW_DATA)
	# tests: shorter read deadlines, and the /courts-test/status/NNN route (httpd.conf)
	[ -n "${APACHE_HEADER_TIMEOUT:-}" ] && defines+=(-C "Define COURTS_HEADER_TIMEOUT $APACHE_HEADER_TIMEOUT")
	[ -n "${APACHE_BODY_TIMEOUT:-}" ] && defines+=(-C "Define COURTS_BODY_TIMEOUT $APACHE_BODY_TIMEOUT")
	[ -n "${COURTS_TEST_STATUS:-}" ] && defines+=(-D COURTS_TEST_STATUS)
	# mod_fcgid's idle timeout and how often it looks (the benchmark's burst after idle)
	[ -n "${FCGID_IDLE_TIMEOUT:-}" ] && defines+=(-C "Define COURTS_FCGID_IDLE_TIMEOUT $FCGID_IDLE_TIMEOUT")
	[ -n "${FCGID_IDLE_SCAN:-}" ] && defines+=(-C "Define COURTS_FCGID_IDLE_SCAN $FCGID_IDLE_SCAN")
	# per address limits (limits.conf); loopback is exempt unless ADDR_LIMIT_LOOPBACK is set
	[ -n "${ADDR_CONCURRENT:-}" ] && defines+=(-C "Define COURTS_ADDR_CONCURRENT $ADDR_CONCURRENT")
	[ -n "${ADDR_PER_MINUTE:-}" ] && defines+=(-C "Define COURTS_ADDR_PER_MINUTE $ADDR_PER_MINUTE")
	[ -n "${ADDR_ENTRIES:-}" ] && defines+=(-C "Define COURTS_ADDR_ENTRIES $ADDR_ENTRIES")
	[ -n "${ADDR_LIMIT_LOOPBACK:-}" ] && defines+=(-D COURTS_ADDR_LIMIT_LOOPBACK)
	# the master reads the configuration as the caller; the paths it hands on are quoted
	local args=(-f "$root/apache/httpd.conf"
		-C "Define COURTS_ROOT \"$srv_root\""
		-C "Define COURTS_BIN \"$srv_bin\""
		-C "Define COURTS_STATE \"$state/apache\""
		-C "Define COURTS_LISTEN 127.0.0.1:$port"
		"${defines[@]}")
	echo "${args[*]}" >"$state/apache/args"
	printf '%q ' "${args[@]}" >"$state/apache/args.q"	# for graceful
	if ! apache2 "${args[@]}" -k start; then
		cat "$state/apache/logs/error.log" >&2 2>/dev/null || true
		exit 1
	fi
	local deadline=$((SECONDS + 20))
	until curl -s -o /dev/null "http://127.0.0.1:$port/actuator/info"; do
		if [ $SECONDS -gt $deadline ]; then
			echo "stack: Apache did not answer on 127.0.0.1:$port" >&2
			cat "$state/apache/logs/error.log" >&2 2>/dev/null || true
			exit 1
		fi
		sleep 0.1
	done
	# FCGID_WARM=1 (`make run`, the benchmark): every program's processes started at once,
	# or FCGID_WARM="public search" for those
	if [ "$mode" = fastcgi ] && [ -n "${FCGID_WARM:-}" ]; then
		if [ "$FCGID_WARM" = 1 ]; then
			fcgid_warm "$state" "$port"
		else
			# shellcheck disable=SC2086
			fcgid_warm "$state" "$port" $FCGID_WARM
		fi
	fi
}

apache_stop() {
	local state=$1 pid deadline
	# Apache first, so that no request is handed to a pool that is stopping
	if [ ! -f "$state/apache/run/httpd.pid" ]; then
		pool_stop "$state"
		return 0
	fi
	pid=$(cat "$state/apache/run/httpd.pid")
	kill -TERM "$pid" 2>/dev/null || true
	# Apache gives its children up to 10 s; one of them can sit in mod_fcgid's wait for a
	# process (a second per try, up to a minute) once mod_fcgid's process manager is gone.
	# After 4 s the rest of the server's process group (the master leads it) is killed.
	deadline=$((SECONDS + 4))
	while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
	if alive "$pid"; then
		if [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ]; then
			kill -KILL -- "-$pid" 2>/dev/null || true
		else
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$state/apache/run/httpd.pid"
	pool_stop "$state"
}

# Settings the CGI programs read (common/config.c); only those set are handed to Apache.
CONFIG_VARS="DATABASE_URL DATABASE_READ_URL JWT_PUBLIC_KEY_FILE JWT_JWKS_FILE JWT_ISSUER JWT_AUDIENCE JWT_ALGORITHM JWT_ROLES_CLAIM
DEFAULT_TIMEZONE BASE_PATH PUBLIC_URL PAYMENT_HOLD_SECONDS CHECKIN_RADIUS_M CHECKIN_MAX_ACCURACY_M
MIN_RELIABILITY DB_PREPARE MAX_UNPAID_HOLDS MAX_PENDING_VENUES WRITE_BUDGET_PER_MINUTE
WRITE_BUDGET_BURST PAYMENT_PROVIDER STRIPE_SECRET_KEY STRIPE_WEBHOOK_SECRET STRIPE_API_BASE
PAYMENT_PROVIDER_TIMEOUT_SECONDS FCGID_CONCURRENCY"

write_env_conf() {
	local dir=$1 v val
	: >"$dir/env.conf"
	: >"$dir/env-fcgid.conf"
	for v in $CONFIG_VARS; do
		[ -n "${!v:-}" ] || continue
		val=${!v//\\/\\\\}
		val=${val//\"/\\\"}
		printf 'SetEnv %s "%s"\n' "$v" "$val" >>"$dir/env.conf"
		printf 'FcgidInitialEnv %s "%s"\n' "$v" "$val" >>"$dir/env-fcgid.conf"
	done
}

write_env() {
	local state=$1 port=$2 host
	# a connection string value in single quotes holds spaces; a quote in it is \'
	host="'${state//\'/\\\'}/pgsock'"
	cat >"$state/env" <<-ENV
	export DATABASE_URL="host=$host port=5432 dbname=courts user=courts"
	export PSQL_ADMIN="host=$host port=5432 dbname=courts user=postgres"
	export JWT_PUBLIC_KEY_FILE="\${JWT_PUBLIC_KEY_FILE:-$state/keys/jwt_public.pem}"
	export JWT_PRIVATE_KEY_FILE="$state/keys/jwt_private.pem"
	export BASE_URL="http://127.0.0.1:$port"
	export PG_BIN="$(pg_bin)"
	ENV
}

# ---- what `make run` checks before it starts anything: one line per problem, naming the file
# or setting and how to fix it ----------------------------------------------------------------

check_port() {
	local port=$1
	case $port in
	'' | *[!0-9]*)
		echo "make run: PORT=$port is not a port number: e.g. make run PORT=8080"
		return 1
		;;
	esac
	if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "make run: port $port on 127.0.0.1 is in use: stop what listens there, or choose another port, e.g. make run PORT=$((port + 1))"
		return 1
	fi
}

# The server's user must read the key, and it must be what JWT_ALGORITHM verifies with.
check_key() {
	local key=$1 alg=$2 user who text got
	user=$(web_user)
	if is_root; then who="$user, the user the server runs as"; else who="you (the server runs as you)"; fi
	case $alg in
	RS256 | ES256) ;;
	*)
		echo "make run: JWT_ALGORITHM=$alg is not supported: set RS256 (the default) or ES256"
		return 1
		;;
	esac
	if [ ! -e "$key" ]; then
		echo "make run: JWT_PUBLIC_KEY_FILE $key does not exist: set JWT_PUBLIC_KEY_FILE to the identity provider's PEM public key, or unset it for the development key"
		return 1
	fi
	if ! can "$user" -r "$key"; then
		echo "make run: JWT_PUBLIC_KEY_FILE $key is not readable by $who: make it readable (chmod a+r) in directories $user may enter, or copy it somewhere $user can read"
		return 1
	fi
	if ! grep -q -- '-----BEGIN PUBLIC KEY-----' "$key" ||
		! text=$(as_user "$user" openssl pkey -pubin -in "$key" -noout -text_pub 2>/dev/null); then
		echo "make run: JWT_PUBLIC_KEY_FILE $key is not a PEM public key (-----BEGIN PUBLIC KEY-----): give the identity provider's public key"
		return 1
	fi
	if grep -q '^Modulus:' <<<"$text"; then
		got=RSA
	elif grep -qE '^NIST CURVE: P-256$' <<<"$text"; then
		got=P-256
	else
		got=other
	fi
	case $alg:$got in
	RS256:RSA | ES256:P-256) return 0 ;;
	RS256:*) echo "make run: JWT_PUBLIC_KEY_FILE $key is not an RSA key, which JWT_ALGORITHM=RS256 needs: give the RSA public key, or set JWT_ALGORITHM to the key's algorithm (ES256 for P-256)" ;;
	ES256:*) echo "make run: JWT_PUBLIC_KEY_FILE $key is not an EC P-256 key, which JWT_ALGORITHM=ES256 needs: give the P-256 public key, or set JWT_ALGORITHM=RS256 for an RSA key" ;;
	esac
	return 1
}

# With JWT_JWKS_FILE, the server's user must read it and it must hold a usable key, as the
# programs read it (the refresher's --check); JWT_PUBLIC_KEY_FILE is not used then.
check_jwks() {
	local file=$1 refresher=$2 user who why
	user=$(web_user)
	if is_root; then who="$user, the user the server runs as"; else who="you (the server runs as you)"; fi
	if [ ! -e "$file" ]; then
		echo "make run: JWT_JWKS_FILE $file does not exist: fetch it once with JWT_JWKS_URL=... JWT_JWKS_FILE=$file $refresher, or unset JWT_JWKS_FILE"
		return 1
	fi
	if ! can "$user" -r "$file"; then
		echo "make run: JWT_JWKS_FILE $file is not readable by $who: make it readable (chmod a+r) in directories $user may enter"
		return 1
	fi
	if ! why=$("$refresher" --check "$file" 2>&1 >/dev/null); then
		echo "make run: JWT_JWKS_FILE ${why:-$file cannot be checked}"
		return 1
	fi
}

# The payment provider's settings (common/payment.h): none, or stripe with its key, its
# webhook secrets and an API base it can call.
check_payments() {
	local s
	case ${PAYMENT_PROVIDER:-none} in
	none) return 0 ;;
	stripe) ;;
	*)
		echo "make run: PAYMENT_PROVIDER=$PAYMENT_PROVIDER is not supported: set none (the default: no money taken online) or stripe"
		return 1
		;;
	esac
	case ${STRIPE_SECRET_KEY:-} in
	sk_test_?* | sk_live_?* | rk_test_?* | rk_live_?*) ;;
	*)
		echo "make run: PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY, the account's secret key (sk_test_... in test mode, sk_live_...) from Stripe's dashboard, Developers > API keys"
		return 1
		;;
	esac
	if [ -z "${STRIPE_WEBHOOK_SECRET:-}" ]; then
		echo "make run: PAYMENT_PROVIDER=stripe needs STRIPE_WEBHOOK_SECRET, the signing secret (whsec_...) of the webhook endpoint .../api/payments/stripe/webhook in Stripe's dashboard; several, comma-separated, while one is rolled"
		return 1
	fi
	for s in ${STRIPE_WEBHOOK_SECRET//,/ }; do
		case $s in
		whsec_?*) ;;
		*)
			echo "make run: STRIPE_WEBHOOK_SECRET holds '$s', which is not a webhook signing secret (whsec_...)"
			return 1
			;;
		esac
	done
	case ${STRIPE_API_BASE:-https://api.stripe.com} in
	https://?* | http://127.0.0.1:* | http://localhost:*) ;;
	*)
		echo "make run: STRIPE_API_BASE=$STRIPE_API_BASE is not an https:// URL (plain http only on this machine)"
		return 1
		;;
	esac
	case ${PAYMENT_PROVIDER_TIMEOUT_SECONDS:-10} in
	[1-9] | [1-5][0-9] | 60) ;;
	*)
		echo "make run: PAYMENT_PROVIDER_TIMEOUT_SECONDS=$PAYMENT_PROVIDER_TIMEOUT_SECONDS is not a whole number of seconds from 1 to 60 (below Apache's own timeout)"
		return 1
		;;
	esac
}

# abs DIR: DIR as an absolute path (created when missing).
abs() {
	mkdir -p "$1"
	(cd "$1" && pwd)
}

case "${1:-}" in
check)
	state=$(abs "$2") port=$3
	path_ok "the state directory" "$state"
	keys_make "$state/keys"
	ok=0
	check_port "$port" >&2 || ok=1
	if [ -n "${JWT_JWKS_FILE:-}" ]; then
		check_jwks "$JWT_JWKS_FILE" "$(cd "$root" && cd "${BUILD:-build}" && pwd)/cron/jwks-refresh" >&2 ||
			ok=1
	else
		check_key "${JWT_PUBLIC_KEY_FILE:-$state/keys/jwt_public.pem}" "${JWT_ALGORITHM:-RS256}" >&2 ||
			ok=1
	fi
	check_payments >&2 || ok=1
	exit $ok
	;;
start)
	state=$(abs "$2") port=$3 mode=$4 build=$(cd "$5" && pwd)
	path_ok "the state directory" "$state"
	path_ok "the build directory" "$build"
	path_ok "the project directory" "$root"
	# nothing below uses a relative path; the servers' users need not enter the caller's
	cd /
	[ -z "${COURTS_SETUP_NOTES:-}" ] || SETUP_NOTES=("$COURTS_SETUP_NOTES" "${SETUP_NOTES[@]}")
	mkdir -p "$state/log"
	chmod 755 "$state"
	state_reachable "$state"
	keys_make "$state/keys"
	write_env "$state" "$port"
	serve_prepare "$state" "$build" "$mode"
	setup_say ""
	if [ -z "${EXTERNAL_DATABASE_URL:-}" ]; then
		pg_start "$state"
		# shellcheck disable=SC1091
		. "$state/env"
	else
		export DATABASE_URL=$EXTERNAL_DATABASE_URL
		sed -i "s|^export DATABASE_URL=.*|export DATABASE_URL=\"$EXTERNAL_DATABASE_URL\"|" "$state/env"
	fi
	# UPGRADE_FROM=REV: the database is first migrated as REV's own scripts/migrate.sh and
	# sql/ made it (the suite proves an upgrade that way, tests/setup_suite.bash)
	: >"$state/log/migrate.log"
	if [ -n "${UPGRADE_FROM:-}" ]; then
		rm -rf "$state/upgrade-from"
		mkdir -p "$state/upgrade-from"
		{ git -C "$root" archive "$UPGRADE_FROM" sql scripts/migrate.sh |
			tar -x -C "$state/upgrade-from" &&
			"$state/upgrade-from/scripts/migrate.sh" "$DATABASE_URL"; } >>"$state/log/migrate.log" 2>&1 ||
			{ cat "$state/log/migrate.log" >&2; exit 1; }
	fi
	"$here/migrate.sh" "$DATABASE_URL" >>"$state/log/migrate.log" 2>&1 ||
		{ cat "$state/log/migrate.log" >&2; exit 1; }
	# the sweeper's first run, as cron's would be: it keeps the search's free slots from
	# yesterday to 14 days ahead (a new database has none yet)
	"$build/cron/sweep" >>"$state/log/migrate.log" 2>&1 ||
		{ cat "$state/log/migrate.log" >&2; exit 1; }
	set -a; . "$state/env"; set +a
	[ -z "${PGBOUNCER:-}" ] || pgb_start "$state" "$DATABASE_URL"
	apache_start "$state" "$port" "$mode"
	;;
stop)
	[ -d "$2" ] || exit 0
	state=$(abs "$2")
	cd /
	apache_stop "$state"
	pgb_stop "$state"
	pg_stop "$state"
	;;
apache)
	# a second Apache on the same database, with the settings of the caller's environment
	# (tests of configuration such as PAYMENT_HOLD_SECONDS)
	state=$(abs "$2") port=$3 mode=$4 build=$(cd "$5" && pwd)
	cd /
	chmod 755 "$state"
	serve_prepare "$state" "$build" "$mode"
	mkdir -p "$state/log"
	[ -z "${PGBOUNCER:-}" ] || pgb_start "$state" "$DATABASE_URL"
	apache_start "$state" "$port" "$mode"
	;;
stop-apache)
	# the Apache of STATE and its pgbouncer, not its cluster (bench/run.sh restarts the
	# Apache for every mode)
	[ -d "$2" ] || exit 0
	state=$(abs "$2")
	cd /
	apache_stop "$state"
	pgb_stop "$state"
	;;
replica)
	# a streaming replica of STATE's cluster in REPLICA (tests, trials of DATABASE_READ_URL,
	# the benchmark's synchronous standby, named by REPLICA_NAME); prints its conninfo.
	# Stopped by `replica-stop REPLICA`; started again on the data it has.
	state=$(abs "$2") r=$(abs "$3")
	cd /
	replica_start "$state" "$r"
	;;
db)
	# the cluster of STATE alone, no Apache (tests/77-backup.bats; a restored data directory
	# in STATE/pg, whose courts.conf is rewritten for STATE's socket); stopped by `stop STATE`
	state=$(abs "$2")
	path_ok "the state directory" "$state"
	cd /
	chmod 755 "$state"
	pg_start "$state"
	write_env "$state" 0
	;;
replica-stop)
	[ -d "$2" ] || exit 0
	state=$(abs "$2")
	cd /
	pg_stop "$state"
	;;
graceful)
	# a graceful restart of the Apache of STATE, as an operator's `apache2 -k graceful`
	eval "args=($(cat "$2/apache/args.q"))"
	apache2 "${args[@]}" -k graceful
	;;
fcgid-count)
	# how many processes mod_fcgid runs of PROGRAM for the Apache of STATE
	fcgid_count "$(abs "$2")" "$3"
	;;
warm)
	# mod_fcgid's processes of every program (or those named) started for the Apache of
	# STATE on PORT, e.g. after a graceful restart, which ends them all (fcgid_warm)
	state=$(abs "$2") port=$3
	shift 3
	fcgid_warm "$state" "$port" "$@"
	;;
restart-pg)
	# a database restart under running programs: kept connections must recover
	state=$(abs "$2")
	cd /
	as_pg "$(pg_bin)/pg_ctl" -D "$state/pg" -m fast -w -t 60 restart \
		-l "$state/log/postgresql.log" >/dev/null
	;;
*)
	echo "usage: $0 check STATE PORT | start STATE PORT MODE BUILD | stop STATE | replica STATE REPLICA | replica-stop REPLICA | warm STATE PORT [PROGRAM...]" >&2
	exit 2
	;;
esac
