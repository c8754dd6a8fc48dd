#!/usr/bin/env bats
# Text is UTF-8 both ways (RFC 8259, RFC 3629). Every answer is valid UTF-8 JSON whatever the
# request held: a path, a query, a Host header or a body that is not UTF-8, or UTF-8's
# overlong forms and surrogates, is refused with problem+json that a strict parser reads (and
# whatever of it an answer echoes is replaced, never sent raw). A body's string that holds
# U+0000 (which PostgreSQL's text cannot store, and which would cut what the user wrote) is
# 400 on its field; a raw control character inside a string is 400 MALFORMED_JSON; nothing
# of such a request is written.

load test_helper

setup() {
	reset_db
	SUB=text-$BATS_TEST_NUMBER-$RANDOM
	TOK=$(token "$SUB" "OWNER ADMIN")
}

# strict FILE: the body of the answer in FILE (curl -i output) is UTF-8 and one JSON value.
strict() {
	python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
body = raw.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in raw else raw
json.loads(body.decode("utf-8", errors="strict"))' "$1"
}

# ask METHOD TARGET [curl args...]: the answer's status, its Content-Type, and a verdict on its
# body ("strict" when a strict parser reads it), one line; the answer in $BATS_TEST_TMPDIR/a.
ask() {
	local method=$1 target=$2
	shift 2
	curl -s -g -i -o "$BATS_TEST_TMPDIR/a" -w '%{http_code} %{content_type}' -X "$method" \
		-H "Authorization: Bearer $TOK" "$@" "$BASE_URL$target"
	if strict "$BATS_TEST_TMPDIR/a" 2>/dev/null; then echo " strict"; else echo " NOT-JSON"; fi
}

@test "a path, a query or a body that is not UTF-8 is refused with problem+json a strict parser reads" {
	local t line
	# octets that are never UTF-8, an overlong NUL and '/', a surrogate, a character cut short
	for t in /api/%ff /api/%c0%80 /api/%e0%80%af /api/%ed%a0%80 /api/venues/%c3 \
		/api/match/requests/%ff /api/match/requests/%ff/join /api/owner/venues/%ff \
		"/api/venues?city=%ff" "/api/venues?%ff=1" "/api/venues?city=%c0%80" \
		"/api/match/search?lat=%ed%a0%80&lng=1" "/api/venues?city=caf%e9"; do
		line=$(ask GET "$t")
		[[ $line == 4[0-9][0-9]" application/problem+json strict" ]] ||
			{ echo "GET $t: $line: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
		line=$(ask DELETE "$t")
		[[ $line == 4[0-9][0-9]" application/problem+json strict" ]] ||
			{ echo "DELETE $t: $line: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
	done
	# a query value that is not UTF-8 is named in the answer, and is not taken for absent
	line=$(ask GET "/api/venues?city=%ff")
	[[ $line == "400 "* ]]
	[ "$(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r '.errors[0].field')" = city ]
	# raw octets in a body: not UTF-8 (in a value, in a member's name), a surrogate's
	# octets, an overlong form; each names where the text stops being JSON
	for t in $'{"displayName":"caf\xe9"}' $'{"\xff":1}' $'{"displayName":"\xed\xa0\x80"}' \
		$'{"displayName":"\xc0\xae"}'; do
		line=$(ask PUT /api/players/me -H 'Content-Type: application/json' --data-binary "$t")
		[[ $line == "400 application/problem+json strict" ]] ||
			{ echo "body $t: $line: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
		sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -e '.code == "MALFORMED_JSON" and
		    (.detail | test("not UTF-8 at line 1, column [0-9]+"))' >/dev/null ||
			{ echo "body $t: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
	done
	[ "$(sql "SELECT count(*) FROM players")" = 0 ]
}

@test "a Host header that is not ASCII is refused with problem+json; a feed's URL is made of a usable one" {
	line=$(ask GET /api/players/me/calendar -H $'Host: caf\xe9.example')
	[[ $line == "400 application/problem+json strict" ]] || { echo "$line: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
	line=$(ask GET /api/players/me/calendar -H 'Host: courts.example:8443')
	[[ $line == "200 application/json strict" ]]
	[[ $(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r .url) == http://courts.example:8443/api/calendar/*.ics ]]
}

@test "malformed JSON is refused with the line and the column where it stops being JSON" {
	line=$(ask PUT /api/players/me -H 'Content-Type: application/json' \
		--data-binary $'{\n  "displayName": "Ana",\n  "skillLevel": BEGINNER\n}')
	[[ $line == "400 application/problem+json strict" ]]
	[ "$(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r .detail)" = \
		"The body is not well-formed JSON at line 3, column 17." ]
	# columns count characters, not octets
	line=$(ask PUT /api/players/me -H 'Content-Type: application/json' \
		--data-binary $'{"displayName": "Peñ\x01a"}')
	[ "$(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r .detail)" = \
		"The body is not well-formed JSON: a control character inside a string (escape it) at line 1, column 21." ]
	[ "$(sql "SELECT count(*) FROM players")" = 0 ]
}

# string_fields: "METHOD PATH FIELD BODY" for every string member of every JSON body of the
# API's description (one level into arrays of objects), BODY holding "a@@b" in that member.
string_fields() {
	jq -r '. as $doc
	    | def resolve: if ."$ref" then (."$ref" | sub("^#/components/schemas/"; "")) as $n
	          | $doc.components.schemas[$n] | resolve else . end;
	      def is_string: (.type == "string") or ((.type | type) == "array" and (.type | index("string")));
	      def props: if .allOf then [.allOf[] | resolve | props] | add else .properties // {} end;
	    .paths | to_entries[] | .key as $path | .value | to_entries[]
	    | select(.value.requestBody.content["application/json"].schema != null)
	    # a signed body (the webhook of the payment provider) is checked by its signature first
	    | select(.value["x-courts-signed-body"] != true)
	    | (.key | ascii_upcase) as $method
	    | .value.requestBody.content["application/json"].schema | resolve
	    | props | to_entries[]
	    | .key as $name | (.value | resolve) as $p
	    | if ($p | is_string) then
	          "\($method) \($path) \($name) \({($name): "a@@b"} | tojson)"
	      elif $p.type == "array" and ($p.items | resolve | .type) == "object" then
	          ($p.items | resolve | props | to_entries[]
	           | select(.value | resolve | is_string)
	           | "\($method) \($path) \($name)[0].\(.key) \({($name): [{(.key): "a@@b"}]} | tojson)")
	      else empty end' "$COURTS_BUILD/openapi/openapi.json"
}

# target PATH: PATH with every parameter filled (an id of nothing: the body is refused first).
target() {
	sed -E 's/\{(secret)\}/'"$(printf '%064d' 0)"'/g; s/\{date\}/2030-01-01/g;
	        s/\{[A-Za-z]+\}/0b7e6f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b/g' <<<"$1"
}

# refused_everywhere SED JQ: every string member of every body of string_fields, its "@@"
# made what SED says, is answered 400 problem+json (strict) for which JQ holds ($f: the
# member's path); prints how many were sent.
refused_everywhere() {
	local method path field body n=0 line
	while read -r method path field body; do
		n=$((n + 1))
		line=$(ask "$method" "$(target "$path")" -H 'Content-Type: application/json' \
			--data-binary "$body")
		[[ $line == "400 application/problem+json strict" ]] ||
			{ echo "$method $path $field: $line: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
		sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -e --arg f "$field" "$2" >/dev/null ||
			{ echo "$method $path $field: $(cat "$BATS_TEST_TMPDIR/a")" >&2; return 1; }
	done < <(string_fields | sed "$1")
	echo "$n"
}

@test "U+0000 in any string member of any write's body is 400 on that member, and nothing is written" {
	local n line users
	users=$(sql "SELECT count(*) FROM users")
	n=$(refused_everywhere 's/@@/\\u0000/' '.code == "VALIDATION_FAILED"
	    and .errors == [{field: $f, message: "must not contain the character U+0000"}]')
	# every write with a body, and the string members of those bodies (displayName, name,
	# reason, customMessage, the schedules' times...): well over a route's worth
	[ "$n" -ge 40 ]
	# a member's name holding U+0000, and one deeper in the body
	line=$(ask PUT /api/players/me -H 'Content-Type: application/json' \
		--data-binary '{"display\u0000Name":"x"}')
	[[ $line == "400 application/problem+json strict" ]]
	[ "$(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r '.errors[0].message')" = \
		"a member's name must not contain the character U+0000" ]
	line=$(ask POST /api/match/requests/0b7e6f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b/result \
		-H 'Content-Type: application/json' --data-binary '{"sets":[[6,4],{"note":"\u0000"}]}')
	[ "$(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r '.errors[0].field')" = "sets[1].note" ]
	# nothing written: no row anywhere, not even the callers' users
	[ "$(sql "SELECT count(*) FROM users")" = "$users" ]
	[ "$(sql "SELECT count(*) FROM venues") $(sql "SELECT count(*) FROM players") $(sql "SELECT count(*) FROM match_requests")" = "0 0 0" ]
}

@test "a raw control character inside any string member of any write's body is 400 MALFORMED_JSON" {
	local n line
	n=$(refused_everywhere $'s/@@/\x1f/' '.code == "MALFORMED_JSON" and
	    (.detail | test("a control character inside a string"))')
	[ "$n" -ge 40 ]
	# escaped, the same characters are text like any other
	line=$(ask PUT /api/players/me -H 'Content-Type: application/json' \
		--data-binary '{"displayName":"Ana\tGarc\u00eda","skillLevel":"BEGINNER"}')
	[[ $line == "200 application/json strict" ]]
	[ "$(sql "SELECT display_name FROM players")" = $'Ana\tGarcía' ]
}

@test "a display name of any UTF-8, four-octet characters included, is stored and answered as sent" {
	line=$(ask PUT /api/players/me -H 'Content-Type: application/json' \
		--data-binary '{"displayName":"Zoë 🎾 \u00e9","skillLevel":"BEGINNER"}')
	[[ $line == "200 application/json strict" ]]
	[ "$(sed '1,/^\r$/d' "$BATS_TEST_TMPDIR/a" | jq -r .displayName)" = "Zoë 🎾 é" ]
	[ "$(sql "SELECT display_name FROM players")" = "Zoë 🎾 é" ]
}
