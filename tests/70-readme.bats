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
	         WHERE u.subject = 'ben'")" = "MATCH_INVITATION,PLAYER_JOINED,MATCH_FULL,PLAYER_JOINED,PLAYER_LEFT,MATCH_FULL,PLAYER_JOINED,PLAYER_ABSENT,MATCH_FULL,PLAYER_JOINED,MATCH_CANCELLED" ]
	# Eve waited, was offered Carla's place, took it and left the list
	[ "$(sql "SELECT i.kind || ' ' || i.status || ' ' || i.team || ' ' || w.ended_reason
	            FROM invitations i JOIN users u ON u.id = i.player_id
	            JOIN match_waitlist w ON w.player_id = u.id
	           WHERE u.subject = 'eve'")" = "OFFER ACCEPTED TEAM_A OFFERED" ]
	[[ "$output" == *'{"position":1}'* ]]
	[[ "$output" == *'{"status":"MATCHED","waitlistLength":0}'* ]]
	[[ "$output" == *'"status":"OPEN"'* ]]
	# Dan handed his place to Carla, who took it: Dan refunded his share, no penalty
	[ "$(sql "SELECT h.status || ' ' || i.kind || ' ' || i.status || ' ' || h.team
	            FROM match_handovers h JOIN invitations i ON i.id = h.invitation_id
	            JOIN users u ON u.id = h.substitute_id WHERE u.subject = 'carla'")" = \
		"REFILLED HANDOVER ACCEPTED TEAM_B" ]
	[[ "$output" == *'{"status":"MATCHED","availableSlots":0}'* ]]
	[[ "$output" == *'["6.00"]'* ]]
	[ "$(sql "SELECT count(*) FROM reliability_events")" = 0 ]
	# the calendar feed showed the match, then its cancellation
	[[ "$output" == *$'STATUS:TENTATIVE\r\n'*$'STATUS:CANCELLED\r'* ]]
	[ "$(sql "SELECT count(*) FROM calendar_feeds f JOIN users u ON u.id = f.player_id
	          WHERE u.subject = 'ben'")" = 1 ]
	# the series: four weeks booked a week apart, nothing skipped, then all four cancelled
	day=$(TZ=Europe/Madrid date -d '+3 days' +%F)
	[[ "$output" == *"{\"dates\":[\"$day\",\"$(date -u -d "$day + 7 days" +%F)\",\"$(date -u -d "$day + 14 days" +%F)\",\"$(date -u -d "$day + 21 days" +%F)\"],\"skipped\":[]}"* ]]
	[ "$(sql "SELECT count(*) || ':' || bool_and(s.cancelled_at IS NOT NULL)
	            FROM match_series s JOIN users u ON u.id = s.organizer_id WHERE u.subject = 'ana'")" = 1:true ]
	[ "$(sql "SELECT string_agg(m.status || ':' || m.start_time, ',')
	            FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id")" = \
		"CANCELLED:20:00:00,CANCELLED:20:00:00,CANCELLED:20:00:00,CANCELLED:20:00:00" ]
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
