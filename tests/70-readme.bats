#!/usr/bin/env bats
# The README's player journey is run as written, against the suite's server: if the README
# and the service drift apart, this fails.

load test_helper

setup() {
	reset_db
}

@test "the README journey runs end to end and leaves the state it describes" {
	readme_journey "$BASE_URL"
	# what else the story promised, read back from the database
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
