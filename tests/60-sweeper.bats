#!/usr/bin/env bats
# The cron sweeper (cron/sweep.c): expired holds, unfilled matches, completion with no-shows
# and attendance, stale invitations; its summary line, its failures, two runs at once, a
# backlog in two sessions (SWEEP_SESSIONS), and the crontab line that runs it.
# Any mode.

bats_require_minimum_version 1.5.0

load test_helper

SUMMARY_RE='^sweep: expired_holds=([0-9]+) unfilled=([0-9]+) completed=([0-9]+) no_shows=([0-9]+) invitations_expired=([0-9]+) offers_lapsed=[0-9]+ results_confirmed=[0-9]+ idempotency_keys_expired=[0-9]+ slot_dates_added=[0-9]+ kept_answers_forgotten=[0-9]+ refunds_sent=[0-9]+ refunds_failed=[0-9]+ intents_cancelled=[0-9]+ provider_retries=[0-9]+ elapsed_ms=[0-9]+$'

setup_file() {
	# match rows with every NOT NULL column of sql/0002, straight in SQL: a TWO_VS_TWO match
	# of 90 minutes on COURT at local DAY START, the organizer on TEAM_A with a 5.00 payment
	# (PENDING while the request waits for payment, PAID otherwise)
	sql "CREATE OR REPLACE FUNCTION sweep_test_match(court uuid, organizer uuid, st text, day date,
	         start_at time, expires timestamptz) RETURNS uuid LANGUAGE plpgsql AS \$\$
	     DECLARE
	         m uuid;
	         entry uuid;
	         tz text;
	     BEGIN
	         SELECT v.timezone INTO tz FROM resources r JOIN venues v ON v.id = r.venue_id
	          WHERE r.id = court;
	         INSERT INTO match_requests (resource_id, organizer_id, booking_date, start_time,
	             end_time, starts_at, ends_at, format, skill_level, status, team_size,
	             team_a_count, court_price, price_per_player, currency, search_latitude,
	             search_longitude, search_radius_km, expires_at, cancel_reason)
	         VALUES (court, organizer, day, start_at, start_at + interval '90 minutes',
	             (day + start_at) AT TIME ZONE tz,
	             (day + start_at + interval '90 minutes') AT TIME ZONE tz,
	             'TWO_VS_TWO', 'INTERMEDIATE', st, 2, 1, 20.00, 5.00, 'EUR', 40.4168, -3.7038, 10,
	             expires, CASE WHEN st = 'CANCELLED' THEN 'ORGANIZER' END)
	         RETURNING id INTO m;
	         INSERT INTO match_players (match_request_id, player_id, team, role)
	         VALUES (m, organizer, 'TEAM_A', 'ORGANIZER')
	         RETURNING id INTO entry;
	         INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	             entry_id)
	         VALUES (m, organizer, 'PAYMENT', 5.00, 'EUR',
	             CASE WHEN st = 'PENDING_PAYMENT' THEN 'PENDING' ELSE 'PAID' END, entry);
	         RETURN m;
	     END \$\$;
	     CREATE OR REPLACE FUNCTION sweep_test_join(m uuid, player uuid, team text,
	         checked_in boolean) RETURNS void LANGUAGE sql AS \$\$
	         WITH e AS (INSERT INTO match_players (match_request_id, player_id, team, role,
	                        checked_in_at)
	                    VALUES (m, player, team, 'PLAYER', CASE WHEN checked_in THEN now() END)
	                    RETURNING id)
	         INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	             entry_id)
	         SELECT m, player, 'PAYMENT', 5.00, 'EUR', 'PAID', id FROM e;
	     \$\$;" >/dev/null
}

teardown_file() {
	sql "SET client_min_messages = warning;
	     DROP FUNCTION IF EXISTS sweep_test_match(uuid, uuid, text, date, time, timestamptz);
	     DROP FUNCTION IF EXISTS sweep_test_join(uuid, uuid, text, boolean)" >/dev/null
}

setup() {
	reset_db
	COURT=$(fixture_court "$(fixture_venue owner)")
	ORG=$(fixture_player org INTERMEDIATE 40.42 -3.70)
}

teardown() {
	release_holder
	sql "SET client_min_messages = warning;
	     DROP TRIGGER IF EXISTS sweep_test_fail ON reliability_events;
	     DROP FUNCTION IF EXISTS sweep_test_fail();
	     DROP TRIGGER IF EXISTS sweep_test_session ON match_status_changes;
	     DROP FUNCTION IF EXISTS sweep_test_session();
	     DROP TABLE IF EXISTS sweep_test_sessions" >/dev/null
}

# sessions_noted [fail]: every status change the sweeper writes notes the session (backend
# pid) that wrote it in sweep_test_sessions, and takes 10 ms, so that a run of a few hundred
# holds outlasts the start of a second session; with fail, a session that sees a change
# another session committed fails its batch (the helpers: the first batch is this process's).
sessions_noted() {
	sql "CREATE TABLE sweep_test_sessions (pid integer NOT NULL, match_request_id uuid NOT NULL);
	     GRANT SELECT, INSERT ON sweep_test_sessions TO PUBLIC;
	     CREATE FUNCTION sweep_test_session() RETURNS trigger LANGUAGE plpgsql AS \$\$
	     BEGIN
	         IF '${1:-}' = 'fail' AND EXISTS (SELECT 1 FROM sweep_test_sessions
	                                           WHERE pid <> pg_backend_pid()) THEN
	             RAISE EXCEPTION 'a second session refused by the test';
	         END IF;
	         INSERT INTO sweep_test_sessions VALUES (pg_backend_pid(), NEW.match_request_id);
	         PERFORM pg_sleep(0.01);
	         RETURN NULL;
	     END \$\$;
	     CREATE TRIGGER sweep_test_session AFTER INSERT ON match_status_changes
	         FOR EACH ROW EXECUTE FUNCTION sweep_test_session()" >/dev/null
}

# holds N FIRST_DAY: N expired holds of $ORG, one a day from current_date + FIRST_DAY.
holds() {
	sql "SELECT sweep_test_match('$COURT', '$ORG', 'PENDING_PAYMENT', current_date + $2 + g,
	         '10:00', now() - interval '1 minute') FROM generate_series(0, $1 - 1) g" >/dev/null
}

# release_holder: ends the session a test opened to hold row locks, if any.
release_holder() {
	sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	      WHERE application_name = 'sweep-test-holder'" >/dev/null
}

# match STATUS DAY START [EXPIRES]: a match of $ORG on $COURT; DAY and EXPIRES are SQL
# expressions (e.g. "current_date - 1", "now() - interval '1 minute'"). Prints its id.
match() {
	sql "SELECT sweep_test_match('$COURT', '$ORG', '$1', $2, '$3',
	         ${4:-now() + interval '15 minutes'})"
}

# join MATCH PLAYER_ID TEAM [checked-in]: an active PLAYER who paid 5.00.
join() {
	sql "SELECT sweep_test_join('$1', '$2', '$3', ${4:-false})" >/dev/null
}

# invite MATCH PLAYER_ID [STATUS]: an invitation, PENDING unless told.
invite() {
	sql "INSERT INTO invitations (match_request_id, player_id, status)
	     VALUES ('$1', '$2', '${3:-PENDING}')" >/dev/null
}

# sweep [VAR=VALUE...]: runs the sweeper once; asserts exit 0, a silent stderr and the
# summary line, and sets SWEPT to "expired_holds unfilled completed no_shows
# invitations_expired" of that line.
sweep() {
	run --separate-stderr timeout 60 env "$@" "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ] || { echo "sweep exited $status: $stderr" >&2; return 1; }
	[ -z "$stderr" ] || { echo "sweep wrote to stderr: $stderr" >&2; return 1; }
	[[ $output =~ $SUMMARY_RE ]] || { echo "unexpected summary: $output" >&2; return 1; }
	SWEPT="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]} ${BASH_REMATCH[5]}"
}

# notes TYPE MATCH: recipient ids of TYPE notifications about MATCH, sorted.
notes() {
	sql "SELECT recipient_id FROM notifications
	      WHERE type = '$1' AND payload->>'matchRequestId' = '$2' ORDER BY recipient_id"
}

sorted() {
	printf '%s\n' "$@" | sort
}

@test "the sweeper prints one summary line and exits 0 when there is nothing to do" {
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]
	[ "${#lines[@]}" -eq 1 ]
}

@test "an expired hold is cancelled, its payment cancelled and the organizer told PAYMENT_EXPIRED" {
	m=$(match PENDING_PAYMENT "current_date + 3" 10:00 "now() - interval '1 second'")
	sweep
	[ "$SWEPT" = "1 0 0 0 0" ]
	[ "$(sql "SELECT status, cancel_reason FROM match_requests WHERE id = '$m'")" = "CANCELLED|PAYMENT_EXPIRED" ]
	[ "$(sql "SELECT kind, status, amount FROM payments WHERE match_request_id = '$m'")" = "PAYMENT|CANCELLED|5.00" ]
	[ "$(sql "SELECT recipient_id, type, payload FROM notifications")" = \
		"$ORG|PAYMENT_EXPIRED|{\"matchRequestId\": \"$m\"}" ]
	[ "$(sql "SELECT updated_at > created_at FROM match_requests WHERE id = '$m'")" = t ]

	# a second run finds nothing more to do and tells nobody twice
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments")" = 1 ]
}

@test "a hold whose payment window is still open is left alone" {
	m=$(match PENDING_PAYMENT "current_date + 3" 10:00 "now() + interval '10 minutes'")
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]
	[ "$(sql "SELECT status, cancel_reason IS NULL FROM match_requests WHERE id = '$m'")" = "PENDING_PAYMENT|t" ]
	[ "$(sql "SELECT status FROM payments WHERE match_request_id = '$m'")" = PENDING ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 0 ]
}

@test "an OPEN match at its start is cancelled as NOT_FILLED: every paid player refunded and told, invitations expired" {
	p1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	p2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	gone=$(fixture_player gone INTERMEDIATE 40.42 -3.70)
	guest=$(fixture_player guest INTERMEDIATE 40.42 -3.70)
	m=$(match OPEN "current_date - 1" 10:00)
	join "$m" "$p1" TEAM_A
	join "$m" "$p2" TEAM_B
	# a player who left earlier and was refunded then: neither refunded again nor told
	join "$m" "$gone" TEAM_B
	sql "UPDATE match_players SET left_at = now() - interval '3 days', left_reason = 'LEFT'
	      WHERE player_id = '$gone';
	     INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status,
	         refund_of)
	     SELECT '$m', '$gone', 'REFUND', 5.00, 'EUR', 'REFUNDED', id FROM payments
	      WHERE match_request_id = '$m' AND player_id = '$gone' AND kind = 'PAYMENT'" >/dev/null
	invite "$m" "$guest"
	# a future OPEN match and its invitation stay as they are
	later=$(match OPEN "current_date + 2" 10:00)
	invite "$later" "$guest"

	sweep
	[ "$SWEPT" = "0 1 0 0 1" ]
	[ "$(sql "SELECT status, cancel_reason FROM match_requests WHERE id = '$m'")" = "CANCELLED|NOT_FILLED" ]
	[ "$(sql "SELECT status, cancel_reason IS NULL FROM match_requests WHERE id = '$later'")" = "OPEN|t" ]
	[ "$(sql "SELECT player_id, amount, currency, status FROM payments
	           WHERE match_request_id = '$m' AND kind = 'REFUND' ORDER BY player_id")" = \
		"$(for p in $(sorted "$ORG" "$p1" "$p2" "$gone"); do echo "$p|5.00|EUR|REFUNDED"; done)" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'PAYMENT' AND status = 'PAID'")" = 5 ]
	[ "$(notes MATCH_CANCELLED "$m")" = "$(sorted "$ORG" "$p1" "$p2")" ]
	[ "$(sql "SELECT DISTINCT payload FROM notifications WHERE type = 'MATCH_CANCELLED'")" = \
		"{\"reason\": \"NOT_FILLED\", \"matchRequestId\": \"$m\"}" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 3 ]
	[ "$(sql "SELECT status FROM invitations WHERE match_request_id = '$m'")" = EXPIRED ]
	[ "$(sql "SELECT status FROM invitations WHERE match_request_id = '$later'")" = PENDING ]

	# nothing twice
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 4 ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 3 ]
}

@test "a finished MATCHED match is completed: one no-show per absent player even after three runs, attendance rewarded" {
	present=$(fixture_player present INTERMEDIATE 40.42 -3.70)
	absent=$(fixture_player absent INTERMEDIATE 40.42 -3.70)
	noprofile=$(user_id noprofile)
	left=$(fixture_player left INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET reliability_score = 98 WHERE user_id = '$ORG';
	     UPDATE players SET reliability_score = 80 WHERE user_id = '$present'" >/dev/null
	m=$(match MATCHED "current_date - 1" 10:00)
	sql "UPDATE match_players SET checked_in_at = now() - interval '1 day'
	      WHERE match_request_id = '$m' AND player_id = '$ORG'" >/dev/null
	join "$m" "$present" TEAM_A true
	# an ABSENT withdrawal is not a no-show
	join "$m" "$left" TEAM_B
	sql "UPDATE match_players SET left_at = now() - interval '2 days', left_reason = 'ABSENT'
	      WHERE player_id = '$left'" >/dev/null
	join "$m" "$absent" TEAM_B
	join "$m" "$noprofile" TEAM_B
	# not finished yet: untouched
	running=$(match MATCHED "current_date + 1" 10:00)

	sweep
	[ "$SWEPT" = "0 0 1 2 0" ]
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]

	[ "$(sql "SELECT status, cancel_reason IS NULL FROM match_requests WHERE id = '$m'")" = "COMPLETED|t" ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$running'")" = MATCHED ]
	[ "$(sql "SELECT player_id, kind, delta FROM reliability_events ORDER BY player_id")" = \
		"$(for p in $(sorted "$ORG" "$present" "$absent" "$noprofile"); do
			case $p in "$absent"|"$noprofile") echo "$p|NO_SHOW|-25" ;; *) echo "$p|ATTENDED|5" ;; esac
		done)" ]
	[ "$(sql "SELECT reliability_score, no_show_count, banned_until IS NULL FROM players WHERE user_id = '$absent'")" = "75|1|t" ]
	# a player without a profile gets one that records the no-show
	[ "$(sql "SELECT reliability_score, no_show_count, skill_level IS NULL FROM players WHERE user_id = '$noprofile'")" = "75|1|t" ]
	[ "$(sql "SELECT reliability_score, no_show_count FROM players WHERE user_id = '$ORG'")" = "100|0" ]
	[ "$(sql "SELECT reliability_score, no_show_count FROM players WHERE user_id = '$present'")" = "85|0" ]
	[ "$(sql "SELECT reliability_score, no_show_count FROM players WHERE user_id = '$left'")" = "100|0" ]

	[ "$(notes MATCH_COMPLETED "$m")" = "$(sorted "$ORG" "$present" "$absent" "$noprofile")" ]
	[ "$(notes NO_SHOW "$m")" = "$(sorted "$absent" "$noprofile")" ]
	[ "$(sql "SELECT DISTINCT payload FROM notifications WHERE type = 'NO_SHOW'")" = \
		"{\"matchRequestId\": \"$m\", \"reliabilityScore\": 75}" ]
	[ "$(sql "SELECT DISTINCT payload FROM notifications WHERE type = 'MATCH_COMPLETED'")" = \
		"{\"matchRequestId\": \"$m\"}" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 6 ]
	# no money moves on completion
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 0 ]
}

@test "a finished CONFIRMED match is completed and everyone who checked in gains 5, capped at 100" {
	p=$(fixture_player p INTERMEDIATE 40.42 -3.70)
	sql "UPDATE players SET reliability_score = 97 WHERE user_id = '$p'" >/dev/null
	m=$(match CONFIRMED "current_date - 1" 10:00)
	sql "UPDATE match_players SET checked_in_at = now() - interval '1 day' WHERE match_request_id = '$m'" >/dev/null
	join "$m" "$p" TEAM_B true
	sweep
	[ "$SWEPT" = "0 0 1 0 0" ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$m'")" = COMPLETED ]
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$p'")" = 100 ]
	[ "$(sql "SELECT reliability_score FROM players WHERE user_id = '$ORG'")" = 100 ]
	[ "$(sql "SELECT count(*) FROM reliability_events WHERE kind = 'ATTENDED'")" = 2 ]
	[ "$(notes MATCH_COMPLETED "$m")" = "$(sorted "$ORG" "$p")" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type <> 'MATCH_COMPLETED'")" = 0 ]
}

@test "the third no-show within 90 days bans the player for 30 days; older no-shows do not count" {
	recent=$(fixture_player recent INTERMEDIATE 40.42 -3.70)
	old=$(fixture_player old INTERMEDIATE 40.42 -3.70)
	# two earlier no-shows each: within 90 days for one player, older for the other
	a=$(match COMPLETED "current_date - 20" 10:00)
	b=$(match COMPLETED "current_date - 10" 10:00)
	sql "INSERT INTO reliability_events (player_id, match_request_id, kind, delta, created_at)
	     VALUES ('$recent', '$a', 'NO_SHOW', -25, now() - interval '20 days'),
	            ('$recent', '$b', 'NO_SHOW', -25, now() - interval '10 days'),
	            ('$old', '$a', 'NO_SHOW', -25, now() - interval '120 days'),
	            ('$old', '$b', 'NO_SHOW', -25, now() - interval '100 days');
	     UPDATE players SET reliability_score = 50, no_show_count = 2
	      WHERE user_id IN ('$recent', '$old')" >/dev/null
	m=$(match MATCHED "current_date - 1" 10:00)
	join "$m" "$recent" TEAM_B
	join "$m" "$old" TEAM_B

	sweep
	[ "$SWEPT" = "0 0 1 3 0" ]
	[ "$(sql "SELECT reliability_score, no_show_count FROM players WHERE user_id = '$recent'")" = "25|3" ]
	[ "$(sql "SELECT banned_until BETWEEN now() + interval '30 days' - interval '1 minute'
	                                  AND now() + interval '30 days' + interval '1 minute'
	            FROM players WHERE user_id = '$recent'")" = t ]
	[ "$(sql "SELECT reliability_score, no_show_count, banned_until IS NULL FROM players WHERE user_id = '$old'")" = "25|3|t" ]
	# the organizer did not check in either: a first no-show, no ban
	[ "$(sql "SELECT reliability_score, no_show_count, banned_until IS NULL FROM players WHERE user_id = '$ORG'")" = "75|1|t" ]

	# later runs neither count the no-show again nor move the ban
	ban=$(sql "SELECT banned_until FROM players WHERE user_id = '$recent'")
	sweep
	sweep
	[ "$(sql "SELECT banned_until FROM players WHERE user_id = '$recent'")" = "$ban" ]
	[ "$(sql "SELECT count(*) FROM reliability_events WHERE player_id = '$recent'")" = 3 ]
	[ "$(sql "SELECT no_show_count FROM players WHERE user_id = '$recent'")" = 3 ]
}

@test "pending invitations of requests no longer OPEN expire; answered ones and open requests' stay" {
	p1=$(fixture_player p1 INTERMEDIATE 40.42 -3.70)
	p2=$(fixture_player p2 INTERMEDIATE 40.42 -3.70)
	p3=$(fixture_player p3 INTERMEDIATE 40.42 -3.70)
	full=$(match MATCHED "current_date + 2" 10:00)
	called_off=$(match CANCELLED "current_date + 2" 12:00)
	open=$(match OPEN "current_date + 2" 14:00)
	invite "$full" "$p1"
	invite "$full" "$p2" ACCEPTED
	invite "$full" "$p3" DECLINED
	invite "$called_off" "$p1"
	invite "$open" "$p1"

	sweep
	[ "$SWEPT" = "0 0 0 0 2" ]
	[ "$(sql "SELECT player_id, status FROM invitations WHERE match_request_id = '$full' ORDER BY status")" = \
		"$p2|ACCEPTED
$p3|DECLINED
$p1|EXPIRED" ]
	[ "$(sql "SELECT status FROM invitations WHERE match_request_id = '$called_off'")" = EXPIRED ]
	[ "$(sql "SELECT status FROM invitations WHERE match_request_id = '$open'")" = PENDING ]
	[ "$(sql "SELECT status FROM match_requests ORDER BY status")" = "CANCELLED
MATCHED
OPEN" ]
	sweep
	[ "$SWEPT" = "0 0 0 0 0" ]
}

@test "small batches still sweep everything in one run" {
	holds 7 1
	sql "SELECT sweep_test_match('$COURT', '$ORG', 'MATCHED', current_date - g, '10:00',
	         now() - interval '1 minute') FROM generate_series(1, 5) g" >/dev/null
	sweep SWEEP_BATCH=2
	[ "$SWEPT" = "7 0 5 5 0" ]
	[ "$(sql "SELECT status, count(*) FROM match_requests GROUP BY 1 ORDER BY 1")" = "CANCELLED|7
COMPLETED|5" ]
	# five no-shows of one player in one run: one event each, score floored at 0, banned
	[ "$(sql "SELECT reliability_score, no_show_count, banned_until > now() FROM players WHERE user_id = '$ORG'")" = "0|5|t" ]
}

@test "a failing batch is rolled back whole, earlier batches stay committed, and the sweeper exits 1" {
	expect_log postgres 'ERROR:  reliability events refused by the test'
	sql "CREATE FUNCTION sweep_test_fail() RETURNS trigger LANGUAGE plpgsql AS \$\$
	     BEGIN RAISE EXCEPTION 'reliability events refused by the test'; END \$\$;
	     CREATE TRIGGER sweep_test_fail BEFORE INSERT ON reliability_events
	         FOR EACH ROW EXECUTE FUNCTION sweep_test_fail()" >/dev/null
	hold=$(match PENDING_PAYMENT "current_date + 3" 10:00 "now() - interval '1 minute'")
	finished=$(match MATCHED "current_date - 1" 10:00)

	run --separate-stderr "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == *"completed matches: batch failed"* ]]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$hold'")" = CANCELLED ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$finished'")" = MATCHED ]
	[ "$(sql "SELECT type FROM notifications")" = PAYMENT_EXPIRED ]
}

@test "a request another transaction holds is skipped without waiting and swept by the next run" {
	# release_holder ends the lock holder's session
	expect_log postgres 'FATAL:  terminating connection due to administrator command'
	held=$(match PENDING_PAYMENT "current_date + 3" 10:00 "now() - interval '1 minute'")
	free=$(match PENDING_PAYMENT "current_date + 4" 10:00 "now() - interval '1 minute'")
	PGAPPNAME=sweep-test-holder psql "$PSQL_ADMIN" -X -q \
		-c "BEGIN" -c "SELECT 1 FROM match_requests WHERE id = '$held' FOR UPDATE" \
		-c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
	holder=$!
	deadline=$((SECONDS + 20))
	until [ "$(sql "SELECT count(*) FROM pg_stat_activity
	                WHERE application_name = 'sweep-test-holder' AND query LIKE '%pg_sleep%'")" = 1 ]; do
		[ $SECONDS -lt $deadline ] || { echo "the lock holder did not start" >&2; return 1; }
		sleep 0.05
	done

	sweep
	[ "$SWEPT" = "1 0 0 0 0" ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$held'")" = PENDING_PAYMENT ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$free'")" = CANCELLED ]

	release_holder
	wait "$holder" || true
	sweep
	[ "$SWEPT" = "1 0 0 0 0" ]
	[ "$(sql "SELECT status FROM match_requests WHERE id = '$held'")" = CANCELLED ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PAYMENT_EXPIRED'")" = 2 ]
}

@test "the sweeper exits 1 with a message on stderr when the database is unreachable" {
	run --separate-stderr env DATABASE_URL="host=127.0.0.1 port=$(free_port) dbname=courts user=courts connect_timeout=2" \
		"$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == *"database connect failed"* ]]
	[[ $stderr == *"batch failed"* ]]
}

@test "two sweepers at the same time cancel each of 2000 expired holds exactly once" {
	# one court per day: every hold on its own date, so none overlaps another
	holds 2000 1
	out="$BATS_TEST_TMPDIR"
	SWEEP_BATCH=100 "$COURTS_BUILD/cron/sweep" >"$out/a.out" 2>"$out/a.err" &
	a=$!
	SWEEP_BATCH=100 "$COURTS_BUILD/cron/sweep" >"$out/b.out" 2>"$out/b.err" &
	b=$!
	wait "$a" || { cat "$out/a.err" >&2; false; }
	wait "$b" || { cat "$out/b.err" >&2; false; }
	[ ! -s "$out/a.err" ]
	[ ! -s "$out/b.err" ]
	[[ $(cat "$out/a.out") =~ $SUMMARY_RE ]]
	na=${BASH_REMATCH[1]}
	[[ $(cat "$out/b.out") =~ $SUMMARY_RE ]]
	nb=${BASH_REMATCH[1]}
	[ $((na + nb)) -eq 2000 ]
	[ "$(sql "SELECT status, cancel_reason, count(*) FROM match_requests GROUP BY 1, 2")" = "CANCELLED|PAYMENT_EXPIRED|2000" ]
	[ "$(sql "SELECT status, count(*) FROM payments GROUP BY 1")" = "CANCELLED|2000" ]
	[ "$(sql "SELECT count(*), count(DISTINCT payload->>'matchRequestId') FROM notifications
	           WHERE type = 'PAYMENT_EXPIRED' AND recipient_id = '$ORG'")" = "2000|2000" ]
	[ "$(sql "SELECT count(*) FROM notifications")" = 2000 ]
}

@test "a backlog of expired holds is swept by two sessions side by side, each hold once; SWEEP_SESSIONS=1 keeps one" {
	sessions_noted
	holds 200 1
	sweep SWEEP_BATCH=10
	[ "$SWEPT" = "200 0 0 0 0" ]
	# this process's session and one helper's, each with its share; the first session never
	# ended by the helper's start (it would come back as a third)
	[ "$(sql "SELECT count(DISTINCT pid), count(*), count(DISTINCT match_request_id)
	           FROM sweep_test_sessions")" = "2|200|200" ]
	[ "$(sql "SELECT min(n) >= 10 FROM (SELECT count(*) n FROM sweep_test_sessions GROUP BY pid) s")" = t ]
	[ "$(sql "SELECT status, cancel_reason, count(*) FROM match_requests GROUP BY 1, 2")" = "CANCELLED|PAYMENT_EXPIRED|200" ]
	[ "$(sql "SELECT status, count(*) FROM payments GROUP BY 1")" = "CANCELLED|200" ]
	[ "$(sql "SELECT count(*), count(DISTINCT payload->>'matchRequestId') FROM notifications
	           WHERE type = 'PAYMENT_EXPIRED' AND recipient_id = '$ORG'")" = "200|200" ]
	[ "$(sql "SELECT count(*) FROM match_status_changes WHERE event = 'EXPIRE_HOLD'")" = 200 ]

	sql "TRUNCATE sweep_test_sessions" >/dev/null
	holds 100 201
	sweep SWEEP_BATCH=10 SWEEP_SESSIONS=1
	[ "$SWEPT" = "100 0 0 0 0" ]
	[ "$(sql "SELECT count(DISTINCT pid), count(*) FROM sweep_test_sessions")" = "1|100" ]

	# no backlog (one batch's worth): no helper
	sql "TRUNCATE sweep_test_sessions" >/dev/null
	holds 9 301
	sweep SWEEP_BATCH=10
	[ "$(sql "SELECT count(DISTINCT pid), count(*) FROM sweep_test_sessions")" = "1|9" ]
}

@test "a helper session's failure fails the run on stderr; this process's session sweeps what the helper rolled back" {
	expect_log postgres 'ERROR:  a second session refused by the test'
	sessions_noted fail
	holds 200 1
	run --separate-stderr env SWEEP_BATCH=10 "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ $stderr == *"expired holds: batch failed, rolled back; earlier batches stay committed: P0001 a second session refused by the test"* ]]
	[ "$(sql "SELECT count(DISTINCT pid), count(*) FROM sweep_test_sessions")" = "1|200" ]
	[ "$(sql "SELECT status, count(*) FROM match_requests GROUP BY 1")" = "CANCELLED|200" ]
	[ "$(sql "SELECT count(*) FROM notifications WHERE type = 'PAYMENT_EXPIRED'")" = 200 ]
}

@test "SWEEP_SESSIONS out of 1..8 is refused with a warning and the default used" {
	sessions_noted
	holds 100 1
	run --separate-stderr env SWEEP_BATCH=5 SWEEP_SESSIONS=9 "$COURTS_BUILD/cron/sweep"
	[ "$status" -eq 0 ]
	[[ $output =~ $SUMMARY_RE ]]
	[ "${BASH_REMATCH[1]}" = 100 ]
	[[ $stderr == *"SWEEP_SESSIONS=9 is not a number in 1..8; using 2"* ]]
	[ "$(sql "SELECT count(DISTINCT pid), count(*) FROM sweep_test_sessions")" = "2|100" ]
}

@test "the crontab runs the sweeper and the deliverer every minute, the key refresher every 15 minutes, the reconciliation hourly, a backup nightly" {
	jobs=$(grep -vE '^[[:space:]]*(#|$|[A-Z_]+=)' "$COURTS_ROOT/cron/crontab")
	[ "$(wc -l <<<"$jobs")" -eq 6 ]
	# pgBackRest as PostgreSQL's user: a full backup on Sunday, an incremental one every other night
	grep -qE '^[0-9]+ [0-9]+ \* \* 0 postgres pgbackrest --stanza=courts --type=full backup$' <<<"$jobs"
	grep -qE '^[0-9]+ [0-9]+ \* \* 1-6 postgres pgbackrest --stanza=courts --type=incr backup$' <<<"$jobs"
	line=$(grep '/cron/reconcile' <<<"$jobs")
	[[ $line =~ ^[0-9]+\ \*\ \*\ \*\ \*\ [a-z_][a-z0-9_-]*\ [^\ ]*/build/cron/reconcile\ \|\ logger ]]
	# with PAYMENT_PROVIDER=none, as shipped, it does nothing and succeeds, database or not
	grep -qx 'PAYMENT_PROVIDER=none' "$COURTS_ROOT/cron/crontab"
	PAYMENT_PROVIDER=none DATABASE_URL="host=127.0.0.1 port=1" run --separate-stderr "$COURTS_BUILD/cron/reconcile"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	line=$(grep '/cron/deliver' <<<"$jobs")
	[[ $line =~ ^\*\ \*\ \*\ \*\ \*\ [a-z_][a-z0-9_-]*\ flock\ -n\ [^\ ]+\ [^\ ]*/build/cron/deliver\ \| ]]
	# while NOTIFY_WEBHOOK_URL is empty, as shipped, it does nothing and succeeds, database or not
	grep -qx 'NOTIFY_WEBHOOK_URL=' "$COURTS_ROOT/cron/crontab"
	NOTIFY_WEBHOOK_URL= DATABASE_URL="host=127.0.0.1 port=1" run "$COURTS_BUILD/cron/deliver"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	line=$(grep '/cron/sweep' <<<"$jobs")
	[[ $line =~ ^\*\ \*\ \*\ \*\ \*\ [a-z_][a-z0-9_-]*\ .*/cron/sweep ]]
	line=$(grep '/cron/jwks-refresh' <<<"$jobs")
	[[ $line =~ ^\*/15\ \*\ \*\ \*\ \*\ [a-z_][a-z0-9_-]*\ [^\ ]*/build/cron/jwks-refresh$ ]]
	# while JWT_JWKS_URL is empty, as shipped, it does nothing and succeeds
	grep -qx 'JWT_JWKS_URL=' "$COURTS_ROOT/cron/crontab"
	JWT_JWKS_URL= JWT_JWKS_FILE="$BATS_TEST_TMPDIR/none.json" run "$COURTS_BUILD/cron/jwks-refresh"
	[ "$status" -eq 0 ] && [ -z "$output" ] && [ ! -e "$BATS_TEST_TMPDIR/none.json" ]
}

@test "make sweep runs the sweeper" {
	grep -qE '^sweep:.*\$\(CRON_BIN\)' "$COURTS_ROOT/Makefile"
	grep -qE '^CRON_BIN[[:space:]]*:=.*cron/sweep' "$COURTS_ROOT/Makefile"
}
