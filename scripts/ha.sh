#!/usr/bin/env bash
# ha.sh: a highly available PostgreSQL on 127.0.0.1 with pg_auto_failover (Debian's
# postgresql-15-auto-failover): a monitor and two nodes, the standby synchronous, so that a
# write the primary acknowledged is on both (docs/operations.md, "Failover").
#
#   scripts/ha.sh start DIR [PORT]    the monitor on PORT (default: a free one), the nodes on
#                                     the next two; prints the service's DATABASE_URL
#   scripts/ha.sh stop DIR
#   scripts/ha.sh url DIR             DATABASE_URL: both nodes, target_session_attrs=read-write
#   scripts/ha.sh read-url DIR        DATABASE_READ_URL: the standby while there is one
#   scripts/ha.sh state DIR           pg_autoctl show state
#   scripts/ha.sh primary DIR         the primary's name (node1 or node2), once there is one
#   scripts/ha.sh port DIR NODE       NODE's TCP port
#   scripts/ha.sh wait DIR NODE STATE [SECONDS]   until the monitor reports NODE in STATE
#   scripts/ha.sh kill DIR NODE       the node lost: its pg_autoctl and PostgreSQL SIGKILLed
#   scripts/ha.sh node DIR NODE       NODE's pg_autoctl started again (a lost primary rejoins
#                                     as a standby)
#   scripts/ha.sh switchover DIR      the standby becomes the primary (a failback)
#
# DIR gets data/ with monitor/, node1/ and node2/ (the data directories; pg_autoctl makes a
# standby's base backup in data/backup first, and moves it in place), sock/ (their Unix
# sockets), log/ (each pg_autoctl's output), run/ (their PIDs) and xdg/ (pg_autoctl's own
# configuration and state). The service's role `courts` and database `courts` are made on the
# first primary with the extensions the migrations need; the migrations are the caller's
# (scripts/migrate.sh). Connections from 127.0.0.1 are trusted: this is the stack of the
# tests and of `make ha`, not a production layout (docs/operations.md says what changes).
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
courts_path

# The failover's timing. The monitor fails a primary over once it has not heard from its
# keeper for HA_UNHEALTHY_MS and its health checks (every HA_CHECK_PERIOD_MS) failed
# HA_CHECK_RETRIES times more; it then promotes the standby, which takes writes once the old
# primary has demoted itself or HA_DEMOTE_MS passed. A keeper that can reach neither the
# monitor nor its standby for HA_PARTITION_S demotes its own primary, so HA_DEMOTE_MS must
# stay well above that: two primaries never take writes at once. pg_auto_failover's defaults
# (20 s, 5 s checks, 2 retries 2 s apart, a 30 s demote timeout, 20 s partitions) took 51 s
# for a lost node in a trial; these take about 20 s (docs/operations.md, "Failover").
HA_UNHEALTHY_MS=${HA_UNHEALTHY_MS:-6000}
HA_CHECK_PERIOD_MS=${HA_CHECK_PERIOD_MS:-1000}
HA_CHECK_TIMEOUT_MS=${HA_CHECK_TIMEOUT_MS:-2000}
HA_CHECK_RETRIES=${HA_CHECK_RETRIES:-2}
HA_CHECK_RETRY_DELAY_MS=${HA_CHECK_RETRY_DELAY_MS:-1000}
HA_DEMOTE_MS=${HA_DEMOTE_MS:-12000}
HA_PARTITION_S=${HA_PARTITION_S:-5}

usage() {
	sed -n '6,19p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

abs() {
	mkdir -p "$1"
	(cd "$1" && pwd)
}

# autoctl ARGS...: pg_autoctl as PostgreSQL's user, its configuration and state in DIR
autoctl() {
	as_pg "${autoctl_env[@]}" pg_autoctl "$@"
}

# autoctl_bg NAME ARGS...: `pg_autoctl ARGS` in the background, in a session of its own (so
# that `kill` takes the whole node at once), its output in DIR/log/NAME.log and its PID (the
# process itself: each step execs the next) in DIR/run/NAME.pid
autoctl_bg() {
	local name=$1 as=()
	shift
	if is_root && [ "$(pg_user)" != root ]; then
		as=(setpriv --reuid="$(pg_user)" --regid="$(pg_user)" --init-groups --)
	fi
	(exec "${as[@]}" "${autoctl_env[@]}" setsid pg_autoctl "$@" >>"$dir/log/$name.log" 2>&1 \
		</dev/null) &
	echo $! >"$dir/run/$name.pid"
}

port_of() {
	sed -n "s/^$1=//p" "$dir/ports"
}

# prepare NAME: a new data directory with the settings of this stack in postgresql.auto.conf,
# which PostgreSQL reads after pg_auto_failover's own and a standby's base backup copies:
# sockets in DIR/sock, a modest memory (pg_auto_failover sizes shared_buffers for a machine
# of its own), UTC, and a log that stays quiet while things go right. pg_autoctl hands
# listen_addresses to PostgreSQL on its command line: 127.0.0.1 is set in its own
# configuration.
prepare() {
	local data=$dir/data/$1
	mkdir -p "$data"
	chmod 700 "$data"
	pg_owner "$data"
	as_pg "$(pg_bin)/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=trust \
		-E UTF8 --locale=C.UTF-8 >>"$dir/log/$1.log" 2>&1 || { tail -n 20 "$dir/log/$1.log" >&2; exit 1; }
	as_pg tee "$data/postgresql.auto.conf" >/dev/null <<-CONF
	# written by scripts/ha.sh
	unix_socket_directories = '${dir//\'/\'\'}/sock'
	max_connections = 200
	shared_buffers = '128MB'
	effective_cache_size = '1GB'
	maintenance_work_mem = '64MB'
	work_mem = '4MB'
	wal_keep_size = '512MB'
	timezone = 'UTC'
	log_min_messages = 'warning'
	CONF
}

# run NAME: NAME's pg_autoctl, which starts and watches its PostgreSQL
run() {
	autoctl_bg "$1" run --pgdata "$dir/data/$1"
}

# psql_at NAME USER DB ARGS...
psql_at() {
	local name=$1 user=$2 db=$3
	shift 3
	"$(pg_bin)/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" -p "$(port_of "$name")" -U "$user" \
		-d "$db" "$@"
}

# ready NAME SECONDS: until NAME's PostgreSQL takes connections
ready() {
	local deadline=$((SECONDS + $2))
	until "$(pg_bin)/pg_isready" -q -h "$dir/sock" -p "$(port_of "$1")"; do
		[ $SECONDS -lt "$deadline" ] || { echo "ha: $1 did not start; its log:" >&2; tail -n 20 "$dir/log/$1.log" >&2; exit 1; }
		sleep 0.2
	done
}

# node_state NAME: what the monitor last heard NAME report (primary, secondary, ...)
node_state() {
	psql_at monitor autoctl_node pg_auto_failover -tA -v name="$1" 2>/dev/null <<-'SQL' || true
	SELECT reportedstate FROM pgautofailover.node WHERE nodename = :'name'
	SQL
}

# wait_state NAME STATE SECONDS [CHECKPOINT]: until the monitor reports NAME in STATE.
# pg_auto_failover's pg_basebackup waits for the primary's next checkpoint (every 5 minutes):
# with CHECKPOINT the primary is asked for one meanwhile.
wait_state() {
	local name=$1 want=$2 deadline=$((SECONDS + $3)) primary
	until [ "$(node_state "$name")" = "$want" ]; do
		if [ $SECONDS -ge "$deadline" ]; then
			echo "ha: $name is not $want after $3 s; the monitor says:" >&2
			autoctl show state --pgdata "$dir/data/monitor" >&2 || true
			tail -n 20 "$dir/log/$name.log" >&2
			exit 1
		fi
		if [ -n "${4:-}" ] && primary=$(primary_name) && [ -n "$primary" ]; then
			psql_at "$primary" postgres postgres -c CHECKPOINT 2>/dev/null || true
		fi
		sleep 0.5
	done
}

primary_name() {
	psql_at monitor autoctl_node pg_auto_failover -tA -c \
		"SELECT nodename FROM pgautofailover.node WHERE reportedstate IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate ORDER BY nodeid LIMIT 1" 2>/dev/null
}

# url [ATTRS]: the service's URL over both nodes, target_session_attrs ATTRS (read-write)
url() {
	echo "postgresql://courts@127.0.0.1:$(port_of node1),127.0.0.1:$(port_of node2)/courts?target_session_attrs=${1:-read-write}&connect_timeout=2"
}

start() {
	local base=${1:-} bin name
	bin=$(pg_bin)
	command -v pg_autoctl >/dev/null ||
		{ echo "ha: pg_autoctl not found: install postgresql-15-auto-failover (make install-tools)" >&2; exit 1; }
	mkdir -p "$dir/log" "$dir/run" "$dir/sock" "$dir/data" "$dir/xdg/config" "$dir/xdg/data" \
		"$dir/xdg/run"
	chmod 755 "$dir" "$dir/sock"
	chmod 700 "$dir/xdg/run"
	chmod 700 "$dir/data"
	pg_owner "$dir/log" "$dir/sock" "$dir/data" "$dir/xdg"
	if [ ! -f "$dir/ports" ]; then
		if [ -z "$base" ]; then
			until base=$(free_port) && ! (echo >"/dev/tcp/127.0.0.1/$((base + 1))") 2>/dev/null &&
				! (echo >"/dev/tcp/127.0.0.1/$((base + 2))") 2>/dev/null; do :; done
		fi
		printf 'monitor=%s\nnode1=%s\nnode2=%s\n' "$base" $((base + 1)) $((base + 2)) >"$dir/ports"
	fi
	if [ ! -f "$dir/data/monitor/PG_VERSION" ]; then
		prepare monitor
		autoctl create monitor --pgdata "$dir/data/monitor" --pgport "$(port_of monitor)" \
			--hostname 127.0.0.1 --auth trust --no-ssl --pgctl "$bin/pg_ctl" \
			>>"$dir/log/monitor.log" 2>&1 || { tail -n 20 "$dir/log/monitor.log" >&2; exit 1; }
		autoctl config set --pgdata "$dir/data/monitor" postgresql.listen_addresses 127.0.0.1 >/dev/null
	fi
	run monitor
	ready monitor 60
	psql_at monitor postgres pg_auto_failover \
		-c "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = $HA_UNHEALTHY_MS" \
		-c "ALTER SYSTEM SET pgautofailover.health_check_period = $HA_CHECK_PERIOD_MS" \
		-c "ALTER SYSTEM SET pgautofailover.health_check_timeout = $HA_CHECK_TIMEOUT_MS" \
		-c "ALTER SYSTEM SET pgautofailover.health_check_max_retries = $HA_CHECK_RETRIES" \
		-c "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = $HA_CHECK_RETRY_DELAY_MS" \
		-c "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = $HA_DEMOTE_MS" \
		-c "SELECT pg_reload_conf()" >/dev/null
	for name in node1 node2; do
		if [ ! -f "$dir/data/$name/PG_VERSION" ]; then
			# the first node starts from a data directory of ours, the second from its backup
			if [ "$name" = node1 ]; then
				prepare node1
			else
				mkdir -p "$dir/data/node2"
				pg_owner "$dir/data/node2"
			fi
			autoctl_bg "$name" create postgres --pgdata "$dir/data/$name" --pgport "$(port_of "$name")" \
				--pghost 127.0.0.1 --listen 127.0.0.1 --hostname 127.0.0.1 --name "$name" \
				--auth trust --no-ssl --dbname courts --pgctl "$bin/pg_ctl" \
				--monitor "postgresql://autoctl_node@127.0.0.1:$(port_of monitor)/pg_auto_failover?sslmode=disable" \
				--run
			if [ "$name" = node1 ]; then
				wait_state node1 single 120
				psql_at node1 postgres postgres -tA -c "SELECT 1 FROM pg_roles WHERE rolname = 'courts'" |
					grep -q 1 || psql_at node1 postgres postgres -c "CREATE ROLE courts LOGIN"
				psql_at node1 postgres postgres -c "ALTER DATABASE courts OWNER TO courts" \
					-c "ALTER ROLE courts SET log_min_messages TO fatal"
				psql_at node1 postgres courts -c "SET client_min_messages TO warning" \
					-c "CREATE EXTENSION IF NOT EXISTS cube" \
					-c "CREATE EXTENSION IF NOT EXISTS earthdistance" \
					-c "CREATE EXTENSION IF NOT EXISTS btree_gist"
			else
				wait_state node2 secondary 180 checkpoint
			fi
		else
			run "$name"
		fi
	done
	wait_state node1 primary 120
	partition_timeout node1
	partition_timeout node2
	url
}

# partition_timeout NAME: NAME's keeper's network partition timeout; pg_autoctl tells the
# running keeper to read its configuration again
partition_timeout() {
	autoctl config set --pgdata "$dir/data/$1" timeout.network_partition_timeout "$HA_PARTITION_S" \
		>/dev/null
}

# pids NAME: NAME's pg_autoctl and its PostgreSQL
pids() {
	local f=$dir/run/$1.pid pm=$dir/data/$1/postmaster.pid
	[ ! -s "$f" ] || cat "$f"
	[ ! -s "$pm" ] || head -n 1 "$pm"
}

# stop: each pg_autoctl stops its PostgreSQL on SIGTERM; what is left after 30 s is killed
# with its session
stop() {
	local name pid deadline
	for name in node2 node1 monitor; do
		[ -s "$dir/run/$name.pid" ] || continue
		pid=$(cat "$dir/run/$name.pid")
		kill -TERM "$pid" 2>/dev/null || true
		deadline=$((SECONDS + 30))
		while kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" | cut -c1)" != Z ]; do
			[ $SECONDS -lt $deadline ] || break
			sleep 0.1
		done
		kill -KILL -- "-$pid" 2>/dev/null || true
		rm -f "$dir/run/$name.pid"
	done
	for name in node2 node1 monitor; do
		[ -f "$dir/data/$name/postmaster.pid" ] || continue
		as_pg "$(pg_bin)/pg_ctl" -D "$dir/data/$name" -m fast -w -t 30 stop >/dev/null 2>&1 || true
	done
}

cmd=${1:-}
[ -n "$cmd" ] && [ -n "${2:-}" ] || usage
case "$cmd" in
wait | kill | node | port)
	case "${3:-}" in
	node1 | node2) ;;
	*) echo "ha: $cmd: the node is node1 or node2, not '${3:-}'" >&2; exit 2 ;;
	esac
	;;
esac
dir=$(abs "$2")
# pg_autoctl reaches its own PostgreSQL over TCP on 127.0.0.1 (it writes the host into
# connection strings unquoted: a socket directory with a space in its path would break them),
# as the cluster's superuser postgres whoever runs it (the default user is the caller's name)
autoctl_env=(env XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data"
	XDG_RUNTIME_DIR="$dir/xdg/run" PGHOST=127.0.0.1 PGUSER=postgres PATH="$(pg_bin):$PATH")
case "$cmd" in
start) start "${3:-}" ;;
stop) stop ;;
url) url ;;
read-url) url prefer-standby ;;
state) autoctl show state --pgdata "$dir/data/monitor" ;;
primary) primary_name ;;
port) port_of "$3" ;;
wait) wait_state "$3" "$4" "${5:-120}" ;;
kill)
	# its session first (pg_autoctl would start PostgreSQL again), then PostgreSQL itself
	p=$(pids "$3")
	kill -KILL -- "-$(head -n 1 <<<"$p")" 2>/dev/null || true
	# shellcheck disable=SC2086
	kill -KILL $p 2>/dev/null || true
	rm -f "$dir/run/$3.pid"
	;;
node)
	if [ -s "$dir/run/$3.pid" ] && kill -0 "$(cat "$dir/run/$3.pid")" 2>/dev/null; then
		echo "ha: $3 runs already (pg_autoctl $(cat "$dir/run/$3.pid"))" >&2
		exit 1
	fi
	run "$3"
	;;
switchover) autoctl perform switchover --pgdata "$dir/data/monitor" >/dev/null ;;
*) usage ;;
esac
