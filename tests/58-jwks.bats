#!/usr/bin/env bats
# Keys from the identity provider: JWT_JWKS_FILE holds a JWKS document, a token's kid picks
# its key, a changed file is picked up within a second without a restart, a broken one keeps
# the keys read before; cron/jwks_refresh.c fetches the document from the provider's URL
# (here a stand-in on 127.0.0.1, tests/jwks-server.mjs) and replaces the file atomically.

load test_helper

PROTECTED=/api/owner/venues

setup_file() {
	# the extra Apache runs as www-data and reads the keys from here
	JWKS_DIR="$COURTS_STATE/jwks-test"
	mkdir -p "$JWKS_DIR"
	chmod 755 "$JWKS_DIR"
	local k
	for k in a b d; do
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$JWKS_DIR/$k.pem" 2>/dev/null
	done
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$JWKS_DIR/c.pem" 2>/dev/null
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$JWKS_DIR/weak.pem" 2>/dev/null
	JWK_A=$(jwk "$JWKS_DIR/a.pem" a '{"use":"sig","alg":"RS256"}')
	JWK_B=$(jwk "$JWKS_DIR/b.pem" b)
	JWK_C=$(jwk "$JWKS_DIR/c.pem" c '{"use":"sig","alg":"ES256"}')
	# keys no token may be checked with: for encryption, of the wrong algorithm, too weak
	JWK_ENC=$(jwk "$JWKS_DIR/d.pem" enc '{"use":"enc"}')
	JWK_WRONG_ALG=$(jwk "$JWKS_DIR/d.pem" wrong '{"alg":"ES256"}')
	JWK_WEAK=$(jwk "$JWKS_DIR/weak.pem" weak)
	export JWKS_DIR JWK_A JWK_B JWK_C JWK_ENC JWK_WRONG_ALG JWK_WEAK
	publish "$JWK_A" "$JWK_C"
	JWKS_URL=$(extra_apache jwks JWT_JWKS_FILE="$JWKS_DIR/keys.json")
	JWKS_LOG="$COURTS_STATE/extra-jwks/apache/logs/error.log"
	# the stand-in provider, serving provider.json
	echo '{"keys":[]}' >"$JWKS_DIR/provider.json"
	node "$COURTS_ROOT/tests/jwks-server.mjs" "$JWKS_DIR/provider.json" "$JWKS_DIR/port" >"$JWKS_DIR/server.log" 2>&1 3>&- &
	echo $! >"$JWKS_DIR/server.pid"
	for _ in $(seq 1 100); do
		[ -s "$JWKS_DIR/port" ] && break
		sleep 0.05
	done
	PROVIDER="http://127.0.0.1:$(cat "$JWKS_DIR/port")"
	export JWKS_URL JWKS_LOG PROVIDER
}

teardown_file() {
	local pid
	pid=$(cat "$JWKS_DIR/server.pid" 2>/dev/null) && kill "$pid" 2>/dev/null || true
}

setup() {
	reset_db
	OWNER=jwks-owner-$BATS_TEST_NUMBER-$RANDOM
}

# jwk PRIVATE_PEM KID [JSON]: the public JWK of the key, with its kid and JSON's members.
jwk() {
	node -e '
		const { createPublicKey } = require("node:crypto");
		const pem = require("node:fs").readFileSync(process.argv[1]);
		const key = createPublicKey(pem).export({ format: "jwk" });
		const extra = JSON.parse(process.argv[3] || "{}");
		process.stdout.write(JSON.stringify({ ...key, kid: process.argv[2], ...extra }));
	' "$1" "$2" "${3:-}"
}

# publish JWK...: keys.json becomes the set of these keys, replaced in one rename as the
# refresher does.
publish() {
	local IFS=,
	printf '{"keys":[%s]}' "$*" >"$JWKS_DIR/keys.json.new"
	chmod 644 "$JWKS_DIR/keys.json.new"
	mv "$JWKS_DIR/keys.json.new" "$JWKS_DIR/keys.json"
}

# settle: long enough for every FastCGI worker to have looked at the file again (a worker
# looks at most once a second, at its next request).
settle() {
	sleep 1.2
}

# tok KEY [mint-token options]: an OWNER token of this test's owner signed with KEY's key.
tok() {
	local k=$1
	shift
	if [ "$k" = c ]; then
		token "$OWNER" OWNER -k "$JWKS_DIR/c.pem" -A ES256 "$@"
	else
		token "$OWNER" OWNER -k "$JWKS_DIR/$k.pem" "$@"
	fi
}

# statuses N TOKEN: the statuses of N requests with TOKEN, one line.
statuses() {
	local i
	for i in $(seq 1 "$1"); do
		curl -s -o /dev/null -w '%{http_code} ' -H "Authorization: Bearer $2" "$JWKS_URL$PROTECTED"
	done
}

# key_lines PATTERN: lines of the JWKS server's error log about keys.json matching PATTERN.
key_lines() {
	grep -c "JWT_JWKS_FILE .*/keys\.json $1" "$JWKS_LOG" || true
}

# key_line_pids PATTERN: the process id of each such line, one per line
key_line_pids() {
	grep "JWT_JWKS_FILE .*/keys\.json $1" "$JWKS_LOG" | sed -nE 's/^[a-z-]+\[([0-9]+)\] .*/\1/p'
}

@test "a token's kid picks its key from the set: RS256 and ES256 accepted, a wrong or unknown kid is 401" {
	publish "$JWK_A" "$JWK_C"
	settle
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok a -K a)"
	expect 200
	[ "$(jqr length)" = 0 ]
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok c -K c)"
	expect 200
	# a key of the set, but not the one that signed
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok a -K c)"
	expect_problem 401 INVALID_TOKEN
	# the key type decides the algorithm: RS256 in the header does not make an EC key RSA
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok c -K a)"
	expect_problem 401 INVALID_TOKEN
	# a key the set does not hold, named or not
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok b -K b)"
	expect_problem 401 INVALID_TOKEN
	[ "$(header WWW-Authenticate)" = 'Bearer realm="courts", error="invalid_token"' ]
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok a -K nobody)"
	expect_problem 401 INVALID_TOKEN
	# without a kid, a set of two keys cannot say which one
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok a)"
	expect_problem 401 INVALID_TOKEN
	# nobody was let in by a refused token
	[ "$(sql "SELECT count(*) FROM users WHERE subject = '$OWNER'")" = 1 ]
}

@test "a token without kid is accepted when the set has exactly one usable key; unusable keys are skipped" {
	publish "$JWK_ENC" "$JWK_WRONG_ALG" "$JWK_WEAK" "$JWK_B"
	settle
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok b)"
	expect 200
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok b -K b)"
	expect 200
	# a key for encryption, one that says it is for another algorithm, and RSA of 1024 bits
	# sign nothing, even when a token names them
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok d -K enc)"
	expect_problem 401 INVALID_TOKEN
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok d -K wrong)"
	expect_problem 401 INVALID_TOKEN
	req GET $PROTECTED -b "$JWKS_URL" -t "$(tok weak -K weak)"
	expect_problem 401 INVALID_TOKEN
}

@test "the PEM setting keeps working, whatever kid a token names" {
	req GET $PROTECTED -t "$(token "$OWNER" OWNER -K any-kid)"
	expect 200
	req GET $PROTECTED -t "$(token "$OWNER" OWNER)"
	expect 200
}

@test "a rotation while requests flow: both keys during the overlap, the old one's tokens 401 after, nothing else" {
	publish "$JWK_A"
	settle
	local ta tb stop="$BATS_TEST_TMPDIR/stop" i pids=() t2a t2b t3a t3b
	ta=$(tok a -K a)
	tb=$(tok b -K b)
	[ "$(statuses 4 "$ta")" = "200 200 200 200 " ]
	[ "$(statuses 4 "$tb")" = "401 401 401 401 " ]
	# two clients, each alternating the keys, note when each request began and ended
	for i in 1 2; do
		(
			end=$((SECONDS + 40))
			while [ ! -e "$stop" ] && [ $SECONDS -lt $end ]; do
				for k in a b; do
					t=ta; [ $k = b ] && t=tb
					begin=$EPOCHREALTIME
					code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${!t}" \
						"$JWKS_URL$PROTECTED")
					echo "$k $code $begin $EPOCHREALTIME"
				done
			done >"$BATS_TEST_TMPDIR/load.$i"
		) 3>&- &
		pids+=($!)
	done
	sleep 1
	t2a=$EPOCHREALTIME
	publish "$JWK_A" "$JWK_B"
	t2b=$EPOCHREALTIME
	settle
	[ "$(statuses 6 "$ta")" = "200 200 200 200 200 200 " ]
	[ "$(statuses 6 "$tb")" = "200 200 200 200 200 200 " ]
	sleep 1
	t3a=$EPOCHREALTIME
	publish "$JWK_B"
	t3b=$EPOCHREALTIME
	settle
	[ "$(statuses 6 "$ta")" = "401 401 401 401 401 401 " ]
	[ "$(statuses 6 "$tb")" = "200 200 200 200 200 200 " ]
	sleep 1
	touch "$stop"
	wait "${pids[@]}"
	cat "$BATS_TEST_TMPDIR"/load.* >"$BATS_TEST_TMPDIR/load"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/load")" -ge 20 ]
	# only 200 and 401, each where the file allowed it: B's tokens refused only by a look
	# before the overlap (at most a second stale), A's only after it ended
	run awk -v t2a="$t2a" -v t2b="$t2b" -v t3a="$t3a" -v t3b="$t3b" '
		$2 != 200 && $2 != 401 { print "unexpected: " $0; next }
		$1 == "b" && $2 == 200 && $4 < t2a { print "B accepted before its key: " $0 }
		$1 == "b" && $2 == 401 && $3 > t2b + 1.1 { print "B refused after the overlap began: " $0 }
		$1 == "a" && $2 == 401 && $4 < t3a { print "A refused during the overlap: " $0 }
		$1 == "a" && $2 == 200 && $3 > t3b + 1.1 { print "A accepted after its key went: " $0 }
	' "$BATS_TEST_TMPDIR/load"
	[ -z "$output" ] || { echo "$output" | head -n 20 >&2; return 1; }
	# both keys were used for real in the overlap
	grep -q '^a 200' "$BATS_TEST_TMPDIR/load"
	grep -q '^b 200' "$BATS_TEST_TMPDIR/load"
}

# "The keys read before" are a process's own: a FastCGI process that served no request since
# an earlier test published another set still holds that one (a pool's workers take turns as
# the scheduler wakes them, not in order). So this test has a server of its own, started once
# the file holds key A: every process of it reads A before the file breaks.
@test "a broken file does not take the service down: the keys read before stay, one line says why" {
	expect_log apache 'JWT_JWKS_FILE .*/jwks-test/keys\.json (is not a JSON object|has no usable signing key)'
	publish "$JWK_A"
	JWKS_URL=$(extra_apache jwks-broken JWT_JWKS_FILE="$JWKS_DIR/keys.json" 3>&-)
	JWKS_LOG="$COURTS_STATE/extra-jwks-broken/apache/logs/error.log"
	local ta tb before after pids twice
	ta=$(tok a -K a)
	tb=$(tok b -K b)
	[ "$(statuses 8 "$ta")" = "200 200 200 200 200 200 200 200 " ]
	before=$(key_lines 'is not a JSON object')
	# an operator's editor writes the file in place, and stops half-way
	printf '{"keys": [%s' "$JWK_A" >"$JWKS_DIR/keys.json"
	settle
	if [ "$COURTS_MODE" = cgi ]; then
		# a CGI program reads the file for each request: nothing read before to keep
		req GET $PROTECTED -b "$JWKS_URL" -t "$ta"
		expect_problem 503 AUTH_UNAVAILABLE
		! grep -qi 'json\|key' <<<"$HTTP_BODY" || false
		[ "$(key_lines 'is not a JSON object$')" -gt "$before" ]
	else
		got=$(statuses 8 "$ta")
		[ "$got" = "200 200 200 200 200 200 200 200 " ] || { echo "got: $got" >&2; return 1; }
		after=$(key_lines 'is not a JSON object; the keys read before stay in use')
		# one line per worker that saw it
		[ "$after" -ge 1 ]
		[ "$after" -le 16 ]
		# and at most one per process, however many requests follow (a worker the scheduler
		# woke for none of the first requests logs its one line later)
		statuses 8 "$ta" >/dev/null
		settle
		[ "$(statuses 8 "$ta")" = "200 200 200 200 200 200 200 200 " ]
		[ "$(key_lines 'is not a JSON object')" -le 16 ]
		# (each line names its process)
		pids=$(key_line_pids 'is not a JSON object')
		[ "$(grep -c . <<<"$pids")" = "$(key_lines 'is not a JSON object')" ]
		twice=$(sort <<<"$pids" | uniq -d)
		[ -z "$twice" ] || { echo "logged more than once by process $twice" >&2; return 1; }
		# a set that parses but holds no key a token may be checked with is broken too
		publish "$JWK_ENC" "$JWK_WEAK"
		settle
		[ "$(statuses 4 "$ta")" = "200 200 200 200 " ]
		[ "$(key_lines 'has no usable signing key.*; the keys read before stay in use')" -ge 1 ]
	fi
	# the mended file is picked up without a restart
	publish "$JWK_B"
	settle
	[ "$(statuses 4 "$tb")" = "200 200 200 200 " ]
	[ "$(statuses 4 "$ta")" = "401 401 401 401 " ]
	"$COURTS_ROOT/scripts/stack.sh" stop-apache "$COURTS_STATE/extra-jwks-broken" 3>&-
}

# ---- the refresher ----------------------------------------------------------------------

# refresh URL [VAR=VALUE...]: runs the refresher into $JWKS_DIR/refreshed.json.
refresh() {
	local url=$1
	shift
	run env JWT_JWKS_URL="$url" JWT_JWKS_FILE="$JWKS_DIR/refreshed.json" "$@" \
		"$COURTS_BUILD/cron/jwks-refresh"
}

@test "the refresher replaces the file in one rename, keeping its mode, and leaves an unchanged one alone" {
	printf '{"keys":[%s,%s]}' "$JWK_A" "$JWK_C" >"$JWKS_DIR/provider.json"
	rm -f "$JWKS_DIR/refreshed.json"
	refresh "$PROVIDER/ok"
	[ "$status" = 0 ]
	[ -z "$output" ]
	cmp "$JWKS_DIR/provider.json" "$JWKS_DIR/refreshed.json"
	[ "$(stat -c %a "$JWKS_DIR/refreshed.json")" = 644 ]
	# the operator's mode stays; a new document is a new file (a reader never sees a part)
	chmod 640 "$JWKS_DIR/refreshed.json"
	ino=$(stat -c %i "$JWKS_DIR/refreshed.json")
	printf '{"keys":[%s]}' "$JWK_B" >"$JWKS_DIR/provider.json"
	refresh "$PROVIDER/ok"
	[ "$status" = 0 ]
	cmp "$JWKS_DIR/provider.json" "$JWKS_DIR/refreshed.json"
	[ "$(stat -c %a "$JWKS_DIR/refreshed.json")" = 640 ]
	[ "$(stat -c %i "$JWKS_DIR/refreshed.json")" != "$ino" ]
	# the same document again: the file is not touched (no reload for nothing)
	touch -d '2026-01-01 00:00:00' "$JWKS_DIR/refreshed.json"
	mtime=$(stat -c %Y "$JWKS_DIR/refreshed.json")
	refresh "$PROVIDER/ok"
	[ "$status" = 0 ]
	[ "$(stat -c %Y "$JWKS_DIR/refreshed.json")" = "$mtime" ]
	# nothing left beside it
	[ "$(ls "$JWKS_DIR" | grep -c refreshed)" = 1 ]
}

@test "a failed fetch or a document without a usable key leaves the old file and exits non-zero" {
	printf '{"keys":[%s]}' "$JWK_A" >"$JWKS_DIR/provider.json"
	refresh "$PROVIDER/ok"
	[ "$status" = 0 ]
	cp "$JWKS_DIR/refreshed.json" "$JWKS_DIR/good.json"
	touch -d '2026-01-01 00:00:00' "$JWKS_DIR/refreshed.json"
	mtime=$(stat -c %Y "$JWKS_DIR/refreshed.json")

	refresh "$PROVIDER/fail"
	[ "$status" = 1 ]
	[ "${#lines[@]}" = 1 ]
	[[ $output == "jwks-refresh: fetching $PROVIDER/fail failed (HTTP 500); "*" is unchanged" ]]

	SECONDS=0
	refresh "$PROVIDER/stall" JWKS_FETCH_TIMEOUT=1
	[ "$status" = 1 ]
	[ "${#lines[@]}" = 1 ]
	[[ $output == jwks-refresh:* ]]
	[ "$SECONDS" -lt 10 ]

	refresh "$PROVIDER/big"
	[ "$status" = 1 ]
	[[ $output == jwks-refresh:* ]]

	printf '{"keys":[%s,%s]}' "$JWK_ENC" "$JWK_WEAK" >"$JWKS_DIR/provider.json"
	refresh "$PROVIDER/ok"
	[ "$status" = 1 ]
	[[ $output == *'has no usable signing key'* ]]

	printf 'not json' >"$JWKS_DIR/provider.json"
	refresh "$PROVIDER/ok"
	[ "$status" = 1 ]

	# nobody listening
	refresh "http://127.0.0.1:$(free_port)/jwks.json" JWKS_FETCH_TIMEOUT=2
	[ "$status" = 1 ]

	cmp "$JWKS_DIR/good.json" "$JWKS_DIR/refreshed.json"
	[ "$(stat -c %Y "$JWKS_DIR/refreshed.json")" = "$mtime" ]
	[ "$(ls "$JWKS_DIR" | grep -c refreshed)" = 1 ]
}

@test "the refresher fetches keys in clear text only from this machine" {
	refresh "http://idp.example.com/jwks.json"
	[ "$status" = 2 ]
	[[ $output == *https* ]]
	refresh "ftp://127.0.0.1/jwks.json"
	[ "$status" = 2 ]
	# no URL: nothing to do (the crontab's line is harmless until it is set)
	refresh ""
	[ "$status" = 0 ]
	[ -z "$output" ]
}
