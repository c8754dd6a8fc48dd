#!/usr/bin/env bash
# run.sh: `make bench`. Benchmarks the service as plain CGI and as FastCGI against a trivial
# C CGI measured in the same rounds, on two generated data sets, measures in the same rounds
# what the fair-use checks cost on the create and join paths and what taking each share
# through the payment provider costs them (a local stand-in of Stripe's API,
# tests/stripe-stand-in.mjs, its own time shown apart), and writes bench/results.md.
# How to read the results and the method: bench/README.md.
#
# Everything listens on 127.0.0.1 or a Unix socket under bench/work/, every load is bounded
# (wrk -d, curl --max-time, timeout), and everything started here is stopped by PID when the
# script ends, whether it succeeds, fails or is interrupted.
#
# Settings (environment): BUILD (build directory, default build), BENCH_SECONDS (length of one
# measured wrk run, default 3), BENCH_WARMUP (default 1), BENCH_ROUNDS (default 3),
# BENCH_MODES (default "cgi cgi-pgbouncer fastcgi pool express"; express is the reference service
# of bench/express/, on Node.js), BENCH_CASES (default: all, see CASES below),
# BENCH_TWIN_MODES (the modes that measure the write twins, default "fastcgi pool"),
# BENCH_CITY_VENUES (default 10000; players and requests scale with it), BENCH_SHARED_BUFFERS
# (PostgreSQL's shared_buffers, default 1GB), BENCH_BACKUP (0: no backup and restore step),
# BENCH_X10 (0: no step at ten times CITY's data), BENCH_X10_DIR (where that data set is kept
# between runs, outside the repository; default /var/tmp/courts-bench-USER/city-VENUES),
# BENCH_X10_SHARED_BUFFERS (its cluster's shared_buffers, default 6GB).
set -euo pipefail
# the benchmark always runs on its own database and keys
unset EXTERNAL_DATABASE_URL JWT_PUBLIC_KEY_FILE

root=$(cd "$(dirname "$0")/.." && pwd)
# apache2 is in /usr/sbin, which a user's PATH lacks on Debian
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
courts_path
build=${BUILD:-build}
[[ $build == /* ]] || build=$root/$build
build=$(cd "$build" && pwd)
bench=$root/bench
# BENCH_WORK, BENCH_STATE, BENCH_RESULTS and BENCH_KEEP are set by the ten-times step for the
# run.sh it starts (see "ten times the data" below), not by hand
work=${BENCH_WORK:-$bench/work}
state=${BENCH_STATE:-$work/state}
tstate=$work/trivial
results=${BENCH_RESULTS:-$bench/results.md}

# 3 s runs and a 1 s warm-up keep the whole run under 40 minutes (bench/README.md, "How long")
secs=${BENCH_SECONDS:-3}
warmup=${BENCH_WARMUP:-1}
rounds=${BENCH_ROUNDS:-3}
modes=${BENCH_MODES:-cgi cgi-pgbouncer fastcgi pool express}
threads=2
conns=16
issuer=${JWT_ISSUER:-https://auth.courts.local/}
audience=${JWT_AUDIENCE:-courts-api}

CASES="trivial health slots slots_many owner day_sheet report_year search_small search_city search_many open_city create create_kept join create_checks join_checks create_stripe join_stripe create_sync join_sync"
# what the reference service serves (bench/express/server.js); its other cases are not run
EXPRESS_CASES="trivial health slots slots_many owner search_small search_city search_many"
# The write twins (the checks on, the payment provider, a synchronous standby: what each adds
# to a create and a join) are measured in the modes where a request opens no session of its
# own. In plain CGI the session's cost hides what they add (create checks on / off read
# 1.000x in cgi, its p99s 1-2 s either way) and their runs took 3 of the mode's 10 minutes
# (bench/README.md, "How long").
twin_modes=${BENCH_TWIN_MODES:-fastcgi pool}
twin() { [[ $1 == *_checks || $1 == *_stripe || $1 == *_sync ]]; }
# served MODE CASE: whether the mode has the case; unserved MODE CASE: why it has not
served() { [ -z "$(unserved "$1" "$2")" ]; }
unserved() {
	if [ "$1" = express ]; then
		[[ " $EXPRESS_CASES " == *" $2 "* ]] || echo "n/a (not served by the reference service)"
	elif twin "$2" && [[ " $twin_modes " != *" $1 "* ]]; then
		echo "n/a (measured in $twin_modes)"
	fi
}
cases=${BENCH_CASES:-$CASES}
city_venues=${BENCH_CITY_VENUES:-10000}
city_players=$((city_venues * 20))
city_requests=$((city_venues * 5))
city_courts=$((city_venues * 4))
small_venues=100
small_players=2000
small_requests=500
# search centre: the middle of the generated area; the request walk and the slots probe
# use dates on which the data sets hold nothing or exactly one request per court
centre_lat=40.45
centre_lng=-3.70

declare -A label prog status
label[trivial]="trivial CGI (floor)"
label[health]="GET /actuator/health (reference: program + DB ping)"
label[slots]="GET /api/resources/{id}/slots"
label[slots_many]="GET /api/resources/{id}/slots (another court each)"
label[owner]="GET /api/owner/venues (20 venues)"
label[day_sheet]="GET /api/owner/venues/{id}/day (CITY, a venue of 4 courts)"
label[report_year]="GET /api/owner/venues/{id}/report (CITY, a year of a venue of 4 courts)"
label[search_small]="GET /api/match/search (SMALL)"
label[search_city]="GET /api/match/search (CITY)"
label[search_many]="GET /api/match/search (CITY, another centre each)"
label[open_city]="GET /api/match/open (CITY, a day's open matches within 10 km)"
label[create]="POST /api/match/requests (new slot each; checks off)"
label[create_kept]="POST /api/match/requests (new slot each, in the kept 14 days; checks off)"
label[join]="POST /api/match/join/{token} (new match each; checks off)"
label[create_checks]="POST /api/match/requests (new slot each; checks on)"
label[join_checks]="POST /api/match/join/{token} (new match each; checks on)"
label[create_stripe]="POST /api/match/requests (new slot each; checks off; PAYMENT_PROVIDER=stripe)"
label[join_stripe]="POST /api/match/join/{token} (new match each; checks off; PAYMENT_PROVIDER=stripe)"
label[create_sync]="POST /api/match/requests (new slot each; checks off; a synchronous standby)"
label[join_sync]="POST /api/match/join/{token} (new match each; checks off; a synchronous standby)"
prog[health]=health.cgi
prog[slots]=public.cgi
prog[slots_many]=public.cgi
prog[owner]=owner.cgi
prog[day_sheet]=owner.cgi
prog[report_year]=owner.cgi
prog[search_small]=search.cgi
prog[search_city]=search.cgi
prog[search_many]=search.cgi
prog[open_city]=requests.cgi
prog[create]=requests.cgi
prog[create_kept]=requests.cgi
prog[join]=invitations.cgi
prog[create_checks]=requests.cgi
prog[join_checks]=invitations.cgi
prog[create_stripe]=requests.cgi
prog[join_stripe]=invitations.cgi
prog[create_sync]=requests.cgi
prog[join_sync]=invitations.cgi

# Fair-use settings of the service Apaches. "checks off": what the code allows closest to no
# checks (MAX_UNPAID_HOLDS takes 1..1000; the hold count and the lock of the player's row run
# whatever the value), no booking rules, no write budget. "checks on" (a third Apache, on
# CITY): the same hold limit, a write budget too large to refuse, and all five booking rules
# on every venue while its cases run (rules_for) with values the benchmark's load never reaches.
checks_off=(MAX_UNPAID_HOLDS=1000 WRITE_BUDGET_PER_MINUTE=0 WRITE_BUDGET_BURST=)
checks_on=(MAX_UNPAID_HOLDS=1000 WRITE_BUDGET_PER_MINUTE=1000000 WRITE_BUDGET_BURST=1000000)
# maxUpcomingPerPlayer, maxPerPlayerPerDay, maxPerPlayerPerWeek, bookingWindowDays,
# minNoticeMinutes: the largest the API takes, and the smallest notice
rules_values="1000, 1000, 1000, 366, 1"
# The payment provider of the *_stripe cases (a fourth Apache, on CITY, checks off): the
# suite's stand-in of Stripe's API on 127.0.0.1, which answers at once and sends no webhook
# (its events are kept); each create and join there makes a PaymentIntent through it.
stand=$work/stripe
stripe_key=sk_test_bench
rules_text="maxUpcomingPerPlayer 1000, maxPerPlayerPerDay 1000, maxPerPlayerPerWeek 1000"
rules_text+=", bookingWindowDays 366, minNoticeMinutes 1"
# players with a token of their own for the creates, and as many for the joins
writers_max=1000
# mod_fcgid in mode fastcgi (bench/README.md, "mod_fcgid"): each Apache's programs get their
# processes at start (scripts/stack.sh warm), and the idle timeout is shortened from the
# 600 s of apache/httpd.conf to fcgid_idle s, looked at every fcgid_scan s, so that the
# burst after an idle spell (burst_idle) fits in the run; the processes are to outlive it
fcgid_idle=10
fcgid_scan=1

log() { printf '%s bench: %s\n' "$(date +%T)" "$*" >&2; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
fcmp() { awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; }
fmt() { awk -v v="$1" -v d="${2:-2}" 'BEGIN { printf "%.*f", d, v }'; }
none_done=1000000000	# latency sentinel: no request finished within the run
# How long each part of the run took, for the report (bench/README.md, "How long"): phase NAME
# ends the part under way, if any, adding its seconds to took[its name] (a name may come
# again), and starts NAME; phase "" ends the last. took_order: the names as they first came.
declare -A took=()
took_order=() phase_name="" phase_from=$SECONDS
phase() {
	if [ -n "$phase_name" ]; then
		[ -n "${took[$phase_name]+set}" ] || took_order+=("$phase_name")
		took[$phase_name]=$((${took[$phase_name]:-0} + SECONDS - phase_from))
	fi
	phase_name=$1 phase_from=$SECONDS
}
ms_cell() {	# latency in ms for the tables
	if fcmp "$1" ">=" "$none_done"; then echo "none done in ${secs} s"; else fmt "$1" "${2:-2}"; fi
}
ms_unit() { if fcmp "$1" ">=" "$none_done"; then ms_cell "$1"; else echo "$(fmt "$1" "${2:-2}") ms"; fi; }
verdict() {	# value op limit -> yes / **NO**
	if fcmp "$1" "$2" "$3"; then echo yes; else echo "**NO**"; fi
}
# busy_jiffies: the CPU time the whole machine spent since boot on anything but idle and
# iowait (user + nice + system + irq + softirq + steal of /proc/stat), in clock ticks; read
# with the builtin, so that no process of its own lands between the two readings of a run
busy_jiffies() {
	local _ user nice system irq softirq steal
	read -r _ user nice system _ _ irq softirq steal _ </proc/stat
	busy=$((user + nice + system + irq + softirq + steal))
}
clk_tck=$(getconf CLK_TCK)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- stopping what we started (by PID, also after a failure) -----------------------------
pid_stop() {	# pidfile: TERM, wait up to 15 s, then KILL
	local pid deadline
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + 15))
	while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$1"
}

# express_start / express_stop: the reference service (bench/express/server.js) in place of the
# service Apaches, on their ports: one process on CITY and one on SMALL, with the keys, issuer
# and audience of the service; stopped by their PIDs
express_start() {
	local db port name pidf deadline spec
	for spec in "courts $city_port city" "courts_small $small_port small"; do
		read -r db port name <<<"$spec"
		pidf=$work/express-$name.pid
		PORT=$port PGHOST=$state/pgsock PGPORT=5432 PGDATABASE=$db PGUSER=courts \
			JWT_PUBLIC_KEY_FILE=$state/keys/jwt_public.pem JWT_ISSUER=$issuer \
			JWT_AUDIENCE=$audience node "$bench/express/server.js" >>"$work/express.log" 2>&1 &
		echo $! >"$pidf"
		deadline=$((SECONDS + 20))
		until curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/actuator/health"; do
			if ! kill -0 "$(cat "$pidf")" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
				cat "$work/express.log" >&2
				echo "bench: the reference service did not answer" >&2
				return 1
			fi
			sleep 0.1
		done
	done
}
express_stop() {
	pid_stop "$work/express-city.pid"
	pid_stop "$work/express-small.pid"
}

# stand_in_start / stand_in_stop: the payment provider's stand-in, its port in $stand/port
stand_in_start() {
	local deadline=$((SECONDS + 20))
	rm -rf "$stand"
	mkdir -p "$stand"
	echo "$stripe_key" >"$stand/secret-key"
	env -i PATH="$PATH" HOME="${HOME:-/}" node "$root/tests/stripe-stand-in.mjs" "$stand" \
		>"$work/stand-in.log" 2>&1 &
	echo $! >"$work/stand-in.pid"
	until [ -s "$stand/port" ]; do
		if ! kill -0 "$(cat "$work/stand-in.pid")" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
			cat "$work/stand-in.log" >&2
			return 1
		fi
		sleep 0.1
	done
}
stand_in_stop() { pid_stop "$work/stand-in.pid"; }
# stand_in_jiffies: the stand-in's CPU so far (user + system), in clock ticks
# proc_jiffies PID...: the CPU ticks (user and system) the processes have used so far, 0 for
# those gone
proc_jiffies() {
	local p f
	for p in "$@"; do
		f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		f=${f##*) }	# the fields after the command's name
		awk '{ print $12 + $13 }' <<<"$f"
	done | awk '{ s += $1 } END { print s + 0 }'
}
stand_in_jiffies() {
	if [ -f "$work/stand-in.pid" ]; then proc_jiffies "$(cat "$work/stand-in.pid")"; else echo 0; fi
}

# The synchronous standby of the *_sync cases: what synchronous replication costs a write
# (docs/operations.md, "Failover"). A streaming standby of the bench's own cluster
# (scripts/stack.sh replica, named bench_standby, with a replication slot) confirms every
# commit as the pair of scripts/ha.sh does: synchronous_standby_names 'ANY 1 (...)' with
# synchronous_commit on, the primary's defaults otherwise. So the *_sync cases differ from
# their twins, on the same Apache and data in the same rounds, only in the wait for the
# standby. It runs only while they run, every other case being measured on a single node,
# and catches up from the slot before each; its CPU is kept apart like the stand-in's. On this
# one machine it shares the cores with the rest; on a pair it has its own, and the wait is
# the network's round trip and the standby's disk.
standby=$work/standby
standby_state=off
standby_jiffies() {	# the CPU ticks the standby's processes have used, 0 when none runs
	local pm
	if [ "$standby_state" = on ] && pm=$(head -n 1 "$standby/pg/postmaster.pid" 2>/dev/null); then
		# shellcheck disable=SC2046
		proc_jiffies "$pm" $(pgrep -P "$pm")
	else
		echo 0
	fi
}
# until_sql TEXT SQL: waits (at most 120 s) until SQL prints t
until_sql() {
	local deadline=$((SECONDS + 120))
	until [ "$(asql -c "$2")" = t ]; do
		[ $SECONDS -lt $deadline ] || { echo "bench: $1 after 120 s" >&2; exit 1; }
		sleep 0.2
	done
}
standby_start() {
	local target
	REPLICA_NAME=bench_standby PG_SHARED_BUFFERS=256MB \
		"$root/scripts/stack.sh" replica "$state" "$standby" >"$work/standby.log" 2>&1 ||
		{ cat "$work/standby.log" >&2; exit 1; }
	target=$(asql -c "SELECT pg_current_wal_lsn()")
	until_sql "the standby has not caught up" "SELECT EXISTS (SELECT 1 FROM pg_stat_replication
		WHERE application_name = 'bench_standby' AND state = 'streaming'
		  AND replay_lsn >= '$target'::pg_lsn)"
	asql -c "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (bench_standby)'" \
		-c "SELECT pg_reload_conf()" >/dev/null
	until_sql "the standby is not synchronous" "SELECT EXISTS (SELECT 1 FROM pg_stat_replication
		WHERE application_name = 'bench_standby' AND sync_state = 'quorum')"
	standby_state=on
}
standby_stop() {
	# no commit waits for it any more, then it stops (its slot keeps what it has not received)
	asql -c "ALTER SYSTEM RESET synchronous_standby_names" -c "SELECT pg_reload_conf()" >/dev/null
	until_sql "a standby is still synchronous" "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_replication
		WHERE sync_state <> 'async')"
	"$root/scripts/stack.sh" replica-stop "$standby"
	standby_state=off
}
# sync_for CASE: the standby synchronous for the *_sync cases, stopped for every other
sync_for() {
	local want=off
	[[ $1 == *_sync ]] && want=on
	[ "$want" = "$standby_state" ] && return 0
	if [ "$want" = on ]; then standby_start; else standby_stop; fi
}

# service_stop: the reference service and the four service Apaches, not the cluster (for a
# mode's start, and for the steps that need the database alone)
service_stop() {
	express_stop
	local d
	for d in "$state" "$state/small" "$state/checks" "$state/stripe"; do
		"$root/scripts/stack.sh" stop-apache "$d" >/dev/null 2>&1 || true
	done
}

stop_all() {
	service_stop
	stand_in_stop
	"$root/scripts/stack.sh" replica-stop "$standby" >/dev/null 2>&1 || true
	pid_stop "$tstate/run/httpd.pid"
	"$root/scripts/stack.sh" stop "$state" >/dev/null 2>&1 || true
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	log "stopping the servers started for the benchmark"
	stop_all
	exit "$rc"
}

# ---- set-up -------------------------------------------------------------------------------
for t in wrk curl jq psql apache2 cc; do
	command -v "$t" >/dev/null || { echo "bench: $t is missing (make install)" >&2; exit 1; }
done
if [[ " $modes " == *" express "* ]]; then
	if ! command -v node >/dev/null || [ ! -d "$bench/express/node_modules/express" ]; then
		echo "bench: mode express needs node and bench/express/node_modules (make bench)" >&2
		exit 1
	fi
fi
[ -x "$build/tools/mint-token" ] || { echo "bench: $build/tools/mint-token missing (make build)" >&2; exit 1; }

mkdir -p "$work"
chmod 755 "$work"
stop_all	# leftovers of an interrupted earlier run, by their pid files
# BENCH_KEEP=1: the cluster of STATE and its data sets are kept between runs (the ten-times
# step, whose load takes a quarter of an hour) and loaded again only when what they were made
# from differs: the sizes, the day (the data set's requests are on the 14 days after the day
# of its load, the bench's inputs on days counted from today), the migrations or the
# generator. The stamp is written once a run has ended and undone its
# writes, and removed while one runs: an interrupted run leaves none, and the next loads again.
data_stamp="venues=$city_venues small=$small_venues day=$(TZ=Europe/Madrid date +%F)
$(cd "$root" && find sql bench/data.sql scripts/migrate.sh -type f | LC_ALL=C sort |
	while IFS= read -r f; do sha256sum "$f"; done | sha256sum)"
kept_data=""
if [ "${BENCH_KEEP:-0}" = 1 ] && [ -f "$state/bench-data" ] &&
	[ "$(cat "$state/bench-data")" = "$data_stamp" ] && [ -f "$state/bench-loads" ]; then
	kept_data=$(cat "$state/bench-loads")
	rm -f "$state/bench-data"
else
	rm -rf "$state"
fi
rm -rf "$tstate" "$standby" "$work/wrk" "$work"/probe-*.json
mkdir -p "$work/wrk" "$tstate/run" "$tstate/logs" "$tstate/htdocs" "$tstate/cgi"
chmod 755 "$tstate" "$tstate/cgi" "$tstate/htdocs"
trap cleanup EXIT
trap 'exit 130' INT TERM

city_port=$(free_port)
small_port=$(free_port)
while [ "$small_port" = "$city_port" ]; do small_port=$(free_port); done
trivial_port=$(free_port)
while [ "$trivial_port" = "$city_port" ] || [ "$trivial_port" = "$small_port" ]; do
	trivial_port=$(free_port)
done
checks_port=$(free_port)
while [[ " $city_port $small_port $trivial_port " == *" $checks_port "* ]]; do
	checks_port=$(free_port)
done
stripe_port=$(free_port)
while [[ " $city_port $small_port $trivial_port $checks_port " == *" $stripe_port "* ]]; do
	stripe_port=$(free_port)
done

phase "set-up (servers, tokens, inputs)"
log "starting PostgreSQL and Apache (cgi) under $state"
# a buffer pool of about the size of CITY's database (1.2 GB loaded), as an operator sizes a
# cluster for its data; with 128 MB, the default of `make run`, every sweep batch and every
# search far from the last one read their pages again from the kernel's cache
PG_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-1GB} "$root/scripts/stack.sh" start "$state" "$city_port" cgi "$build" >"$work/stack.log" 2>&1 ||
	{ cat "$work/stack.log" >&2; exit 1; }
if [[ " $cases " == *_stripe* ]]; then
	log "starting the payment provider's stand-in (tests/stripe-stand-in.mjs)"
	stand_in_start
fi
# shellcheck disable=SC1091
. "$state/env"
# conninfo_host DIR: DIR's socket directory as a connection string's host (in quotes, which
# keep a space; a quote in it escaped)
conninfo_host() { echo "host='${1//\'/\\\'}/pgsock'"; }
pg_admin="$(conninfo_host "$state") port=5432 user=postgres"
city_db="$(conninfo_host "$state") port=5432 dbname=courts user=courts"
small_db="$(conninfo_host "$state") port=5432 dbname=courts_small user=courts"
asql() { psql "$pg_admin dbname=${DB:-courts}" -X -q -tA -v ON_ERROR_STOP=1 "$@"; }
# tidy TABLES: vacuums what the harness itself changed between two measured runs and writes
# the dirtied pages out (CHECKPOINT), so that the next run's commits do not wait on the disk
# while they are flushed
tidy() { asql -c "VACUUM $1" -c "CHECKPOINT"; }

load() {	# db venues players requests -> prints seconds
	local db=$1 t0
	t0=$(now_ms)
	DB=$db asql -v venues="$2" -v players="$3" -v requests="$4" -v issuer="$issuer" \
		-f "$bench/data.sql" >"$work/load-$db.log" 2>&1 || { cat "$work/load-$db.log" >&2; return 1; }
	fmt "$(( $(now_ms) - t0 ))e-3" 1
}
if [ -n "$kept_data" ]; then
	read -r load_city load_small <<<"$kept_data"
	log "CITY and SMALL kept from an earlier run today under $state (CITY loaded in ${load_city} s)"
	# A data set loaded in this run is in memory when its cases run; one kept for hours may
	# not be (bench/README.md, "Ten times the data"). Its tables and indexes are read through
	# once into the kernel's cache, as a service in use keeps them, so that its first rounds
	# do not pay for the disk.
	phase "reading the kept data set into memory"
	for db in courts courts_small; do
		DB=$db asql -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" \
			-c "SELECT sum(pg_prewarm(oid, 'read')) FROM pg_class
			     WHERE relkind IN ('r', 'i', 't', 'm') AND relpersistence <> 't'" \
			-c "DROP EXTENSION pg_prewarm" >/dev/null
	done
	phase "set-up (servers, tokens, inputs)"
else
	phase "loading CITY and SMALL"
	# SMALL lives in its own database, a copy of the freshly migrated one
	DB=postgres asql -c "CREATE DATABASE courts_small TEMPLATE courts OWNER courts"
	log "loading CITY ($city_venues venues, $city_courts courts, $city_players players, $city_requests requests)"
	load_city=$(load courts "$city_venues" "$city_players" "$city_requests")
	log "CITY loaded in ${load_city} s"
	load_small=$(load courts_small "$small_venues" "$small_players" "$small_requests")
	log "SMALL loaded in ${load_small} s"
	asql -c "CHECKPOINT" >/dev/null
	echo "$load_city $load_small" >"$state/bench-loads"
	phase "set-up (servers, tokens, inputs)"
fi

# ---- the floor: a trivial CGI behind its own Apache (same MPM, cgid and settings) ----------
cc -O2 -o "$tstate/cgi/trivial.cgi" "$bench/trivial.c"
chmod 755 "$tstate/cgi/trivial.cgi"
targs=(-f "$bench/trivial-httpd.conf" -C "Define BENCH_STATE \"$tstate\""
	-C "Define BENCH_CGI \"$tstate/cgi\"" -C "Define BENCH_LISTEN 127.0.0.1:$trivial_port")
[ "$(id -u)" -eq 0 ] && targs+=(-D RUN_AS_WWW_DATA)
apache2 "${targs[@]}" -k start || { cat "$tstate/logs/error.log" >&2 || true; exit 1; }
deadline=$((SECONDS + 20))
until curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$trivial_port/trivial"; do
	[ $SECONDS -lt $deadline ] || { echo "bench: trivial Apache did not answer" >&2; exit 1; }
	sleep 0.1
done

# ---- tokens and fixed inputs ---------------------------------------------------------------
mint() { "$build/tools/mint-token" -k "$state/keys/jwt_private.pem" -s "$1" -r "$2" \
	-i "$issuer" -a "$audience" -e 7200; }
owner_token=$(mint bench-owner-1 OWNER)
player_token=$(mint bench-player-2 "")
# The writers: players of CITY who are in no match of the data set, the first half joiners
# (never in a match they join), the second half organizers of the creates; a token each.
# Their numbers (bench-player-N) go to the SQL that undoes their writes after every run.
asql -v players="$city_players" -v most="$((2 * writers_max))" <<-'SQL' >"$work/writers.txt"
	SELECT p FROM generate_series(1, :players) p
	 WHERE NOT EXISTS (SELECT 1 FROM match_players mp
	                    WHERE mp.player_id = md5('bench-player-' || p)::uuid)
	 ORDER BY p LIMIT :most;
	SQL
writers=$(($(wc -l <"$work/writers.txt") / 2))
[ "$writers" -ge 16 ] || { echo "bench: fewer than 32 players in no match on CITY" >&2; exit 1; }
head -n "$writers" "$work/writers.txt" >"$work/joiners.txt"
sed -n "$((writers + 1)),$((2 * writers))p" "$work/writers.txt" >"$work/creators.txt"
log "minting $((2 * writers)) player tokens for the create and join cases"
for who in joiners creators; do
	while read -r p; do mint "bench-player-$p" ""; done <"$work/$who.txt" >"$work/$who.tokens"
done
joiners_sql="{$(paste -sd, "$work/joiners.txt")}"
creators_sql="{$(paste -sd, "$work/creators.txt")}"
# the join targets: the invitation tokens of CITY's OPEN matches, in the order of their numbers
asql -v requests="$city_requests" <<-'SQL' >"$work/join-matches.txt"
	SELECT m.invitation_token FROM generate_series(0, :requests - 1) n
	  JOIN match_requests m ON m.id = md5('bench-request-' || n)::uuid
	 WHERE m.status = 'OPEN' ORDER BY n;
	SQL
join_matches=$(wc -l <"$work/join-matches.txt")
join_shift=0	# which joiner takes which match: changes with every join run (join.lua)
slots_shift=0	# the first court of a slots_many run: changes with every run (slots.lua)
search_shift=0	# the first centre of a search_many run: changes with every run (search.lua)
madrid_date() { TZ=Europe/Madrid date -d "+$1 days" +%F; }
search_date=$(madrid_date 3)
# court 1 has exactly one live request, on day 1 of the data set's two weeks
slots_resource=$(asql -c "SELECT md5('bench-resource-1')::uuid")
slots_date=$(asql -c "SELECT booking_date FROM match_requests WHERE resource_id = '$slots_resource' ORDER BY booking_date LIMIT 1")
# the desk's reads: the day sheet of court 1's venue on that day, and its report of a year
# (the 351 days before today and the data set's two weeks)
desk_venue=$(asql -c "SELECT md5('bench-venue-1')::uuid")
report_q="from=$(madrid_date -351)&to=$(madrid_date 14)"
asql -c "SELECT id || ' ' || slot_duration_minutes FROM resources ORDER BY id" >"$work/create-ids.txt"
# create_kept books on a date the search keeps free slots for (a week ahead, where most
# bookings fall), on the courts with no live request that day, and so refreshes a court's
# kept slots with every create; the same date every run, as each run's writes are undone
kept_date=$(madrid_date 7)
asql -v d="$kept_date" <<-'SQL' >"$work/create-kept-ids.txt"
	SELECT r.id || ' ' || r.slot_duration_minutes FROM resources r
	 WHERE NOT EXISTS (SELECT 1 FROM match_requests m
	                    WHERE m.resource_id = r.id AND m.booking_date = :'d'::date
	                      AND m.status <> 'CANCELLED')
	 ORDER BY r.id;
	SQL
[ "$(asql -v d="$kept_date" <<<"SELECT count(*) FROM free_slot_dates WHERE booking_date = :'d'::date AND complete")" = 1 ] ||
	log "create_kept: $kept_date is not a complete kept date"
create_day=15	# walk dates: one per wrk run, after the data sets' two weeks
# the searches' date and window, around the centre (search.lua: around another point each)
search_when="date=$search_date&startTimeFrom=18:00:00&startTimeTo=20:00:00"
search_q="lat=$centre_lat&lng=$centre_lng&$search_when"

case_url() {
	case $1 in
	trivial) echo "http://127.0.0.1:$trivial_port/trivial" ;;
	health) echo "http://127.0.0.1:$city_port/actuator/health" ;;
	slots) echo "http://127.0.0.1:$city_port/api/resources/$slots_resource/slots?date=$slots_date" ;;
	# slots.lua writes the path of every request; the probe asks for the first court
	slots_many) echo "http://127.0.0.1:$city_port/api/resources/$(cut -d' ' -f1 <"$work/create-ids.txt" | head -n 1)/slots?date=$slots_date" ;;
	owner) echo "http://127.0.0.1:$city_port/api/owner/venues" ;;
	day_sheet) echo "http://127.0.0.1:$city_port/api/owner/venues/$desk_venue/day?date=$slots_date" ;;
	report_year) echo "http://127.0.0.1:$city_port/api/owner/venues/$desk_venue/report?$report_q" ;;
	search_small) echo "http://127.0.0.1:$small_port/api/match/search?$search_q" ;;
	search_city) echo "http://127.0.0.1:$city_port/api/match/search?$search_q" ;;
	# search.lua writes the path of every request; the probe searches at the centre
	search_many) echo "http://127.0.0.1:$city_port/api/match/search?$search_q" ;;
	open_city) echo "http://127.0.0.1:$city_port/api/match/open?lat=$centre_lat&lng=$centre_lng&date=$search_date&limit=20" ;;
	create | create_kept | create_sync) echo "http://127.0.0.1:$city_port/api/match/requests" ;;
	create_checks) echo "http://127.0.0.1:$checks_port/api/match/requests" ;;
	create_stripe) echo "http://127.0.0.1:$stripe_port/api/match/requests" ;;
	join | join_sync) echo "http://127.0.0.1:$city_port/api/match/join/" ;;
	join_checks) echo "http://127.0.0.1:$checks_port/api/match/join/" ;;
	join_stripe) echo "http://127.0.0.1:$stripe_port/api/match/join/" ;;
	esac
}
# the token of the probe and the other fixed-token runs; create.lua and join.lua give every
# request a token of their own
case_token() {
	case $1 in
	owner | day_sheet | report_year) echo "$owner_token" ;;
	search_small | search_city | search_many | open_city) echo "$player_token" ;;
	create | create_kept | create_checks | create_stripe | create_sync) head -n 1 "$work/creators.tokens" ;;
	join | join_checks | join_stripe | join_sync) head -n 1 "$work/joiners.tokens" ;;
	esac
}

# rules_for CASE: every venue of CITY with all five booking rules for the checks-on cases,
# with none for every other case (as loaded); switched only when the case needs the other
# state, then the venues are vacuumed so that both states are read from tidy tables
rules_state=off
rules_for() {
	local want=off
	[[ $1 == *_checks ]] && want=on
	[ "$want" = "$rules_state" ] && return 0
	if [ "$want" = on ]; then
		asql -c "UPDATE venues SET (max_upcoming_per_player, max_per_player_per_day,
			max_per_player_per_week, booking_window_days, min_notice_minutes) =
			($rules_values)"
	else
		asql -c "UPDATE venues SET (max_upcoming_per_player, max_per_player_per_day,
			max_per_player_per_week, booking_window_days, min_notice_minutes) =
			(NULL, NULL, NULL, NULL, NULL)"
	fi
	tidy venues
	rules_state=$want
}

# undo_writes CASE: after a create or join run (settled), deletes what it wrote and tidies the
# tables it touched, so that every run starts from the loaded data set: the matches the
# creators organized, or the joiners' places, their payments and the PLAYER_JOINED notices (the
# team counters are put back; the trigger counts only joins and leaves). The write budgets'
# rows stay, as for any account. Without triggers (session_replication_role, as
# bench/data.sql): the rows go children first, and the foreign-key check of each deleted place
# would scan payments (its entry_id index is partial), a minute for a run of the fast modes.
undo_writes() {
	local n
	case $1 in
	create | create_kept | create_checks | create_stripe | create_sync)
		asql -v ids="$creators_sql" <<-'SQL' >/dev/null
		BEGIN;
		SET LOCAL session_replication_role = replica;
		CREATE TEMP TABLE gone ON COMMIT DROP AS
		SELECT id FROM match_requests
		 WHERE organizer_id IN (SELECT md5('bench-player-' || p)::uuid
		                          FROM unnest(:'ids'::int[]) p);
		DELETE FROM payments WHERE match_request_id IN (SELECT id FROM gone);
		DELETE FROM match_players WHERE match_request_id IN (SELECT id FROM gone);
		DELETE FROM match_status_changes WHERE match_request_id IN (SELECT id FROM gone);
		-- what the triggers would do: the slots of those courts and dates change, and their
		-- kept free slots are worked out again once the requests are gone
		CREATE TEMP TABLE gone_days ON COMMIT DROP AS
		SELECT DISTINCT resource_id, booking_date FROM match_requests
		 WHERE id IN (SELECT id FROM gone);
		SELECT count(availability_day_bump(resource_id, booking_date)) FROM gone_days;
		SELECT count(search_area_bump(ARRAY[g.booking_date], ARRAY[v.latitude], ARRAY[v.longitude]))
		  FROM gone_days g JOIN resources r ON r.id = g.resource_id JOIN venues v ON v.id = r.venue_id;
		DELETE FROM match_requests WHERE id IN (SELECT id FROM gone);
		SELECT count(free_slots_refresh(courts, ARRAY[booking_date]))
		  FROM (SELECT booking_date, array_agg(resource_id ORDER BY resource_id) AS courts
		          FROM gone_days GROUP BY booking_date) d;
		COMMIT;
		SQL
		tidy "match_requests, match_players, payments, match_status_changes"
		;;
	join | join_checks | join_stripe | join_sync)
		n=$(asql -v ids="$joiners_sql" <<-'SQL'
		BEGIN;
		SET LOCAL session_replication_role = replica;
		CREATE TEMP TABLE gone ON COMMIT DROP AS
		SELECT id, match_request_id, team FROM match_players
		 WHERE player_id IN (SELECT md5('bench-player-' || p)::uuid
		                       FROM unnest(:'ids'::int[]) p);
		DELETE FROM payments WHERE entry_id IN (SELECT id FROM gone);
		DELETE FROM match_players WHERE id IN (SELECT id FROM gone);
		UPDATE match_requests m
		   SET team_a_count = m.team_a_count - g.a, team_b_count = m.team_b_count - g.b
		  FROM (SELECT match_request_id, count(*) FILTER (WHERE team = 'TEAM_A') AS a,
		               count(*) FILTER (WHERE team = 'TEAM_B') AS b
		          FROM gone GROUP BY match_request_id) g
		 WHERE m.id = g.match_request_id;
		DELETE FROM notifications
		 WHERE type = 'PLAYER_JOINED'
		   AND payload->>'playerId' IN (SELECT md5('bench-player-' || p)
		                                  FROM unnest(:'ids'::int[]) p);
		SELECT count(*) FROM gone;
		COMMIT;
		SQL
		)
		tidy "match_requests, match_players, payments, notifications"
		join_shift=$((join_shift + 1))
		# more joins than OPEN matches: TEAM_B's second places were taken (join.lua)
		[ "$n" -le "$join_matches" ] ||
			log "$1: $n joins in one run, more than the $join_matches OPEN matches"
		;;
	esac
}

# finish_run CASE: after a wrk run, once the service is idle, undo what the run wrote
finish_run() {
	settle
	undo_writes "$1"
}

# The first answer of a case decides whether it is measured: a program that is not built or
# a route the program does not have (the catch-all 404) is "n/a (endpoint missing)".
probe() {
	# the answer is kept per mode: the report compares pool's with the reference service's
	local c=$1 tok code body=$work/probe-$mode-$1.json
	local args=(-s -o "$body" -w '%{http_code}' --max-time 30)
	if [ -n "${prog[$c]:-}" ] && [ ! -x "$build/cgi-bin/${prog[$c]}" ]; then
		status[$c]="n/a (endpoint missing: ${prog[$c]} not built)"
		return
	fi
	tok=$(case_token "$c")
	[ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
	local url
	url=$(case_url "$c")
	rules_for "$c"
	sync_for "$c"
	case $c in
	create | create_kept | create_checks | create_stripe | create_sync)
		local d id dur ids=$work/create-ids.txt
		if [ "$c" = create_kept ]; then
			d=$kept_date ids=$work/create-kept-ids.txt
		else
			d=$(madrid_date $create_day)
			create_day=$((create_day + 1))
		fi
		read -r id dur <"$ids"
		args+=(-X POST -H 'Content-Type: application/json' --data "$(jq -nc --arg id "$id" \
			--arg d "$d" --argjson dur "$dur" --argjson lat "$centre_lat" --argjson lng "$centre_lng" \
			'{resourceId: $id, bookingDate: $d, startTime: "08:00:00", slotDurationMinutes: $dur,
			  format: "TWO_VS_TWO", skillLevel: "INTERMEDIATE", searchLat: $lat, searchLng: $lng}')")
		;;
	join | join_checks | join_stripe | join_sync)
		url=$url$(head -n 1 "$work/join-matches.txt")
		args+=(-X POST -H 'Content-Type: application/json' --data '{"team":"TEAM_B"}')
		;;
	esac
	local spent="SELECT COALESCE(max(refreshed_at)::text, '-') FROM write_budgets" before
	before=$(asql -c "$spent")
	code=$(curl "${args[@]}" "$url") || code=000
	undo_writes "$c"
	local budget=kept
	[ "$(asql -c "$spent")" = "$before" ] || budget=spent
	if [[ $code == 2?? ]]; then
		status[$c]=ok
		# a write spends a write budget on the checks-on server only
		case $c:$budget in
		create:spent | join:spent | create_sync:spent | join_sync:spent)
			status[$c]="n/a (a write budget was spent with the checks off)" ;;
		*_checks:kept)
			status[$c]="n/a (no write budget was spent with the checks on)" ;;
		esac
	elif [ "$code" = 404 ] && [ "$(jq -r '.code + "|" + .detail' "$body" 2>/dev/null)" = \
		"NOT_FOUND|No such endpoint." ]; then
		status[$c]="n/a (endpoint missing)"
	else
		status[$c]="n/a (probe answered $code $(jq -r '.code // empty' "$body" 2>/dev/null || true))"
	fi
}

# wrk output -> "req/s p50_ms p99_ms non2xx socket_errors"; when no request finished within
# the run, p50 and p99 are the sentinel $none_done (slower than the run is long)
parse_wrk() {
	awk 'function ms(v) {
		if (v ~ /us$/) return substr(v, 1, length(v) - 2) / 1000
		if (v ~ /ms$/) return substr(v, 1, length(v) - 2) + 0
		if (v ~ /m$/) return substr(v, 1, length(v) - 1) * 60000
		if (v ~ /s$/) return substr(v, 1, length(v) - 1) * 1000
		return v + 0 }
	$1 == "50%" { p50 = ms($2) }
	$1 == "99%" { p99 = ms($2) }
	/^Requests\/sec:/ { rps = $2 }
	/ requests in / { done = $1 }
	/Non-2xx or 3xx responses:/ { non = $NF }
	/Socket errors:/ { gsub(",", ""); err = $4 + $6 + $8 + $10 }
	END { if (rps == "") exit 1; if (done == 0) p50 = p99 = 1e9; printf "%.1f %.3f %.3f %d %d\n", rps, p50, p99, non, err }' "$1"
}

# slots_env THREADS: the settings of slots.lua for a run with that many wrk threads, in the
# caller's envs; every run starts at another court
slots_env() {
	envs=("BENCH_SLOTS_IDS=$work/create-ids.txt" "BENCH_SLOTS_DATE=$slots_date"
		"BENCH_SLOTS_THREADS=$1" "BENCH_SLOTS_SHIFT=$slots_shift")
	slots_shift=$((slots_shift + 20011))
}
# search_env THREADS: the environment of search.lua, a run further along the walk each time
search_env() {
	envs=("BENCH_SEARCH_LAT=$centre_lat" "BENCH_SEARCH_LNG=$centre_lng"
		"BENCH_SEARCH_QUERY=$search_when"
		"BENCH_SEARCH_THREADS=$1" "BENCH_SEARCH_SHIFT=$search_shift")
	search_shift=$((search_shift + 100003))
}

# run_case CASE SECONDS OUTFILE: one bounded wrk run of the case. The CPU seconds the whole
# machine, wrk and the payment provider's stand-in spent during it go to OUTFILE with .cpu for
# .txt (cpu_per_req): wrk runs alone in a subshell, whose `times` then gives the CPU of its
# children (timeout and wrk); the stand-in's own times per request to .provider
run_case() {
	local c=$1 d=$2 out=$3 tok url envs=() busy b0 wrk_times s0 s1 t0 y0 y1 l0
	local args=(-t"$threads" -c"$conns" -d"${d}s" --latency --timeout 10s)
	rules_for "$c"
	sync_for "$c"
	url=$(case_url "$c")
	case $c in
	create | create_checks | create_stripe | create_sync)
		args+=(-s "$bench/create.lua")
		envs=("BENCH_CREATE_IDS=$work/create-ids.txt" "BENCH_CREATE_DATE=$(madrid_date $create_day)"
			"BENCH_CREATE_TOKENS=$work/creators.tokens" "BENCH_CREATE_THREADS=$threads"
			"BENCH_CREATE_LAT=$centre_lat" "BENCH_CREATE_LNG=$centre_lng")
		create_day=$((create_day + 1))
		;;
	create_kept)
		args+=(-s "$bench/create.lua")
		envs=("BENCH_CREATE_IDS=$work/create-kept-ids.txt" "BENCH_CREATE_DATE=$kept_date"
			"BENCH_CREATE_TOKENS=$work/creators.tokens" "BENCH_CREATE_THREADS=$threads"
			"BENCH_CREATE_LAT=$centre_lat" "BENCH_CREATE_LNG=$centre_lng")
		;;
	slots_many)
		args+=(-s "$bench/slots.lua")
		slots_env "$threads"
		;;
	search_many)
		args+=(-s "$bench/search.lua" -H "Authorization: Bearer $(case_token "$c")")
		search_env "$threads"
		;;
	join | join_checks | join_stripe | join_sync)
		args+=(-s "$bench/join.lua")
		envs=("BENCH_JOIN_MATCHES=$work/join-matches.txt" "BENCH_JOIN_TOKENS=$work/joiners.tokens"
			"BENCH_JOIN_SHIFT=$join_shift" "BENCH_JOIN_THREADS=$threads")
		;;
	*)
		tok=$(case_token "$c")
		[ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
		;;
	esac
	t0=$({ wc -l <"$stand/timings"; } 2>/dev/null || echo 0)
	s0=$(stand_in_jiffies)
	y0=$(standby_jiffies)
	is_write "$c" && l0=$(wal_lsn)
	busy_jiffies
	b0=$busy
	wrk_times=$(env "${envs[@]}" timeout $((d + 30)) wrk "${args[@]}" "$url" >"$out" 2>&1 || true
		times)
	busy_jiffies
	s1=$(stand_in_jiffies)
	y1=$(standby_jiffies)
	if is_write "$c"; then wal_between "$l0" "$(wal_lsn)"; else echo "- -"; fi >"${out%.txt}.wal"
	# `times`: "0m0.004s 0m0.001s" (the subshell) then the same for its children, user and system
	printf '%s\n' "$wrk_times" | awk -v b0="$b0" -v b1="$busy" -v s0="$s0" -v s1="$s1" \
		-v y0="$y0" -v y1="$y1" -v hz="$clk_tck" '
		function sec(v) { gsub(",", ".", v); split(v, t, "m"); return t[1] * 60 + t[2] }
		NR == 2 { w = sec($1) + sec($2) }
		END { printf "%.3f %.3f %.3f %.3f\n", (b1 - b0) / hz, w, (s1 - s0) / hz, (y1 - y0) / hz }' \
		>"${out%.txt}.cpu"
	tail -n +$((t0 + 1)) "$stand/timings" 2>/dev/null >"${out%.txt}.provider" || : >"${out%.txt}.provider"
}

# is_write CASE: whether the case writes (creates and joins)
is_write() { case $1 in create* | join*) return 0 ;; *) return 1 ;; esac; }
# wal_lsn: how far the WAL is on disk (a write run's commits are, once it has ended).
# wal_between FROM TO: the WAL written between two such positions, in bytes, and of it the
# bytes of whole pages (full_page_writes: the first change of a page after a checkpoint writes
# the whole page), as "bytes page_bytes", read with pg_waldump outside the measured window;
# "bytes -" when pg_waldump cannot read them all (a checkpoint during the run removed some)
wal_lsn() { asql -c "SELECT pg_current_wal_flush_lsn()"; }
lsn_bytes() { echo $(( (16#${1%/*} << 32) + 16#${1#*/} )); }
wal_between() {
	local stats fpi=""
	if stats=$("$(pg_bin)/pg_waldump" -p "$state/pg/pg_wal" -s "$1" -e "$2" --stats 2>/dev/null); then
		fpi=$(awk '$1 == "Total" { print $5 }' <<<"$stats")
	fi
	echo "$(( $(lsn_bytes "$2") - $(lsn_bytes "$1") )) ${fpi:--}"
}
# wal_per_req OUTFILE: the WAL a request of the run wrote, in bytes, and of it whole pages', as
# "bytes page_bytes" ("- -" for a case that does not write, or a run without a request)
wal_per_req() {
	awk 'FNR == NR { b = $1; f = $2; next }
		/ requests in / { n = $1 }
		END { if (n > 0 && b != "-") printf "%.0f %s\n", b / n, f == "-" ? "-" : sprintf("%.0f", f / n)
		      else print "- -" }' "${1%.txt}.wal" "$1"
}

# cpu_per_req OUTFILE: ms of CPU per request of a wrk run: the whole machine's CPU during the
# run minus wrk's own, the payment provider's stand-in's and the synchronous standby's, over
# the requests wrk completed; - when it completed none. provider_per_req OUTFILE: the
# stand-in's, and the p99 of its own time per call (ms), as "cpu p99", or "- -".
# standby_per_req OUTFILE: the standby's, or - when none ran.
cpu_per_req() {
	awk 'FNR == NR { m = $1; w = $2; s = $3; y = $4; next }
		/ requests in / { n = $1 }
		END { if (n > 0) printf "%.4f\n", (m - w - s - y) * 1000 / n; else print "-" }' "${1%.txt}.cpu" "$1"
}
standby_per_req() {
	awk 'FNR == NR { y = $4; next }
		/ requests in / { n = $1 }
		END { if (n > 0 && y > 0) printf "%.4f\n", y * 1000 / n; else print "-" }' "${1%.txt}.cpu" "$1"
}
provider_per_req() {
	local p99
	p99=$(sort -g "${1%.txt}.provider" | awk '{ v[NR] = $1 } END { if (NR > 0) print v[int(NR * 0.99 + 0.999999)]; }')
	awk -v p99="${p99:--}" 'FNR == NR { s = $3; next }
		/ requests in / { n = $1 }
		END { if (n > 0 && p99 != "-") printf "%.4f %s\n", s * 1000 / n, p99; else print "- -" }' \
		"${1%.txt}.cpu" "$1"
}

# settle: after a wrk run, waits (at most 60 s) until no statement of the service runs any
# more, so that requests still in flight when wrk stopped do not slow the next case down
settle() {
	local deadline=$((SECONDS + 60)) n
	sleep 0.3
	while [ $SECONDS -lt $deadline ]; do
		n=$(asql -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
			AND state <> 'idle' AND pid <> pg_backend_pid()")
		[ "$n" = 0 ] && return 0
		sleep 0.2
	done
	log "statements still running 60 s after wrk stopped"
}

# one_client CASE: p50 in ms of wrk with one connection for 3 s (the service time of one request)
one_client() {
	local out=$work/wrk/$mode-1client-$1.txt tok args=(-t1 -c1 -d3s --latency --timeout 10s)
	local envs=()
	tok=$(case_token "$1")
	[ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
	if [ "$1" = slots_many ]; then
		args+=(-s "$bench/slots.lua")
		slots_env 1
	elif [ "$1" = search_many ]; then
		args+=(-s "$bench/search.lua")
		search_env 1
	fi
	env "${envs[@]}" timeout 40 wrk "${args[@]}" "$(case_url "$1")" >"$out" 2>&1 || true
	settle
	parse_wrk "$out" | awk '{ print $2 }'
}

# apache_mode MODE: (re)starts the three service Apaches in a mode, keeping the database: CITY
# and SMALL with the fair-use checks off, and CITY with them on (the *_checks cases). Mode
# cgi-pgbouncer is plain CGI with a pgbouncer of each Apache's own (PGBOUNCER=1); mode express
# is the reference service in their place.
apache_mode() {
	local mode=$1 stack=$root/scripts/stack.sh pgb=()
	service_stop
	if [ "$mode" = express ]; then
		express_start
		return
	fi
	if [ "$mode" = cgi-pgbouncer ]; then
		mode=cgi
		pgb=(PGBOUNCER=1)
	fi
	local f fcgid=() warm_city=() warm_small=() warm_writes=()
	# each mode's access logs apart (slow_requests)
	while IFS= read -r f; do : >"$f"; done < <(service_logs)
	if [ "$mode" = fastcgi ]; then
		# the programs each Apache serves in the cases, 16 processes each (176 PG sessions)
		fcgid=(FCGID_IDLE_TIMEOUT=$fcgid_idle FCGID_IDLE_SCAN=$fcgid_scan)
		warm_city=("${fcgid[@]}" FCGID_WARM="health public owner search requests invitations")
		warm_small=("${fcgid[@]}" FCGID_WARM="search")
		warm_writes=("${fcgid[@]}" FCGID_WARM="requests invitations")
	fi
	(
		set -a
		# shellcheck disable=SC1091
		. "$state/env"
		env "${checks_off[@]}" "${pgb[@]}" "${warm_city[@]}" \
			"$stack" apache "$state" "$city_port" "$mode" "$build"
		env "${checks_off[@]}" "${pgb[@]}" "${warm_small[@]}" DATABASE_URL="$small_db" \
			"$stack" apache "$state/small" "$small_port" "$mode" "$build"
		env "${checks_on[@]}" "${pgb[@]}" "${warm_writes[@]}" \
			"$stack" apache "$state/checks" "$checks_port" "$mode" "$build"
		if [[ " $cases " == *_stripe* ]]; then
			env "${checks_off[@]}" "${pgb[@]}" "${warm_writes[@]}" PAYMENT_PROVIDER=stripe \
				STRIPE_SECRET_KEY=$stripe_key STRIPE_WEBHOOK_SECRET=whsec_bench \
				STRIPE_API_BASE="http://127.0.0.1:$(cat "$stand/port")" \
				"$stack" apache "$state/stripe" "$stripe_port" "$mode" "$build"
		fi
	) >"$work/apache-$mode.log" 2>&1 || { cat "$work/apache-$mode.log" >&2; return 1; }
}

# round_cases ROUND: the cases of a round in their order. Odd rounds run a case with the
# checks off (without a provider, on a single node) before its checks-on, stripe and
# synchronous-standby twins, even rounds after them, so that neither always follows the other.
round_cases() {
	local c first=() last=()
	if [ $(($1 % 2)) = 1 ]; then
		echo "$cases"
		return
	fi
	for c in $cases; do
		if [[ " $cases " == *" ${c}_checks "* || " $cases " == *" ${c}_stripe "* ||
			" $cases " == *" ${c}_sync "* ]]; then
			last+=("$c")
		else
			first+=("$c")
		fi
	done
	echo "${first[*]} ${last[*]}"
}

# service_logs: the access logs of the service Apaches there are
service_logs() {
	local d
	for d in "$state" "$state/small" "$state/checks" "$state/stripe"; do
		[ -f "$d/apache/logs/access.log" ] && echo "$d/apache/logs/access.log"
	done
	return 0
}
# log_lines: "LOG LINES" of each service log now (where the measured part of a mode begins)
log_lines() {
	local f
	while IFS= read -r f; do echo "$f $(wc -l <"$f")"; done < <(service_logs)
}
# slow_count: "SLOW TOTAL MAX_MS" of the access-log lines on standard input: the requests that
# took 1 s or more by Apache's own time (%D), out of all, and the longest; the warm-up's own
# requests (204, each held 3 s by design) apart
slow_count() {
	awk '$(NF - 2) != 204 { v = $NF; sub(/us$/, "", v); n++; if (v + 0 >= 1000000) s++
		if (v + 0 > m) m = v + 0 }
		END { printf "%d %d %.1f\n", s, n, m / 1000 }'
}
# slow_requests MARKS: slow_count of the service Apaches' logs since the mode began, then
# "SLOW TOTAL" of the lines past MARKS (log_lines at the first round: the rounds, the
# one-client runs and the burst). Each log is kept as work/access-MODE-N.log.
slow_requests() {
	local f i=0 skip all=() measured
	while IFS= read -r f; do
		all+=("$f")
		i=$((i + 1))
		cp "$f" "$work/access-$mode-$i.log"
	done < <(service_logs)
	[ ${#all[@]} -gt 0 ] || { echo "0 0 0 0 0"; return; }
	measured=$(for f in "${all[@]}"; do
		skip=$(awk -v f="$f" '$1 == f { print $2 }' <<<"$1")
		tail -n +$((${skip:-0} + 1)) "$f"
	done | slow_count)
	echo "$(cat "${all[@]}" | slow_count) ${measured% *}"
}

# burst_idle: mode fastcgi's Apache of CITY left idle past mod_fcgid's idle timeout (and two
# of its looks), then 16 connections at once on the slots of another court each for 3 s, as
# the first clients after a quiet spell. Sets burst (wrk's "rps p50 p99 non2xx errors") and
# burst_log ("SLOW TOTAL MAX_MS" of that run, from the access log) and burst_procs (public.cgi's
# processes before and after the idle spell).
burst_idle() {
	local out=$work/wrk/fastcgi-burst.txt alog=$state/apache/logs/access.log off before envs=()
	before=$("$root/scripts/stack.sh" fcgid-count "$state" public)
	log "fastcgi: idle for $((fcgid_idle + 2 * fcgid_scan + 3)) s (mod_fcgid's idle timeout $fcgid_idle s), then a burst"
	sleep $((fcgid_idle + 2 * fcgid_scan + 3))
	burst_procs="$before / $("$root/scripts/stack.sh" fcgid-count "$state" public)"
	off=$(wc -l <"$alog")
	slots_env "$threads"
	env "${envs[@]}" timeout 40 wrk -t"$threads" -c"$conns" -d3s --latency --timeout 10s \
		-s "$bench/slots.lua" "$(case_url slots_many)" >"$out" 2>&1 || true
	settle
	burst=$(parse_wrk "$out" || echo "")
	burst_log=$(tail -n +$((off + 1)) "$alog" | slow_count)
}

# ---- the rounds -----------------------------------------------------------------------------
runs=$work/runs.tsv
: >"$runs"
declare -A mode_status one slow
burst="" burst_log="" burst_procs=""
for mode in $modes; do
	phase "mode $mode"
	log "mode $mode: (re)starting the service Apaches"
	apache_mode "$mode"
	for c in $cases; do
		[ "$c" = trivial ] && { status[$c]=ok; continue; }
		if ! served "$mode" "$c"; then
			status[$c]=$(unserved "$mode" "$c")
			mode_status[$mode.$c]=${status[$c]}
			continue
		fi
		probe "$c"
		mode_status[$mode.$c]=${status[$c]}
		[ "${status[$c]}" = ok ] || log "$mode $c: ${status[$c]}"
	done
	mode_status[$mode.trivial]=ok
	log "mode $mode: warm-up ${warmup}s per case"
	for c in $cases; do
		[ "${status[$c]}" = ok ] || continue
		run_case "$c" "$warmup" "$work/wrk/$mode-warmup-$c.txt"
		finish_run "$c"
	done
	marks=$(log_lines)
	for round in $(seq 1 "$rounds"); do
		for c in $(round_cases "$round"); do
			[ "${status[$c]}" = ok ] || continue
			out=$work/wrk/$mode-$round-$c.txt
			run_case "$c" "$secs" "$out"
			finish_run "$c"
			if line=$(parse_wrk "$out"); then
				cpu=$(cpu_per_req "$out")
				wal=$(wal_per_req "$out")
				echo "$mode $round $c $line $cpu $(provider_per_req "$out") $(standby_per_req "$out")" \
					"$wal" >>"$runs"
				rps=${line%% *}
				[ "$c" = trivial ] && floor_rps=$rps
				log "$mode round $round $c: $rps req/s, p50/p99 $(echo "$line" | awk '{ print $2 "/" $3 }') ms," \
					"non-2xx $(echo "$line" | awk '{ print $4 }'), $(awk -v a="$rps" -v b="${floor_rps:-0}" \
					'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "n/a" }')x the trivial CGI," \
					"CPU $cpu ms/req$(is_write "$c" && echo ", WAL ${wal% *} B/req (${wal#* } of whole pages)")"
			else
				log "$mode round $round $c: wrk gave no result (see $out)"
			fi
		done
	done

	rules_for none	# the venues as loaded
	sync_for none	# a single node again
	for c in health slots slots_many owner day_sheet report_year search_small search_city search_many open_city; do
		[ "${status[$c]:-}" = ok ] && one[$mode.$c]=$(one_client "$c")
	done
	if [ "$mode" = fastcgi ] && [ "${status[slots_many]:-}" = ok ]; then
		burst_idle
	fi
	[ "$mode" = express ] || slow[$mode]=$(slow_requests "$marks")

	# the search's plan, captured from the statements the endpoint really runs (auto_explain on
	# the sessions of plain-CGI requests, nested statements included: the venues are read by
	# the kept free slots' statement inside match_search_rows)
	if [ "$mode" = cgi ] && [ "${status[search_city]:-}" = ok ]; then
		pglog=$state/log/postgresql.log
		asql -c "LOAD 'auto_explain'" \
			-c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" \
			-c "ALTER SYSTEM SET auto_explain.log_min_duration = 0" \
			-c "ALTER SYSTEM SET auto_explain.log_analyze = on" \
			-c "ALTER SYSTEM SET auto_explain.log_buffers = on" \
			-c "ALTER SYSTEM SET auto_explain.log_nested_statements = on" \
			-c "ALTER SYSTEM SET log_min_messages = 'log'" \
			-c "ALTER ROLE courts IN DATABASE courts SET log_min_messages = 'log'" \
			-c "SELECT pg_reload_conf()" >/dev/null
		# (the service's role keeps its own log_min_messages = fatal, scripts/stack.sh; the
		# setting for the role in this database overrides it for the capture)
		sleep 0.5	# the postmaster rereads its configuration asynchronously
		off=$(stat -c %s "$pglog")
		curl -s -o /dev/null --max-time 60 -H "Authorization: Bearer $player_token" \
			"$(case_url search_city)" || true
		sleep 0.2
		tail -c +$((off + 1)) "$pglog" >"$work/search-plan-raw.txt"
		asql -c "ALTER SYSTEM RESET session_preload_libraries" \
			-c "ALTER SYSTEM RESET auto_explain.log_min_duration" \
			-c "ALTER SYSTEM RESET auto_explain.log_analyze" \
			-c "ALTER SYSTEM RESET auto_explain.log_buffers" \
			-c "ALTER SYSTEM RESET auto_explain.log_nested_statements" \
			-c "ALTER SYSTEM RESET log_min_messages" \
			-c "ALTER ROLE courts IN DATABASE courts RESET log_min_messages" \
			-c "SELECT pg_reload_conf()" >/dev/null
		# keep the one plan that reads the venues (the search's own statement when none does)
		awk '/^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] / { keep = /duration: .* plan:/ } keep' \
			"$work/search-plan-raw.txt" |
			awk '/duration: .* plan:/ { n++ } { b[n] = b[n] $0 "\n" }
			     END { for (i = 1; i <= n; i++) if (b[i] ~ / on venues/) { printf "%s", b[i]; exit }
			           for (i = 1; i <= n; i++) if (b[i] ~ /match_search/) { printf "%s", b[i]; exit } }' \
			>"$work/search-plan.txt"
	fi
done

# the standby is no longer needed: its slot would keep the primary's WAL from here on
if [ -d "$standby/pg" ]; then
	asql -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
		WHERE slot_name = 'bench_standby'" >/dev/null
	rm -rf "$standby"
fi

# ---- one plain-CGI request's peak memory -------------------------------------------------------
phase "one request's memory and the sweeper"
rss_kb() {	# program request-uri query [authorization] -> max RSS in kB, or nothing
	local p=$1 uri=$2 q=$3 authz=${4:-} out=$work/rss-out.txt tv=$work/rss-time.txt
	[ -x /usr/bin/time ] && [ -x "$build/cgi-bin/$p" ] || return 0
	local vars=(PATH=/usr/bin:/bin GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1
		REQUEST_METHOD=GET "REQUEST_URI=$uri" "QUERY_STRING=$q" "DATABASE_URL=$city_db"
		"JWT_PUBLIC_KEY_FILE=$JWT_PUBLIC_KEY_FILE" "JWT_ISSUER=$issuer" "JWT_AUDIENCE=$audience")
	[ -n "$authz" ] && vars+=("HTTP_AUTHORIZATION=$authz")
	timeout 30 env -i "${vars[@]}" /usr/bin/time -v -o "$tv" "$build/cgi-bin/$p" \
		</dev/null >"$out" 2>/dev/null || return 0
	# a response with a Status line other than 200 did not do the work being measured
	if grep -q '^Status: [^2]' "$out"; then return 0; fi
	awk -F': ' '/Maximum resident set size/ { print $2 }' "$tv"
}
rss_max() {	# the largest of 3 runs of rss_kb
	local v best="" _
	for _ in 1 2 3; do
		v=$(rss_kb "$@")
		[ -n "$v" ] && { [ -z "$best" ] || [ "$v" -gt "$best" ]; } && best=$v
	done
	echo "$best"
}
rss_slots=""
rss_owner=""
if [ -x /usr/bin/time ]; then
	rss_slots=$(rss_max public.cgi "/api/resources/$slots_resource/slots?date=$slots_date" "date=$slots_date")
	rss_owner=$(rss_max owner.cgi /api/owner/venues "" "Bearer $owner_token")
fi

# ---- the sweeper on expired holds ------------------------------------------------------------
# holds COUNT FIRST_DAY: COUNT PENDING_PAYMENT holds on CITY courts that expired 1..11
# minutes ago, one per court and day from FIRST_DAY days ahead on, with keys made as the
# service makes them (uuid_v7, in the order of their insertion)
holds() {
	DB=$sweep_db asql -v holds="$1" -v day0="$2" -v courts="$city_courts" -v players="$city_players" <<-'SQL'
	BEGIN;
	-- without triggers, as bench/data.sql loads: each hold's trigger would take its court day's
	-- advisory lock, and 100,000 of them in one transaction exceed the lock table (the
	-- organizer's place counted by hand); nothing is kept for days this far ahead
	SET LOCAL session_replication_role = replica;
	CREATE TEMP TABLE bench_hold ON COMMIT DROP AS
	SELECT uuid_v7() AS id, n, c, (now() AT TIME ZONE 'Europe/Madrid')::date + :day0 + n / :courts AS booking_date,
	       time '08:00' + make_interval(mins => (n * 5) % CASE WHEN c % 4 = 0 THEN 14 ELSE 9 END
	                                           * CASE WHEN c % 4 = 0 THEN 60 ELSE 90 END) AS start_time,
	       make_interval(mins => CASE WHEN c % 4 = 0 THEN 60 ELSE 90 END) AS len,
	       1 + (n::bigint * 7919 + 17) % :players AS p
	  FROM (SELECT n, n % :courts + 1 AS c FROM generate_series(0, :holds - 1) n) g;
	INSERT INTO match_requests (id, resource_id, organizer_id, booking_date, start_time, end_time,
	                            starts_at, ends_at, format, skill_level, status, team_size,
	                            team_a_count, team_b_count,
	                            court_price, price_per_player, currency, search_latitude,
	                            search_longitude, search_radius_km, expires_at, created_at, updated_at,
	                            venue_latitude, venue_longitude)
	SELECT h.id, md5('bench-resource-' || h.c)::uuid,
	       md5('bench-player-' || h.p)::uuid, h.booking_date, h.start_time, h.start_time + h.len,
	       (h.booking_date + h.start_time) AT TIME ZONE 'Europe/Madrid',
	       (h.booking_date + h.start_time + h.len) AT TIME ZONE 'Europe/Madrid',
	       'TWO_VS_TWO', 'INTERMEDIATE', 'PENDING_PAYMENT', 2, 1, 0, 20.00, 5.00, 'EUR', 40.45, -3.70, 10,
	       now() - make_interval(secs => 60 + h.n % 600),
	       now() - make_interval(secs => 960 + h.n % 600), now() - make_interval(secs => 960 + h.n % 600),
	       v.latitude, v.longitude
	  FROM bench_hold h
	  JOIN venues v ON v.id = md5('bench-venue-' || ((h.c - 1) / 4 + 1))::uuid;
	INSERT INTO match_players (match_request_id, player_id, team, role, joined_at)
	SELECT h.id, md5('bench-player-' || h.p)::uuid,
	       'TEAM_A', 'ORGANIZER', now() - make_interval(secs => 960 + h.n % 600)
	  FROM bench_hold h;
	INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status, created_at,
	                      updated_at, entry_id)
	SELECT mp.match_request_id, mp.player_id,
	       'PAYMENT', 5.00, 'EUR', 'PENDING', now() - make_interval(secs => 960 + h.n % 600),
	       now() - make_interval(secs => 960 + h.n % 600), mp.id
	  FROM bench_hold h
	  JOIN match_players mp ON mp.match_request_id = h.id;
	COMMIT;
	VACUUM ANALYZE match_requests, match_players, payments;
	CHECKPOINT;
	SQL
}
sweep_run() {	# -> "seconds|summary line", or nothing when it failed
	local t0 t1
	t0=$(now_ms)
	if DATABASE_URL="$(conninfo_host "$state") port=5432 dbname=$sweep_db user=courts" \
		timeout 300 "$build/cron/sweep" >"$work/sweep-$1.log" 2>&1; then
		t1=$(now_ms)
		echo "$(fmt "$((t1 - t0))e-3" 2)|$(tail -n 1 "$work/sweep-$1.log")"
	fi
}
sweep_0="" sweep_50="" sweep_100="" sweep_left=""
# The holds and what the sweeper makes of them stay in CITY, which is loaded again next run;
# a kept data set (BENCH_KEEP) is swept in a copy, dropped afterwards, made while nothing of
# the service is connected to it (a template has no other session)
sweep_db=courts
if [ -x "$build/cron/sweep" ] && [ "${BENCH_KEEP:-0}" = 1 ]; then
	service_stop
	sweep_db=courts_sweep
	DB=postgres asql -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS courts_sweep" \
		-c "CREATE DATABASE courts_sweep TEMPLATE courts OWNER courts STRATEGY FILE_COPY" >/dev/null
fi
if [ -x "$build/cron/sweep" ]; then
	log "sweeper: fixed cost, then 50,000 and 100,000 expired holds"
	sweep_0=$(sweep_run 0)
	# 50,000 holds from day 40 on (or after the create runs' dates, should they reach it), then
	# 100,000 on the days after them (one per court and day)
	day_a=$((create_day > 40 ? create_day : 40))
	day_b=$((day_a + (50000 + city_courts - 1) / city_courts + 1))
	if holds 50000 "$day_a" >"$work/holds-50k.log" 2>&1; then
		sweep_50=$(sweep_run 50k)
	else
		log "inserting 50,000 holds failed (see $work/holds-50k.log)"
	fi
	if holds 100000 "$day_b" >"$work/holds-100k.log" 2>&1; then
		sweep_100=$(sweep_run 100k)
	else
		log "inserting 100,000 holds failed (see $work/holds-100k.log)"
	fi
	sweep_left=$(DB=$sweep_db asql -c "SELECT count(*) FROM match_requests
		WHERE status = 'PENDING_PAYMENT' AND expires_at <= now()")
	[ "$sweep_db" = courts ] || DB=postgres asql -c "DROP DATABASE courts_sweep" >/dev/null
fi

# ---- backup and restore of CITY (pgBackRest, scripts/backup.sh) ------------------------------
# What an operator waits for (docs/operations.md, "Backups"): the cluster restarted with WAL
# archiving as `make run` runs it, a full backup, then a write after a noted time and an
# incremental backup, then a restore to that time started until it takes writes (the archived
# WAL replayed up to the time). The restored cluster must hold CITY without that write.
backup_full="" backup_incr="" restore_files="" restore_start="" restore_check="" db_size=""
# secs_na SECONDS: "N s" for the report, or that the step failed
secs_na() {
	if [ -n "$1" ]; then echo "$1 s"; else echo "n/a (failed, see bench/work/backup-*.log and restore*.log)"; fi
}
if [ "${BENCH_BACKUP:-1}" = 1 ]; then
	phase "backup and restore"
	log "backup and restore of CITY with pgBackRest"
	restored=$work/restored
	rm -rf "$restored"
	# nothing of the service runs on it any more
	service_stop
	"$root/scripts/stack.sh" stop "$state" >/dev/null 2>&1 || true
	if PG_ARCHIVE=1 PG_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-1GB} \
		"$root/scripts/stack.sh" db "$state" >"$work/backup-db.log" 2>&1; then
		db_size=$(asql -c "SELECT pg_size_pretty(sum(pg_database_size(datname)))
			FROM pg_database WHERE datname IN ('courts', 'courts_small')")
		t0=$(now_ms)
		if "$root/scripts/backup.sh" backup "$state" >"$work/backup-full.log" 2>&1; then
			backup_full=$(fmt "$(( $(now_ms) - t0 ))e-3" 1)
		fi
		sleep 1
		mark=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
		sleep 1
		asql -c "UPDATE venues SET name = name || ' (after the mark)'
			WHERE id = md5('bench-venue-1')::uuid" >/dev/null
		# the write's WAL archived, so that replay finds a commit past the time
		seg=$(asql -c "SELECT pg_walfile_name(pg_current_wal_lsn())")
		asql -c "SELECT pg_switch_wal()" >/dev/null
		until_sql "the WAL after the mark is not archived" "SELECT last_archived_wal >= '$seg'
			FROM pg_stat_archiver"
		t0=$(now_ms)
		if "$root/scripts/backup.sh" backup "$state" >"$work/backup-incr.log" 2>&1; then
			backup_incr=$(fmt "$(( $(now_ms) - t0 ))e-3" 1)
		fi
		t0=$(now_ms)
		if [ -n "$backup_full" ] &&
			"$root/scripts/backup.sh" restore "$mark" "$state" "$restored" >"$work/restore.log" 2>&1; then
			restore_files=$(fmt "$(( $(now_ms) - t0 ))e-3" 1)
			t0=$(now_ms)
			if "$root/scripts/stack.sh" db "$restored" >"$work/restore-start.log" 2>&1; then
				restore_start=$(fmt "$(( $(now_ms) - t0 ))e-3" 1)
				restore_check=$(psql "$(conninfo_host "$restored") port=5432 dbname=courts user=postgres" \
					-X -q -tA -c "SELECT count(*) || ' venues, ' || count(*) FILTER (WHERE name LIKE
						'% (after the mark)') || ' with the write after the time'
						FROM venues" 2>&1 || true)
			fi
			"$root/scripts/stack.sh" stop "$restored" >/dev/null 2>&1 || true
		fi
		rm -rf "$restored"
	else
		log "the cluster did not start with WAL archiving (see $work/backup-db.log)"
		# the report still reads it
		"$root/scripts/stack.sh" db "$state" >>"$work/backup-db.log" 2>&1
	fi
fi

# ---- ten times the data ------------------------------------------------------------------------
# Whether a request's cost grows with the data: the read and write cases of pool mode again,
# on CITY at ten times its venues (players and requests with them), by a run.sh of their own
# on a cluster of their own, after everything above, on the same cores; the report puts each
# case's CPU per request beside this run's. That data set takes a quarter of an hour to load,
# so it is kept outside the repository (BENCH_X10_DIR) and loaded again only when it no longer
# fits this run (another day, other migrations or generator: the stamp above); its buffer pool
# is sized for it as this run's is for CITY (BENCH_X10_SHARED_BUFFERS).
X10_CASES="trivial health slots slots_many owner day_sheet report_year search_city search_many open_city create create_kept join"
x10_status="" x10_cases="" x10_venues=$((city_venues * 10))
# The servers' users (postgres, www-data) must enter it, which a home directory such as
# root's (mode 700) forbids: by default it lives in /var/tmp, kept across reboots, in a
# directory of the caller's own
x10_dir=${BENCH_X10_DIR:-/var/tmp/courts-bench-$(id -un)/city-$x10_venues}
x10_work=$work/x10
x10_top=${x10_dir%/*}
if [ "${BENCH_X10:-1}" != 1 ]; then
	x10_status="n/a (BENCH_X10=0)"
elif [[ " $modes " != *" pool "* ]]; then
	x10_status="n/a (measured in mode pool, which this run did not measure)"
else
	for c in $X10_CASES; do
		[[ " $cases " == *" $c "* ]] && x10_cases+="${x10_cases:+ }$c"
	done
	[[ " $x10_cases " == *" trivial "* ]] || x10_cases="trivial${x10_cases:+ }$x10_cases"
fi
# a directory in /var/tmp that someone else made (or a link) is not the caller's to load
if [ -z "$x10_status" ] && [ -z "${BENCH_X10_DIR:-}" ]; then
	{ mkdir -p "$x10_top" && chmod 755 "$x10_top"; } 2>/dev/null || true
	if [ -L "$x10_top" ] || [ ! -d "$x10_top" ] || [ "$(stat -c %u "$x10_top")" != "$(id -u)" ]; then
		x10_status="n/a ($x10_top is not a directory of $(id -un)'s: set BENCH_X10_DIR)"
	fi
fi
if [ -z "$x10_status" ]; then
	mkdir -p "$x10_dir"
	chmod 755 "$x10_dir"
	# the data set on disk (6.3 GB at 100,000 venues), the WAL of its load, and the sweeps' copy
	need_kb=$((x10_venues * 150))
	free_kb=$(df -Pk "$x10_dir" | awk 'NR == 2 { print $4 }')
	[ -f "$x10_dir/state/bench-loads" ] && free_kb=$((free_kb + $(du -sk "$x10_dir/state" | cut -f1)))
	if [ "$free_kb" -lt "$need_kb" ]; then
		x10_status="n/a ($((need_kb / 1048576)) GB needed under $x10_dir, $((free_kb / 1048576)) GB free)"
	fi
fi
if [ -z "$x10_status" ]; then
	phase "ten times the data"
	log "ten times the data: pool mode on CITY at $x10_venues venues, kept under $x10_dir" \
		"(log: $x10_work.log)"
	service_stop
	rm -rf "$x10_work"
	if BUILD=$build BENCH_WORK=$x10_work BENCH_STATE=$x10_dir/state BENCH_RESULTS=$x10_work/results.md \
		BENCH_KEEP=1 BENCH_X10=0 BENCH_BACKUP=0 BENCH_CITY_VENUES=$x10_venues BENCH_MODES=pool \
		BENCH_CASES="$x10_cases" BENCH_SHARED_BUFFERS=${BENCH_X10_SHARED_BUFFERS:-6GB} \
		"$bench/run.sh" >"$x10_work.log" 2>&1; then
		x10_status=ok
	else
		x10_status="n/a (its run failed, see bench/work/x10.log)"
	fi
fi

phase ""

# ---- the report ------------------------------------------------------------------------------
sizes=$(asql -c "SELECT (SELECT count(*) FROM venues) || ' venues, ' || (SELECT count(*) FROM resources)
	|| ' courts, ' || (SELECT count(*) FROM players) || ' players, ' || (SELECT count(*) FROM match_requests
	WHERE status IN ('OPEN', 'MATCHED') AND booking_date <= (now() AT TIME ZONE 'Europe/Madrid')::date + 14)
	|| ' live requests'")
small_sizes=$(DB=courts_small asql -c "SELECT (SELECT count(*) FROM venues) || ' venues, ' ||
	(SELECT count(*) FROM resources) || ' courts, ' || (SELECT count(*) FROM players) || ' players, ' ||
	(SELECT count(*) FROM match_requests) || ' live requests'")

# per (mode, case): median req/s, p50, p99 over the rounds, summed non-2xx and socket errors,
# and the medians of the per-round ratios to the trivial CGI and to health of the same round
col() { awk -v m="$1" -v c="$2" -v k="$3" '$1 == m && $3 == c { print $k }' "$runs"; }
ratio_med() {	# mode case [reference case, default trivial]
	awk -v m="$1" -v c="$2" -v ref="${3:-trivial}" '$1 == m && $3 == ref { t[$2] = $4 }
		$1 == m && $3 == c { r[$2] = $4 }
		END { for (k in r) if (t[k] > 0) print r[k] / t[k] }' "$runs" | median
}
p50_ratio_med() {	# median over rounds of p50(search_city) / p50(search_small)
	awk -v m="$1" '$1 == m && $3 == "search_small" { s[$2] = $5 } $1 == m && $3 == "search_city" { c[$2] = $5 }
		END { for (k in c) if (s[k] > 0) print c[k] / s[k] }' "$runs" | median
}
sum_col() { col "$@" | awk '{ s += $1 } END { print s + 0 }'; }
# cpu_med MODE CASE: median over the rounds of the CPU ms per request (runs without a
# completed request have none)
cpu_med() { col "$1" "$2" 9 | awk '$1 != "-"' | median; }
# pair_med MODE CASE_A CASE_B COLUMN OP: median over the rounds of CASE_A's column OP
# (/ or -) CASE_B's in the same round; nothing when a round lacks either
pair_med() {
	awk -v m="$1" -v a="$2" -v b="$3" -v k="$4" -v op="$5" '
	$1 == m && $3 == a { x[$2] = $k }
	$1 == m && $3 == b { y[$2] = $k }
	END {
		for (r in x)
			if (!(r in y)) continue
			else if (op == "-") print x[r] - y[r]
			else if (y[r] > 0) print x[r] / y[r]
	}' "$runs" | median
}

# target_of MODE CASE -> "ratio_min|p99_max|p50_max|text" (ratio_min: to the trivial CGI).
# The fast mode is pool, the fixed FastCGI pools; fastcgi keeps only the writes' every
# request 2xx, and plain CGI behind pgbouncer has the slots ratio.
target_of() {
	case $1.$2 in
	pool.slots | pool.owner) echo "|25||p99 < 25 ms" ;;
	pool.create) echo "|25||every request 2xx, p99 < 25 ms" ;;
	pool.search_city) echo "||10|p50 < 10 ms" ;;
	cgi-pgbouncer.slots) echo "0.25|||>= 0.25x" ;;
	*.create | *.create_kept | *.join | *.create_checks | *.join_checks | *.create_stripe | \
		*.join_stripe | *.create_sync | *.join_sync)
		echo "|||every request 2xx" ;;
	*) echo "|||-" ;;
	esac
}

table=$work/table.md
{
	echo "| case | mode | req/s | p50 ms | p99 ms | non-2xx | ratio to trivial | ratio to health" \
		"| CPU ms/req | target | met? |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
	for mode in $modes; do
		for c in $cases; do
			served "$mode" "$c" || continue
			st=${mode_status[$mode.$c]:-ok}
			m=$mode
			[ "$c" = trivial ] && m="cgi (floor of the $mode rounds)"
			IFS='|' read -r tmin tp99 tp50 ttext < <(target_of "$mode" "$c")
			if [ "$st" != ok ] || [ -z "$(col "$mode" "$c" 4)" ]; then
				[ "$st" = ok ] && st="n/a (wrk gave no result)"
				echo "| ${label[$c]} | $m | $st | | | | | | | $ttext | $( [ "$ttext" = - ] && echo - || echo "not measured") |"
				continue
			fi
			rps=$(col "$mode" "$c" 4 | median)
			p50=$(col "$mode" "$c" 5 | median)
			p99=$(col "$mode" "$c" 6 | median)
			non=$(sum_col "$mode" "$c" 7)
			errs=$(sum_col "$mode" "$c" 8)
			ratio=$(ratio_med "$mode" "$c")
			# the floor is not the service's program: no ratio to health
			rh=""
			[ "$c" = trivial ] || rh=$(ratio_med "$mode" "$c" health)
			if [ -n "$rh" ]; then rh=$(fmt "$rh" 3); else rh=-; fi
			cpu=$(cpu_med "$mode" "$c")
			if [ -n "$cpu" ]; then cpu=$(fmt "$cpu" 3); else cpu=-; fi
			met="" why=()
			if [ -n "$tmin" ]; then fcmp "$ratio" ">=" "$tmin" || why+=("ratio $(fmt "$ratio" 2)x < ${tmin}x"); fi
			if [ -n "$tp99" ]; then fcmp "$p99" "<" "$tp99" || why+=("p99 $(ms_unit "$p99" 1) >= $tp99 ms"); fi
			if [ -n "$tp50" ]; then fcmp "$p50" "<" "$tp50" || why+=("p50 $(ms_unit "$p50" 1) >= $tp50 ms"); fi
			[ $((non + errs)) -eq 0 ] || why+=("$non non-2xx, $errs socket errors")
			if [ ${#why[@]} -gt 0 ]; then
				reasons=$(IFS=';'; echo "${why[*]}")
				met="**NO**: ${reasons//;/; }"
			elif [ "$ttext" = - ]; then
				met=-
			else
				met=yes
			fi
			nontext=$non
			[ "$errs" -gt 0 ] && nontext="$non (+$errs socket errors)"
			echo "| ${label[$c]} | $m | $(if fcmp "$rps" "<" 10; then fmt "$rps" 1; else fmt "$rps" 0; fi) | $(ms_cell "$p50") | $(ms_cell "$p99") | $nontext | $(fmt "$ratio" 3) | $rh | $cpu | $ttext | $met |"
		done
	done
} >"$table"

# twin_measured MODE CASE TWIN WHAT: whether CASE and its twin (checks on, stripe, a
# synchronous standby) were both measured in MODE; when not, and the twin was asked for, the
# row that says so
twin_measured() {
	[ -n "$(col "$1" "$2" 4)" ] && [ -n "$(col "$1" "$3" 4)" ] && return 0
	served "$1" "$3" || return 1
	[[ " $cases " != *" $3 "* ]] || echo "| $2: $4 ($1) | n/a (not measured) | - | - |"
	return 1
}
# signed VALUE DIGITS: a difference in ms, with its sign
signed() { awk -v v="$1" -v d="$2" 'BEGIN { printf "%+.*f ms", d, v }'; }

other=$work/other.md
{
	echo "| measurement | value | target | met? |"
	echo "|---|---|---|---|"
	for mode in $modes; do
		r="" pc="" ps=""
		if [ -n "$(col "$mode" search_city 5)" ] && [ -n "$(col "$mode" search_small 5)" ]; then
			r=$(p50_ratio_med "$mode")
			pc=$(col "$mode" search_city 5 | median)
			ps=$(col "$mode" search_small 5 | median)
		fi
		if [ -n "$r" ] && fcmp "$pc" ">=" "$none_done"; then
			echo "| search p50 CITY / SMALL ($mode) | no CITY search finished within a ${secs} s run (SMALL p50 $(ms_unit "$ps")) | <= 2x | **NO** |"
		elif [ -n "$r" ]; then
			echo "| search p50 CITY / SMALL ($mode; $(ms_unit "$pc") / $(ms_unit "$ps")) | $(fmt "$r" 2)x | <= 2x | $(verdict "$r" "<=" 2) |"
		else
			echo "| search p50 CITY / SMALL ($mode) | n/a (search not measured) | <= 2x | not measured |"
		fi
	done
	for mode in $modes; do
		for c in health slots slots_many owner day_sheet report_year search_small search_city search_many open_city; do
			[ -n "${one[$mode.$c]:-}" ] &&
				echo "| ${label[$c]}, one client ($mode): p50 | $(ms_unit "${one[$mode.$c]}") | - | - |"
		done
		if [ -n "${one[$mode.search_city]:-}" ] && [ -n "${one[$mode.search_small]:-}" ] &&
			fcmp "${one[$mode.search_city]}" "<" "$none_done"; then
			r=$(awk -v a="${one[$mode.search_city]}" -v b="${one[$mode.search_small]}" 'BEGIN { if (b > 0) print a / b }')
			echo "| search p50 CITY / SMALL, one client ($mode) | $(fmt "$r" 2)x | - | - |"
		fi
	done
	# mod_fcgid's one-second waits (bench/README.md, "mod_fcgid"), counted by Apache itself
	for mode in $modes; do
		[ -n "${slow[$mode]:-}" ] || continue
		read -r n total mx nm totalm <<<"${slow[$mode]}"
		t=- v=-
		if [ "$mode" = fastcgi ] || [ "$mode" = pool ]; then
			t="0 in the rounds"
			v=$(verdict "$nm" "==" 0)
		fi
		echo "| requests of 1 s or more ($mode, by the access logs' time; the rounds, one-client" \
			"runs and burst / every request of the mode, the first after each start, probes" \
			"and warm-up runs included) | $nm of $totalm / $n of $total (longest" \
			"$(fmt "$mx" 1) ms) | $t | $v |"
	done
	if [ -n "$burst" ]; then
		read -r brps bp50 bp99 bnon berr <<<"$burst"
		read -r bn btotal bmx <<<"$burst_log"
		echo "| burst of $conns connections after ${fcgid_idle}+ s idle (fastcgi, slots of another" \
			"court each, 3 s; public.cgi's processes before / after the idle spell: $burst_procs):" \
			"p99 | $(ms_unit "$bp99" 1) (p50 $(ms_unit "$bp50" 2), $(fmt "$brps" 0) req/s," \
			"$bnon non-2xx) | < 50 ms | $(verdict "$bp99" "<" 50) |"
		echo "| burst after idle (fastcgi): requests of 1 s or more | $bn of $btotal" \
			"(longest $(fmt "$bmx" 1) ms) | 0 | $(verdict "$bn" "==" 0) |"
	elif [[ " $modes " == *" fastcgi "* ]]; then
		echo "| burst after idle (fastcgi) | n/a (not measured) | < 50 ms | not measured |"
	fi
	if [ -n "$(col pool search_city 5)" ]; then
		v=$(col pool search_city 5 | median)
		echo "| search CITY p50 (pool) | $(ms_unit "$v" 1) | < 10 ms | $(verdict "$v" "<" 10) |"
	else
		echo "| search CITY p50 (pool) | n/a (not measured) | < 10 ms | not measured |"
	fi
	# the cost of the fair-use checks: each path with them on against off, in the same rounds
	for mode in $modes; do
		served "$mode" create || continue
		for c in create join; do
			on=${c}_checks
			twin_measured "$mode" "$c" "$on" "req/s checks on / off" || continue
			r=$(pair_med "$mode" "$on" "$c" 4 /)
			echo "| $c: req/s checks on / off ($mode) | $(fmt "$r" 3)x | - | - |"
			pon=$(col "$mode" "$on" 5 | median)
			poff=$(col "$mode" "$c" 5 | median)
			if fcmp "$pon" ">=" "$none_done" || fcmp "$poff" ">=" "$none_done"; then
				echo "| $c: p50 checks on - off ($mode) |" \
					"n/a (none done in a ${secs} s run) | - | - |"
				continue
			fi
			d=$(pair_med "$mode" "$on" "$c" 5 -)
			echo "| $c: p50 checks on - off ($mode; $(ms_unit "$pon") on," \
				"$(ms_unit "$poff") off) | $(signed "$d" 2) | - | - |"
		done
	done
	# what taking each share through the payment provider costs each path: with the stand-in of
	# Stripe's API against none, in the same rounds; the stand-in's own CPU and its own time
	# per call apart (the CPU per request of the table is the service's, the stand-in's taken
	# out)
	for mode in $modes; do
		served "$mode" create || continue
		for c in create join; do
			st=${c}_stripe
			twin_measured "$mode" "$c" "$st" "PAYMENT_PROVIDER=stripe / none" || continue
			echo "| $c: req/s stripe / none ($mode) | $(fmt "$(pair_med "$mode" "$st" "$c" 4 /)" 3)x | - | - |"
			echo "| $c: p99 stripe / none ($mode; $(ms_unit "$(col "$mode" "$st" 6 | median)")" \
				"with, $(ms_unit "$(col "$mode" "$c" 6 | median)") without) |" \
				"$(fmt "$(pair_med "$mode" "$st" "$c" 6 /)" 2)x | - | - |"
			d=$(pair_med "$mode" "$st" "$c" 9 -)
			[ -n "$d" ] && echo "| $c: the service's CPU per request, stripe - none ($mode) |" \
				"$(signed "$d" 3) | - | - |"
			v=$(col "$mode" "$st" 10 | awk '$1 != "-"' | median)
			[ -n "$v" ] && echo "| $c: the provider stand-in's own CPU per request ($mode) |" \
				"$(fmt "$v" 3) ms | - | - |"
			v=$(col "$mode" "$st" 11 | awk '$1 != "-"' | median)
			[ -n "$v" ] && echo "| $c: the provider stand-in's own time per call, p99 ($mode) |" \
				"$(ms_unit "$v") | - | - |"
		done
	done
	# what synchronous replication costs each path: a synchronous standby against a single node,
	# in the same rounds; the table's CPU per request is the primary's (the standby's apart)
	for mode in $modes; do
		served "$mode" create || continue
		for c in create join; do
			sy=${c}_sync
			twin_measured "$mode" "$c" "$sy" "a synchronous standby against a single node" || continue
			echo "| $c: req/s synchronous standby / single node ($mode) |" \
				"$(fmt "$(pair_med "$mode" "$sy" "$c" 4 /)" 3)x | - | - |"
			for k in 5:p50 6:p99; do
				echo "| $c: ${k#*:} synchronous standby - single node ($mode;" \
					"$(ms_unit "$(col "$mode" "$sy" "${k%%:*}" | median)") with," \
					"$(ms_unit "$(col "$mode" "$c" "${k%%:*}" | median)") without) |" \
					"$(signed "$(pair_med "$mode" "$sy" "$c" "${k%%:*}" -)" 2) | - | - |"
			done
			d=$(pair_med "$mode" "$sy" "$c" 9 -)
			[ -n "$d" ] && echo "| $c: the primary's CPU per request, synchronous standby -" \
				"single node ($mode) | $(signed "$d" 3) | - | - |"
			v=$(col "$mode" "$sy" 12 | awk '$1 != "-"' | median)
			[ -n "$v" ] && echo "| $c: the standby's own CPU per request ($mode) |" \
				"$(fmt "$v" 3) ms | - | - |"
		done
	done
	if [ ! -x "$build/cron/sweep" ]; then
		echo "| sweep 100,000 expired holds | n/a (cron/sweep not built) | < 10 s | not measured |"
	elif [ -z "$sweep_100" ] || [ -z "$sweep_50" ]; then
		echo "| sweep 100,000 expired holds | n/a (the sweeper failed, see bench/work/sweep-*.log) | < 10 s | **NO** |"
	else
		s0=${sweep_0%%|*} s50=${sweep_50%%|*} s100=${sweep_100%%|*}
		lin=$(awk -v a="$s100" -v b="$s50" 'BEGIN { if (b > 0) print a / b; else print 0 }')
		echo "| sweep, nothing to do (fixed cost on CITY) | $s0 s | - | - |"
		echo "| sweep 50,000 expired holds | $s50 s | - | - |"
		echo "| sweep 100,000 expired holds | $s100 s | < 10 s | $(verdict "$s100" "<" 10) |"
		echo "| sweep linearity: t(100k) / t(50k) | $(fmt "$lin" 2) | <= 2.5 (2 = linear) | $(verdict "$lin" "<=" 2.5) |"
		echo "| expired holds left after the sweeps | $sweep_left | 0 | $( [ "$sweep_left" = 0 ] && echo yes || echo "**NO**") |"
	fi
	if [ ! -x /usr/bin/time ]; then
		echo "| peak RSS, one plain-CGI slots request | n/a (/usr/bin/time missing: package time) | < 12 MB | not measured |"
	elif [ -z "$rss_slots" ]; then
		echo "| peak RSS, one plain-CGI slots request | n/a (public.cgi missing or not 200) | < 12 MB | not measured |"
	else
		mb=$(fmt "$(awk -v k="$rss_slots" 'BEGIN { print k / 1024 }')" 1)
		echo "| peak RSS, one plain-CGI slots request (max of 3) | $mb MB | < 12 MB | $(verdict "$mb" "<" 12) |"
	fi
	[ -n "$rss_owner" ] &&
		echo "| peak RSS, one plain-CGI owner list with JWT (max of 3) | $(awk -v k="$rss_owner" 'BEGIN { printf "%.1f", k / 1024 }') MB | - | - |"
	if [ "${BENCH_BACKUP:-1}" = 1 ]; then
		na="n/a (failed, see bench/work/backup-*.log and restore*.log)"
		echo "| backup, full (pgBackRest; CITY and SMALL, $db_size) | $(secs_na "$backup_full") | - | - |"
		echo "| backup, incremental after one write | $(secs_na "$backup_incr") | - | - |"
		echo "| restore to a time: the files (pgBackRest restore) | $(secs_na "$restore_files") | - | - |"
		echo "| restore to a time: start, the archived WAL replayed up to the time, until it takes" \
			"writes | $(secs_na "$restore_start") | - | - |"
		want="$city_venues venues, 0 with the write after the time"
		echo "| the restored database | ${restore_check:-$na} | $want |" \
			"$( [ "$restore_check" = "$want" ] && echo yes || echo "**NO**") |"
	fi
	echo "| load CITY (INSERT ... SELECT + VACUUM ANALYZE) | $load_city s | seconds | $(verdict "$load_city" "<" 60) |"
	echo "| load SMALL | $load_small s | seconds | $(verdict "$load_small" "<" 60) |"
} >"$other"

# ---- against the reference service: the fast mode (pool) and express of the same run ----------
# vs_target CASE -> "req/s ratio min|whether pool's p99 must be no worse|text"
vs_target() {
	case $1 in
	slots | owner) echo "2|p99|>= 2x req/s, p99 no worse" ;;
	search_small | search_city) echo "5||>= 5x req/s" ;;
	*) echo "||-" ;;
	esac
}
vs=$work/vs.md
{
	echo "| case | same answer? | req/s pool / express | p99 ms pool / express | CPU ms/req pool / express | target | met? |"
	echo "|---|---|---:|---:|---:|---|---|"
	for c in $EXPRESS_CASES; do
		if [ "$c" = trivial ] || [[ " $cases " != *" $c "* ]]; then continue; fi
		IFS='|' read -r vmin vp99 vtext < <(vs_target "$c")
		if [ -z "$(col pool "$c" 4)" ] || [ -z "$(col express "$c" 4)" ]; then
			echo "| ${label[$c]} | | n/a (needs modes pool and express) | | | $vtext | $( [ "$vtext" = - ] && echo - || echo "not measured") |"
			continue
		fi
		rp=$(col pool "$c" 4 | median) rx=$(col express "$c" 4 | median)
		pp=$(col pool "$c" 6 | median) px=$(col express "$c" 6 | median)
		cp=$(cpu_med pool "$c") cx=$(cpu_med express "$c")
		# the probes' bodies as JSON values (key order and spacing aside): the same work
		same="**NO**"
		if jp=$(jq -S -c . "$work/probe-pool-$c.json" 2>/dev/null) && [ -n "$jp" ] &&
			[ "$jp" = "$(jq -S -c . "$work/probe-express-$c.json" 2>/dev/null)" ]; then
			same=yes
		fi
		r=$(awk -v a="$rp" -v b="$rx" 'BEGIN { if (b > 0) print a / b; else print 0 }')
		cpu="-"
		[ -n "$cp" ] && [ -n "$cx" ] && cpu="$(fmt "$cp" 3) / $(fmt "$cx" 3)"
		why=()
		if [ -n "$vmin" ]; then fcmp "$r" ">=" "$vmin" || why+=("$(fmt "$r" 2)x < ${vmin}x"); fi
		if [ -n "$vp99" ]; then fcmp "$pp" "<=" "$px" || why+=("p99 $(ms_unit "$pp" 1) > $(ms_unit "$px" 1)"); fi
		[ "$same" = yes ] || why+=("not the same answer")
		if [ "$vtext" = - ]; then
			met=-
		elif [ ${#why[@]} -gt 0 ]; then
			reasons=$(IFS=';'; echo "${why[*]}")
			met="**NO**: ${reasons//;/; }"
		else
			met=yes
		fi
		echo "| ${label[$c]} | $same | $(fmt "$r" 2)x ($(fmt "$rp" 0) / $(fmt "$rx" 0)) | $(ms_cell "$pp" 1) / $(ms_cell "$px" 1) | $cpu | $vtext | $met |"
	done
} >"$vs"

plan_summary() {
	local f=$work/search-plan.txt
	if [ ! -s "$f" ]; then
		echo "n/a (search not measured in cgi mode, or no plan was captured)"
		return
	fi
	grep -m1 -o 'duration: [0-9.]* ms' "$f" | sed 's/^/statement /'
	# the venue scan nodes with their conditions, and the totals
	awk '/(Scan|scan).* on (venues|players)/ { print; keep = 1; next }
	     keep && /^[[:space:]]*(Index Cond|Recheck Cond|Filter|Rows Removed|Heap Blocks|Buffers):/ { print; next }
	     { keep = 0 }
	     /Planning Time|Execution Time/ { print }' "$f" | sed 's/^\t//'
	grep -q 'venues_earth_idx' "$f" && echo "=> the venue radius filter uses venues_earth_idx" ||
		echo "=> venues_earth_idx is NOT used by the captured plan"
}

# mins SECONDS: in minutes, one decimal
mins() { fmt "$(($1 * 100 / 60))e-2" 1; }
# took_report: the minutes each part of this run took (bench/run.sh from its start to the
# report), and the whole run's without loading the data set of ten times CITY, which is kept
# between runs, against the target
took_report() {
	local name total=0 x10_load=0 rest
	echo "## How long this run took"
	echo
	echo "| part | minutes | target | met? |"
	echo "|---|---:|---|---|"
	for name in "${took_order[@]}"; do
		total=$((total + took[$name]))
		echo "| $name | $(mins "${took[$name]}") | - | - |"
	done
	if [ "$x10_status" = ok ]; then
		x10_load=$(awk '$1 == "took_load" { print $2 }' "$x10_work/summary.txt")
		echo "| of which the ten-times step loading its data set | $(mins "${x10_load:-0}") | - | - |"
	fi
	rest=$((total - ${x10_load:-0}))
	echo "| the whole run | $(mins "$total") | - | - |"
	echo "| the whole run without loading the ten-times data set (kept between runs) |" \
		"$(mins "$rest") | < 40 min | $(verdict "$rest" "<" 2400) |"
	echo
}
# x10_report: the section on ten times the data: each case's CPU per request in pool mode at
# CITY's size (this run) and at ten times (the run of x10_work), the sweeps and the load
x10_report() {
	echo "## Ten times the data (pool)"
	echo
	if [ "$x10_status" != ok ]; then
		echo "$x10_status"
		echo
		return
	fi
	local sum=$x10_work/summary.txt c a b r p q
	x10_get() { awk -v k="$1" '$1 == k { sub(/^[^ ]+ ?/, ""); print; exit }' "$sum"; }
	echo "The same cases in pool mode on CITY at ten times its size ($(x10_get sizes); kept" \
		"under BENCH_X10_DIR, loaded in $(x10_get load_city) s; shared_buffers" \
		"${BENCH_X10_SHARED_BUFFERS:-6GB} against ${BENCH_SHARED_BUFFERS:-1GB}), run after" \
		"everything above by bench/run.sh on a cluster of their own, the same rounds and wrk" \
		"settings. CPU per request as in the first table; one client's p50 as in the other" \
		"measurements. Why a case grows: bench/README.md, \"Ten times the data\"."
	echo
	echo "| case | CPU ms/req 1x | 10x | 10x / 1x | one client p50 1x | 10x | target | met? |"
	echo "|---|---:|---:|---:|---:|---:|---|---|"
	for c in $x10_cases; do
		[ "$c" = trivial ] && continue
		a=$(cpu_med pool "$c")
		b=$(runs=$x10_work/runs.tsv; cpu_med pool "$c")
		p=${one[pool.$c]:-} q=$(x10_get "one.pool.$c")
		if [ -z "$a" ] || [ -z "$b" ]; then
			echo "| ${label[$c]} | ${a:-n/a} | ${b:-n/a} | | | | <= 1.5x | not measured |"
			continue
		fi
		r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) print b / a; else print 0 }')
		echo "| ${label[$c]} | $(fmt "$a" 3) | $(fmt "$b" 3) | $(fmt "$r" 2)x |" \
			"$( [ -n "$p" ] && ms_unit "$p" || echo -) | $( [ -n "$q" ] && ms_unit "$q" || echo -) |" \
			"<= 1.5x | $(verdict "$r" "<=" 1.5) |"
	done
	for k in 50 100; do
		a=sweep_$k a=${!a} a=${a%%|*}
		b=$(x10_get "sweep_$k")
		if [ -n "$a" ] && [ -n "$b" ]; then
			echo "| sweep of ${k},000 expired holds (s) | $a | $b |" \
				"$(fmt "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')" 2)x | | | - | - |"
		fi
	done
	b=$(x10_get load_city)
	echo "| load of CITY (s) | $load_city | $b |" \
		"$(fmt "$(awk -v a="$load_city" -v b="$b" 'BEGIN { if (a > 0) print b / a }')" 1)x | | | - | - |"
	echo
	# what the writes wrote to the WAL at both sizes (runs.tsv's last two columns)
	local w=""
	for c in $x10_cases; do is_write "$c" && w+=" $c"; done
	[ -n "$w" ] || return 0
	echo "The WAL a write request wrote (median over the rounds, bytes), and of it the whole pages"
	echo "written on a page's first change after a checkpoint (every run starts after one):"
	echo
	echo "| case | WAL 1x | of it whole pages | WAL 10x | of it whole pages |"
	echo "|---|---:|---:|---:|---:|"
	wal_med() {	# CASE COLUMN -> the median, in whole bytes, or - when no round has one
		local v
		v=$(col pool "$1" "$2" | awk '$1 != "-"' | median)
		if [ -n "$v" ]; then fmt "$v" 0; else echo -; fi
	}
	for c in $w; do
		echo "| ${label[$c]} | $(wal_med "$c" 13) | $(wal_med "$c" 14) |" \
			"$(runs=$x10_work/runs.tsv; wal_med "$c" 13) | $(runs=$x10_work/runs.tsv; wal_med "$c" 14) |"
	done
	echo
}

machine="$(nproc) vCPU, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
{
	echo "# Benchmark results"
	echo
	echo "Generated by \`make bench\` (bench/run.sh); how to read it: bench/README.md."
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "- machine: $machine; wrk, Apache, the programs and PostgreSQL share these cores"
	echo "- modes: $modes (the trivial CGI floor is always plain CGI, measured in every round)"
	echo "- wrk: \`wrk -t$threads -c$conns -d${secs}s --latency\`, ${warmup} s warm-up per case and mode, $rounds rounds, cases round-robin; medians over the rounds; ratio = median of the per-round ratios to the trivial CGI (to health) of the same round and mode; non-2xx summed over the rounds"
	echo "- CPU ms/req: per run, the CPU time of the whole machine (/proc/stat, all but idle and" \
		"iowait) minus wrk's own (and the payment provider's stand-in's and the synchronous" \
		"standby's, shown apart), over the requests wrk completed; median over the rounds"
	echo "- CITY: $sizes (load $load_city s); SMALL: $small_sizes (load $load_small s)"
	echo "- fair-use checks off: ${checks_off[*]} (empty: unset), no booking rules;" \
		"checks on (the *checks on* rows, a third service Apache on CITY):" \
		"${checks_on[*]}, booking rules ($rules_text) on every CITY venue while they" \
		"run; creates and joins by $writers players each, undone after every run"
	echo
	cat "$table"
	echo
	if [[ " $modes " == *" express "* ]]; then
		echo "## Against the reference service (bench/express, Node.js + Express)"
		echo
		echo "The fast mode (pool) against the same endpoints on Node.js (one process, Express, pg," \
			"jsonwebtoken) over the same database, in the same run; how it is built: bench/README.md."
		echo
		cat "$vs"
		echo
	fi
	x10_report
	took_report
	echo "## Other measurements"
	echo
	cat "$other"
	echo
	echo "## Search plan (CITY, captured with auto_explain from one plain-CGI request)"
	echo
	echo '```'
	plan_summary
	echo '```'
} >"$results"
# what the run that started this one reads of it (the ten-times step), one "key value" a line
{
	echo "sizes $sizes"
	echo "load_city $load_city"
	echo "took_load ${took[loading CITY and SMALL]:-0}"
	for k in 0 50 100; do v=sweep_$k; v=${!v}; echo "sweep_$k ${v%%|*}"; done
	for k in "${!one[@]}"; do echo "one.$k ${one[$k]}"; done
} >"$work/summary.txt"
# the run has ended and undone its writes: a kept data set may serve the next
[ "${BENCH_KEEP:-0}" != 1 ] || echo "$data_stamp" >"$state/bench-data"
echo
cat "$results"
