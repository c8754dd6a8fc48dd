#!/usr/bin/env bats
# The API's description: GET /api/openapi.json (OpenAPI 3.1, built from the route tables by
# openapi/build.mjs) and the page GET /api/docs that renders it, in every mode. The answers
# of the whole suite are checked against the document by tests/98-openapi-answers.bats.

load test_helper

doc_file() {
	echo "$COURTS_BUILD/openapi/openapi.json"
}

# route_tables: "METHOD PATH AUTH" of every entry of every program's route table, as the C
# source spells it ({x:date} is {x} in OpenAPI), sorted
route_tables() {
	sed -n '/^static const struct route routes\[\] = {/,/^};/p' "$COURTS_ROOT"/cgi-bin/*.c |
		tr -d '\n\t' | grep -o '{ *"[A-Z]*", *"[^"]*", *[a-z_0-9]*, *AUTH_[A-Z]*' |
		sed -E 's/^\{ *"([A-Z]+)", *"([^"]*)", *[a-z_0-9]*, *AUTH_([A-Z]+)$/\1 \2 \3/; s/\{([A-Za-z]+):[a-z]+\}/{\1}/g' |
		sort
}

@test "openapi/dist, which make run serves without Node.js, is what the route tables and openapi/ give now" {
	node "$COURTS_ROOT/openapi/build.mjs" "$BATS_TEST_TMPDIR/fresh" "$COURTS_ROOT/openapi/node_modules" >/dev/null
	diff -r "$BATS_TEST_TMPDIR/fresh" "$COURTS_ROOT/openapi/dist" >/dev/null ||
		{ echo "openapi/dist is out of date: run make openapi and commit it" >&2; diff -rq "$BATS_TEST_TMPDIR/fresh" "$COURTS_ROOT/openapi/dist" >&2; false; }
	# and the build serves it as it is
	diff -r "$COURTS_ROOT/openapi/dist" "$COURTS_BUILD/openapi"
}

@test "GET /api/openapi.json answers the built OpenAPI 3.1 document as application/json" {
	req GET /api/openapi.json
	expect 200 application/json
	[ "$(jqr .openapi)" = 3.1.0 ]
	same . "$(cat "$(doc_file)")"
}

@test "GET /api/docs answers the page as text/html, with its script, style and license" {
	req GET /api/docs
	expect 200 text/html
	grep -q 'src="docs/swagger-ui-bundle.js"' <<<"$HTTP_BODY"
	grep -q 'href="docs/swagger-ui.css"' <<<"$HTTP_BODY"
	req GET /api/docs/swagger-ui-bundle.js
	expect 200 text/javascript
	req GET /api/docs/docs.js
	expect 200 text/javascript
	grep -q "url: 'openapi.json'" <<<"$HTTP_BODY"
	req GET /api/docs/swagger-ui.css
	expect 200 text/css
	req GET /api/docs/LICENSE
	expect 200 text/plain
	grep -q 'Apache License' <<<"$HTTP_BODY"
}

@test "a file the page does not have, or a path beside the page, is a problem+json 404" {
	req GET /api/docs/nothing.js
	expect_problem 404 NOT_FOUND
	req GET /api/docs/sub/dir.js
	expect_problem 404 NOT_FOUND
	req GET /api/openapi.yaml
	expect_problem 404 NOT_FOUND
}

@test "the description is read-only: a write to it is refused as problem+json" {
	req POST /api/openapi.json -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	req DELETE /api/docs
	expect_problem 405 METHOD_NOT_ALLOWED
	req PUT /api/docs/docs.js -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	req GET /api/openapi.json
	expect 200 application/json
	same . "$(cat "$(doc_file)")"
}

@test "the document is valid OpenAPI 3.1, its schemas compile and its examples hold" {
	run node "$COURTS_ROOT/openapi/lint.mjs" "$(doc_file)"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'OpenAPI 3.1.0 valid' <<<"$output"
}

@test "a document that breaks OpenAPI 3.1 is refused by the validator" {
	jq '.paths["/api/venues"].get.responses = "none"' "$(doc_file)" >"$BATS_TEST_TMPDIR/bad.json"
	run node "$COURTS_ROOT/openapi/lint.mjs" "$BATS_TEST_TMPDIR/bad.json"
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q 'INVALID' <<<"$output"
}

@test "the document lists every route of every program's route table, with its caller, and nothing else" {
	local tables listed
	tables=$(route_tables)
	[ "$(wc -l <<<"$tables")" -ge 50 ]
	listed=$(jq -r '.paths | to_entries[] | .key as $p | .value | to_entries[] |
		"\(.key | ascii_upcase) \($p) \(if .value.security == [] then "NONE"
			elif .value.security[0].bearerAuth == [] then "PLAYER"
			else .value.security[0].bearerAuth[0] end)"' "$(doc_file)" | sort)
	diff <(echo "$tables") <(echo "$listed")
}

@test "every route declares its problem answers with their stable codes, and the path parameters' formats" {
	# each operation: 4xx and 5xx answers are problem+json whose code is an enum of the codes
	run jq -r '.paths | to_entries[] | .key as $p | .value | to_entries[] | .key as $m |
		.value.responses | to_entries[] | select((.key | tonumber) >= 400) |
		select(.value["$ref"] == null) |
		select(.value.content["application/problem+json"].schema.properties.code.enum | length == 0) |
		"\($m) \($p) \(.key)"' "$(doc_file)"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# the codes of a handler are there: a few of each program
	for want in 'post /api/match/requests 409 SLOT_TAKEN' 'delete /api/match/requests/{id} 403 NOT_ORGANIZER' \
		'patch /api/owner/venues/{venueId}/reactivate 409 SUSPENDED_BY_ADMIN' \
		'post /api/match/join/{token} 409 TEAM_FULL' 'put /api/owner/venues/{venueId} 400 VALIDATION_FAILED' \
		'get /api/owner/venues 401 INVALID_TOKEN' 'get /api/admin/venues 403 FORBIDDEN' \
		'post /api/owner/venues 422 IDEMPOTENCY_KEY_REUSED' 'get /api/match/search 503 DATABASE_UNAVAILABLE'; do
		set -- $want
		jq -e --arg m "$1" --arg p "$2" --arg s "$3" --arg c "$4" \
			'.paths[$p][$m].responses[$s].content["application/problem+json"].schema.properties.code.enum | index($c)' \
			"$(doc_file)" >/dev/null || { echo "missing: $want"; return 1; }
	done
	[ "$(jq -c '.paths["/api/owner/venues/{venueId}/holidays/{date}"].delete.parameters |
		map(.schema.format)' "$(doc_file)")" = '["uuid","date"]' ]
}

@test "the page renders in headless Chromium without console errors and shows every operation" {
	local shots=$COURTS_BUILD/screenshots
	mkdir -p "$shots"
	run env CHROMIUM_PROFILE="$BATS_TEST_TMPDIR/chromium" timeout 120 node "$COURTS_ROOT/openapi/render.mjs" \
		"$BASE_URL/api/docs" "$(doc_file)" "$shots/api-docs-$COURTS_MODE.png"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -s "$shots/api-docs-$COURTS_MODE.png" ]
}

# htaccess_apache: a shared host's Apache (shared_host_apache) serving the .htaccess set-up
# the README describes under BASE_PATH /courts: apache/htaccess as .htaccess, the programs in
# app/, apache/errors/ as courts-errors/ and build/openapi/ as openapi/, all in
# htdocs/courts/. Prints its base URL.
htaccess_apache() {
	local docroot=$COURTS_STATE/extra-htaccess/htdocs site url
	site=$docroot/courts
	mkdir -p "$site/app"
	cp "$COURTS_BUILD"/cgi-bin/*.cgi "$site/app/"
	cp -R "$COURTS_ROOT/apache/errors" "$site/courts-errors"
	cp -R "$COURTS_BUILD/openapi" "$site/openapi"
	{
		sed 's#^ErrorDocument \([0-9]*\) /courts-errors/#ErrorDocument \1 /courts/courts-errors/#' \
			"$COURTS_ROOT/apache/htaccess"
		echo 'SetEnv BASE_PATH /courts'
		cat "$COURTS_STATE/apache/env.conf"
	} >"$site/.htaccess"
	# as the README's steps end: whatever the umask, the server reads it all
	chmod 755 "$COURTS_STATE/extra-htaccess" "$docroot"
	chmod -R a+rX,go-w "$site"
	url=$(shared_host_apache htaccess "$docroot") || return 1
	echo "$url/courts"
}

@test "with the .htaccess set-up under BASE_PATH, the document, the page and the API are served" {
	local base
	base=$(htaccess_apache)
	req GET /api/openapi.json -b "$base"
	expect 200 application/json
	same . "$(cat "$(doc_file)")"
	req GET /api/docs -b "$base"
	expect 200 text/html
	req GET /api/docs/swagger-ui-bundle.js -b "$base"
	expect 200 text/javascript
	req GET /api/docs/nothing.js -b "$base"
	expect_problem 404 NOT_FOUND
	req PUT /api/openapi.json -b "$base" -d '{}'
	expect_problem 405 METHOD_NOT_ALLOWED
	# the programs behind the same .htaccess, BASE_PATH taken off
	req GET /api/venues -b "$base"
	expect 200
	req GET /api/owner/venues -b "$base" -t "$(token olivia OWNER)"
	expect 200
	run env CHROMIUM_PROFILE="$BATS_TEST_TMPDIR/chromium" timeout 120 node "$COURTS_ROOT/openapi/render.mjs" \
		"$base/api/docs" "$(doc_file)" "$BATS_TEST_TMPDIR/page.png"
	echo "$output"
	[ "$status" -eq 0 ]
}
