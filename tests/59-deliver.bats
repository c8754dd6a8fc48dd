#!/usr/bin/env bats
# The deliverer (cron/deliver.c, sql/areas/50_notifications.sql): the notifications outbox
# POSTed to a webhook, signed, retried with backoff, dead after the last attempt and released
# by the operator, never held by two deliverers at once. The receiver is
# tests/webhook-receiver.mjs on 127.0.0.1, which verifies each signature as a real one would.

bats_require_minimum_version 1.5.0

load test_helper
load match_helper

SECRET=test-webhook-secret-0123456789abcdef

setup_file() {
	HOOK_DIR="$COURTS_STATE/webhook"
	mkdir -p "$HOOK_DIR"
	echo ok >"$HOOK_DIR/mode"
	node "$COURTS_ROOT/tests/webhook-receiver.mjs" "$SECRET" "$HOOK_DIR" >"$HOOK_DIR/receiver.log" 2>&1 3>&- &
	echo $! >"$HOOK_DIR/pid"
	for _ in $(seq 1 100); do
		[ -s "$HOOK_DIR/port" ] && break
		sleep 0.05
	done
	HOOK_URL="http://127.0.0.1:$(cat "$HOOK_DIR/port")/hooks/courts"
	export HOOK_DIR HOOK_URL
}

teardown_file() {
	kill "$(cat "$HOOK_DIR/pid")" 2>/dev/null || true
}

setup() {
	reset_db
	: >"$HOOK_DIR/received.jsonl"
	echo ok >"$HOOK_DIR/mode"
}

# deliver [VAR=VALUE...] [-- ARGS]: one run of the deliverer against the suite's database and
# the receiver, with no backoff unless given. The timeout is one a machine running three
# suites at once still meets (with 1 s an answer came late and was retried); the tests of
# timeouts give their own.
deliver() {
	local vars=() args=()
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then shift; args=("$@"); break; fi
		vars+=("$1")
		shift
	done
	run --separate-stderr timeout 120 env NOTIFY_WEBHOOK_URL="$HOOK_URL" \
		NOTIFY_WEBHOOK_SECRET="$SECRET" NOTIFY_TIMEOUT=10 NOTIFY_BACKOFF_SECONDS=0 "${vars[@]}" \
		"$COURTS_BUILD/cron/deliver" "${args[@]}"
	# shown when a test fails: what the deliverer said, what the receiver got, and the outbox
	# (payload, attempts, leased, delivered, dead) with any lock another session holds on it
	printf 'deliver: status %s\nstdout: %s\nstderr: %s\nreceived: %s\noutbox: %s\nlocks: %s\n' \
		"$status" "$output" "$stderr" "$(cat "$HOOK_DIR/received.jsonl")" \
		"$(sql "SELECT string_agg(concat_ws(' ', payload, attempts, next_attempt_at > now(),
		                                    delivered_at IS NOT NULL, dead_at IS NOT NULL), '; '
		                          ORDER BY created_at) FROM notifications")" \
		"$(sql "SELECT string_agg(concat_ws(' ', a.pid, a.application_name, a.state, l.mode,
		                                    left(a.query, 60)), '; ')
		          FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		         WHERE l.relation = 'notifications'::regclass AND a.pid <> pg_backend_pid()")"
}

# notify N: N notifications for the player ana (MATCH_INVITATION, payload {"n": i}); prints
# their ids, oldest first.
notify() {
	local uid
	uid=$(fixture_player ana INTERMEDIATE 40.42 -3.70)
	sql "INSERT INTO notifications (recipient_id, type, payload, created_at)
	     SELECT '$uid', 'MATCH_INVITATION', jsonb_build_object('n', g),
	            now() - interval '1 hour' + g * interval '1 second'
	       FROM generate_series(1, $1) g
	     RETURNING id"
}

# received FILTER: jq -r FILTER over the receiver's records, slurped as one array.
received() {
	jq -r -s "$1" "$HOOK_DIR/received.jsonl"
}

@test "without a webhook URL the deliverer does nothing, quietly; a URL without a secret is refused" {
	notify 2 >/dev/null
	run --separate-stderr env -u NOTIFY_WEBHOOK_URL "$COURTS_BUILD/cron/deliver"
	[ "$status" = 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	deliver NOTIFY_WEBHOOK_SECRET=short
	[ "$status" = 2 ]
	[[ $stderr == *'must be set, at least 16 characters'* ]]
	deliver NOTIFY_WEBHOOK_SECRET= NOTIFY_WEBHOOK_SECRET_FILE="$BATS_TEST_TMPDIR/none"
	[ "$status" = 2 ]
	[ "$stderr" = "deliver: NOTIFY_WEBHOOK_SECRET_FILE $BATS_TEST_TMPDIR/none cannot be read" ]
	deliver NOTIFY_WEBHOOK_URL=ftp://127.0.0.1/x
	[ "$status" = 2 ]
	deliver -- --bogus
	[ "$status" = 2 ]
	[ "$(received length)" = 0 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NULL AND attempts = 0")" = 2 ]
}

@test "each notification is POSTed once, signed, with its id as the idempotency key, and marked delivered" {
	mapfile -t ids < <(notify 3)
	uid=$(user_id ana)
	deliver
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	[[ $output =~ ^deliver:\ delivered=3\ retry=0\ dead=0\ dead_total=0\ elapsed_ms=[0-9]+$ ]]
	# oldest first, each once, as the receiver saw it
	[ "$(received 'map(.id) | join(" ")')" = "${ids[*]}" ]
	[ "$(received 'map(.signatureOk and .method == "POST" and .url == "/hooks/courts"
		and .contentType == "application/json" and .attempt == 1) | all')" = true ]
	# on one connection, kept from one to the next
	[ "$(received 'map(.connection) | unique | length')" = 1 ]
	[ "$(received '.[0].body | keys | join(",")')" = createdAt,id,payload,recipient,type ]
	[ "$(received '.[0].body | .id + " " + .type + " " + (.payload.n | tostring)')" = "${ids[0]} MATCH_INVITATION 1" ]
	[ "$(received '.[2].body.recipient | .id + " " + .issuer + " " + .subject')" = "$uid https://auth.courts.local/ ana" ]
	[ "$(received '.[0].body.createdAt')" = "$(sql "SELECT api_ts(created_at) FROM notifications WHERE id = '${ids[0]}'")" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NOT NULL AND attempts = 1
	          AND next_attempt_at IS NULL AND dead_at IS NULL AND last_error IS NULL")" = 3 ]
	# a second run finds nothing due and sends nothing
	deliver
	[ "$status" = 0 ]
	[[ $output == 'deliver: delivered=0 retry=0 dead=0 dead_total=0 '* ]]
	[ "$(received length)" = 3 ]
}

@test "the secret may come from a file (its first line); a signature made with another secret does not verify" {
	notify 1 >/dev/null
	printf '%s\n' "$SECRET" >"$BATS_TEST_TMPDIR/secret"
	deliver NOTIFY_WEBHOOK_SECRET= NOTIFY_WEBHOOK_SECRET_FILE="$BATS_TEST_TMPDIR/secret"
	[ "$status" = 0 ]
	[ "$(received '.[0].signatureOk')" = true ]
	: >"$HOOK_DIR/received.jsonl"
	sql "UPDATE notifications SET delivered_at = NULL, attempts = 0"

	deliver NOTIFY_WEBHOOK_SECRET=another-secret-of-enough-length
	[ "$status" = 0 ]
	[ "$(received '.[0].signatureOk')" = false ]
	# the receiver still answered 200: it is the receiver's to refuse, and this one did not
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NOT NULL")" = 1 ]
}

@test "failures and timeouts in turns: nothing lost, each id received once per attempt and marked once" {
	mapfile -t ids < <(notify 6)
	echo turns >"$HOOK_DIR/mode"
	deliver NOTIFY_TIMEOUT=1
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NOT NULL")" = 6 ]
	total=$(received length)
	[ "$total" -gt 6 ]
	[[ $output == "deliver: delivered=6 retry=$((total - 6)) dead=0 dead_total=0 "* ]]
	# per notification: attempts 1..n in order, every one but the last refused or timed out,
	# the last answered 200, and the count kept in the database is n
	for id in "${ids[@]}"; do
		n=$(sql "SELECT attempts FROM notifications WHERE id = '$id'")
		[ "$(received "map(select(.id == \"$id\")) | length == $n
			and (map(.attempt) == [range(1; $n + 1)])
			and .[-1].answer == \"ok\" and (.[:-1] | map(.answer != \"ok\") | all)")" = true ]
	done
	[ "$(received 'map(.signatureOk) | all')" = true ]
	# the last failure stays on record: a refusal or a timeout, as curl put it
	[ "$(sql "SELECT count(*) FROM notifications WHERE last_error = 'HTTP 500'")" -ge 1 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE last_error LIKE 'Operation timed out after%'")" -ge 1 ]
	# marked once: a later run sends and changes nothing
	before=$(sql "SELECT string_agg(delivered_at::text, ',' ORDER BY id) FROM notifications")
	deliver
	[ "$(sql "SELECT string_agg(delivered_at::text, ',' ORDER BY id) FROM notifications")" = "$before" ]
	[ "$(received length)" = "$total" ]
}

@test "a failed attempt waits out an exponential backoff before the next" {
	mapfile -t ids < <(notify 1)
	echo fail >"$HOOK_DIR/mode"
	deliver NOTIFY_BACKOFF_SECONDS=30
	[ "$status" = 0 ]
	[[ $output == 'deliver: delivered=0 retry=1 dead=0 dead_total=0 '* ]]
	[ "$(sql "SELECT attempts || ' ' || last_error FROM notifications")" = '1 HTTP 500' ]
	wait_s=$(sql "SELECT round(extract(epoch FROM next_attempt_at - now())) FROM notifications")
	[ "$wait_s" -ge 25 ]
	[ "$wait_s" -le 30 ]
	# not due: the next run sends nothing
	deliver NOTIFY_BACKOFF_SECONDS=30
	[[ $output == 'deliver: delivered=0 retry=0 dead=0 '* ]]
	[ "$(received length)" = 1 ]
	# made due, it fails again and waits twice as long
	sql "UPDATE notifications SET next_attempt_at = now() - interval '1 second'"
	deliver NOTIFY_BACKOFF_SECONDS=30
	[ "$(sql "SELECT attempts FROM notifications")" = 2 ]
	wait_s=$(sql "SELECT round(extract(epoch FROM next_attempt_at - now())) FROM notifications")
	[ "$wait_s" -ge 55 ] && [ "$wait_s" -le 60 ]
}

@test "after the last attempt a notification is dead: one line says so, the operator lists and releases it" {
	mapfile -t ids < <(notify 2)
	echo fail >"$HOOK_DIR/mode"
	deliver NOTIFY_MAX_ATTEMPTS=3
	[ "$status" = 0 ]
	[[ $output == 'deliver: delivered=0 retry=4 dead=2 dead_total=2 '* ]]
	[ "${#stderr_lines[@]}" = 2 ]
	[ "${stderr_lines[0]}" = "deliver: notification ${ids[0]} is dead after 3 attempts, the last: HTTP 500 (deliver --retry-dead sends it again)" ]
	[ "$(received length)" = 6 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE dead_at IS NOT NULL AND attempts = 3
	          AND next_attempt_at IS NULL AND delivered_at IS NULL")" = 2 ]
	# dead ones are not sent again by later runs
	deliver NOTIFY_MAX_ATTEMPTS=3
	[[ $output == 'deliver: delivered=0 retry=0 dead=0 dead_total=2 '* ]]
	[ "$(received length)" = 6 ]
	deliver -- --list-dead
	[ "$status" = 0 ]
	[ "${#lines[@]}" = 2 ]
	[[ ${lines[0]} == "${ids[0]}"$'\t'MATCH_INVITATION$'\t'3$'\t'20*$'\t''HTTP 500' ]]
	# released, and the receiver is back
	echo ok >"$HOOK_DIR/mode"
	deliver -- --retry-dead
	[ "$output" = 'deliver: 2 dead notifications released for new attempts' ]
	deliver NOTIFY_MAX_ATTEMPTS=3
	[[ $output == 'deliver: delivered=2 retry=0 dead=0 dead_total=0 '* ]]
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NOT NULL AND attempts = 1")" = 2 ]
	deliver -- --list-dead
	[ -z "$output" ]
}

@test "three deliverers at once never send one notification twice" {
	mapfile -t ids < <(notify 24)
	echo slow >"$HOOK_DIR/mode"
	local out=$BATS_TEST_TMPDIR i
	for i in 1 2 3; do
		NOTIFY_WEBHOOK_URL="$HOOK_URL" NOTIFY_WEBHOOK_SECRET="$SECRET" \
			"$COURTS_BUILD/cron/deliver" >"$out/$i.out" 2>"$out/$i.err" 3>&- &
	done
	wait
	cat "$out"/*.err
	[ ! -s "$out/1.err" ]
	[ ! -s "$out/2.err" ]
	[ ! -s "$out/3.err" ]
	[ "$(received length)" = 24 ]
	[ "$(received 'map(.id) | unique | length')" = 24 ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NOT NULL AND attempts = 1")" = 24 ]
	# the work was shared: 300 ms each, one after another, would take 7 s
	total=0
	for i in 1 2 3; do
		n=$(sed -n 's/^deliver: delivered=\([0-9]*\) .*/\1/p' "$out/$i.out")
		[ "$n" -ge 1 ]
		total=$((total + n))
	done
	[ "$total" = 24 ]
}

@test "a deliverer that dies between sending and marking: the lease runs out and the notification is sent again" {
	mapfile -t ids < <(notify 1)
	echo stall >"$HOOK_DIR/mode"
	NOTIFY_WEBHOOK_URL="$HOOK_URL" NOTIFY_WEBHOOK_SECRET="$SECRET" NOTIFY_TIMEOUT=2 \
		"$COURTS_BUILD/cron/deliver" >/dev/null 2>&1 3>&- &
	pid=$!
	for _ in $(seq 1 50); do
		[ "$(received length)" = 1 ] && break
		sleep 0.1
	done
	[ "$(received length)" = 1 ]
	kill -9 "$pid"
	wait "$pid" || true
	# leased for 2 * 2 + 5 s from the claim: another deliverer leaves it alone meanwhile
	[ "$(sql "SELECT attempts FROM notifications")" = 1 ]
	lease=$(sql "SELECT round(extract(epoch FROM next_attempt_at - now())) FROM notifications")
	[ "$lease" -ge 5 ]
	[ "$lease" -le 9 ]
	echo ok >"$HOOK_DIR/mode"
	deliver NOTIFY_TIMEOUT=2
	[[ $output == 'deliver: delivered=0 retry=0 dead=0 '* ]]
	# the lease ran out: sent again, and marked once
	sql "UPDATE notifications SET next_attempt_at = now() - interval '1 second'"
	deliver NOTIFY_TIMEOUT=2
	[[ $output == 'deliver: delivered=1 retry=0 dead=0 '* ]]
	[ "$(received 'map(.id + " " + (.attempt | tostring)) | join(",")')" = "${ids[0]} 1,${ids[0]} 2" ]
	[ "$(sql "SELECT attempts || ' ' || (delivered_at IS NOT NULL) FROM notifications")" = '2 true' ]
}

@test "a late report of a failed attempt does not undo a later claim or a delivery" {
	mapfile -t ids < <(notify 1)
	# attempt 1 claimed, its lease ran out, attempt 2 claimed and delivered
	sql "SELECT * FROM notification_claim(60)" >/dev/null
	sql "UPDATE notifications SET next_attempt_at = now() - interval '1 second'"
	sql "SELECT * FROM notification_claim(60)" >/dev/null
	[ "$(sql "SELECT notification_failed('${ids[0]}', 1, 'HTTP 500', 8, 30)")" = "" ]
	[ "$(sql "SELECT notification_delivered('${ids[0]}')")" = t ]
	[ "$(sql "SELECT notification_delivered('${ids[0]}')")" = f ]
	[ "$(sql "SELECT notification_failed('${ids[0]}', 2, 'HTTP 500', 8, 30)")" = "" ]
	[ "$(sql "SELECT attempts || ' ' || (delivered_at IS NOT NULL) || ' ' || (dead_at IS NULL) FROM notifications")" = '2 true true' ]
}

@test "a cancelled match's notifications reach the webhook, each recipient named as the identity provider knows them" {
	match_world
	full_match '3 days'
	req DELETE "/api/match/requests/$M" -t "$(token org)"
	expect 204 -
	deliver
	[ "$status" = 0 ]
	[[ $output == 'deliver: delivered=4 '* ]]
	[ "$(received 'map(.body.type) | unique | join(",")')" = MATCH_CANCELLED ]
	[ "$(received 'map(.body.recipient.subject) | sort | join(",")')" = org,p1,p2,p3 ]
	[ "$(received "map(.body.payload.matchRequestId == \"$M\") | all")" = true ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE delivered_at IS NULL")" = 0 ]
	# the players' own view is unchanged by delivery: still unread
	req GET /api/notifications -t "$(token p1)"
	expect 200
	[ "$(jqr 'map(select(.type == "MATCH_CANCELLED" and .readAt == null)) | length')" = 1 ]
}
