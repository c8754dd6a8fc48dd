#!/usr/bin/env bats
# Bearer JWT authentication and roles, through a real protected endpoint
# (GET /api/owner/venues needs the OWNER role). Token forgeries are minted with
# scripts/mint-token.c; other key pairs are made here with openssl.

load test_helper

PROTECTED=/api/owner/venues

setup_file() {
	# in the suite's state directory: the extra Apaches run as www-data and read the keys
	AUTH_KEYS="$COURTS_STATE/auth-keys"
	mkdir -p "$AUTH_KEYS"
	chmod 755 "$AUTH_KEYS"
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		-out "$AUTH_KEYS/other_private.pem" 2>/dev/null
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-out "$AUTH_KEYS/ec_private.pem" 2>/dev/null
	openssl pkey -in "$AUTH_KEYS/ec_private.pem" -pubout -out "$AUTH_KEYS/ec_public.pem"
	chmod 644 "$AUTH_KEYS/ec_public.pem"
	ES_URL=$(extra_apache es JWT_ALGORITHM=ES256 JWT_PUBLIC_KEY_FILE="$AUTH_KEYS/ec_public.pem")
	CLAIM_URL=$(extra_apache claim JWT_ROLES_CLAIM=realm_access.roles)
	export AUTH_KEYS ES_URL CLAIM_URL
}

setup() {
	reset_db
	# users outlive reset_db (as in production), so each test has subjects of its own
	local n
	TAG=$BATS_TEST_NUMBER-$RANDOM$RANDOM
	for n in ALICE BOB CAROL DAVE ERIN FRANK GINA; do
		printf -v "$n" '%s-%s' "${n,,}" "$TAG"
	done
}

# users_count: users of this test's subjects.
users_count() {
	sql "SELECT count(*) FROM users WHERE subject LIKE '%-$TAG'"
}

# all_users: every row of users.
all_users() {
	sql "SELECT count(*) FROM users"
}

# expect_invalid_token: the last answer refused a presented token.
expect_invalid_token() {
	expect_problem 401 INVALID_TOKEN || return 1
	[ "$(header WWW-Authenticate)" = 'Bearer realm="courts", error="invalid_token"' ] || {
		echo "WWW-Authenticate: $(header WWW-Authenticate)" >&2
		return 1
	}
}

@test "no token is 401 UNAUTHORIZED with a Bearer challenge, and no user is created" {
	before=$(all_users)
	req GET $PROTECTED
	expect_problem 401 UNAUTHORIZED
	[ "$(header WWW-Authenticate)" = 'Bearer realm="courts"' ]
	[ "$(jqr .instance)" = $PROTECTED ]
	[ "$(all_users)" = "$before" ]
}

@test "Basic credentials are 401 UNAUTHORIZED with a Bearer challenge" {
	req GET $PROTECTED -H 'Authorization: Basic YWxpY2U6c2VjcmV0'
	expect_problem 401 UNAUTHORIZED
	[ "$(header WWW-Authenticate)" = 'Bearer realm="courts"' ]
}

@test "a Bearer scheme with no token is 401 UNAUTHORIZED" {
	req GET $PROTECTED -H 'Authorization: Bearer'
	expect_problem 401 UNAUTHORIZED
	[ "$(header WWW-Authenticate)" = 'Bearer realm="courts"' ]
}

@test "the Bearer scheme name is case-insensitive" {
	req GET $PROTECTED -H "Authorization: bearer $(token "$ALICE" OWNER)"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "a token that is not a JWT is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t not-a-jwt
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "an expired token is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -e -3600)"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "a token expired 30 s ago is still inside the 60 s leeway" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -e -30)"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "a token expired beyond the 60 s leeway is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -e -90)"
	expect_invalid_token
}

@test "a token a process accepted before is refused once its leeway is over, and keeps its roles" {
	# long-lived processes keep the tokens they accepted (common/auth.c): expiry and roles
	# are checked again at every use. Valid for 10 more seconds, sent eight times so that
	# the workers of a pool have it.
	local t i
	t=$(token "$ALICE" "" -e -50)
	for i in 1 2 3 4 5 6 7 8; do
		req GET /api/match/requests/my -t "$t"
		expect 200
	done
	req GET $PROTECTED -t "$t"
	expect_problem 403 FORBIDDEN
	sleep 11
	for i in 1 2 3 4 5 6 7 8; do
		req GET /api/match/requests/my -t "$t"
		expect_invalid_token
		[ "$(jqr .detail)" = "token expired" ]
	done
	[ "$(users_count)" = 1 ]
}

@test "a token without exp is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -x)"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "a token from another issuer is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -i https://evil.example/)"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "a token for another audience is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -a another-api)"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "an audience array that contains ours is accepted" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -c 'aud=["another-api","courts-api"]')"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "a token with nbf in the future is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -c "nbf=$(($(date +%s) + 600))")"
	expect_invalid_token
}

@test "an unsigned token (alg none) is 401 INVALID_TOKEN" {
	tok=$(token "$ALICE" OWNER -A none)
	[[ "$tok" == *. ]]	# really unsigned: empty signature part
	req GET $PROTECTED -t "$tok"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "an HS256 token keyed with the public key is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -A HS256 -k "$JWT_PUBLIC_KEY_FILE")"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "a token with one signature character changed is 401 INVALID_TOKEN" {
	tok=$(token "$ALICE" OWNER)
	sig=${tok##*.}
	mid=$((${#sig} / 2))
	c=${sig:mid:1}
	if [ "$c" = A ]; then r=B; else r=A; fi
	bad="${tok%.*}.${sig:0:mid}$r${sig:mid+1}"
	[ ${#bad} = ${#tok} ]
	[ "$bad" != "$tok" ]
	req GET $PROTECTED -t "$bad"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
	# the untouched token passes, so the change alone was refused
	req GET $PROTECTED -t "$tok"
	expect 200
}

@test "a token whose claims were edited after signing is 401 INVALID_TOKEN" {
	tok=$(token "$ALICE" "")
	owner=$(token "$ALICE" OWNER)
	# header and claims of an OWNER token under the signature of a token without roles
	forged="${owner%.*}.${tok##*.}"
	req GET $PROTECTED -t "$forged"
	expect_invalid_token
}

@test "a token signed by another RSA key is 401 INVALID_TOKEN" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -k "$AUTH_KEYS/other_private.pem")"
	expect_invalid_token
	[ "$(users_count)" = 0 ]
}

@test "an ES256 token is refused while RS256 is configured" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -A ES256 -k "$AUTH_KEYS/ec_private.pem")"
	expect_invalid_token
}

@test "refused tokens are not written to the server log" {
	tok=$(token "$ALICE" OWNER -e -3600)
	req GET $PROTECTED -t "$tok"
	expect_invalid_token
	id=$(header X-Request-Id)
	# the refusal is logged with its reason and request id, the token is not
	log="$COURTS_STATE/apache/logs/error.log"
	deadline=$((SECONDS + 10))
	until grep -q "req=$id .*token expired" "$log"; do
		[ $SECONDS -lt $deadline ] || { echo "no log line for $id" >&2; return 1; }
		sleep 0.1
	done
	payload=${tok#*.}
	payload=${payload%%.*}
	! grep -qF "${tok##*.}" "$log" || false
	! grep -qF "$payload" "$log" || false
}

@test "a valid token without the OWNER role is 403 FORBIDDEN, without a challenge" {
	req GET $PROTECTED -t "$(token "$ALICE" "")"
	expect_problem 403 FORBIDDEN
	[ -z "$(header WWW-Authenticate)" ]
	req GET $PROTECTED -t "$(token "$ALICE" "PLAYER ADMIN")"
	expect_problem 403 FORBIDDEN
}

@test "role names are exact: 'owner' is not OWNER" {
	req GET $PROTECTED -t "$(token "$ALICE" owner)"
	expect_problem 403 FORBIDDEN
}

@test "a valid OWNER token is 200 and creates the local user once for (iss, sub)" {
	req GET $PROTECTED -t "$(token "$ALICE" OWNER)"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	[ "$(users_count)" = 1 ]
	first=$(sql "SELECT id FROM users WHERE issuer = 'https://auth.courts.local/'
	             AND subject = '$ALICE'")
	[[ "$first" =~ ^[0-9a-f-]{36}$ ]]
	# a new token for the same subject maps to the same row
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -e 7200)"
	expect 200
	[ "$(users_count)" = 1 ]
	[ "$(sql "SELECT id FROM users WHERE subject = '$ALICE'")" = "$first" ]
	# another subject is another user
	req GET $PROTECTED -t "$(token "$BOB" OWNER)"
	expect 200
	[ "$(users_count)" = 2 ]
	second=$(sql "SELECT id FROM users WHERE subject = '$BOB'")
	[[ "$second" =~ ^[0-9a-f-]{36}$ ]]
	[ "$second" != "$first" ]
}

@test "concurrent first requests of one subject create exactly one user" {
	tok=$(token "$CAROL" OWNER)
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		curl -s -o "$BATS_TEST_TMPDIR/c$i" -w '%{http_code}' -H "Authorization: Bearer $tok" \
			"$BASE_URL$PROTECTED" >"$BATS_TEST_TMPDIR/s$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	for i in 1 2 3 4 5 6 7 8; do
		[ "$(cat "$BATS_TEST_TMPDIR/s$i")" = 200 ] || {
			echo "request $i: $(cat "$BATS_TEST_TMPDIR/s$i") $(cat "$BATS_TEST_TMPDIR/c$i")" >&2
			return 1
		}
	done
	[ "$(sql "SELECT count(*) FROM users WHERE subject = '$CAROL'")" = 1 ]
}

@test "the same subject from another issuer is another user" {
	url=$(extra_apache iss2 JWT_ISSUER=https://other-idp.example/)
	req GET $PROTECTED -t "$(token "$ALICE" OWNER)"
	expect 200
	req GET $PROTECTED -b "$url" -t "$(token "$ALICE" OWNER -i https://other-idp.example/)"
	expect 200
	[ "$(sql "SELECT count(DISTINCT id) FROM users WHERE subject = '$ALICE'")" = 2 ]
	[ "$(sql "SELECT string_agg(issuer, ' ' ORDER BY issuer) FROM users
	                WHERE subject = '$ALICE'")" = \
		"https://auth.courts.local/ https://other-idp.example/" ]
	# and the main server still refuses the other issuer
	req GET $PROTECTED -t "$(token "$ALICE" OWNER -i https://other-idp.example/)"
	expect_invalid_token
}

@test "ownerId is the local user id, never the token subject" {
	tok=$(token "$ALICE" OWNER)
	req POST $PROTECTED -t "$tok" -d '{"name":"Club Norte","street":"Calle Sol 2","city":"Madrid",
		"country":"Spain","latitude":40.45,"longitude":-3.69}'
	expect 201
	uid=$(sql "SELECT id FROM users WHERE subject = '$ALICE'")
	[ "$(jqr .ownerId)" = "$uid" ]
	[ "$(jqr .ownerId)" != "$ALICE" ]
	! grep -qF "$ALICE" <<<"$HTTP_BODY" || false
	req GET $PROTECTED -t "$tok"
	expect 200
	[ "$(jqr 'length')" = 1 ]
	[ "$(jqr '.[0].ownerId')" = "$uid" ]
	[ "$(sql "SELECT owner_id FROM venues")" = "$uid" ]
}

@test "one owner does not see another owner's venues" {
	req POST $PROTECTED -t "$(token "$ALICE" OWNER)" -d '{"name":"Club Norte","street":"Calle Sol 2",
		"city":"Madrid","country":"Spain","latitude":40.45,"longitude":-3.69}'
	expect 201
	req GET $PROTECTED -t "$(token "$BOB" OWNER)"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "a token with no role may act as a player" {
	req GET /api/match/requests/my -t "$(token "$DAVE" "")"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	[ "$(sql "SELECT count(*) FROM users WHERE subject = '$DAVE'")" = 1 ]
}

@test "a public endpoint ignores a token, even a broken one" {
	before=$(all_users)
	req GET /api/venues -t not-a-jwt
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	req GET /api/venues -t "$(token "$ALICE" OWNER)"
	expect 200
	[ "$(all_users)" = "$before" ]
}

@test "with JWT_ALGORITHM=ES256 an ES256 token is accepted and an RS256 one refused" {
	req GET $PROTECTED -b "$ES_URL" -t "$(token "$ERIN" OWNER -A ES256 -k "$AUTH_KEYS/ec_private.pem")"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	[ "$(sql "SELECT count(*) FROM users WHERE subject = '$ERIN'")" = 1 ]
	req GET $PROTECTED -b "$ES_URL" -t "$(token "$ERIN" OWNER)"
	expect_invalid_token
	req GET $PROTECTED -b "$ES_URL" -t "$(token "$ERIN" OWNER -A HS256 -k "$AUTH_KEYS/ec_public.pem")"
	expect_invalid_token
}

@test "JWT_ROLES_CLAIM=realm_access.roles reads the roles from the nested claim" {
	req GET $PROTECTED -b "$CLAIM_URL" -t "$(token "$FRANK" "" -c 'realm_access={"roles":["OWNER"]}')"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
	# the top-level roles claim no longer counts there
	req GET $PROTECTED -b "$CLAIM_URL" -t "$(token "$FRANK" OWNER)"
	expect_problem 403 FORBIDDEN
	# and the main server does not read the nested one
	req GET $PROTECTED -t "$(token "$FRANK" "" -c 'realm_access={"roles":["OWNER"]}')"
	expect_problem 403 FORBIDDEN
}

@test "a space-separated roles string is accepted" {
	req GET $PROTECTED -t "$(token "$GINA" "" -c 'roles="PLAYER OWNER"')"
	expect 200
}

@test "a server without its public key answers 503 AUTH_UNAVAILABLE with nothing internal" {
	expect_log apache 'error: cannot open JWT public key .*/no-such-key\.pem'
	url=$(extra_apache nokey JWT_PUBLIC_KEY_FILE="$COURTS_STATE/no-such-key.pem")
	req GET $PROTECTED -b "$url" -t "$(token "$ALICE" OWNER)"
	expect_problem 503 AUTH_UNAVAILABLE
	[ "$(jqr .requestId)" = "$(header X-Request-Id)" ]
	! grep -qi 'pem\|key\|no-such' <<<"$HTTP_BODY" || false
	[ "$(users_count)" = 0 ]
	# a request without a token is still the caller's mistake
	req GET $PROTECTED -b "$url"
	expect_problem 401 UNAUTHORIZED
	[ -n "$(header WWW-Authenticate)" ]
}

@test "make token TTL= sets how long the token lasts; a TTL that is not seconds is refused" {
	# the build directory as make takes it, relative to a checkout whose path has a space
	tok=$(make -s -C "$COURTS_ROOT" token BUILD="$(make_build)" SUB="$ALICE" ROLES=OWNER TTL=2 \
		JWT_PRIVATE_KEY_FILE="$JWT_PRIVATE_KEY_FILE")
	claims=$(cut -d. -f2 <<<"$tok" | tr '_-' '/+' | base64 -d 2>/dev/null || true)
	[ "$(jq '.exp - .iat' <<<"$claims")" = 2 ]
	req GET $PROTECTED -t "$tok"
	expect 200
	run make -s -C "$COURTS_ROOT" token BUILD="$(make_build)" TTL=1h \
		JWT_PRIVATE_KEY_FILE="$JWT_PRIVATE_KEY_FILE"
	[ "$status" -ne 0 ]
	[[ $output == *"TTL=1h is not a number of seconds"* ]]
	# without TTL, an hour
	tok=$(make -s -C "$COURTS_ROOT" token BUILD="$(make_build)" JWT_PRIVATE_KEY_FILE="$JWT_PRIVATE_KEY_FILE")
	[ "$(cut -d. -f2 <<<"$tok" | tr '_-' '/+' | base64 -d 2>/dev/null | jq '.exp - .iat' || true)" = 3600 ]
}
