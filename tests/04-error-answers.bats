#!/usr/bin/env bats
# Every answer is application/problem+json or the route's success type, also when Apache
# answers by itself (apache/courts.conf ErrorDocuments): each error status provoked for real
# where this mode can produce it, and every one through the test server's
# /courts-test/status/NNN route (apache/httpd.conf, -D COURTS_TEST_STATUS).

load test_helper

setup() {
	reset_db
	PLAYER=errors-$BATS_TEST_NUMBER-$RANDOM
	TOK=$(token "$PLAYER")
	OWNER_TOK=$(token "owner-$PLAYER" OWNER)
}

# raw_request FILE: sends stdin as it is to the suite's Apache and saves the answer in FILE.
raw_request() {
	local hostport=${BASE_URL#http://} fd
	exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport#*:}"
	cat >&"$fd"
	timeout 20 cat <&"$fd" >"$1"
	exec {fd}>&-
}

# expect_apache_problem STATUS CODE: the last req got Apache's own problem+json for STATUS.
expect_apache_problem() {
	expect_problem "$1" "$2" || return 1
	[ "$(jqr .status)" = "$1" ]
}

@test "400: a request Apache cannot read, and a body the program cannot read" {
	printf 'GET /api/venues HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n' | raw_request "$BATS_TEST_TMPDIR/bad"
	expect_raw_problem "$BATS_TEST_TMPDIR/bad" 400 BAD_REQUEST
	# a header over LimitRequestFieldSize: Apache 2.4 answers 400 (not 431)
	req GET /api/venues -H "X-Big: $(head -c 9000 /dev/zero | tr '\0' a)"
	expect_apache_problem 400 BAD_REQUEST
	req PUT /api/players/me -t "$TOK" -d '{"displayName":'
	expect_problem 400 MALFORMED_JSON
}

@test "401: no token, with no body, a JSON body or any other body" {
	req GET /api/players/me
	expect_problem 401 UNAUTHORIZED
	[ "$(header WWW-Authenticate)" = Bearer ] || [[ "$(header WWW-Authenticate)" == Bearer* ]]
	req PUT /api/players/me -d '{"displayName":"Ann"}'
	expect_problem 401 UNAUTHORIZED
	req PUT /api/players/me -d 'not json at all' -H 'Content-Type: text/plain'
	expect_problem 401 UNAUTHORIZED
	req POST /api/owner/venues -d "$(head -c 30000 /dev/zero | tr '\0' ' ')"
	expect_problem 401 UNAUTHORIZED
}

@test "403: a path outside the API, and a role the caller lacks" {
	expect_log apache 'AH01630: client denied by server configuration: .*/htdocs/(index\.html)?$'
	req GET /index.html
	expect_apache_problem 403 FORBIDDEN
	req GET /api/owner/venues -t "$TOK"
	expect_problem 403 FORBIDDEN
}

@test "404: unknown API path, unknown error document" {
	req GET /api/nothing -t "$TOK"
	expect_problem 404 NOT_FOUND
	req GET /courts-errors/nothing.json
	expect_apache_problem 404 NOT_FOUND
}

@test "405: TRACE is refused by Apache, a wrong method by the program" {
	req TRACE /api/venues
	expect_apache_problem 405 METHOD_NOT_ALLOWED
	req DELETE /api/venues
	expect_problem 405 METHOD_NOT_ALLOWED
}

@test "411: a chunked body is refused with 411 and nothing is written" {
	req PUT /api/players/me -t "$TOK" -d '{"displayName":"Ann"}' -H 'Transfer-Encoding: chunked'
	expect_apache_problem 411 LENGTH_REQUIRED
	[ "$(sql "SELECT count(*) FROM players")" = 0 ]
}

@test "413: a body over 1 MiB from Apache, over 64 KiB from the program" {
	head -c 2000000 /dev/zero | tr '\0' ' ' >"$BATS_TEST_TMPDIR/big"
	HTTP_STATUS=$(curl -s -o "$BATS_TEST_TMPDIR/out" -w '%{http_code} %{content_type}' \
		-H "Authorization: Bearer $OWNER_TOK" -H 'Content-Type: application/json' \
		--data-binary @"$BATS_TEST_TMPDIR/big" "$BASE_URL/api/owner/venues") || true
	[ "$HTTP_STATUS" = "413 application/problem+json" ] || { echo "got $HTTP_STATUS" >&2; return 1; }
	[ "$(jq -r '"\(.status) \(.code)"' "$BATS_TEST_TMPDIR/out")" = "413 BODY_TOO_LARGE" ]
	req POST /api/owner/venues -t "$OWNER_TOK" -d "{\"name\":\"$(head -c 70000 /dev/zero | tr '\0' a)\"}"
	expect_problem 413 BODY_TOO_LARGE
}

@test "414: a request line over 8 KB" {
	req GET "/api/venues?x=$(head -c 9000 /dev/zero | tr '\0' a)"
	expect_apache_problem 414 URI_TOO_LONG
}

@test "415: a body that is not JSON" {
	req PUT /api/players/me -t "$TOK" -d 'name=Ann' -H 'Content-Type: application/x-www-form-urlencoded'
	expect_problem 415 UNSUPPORTED_MEDIA_TYPE
}

@test "500: a failing statement shows problem+json" {
	expect_autovacuum_yield
	expect_log apache 'public\[[0-9]+\] req=[0-9a-f]+ error: query failed 42P01: (ERROR:  )?relation "venues" does not exist'
	expect_log postgres 'relation "venues" does not exist'
	sql "ALTER TABLE venues RENAME TO venues_hidden"
	req GET /api/venues
	sql "ALTER TABLE venues_hidden RENAME TO venues"
	expect_problem 500 INTERNAL_ERROR
}

@test "every status Apache answers itself, 400 to 504, is problem+json with its status and code" {
	local s code
	for s in 400 401 403 404 405 408 411 413 414 415 429 431 500 502 503 504; do
		code=$(jq -r .code "$COURTS_ROOT/apache/errors/$s.json")
		req GET "/courts-test/status/$s"
		expect_apache_problem "$s" "$code" || { echo "status $s" >&2; return 1; }
	done
	# and the programs' own reason phrases match Apache's for the ones both answer
	[ "$(jq -r .title "$COURTS_ROOT/apache/errors/413.json")" = "Content Too Large" ]
}
