#!/usr/bin/env bats
# Health and info endpoints, unknown routes, and the Apache config under test.

load test_helper

@test "health answers UP with 200 when the database answers" {
	req GET /actuator/health
	expect 200
	[ "$HTTP_BODY" = '{"status":"UP"}' ]
}

@test "info gives name, version and build" {
	req GET /actuator/info
	expect 200
	[ "$(jqr .name)" = courts ]
	[[ "$(jqr .version)" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
	[ -n "$(jqr .build)" ] && [ "$(jqr .build)" != null ]
}

@test "responses are never cached and carry a request id" {
	req GET /actuator/info
	[ "$(header Cache-Control)" = no-store ]
	[[ "$(header X-Request-Id)" =~ ^[0-9a-f]{16}$ ]]
}

@test "an unknown path under /api is a problem+json 404" {
	req GET /api/nothing/here
	expect_problem 404 NOT_FOUND
	[ "$(jqr .instance)" = /api/nothing/here ]
}

@test "a wrong method on a known path is 405 with Allow" {
	req POST /actuator/health -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	[ "$(header Allow)" = GET ]
}

@test "the Apache under test runs the project's apache/ configuration" {
	args=$(cat "$COURTS_STATE/apache/args")
	[[ "$args" == *"-f $COURTS_ROOT/apache/httpd.conf"* ]]
	grep -q "Include \"\${COURTS_ROOT}/apache/courts.conf\"" "$COURTS_ROOT/apache/httpd.conf"
	# the routing table of apache/courts.conf is what answers: a path it maps to health.cgi
	req GET /actuator/health
	expect 200
	pid=$(cat "$COURTS_STATE/apache/run/httpd.pid")
	[ "$(readlink /proc/$pid/exe)" = "$(readlink -f "$(command -v apache2)")" ]
	tr '\0' ' ' </proc/$pid/cmdline | grep -q -- "$COURTS_ROOT/apache/httpd.conf"
}

@test "Apache listens on 127.0.0.1 only" {
	! ss -ltnH | awk '{print $4}' | grep -E "^(0\.0\.0\.0|\*|\[::\]):$COURTS_PORT$" || false
	ss -ltnH | awk '{print $4}' | grep -qx "127.0.0.1:$COURTS_PORT"
}

@test "health answers DOWN with 503 and no details when the database does not answer" {
	expect_log apache 'req=[0-9a-f]+ error: database (unavailable|connect failed).*/nowhere/'
	url=$(extra_apache nodb DATABASE_URL="host=$COURTS_STATE/nowhere port=1 dbname=x connect_timeout=2")
	req GET /actuator/health -b "$url"
	expect 503 application/json
	[ "$HTTP_BODY" = '{"status":"DOWN"}' ]
}

@test "a restart of PostgreSQL is survived: the next requests succeed on a new connection" {
	# the restart ends every session, an autovacuum worker's included: the server says so
	expect_log postgres 'FATAL:  terminating (connection|autovacuum process) due to administrator command|FATAL:  the database system is shutting down'
	for _ in 1 2 3 4; do req GET /actuator/health; expect 200 application/json; done
	"$COURTS_ROOT/scripts/stack.sh" restart-pg "$COURTS_STATE"
	for _ in 1 2 3 4; do
		req GET /actuator/health
		expect 200 application/json
		[ "$HTTP_BODY" = '{"status":"UP"}' ]
	done
}
