# Shared helpers for the bats files: HTTP calls, tokens, SQL, fixtures.
# Load with `load test_helper` at the top of each file.

# the scripts' own helpers (free_port, the users the servers run as): one copy for both
# shellcheck source=scripts/lib.sh
. "$BATS_TEST_DIRNAME/../scripts/lib.sh"

# Debian's PATH for users other than root (/etc/profile): no /usr/sbin, where apache2 lives
DEBIAN_USER_PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games
# and root's
DEBIAN_ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# debian_path: a fresh login's PATH for the user running the suite (not the suite's own,
# whose first entry is bats's libexec directory: a `bats` run from there is not bats itself)
debian_path() {
	if [ "$(id -u)" -eq 0 ]; then echo "$DEBIAN_ROOT_PATH"; else echo "$DEBIAN_USER_PATH"; fi
}

# ---- HTTP -------------------------------------------------------------------------------
# req METHOD PATH [-t TOKEN] [-d BODY] [-H 'Name: value']... [-b BASE_URL]
# Sets HTTP_STATUS, HTTP_TYPE (Content-Type without parameters), HTTP_BODY and
# HTTP_HEADERS (raw). A JSON body is sent with Content-Type: application/json unless a
# -H 'Content-Type: ...' is given.
req() {
	local method=$1 path=$2 base=$BASE_URL token="" body="" has_body=0 has_ct=0
	local args=() out="$BATS_TEST_TMPDIR/resp.body" hdr="$BATS_TEST_TMPDIR/resp.headers"
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		-t) token=$2; shift 2 ;;
		-d) body=$2; has_body=1; shift 2 ;;
		-H) [[ ${2,,} == content-type:* ]] && has_ct=1; args+=(-H "$2"); shift 2 ;;
		-b) base=$2; shift 2 ;;
		*) echo "req: unknown option $1" >&2; return 2 ;;
		esac
	done
	[ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
	if [ $has_body = 1 ]; then
		[ $has_ct = 1 ] || args+=(-H "Content-Type: application/json")
		args+=(--data-binary "$body")
	fi
	# curl writes no file for an answer without a body: nothing of the last one may remain
	: >"$out"
	HTTP_STATUS=$(curl -s -g -o "$out" -D "$hdr" -w '%{http_code}' -X "$method" "${args[@]}" \
		"$base$path")
	answer_read "$out" "$hdr"
	[ -z "${COURTS_FUZZ_RECORD:-}" ] || req_record "$method" "$path" "$has_body" "$body" "${args[@]}"
	[ -z "${COURTS_STATE:-}" ] || req_keep "$method" "$path" "$base"
}

# req_keep METHOD PATH BASE_URL: keeps the answer just received, one file each, in the
# suite's state directory (answers/); tests/98-openapi-answers.bats checks every one against
# the API description (openapi/check-responses.mjs reads this layout: six lines, the body).
req_keep() {
	local dir=$COURTS_STATE/answers
	[ -d "$dir" ] || mkdir -p "$dir"
	printf '%s\n%s\n%s\n%s\n%s\n%s\n%s' "$1" "$2" "$3" "$HTTP_STATUS" "$HTTP_TYPE" \
		"${BATS_TEST_FILENAME##*/}: ${BATS_TEST_DESCRIPTION:-setup}" "$HTTP_BODY" \
		>"$dir/${EPOCHREALTIME/./}.$BASHPID"
}

# req_record METHOD PATH HAS_BODY BODY CURL_ARGS...: with COURTS_FUZZ_RECORD=DIR, keeps the
# request just made in DIR, in the form of the request fuzzer's input, with the status it got
# and when; tests/fuzz/seeds.sh makes the fuzzers' seeds from these.
req_record() {
	local method=$1 path=$2 has_body=$3 body=$4
	shift 4
	mkdir -p "$COURTS_FUZZ_RECORD"
	{
		printf '%s %s\n' "$method" "$path"
		while [ $# -gt 0 ]; do
			[ "$1" = -H ] && printf '%s\n' "$2" && shift
			shift
		done
		printf 'X-Recorded: %s %s\n\n' "$HTTP_STATUS" "$(date +%s)"
		[ "$has_body" = 0 ] || printf '%s' "$body"
	} >"$COURTS_FUZZ_RECORD/$(date +%s%N).$$"
}

# answer_read BODY_FILE HEADERS_FILE: sets HTTP_HEADERS, HTTP_TYPE (the last Content-Type,
# without parameters) and HTTP_BODY from the files curl wrote. With the shell's own means, not
# seven processes: the suite reads thousands of answers.
answer_read() {
	HTTP_HEADERS=$(<"$2")
	last_header content-type
	HTTP_TYPE=${HEADER_VALUE%%;*}
	HTTP_TYPE=${HTTP_TYPE// /}
	HTTP_BODY=$(<"$1")
}

# last_header NAME: sets HEADER_VALUE to the value of the last NAME header of the last answer
# (without the space after the colon, nor CR), and HEADER_FOUND to 1 if it has one, else "".
last_header() {
	local line name=${1,,}
	HEADER_VALUE="" HEADER_FOUND=""
	while IFS= read -r line; do
		[[ ${line,,} == "$name":* ]] && HEADER_VALUE=${line#*:} HEADER_FOUND=1
	done <<<"$HTTP_HEADERS"
	HEADER_VALUE=${HEADER_VALUE# }
	HEADER_VALUE=${HEADER_VALUE//$'\r'/}
}

# header NAME: prints the value of a response header of the last answer (last_header).
header() {
	last_header "$1"
	[ -z "$HEADER_FOUND" ] || printf '%s\n' "$HEADER_VALUE"
}

# jqr FILTER: jq -r on the last response body.
jqr() {
	jq -r "$@" <<<"$HTTP_BODY"
}

# expect STATUS [TYPE]: the last response had this status and Content-Type
# (default application/json, or application/problem+json for 4xx/5xx; "-" for no body).
expect() {
	local want_type=${2:-}
	if [ -z "$want_type" ]; then
		if [ "$1" -ge 400 ]; then want_type=application/problem+json; else want_type=application/json; fi
	fi
	if [ "$HTTP_STATUS" != "$1" ]; then
		echo "expected status $1, got $HTTP_STATUS: $HTTP_BODY" >&2
		return 1
	fi
	if [ "$want_type" = - ]; then
		[ -z "$HTTP_BODY" ] || { echo "expected no body, got: $HTTP_BODY" >&2; return 1; }
	elif [ "$HTTP_TYPE" != "$want_type" ]; then
		echo "expected Content-Type $want_type, got '$HTTP_TYPE'" >&2
		return 1
	fi
}

# expect_problem STATUS CODE [FIELD...]: a problem+json answer with this code and status (a
# number), an https type, a title and a detail (non-empty strings), whose errors name each
# FIELD given. One jq run reads it all: jq starts in about 15 ms, and the suite asks this
# some thousands of times.
expect_problem() {
	local status=$1 code=$2 why
	shift 2
	expect "$status" application/problem+json || return 1
	why=$(jq -r -s --arg code "$code" --argjson status "$status" --args '
		def text: type == "string" and . != "";
		if length != 1 or (.[0] | type) != "object" then "not one JSON object" else .[0]
		| ($ARGS.positional - [.errors | arrays | .[] | objects | .field]) as $missing
		| if .code != $code then "expected code \($code)" else empty end,
		  if .status != $status then "status field mismatch" else empty end,
		  if (.type | type == "string" and startswith("https://")) | not
		      then "no https type" else empty end,
		  if (.title | text) and (.detail | text) | not then "no title/detail" else empty end,
		  ($missing[] | "expected an error on field \(.)") end' "$@" <<<"$HTTP_BODY") || why="not JSON"
	[ -z "$why" ] || { printf '%s: %s\n' "${why//$'\n'/; }" "$HTTP_BODY" >&2; return 1; }
}

# same FILTER JSON: the last body through FILTER equals JSON (key order ignored).
same() {
	local got want
	got=$(jq -S -c "$1" <<<"$HTTP_BODY") || return 1
	want=$(jq -S -c . <<<"$2") || return 1
	[ "$got" = "$want" ] || { printf 'got:  %s\nwant: %s\n' "$got" "$want" >&2; return 1; }
}

# ---- tokens ----------------------------------------------------------------------------
# token SUB [ROLES] [extra mint-token options]: a valid RS256 development token.
token() {
	local sub=$1 roles=${2:-}
	shift 2 2>/dev/null || shift $#
	"$COURTS_BUILD/tools/mint-token" -k "$JWT_PRIVATE_KEY_FILE" -s "$sub" -r "$roles" \
		-i "${JWT_ISSUER:-https://auth.courts.local/}" -a "${JWT_AUDIENCE:-courts-api}" "$@"
}

# ---- database --------------------------------------------------------------------------
# sql 'SELECT ...' [psql -v options]: runs as the superuser, prints unaligned tuples.
sql() {
	local q=$1
	shift
	psql "$PSQL_ADMIN" -X -q -tA -v ON_ERROR_STOP=1 "$@" -c "$q"
}

# held_open SQL: a session of its own begins a transaction, runs SQL in it and holds it open
# (its locks, its uncommitted writes) until held_commit; returns once SQL has run.
held_open() {
	rm -f "$BATS_TEST_TMPDIR/held.sql"
	mkfifo "$BATS_TEST_TMPDIR/held.sql"
	psql "$PSQL_ADMIN" -X -q -tA -v ON_ERROR_STOP=1 <"$BATS_TEST_TMPDIR/held.sql" \
		>"$BATS_TEST_TMPDIR/held.out" 2>&1 3>&- &
	HELD=$!
	exec 4>"$BATS_TEST_TMPDIR/held.sql"
	echo "BEGIN; $1; SELECT 'held';" >&4
	until grep -qx held "$BATS_TEST_TMPDIR/held.out"; do
		kill -0 "$HELD" 2>/dev/null || { cat "$BATS_TEST_TMPDIR/held.out" >&2; return 1; }
		sleep 0.02
	done
}

# held_commit: commits the transaction of held_open and waits for its session to end.
held_commit() {
	echo "COMMIT;" >&4
	exec 4>&-
	wait "$HELD"
}

# reset_db: every table emptied, so each test starts from known data. Users stay: a user row
# is never deleted in production, so FastCGI workers may keep (iss, sub) -> id in memory.
# The dates whose free slots are kept stay too (sql/0019_free_slots.sql): emptied with the
# courts, free_slots is right for them, and searches near today read it.
# DELETE with foreign-key triggers off (the replica role) instead of TRUNCATE: the tables of
# a test are small, and TRUNCATE's fixed cost per table (new files, catalog updates) made
# it the most expensive step of most tests (about 110 ms against 15 ms).
reset_db() {
	# every table but the users and the reference data of the migrations
	sql "SET session_replication_role = replica;
	     DO \$\$
	     DECLARE t text;
	     BEGIN
	         FOR t IN SELECT quote_ident(tablename) FROM pg_tables
	                   WHERE schemaname = 'public'
	                     AND tablename NOT IN ('users', 'schema_migrations', 'match_formats',
	                                           'match_policy', 'reliability_rules',
	                                           'match_transitions', 'free_slot_dates')
	         LOOP
	             EXECUTE 'DELETE FROM ' || t;
	         END LOOP;
	     END \$\$"
}

# The last commit before sql/areas/: databases in service were migrated by it, and one mode
# of the suite runs on a database it migrated, upgraded (tests/setup_suite.bash).
BEFORE_AREAS=66db736fb5b3681b870698ca4ed0adc6c091d790

# admin_on DB: the superuser's conninfo on another database of the suite's cluster.
admin_on() {
	echo "${PSQL_ADMIN/dbname=courts/dbname=$1}"
}

# scratch_db NAME [MIGRATE]: an empty database with the schema of MIGRATE (default this
# tree's scripts/migrate.sh) and the sweeper's kept dates, owned by the service's role
# (dropped by drop_scratch).
scratch_db() {
	psql "$(admin_on postgres)" -X -q -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $1" \
		-c "CREATE DATABASE $1 OWNER courts" &&
	psql "$(admin_on "$1")" -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION cube" \
		-c "CREATE EXTENSION earthdistance" -c "CREATE EXTENSION btree_gist" &&
	"${2:-$COURTS_ROOT/scripts/migrate.sh}" "${DATABASE_URL/dbname=courts/dbname=$1}" >/dev/null &&
	# the dates whose slots are kept, as the sweeper's first run makes them (scripts/stack.sh):
	# its rule alone, which an older schema has too where this tree's sweeper has more
	psql "${DATABASE_URL/dbname=courts/dbname=$1}" -X -q -v ON_ERROR_STOP=1 -c "DO \$\$
		BEGIN
			LOOP
				EXIT WHEN (SELECT dates_added + courts_filled FROM free_slot_dates_keep()) = 0;
			END LOOP;
		END \$\$"
}

# drop_scratch: drops the databases named in SCRATCH (for teardown).
drop_scratch() {
	local db
	for db in ${SCRATCH:-}; do
		psql "$(admin_on postgres)" -X -q -c "DROP DATABASE IF EXISTS $db" 2>/dev/null ||
			true
	done
}

# user_id SUB: the local id of the token subject SUB, created if new.
user_id() {
	sql "INSERT INTO users (issuer, subject) VALUES ('${JWT_ISSUER:-https://auth.courts.local/}', '$1')
	     ON CONFLICT (issuer, subject) DO UPDATE SET subject = EXCLUDED.subject RETURNING id"
}

# ---- fixtures (straight SQL, independent of the endpoints under test) ------------------
# fixture_venue OWNER_SUB [STATUS] [LAT] [LNG] [TZ]: prints the venue id.
fixture_venue() {
	local owner status=${2:-ACTIVE} lat=${3:-40.4168} lng=${4:--3.7038} tz=${5:-Europe/Madrid}
	owner=$(user_id "$1")
	sql "INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude, timezone,
	         status, suspended_by, reject_reason)
	     VALUES ('$owner', 'Club Central', 'Calle Mayor 1', 'Madrid', 'Spain', $lat, $lng, '$tz',
	         '$status', CASE WHEN '$status' = 'SUSPENDED' THEN 'OWNER' END,
	         CASE WHEN '$status' = 'REJECTED' THEN 'Blurry photos' END)
	     RETURNING id"
}

# fixture_court VENUE_ID [DURATION] [STATUS]: a court open 08:00-22:00 every day with a
# WEEKDAY rule of 20.00 EUR and a WEEKEND rule of 30.00 EUR over the whole day; prints its id.
fixture_court() {
	local venue=$1 dur=${2:-90} status=${3:-ACTIVE} id
	id=$(sql "INSERT INTO resources (venue_id, name, type, slot_duration_minutes, status,
	              suspended_by, reject_reason)
	          VALUES ('$venue', 'Court 1', 'PADEL_COURT', $dur, '$status',
	              CASE WHEN '$status' = 'SUSPENDED' THEN 'OWNER' END,
	              CASE WHEN '$status' = 'REJECTED' THEN 'Net missing' END)
	          RETURNING id")
	sql "INSERT INTO resource_schedules (resource_id, day_of_week, opening_time, closing_time)
	     SELECT '$id', d, '08:00', '22:00' FROM generate_series(1, 7) d;
	     INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	     VALUES ('$id', 'WEEKDAY', '00:00', '24:00', 20.00, 'EUR'),
	            ('$id', 'WEEKEND', '00:00', '24:00', 30.00, 'EUR')" >/dev/null
	echo "$id"
}

# fixture_hold RESOURCE DATE START END STATUS [EXPIRES_SQL]: a match request holding the court
# from START to END on DATE (instants in Europe/Madrid), as the API would write it; EXPIRES_SQL
# is an SQL expression (default now() + 15 minutes).
fixture_hold() {
	local org
	org=$(user_id organizer)
	sql "INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
	         end_time, starts_at, ends_at, format, skill_level, status, team_size, court_price,
	         price_per_player, currency, search_latitude, search_longitude, search_radius_km,
	         expires_at, cancel_reason)
	     SELECT '$1', '$org', d, '$3', '$4', (d + time '$3') AT TIME ZONE 'Europe/Madrid',
	         (d + time '$4') AT TIME ZONE 'Europe/Madrid', 'TWO_VS_TWO', 'INTERMEDIATE', '$5', 2,
	         20.00, 5.00, 'EUR', 40.4168, -3.7038, 10, ${6:-now() + interval '15 minutes'},
	         CASE WHEN '$5' = 'CANCELLED' THEN 'ORGANIZER' END
	       FROM (SELECT date '$2' AS d) x" >/dev/null
}

# fixture_player SUB SKILL LAT LNG: a player profile; prints the user id.
fixture_player() {
	local id
	id=$(user_id "$1")
	sql "INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude)
	     VALUES ('$id', '$1', '$2', $3, $4)
	     ON CONFLICT (user_id) DO UPDATE SET skill_level = EXCLUDED.skill_level,
	         home_latitude = EXCLUDED.home_latitude, home_longitude = EXCLUDED.home_longitude" \
		>/dev/null
	echo "$id"
}

# local_date [DAYS]: today + DAYS in the fixtures' zone (Europe/Madrid), YYYY-MM-DD.
local_date() {
	TZ=Europe/Madrid date -d "+${1:-0} days" +%F
}

# CLEAN_ENV: the environment of the stand-ins and their checks, no variables but PATH, HOME
# and TMPDIR: the official client reads the environment it starts in, and what a test's
# stand-in prints or sends must not depend on what the caller's shell exports. A stand-in in
# the background is started as `(exec "${CLEAN_ENV[@]}" node ...) &`, so that its PID is $!.
CLEAN_ENV=(env -i "PATH=$PATH" "HOME=${HOME:-/}" "TMPDIR=${TMPDIR:-/tmp}")

# clean_node ARGS...: node in CLEAN_ENV.
clean_node() {
	"${CLEAN_ENV[@]}" node "$@"
}

# now_ms: the time in milliseconds
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# ---- a second Apache with other settings ------------------------------------------------
# extra_apache NAME VAR=VALUE...: starts another Apache on the suite's database with the
# given settings; prints its base URL. Stopped by teardown_suite.
extra_apache() {
	local name=$1 port try
	shift
	# another suite running side by side may take the port between the look and the bind
	for try in 1 2 3; do
		port=$(free_port)
		if (
			set -a
			. "$COURTS_STATE/env"
			for kv in "$@"; do export "${kv?}"; done
			# fd 3 closed: a server that kept bats' fd 3 would keep bats waiting for it
			"$COURTS_ROOT/scripts/stack.sh" apache "$COURTS_STATE/extra-$name" "$port" \
				"$COURTS_MODE" "$COURTS_BUILD" >&2 3>&-
		); then
			echo "http://127.0.0.1:$port"
			return 0
		fi
		"$COURTS_ROOT/scripts/stack.sh" stop-apache "$COURTS_STATE/extra-$name" 3>&- || true
	done
	return 1
}

# throwaway_user PREFIX HOME DIR: under root, a new account PREFIX<pid> with home HOME (not
# made), recorded in DIR/made-user for throwaway_user_remove; otherwise the caller itself.
# Prints its name.
throwaway_user() {
	local name=$1$$ deadline=$((SECONDS + 60))
	if [ "$(id -u)" -ne 0 ]; then
		id -un
		return
	fi
	! id "$name" >/dev/null 2>&1 || userdel "$name"
	# useradd locks /etc/passwd: a suite running side by side may hold it for a moment
	until useradd -M -d "$2" -s /bin/sh -U "$name" 2>"$3/useradd.err"; do
		[ $SECONDS -lt $deadline ] || { cat "$3/useradd.err" >&2; return 1; }
		sleep 0.2
	done
	echo "$name" >"$3/made-user"
	echo "$name"
}

# login_cmd USER HOME: LOGIN_CMD, the prefix that runs a command as USER (directly when USER is
# the caller) with a fresh login's environment: HOME, Debian's PATH for a user, no locale.
login_cmd() {
	LOGIN_CMD=(env -i HOME="$2" USER="$1" LOGNAME="$1" SHELL=/bin/sh PATH="$DEBIAN_USER_PATH")
	[ "$(id -u)" -ne 0 ] ||
		LOGIN_CMD=(setpriv --reuid="$1" --regid="$1" --init-groups -- "${LOGIN_CMD[@]}")
}

# as_login USER HOME CMD...: CMD as USER, with a fresh login's environment (login_cmd)
as_login() {
	local LOGIN_CMD
	login_cmd "$1" "$2"
	shift 2
	"${LOGIN_CMD[@]}" "$@"
}

# throwaway_user_remove DIR: removes the account throwaway_user made for DIR, if it made one.
throwaway_user_remove() {
	[ -f "$1/made-user" ] || return 0
	userdel "$(cat "$1/made-user")" || echo "# could not remove the test account" >&3
}

# make_build: the suite's build directory as make's BUILD, relative to the checkout when it is
# inside (make cannot take a path with a space as a target).
make_build() {
	local rel=${COURTS_BUILD#"$COURTS_ROOT"/}
	echo "${rel:-build}"
}

# readme_journey BASE: the shell block under the README's "## A player's whole journey", run
# as written against BASE from inside the checkout, with the real `make -s token` (which signs
# with the suite's key, JWT_PRIVATE_KEY_FILE of the suite's env file); sets status and output
# (run), and checks that it ran through and left the state the story tells.
readme_journey() {
	local script
	script=$(awk '/^## A player.s whole journey/ { inside = 1 }
	     inside && /^```sh$/ { code = 1; next }
	     code && /^```$/ { exit }
	     code { print }' "$COURTS_ROOT/README.md")
	[ -n "$script" ]
	[[ "$script" == *'API=http://127.0.0.1:8080'* ]]
	[[ "$script" == *'$(make -s token SUB=ana)'* ]]
	script=${script//API=http:\/\/127.0.0.1:8080/API=$1}
	cd "$COURTS_ROOT"
	run env BUILD="$(make_build)" bash -c "set -euo pipefail
		$script"
	echo "$output"
	[ "$status" -eq 0 ]
	# the match of the story (the series' own are read by 70-readme)
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests m
	          WHERE NOT EXISTS (SELECT 1 FROM match_series_matches sm
	                             WHERE sm.match_request_id = m.id)")" = "CANCELLED ORGANIZER" ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_reason = 'LEFT'")" = 1 ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_reason = 'ABSENT'")" = 1 ]
	# Carla's leave, Dan's place taken by Carla, then the cancel: Ana, Ben, Eve and Carla
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 6 ]
}

# shared_host_apache NAME DOCROOT: an Apache of the kind a shared host runs, serving DOCROOT
# at its root: plain CGI through mod_cgid, mod_rewrite, mod_env and mod_mime, .htaccess files
# allowed FileInfo AuthConfig Options=ExecCGI with FollowSymLinks (what the README says a host
# must allow, and no more), no SetEnv and nothing of the project in the server's
# configuration; under root, www-data runs the programs. Its files are in
# $COURTS_STATE/extra-NAME/apache (99-logs reads the error log, teardown_suite stops it).
# Prints its base URL.
shared_host_apache() {
	local d=$COURTS_STATE/extra-$1/apache docroot=$2 port user="" deadline
	mkdir -p "$d/logs" "$d/run"
	[ "$(id -u)" != 0 ] || user='User www-data
Group www-data'
	port=$(free_port)
	cat >"$d/httpd.conf" <<-CONF
	ServerRoot "$d"
	PidFile "$d/run/httpd.pid"
	Listen 127.0.0.1:$port
	ServerName 127.0.0.1:$port
	ErrorLog "$d/logs/error.log"
	$user
	LoadModule mpm_event_module      /usr/lib/apache2/modules/mod_mpm_event.so
	LoadModule authz_core_module     /usr/lib/apache2/modules/mod_authz_core.so
	LoadModule env_module            /usr/lib/apache2/modules/mod_env.so
	LoadModule mime_module           /usr/lib/apache2/modules/mod_mime.so
	LoadModule rewrite_module        /usr/lib/apache2/modules/mod_rewrite.so
	LoadModule cgid_module           /usr/lib/apache2/modules/mod_cgid.so
	LoadModule reqtimeout_module     /usr/lib/apache2/modules/mod_reqtimeout.so
	TypesConfig /etc/mime.types
	ScriptSock "$d/run/cgid.sock"
	DocumentRoot "$docroot"
	<Directory />
	    AllowOverride None
	    Options None
	    Require all denied
	</Directory>
	<Directory "$docroot">
	    AllowOverride FileInfo AuthConfig Options=ExecCGI
	    Options FollowSymLinks
	    Require all granted
	</Directory>
	<Files ".ht*">
	    Require all denied
	</Files>
	CONF
	apache2 -f "$d/httpd.conf" -k start 3>&- >&2 || { cat "$d/logs/error.log" >&2; return 1; }
	deadline=$((SECONDS + 20))
	until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
		[ $SECONDS -lt $deadline ] || { cat "$d/logs/error.log" >&2; return 1; }
		sleep 0.1
	done
	echo "http://127.0.0.1:$port"
}

# ---- raw connections --------------------------------------------------------------------
# slow_client OUT BASE_URL HOW [TOKEN]: PUT /api/players/me announcing a body of 2,000 bytes,
# of which it sends the first bytes and then one more a second (HOW=trickle) or nothing more
# (HOW=stall); the raw answer goes to OUT. Run it in the background with fd 3 closed. Bounded:
# it writes for at most SLOW_WRITE_S seconds (default 30) and waits for the answer for at most
# 10 s more.
slow_client() {
	local out=$1 hostport=${2#http://} how=$3 tok=${4:-} fd writer="" secs=${SLOW_WRITE_S:-30}
	exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
	{
		printf 'PUT /api/players/me HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n' "$hostport"
		[ -z "$tok" ] || printf 'Authorization: Bearer %s\r\n' "$tok"
		printf 'Content-Type: application/json\r\nContent-Length: 2000\r\n\r\n{"displayName":'
	} >&"$fd"
	if [ "$how" = trickle ]; then
		(for _ in $(seq 1 "$secs"); do sleep 1; printf ' ' || exit 0; done) >&"$fd" 2>/dev/null &
		writer=$!
	fi
	timeout $((secs + 10)) cat <&"$fd" >"$out"
	[ -z "$writer" ] || kill "$writer" 2>/dev/null || true
	exec {fd}>&-
}

# raw_status FILE / raw_type FILE / raw_body FILE: status, Content-Type (without parameters)
# and body of a raw HTTP answer saved by slow_client or a raw request.
raw_status() {
	head -n 1 "$1" | cut -d' ' -f2
}
raw_type() {
	tr -d '\r' <"$1" | sed -n '/^$/q;p' | grep -i '^content-type:' | cut -d: -f2- | cut -d';' -f1 |
		tr -d ' '
}
raw_body() {
	tr -d '\r' <"$1" | sed '1,/^$/d'
}

# expect_raw_problem FILE STATUS CODE: FILE holds a problem+json answer with this status and code.
expect_raw_problem() {
	local got
	got="$(raw_status "$1") $(raw_type "$1") $(raw_body "$1" | jq -r '"\(.status) \(.code)"' 2>/dev/null || true)"
	[ "$got" = "$2 application/problem+json $2 $3" ] ||
		{ echo "expected $2 problem+json $3, got: $got; $(head -c 300 "$1")" >&2; return 1; }
}

# ---- logs -------------------------------------------------------------------------------
# expect_log apache|postgres ERE: this test causes, on purpose, lines matching ERE in that
# server's log (any Apache of the suite); tests/99-logs.bats does not count them as failures.
expect_log() {
	printf '%s\n' "$2" >>"$COURTS_STATE/expected-$1.log"
}

# expect_autovacuum_yield: this test takes a lock autovacuum gives way to (ANALYZE, ALTER TABLE);
# PostgreSQL logs the autovacuum or autoanalyze it cancels for it, at level ERROR.
expect_autovacuum_yield() {
	expect_log postgres 'ERROR:  canceling autovacuum task'
}

# refunds_ok: every refund of the ledger names a PAID payment of the same player and match, for
# its whole amount, and no payment is refunded twice (tests/47-match-ledger, tests/77-backup).
refunds_ok() {
	[ "$(sql "SELECT count(*) FROM payments r LEFT JOIN payments p ON p.id = r.refund_of
	           WHERE r.kind = 'REFUND'
	             AND (p.id IS NULL OR p.kind <> 'PAYMENT' OR p.status <> 'PAID'
	                  OR p.player_id <> r.player_id OR p.match_request_id <> r.match_request_id
	                  OR p.amount <> r.amount)")" = 0 ]
	[ "$(sql "SELECT count(*) - count(DISTINCT refund_of) FROM payments WHERE kind = 'REFUND'")" = 0 ]
}

# ---- systemd unit files (tests/07-pool, tests/97-deb start a pool as its unit says) -------
# unit_value FILE KEY: the value of KEY= in a unit file (the last one)
unit_value() {
	sed -n "s/^$2=//p" "$1" | tail -n 1
}

# unit_words VALUE: a unit file value split as systemd splits it (double quotes group,
# \" and \\ escape), one word per line, with the specifiers %% and $$ undone
unit_words() {
	xargs -n 1 printf '%s\n' <<<"$1" | sed -e 's/%%/%/g' -e 's/\$\$/$/g'
}
