#!/usr/bin/env bats
# Any mode.
# The service on a highly available database (scripts/ha.sh, docs/operations.md, "Failover"):
# pg_auto_failover's monitor and two nodes on 127.0.0.1, the standby synchronous, the service
# given both nodes in one URL (target_session_attrs=read-write), served in pool mode by an
# Apache of this file's own. Several clients write without pause (owners' venues, and each
# match created, paid, joined, left and cancelled), every write with an Idempotency-Key and
# retried with it while the answer is 503 or none; the primary's node is lost mid-load (its
# pg_autoctl and PostgreSQL killed with SIGKILL). Then: the standby took over with nothing of
# the service restarted, every answer on the way was 2xx or 503 problem+json, every write
# acknowledged is there and each key's work was done once; the lost node rejoins as a standby
# and the pair fails back. Last, a user who is not root sets a pair of their own up and stops it.

load test_helper

# the failover's bound here: pg_auto_failover as scripts/ha.sh tunes it takes about 20 s for a
# lost node; this bound is the test's, not a promise of speed (a busy machine is slower)
FAILOVER_BOUND_S=${FAILOVER_BOUND_S:-90}
CLIENTS=${FAILOVER_CLIENTS:-4}

setup_file() {
	HA=$(mktemp -d "${TMPDIR:-/tmp}/courts-ha.XXXXXX")
	chmod 755 "$HA"
	export HA
	# fd 3 closed: the servers it leaves running would keep bats waiting for it
	"$COURTS_ROOT/scripts/ha.sh" start "$HA/db" >"$HA/start.log" 2>&1 3>&- ||
		{ cat "$HA/start.log" >&2; return 1; }
	HA_URL=$("$COURTS_ROOT/scripts/ha.sh" url "$HA/db")
	# the fixtures' superuser, on whichever node is the primary
	HA_ADMIN=${HA_URL/courts@/postgres@}
	export HA_URL HA_ADMIN
	"$COURTS_ROOT/scripts/migrate.sh" "$HA_URL" >"$HA/migrate.log" 2>&1 ||
		{ cat "$HA/migrate.log" >&2; return 1; }
	DATABASE_URL=$HA_URL "$COURTS_BUILD/cron/sweep" >/dev/null
	# while there is no primary, the programs log each connection that found none, and each
	# query the kill cut off (one line a request answered 503)
	expect_log apache "req=[0-9a-f]+ error: database unavailable 08000: (database connect failed: connection to server at \"127\\.0\\.0\\.1\", port ($("$COURTS_ROOT/scripts/ha.sh" port "$HA/db" node1)|$("$COURTS_ROOT/scripts/ha.sh" port "$HA/db" node2)) failed|FATAL:  terminating connection due to unexpected postmaster exit|server closed the connection unexpectedly|could not receive data from server|no connection to the server)"
	HA_BASE=$(COURTS_MODE=pool extra_apache failover DATABASE_URL="$HA_URL" 3>&-)
	export HA_BASE
}

teardown_file() {
	[ -n "${HA:-}" ] || return 0
	"$COURTS_ROOT/scripts/stack.sh" stop-apache "$COURTS_STATE/extra-failover" 3>&- || true
	"$COURTS_ROOT/scripts/ha.sh" stop "$HA/db" 3>&- || true
	if [ -d "$(user_pair)/db" ]; then
		as_pair_user "$(user_pair)/scripts/ha.sh" stop "$(user_pair)/db" 3>&- || true
	fi
	throwaway_user_remove "$HA"
	if [ -n "${KEEP_STATE:-}" ]; then
		cp "$COURTS_STATE/extra-failover/apache/logs/error.log" "$HA/apache-error.log" || true
		echo "# failover state kept in $HA" >&3
	else
		rm -rf "$HA"
	fi
}

setup() {
	export PSQL_ADMIN=$HA_ADMIN
}

# the last test's pair: a user's who is not root (a throwaway account under root, else the
# caller), in a directory of that user's with a space in its path
user_pair() {
	echo "$HA/home/my pair"
}
pair_user() {
	if [ -f "$HA/made-user" ]; then cat "$HA/made-user"; else id -un; fi
}
# as_pair_user CMD...: CMD as that user, with a fresh login's environment (Debian's PATH)
as_pair_user() {
	as_login "$(pair_user)" "$HA/home" "$@"
}

# write C KIND KEY METHOD PATH TOKEN [BODY]: one write of client C, retried with the same key
# while the answer is 503 or none at all (curl's 20 s timeout), for up to 120 s. Each attempt
# is a line "MS KIND KEY ATTEMPT STATUS TYPE REPLAYED" in $OUT/log-C; each answer other than
# 2xx is kept in $OUT/body-KEY-ATTEMPT. Prints the last answer's body; fails unless it is 2xx.
write() {
	local c=$1 kind=$2 key=$3 method=$4 path=$5 tok=$6 body=${7:-} n=0 end=$((SECONDS + 120))
	local args=(-s -o "$OUT/answer-$c" -D "$OUT/head-$c" --max-time 20 -X "$method"
		-H "Authorization: Bearer $tok" -H "Idempotency-Key: $key")
	[ -z "$body" ] || args+=(-H 'Content-Type: application/json' --data "$body")
	local code type replayed
	while :; do
		n=$((n + 1))
		: >"$OUT/answer-$c"
		: >"$OUT/head-$c"
		code=$(curl "${args[@]}" -w '%{http_code}' "$HA_BASE$path") || code=000
		type=$(tr -d '\r' <"$OUT/head-$c" | sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;]*\).*/\1/p' | tail -n 1)
		replayed=$(tr -d '\r' <"$OUT/head-$c" | sed -n 's/^[Ii]dempotent-[Rr]eplayed: *//p' | tail -n 1)
		echo "$(now_ms) $kind $key $n $code ${type:--} ${replayed:--}" >>"$OUT/log-$c"
		case $code in
		2??)
			cat "$OUT/answer-$c"
			return 0
			;;
		esac
		cp "$OUT/answer-$c" "$OUT/body-$key-$n"
		case $code in
		503 | 000) [ $SECONDS -lt $end ] || return 1 ;;
		*) return 1 ;;
		esac
		sleep 0.3
	done
}

# client C: until $OUT/stop exists, an owner's venue, then a match on C's own court (each at a
# slot of its own, three days ahead or more: a joiner may leave until 48 hours before the
# start) created, paid by its organizer, joined and left by another player, and cancelled;
# what was acknowledged in $OUT/done-C ("venue KEY ID", "match KEY ID", "done KEY ID").
client() {
	local c=$1 i=0 owner org joiner court id key day slot
	owner=$(token "fo-owner-$c" OWNER)
	org=$(token "fo-org-$c")
	joiner=$(token "fo-joiner-$c")
	court=$(cat "$OUT/court-$c")
	while [ ! -e "$OUT/stop" ]; do
		i=$((i + 1))
		key=fo-$c-$i
		id=$(write "$c" venue "$key-venue" POST /api/owner/venues "$owner" \
			"{\"name\":\"$key\",\"street\":\"Calle Sol 2\",\"city\":\"Madrid\",\"country\":\"Spain\",\"latitude\":40.45,\"longitude\":-3.69}" |
			jq -r .id) || return 1
		echo "venue $key $id" >>"$OUT/done-$c"
		day=$(date -u -d "+$((3 + (i - 1) / 9)) days" +%F)
		slot=$(printf '%02d:%02d:00' $((8 + (i - 1) % 9 * 3 / 2)) $(((i - 1) % 9 % 2 * 30)))
		id=$(write "$c" create "$key-create" POST /api/match/requests "$org" \
			"{\"resourceId\":\"$court\",\"bookingDate\":\"$day\",\"startTime\":\"$slot\",\"slotDurationMinutes\":90,\"format\":\"TWO_VS_TWO\",\"skillLevel\":\"INTERMEDIATE\",\"searchLat\":40.42,\"searchLng\":-3.70}" |
			jq -r .id) || return 1
		echo "match $key $id" >>"$OUT/done-$c"
		write "$c" pay "$key-pay" POST "/api/match/requests/$id/confirm-payment" "$org" >/dev/null || return 1
		write "$c" join "$key-join" POST "/api/match/requests/$id/join" "$joiner" '{"team":"TEAM_B"}' >/dev/null || return 1
		write "$c" leave "$key-leave" DELETE "/api/match/requests/$id/leave" "$joiner" >/dev/null || return 1
		write "$c" cancel "$key-cancel" DELETE "/api/match/requests/$id" "$org" >/dev/null || return 1
		echo "done $key $id" >>"$OUT/done-$c"
	done
}

# stopped_clients: what each client's last write was answered, to tell why it stopped
stopped_clients() {
	local f
	for f in "$OUT"/log-*; do
		tail -n 1 "$f" >&2
	done
	for f in "$OUT"/body-*; do
		[ -e "$f" ] && echo "$f: $(head -c 300 "$f")" >&2
	done
	return 0
}

# acknowledged: the number of writes answered 2xx so far
acknowledged() {
	cat "$OUT"/log-* 2>/dev/null | awk '$5 ~ /^2/' | wc -l
}

@test "a lost primary under load: the standby takes over, every acknowledged write is kept, each key's work done once, every other answer 503 problem+json" {
	OUT=$BATS_TEST_TMPDIR
	local venue c pids=() kill_ms first_ms before primary standby
	venue=$(fixture_venue fo-club)
	for c in $(seq 1 "$CLIENTS"); do
		fixture_court "$venue" 90 >"$OUT/court-$c"
		fixture_player "fo-org-$c" INTERMEDIATE 40.42 -3.70 >/dev/null
		fixture_player "fo-joiner-$c" INTERMEDIATE 40.42 -3.70 >/dev/null
	done
	primary=$("$COURTS_ROOT/scripts/ha.sh" primary "$HA/db")
	[ -n "$primary" ]
	standby=node1
	[ "$primary" != node1 ] || standby=node2
	# writes go to the primary and wait for the standby: replication is synchronous
	[ "$(sql "SHOW synchronous_standby_names")" != "" ]
	[ "$(sql "SELECT sync_state FROM pg_stat_replication")" = quorum ]
	for c in $(seq 1 "$CLIENTS"); do
		client "$c" 3>&- &
		pids+=($!)
	done
	# under way: every client has had writes acknowledged
	deadline=$((SECONDS + 60))
	until [ "$(acknowledged)" -ge $((CLIENTS * 12)) ]; do
		[ $SECONDS -lt $deadline ] || { echo "only $(acknowledged) writes acknowledged before the kill" >&2; touch "$OUT/stop"; wait; stopped_clients; return 1; }
		sleep 0.2
	done
	before=$(acknowledged)
	kill_ms=$(now_ms)
	"$COURTS_ROOT/scripts/ha.sh" kill "$HA/db" "$primary"
	# the load goes on until writes have come back and each client wrote more
	deadline=$((SECONDS + FAILOVER_BOUND_S + 60))
	until [ "$(cat "$OUT"/log-* | awk -v k="$kill_ms" '$1 > k + 1000 && $5 ~ /^2/' | wc -l)" -ge $((CLIENTS * 12)) ]; do
		[ $SECONDS -lt $deadline ] || break
		sleep 0.5
	done
	touch "$OUT/stop"
	local failed=0
	for c in "${pids[@]}"; do wait "$c" || failed=1; done
	cat "$OUT"/log-* | sort -n >"$OUT/log"
	# every answer was 2xx, or 503 problem+json (a request in flight when the primary died, or
	# made while there was none); none unanswered within the client's 20 s
	awk '$5 !~ /^2/ && !($5 == 503 && $6 == "application/problem+json")' "$OUT/log" >"$OUT/bad"
	[ ! -s "$OUT/bad" ] || { echo "answers other than 2xx and 503 problem+json:" >&2; head -n 20 "$OUT/bad" >&2; return 1; }
	for f in "$OUT"/body-*; do
		[ -e "$f" ] || continue
		[ "$(jq -r '"\(.status) \(.code)"' "$f")" = "503 DATABASE_UNAVAILABLE" ] ||
			{ echo "$f: $(cat "$f")" >&2; return 1; }
	done
	[ "$failed" = 0 ] || { echo "a client gave up" >&2; stopped_clients; return 1; }
	# writes came back: the first acknowledged after the kill that began after it
	first_ms=$(awk -v k="$kill_ms" '$1 > k && $5 ~ /^2/ && $4 > 1 { print $1; exit }' "$OUT/log")
	[ -n "$first_ms" ] || first_ms=$(awk -v k="$kill_ms" '$1 > k && $5 ~ /^2/ { print $1; exit }' "$OUT/log")
	[ -n "$first_ms" ] || { echo "no write acknowledged after the kill" >&2; return 1; }
	echo "# failover: writes back $(awk -v ms=$((first_ms - kill_ms)) 'BEGIN { printf "%.1f", ms / 1000 }') s after the node was lost; $before writes acknowledged before, $(acknowledged) in all; $(grep -c ' 503 ' "$OUT/log") answers 503" >&3
	[ $((first_ms - kill_ms)) -le $((FAILOVER_BOUND_S * 1000)) ]
	grep -q ' 503 ' "$OUT/log"
	# the standby is the primary now; nothing of the service was restarted
	[ "$("$COURTS_ROOT/scripts/ha.sh" primary "$HA/db")" = "$standby" ]
	# every acknowledged write is there, done once: each venue key one venue, of the id answered
	cat "$OUT"/done-* >"$OUT/done"
	local venues matches completed
	venues=$(awk '$1 == "venue"' "$OUT/done" | wc -l)
	matches=$(awk '$1 == "match"' "$OUT/done" | wc -l)
	completed=$(awk '$1 == "done"' "$OUT/done" | wc -l)
	[ "$completed" -ge $((CLIENTS * 2)) ]
	[ "$(sql "SELECT count(*) FROM venues WHERE name LIKE 'fo-%'")" = "$venues" ]
	[ "$(sql "SELECT count(DISTINCT name) FROM venues WHERE name LIKE 'fo-%'")" = "$venues" ]
	awk '$1 == "venue" { print $2 "\t" $3 }' "$OUT/done" | sort >"$OUT/venues-acked"
	sql "SELECT name || E'\t' || id FROM venues WHERE name LIKE 'fo-%' ORDER BY 1" | sort >"$OUT/venues-db"
	diff "$OUT/venues-acked" "$OUT/venues-db"
	# each match created once, at its slot; those whose steps all came back cancelled by their
	# organizer with the joiner's place left, the organizer's share refunded once
	[ "$(sql "SELECT count(*) FROM match_requests")" = "$matches" ]
	awk '$1 == "match" { print $3 }' "$OUT/done" | sort >"$OUT/matches-acked"
	sql "SELECT id FROM match_requests ORDER BY 1" | sort >"$OUT/matches-db"
	diff "$OUT/matches-acked" "$OUT/matches-db"
	awk '$1 == "done" { print $3 }' "$OUT/done" | sort >"$OUT/completed"
	sql "SELECT concat_ws(' ', m.id, m.status, m.cancel_reason,
	            (SELECT count(*) FROM match_players p WHERE p.match_request_id = m.id),
	            (SELECT count(*) FROM match_players p WHERE p.match_request_id = m.id
	                AND p.left_reason = 'LEFT'))
	       FROM match_requests m ORDER BY 1" >"$OUT/match-states"
	while read -r id; do
		grep -qx "$id CANCELLED ORGANIZER 2 1" "$OUT/match-states" ||
			{ echo "match $id: $(grep "^$id " "$OUT/match-states")" >&2; return 1; }
	done <"$OUT/completed"
	# each player paid each match once, and was refunded at most once
	[ "$(sql "SELECT count(*) FROM (SELECT 1 FROM payments GROUP BY match_request_id, player_id, kind
	            HAVING count(*) > 1) x")" = 0 ]
	# no slot held twice, no match over its places
	[ "$(sql "SELECT count(*) FROM (SELECT 1 FROM match_requests WHERE status NOT IN ('CANCELLED', 'EXPIRED')
	            GROUP BY resource_id, booking_date, start_time HAVING count(*) > 1) x")" = 0 ]
	[ "$(sql "SELECT count(*) FROM match_requests m WHERE (SELECT count(*) FROM match_players p
	            WHERE p.match_request_id = m.id AND p.left_at IS NULL) > 2 * m.team_size")" = 0 ]
	# a retry whose first answer was lost replayed the stored answer (if there was such a retry)
	if awk '$4 > 1 && $5 ~ /^2/' "$OUT/log" | grep -q ' true$'; then
		echo "# $(awk '$4 > 1 && $5 ~ /^2/ && $7 == "true"' "$OUT/log" | wc -l) retries answered from a committed write's stored answer" >&3
	fi
}

@test "the lost node rejoins as a standby, replication is synchronous again, and the pair fails back" {
	local primary lost
	primary=$("$COURTS_ROOT/scripts/ha.sh" primary "$HA/db")
	lost=node1
	[ "$primary" != node1 ] || lost=node2
	"$COURTS_ROOT/scripts/ha.sh" node "$HA/db" "$lost" 3>&-
	"$COURTS_ROOT/scripts/ha.sh" wait "$HA/db" "$lost" secondary 180
	"$COURTS_ROOT/scripts/ha.sh" wait "$HA/db" "$primary" primary 60
	[ "$(sql "SELECT sync_state FROM pg_stat_replication")" = quorum ]
	# a write through the service now, then the switch back
	req POST /api/owner/venues -b "$HA_BASE" -t "$(token fo-back OWNER)" -H 'Idempotency-Key: fo-back-1' \
		-d '{"name":"fo-back-1","street":"Calle Sol 2","city":"Madrid","country":"Spain","latitude":40.45,"longitude":-3.69}'
	expect 201
	"$COURTS_ROOT/scripts/ha.sh" switchover "$HA/db"
	"$COURTS_ROOT/scripts/ha.sh" wait "$HA/db" "$lost" primary 120
	"$COURTS_ROOT/scripts/ha.sh" wait "$HA/db" "$primary" secondary 120
	[ "$("$COURTS_ROOT/scripts/ha.sh" primary "$HA/db")" = "$lost" ]
	# the service writes to it, without a restart; the write before the switch is on it
	deadline=$((SECONDS + 30))
	until req POST /api/owner/venues -b "$HA_BASE" -t "$(token fo-back OWNER)" -H 'Idempotency-Key: fo-back-2' \
		-d '{"name":"fo-back-2","street":"Calle Sol 2","city":"Madrid","country":"Spain","latitude":40.45,"longitude":-3.69}' &&
		[ "$HTTP_STATUS" = 201 ]; do
		[ "$HTTP_STATUS" = 503 ] && [ $SECONDS -lt $deadline ] || { echo "after the switch: $HTTP_STATUS $HTTP_BODY" >&2; return 1; }
		sleep 0.5
	done
	[ "$(sql "SELECT count(*) FROM venues WHERE name IN ('fo-back-1', 'fo-back-2')")" = 2 ]
	[ "$(sql "SELECT inet_server_port()")" = "$("$COURTS_ROOT/scripts/ha.sh" port "$HA/db" "$lost")" ]
}

@test "a user who is not root sets a pair up and stops it, from a directory with a space" {
	local who url deadline pair
	who=$(throwaway_user courts-ha "$HA/home" "$HA")
	pair=$(user_pair)
	mkdir -p "$pair"
	cp -R "$COURTS_ROOT/scripts" "$pair/"
	[ "$(id -u)" -ne 0 ] || chown -R "$who:" "$HA/home"
	run as_pair_user "$pair/scripts/ha.sh" start "$pair/db" 3>&-
	echo "$output" | tail -n 20
	[ "$status" -eq 0 ]
	url=${lines[-1]}
	[[ $url == postgresql://courts@127.0.0.1:*,127.0.0.1:*/courts\?target_session_attrs=read-write\&connect_timeout=2 ]]
	# the monitor and both nodes are that user's (pg_autoctl and PostgreSQL)
	[ "$(pgrep -u "$who" -x pg_autoctl | wc -l)" -ge 3 ]
	[ "$(pgrep -u "$who" -x postgres | wc -l)" -ge 3 ]
	# the URL finds the primary, which the standby follows synchronously
	[ "$(psql "$url" -X -tAc "SELECT pg_is_in_recovery()")" = f ]
	deadline=$((SECONDS + 60))
	until [ "$(psql "${url/courts@/postgres@}" -X -tAc "SELECT sync_state FROM pg_stat_replication")" = quorum ]; do
		[ $SECONDS -lt $deadline ] || { echo "the standby is not synchronous" >&2; return 1; }
		sleep 0.5
	done
	run as_pair_user "$pair/scripts/ha.sh" stop "$pair/db" 3>&-
	[ "$status" -eq 0 ]
	# nothing of it is left
	deadline=$((SECONDS + 10))
	while pgrep -u "$who" -x 'pg_autoctl|postgres' >/dev/null; do
		[ $SECONDS -lt $deadline ] || { pgrep -a -u "$who" >&2; return 1; }
		sleep 0.2
	done
}
