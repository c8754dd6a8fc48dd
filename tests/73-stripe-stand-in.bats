#!/usr/bin/env bats
# The suite's stand-in for the payment provider (tests/stripe-stand-in.mjs) answers as the
# Stripe API does: the official client drives it (tests/stripe-client-check.mjs) and checks
# each answer against what the API documents and the package's types declare, and curl checks
# what a client does not show: the files it keeps, its modes, its test-only routes, its
# webhooks' order. Each test has a stand-in of its own on 127.0.0.1, in its temporary
# directory, stopped by its PID; nothing here needs the service or the database.
# Any mode.

bats_require_minimum_version 1.5.0

load test_helper

KEY=sk_test_standin

setup() {
	SI_DIR=$BATS_TEST_TMPDIR/stripe
	mkdir -p "$SI_DIR"
	stand_in_start "$COURTS_ROOT/tests/stripe-stand-in.mjs" "$SI_DIR"
	SI_URL=$STARTED_URL
}

teardown() {
	[ -n "${SI_DIR:-}" ] || return 0
	stand_in_stop "$SI_DIR"
	[ -z "${HOOK_DIR:-}" ] || stand_in_stop "$HOOK_DIR"
	# nothing on stdout or stderr while things go right
	if [ -s "$SI_DIR/out.log" ]; then
		cat "$SI_DIR/out.log" >&2
		return 1
	fi
}

# stand_in_start SCRIPT DIR: a stand-in on DIR, started from / (no working directory of its
# own); STARTED_URL is its base URL once it has written DIR/port (at most 10 s)
stand_in_start() {
	local i
	(cd / && exec "${CLEAN_ENV[@]}" node "$1" "$2") >"$2/out.log" 2>&1 3>&- &
	echo $! >"$2/pid"
	for i in $(seq 1 200); do
		[ ! -s "$2/port" ] || break
		kill -0 "$(cat "$2/pid")" 2>/dev/null || { cat "$2/out.log" >&2; return 1; }
		sleep 0.05
	done
	[ -s "$2/port" ]
	STARTED_URL=http://127.0.0.1:$(cat "$2/port")
}

# stand_in_stop DIR: the process whose PID DIR/pid holds stopped, and waited for
stand_in_stop() {
	[ -s "$1/pid" ] || return 0
	kill "$(cat "$1/pid")" 2>/dev/null || true
	wait "$(cat "$1/pid")" 2>/dev/null || true
}

# si METHOD PATH [CURL_ARGS...]: a request to the stand-in with the key as Bearer (unless
# CURL_ARGS give another Authorization); sets STATUS and BODY, the headers in $SI_DIR/headers.
# Not test_helper's req: the answers it keeps are checked against the service's own API.
si() {
	local method=$1 path=$2 auth=(-H "Authorization: Bearer $KEY")
	shift 2
	[[ " $* " != *" -u "* && " ${*,,} " != *"authorization:"* ]] || auth=()
	STATUS=$(curl -s -g -o "$SI_DIR/body" -D "$SI_DIR/headers" -w '%{http_code}' -X "$method" \
		"${auth[@]}" "$@" "$SI_URL$path")
	BODY=$(<"$SI_DIR/body")
}

# hdr NAME: the value of header NAME of the last answer of si
hdr() {
	grep -i "^$1:" "$SI_DIR/headers" | tail -n 1 | cut -d: -f2- | sed 's/^ //; s/\r$//'
}

# form: the Content-Type of the API's requests
FORM=(-H 'Content-Type: application/x-www-form-urlencoded')

# new_intent [AMOUNT]: a PaymentIntent in EUR; prints its id
new_intent() {
	si POST /v1/payment_intents "${FORM[@]}" -d "amount=${1:-2000}" -d currency=eur \
		-d 'metadata[payment_id]=pay-1' >&2
	[ "$STATUS" = 200 ] || { echo "creating an intent: $STATUS $BODY" >&2; return 1; }
	jq -r .id <<<"$BODY"
}

# paid_intent [AMOUNT]: a PaymentIntent the customer paid; prints its id
paid_intent() {
	local id
	id=$(new_intent "$@")
	si POST "/_stand-in/payment_intents/$id/pay" >&2
	[ "$STATUS" = 200 ] || { echo "paying $id: $STATUS $BODY" >&2; return 1; }
	echo "$id"
}

# state FILTER: jq -r FILTER over the stand-in's state
state() {
	curl -s "$SI_URL/_stand-in/state" | jq -r "$1"
}

# client_check CHECK...: the official client's checks against the stand-in
client_check() {
	run --separate-stderr clean_node "$COURTS_ROOT/tests/stripe-client-check.mjs" "$SI_DIR" "$@"
	printf 'status: %s\nstdout: %s\nstderr: %s\n' "$status" "$output" "$stderr"
	[ "$status" -eq 0 ]
	[[ $output == "stripe-client-check: $# checks passed ($(IFS=,; echo "$*" | sed 's/,/, /g')) against "* ]]
	[ -z "$stderr" ]
}

# receiver: tests/webhook-receiver.mjs in $HOOK_DIR (answering as $HOOK_DIR/mode says), and the
# stand-in's webhook URL pointed at it
receiver() {
	local i
	HOOK_DIR=$BATS_TEST_TMPDIR/hook
	mkdir -p "$HOOK_DIR"
	echo ok >"$HOOK_DIR/mode"
	node "$COURTS_ROOT/tests/webhook-receiver.mjs" unused-secret "$HOOK_DIR" >"$HOOK_DIR/out.log" 2>&1 3>&- &
	echo $! >"$HOOK_DIR/pid"
	for i in $(seq 1 200); do
		[ ! -s "$HOOK_DIR/port" ] || break
		sleep 0.05
	done
	[ -s "$HOOK_DIR/port" ]
	echo "http://127.0.0.1:$(cat "$HOOK_DIR/port")/hooks/stripe" >"$SI_DIR/webhook-url"
}

# received: the ids and types of the events the receiver got, one "id type" a line
received() {
	[ ! -s "$HOOK_DIR/received.jsonl" ] || jq -r '"\(.body.id) \(.body.type)"' "$HOOK_DIR/received.jsonl"
}

# ---- through the official client ---------------------------------------------------------------

@test "the official client creates, retrieves and cancels PaymentIntents with the fields its types declare" {
	client_check intents
}

@test "the client's idempotency key replays the first answer; other parameters or another endpoint are idempotency errors" {
	client_check idempotency
}

@test "a paid intent is refunded in part, refused a refund of more than is left, then refunded the rest" {
	client_check refunds
}

@test "events.list pages through every event once, newest first, and back from the oldest" {
	client_check events
}

@test "each event reaches the webhook before the call that made it returns, and verifies with the secret only" {
	echo whsec_73_stand_in_test_secret >"$SI_DIR/webhook-secret"
	client_check webhooks
}

@test "a wrong key is an authentication error to the client, and a provider that is down an API error" {
	echo sk_test_73_another_key >"$SI_DIR/secret-key"
	client_check errors
}

# ---- what a client does not show -----------------------------------------------------------------

@test "each API request is kept as Stripe decodes it; a Bearer or a Basic key lets it in, another key does not" {
	si POST /v1/payment_intents -u "$KEY:" "${FORM[@]}" -H 'Idempotency-Key: idem-1' \
		--data-binary 'amount=2500&currency=eur&metadata[payment_id]=p%201&metadata[match]=m-1' \
		--data-binary 'expand[]=latest_charge&expand[]=payment_method' \
		--data-binary 'automatic_payment_methods[enabled]=true&description=Court+2'
	[ "$STATUS" = 200 ]
	[ "$(hdr Content-Type)" = application/json ]
	[[ $(hdr Request-Id) =~ ^req_[A-Za-z0-9]{14}$ ]]
	[ "$(hdr Idempotency-Key)" = idem-1 ]
	[ -n "$(hdr Stripe-Version)" ]
	[ "$(jq -r '.metadata.payment_id, .description, .automatic_payment_methods.enabled' <<<"$BODY" | paste -sd' ')" = \
		"p 1 Court 2 true" ]
	[ "$(tail -n 1 "$SI_DIR/requests.jsonl" | jq -cS .)" = "$(jq -cnS '{method: "POST", path: "/v1/payment_intents",
		query: {}, idempotencyKey: "idem-1", authOk: true, params: {amount: "2500", currency: "eur",
		metadata: {payment_id: "p 1", match: "m-1"}, expand: ["latest_charge", "payment_method"],
		automatic_payment_methods: {enabled: "true"}, description: "Court 2"}}')" ]
	id=$(jq -r .id <<<"$BODY")
	# a GET's query, the official client's way of writing arrays
	si GET "/v1/payment_intents/$id?expand[0]=latest_charge"
	[ "$STATUS" = 200 ]
	[ "$(tail -n 1 "$SI_DIR/requests.jsonl" | jq -c '[.method, .path, .query, .params]')" = \
		"[\"GET\",\"/v1/payment_intents/$id\",{\"expand\":[\"latest_charge\"]},{\"expand\":[\"latest_charge\"]}]" ]
	# another key, none, a malformed header: 401, Stripe's error body, kept with authOk false
	si GET "/v1/payment_intents/$id" -H 'Authorization: Bearer sk_test_wrong0000'
	[ "$STATUS" = 401 ]
	[ "$(jq -r '.error.type, .error.message' <<<"$BODY" | paste -sd'|')" = \
		'invalid_request_error|Invalid API Key provided: sk_test_*****0000' ]
	[ "$(tail -n 1 "$SI_DIR/requests.jsonl" | jq -r .authOk)" = false ]
	si GET "/v1/payment_intents/$id" -H 'Authorization: '
	[ "$STATUS" = 401 ]
	[[ $(jq -r .error.message <<<"$BODY") == "You did not provide an API key."* ]]
	si GET "/v1/payment_intents/$id" -u 'sk_test_wrong:'
	[ "$STATUS" = 401 ]
	# the key of another file, read at each request
	echo sk_test_rotated >"$SI_DIR/secret-key"
	si GET "/v1/payment_intents/$id"
	[ "$STATUS" = 401 ]
	si GET "/v1/payment_intents/$id" -u 'sk_test_rotated:'
	[ "$STATUS" = 200 ]
	# a route the API does not have: Stripe's 404
	si DELETE "/v1/payment_intents/$id" -u 'sk_test_rotated:'
	[ "$STATUS" = 404 ]
	[ "$(jq -r .error.message <<<"$BODY")" = "Unrecognized request URL (DELETE: /v1/payment_intents/$id)."\
" Please see https://stripe.com/docs or we can help at https://support.stripe.com/." ]
	[ "$(hdr Content-Type)" = application/json ]
	[[ $(hdr Request-Id) == req_* ]]
}

@test "a repeated Idempotency-Key answers the first status and body again and changes nothing; a 500 of a provider down is not kept" {
	si POST /v1/payment_intents "${FORM[@]}" -H 'Idempotency-Key: k-1' -d amount=2000 -d currency=eur
	[ "$STATUS" = 200 ]
	cp "$SI_DIR/body" "$SI_DIR/first"
	first=$(hdr Request-Id)
	[ -z "$(hdr Idempotent-Replayed)" ]
	si POST /v1/payment_intents "${FORM[@]}" -H 'Idempotency-Key: k-1' -d currency=eur -d amount=2000
	[ "$STATUS" = 200 ]
	cmp "$SI_DIR/first" "$SI_DIR/body"
	[ "$(hdr Idempotent-Replayed)" = true ]
	[ "$(hdr Original-Request)" = "$first" ]
	[ "$(state '.payment_intents | length')" = 1 ]
	[ "$(state '.events | length')" = 1 ]
	si POST /v1/payment_intents "${FORM[@]}" -H 'Idempotency-Key: k-1' -d amount=2001 -d currency=eur
	[ "$STATUS" = 400 ]
	[ "$(jq -r .error.type <<<"$BODY")" = idempotency_error ]
	# a 500 of the provider down is not kept under its key: the retry runs
	echo down >"$SI_DIR/mode"
	si POST /v1/payment_intents "${FORM[@]}" -H 'Idempotency-Key: k-2' -d amount=3000 -d currency=eur
	[ "$STATUS" = 500 ]
	[ "$(jq -r .error.type <<<"$BODY")" = api_error ]
	echo ok >"$SI_DIR/mode"
	si POST /v1/payment_intents "${FORM[@]}" -H 'Idempotency-Key: k-2' -d amount=3000 -d currency=eur
	[ "$STATUS" = 200 ]
	[ -z "$(hdr Idempotent-Replayed)" ]
	[ "$(state '.payment_intents | length')" = 2 ]
}

@test "refund-mode pending waits for the settle route; failed gives the amount back, with refund.updated and refund.failed" {
	id=$(paid_intent)
	echo pending >"$SI_DIR/refund-mode"
	si POST /v1/refunds "${FORM[@]}" -d "payment_intent=$id" -d amount=800
	[ "$STATUS" = 200 ]
	re=$(jq -r .id <<<"$BODY")
	[ "$(jq -r .status <<<"$BODY")" = pending ]
	# a pending refund counts against what is left
	si POST /v1/refunds "${FORM[@]}" -d "payment_intent=$id" -d amount=1300
	[ "$STATUS" = 400 ]
	[ "$(jq -r .error.code <<<"$BODY")" = amount_too_large ]
	si POST "/_stand-in/refunds/$re/settle"
	[ "$STATUS" = 200 ]
	[ "$(jq -r .status <<<"$BODY")" = succeeded ]
	si GET "/v1/refunds/$re"
	[ "$(jq -r .status <<<"$BODY")" = succeeded ]
	[ "$(state "[.events[] | select(.data.object.id == \"$re\") | .type + \" \" + .data.object.status
	            + \" \" + (.data.previous_attributes.status // \"-\")] | join(\",\")")" = \
		'refund.created pending -,refund.updated succeeded pending' ]
	si POST "/_stand-in/refunds/$re/settle"
	[ "$STATUS" = 409 ]

	echo failed >"$SI_DIR/refund-mode"
	si POST /v1/refunds "${FORM[@]}" -d "payment_intent=$id" -d amount=700
	[ "$STATUS" = 200 ]
	re=$(jq -r .id <<<"$BODY")
	[ "$(jq -r .status <<<"$BODY")" = pending ]
	si GET "/v1/refunds/$re"
	[ "$(jq -r '.status, .failure_reason' <<<"$BODY" | paste -sd' ')" = 'failed declined' ]
	[ "$(state "[.events[] | select(.data.object.id == \"$re\" or .type == \"charge.refunded\") | .type]
	            | join(\",\")")" = 'charge.refunded,refund.created,charge.refunded,refund.updated,refund.failed' ]
	# the failed amount may be refunded again: 800 of 2000 are out
	[ "$(state '.charges[0] | "\(.amount_refunded) \(.refunded)"')" = '800 false' ]
	echo succeeded >"$SI_DIR/refund-mode"
	si POST /v1/refunds "${FORM[@]}" -d "payment_intent=$id"
	[ "$(jq -r '.amount, .status' <<<"$BODY" | paste -sd' ')" = '1200 succeeded' ]
	[ "$(state '.charges[0] | "\(.amount_refunded) \(.refunded)"')" = '2000 true' ]
}

@test "a declined card leaves the intent to be paid again; a payment may bring another amount; a canceled intent cannot be paid" {
	id=$(new_intent)
	si POST "/_stand-in/payment_intents/$id/fail"
	[ "$STATUS" = 200 ]
	[ "$(jq -r '.status, .last_payment_error.code, .last_payment_error.decline_code, .last_payment_error.type' \
		<<<"$BODY" | paste -sd' ')" = 'requires_payment_method card_declined generic_decline card_error' ]
	[ "$(state '[.events[].type] | join(",")')" = \
		'payment_intent.created,charge.failed,payment_intent.payment_failed' ]
	# nothing to refund yet
	si POST /v1/refunds "${FORM[@]}" -d "payment_intent=$id"
	[ "$STATUS" = 400 ]
	si POST "/_stand-in/payment_intents/$id/pay?amount=1500&currency=usd"
	[ "$STATUS" = 200 ]
	[ "$(jq -r '.status, .amount, .amount_received, .last_payment_error' <<<"$BODY" | paste -sd' ')" = \
		'succeeded 2000 1500 null' ]
	charge=$(jq -r .latest_charge <<<"$BODY")
	[ "$(state ".charges[] | select(.id == \"$charge\") | \"\(.amount) \(.currency) \(.paid) \(.status)\"")" = \
		'1500 usd true succeeded' ]
	[ "$(state '[.events[].type] | .[3:] | join(",")')" = 'charge.succeeded,payment_intent.succeeded' ]
	si POST "/_stand-in/payment_intents/$id/pay"
	[ "$STATUS" = 409 ]

	id=$(new_intent)
	si POST "/v1/payment_intents/$id/cancel" "${FORM[@]}" -d cancellation_reason=abandoned
	[ "$(jq -r '.status, .cancellation_reason' <<<"$BODY" | paste -sd' ')" = 'canceled abandoned' ]
	si POST "/_stand-in/payment_intents/$id/pay"
	[ "$STATUS" = 409 ]
	[ "$(hdr Content-Type)" = application/json ]
	[[ $(jq -r .error <<<"$BODY") == *canceled* ]]
	si POST /_stand-in/payment_intents/pi_nosuchintent/pay
	[ "$STATUS" = 404 ]
}

@test "with deliver=no events are kept, listed and not sent; the deliver route sends them in the order asked; resend sends one again" {
	receiver
	echo no >"$SI_DIR/deliver"
	paid_intent >/dev/null
	b=$(new_intent)
	[ "$(received)" = "" ]
	[ ! -e "$SI_DIR/deliveries.jsonl" ]
	si GET '/v1/events?limit=100'
	[ "$(jq -r '[.data[].type] | join(",")' <<<"$BODY")" = \
		'payment_intent.created,payment_intent.succeeded,charge.succeeded,payment_intent.created' ]
	[ "$(jq -r '[.data[].pending_webhooks] | unique | join(",")' <<<"$BODY")" = 1 ]
	ids=$(jq -r '.data[].id' <<<"$BODY")	# newest first
	si POST '/_stand-in/deliver?order=reverse'
	[ "$STATUS" = 200 ]
	[ "$(jq -r '.[] | "\(.eventId) \(.status)"' <<<"$BODY")" = "$(sed 's/$/ 200/' <<<"$ids")" ]
	[ "$(received | cut -d' ' -f1)" = "$ids" ]
	[ "$(jq -r '"\(.eventId) \(.status)"' "$SI_DIR/deliveries.jsonl")" = "$(sed 's/$/ 200/' <<<"$ids")" ]
	# every event delivered: nothing left to send
	si POST /_stand-in/deliver
	[ "$BODY" = '[]' ]
	si GET '/v1/events?limit=100&delivery_success=false'
	[ "$(jq '.data | length' <<<"$BODY")" = 0 ]
	# a duplicate delivery of the oldest
	oldest=$(tail -n 1 <<<"$ids")
	si POST "/_stand-in/events/$oldest/resend"
	[ "$(jq -c . <<<"$BODY")" = '{"status":200}' ]
	[ "$(received | tail -n 1)" = "$oldest payment_intent.created" ]
	[ "$(received | grep -c "^$oldest ")" = 2 ]
	# deliver=yes again: a receiver that fails counts its status, and the deliver route sends again
	echo yes >"$SI_DIR/deliver"
	echo fail >"$HOOK_DIR/mode"
	si POST "/v1/payment_intents/$b/cancel" "${FORM[@]}"
	[ "$STATUS" = 200 ]
	[ "$(tail -n 1 "$SI_DIR/deliveries.jsonl" | jq -r '"\(.type) \(.status)"')" = 'payment_intent.canceled 500' ]
	echo ok >"$HOOK_DIR/mode"
	si POST /_stand-in/deliver
	[ "$(jq -r '.[] | .status' <<<"$BODY")" = 200 ]
	# nobody listening: status 0
	echo "http://127.0.0.1:$(free_port)/hooks/stripe" >"$SI_DIR/webhook-url"
	si POST "/_stand-in/events/$oldest/resend"
	[ "$(jq -c . <<<"$BODY")" = '{"status":0}' ]
	[ "$(tail -n 1 "$SI_DIR/deliveries.jsonl" | jq -c .)" = "{\"eventId\":\"$oldest\",\"type\":\"payment_intent.created\",\"status\":0}" ]
}

@test "mode down answers 500, stall never answers, slow answers after 2 s; the test-only routes answer at once in every mode" {
	id=$(new_intent)
	echo down >"$SI_DIR/mode"
	si GET "/v1/payment_intents/$id"
	[ "$STATUS" = 500 ]
	[ "$(jq -r .error.type <<<"$BODY")" = api_error ]
	[[ $(hdr Request-Id) == req_* ]]
	si GET /_stand-in/state
	[ "$STATUS" = 200 ]

	echo stall >"$SI_DIR/mode"
	run curl -s -o /dev/null -w '%{http_code}' --max-time 0.5 -u "$KEY:" "$SI_URL/v1/payment_intents/$id"
	[ "$status" = 28 ]	# curl's timeout: no answer at all
	[ "$output" = 000 ]
	[ "$(tail -n 1 "$SI_DIR/requests.jsonl" | jq -r .path)" = "/v1/payment_intents/$id" ]
	si POST "/_stand-in/payment_intents/$id/pay"
	[ "$STATUS" = 200 ]

	echo slow >"$SI_DIR/mode"
	start=${EPOCHREALTIME/./}
	si GET "/v1/payment_intents/$id"
	took=$((${EPOCHREALTIME/./} - start))	# microseconds
	[ "$STATUS" = 200 ]
	[ "$(jq -r .status <<<"$BODY")" = succeeded ]
	[ "$took" -ge 2000000 ]
	start=${EPOCHREALTIME/./}
	si GET /_stand-in/state
	[ "$STATUS" = 200 ]
	[ $((${EPOCHREALTIME/./} - start)) -lt 1000000 ]
}

@test "the stand-in runs from any working directory and from a path with a space, and writes nothing to stdout or stderr" {
	other="$BATS_TEST_TMPDIR/a copy with space"
	mkdir -p "$other/dir"
	cp "$COURTS_ROOT/tests/stripe-stand-in.mjs" "$COURTS_ROOT/tests/stripe-client-check.mjs" "$other/"
	ln -s "$COURTS_ROOT/tests/node_modules" "$other/node_modules"
	stand_in_start "$other/stripe-stand-in.mjs" "$other/dir"
	run --separate-stderr clean_node "$other/stripe-client-check.mjs" "$other/dir" intents refunds
	stand_in_stop "$other/dir"
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	[ ! -s "$other/dir/out.log" ]
	[ -s "$other/dir/requests.jsonl" ]
}
