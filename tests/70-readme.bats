#!/usr/bin/env bats
# The README's player journey is run as written, against the suite's server: if the README
# and the service drift apart, this fails.

load test_helper

setup() {
	reset_db
}

# The shell block under "## A player's whole journey", with API pointed at this suite. It runs
# from inside the checkout, as the README says, with the real `make -s token`, which signs with
# the suite's key (JWT_PRIVATE_KEY_FILE, exported by the suite's env file).
journey_script() {
	awk '/^## A player.s whole journey/ { inside = 1 }
	     inside && /^```sh$/ { code = 1; next }
	     code && /^```$/ { exit }
	     code { print }' "$COURTS_ROOT/README.md"
}

# make_build: the suite's build directory as make's BUILD, relative to the checkout when it is
# inside (make cannot take a path with a space as a target).
make_build() {
	local rel=${COURTS_BUILD#"$COURTS_ROOT"/}
	echo "${rel:-build}"
}

@test "the README journey runs end to end and leaves the state it describes" {
	script=$(journey_script)
	[ -n "$script" ]
	[[ "$script" == *'API=http://127.0.0.1:8080'* ]]
	script=${script//API=http:\/\/127.0.0.1:8080/API=$BASE_URL}
	[[ "$script" == *'$(make -s token SUB=ana)'* ]]
	cd "$COURTS_ROOT"
	run env BUILD="$(make_build)" bash -c "set -euo pipefail
		$script"
	echo "$output"
	[ "$status" -eq 0 ]
	# what the story promised, read back from the database
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED ORGANIZER" ]
	[ "$(sql "SELECT count(*) FROM match_players WHERE left_reason = 'LEFT'")" = 1 ]
	[ "$(sql "SELECT count(*) FROM payments WHERE kind = 'REFUND'")" = 3 ]
	[ "$(sql "SELECT string_agg(n.type, ',' ORDER BY n.created_at, n.type)
	          FROM notifications n JOIN users u ON u.id = n.recipient_id
	         WHERE u.subject = 'ben'")" = "MATCH_INVITATION,PLAYER_JOINED,PLAYER_LEFT,MATCH_CANCELLED" ]
	[[ "$output" == *'"status":"OPEN"'* ]]
	# the calendar feed showed the match, then its cancellation
	[[ "$output" == *$'STATUS:TENTATIVE\r\n'*$'STATUS:CANCELLED\r'* ]]
	[ "$(sql "SELECT count(*) FROM calendar_feeds f JOIN users u ON u.id = f.player_id
	          WHERE u.subject = 'ben'")" = 1 ]
}

@test "the README's token without roles acts as a player: owner routes are 403 to it" {
	cd "$COURTS_ROOT"
	ana=$(BUILD="$(make_build)" make -s token SUB=ana)
	req GET /api/owner/venues -t "$ana"
	expect_problem 403 FORBIDDEN
	req GET /api/players/me -t "$ana"
	expect 200
	owner=$(BUILD="$(make_build)" make -s token SUB=olivia ROLES=OWNER)
	req GET /api/owner/venues -t "$owner"
	expect 200
}
