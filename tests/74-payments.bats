#!/usr/bin/env bats
# Payments through the provider (PAYMENT_PROVIDER=stripe): a PaymentIntent for each share, the
# share paid only on the provider's word (its signed webhook, or its answer to
# confirm-payment), refunds sent by the sweeper, and the provider down at every step. The
# provider is tests/stripe-stand-in.mjs, which speaks Stripe's API and signs its events with
# the official stripe package (tests/73-stripe-stand-in.bats checks it with the official
# client); the service under test is a second Apache of the suite's own configuration.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

KEY=sk_test_suite
SECRET=whsec_suite_current
OLD_SECRET=whsec_suite_previous

setup_file() {
	STAND=$BATS_FILE_TMPDIR/stripe
	mkdir -p "$STAND"
	echo "$KEY" >"$STAND/secret-key"
	echo "$SECRET" >"$STAND/webhook-secret"
	(exec "${CLEAN_ENV[@]}" node "$COURTS_ROOT/tests/stripe-stand-in.mjs" "$STAND") \
		>"$STAND/log" 2>&1 3>&- &
	echo $! >"$STAND/pid"
	for _ in $(seq 1 100); do
		[ -s "$STAND/port" ] && break
		sleep 0.1
	done
	[ -s "$STAND/port" ] || { cat "$STAND/log" >&2; return 1; }
	API=http://127.0.0.1:$(cat "$STAND/port")
	PAY_ENV=(PAYMENT_PROVIDER=stripe "STRIPE_SECRET_KEY=$KEY"
		"STRIPE_WEBHOOK_SECRET=$OLD_SECRET, $SECRET" "STRIPE_API_BASE=$API"
		PAYMENT_PROVIDER_TIMEOUT_SECONDS=2)
	PAY_URL=$(extra_apache payments "${PAY_ENV[@]}")
	echo "$PAY_URL/api/payments/stripe/webhook" >"$STAND/webhook-url"
	export STAND API PAY_URL
}

teardown_file() {
	[ ! -f "$STAND/pid" ] || kill "$(cat "$STAND/pid")" 2>/dev/null || true
}

setup() {
	reset_db
	match_world
	TOKEN=$(token org)
	DAY=$(weekday_date 3)
	echo ok >"$STAND/mode"
	echo yes >"$STAND/deliver"
	echo succeeded >"$STAND/refund-mode"
	: >"$STAND/requests.jsonl"
	: >"$STAND/deliveries.jsonl"
}

# pay_env: the provider's settings, as the sweeper and the server have them
pay_env() {
	echo PAYMENT_PROVIDER=stripe "STRIPE_SECRET_KEY=$KEY" "STRIPE_WEBHOOK_SECRET=$SECRET" \
		"STRIPE_API_BASE=$API" PAYMENT_PROVIDER_TIMEOUT_SECONDS=2
}

# sweep: the cron sweeper once, with the provider's settings.
sweep() {
	# shellcheck disable=SC2046
	run --separate-stderr timeout 60 env $(pay_env) "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ] || { echo "sweep exited $status: $stderr" >&2; return 1; }
	SWEPT=$output
	SWEEP_ERR=$stderr
}

create_body() {
	jq -nc --arg r "$COURT" --arg d "$DAY" '{resourceId: $r, bookingDate: $d,
		startTime: "18:30:00", slotDurationMinutes: 90, format: "TWO_VS_TWO",
		skillLevel: "INTERMEDIATE", searchLat: 40.42, searchLng: -3.70, searchRadiusKm: 5}'
}

# create: the organizer holds the slot through the provider; sets MATCH, PAYMENT (the
# ledger row) and PI (its PaymentIntent).
create() {
	req POST /api/match/requests -b "$PAY_URL" -t "$TOKEN" -d "$(create_body)"
	expect 201
	MATCH=$(jqr .id)
	PAYMENT=$(sql "SELECT id FROM payments WHERE match_request_id = '$MATCH' AND kind = 'PAYMENT'")
	PI=$(sql "SELECT provider_ref FROM payments WHERE id = '$PAYMENT'")
	[[ $PI == pi_* ]]
}

# stand_in METHOD PATH: a test-only route of the stand-in; its answer in STAND_BODY.
stand_in() {
	STAND_BODY=$(curl -s -f -X "$1" "$API$2")
}

# requests_to PATH_ERE: the stand-in's log lines of /v1 requests whose path matches.
requests_to() {
	jq -c --arg re "$1" 'select(.path | test($re))' "$STAND/requests.jsonl"
}

match_status() {
	sql "SELECT status FROM match_requests WHERE id = '$MATCH'"
}

# signed_webhook FILE SECRET [T]: POSTs FILE to the webhook signed as Stripe signs, with
# SECRET at unix time T (default now).
signed_webhook() {
	local t=${3:-$(date +%s)} body sig
	body=$(cat "$1")
	sig=$(printf '%s.%s' "$t" "$body" | openssl dgst -sha256 -hmac "$2" -r | cut -d' ' -f1)
	req POST /api/payments/stripe/webhook -b "$PAY_URL" -H "Stripe-Signature: t=$t,v1=$sig" \
		-d "$body"
}

# held_event TYPE: the last event of TYPE the stand-in made, written to a file; prints its path.
held_event() {
	local f=$BATS_TEST_TMPDIR/event-$RANDOM.json
	curl -s -f "$API/_stand-in/state" |
		jq --arg t "$1" '[.events[] | select(.type == $t)] | sort_by(.created) | last' >"$f"
	[ "$(jq -r .id "$f")" != null ]
	echo "$f"
}

@test "with Stripe, a new match asks a PaymentIntent for exactly the organizer's share, and only the provider pays it" {
	create
	[ "$(jqr .status)" = PENDING_PAYMENT ]
	[ "$(jqr -c '.myPayment | [.status, .amount, .currency]')" = '["PENDING",5,"EUR"]' ]
	[ "$(jqr .myPayment.expiresAt)" = "$(jqr .expiresAt)" ]
	secret=$(jqr .myPayment.clientSecret)
	[[ $secret == "${PI}_secret_"* ]]
	# the call, as Stripe documents it: minor units, lower-case currency, the ledger row
	[ "$(requests_to '^/v1/payment_intents$' | wc -l)" = 1 ]
	call=$(requests_to '^/v1/payment_intents$')
	[ "$(jq -c '[.method, .authOk, .params.amount, .params.currency]' <<<"$call")" = '["POST",true,"500","eur"]' ]
	[ "$(jq -r .params.metadata.payment_id <<<"$call")" = "$PAYMENT" ]
	[ "$(jq -r .params.metadata.match_request_id <<<"$call")" = "$MATCH" ]
	[ "$(jq -r .idempotencyKey <<<"$call")" = "$PAYMENT" ]
	[ "$(sql "SELECT provider || ' ' || status || ' ' || provider_status FROM payments WHERE id = '$PAYMENT'")" = "stripe PENDING requires_payment_method" ]
	# the organizer's word is no payment now
	req POST "/api/match/requests/$MATCH/confirm-payment" -b "$PAY_URL" -t "$TOKEN"
	expect_problem 409 PAYMENT_NOT_RECEIVED
	[ "$(match_status)" = PENDING_PAYMENT ]
	[ "$(requests_to "^/v1/payment_intents/$PI\$" | jq -r .method)" = GET ]
	# the player reads the secret again, and only the player
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	expect 200
	[ "$(jqr .myPayment.clientSecret)" = "$secret" ]
	[ "$(sql "SELECT count(*) FROM invitations")" = 0 ]
}

@test "a weekly series asks one PaymentIntent per match, each paid on its own" {
	req POST /api/match/series -b "$PAY_URL" -t "$TOKEN" -d "$(create_body | jq -c '.weeks = 3')"
	expect 201
	[ "$(jqr '.created | length')" = 3 ]
	[ "$(jqr -c '[.created[].myPayment.status] | unique')" = '["PENDING"]' ]
	[ "$(jqr '[.created[].myPayment.clientSecret | select(startswith("pi_"))] | unique | length')" = 3 ]
	[ "$(requests_to '^/v1/payment_intents$' | wc -l)" = 3 ]
	[ "$(requests_to '^/v1/payment_intents$' | jq -r .params.metadata.match_request_id | sort)" = "$(jqr -r '.created[].id' | sort)" ]
	MATCH=$(jqr -r '.created[1].id')
	PI=$(sql "SELECT provider_ref FROM payments WHERE match_request_id = '$MATCH'")
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	[ "$(sql "SELECT string_agg(status, ' ' ORDER BY booking_date) FROM match_requests")" = "PENDING_PAYMENT OPEN PENDING_PAYMENT" ]
	# the provider down: no series, no hold
	echo down >"$STAND/mode"
	expect_log apache 'payment provider: POST /v1/payment_intents: answered 500'
	req POST /api/match/series -b "$PAY_URL" -t "$(token another)" \
		-d "$(create_body | jq -c '.weeks = 2 | .startTime = "11:00:00"')"
	expect_problem 503 PAYMENT_PROVIDER_UNAVAILABLE
	[ "$(sql "SELECT count(*) FROM match_requests")" = 3 ]
}

# paid_match: a match created and paid by its organizer; sets MATCH, PAYMENT, PI and LINK.
paid_match() {
	create
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	[ "$(match_status)" = OPEN ]
	LINK=$(sql "SELECT invitation_token FROM match_requests WHERE id = '$MATCH'")
}

# join_link SUB TEAM: SUB joins $MATCH by its link through the provider; sets SHARE (the
# ledger row) and SHARE_PI.
join_link() {
	fixture_player "$1" INTERMEDIATE 40.42 -3.70 >/dev/null
	req POST "/api/match/join/$LINK" -b "$PAY_URL" -t "$(token "$1")" -d "{\"team\":\"$2\"}"
	expect 200
	SHARE=$(sql "SELECT p.id FROM payments p JOIN match_players mp ON mp.id = p.entry_id
	              WHERE mp.match_request_id = '$MATCH' AND mp.player_id = '$(user_id "$1")'
	                AND mp.left_at IS NULL")
	SHARE_PI=$(sql "SELECT provider_ref FROM payments WHERE id = '$SHARE'")
}

@test "every way into a match pays its own share; the match is MATCHED only once every place is paid" {
	fixture_player near1 INTERMEDIATE 40.43 -3.69 >/dev/null
	paid_match
	# by the link
	join_link ana TEAM_A
	[ "$(jqr .status)" = OPEN ]
	[ "$(jqr -c '.myPayment | [.status, .amount, .currency]')" = '["PENDING",5,"EUR"]' ]
	[[ $(jqr .myPayment.clientSecret) == "${SHARE_PI}_secret_"* ]]
	[ "$(sql "SELECT expires_at - created_at = interval '900 seconds' FROM payments WHERE id = '$SHARE'")" = t ]
	[ "$(jqr .myPayment.expiresAt)" = "$(sql "SELECT to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') FROM payments WHERE id = '$SHARE'")" ]
	call=$(requests_to '^/v1/payment_intents$' | tail -n 1)
	[ "$(jq -c '[.params.amount, .params.currency, .params.metadata.payment_id, .params.metadata.match_request_id, .idempotencyKey]' <<<"$call")" = "[\"500\",\"eur\",\"$SHARE\",\"$MATCH\",\"$SHARE\"]" ]
	ana=$SHARE_PI
	# by the invitation the payment sent
	inv=$(sql "SELECT i.id FROM invitations i WHERE i.match_request_id = '$MATCH' AND i.player_id = '$(user_id near1)'")
	req POST "/api/match/invitations/$inv/accept" -b "$PAY_URL" -t "$(token near1)" -d '{"team":"TEAM_B"}'
	expect 200
	[ "$(jqr .myPayment.status)" = PENDING ]
	[[ $(jqr .myPayment.clientSecret) == pi_*_secret_* ]]
	near1=$(sql "SELECT provider_ref FROM payments WHERE player_id = '$(user_id near1)'")
	# from the open-match feed
	fixture_player feed INTERMEDIATE 40.42 -3.70 >/dev/null
	req POST "/api/match/requests/$MATCH/join" -b "$PAY_URL" -t "$(token feed)" -d '{"team":"TEAM_B"}'
	expect 200
	[ "$(jqr .myPayment.status)" = PENDING ]
	feed=$(sql "SELECT provider_ref FROM payments WHERE player_id = '$(user_id feed)'")
	# every place taken, none of the three shares paid: full, not MATCHED
	[ "$(jqr -c '[.status, .availableSlots, (.players | length)]')" = '["OPEN",0,4]' ]
	[ "$(requests_to '^/v1/payment_intents$' | wc -l)" = 4 ]
	for pi in "$ana" "$near1"; do stand_in POST "/_stand-in/payment_intents/$pi/pay"; done
	[ "$(match_status)" = OPEN ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_FULL'")" = 0 ]
	stand_in POST "/_stand-in/payment_intents/$feed/pay"
	[ "$(match_status)" = MATCHED ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'MATCH_FULL'")" = 4 ]
	[ "$(sql "SELECT string_agg(DISTINCT status, ',') FROM payments WHERE match_request_id = '$MATCH'")" = PAID ]
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$(token feed)"
	[ "$(jqr -c '.myPayment | [.status, .clientSecret]')" = '["PAID",null]' ]
}

@test "a share not paid in time frees its place at once on read, then the sweeper ends the join and cancels its intent" {
	paid_match
	join_link ana TEAM_B
	sql "UPDATE payments SET expires_at = now() - interval '1 second' WHERE id = '$SHARE'"
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	[ "$(jqr -c '[.availableSlots, (.players | length)]')" = '[3,1]' ]
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$(token ana)"
	[ "$(jqr -c '.myPayment | [.status, .expiresAt, .clientSecret]')" = '["CANCELLED",null,null]' ]
	sweep
	[[ $SWEPT == *" intents_cancelled=1 "* ]]
	[ "$(sql "SELECT left_reason FROM match_players WHERE player_id = '$(user_id ana)'")" = UNPAID ]
	[ "$(sql "SELECT status || ' ' || provider_status FROM payments WHERE id = '$SHARE'")" = "CANCELLED canceled" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PAYMENT_EXPIRED' AND recipient_id = '$(user_id ana)'")" = 1 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_LEFT' AND recipient_id = '$ORG'")" = 1 ]
	[ "$(sql "SELECT team_a_count + team_b_count FROM match_requests WHERE id = '$MATCH'")" = 1 ]
	run curl -s -o /dev/null -w '%{http_code}' -X POST "$API/_stand-in/payment_intents/$SHARE_PI/pay"
	[ "$output" = 409 ]
	# no reliability is lost for it, and the place can be taken again, by anyone
	[ "$(sql "SELECT count(*) FROM reliability_events WHERE player_id = '$(user_id ana)'")" = 0 ]
	join_link ana TEAM_B
	[ "$(jqr .myPayment.status)" = PENDING ]
}

@test "a share paid after its window is refunded in full, and its place is not kept for it" {
	paid_match
	join_link ana TEAM_A
	sql "UPDATE payments SET expires_at = now() - interval '1 second' WHERE id = '$SHARE'"
	stand_in POST "/_stand-in/payment_intents/$SHARE_PI/pay"
	[ "$(sql "SELECT outcome FROM payment_events WHERE object_id = '$SHARE_PI' AND type = 'payment_intent.succeeded'")" = LATE_PAYMENT ]
	[ "$(sql "SELECT left_reason FROM match_players WHERE player_id = '$(user_id ana)'")" = UNPAID ]
	[ "$(sql "SELECT status FROM payments WHERE id = '$SHARE'")" = PAID ]
	[ "$(sql "SELECT status || ' ' || amount FROM payments WHERE refund_of = '$SHARE'")" = "PENDING 5.00" ]
	sweep
	[ "$(sql "SELECT status FROM payments WHERE refund_of = '$SHARE'")" = REFUNDED ]
	[ "$(match_status)" = OPEN ]
	[ "$(sql "SELECT team_a_count + team_b_count FROM match_requests WHERE id = '$MATCH'")" = 1 ]
}

@test "a hand-over is refilled, and its absent player refunded, only once the new player's share is paid" {
	paid_match
	join_link absent TEAM_B
	stand_in POST "/_stand-in/payment_intents/$SHARE_PI/pay"
	absent_share=$SHARE
	sub=$(fixture_player sub INTERMEDIATE 40.42 -3.70)
	req POST "/api/match/requests/$MATCH/absence" -b "$PAY_URL" -t "$(token absent)" \
		-d "{\"substitutePlayerId\":\"$sub\"}"
	expect 204 -
	inv=$(sql "SELECT id FROM invitations WHERE player_id = '$sub' AND kind = 'HANDOVER'")
	req POST "/api/match/invitations/$inv/accept" -b "$PAY_URL" -t "$(token sub)" -d '{"team":"TEAM_B"}'
	expect 200
	[ "$(jqr .myPayment.status)" = PENDING ]
	# taken, not paid: the hand-over stays open, and the absent player is not refunded yet
	[ "$(sql "SELECT status FROM match_handovers WHERE match_request_id = '$MATCH'")" = OPEN ]
	[ "$(sql "SELECT count(*) FROM payments WHERE refund_of = '$absent_share'")" = 0 ]
	stand_in POST "/_stand-in/payment_intents/$(sql "SELECT provider_ref FROM payments WHERE player_id = '$sub'")/pay"
	[ "$(sql "SELECT status FROM match_handovers WHERE match_request_id = '$MATCH'")" = REFILLED ]
	[ "$(sql "SELECT status || ' ' || amount FROM payments WHERE refund_of = '$absent_share'")" = "PENDING 5.00" ]
	[ "$(sql "SELECT payload->>'refund' FROM notifications WHERE type = 'PLACE_HANDED_OVER' AND recipient_id = '$(user_id absent)'")" = 5.00 ]
	sweep
	[ "$(sql "SELECT status FROM payments WHERE refund_of = '$absent_share'")" = REFUNDED ]
}

@test "joining with the provider down is 503 and holds no place" {
	expect_log apache 'payment provider: POST /v1/payment_intents: answered 500'
	paid_match
	fixture_player ana INTERMEDIATE 40.42 -3.70 >/dev/null
	echo down >"$STAND/mode"
	req POST "/api/match/join/$LINK" -b "$PAY_URL" -t "$(token ana)" -d '{"team":"TEAM_A"}'
	expect_problem 503 PAYMENT_PROVIDER_UNAVAILABLE
	[ "$(sql "SELECT count(*) FROM match_players WHERE match_request_id = '$MATCH'")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE match_request_id = '$MATCH'")" = 1 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_JOINED'")" = 0 ]
	echo ok >"$STAND/mode"
	req POST "/api/match/join/$LINK" -b "$PAY_URL" -t "$(token ana)" -d '{"team":"TEAM_A"}'
	expect 200
}

@test "the provider's signed event pays the share: the match opens, its players are invited, the secret is gone" {
	fixture_player near1 INTERMEDIATE 40.43 -3.69 >/dev/null
	create
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	[ "$(jq -c 'select(.type == "payment_intent.succeeded") | .status' "$STAND/deliveries.jsonl")" = 200 ]
	[ "$(match_status)" = OPEN ]
	[ "$(sql "SELECT status || ' ' || provider_status || ' ' || (client_secret IS NULL) FROM payments WHERE id = '$PAYMENT'")" = "PAID succeeded true" ]
	[ "$(sql "SELECT outcome FROM payment_events WHERE type = 'payment_intent.succeeded' AND payment_id = '$PAYMENT'")" = PAID ]
	[ "$(sql "SELECT count(*) FROM invitations WHERE match_request_id = '$MATCH'")" = 1 ]
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	expect 200
	[ "$(jqr -c '.myPayment | [.status, .expiresAt, .clientSecret]')" = '["PAID",null,null]' ]
	# the organizer's confirm-payment now finds it paid
	req POST "/api/match/requests/$MATCH/confirm-payment" -b "$PAY_URL" -t "$TOKEN"
	expect_problem 409 INVALID_STATE
}

@test "confirm-payment asks the provider: with the webhook lost, a paid intent opens the match, and the late event changes nothing more" {
	create
	echo no >"$STAND/deliver"
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	[ "$(match_status)" = PENDING_PAYMENT ]
	req POST "/api/match/requests/$MATCH/confirm-payment" -b "$PAY_URL" -t "$TOKEN"
	expect 200
	[ "$(jqr .status)" = OPEN ]
	[ "$(jqr .myPayment.status)" = PAID ]
	echo yes >"$STAND/deliver"
	stand_in POST /_stand-in/deliver
	[ "$(jq -r '.[] | .status' <<<"$STAND_BODY" | sort -u)" = 200 ]
	[ "$(sql "SELECT outcome FROM payment_events WHERE type = 'payment_intent.succeeded'")" = ALREADY_PAID ]
	[ "$(sql "SELECT count(*) FROM payments WHERE match_request_id = '$MATCH'")" = 1 ]
	[ "$(match_status)" = OPEN ]
}

@test "unsigned, tampered, stale and foreign webhooks are 400 problems and change nothing; both rolled secrets are taken" {
	create
	echo no >"$STAND/deliver"
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	event=$(held_event payment_intent.succeeded)
	req POST /api/payments/stripe/webhook -b "$PAY_URL" -d "$(cat "$event")"
	expect_problem 400 INVALID_SIGNATURE
	[[ $(jqr .detail) == *"Stripe-Signature header is missing"* ]]
	signed_webhook "$event" whsec_someone_else
	expect_problem 400 INVALID_SIGNATURE
	signed_webhook "$event" "$SECRET" $(($(date +%s) - 301))
	expect_problem 400 INVALID_SIGNATURE
	[[ $(jqr .detail) == *"more than 300 s from now"* ]]
	# a body changed after signing: the amount raised
	t=$(date +%s)
	sig=$(printf '%s.%s' "$t" "$(cat "$event")" | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d' ' -f1)
	req POST /api/payments/stripe/webhook -b "$PAY_URL" -H "Stripe-Signature: t=$t,v1=$sig" \
		-d "$(jq '.data.object.amount_received = 50000' "$event")"
	expect_problem 400 INVALID_SIGNATURE
	req POST /api/payments/stripe/webhook -b "$PAY_URL" -H "Stripe-Signature: t=$t" -d "$(cat "$event")"
	expect_problem 400 INVALID_SIGNATURE
	[ "$(match_status)" = PENDING_PAYMENT ]
	[ "$(sql "SELECT count(*) FROM payment_events WHERE type = 'payment_intent.succeeded'")" = 0 ]
	# signed with the secret being retired, it is genuine
	signed_webhook "$event" "$OLD_SECRET"
	expect 200
	[ "$(jqr -c .)" = '{"received":true,"outcome":"PAID"}' ]
	[ "$(match_status)" = OPEN ]
	# the same event again, signed with the new secret: applied once
	signed_webhook "$event" "$SECRET"
	expect 200
	[ "$(jqr .outcome)" = DUPLICATE ]
	[ "$(sql "SELECT count(*) FROM payment_events WHERE type = 'payment_intent.succeeded'")" = 1 ]
}

@test "events out of order and twice: a late failure after the success leaves the share paid" {
	create
	echo no >"$STAND/deliver"
	stand_in POST "/_stand-in/payment_intents/$PI/fail"
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	echo yes >"$STAND/deliver"
	stand_in POST "/_stand-in/deliver?order=reverse"
	[ "$(jq -r '.[] | .status' <<<"$STAND_BODY" | sort -u)" = 200 ]
	[ "$(sql "SELECT status || ' ' || provider_status FROM payments WHERE id = '$PAYMENT'")" = "PAID succeeded" ]
	[ "$(match_status)" = OPEN ]
	failed=$(jq -r 'select(.type == "payment_intent.payment_failed") | .eventId' "$STAND/deliveries.jsonl")
	stand_in POST "/_stand-in/events/$failed/resend"
	[ "$(jq -r .status <<<"$STAND_BODY")" = 200 ]
	[ "$(sql "SELECT outcome FROM payment_events WHERE id = '$failed'")" = RECORDED ]
	[ "$(sql "SELECT count(*) FROM payment_events WHERE id = '$failed'")" = 1 ]
	[ "$(sql "SELECT status FROM payments WHERE id = '$PAYMENT'")" = PAID ]
	# an event about nothing the service knows, and one of a type it does not use
	[ "$(sql "SELECT count(*) FROM payment_events WHERE outcome = 'IGNORED'")" -ge 1 ]
}

@test "a cancelled PaymentIntent stays cancelled whatever earlier event of it comes late" {
	create
	echo no >"$STAND/deliver"
	stand_in POST "/_stand-in/payment_intents/$PI/fail"
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	sweep
	[ "$(sql "SELECT status || ' ' || provider_status FROM payments WHERE id = '$PAYMENT'")" = "CANCELLED canceled" ]
	# the cancellation's event first, the failure from before it last
	echo yes >"$STAND/deliver"
	stand_in POST "/_stand-in/deliver?order=reverse"
	[ "$(jq -r '.[] | .status' <<<"$STAND_BODY" | sort -u)" = 200 ]
	[ "$(sql "SELECT count(*) FROM payment_events WHERE type = 'payment_intent.payment_failed' AND outcome = 'RECORDED'")" = 1 ]
	[ "$(sql "SELECT status || ' ' || provider_status FROM payments WHERE id = '$PAYMENT'")" = "CANCELLED canceled" ]
}

@test "a payment of another amount is an issue for an administrator and pays nothing" {
	create
	stand_in POST "/_stand-in/payment_intents/$PI/pay?amount=400"
	[ "$(match_status)" = PENDING_PAYMENT ]
	[ "$(sql "SELECT status FROM payments WHERE id = '$PAYMENT'")" = PENDING ]
	[ "$(sql "SELECT outcome FROM payment_events WHERE type = 'payment_intent.succeeded'")" = AMOUNT_MISMATCH ]
	[ "$(sql "SELECT kind || ' ' || (detail->>'received') || ' ' || (detail->>'expected') || ' ' || (detail->>'expectedCurrency') FROM payment_issues WHERE payment_id = '$PAYMENT'")" = "AMOUNT_MISMATCH 400 500 eur" ]
	req POST "/api/match/requests/$MATCH/confirm-payment" -b "$PAY_URL" -t "$TOKEN"
	expect_problem 409 PAYMENT_NOT_RECEIVED
	[[ $(jqr .detail) == *"another amount or currency"* ]]
	[ "$(sql "SELECT count(*) FROM payment_issues")" = 1 ]
}

@test "money of another amount for a share whose place was freed is an issue, and the sweeper stops asking to cancel its intent" {
	create
	echo no >"$STAND/deliver"
	stand_in POST "/_stand-in/payment_intents/$PI/pay?amount=400"
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	sweep
	[ "$(match_status)" = CANCELLED ]
	[ "$(requests_to "^/v1/payment_intents/$PI/cancel\$" | wc -l)" = 1 ]
	[ "$(sql "SELECT kind || ' ' || (detail->>'received') FROM payment_issues WHERE payment_id = '$PAYMENT'")" = "AMOUNT_MISMATCH 400" ]
	# nothing is paid, and nothing is due: a succeeded intent cannot be cancelled
	[ "$(sql "SELECT status || ' ' || provider_status || ' ' || (next_attempt_at IS NULL) FROM payments WHERE id = '$PAYMENT'")" = "CANCELLED succeeded true" ]
	[ "$(sql "SELECT count(*) FROM payments_due(100, now() + interval '1 day') WHERE id = '$PAYMENT'")" = 0 ]
	# the event, late, changes nothing more
	echo yes >"$STAND/deliver"
	stand_in POST "/_stand-in/deliver"
	[ "$(sql "SELECT outcome FROM payment_events WHERE type = 'payment_intent.succeeded'")" = AMOUNT_MISMATCH ]
	[ "$(sql "SELECT count(*) FROM payment_issues")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE refund_of = '$PAYMENT'")" = 0 ]
}

@test "a player whose share lapsed is no longer in the match: leaving, an absence or answering a place request is 404 and writes nothing" {
	paid_match
	join_link ana TEAM_B
	fixture_player sub INTERMEDIATE 40.42 -3.70 >/dev/null
	fixture_player adv ADVANCED 40.42 -3.70 >/dev/null
	req POST "/api/match/requests/$MATCH/place-requests" -b "$PAY_URL" -t "$(token adv)"
	expect 201
	PR=$(jqr .id)
	sql "UPDATE payments SET expires_at = now() - interval '1 second' WHERE id = '$SHARE'"
	req DELETE "/api/match/requests/$MATCH/leave" -b "$PAY_URL" -t "$(token ana)" \
		-d "{\"substitutePlayerId\": \"$(user_id sub)\"}"
	expect_problem 404 NOT_FOUND
	req POST "/api/match/requests/$MATCH/absence" -b "$PAY_URL" -t "$(token ana)"
	expect_problem 404 NOT_FOUND
	req POST "/api/match/place-requests/$PR/approve" -b "$PAY_URL" -t "$(token ana)"
	expect_problem 404 NOT_FOUND
	[ "$(sql "SELECT count(*) FROM notifications WHERE type IN ('PLAYER_ABSENT', 'HANDOVER_OFFERED')")" = 0 ]
	[ "$(sql "SELECT count(*) FROM match_handovers")" = 0 ]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	[ "$(sql "SELECT count(*) FROM place_request_answers")" = 0 ]
	# the sweeper frees the place as it frees any lapsed share
	sweep
	[ "$(sql "SELECT left_reason FROM match_players WHERE player_id = '$(user_id ana)'")" = UNPAID ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PLAYER_LEFT' AND recipient_id = '$ORG'")" = 1 ]
}

@test "the provider down or silent at create: 503 within its timeout, nothing held, and the retry runs again" {
	expect_log apache 'payment provider: POST /v1/payment_intents: answered 500'
	expect_log apache 'payment provider: POST /v1/payment_intents: .*(timed out|Timeout)'
	echo down >"$STAND/mode"
	req POST /api/match/requests -b "$PAY_URL" -t "$TOKEN" -H "Idempotency-Key: create-$RANDOM-1" \
		-d "$(create_body)"
	key=$(requests_to '^/v1/payment_intents$' | jq -r .idempotencyKey)
	expect_problem 503 PAYMENT_PROVIDER_UNAVAILABLE
	[ "$(header Retry-After)" = 30 ]
	[ "$(sql "SELECT (SELECT count(*) FROM match_requests) + (SELECT count(*) FROM match_players)
	          + (SELECT count(*) FROM payments) + (SELECT count(*) FROM idempotency_keys)")" = 0 ]
	# the stand-in holds the answer 60 s: the answer comes from the provider timeout (2 s)
	echo stall >"$STAND/mode"
	req POST /api/match/requests -b "$PAY_URL" -t "$TOKEN" -d "$(create_body)"
	expect_problem 503 PAYMENT_PROVIDER_UNAVAILABLE
	[ "$(sql "SELECT count(*) FROM match_requests")" = 0 ]
	echo ok >"$STAND/mode"
	req POST /api/match/requests -b "$PAY_URL" -t "$TOKEN" -H "Idempotency-Key: create-again" \
		-d "$(create_body)"
	expect 201
	[ "$(jqr .myPayment.status)" = PENDING ]
	[[ $(jqr .myPayment.clientSecret) == pi_*_secret_* ]]
	[ -n "$key" ]
}

@test "a lapsed hold frees the place, and the sweeper cancels its PaymentIntent at the provider once" {
	create
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	expect 200
	sweep
	[[ $SWEPT == *" intents_cancelled=1 "* ]]
	[ "$(match_status)" = CANCELLED ]
	[ "$(sql "SELECT status || ' ' || provider_status || ' ' || (client_secret IS NULL) FROM payments WHERE id = '$PAYMENT'")" = "CANCELLED canceled true" ]
	[ "$(requests_to "^/v1/payment_intents/$PI/cancel\$" | wc -l)" = 1 ]
	[ "$(curl -s "$API/_stand-in/state" | jq -r --arg pi "$PI" '.payment_intents[] | select(.id == $pi) | .status')" = canceled ]
	sweep
	[[ $SWEPT == *" intents_cancelled=0 "* ]]
	[ "$(requests_to "^/v1/payment_intents/$PI/cancel\$" | wc -l)" = 1 ]
	# the card can no longer be charged for it
	run curl -s -o /dev/null -w '%{http_code}' -X POST "$API/_stand-in/payment_intents/$PI/pay"
	[ "$output" = 409 ]
}

@test "money that comes after the place was freed is refunded in full by the sweeper, once" {
	create
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	[ "$(sql "SELECT outcome FROM payment_events WHERE type = 'payment_intent.succeeded'")" = LATE_PAYMENT ]
	[ "$(match_status)" = CANCELLED ]
	refund=$(sql "SELECT id FROM payments WHERE refund_of = '$PAYMENT'")
	[ "$(sql "SELECT status || ' ' || amount || ' ' || provider FROM payments WHERE id = '$refund'")" = "PENDING 5.00 stripe" ]
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	expect 200
	[ "$(jqr .myPayment.status)" = REFUND_PENDING ]
	sweep
	[[ $SWEPT == *" refunds_sent=1 refunds_failed=0 "* ]]
	call=$(requests_to '^/v1/refunds$')
	[ "$(jq -c '[.params.payment_intent, .params.amount, .idempotencyKey]' <<<"$call")" = "[\"$PI\",\"500\",\"$refund\"]" ]
	[ "$(sql "SELECT status || ' ' || provider_status FROM payments WHERE id = '$refund'")" = "REFUNDED succeeded" ]
	[[ $(sql "SELECT provider_ref FROM payments WHERE id = '$refund'") == re_* ]]
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	[ "$(jqr .myPayment.status)" = REFUNDED ]
	# what the provider took and gave back: all of it
	[ "$(curl -s "$API/_stand-in/state" | jq -r --arg pi "$PI" '.charges[] | select(.payment_intent == $pi) | "\(.amount) \(.amount_refunded)"')" = "500 500" ]
	sweep
	[[ $SWEPT == *" refunds_sent=0 "* ]]
	[ "$(requests_to '^/v1/refunds$' | wc -l)" = 1 ]
}

@test "two sweepers at once send each refund once" {
	pis=()
	for h in 09:30 11:00 12:30; do
		req POST /api/match/requests -b "$PAY_URL" -t "$(token "late-${h/:/}")" \
			-d "$(create_body | jq -c --arg t "$h:00" '.startTime = $t')"
		expect 201
		pi=$(sql "SELECT provider_ref FROM payments WHERE match_request_id = '$(jqr .id)'")
		pis+=("$pi")
		sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$(jqr .id)'"
		stand_in POST "/_stand-in/payment_intents/$pi/pay"
	done
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND' AND status = 'PENDING'")" = 3 ]
	# each answer 2 s late: the two runs overlap for the whole of their work
	echo slow >"$STAND/mode"
	# shellcheck disable=SC2046
	env $(pay_env) PAYMENT_PROVIDER_TIMEOUT_SECONDS=10 SWEEP_BATCH=1 \
		"$COURTS_BUILD/cron/sweep" >"$BATS_TEST_TMPDIR/a" 2>&1 &
	a=$!
	# shellcheck disable=SC2046
	env $(pay_env) PAYMENT_PROVIDER_TIMEOUT_SECONDS=10 SWEEP_BATCH=1 \
		"$COURTS_BUILD/cron/sweep" >"$BATS_TEST_TMPDIR/b" 2>&1
	wait "$a"
	# both did some of it, neither twice
	grep -q ' refunds_sent=[1-3] ' "$BATS_TEST_TMPDIR/a"
	grep -q ' refunds_sent=[0-2] ' "$BATS_TEST_TMPDIR/b"
	[ "$(requests_to '^/v1/refunds$' | wc -l)" = 3 ]
	[ "$(requests_to '^/v1/refunds$' | jq -r .idempotencyKey | sort -u | wc -l)" = 3 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND' AND status = 'REFUNDED'")" = 3 ]
	# the provider's books: one refund of each payment, of all of it
	[ "$(curl -s "$API/_stand-in/state" | jq -r --arg pis "${pis[*]}" '[.refunds[] |
		select(.payment_intent | IN($pis | split(" ")[])) | "\(.payment_intent) \(.amount)"] |
		sort | join(",")')" = "$(printf '%s 500\n' "${pis[@]}" | sort | paste -sd,)" ]
}

@test "the provider down at refund time: kept PENDING with a backoff from 30 s, sent once it is back" {
	create
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	refund=$(sql "SELECT id FROM payments WHERE refund_of = '$PAYMENT'")
	echo down >"$STAND/mode"
	sweep
	[[ $SWEPT == *" refunds_sent=0 "*" provider_retries=1 "* ]]
	[[ $SWEEP_ERR == *"payment provider: POST /v1/refunds: answered 500; tried again later"* ]]
	[ "$(sql "SELECT status || ' ' || attempts || ' ' || (next_attempt_at - now() BETWEEN interval '25 seconds' AND interval '31 seconds') FROM payments WHERE id = '$refund'")" = "PENDING 1 true" ]
	[ -n "$(sql "SELECT last_error FROM payments WHERE id = '$refund'")" ]
	echo ok >"$STAND/mode"
	sweep
	[[ $SWEPT == *" refunds_sent=0 "* ]]
	# a second failure doubles the wait
	echo down >"$STAND/mode"
	sql "UPDATE payments SET next_attempt_at = now() WHERE id = '$refund'"
	sweep
	[ "$(sql "SELECT attempts || ' ' || (next_attempt_at - now() BETWEEN interval '55 seconds' AND interval '61 seconds') FROM payments WHERE id = '$refund'")" = "2 true" ]
	echo ok >"$STAND/mode"
	sql "UPDATE payments SET next_attempt_at = now() WHERE id = '$refund'"
	sweep
	[[ $SWEPT == *" refunds_sent=1 "* ]]
	[ "$(sql "SELECT status FROM payments WHERE id = '$refund'")" = REFUNDED ]
	[ "$(requests_to '^/v1/refunds$' | jq -r .idempotencyKey | sort -u)" = "$refund" ]
}

@test "a refund the provider fails is FAILED, an issue for an administrator" {
	create
	sql "UPDATE match_requests SET expires_at = now() - interval '1 second' WHERE id = '$MATCH'"
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	refund=$(sql "SELECT id FROM payments WHERE refund_of = '$PAYMENT'")
	echo failed >"$STAND/refund-mode"
	sweep
	[ "$(sql "SELECT status || ' ' || provider_status FROM payments WHERE id = '$refund'")" = "FAILED failed" ]
	[ "$(sql "SELECT kind || ' ' || (detail->>'status') FROM payment_issues WHERE payment_id = '$refund'")" = "REFUND_FAILED failed" ]
	req GET "/api/match/requests/$MATCH" -b "$PAY_URL" -t "$TOKEN"
	[ "$(jqr .myPayment.status)" = REFUND_FAILED ]
	# listed for an administrator, with what the provider said
	req GET "/api/admin/payments?status=FAILED" -b "$PAY_URL" -t "$(token admin ADMIN)"
	expect 200
	[ "$(jqr length)" = 1 ]
	[ "$(jqr -c '.[0] | [.id, .kind, .status, .refundOf, .matchRequestId, .playerId, .amount, .currency, .provider, .providerStatus, .attempts]')" = "[\"$refund\",\"REFUND\",\"FAILED\",\"$PAYMENT\",\"$MATCH\",\"$ORG\",5,\"EUR\",\"stripe\",\"failed\",1]" ]
	[[ $(jqr '.[0].providerRef') == re_* ]]
	[ "$(jqr -c '.[0].issues | map([.kind, .detail.status, .resolvedAt])')" = '[["REFUND_FAILED","failed",null]]' ]
	req GET "/api/admin/payments?status=FAILED" -b "$PAY_URL" -t "$TOKEN"
	expect_problem 403 FORBIDDEN
	req GET "/api/admin/payments?kind=PAYMENT&status=PAID" -b "$PAY_URL" -t "$(token admin ADMIN)"
	expect 200
	[ "$(jqr -c 'map(.id)')" = "[\"$PAYMENT\"]" ]
	req GET "/api/admin/payments?status=LOST" -b "$PAY_URL" -t "$(token admin ADMIN)"
	expect_problem 400 VALIDATION_FAILED status
	# paid back at the desk: the administrator settles it, and it is no longer a difference
	reconcile
	grep -q "^reconcile: difference REFUND_FAILED: refund $refund of 5.00 EUR was refused by the provider" <<<"$stderr"
	req POST "/api/admin/payments/$refund/resolve" -b "$PAY_URL" -t "$(token admin ADMIN)" -d '{"note":" "}'
	expect_problem 400 VALIDATION_FAILED note
	req POST "/api/admin/payments/$refund/resolve" -b "$PAY_URL" -t "$(token admin ADMIN)" \
		-d '{"note":"Paid back in cash at the desk, receipt 118"}'
	expect 200
	[ "$(jqr -c '[.id, .status] + (.issues | map([.kind, (.resolvedAt != null), .resolvedBy, .resolution])[0])')" = \
		"[\"$refund\",\"FAILED\",\"REFUND_FAILED\",true,\"$(user_id admin)\",\"Paid back in cash at the desk, receipt 118\"]" ]
	req POST "/api/admin/payments/$refund/resolve" -b "$PAY_URL" -t "$(token admin ADMIN)" -d '{"note":"again"}'
	expect_problem 409 NO_OPEN_ISSUE
	req POST "/api/admin/payments/$MATCH/resolve" -b "$PAY_URL" -t "$(token admin ADMIN)" -d '{"note":"x"}'
	expect_problem 404 NOT_FOUND
	reconcile
	[[ $stderr != *"difference REFUND_FAILED"* ]]
	# nothing is sent again for it
	sweep
	[ "$(requests_to '^/v1/refunds$' | wc -l)" = 1 ]
}

# reconcile: make reconcile's program once, with the provider's settings.
reconcile() {
	# shellcheck disable=SC2046
	run --separate-stderr timeout 60 env $(pay_env) "$COURTS_BUILD/cron/reconcile"
	[ "$status" -eq 0 ] || { echo "reconcile exited $status: $stderr" >&2; return 1; }
}

@test "make reconcile applies the events whose webhook never arrived, once, and prints what it cannot settle" {
	stand_in POST /_stand-in/reset
	echo no >"$STAND/deliver"
	create
	stand_in POST "/_stand-in/payment_intents/$PI/pay"
	[ "$(match_status)" = PENDING_PAYMENT ]
	# a second share paid another amount, and money for an intent the ledger never asked for
	req POST /api/match/requests -b "$PAY_URL" -t "$(token other)" \
		-d "$(create_body | jq -c '.startTime = "11:00:00"')"
	expect 201
	other=$(sql "SELECT provider_ref FROM payments WHERE match_request_id = '$(jqr .id)'")
	stand_in POST "/_stand-in/payment_intents/$other/pay?amount=450"
	stranger=$(curl -s -f -X POST -u "$KEY:" "$API/v1/payment_intents" -d amount=700 -d currency=eur | jq -r .id)
	stand_in POST "/_stand-in/payment_intents/$stranger/pay"
	events=$(curl -s "$API/_stand-in/state" | jq '.events | length')
	reconcile
	[[ $output =~ ^reconcile:\ events=$events\ applied=$events\ already_applied=0\ differences=2\ elapsed_ms=[0-9]+$ ]]
	[ "$(match_status)" = OPEN ]
	[ "$(sql "SELECT status FROM payments WHERE id = '$PAYMENT'")" = PAID ]
	[ "$(sql "SELECT count(*) FROM payment_events")" = "$events" ]
	[ "$(wc -l <<<"$stderr")" = 2 ]
	grep -qx "reconcile: difference AMOUNT_MISMATCH: $other brought 450 eur for payment [0-9a-f-]*, whose share is 500 eur" <<<"$stderr"
	grep -qx "reconcile: difference UNKNOWN_CHARGE: $stranger took 700 eur that no share of the ledger asked for (event evt_[A-Za-z0-9]*)" <<<"$stderr"
	# a second run finds everything applied, and the same two differences
	reconcile
	[[ $output =~ ^reconcile:\ events=$events\ applied=0\ already_applied=$events\ differences=2\  ]]
	[ "$(sql "SELECT count(*) FROM payment_issues")" = 2 ]
	# the events arrive after all: nothing more changes
	echo yes >"$STAND/deliver"
	stand_in POST /_stand-in/deliver
	[ "$(jq -r '.[] | .status' <<<"$STAND_BODY" | sort -u)" = 200 ]
	[ "$(sql "SELECT count(*) FROM payment_events")" = "$events" ]
	[ "$(sql "SELECT count(*) FROM payment_issues")" = 2 ]
	# over more than one page of events (a page is 100), none delivered
	echo no >"$STAND/deliver"
	for _ in $(seq 1 60); do
		curl -s -f -X POST -u "$KEY:" "$API/v1/payment_intents" -d amount=100 -d currency=eur >/dev/null
		curl -s -f -X POST -u "$KEY:" "$API/v1/payment_intents" -d amount=100 -d currency=eur >/dev/null
	done
	total=$(curl -s "$API/_stand-in/state" | jq '.events | length')
	[ "$total" -gt 100 ]
	reconcile
	[[ $output =~ ^reconcile:\ events=$total\ applied=$((total - events))\ already_applied=$events\  ]]
	[ "$(requests_to '^/v1/events' | jq -r '.query.starting_after // empty' | wc -l)" -ge 1 ]
}

@test "make reconcile with the provider down fails with one line and keeps what it applied" {
	echo down >"$STAND/mode"
	reconcile || true
	[ "$status" -eq 1 ]
	[[ $stderr == *"payment provider: GET /v1/events"*"answered 500; what was applied stays"* ]]
	[ -z "$output" ]
}

@test "without a provider the webhook is 404 and matches are paid by the organizer's word, as before" {
	req POST /api/payments/stripe/webhook -H "Stripe-Signature: t=1,v1=00" -d '{"id":"evt_1","type":"x","data":{"object":{}}}'
	expect_problem 404 NOT_FOUND
	req POST /api/match/requests -t "$TOKEN" -d "$(create_body)"
	expect 201
	[ "$(jqr .myPayment.clientSecret)" = null ]
	[ "$(sql "SELECT count(*) FROM payments WHERE provider IS NOT NULL")" = 0 ]
	[ ! -s "$STAND/requests.jsonl" ]
}

@test "make run checks the provider's settings before it starts anything" {
	state=$BATS_TEST_TMPDIR/state
	check() {
		run env "$@" "$COURTS_ROOT/scripts/stack.sh" check "$state" "$(free_port)" 3>&-
	}
	check PAYMENT_PROVIDER=paypal
	[ "$status" -ne 0 ]
	[[ $output == *"PAYMENT_PROVIDER=paypal is not supported: set none"* ]]
	check PAYMENT_PROVIDER=stripe
	[ "$status" -ne 0 ]
	[[ $output == *"needs STRIPE_SECRET_KEY"* ]]
	check PAYMENT_PROVIDER=stripe STRIPE_SECRET_KEY=sk_test_x
	[[ $output == *"needs STRIPE_WEBHOOK_SECRET"* ]]
	check PAYMENT_PROVIDER=stripe STRIPE_SECRET_KEY=sk_test_x STRIPE_WEBHOOK_SECRET=whsec_a,nope
	[[ $output == *"holds 'nope', which is not a webhook signing secret"* ]]
	check PAYMENT_PROVIDER=stripe STRIPE_SECRET_KEY=sk_test_x STRIPE_WEBHOOK_SECRET=whsec_a \
		STRIPE_API_BASE=http://api.example.com
	[[ $output == *"STRIPE_API_BASE=http://api.example.com is not an https:// URL"* ]]
	check PAYMENT_PROVIDER=stripe STRIPE_SECRET_KEY=sk_test_x STRIPE_WEBHOOK_SECRET=whsec_a \
		PAYMENT_PROVIDER_TIMEOUT_SECONDS=600
	[[ $output == *"PAYMENT_PROVIDER_TIMEOUT_SECONDS=600 is not a whole number of seconds from 1 to 60"* ]]
	check PAYMENT_PROVIDER=stripe STRIPE_SECRET_KEY=sk_test_x STRIPE_WEBHOOK_SECRET="whsec_a, whsec_b"
	[ "$status" -eq 0 ]
}
