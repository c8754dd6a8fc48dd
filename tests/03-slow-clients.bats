#!/usr/bin/env bats
# Slow and stalled clients (apache/courts.conf, RequestReadTimeout): they get 408 problem+json
# from Apache when their deadline passes, and while they wait, no program is held up by them:
# in pool mode a worker is handed a request only once its body is complete.
# Runs against a second Apache with a 16 s body deadline and a 4 s header deadline (instead of
# 10 s each). The body deadline is the window in which the slow clients must all still wait
# while seven ordinary requests are served: 4 s was once too short in cgi mode on a machine
# slow to start processes. Sixty trickled uploads get an Apache of their own with a 40 s body
# deadline: their window took 6.5 s in cgi mode on an idle machine, and once more than 16 s in
# cgi mode while the other two modes ran beside it on two cores.

load test_helper

setup_file() {
	SLOW_URL=$(extra_apache slow APACHE_BODY_TIMEOUT=16 APACHE_HEADER_TIMEOUT=4 3>&-)
	export SLOW_URL
}

setup() {
	reset_db
	PLAYER=slow-$BATS_TEST_NUMBER-$RANDOM
	TOK=$(token "$PLAYER")
}

# wait_established N: polls until N client connections to the slow Apache are open.
wait_established() {
	local port=${SLOW_URL##*:} deadline=$((SECONDS + 10))
	until [ "$(ss -tnH state established "( dport = :$port )" | wc -l)" -ge "$1" ]; do
		[ $SECONDS -lt $deadline ] || { echo "only $(ss -tnH state established "( dport = :$port )" | wc -l) of $1 connections open" >&2; return 1; }
		sleep 0.05
	done
}

@test "2 x FCGI_WORKERS trickling and stalled uploads: other requests to the program answer in under a second, the slow ones get 408" {
	# mod_cgid: the body read fails (AH01270), and the program, whose input then ends, may exit
	# before mod_cgid asks its daemon for it (AH01261)
	expect_log apache 'AH01270: Error reading request entity data|AH02608: read request body failed|AH01261: daemon couldn.t find CGI process'
	local n=$((2 * ${FCGI_WORKERS:-4})) i how pids=()
	for i in $(seq 1 "$n"); do
		how=trickle
		[ $((i % 2)) = 0 ] && how=stall
		slow_client "$BATS_TEST_TMPDIR/slow-$i" "$SLOW_URL" "$how" "$TOK" 3>&- &
		pids+=($!)
	done
	wait_established "$n"
	# ordinary reads and a write to the same program, one after another
	for i in 1 2 3 4 5 6; do
		out=$(curl -s -o "$BATS_TEST_TMPDIR/ok" -w '%{http_code} %{time_total}' \
			-H "Authorization: Bearer $TOK" "$SLOW_URL/api/players/me")
		[ "${out% *}" = 200 ] || { echo "GET $i: $out $(cat "$BATS_TEST_TMPDIR/ok")" >&2; return 1; }
		awk -v t="${out#* }" 'BEGIN { exit !(t < 1.0) }' || { echo "GET $i took ${out#* } s" >&2; return 1; }
	done
	out=$(curl -s -o "$BATS_TEST_TMPDIR/ok" -w '%{http_code} %{time_total}' -X PUT \
		-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
		--data '{"displayName":"Quick","skillLevel":"BEGINNER"}' "$SLOW_URL/api/players/me")
	[ "${out% *}" = 200 ] || { echo "PUT: $out" >&2; return 1; }
	awk -v t="${out#* }" 'BEGIN { exit !(t < 1.0) }' || { echo "PUT took ${out#* } s" >&2; return 1; }
	[ "$(jq -r .displayName "$BATS_TEST_TMPDIR/ok")" = Quick ]
	# all of that while every slow client was still waiting for its answer
	for i in $(seq 1 "$n"); do
		[ ! -s "$BATS_TEST_TMPDIR/slow-$i" ] || { echo "slow client $i answered early" >&2; return 1; }
	done
	wait "${pids[@]}"
	for i in $(seq 1 "$n"); do
		expect_raw_problem "$BATS_TEST_TMPDIR/slow-$i" 408 REQUEST_TIMEOUT || { echo "client $i" >&2; return 1; }
	done
	# none of the slow bodies was taken for a profile
	[ "$(sql "SELECT display_name FROM players")" = Quick ]
}

# service_sessions: the database sessions of the service's role now.
service_sessions() {
	sql "SELECT count(*) FROM pg_stat_activity WHERE usename = 'courts'"
}

teardown() {
	sql "ALTER ROLE courts CONNECTION LIMIT -1" >/dev/null
}

@test "60 uploads trickled with valid tokens hold no database session, and other requests are served meanwhile" {
	# mod_cgid: the body read fails (AH01270), and the program, whose input then ends, may exit
	# before mod_cgid asks its daemon for it (AH01261)
	expect_log apache 'AH01270: Error reading request entity data|AH02608: read request body failed|AH01261: daemon couldn.t find CGI process'
	local n=60 i pids=() before most now SLOW_URL SLOW_WRITE_S=45
	SLOW_URL=$(extra_apache slow60 APACHE_BODY_TIMEOUT=40 APACHE_HEADER_TIMEOUT=4 3>&-)
	before=$(service_sessions)
	# fewer sessions allowed than there are uploads: one session each would leave none
	sql "ALTER ROLE courts CONNECTION LIMIT $((before + 20))"
	for i in $(seq 1 "$n"); do
		slow_client "$BATS_TEST_TMPDIR/slow-$i" "$SLOW_URL" trickle "$TOK" 3>&- &
		pids+=($!)
	done
	wait_established "$n"
	sleep 1	# every program has its headers and waits for its body
	most=$(service_sessions)
	for i in 1 2 3 4 5 6; do
		out=$(curl -s -o "$BATS_TEST_TMPDIR/ok" -w '%{http_code}' \
			-H "Authorization: Bearer $TOK" "$SLOW_URL/api/players/me")
		[ "$out" = 200 ] || { echo "GET $i: $out $(cat "$BATS_TEST_TMPDIR/ok")" >&2; return 1; }
		now=$(service_sessions)
		[ "$now" -le "$most" ] || most=$now
	done
	out=$(curl -s -o "$BATS_TEST_TMPDIR/ok" -w '%{http_code}' -X PUT \
		-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
		--data '{"displayName":"Quick","skillLevel":"BEGINNER"}' "$SLOW_URL/api/players/me")
	[ "$out" = 200 ] || { echo "PUT: $out $(cat "$BATS_TEST_TMPDIR/ok")" >&2; return 1; }
	now=$(service_sessions)
	[ "$now" -le "$most" ] || most=$now
	# the uploads were all still waiting, and held no session: at most the ordinary
	# requests' own (and in fastcgi mode the processes they started) came and went
	for i in $(seq 1 "$n"); do
		[ ! -s "$BATS_TEST_TMPDIR/slow-$i" ] || { echo "slow client $i answered early: $(head -1 "$BATS_TEST_TMPDIR/slow-$i")" >&2; return 1; }
	done
	[ "$most" -le $((before + 3)) ] || { echo "sessions: $before before the uploads, $most while they waited" >&2; return 1; }
	wait "${pids[@]}"
	for i in $(seq 1 "$n"); do
		expect_raw_problem "$BATS_TEST_TMPDIR/slow-$i" 408 REQUEST_TIMEOUT || { echo "client $i" >&2; return 1; }
	done
	[ "$(sql "SELECT display_name FROM players")" = Quick ]
}

@test "a client without a token gets 401 whatever its body, sent slowly too; a stalled one gets 408" {
	# mod_cgid: the body read fails (AH01270), and the program, whose input then ends, may exit
	# before mod_cgid asks its daemon for it (AH01261)
	expect_log apache 'AH01270: Error reading request entity data|AH02608: read request body failed|AH01261: daemon couldn.t find CGI process'
	local hostport=${SLOW_URL#http://} fd body='{"displayName":"Slow but steady"}'
	exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
	printf 'PUT /api/players/me HTTP/1.0\r\nHost: %s\r\n' "$hostport" >&"$fd"
	printf 'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "${body:0:10}" >&"$fd"
	sleep 1.5	# the pause is the point: a body in two parts, well within the deadline
	printf '%s' "${body:10}" >&"$fd"
	timeout 20 cat <&"$fd" >"$BATS_TEST_TMPDIR/late"
	exec {fd}>&-
	expect_raw_problem "$BATS_TEST_TMPDIR/late" 401 UNAUTHORIZED
	grep -qi '^WWW-Authenticate: Bearer' "$BATS_TEST_TMPDIR/late"
	slow_client "$BATS_TEST_TMPDIR/stalled" "$SLOW_URL" stall 3>&-
	expect_raw_problem "$BATS_TEST_TMPDIR/stalled" 408 REQUEST_TIMEOUT
	[ "$(sql "SELECT count(*) FROM players")" = 0 ]
}

@test "a client that stops in the middle of its headers gets 408 problem+json" {
	local hostport=${SLOW_URL#http://} fd
	exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
	printf 'GET /api/venues HTTP/1.1\r\nHost: %s\r\n' "$hostport" >&"$fd"
	timeout 30 cat <&"$fd" >"$BATS_TEST_TMPDIR/headers"
	exec {fd}>&-
	expect_raw_problem "$BATS_TEST_TMPDIR/headers" 408 REQUEST_TIMEOUT
}
