#!/usr/bin/env bats
# Per client address limits of the shipped Apache configuration (apache/limits.conf, mod_qos):
# requests a minute and requests in progress at once per address; past either, 429
# problem+json with Retry-After, other addresses unaffected. Loopback is exempt unless
# ADDR_LIMIT_LOOPBACK is set, as here: every client of the suite is on 127.0.0.0/8, which lets
# a test speak from several addresses: 127.0.0.1 (also the one the stack's start-up checks
# come from), 127.0.0.2 and 127.0.0.3.

load test_helper

setup_file() {
	RATE=$(extra_apache addr-rate ADDR_LIMIT_LOOPBACK=1 ADDR_PER_MINUTE=10)
	BUSY=$(extra_apache addr-busy ADDR_LIMIT_LOOPBACK=1 ADDR_CONCURRENT=3)
	# the same tight limits, loopback left exempt as `make run` and `make test` leave it
	OPEN=$(extra_apache addr-open ADDR_PER_MINUTE=5 ADDR_CONCURRENT=1)
	export RATE BUSY OPEN
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

@test "the shipped configuration loads mod_qos with both limits and their defaults" {
	grep -q '^ *QS_ClientEventRequestLimit \${COURTS_ADDR_CONCURRENT}' "$COURTS_ROOT/apache/limits.conf"
	grep -q '^ *QS_ClientEventLimitCount \${COURTS_ADDR_REFUSE_AT} 60' "$COURTS_ROOT/apache/limits.conf"
	grep -q 'Define COURTS_ADDR_CONCURRENT 20' "$COURTS_ROOT/apache/limits.conf"
	grep -q 'Define COURTS_ADDR_REFUSE_AT 1201' "$COURTS_ROOT/apache/limits.conf"
	# the suite's own server has the module loaded
	run eval "apache2 $(cat "$COURTS_STATE/apache/args.q") -t -D DUMP_MODULES"
	[[ $output == *qos_module* ]]
}
