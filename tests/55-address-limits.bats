#!/usr/bin/env bats
# Per client address limits of the shipped Apache configuration (apache/limits.conf, with the
# project's module apache/mod_courts_limits.c): requests a minute and requests in progress at
# once per address; past either, 429 problem+json with Retry-After, other addresses
# unaffected; an address that finds no room in a full table is served. Loopback is exempt
# unless ADDR_LIMIT_LOOPBACK is set, as here: every client of the suite is on 127.0.0.0/8,
# which lets a test speak from several addresses: 127.0.0.1 (also the one the stack's start-up
# checks come from), 127.0.0.2 and 127.0.0.3 (and 127.0.0.10 to .25 for the full table).

load test_helper

setup_file() {
	RATE=$(extra_apache addr-rate ADDR_LIMIT_LOOPBACK=1 ADDR_PER_MINUTE=10)
	BUSY=$(extra_apache addr-busy ADDR_LIMIT_LOOPBACK=1 ADDR_CONCURRENT=3)
	# the same tight limits, loopback left exempt as `make run` and `make test` leave it
	OPEN=$(extra_apache addr-open ADDR_PER_MINUTE=5 ADDR_CONCURRENT=1)
	# room for eight addresses only
	FULL=$(extra_apache addr-full ADDR_LIMIT_LOOPBACK=1 ADDR_PER_MINUTE=1 ADDR_ENTRIES=8)
	export RATE BUSY OPEN FULL
}

setup() {
	reset_db
}

# from ADDRESS BASE PATH: GET PATH from that source address; sets HTTP_* as req does.
from() {
	local out="$BATS_TEST_TMPDIR/from.body" hdr="$BATS_TEST_TMPDIR/from.headers"
	HTTP_STATUS=$(curl -s -g --interface "$1" -o "$out" -D "$hdr" -w '%{http_code}' "$2$3")
	answer_read "$out" "$hdr"
}

@test "past ADDR_PER_MINUTE requests an address gets 429 problem+json with Retry-After; others do not" {
	for i in $(seq 1 10); do
		from 127.0.0.3 "$RATE" /actuator/health
		expect 200 || { echo "request $i" >&2; return 1; }
	done
	from 127.0.0.3 "$RATE" /api/venues
	expect_problem 429 RATE_LIMITED
	[ "$(jqr .status)" = 429 ]
	[ "$(header Retry-After)" = 60 ]
	from 127.0.0.3 "$RATE" /actuator/health
	expect_problem 429 RATE_LIMITED
	# another address is served meanwhile
	from 127.0.0.2 "$RATE" /api/venues
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "past ADDR_CONCURRENT requests in progress an address gets 429; others do not; it is served again once one ends" {
	local fds=() fd i
	# the uploads given up: as in 03-slow-clients.bats
	expect_log apache 'AH01270: Error reading request entity data|AH02608: read request body failed|AH01261: daemon couldn.t find CGI process'
	tok=$(token addr-busy)
	# three uploads that stall after their first byte hold three requests in progress
	for i in 1 2 3; do
		exec {fd}<>"/dev/tcp/127.0.0.1/${BUSY##*:}"
		printf 'PUT /api/players/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{' \
			"$tok" >&"$fd"
		fds+=("$fd")
	done
	sleep 0.5
	from 127.0.0.1 "$BUSY" /actuator/health
	expect_problem 429 RATE_LIMITED
	[ "$(header Retry-After)" = 60 ]
	from 127.0.0.2 "$BUSY" /actuator/health
	expect 200
	# one upload gives up: a place is free again
	exec {fds[0]}>&-
	for i in $(seq 1 20); do
		from 127.0.0.1 "$BUSY" /actuator/health
		[ "$HTTP_STATUS" = 429 ] || break
		sleep 0.1
	done
	expect 200
	for fd in "${fds[@]:1}"; do exec {fd}>&-; done
}

@test "loopback is exempt unless ADDR_LIMIT_LOOPBACK is set" {
	local pids=() i
	for i in $(seq 1 20); do
		from 127.0.0.1 "$OPEN" /actuator/health
		expect 200 || { echo "request $i" >&2; return 1; }
	done
	# and five at once, over a limit of one in progress
	for i in 1 2 3 4 5; do
		curl -s -o /dev/null -w '%{http_code}\n' "$OPEN/api/venues" >"$BATS_TEST_TMPDIR/c$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	[ "$(cat "$BATS_TEST_TMPDIR"/c* | sort -u)" = 200 ]
}

@test "an address that finds the table full is served without limits, and the error log says so once" {
	local i refused=() served=()
	expect_log apache 'courts_limits: no room for another address \(CourtsAddrEntries 8\): 127\.0\.0\.[0-9]+ served without limits'
	# sixteen addresses, one request a minute each, in a table of eight places (one of them
	# may be the stack's own start-up check from 127.0.0.1, within its minute)
	for i in $(seq 10 25); do
		from "127.0.0.$i" "$FULL" /actuator/health
		expect 200 || { echo "127.0.0.$i" >&2; return 1; }
		from "127.0.0.$i" "$FULL" /actuator/health
		case $HTTP_STATUS in
		429) expect_problem 429 RATE_LIMITED; refused+=("$i") ;;
		200) served+=("$i") ;;
		*) echo "127.0.0.$i: second request $HTTP_STATUS" >&2; return 1 ;;
		esac
	done
	# the first seven or eight took the places and are held to their limit; those that found
	# no room are served, again and again: refusing them would let whoever fills the table
	# shut every newcomer out
	[ "${#refused[@]}" -ge 7 ] && [ "${#refused[@]}" -le 8 ] ||
		{ echo "refused: ${refused[*]}; served: ${served[*]}" >&2; return 1; }
	[ "${refused[-1]}" -lt "${served[0]}" ] ||
		{ echo "refused: ${refused[*]}; served: ${served[*]}" >&2; return 1; }
	from "127.0.0.${served[0]}" "$FULL" /actuator/health
	expect 200
	# those that have places keep them and their counts
	from "127.0.0.${refused[0]}" "$FULL" /actuator/health
	expect_problem 429 RATE_LIMITED
	[ "$(grep -c 'courts_limits: no room for another address' \
		"$COURTS_STATE/extra-addr-full/apache/logs/error.log")" = 1 ]
}

@test "the shipped configuration loads the limits module with both limits and their defaults" {
	grep -q '^ *CourtsAddrConcurrent \${COURTS_ADDR_CONCURRENT}$' "$COURTS_ROOT/apache/limits.conf"
	grep -q '^ *CourtsAddrPerMinute \${COURTS_ADDR_PER_MINUTE}$' "$COURTS_ROOT/apache/limits.conf"
	grep -q 'Define COURTS_ADDR_CONCURRENT 20$' "$COURTS_ROOT/apache/limits.conf"
	grep -q 'Define COURTS_ADDR_PER_MINUTE 1200$' "$COURTS_ROOT/apache/limits.conf"
	# the suite's own server has the module loaded, and takes its directives
	run eval "apache2 $(cat "$COURTS_STATE/apache/args.q") -t -D DUMP_MODULES"
	[[ $output == *courts_limits_module* ]]
}
