#!/usr/bin/env bash
# seeds.sh: makes the fuzzers' seed corpora from the bats suite's own requests.
#
#   COURTS_FUZZ_RECORD=DIR MODE=cgi COURTS_BUILD=$PWD/build bats tests/   # records them
#   tests/fuzz/seeds.sh DIR                                                # makes the seeds
#
# Each recorded request (tests/test_helper.bash, req_record) gives the request target the
# request itself, the url and route targets its target, the headers target its header values,
# the input target its query and body, the valid target every value in them, and the auth
# and b64url targets its token. Tokens the suite made with its own key (made for the run) are
# kept as they were, another key's signature to the targets, and also written as "@jwt:" and
# their claims, a valid one's expiry moved far ahead: the auth and request targets sign those
# with the test keys the Makefile makes for each build (fuzz.h, FUZZ_JWT_MARK), so that the
# request target gets past authentication and no private key is kept in the repository.
# Of each target's seeds, those that add coverage are kept, named seed-<sha1>; the other files
# of a corpus (crash inputs kept as regression cases) stay.
set -euo pipefail
rec=${1:?usage: seeds.sh RECORD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/corpus
FUZZ_NOW=1750000000	# fuzz.h
FAR=4102444800		# 2100-01-01: a valid token stays valid
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# put TARGET: stdin becomes a seed of TARGET
put() {
	local f=$tmp/put
	cat >"$f"
	mkdir -p "$tmp/out/$1"
	mv "$f" "$tmp/out/$1/seed-$(sha1sum <"$f" | cut -c1-40)"
}

unb64url() {
	local s=$1
	case $(( ${#s} % 4 )) in 2) s+='==' ;; 3) s+='=' ;; esac
	tr -- '-_' '+/' <<<"$s" | openssl base64 -d -A 2>/dev/null || true
}

# marked TOKEN RECORDED_AT: "@jwt:" and the token's claims on one line, a valid expiry moved
# far ahead (and a future nbf with it), for the target to sign RS256 with the build's test key
# under the header {"alg":"RS256","typ":"JWT"}; empty when the token is not RS256 JSON.
marked() {
	local h c at=$2
	h=$(unb64url "${1%%.*}")
	c=$(unb64url "$(cut -d. -f2 <<<"$1")")
	jq -e '.alg == "RS256"' <<<"$h" >/dev/null 2>&1 || return 0
	c=$(jq -c --argjson at "$at" --argjson far "$FAR" '
		if (.exp | type) == "number" and .exp > $at then .exp = $far else . end |
		if (.nbf | type) == "number" and .nbf > $at then .nbf = $far else . end' \
		<<<"$c" 2>/dev/null) || return 0
	printf '@jwt:%s' "$c"
}

# the claims of TOKEN with its times moved to fuzz.h's FUZZ_NOW, as the auth target sees it
claims_at_fuzz_now() {
	unb64url "$(cut -d. -f2 <<<"$1")" | jq -c --argjson d "$(($2 - FUZZ_NOW))" '
		with_entries(if (.key == "exp" or .key == "nbf" or .key == "iat") and
		    (.value | type) == "number" then .value -= $d else . end)' 2>/dev/null || true
}

# database failures the request seeds take in turn (tests/fuzz/request.c, X-Db-Error)
failures=("08006 - no server" "CR409 - SLOT_TAKEN The slot is taken." "23P01 price_rules_no_overlap"
	"23505 idempotency_keys_one_per_caller" "22P02 - bad input" "40001 - retry" "42P01 - no table")
declare -A marks seen_claims
n=0
for f in "$rec"/*; do
	request_line=$(head -n 1 "$f")
	method=${request_line%% *} target=${request_line#* }
	headers=$(sed -n '2,/^$/p' "$f" | sed '/^$/d')
	body=$(sed '1,/^$/d' "$f")
	read -r _ status at < <(grep '^X-Recorded:' <<<"$headers")
	headers=$(grep -v '^X-Recorded:' <<<"$headers" || true)
	token=$(sed -n 's/^Authorization: [Bb]earer //p' <<<"$headers")

	printf '%s' "$target" | put url
	printf '%s %s' "$method" "${target%%\?*}" | put route
	while IFS= read -r h; do
		[ -n "$h" ] && printf '%s' "${h#*: }" | put headers
	done <<<"$(grep -v '^Authorization: [Bb]earer ey' <<<"$headers" || true)"
	query=""
	[[ $target == *\?* ]] && query=${target#*\?}
	[ -z "$query$body" ] || printf '%s\n%s' "$query" "$body" | put input
	{ tr '&=' '\n\n' <<<"$query"; tr '/' '\n' <<<"${target%%\?*}"
	  jq -r '.. | scalars | tostring' <<<"$body" 2>/dev/null || true; } |
		sort -u | awk 'NR <= 40' | while IFS= read -r v; do printf '%s' "$v" | put valid; done

	if [ -n "$token" ]; then
		if [ -z "${marks[$token]+x}" ]; then
			marks[$token]=$(marked "$token" "$at")
			key=$(unb64url "${token%%.*}")$(claims_at_fuzz_now "$token" "$at" | jq -c 'del(.iat)' 2>/dev/null || true)
			if [ -z "${seen_claims[$key]+x}" ]; then
				seen_claims[$key]=1
				printf '0roles\n%s' "$token" | put auth
				[ -z "${marks[$token]}" ] || printf '0roles\n%s' "${marks[$token]}" | put auth
				printf '2roles\n%s\n%s' "$(unb64url "${token%%.*}")" \
					"$(claims_at_fuzz_now "$token" "$at")" | put auth
				tr '.' '\n' <<<"$token" | while IFS= read -r s; do
					printf '%s' "$s" | put b64url; done
				printf '%s' "Bearer $token" | put headers
			fi
		fi
		[ -z "${marks[$token]}" ] ||
			headers=${headers//"Bearer $token"/"Bearer ${marks[$token]}"}
	fi
	case $target in
	/api/owner*) ;;
	*) [ "$status" -ge 400 ] && [ "$status" != 401 ] && [ "$status" != 403 ] || continue ;;
	esac
	# the 413 cases need no big body: the fuzzer sends Content-Length with any body
	[ ${#body} -le 16384 ] || continue
	failure=${failures[$((n % ${#failures[@]}))]}
	n=$((n + 1))
	{ printf '%s %s\n' "$method" "$target"
	  [ -z "$headers" ] || printf '%s\n' "$headers"
	  printf 'X-Db-Error: %s\n\n%s' "$failure" "$body"; } | put request
done

# what the suite does not send: the roles claim at a dotted path or as one string, an ES256
# token (signed by the target with the EC test key), and the claims the auth target signs
# with the header given
hdr='{"alg":"ES256","typ":"JWT"}'
std='"iss":"https://auth.courts.local/","aud":"courts-api","sub":"ana","exp":1750003600'
printf '1roles\n@jwt:{%s,"roles":["OWNER","ADMIN"]}' "$std" | put auth
printf '2realm_access.roles\n%s\n{%s,"realm_access":{"roles":["OWNER"]}}' "$hdr" "$std" | put auth
printf '2roles\n%s\n{%s,"roles":"OWNER  ADMIN"}' "$hdr" "$std" | put auth
printf '2a.b.c\n%s\n{%s,"a":{"b":{"c":["ADMIN"]}},"aud":["x","courts-api"],"nbf":1749999990}' \
	"$hdr" "$std" | put auth
printf '2roles\n{"alg":"none"}\n{%s}' "$std" | put auth
printf '2roles\n{"alg":"HS256"}\n{%s}' "$std" | put auth

# Content-Length as a client may send it, whatever the body; an Idempotency-Key; an owner's
# token that the request target signs
owner='@jwt:{"iss":"https://auth.courts.local/","aud":"courts-api","sub":"olivia",'
owner+="\"roles\":[\"OWNER\"],\"exp\":$FAR}"
venue='{"name":"Club Sol","street":"Calle Mayor 1","city":"Madrid","country":"Spain","latitude":40.4,"longitude":-3.7}'
for cl in 70000 -1 abc 65536 0 " 12" 99999999999999999999 1048577; do
	printf 'POST /api/owner/venues\nAuthorization: Bearer %s\nContent-Type: application/json\nContent-Length: %s\n\n%s' \
		"$owner" "$cl" "$venue" | put request
done
printf 'POST /api/owner/venues\nAuthorization: Bearer %s\nContent-Type: application/json\nIdempotency-Key: k-1\nX-Db-Error: 23505 idempotency_keys_one_per_caller\n\n%s' \
	"$owner" "$venue" | put request
# the write budget's other answers (X-Db-Budget): a wait, which is 429 with Retry-After, and
# a failure of its statement
v1=/api/owner/venues/00000000-0000-4000-8000-000000000001
printf 'PATCH %s/suspend\nAuthorization: Bearer %s\nX-Db-Budget: 17\n\n' "$v1" "$owner" |
	put request
printf 'POST %s/holidays\nAuthorization: Bearer %s\nContent-Type: application/json\n%s\n\n%s' \
	"$v1" "$owner" $'X-Db-Budget: fail\nX-Db-Error: 08006 - no server' \
	'{"date":"2030-12-25","name":"Navidad"}' | put request

# only the seeds that together reach all that every seed reaches (libFuzzer's merge), when
# the target is built
for d in "$tmp"/out/*; do
	t=$(basename "$d") bin=${COURTS_BUILD:-$here/../../build}/fuzz/$(basename "$d")
	mkdir -p "$corpus/$t" "$tmp/min/$t"
	if [ -x "$bin" ] && "$bin" -merge=1 "$tmp/min/$t" "$d" >"$tmp/merge.log" 2>&1; then
		for f in "$tmp/min/$t"/*; do mv "$f" "$tmp/min/$t/seed-$(basename "$f")"; done
	else
		cp "$d"/seed-* "$tmp/min/$t/"
	fi
	rm -f "$corpus/$t"/seed-*
	cp "$tmp/min/$t"/seed-* "$corpus/$t/"
	echo "$t: $(ls "$tmp/min/$t" | wc -l) seeds of $(ls "$d" | wc -l)"
done
