#!/usr/bin/env bash
# stack.sh: start and stop the private PostgreSQL cluster and Apache of one state directory.
#
#   scripts/stack.sh start STATE_DIR PORT MODE BUILD_DIR   (MODE: cgi, fastcgi or pool)
#   scripts/stack.sh stop  STATE_DIR
#
# STATE_DIR gets pg/ (cluster), pgsock/ (Unix socket), keys/, apache/ (config run dir, logs).
# Everything listens on 127.0.0.1 or a Unix socket only; stop kills by the recorded PIDs.
# Exports nothing: it writes STATE_DIR/env, which callers source.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

pg_bin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] || { echo "stack: PostgreSQL server binaries not found" >&2; exit 1; }
	echo "$d"
}

# PostgreSQL refuses to run as root: run its tools as the postgres user then.
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_owner() {
	if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$@"; fi
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
		cat >>"$state/pg/postgresql.conf" <<-CONF
		listen_addresses = ''
		port = 5432
		unix_socket_directories = '$state/pgsock'
		unix_socket_permissions = 0777
		max_connections = 200
		shared_buffers = 128MB
		fsync = ${PG_FSYNC:-on}
		synchronous_commit = ${PG_SYNC_COMMIT:-on}
		log_min_messages = warning
		CONF
	fi
	if ! as_pg "$bin/pg_ctl" -D "$state/pg" -l "$state/log/postgresql.log" -w -t 60 start \
		>/dev/null; then
		cat "$state/log/postgresql.log" >&2
		exit 1
	fi
	as_pg "$bin/psql" -h "$state/pgsock" -U postgres -d postgres -qtAc \
		"SELECT 1 FROM pg_roles WHERE rolname = 'courts'" | grep -q 1 ||
		as_pg "$bin/psql" -h "$state/pgsock" -U postgres -d postgres -q \
			-c "CREATE ROLE courts LOGIN" -c "CREATE DATABASE courts OWNER courts"
	# extensions need a superuser; created here so migrations run as the app role
	as_pg "$bin/psql" -h "$state/pgsock" -U postgres -d courts -q \
		-c "CREATE EXTENSION IF NOT EXISTS cube" \
		-c "CREATE EXTENSION IF NOT EXISTS earthdistance" \
		-c "CREATE EXTENSION IF NOT EXISTS btree_gist" >/dev/null
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
		chmod 600 "$keys/jwt_private.pem"
		chmod 644 "$keys/jwt_public.pem"
		chmod 755 "$keys"
	fi
}

# alive PID: the process exists and is not a zombie waiting for a parent that may never reap it
alive() {
	kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]
}

# pool mode: every program runs its own supervised set of FastCGI workers on a Unix socket
# (FCGI_LISTEN), which Apache reaches through mod_proxy_fcgi; as www-data when we are root.
pool_start() {
	local state=$1 build=$2 prog name dir=$1/apache/run/pool as=()
	mkdir -p "$dir"
	if [ "$(id -u)" -eq 0 ]; then
		chown www-data:www-data "$dir"
		as=(setpriv --reuid=www-data --regid=www-data --init-groups)
	fi
	for prog in "$build"/cgi-bin/*.cgi; do
		name=$(basename "$prog" .cgi)
		FCGI_LISTEN="$dir/$name.sock" FCGI_WORKERS=${FCGI_WORKERS:-4} \
			"${as[@]}" "$prog" >>"$state/apache/logs/error.log" 2>&1 </dev/null &
		echo $! >"$dir/$name.pid"
	done
	local deadline=$((SECONDS + 20))
	for prog in "$build"/cgi-bin/*.cgi; do
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
	local pidfile pid deadline
	for pidfile in "$1"/apache/run/pool/*.pid; do
		[ -f "$pidfile" ] || continue
		pid=$(cat "$pidfile")
		kill -TERM "$pid" 2>/dev/null || true
		deadline=$((SECONDS + 10))
		while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
		kill -KILL "$pid" 2>/dev/null || true
		rm -f "$pidfile"
	done
}

apache_start() {
	local state=$1 port=$2 mode=$3 build=$4 defines=()
	mkdir -p "$state/apache/run" "$state/apache/logs" "$state/apache/htdocs"
	chmod 755 "$state/apache"
	write_env_conf "$state/apache"
	[ "$mode" = fastcgi ] && defines+=(-D FASTCGI)
	if [ "$mode" = pool ]; then
		defines+=(-D FCGIPOOL)
		pool_start "$state" "$build"
	fi
	[ "$(id -u)" -eq 0 ] && defines+=(-D RUN_AS_WWW_DATA)
	# tests: shorter read deadlines, and the /courts-test/status/NNN route (httpd.conf)
	[ -n "${APACHE_HEADER_TIMEOUT:-}" ] && defines+=(-C "Define COURTS_HEADER_TIMEOUT $APACHE_HEADER_TIMEOUT")
	[ -n "${APACHE_BODY_TIMEOUT:-}" ] && defines+=(-C "Define COURTS_BODY_TIMEOUT $APACHE_BODY_TIMEOUT")
	[ -n "${COURTS_TEST_STATUS:-}" ] && defines+=(-D COURTS_TEST_STATUS)
	local args=(-f "$root/apache/httpd.conf"
		-C "Define COURTS_ROOT $root"
		-C "Define COURTS_BIN $build"
		-C "Define COURTS_STATE $state/apache"
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
CONFIG_VARS="DATABASE_URL JWT_PUBLIC_KEY_FILE JWT_ISSUER JWT_AUDIENCE JWT_ALGORITHM JWT_ROLES_CLAIM
DEFAULT_TIMEZONE BASE_PATH PAYMENT_HOLD_SECONDS CHECKIN_RADIUS_M CHECKIN_MAX_ACCURACY_M
MIN_RELIABILITY DB_PREPARE"

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
	local state=$1 port=$2
	cat >"$state/env" <<-ENV
	export DATABASE_URL="host=$state/pgsock port=5432 dbname=courts user=courts"
	export PSQL_ADMIN="host=$state/pgsock port=5432 dbname=courts user=postgres"
	export JWT_PUBLIC_KEY_FILE="\${JWT_PUBLIC_KEY_FILE:-$state/keys/jwt_public.pem}"
	export JWT_PRIVATE_KEY_FILE="$state/keys/jwt_private.pem"
	export BASE_URL="http://127.0.0.1:$port"
	ENV
}

case "${1:-}" in
start)
	state=$2 port=$3 mode=$4 build=$5
	mkdir -p "$state/log"
	chmod 755 "$state"
	keys_make "$state/keys"
	write_env "$state" "$port"
	if [ -z "${EXTERNAL_DATABASE_URL:-}" ]; then
		pg_start "$state"
		# shellcheck disable=SC1091
		. "$state/env"
	else
		export DATABASE_URL=$EXTERNAL_DATABASE_URL
		sed -i "s|^export DATABASE_URL=.*|export DATABASE_URL=\"$EXTERNAL_DATABASE_URL\"|" "$state/env"
	fi
	"$here/migrate.sh" "$DATABASE_URL" >"$state/log/migrate.log" 2>&1 ||
		{ cat "$state/log/migrate.log" >&2; exit 1; }
	set -a; . "$state/env"; set +a
	apache_start "$state" "$port" "$mode" "$build"
	;;
stop)
	state=$2
	apache_stop "$state"
	pg_stop "$state"
	;;
apache)
	# a second Apache on the same database, with the settings of the caller's environment
	# (tests of configuration such as PAYMENT_HOLD_SECONDS)
	state=$2 port=$3 mode=$4 build=$5
	mkdir -p "$state"
	chmod 755 "$state"
	apache_start "$state" "$port" "$mode" "$build"
	;;
stop-apache)
	apache_stop "$2"
	;;
graceful)
	# a graceful restart of the Apache of STATE, as an operator's `apache2 -k graceful`
	eval "args=($(cat "$2/apache/args.q"))"
	apache2 "${args[@]}" -k graceful
	;;
restart-pg)
	# a database restart under running programs: kept connections must recover
	as_pg "$(pg_bin)/pg_ctl" -D "$2/pg" -m fast -w -t 60 restart \
		-l "$2/log/postgresql.log" >/dev/null
	;;
*)
	echo "usage: $0 start STATE PORT MODE BUILD | stop STATE" >&2
	exit 2
	;;
esac
