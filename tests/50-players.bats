#!/usr/bin/env bats
# The caller's player profile (/api/players/me) and notifications (/api/notifications).

load test_helper

setup() {
	reset_db
	# fresh subjects per test: FastCGI workers keep (iss, sub) -> id across requests
	ANA=ana-$BATS_TEST_NUMBER-$RANDOM
	BEA=bea-$BATS_TEST_NUMBER-$RANDOM
	TOKEN=$(token "$ANA")
}

# The profile of SUB as the database holds it, one line.
profile_row() {
	sql "SELECT concat_ws('|', display_name, skill_level, home_latitude, home_longitude,
	         match_notifications, reliability_score, no_show_count, banned_until)
	     FROM players WHERE user_id = '$(user_id "$1")'"
}

@test "a new player's profile is created with the defaults on first GET" {
	req GET /api/players/me -t "$TOKEN"
	expect 200
	[ "$(jqr .playerId)" = "$(user_id "$ANA")" ]
	[ "$(jqr .displayName)" = null ]
	[ "$(jqr .skillLevel)" = null ]
	[ "$(jqr .homeLatitude)" = null ]
	[ "$(jqr .homeLongitude)" = null ]
	[ "$(jqr .matchNotifications)" = true ]
	[ "$(jqr .reliabilityScore)" = 100 ]
	[ "$(jqr .noShowCount)" = 0 ]
	[ "$(jqr .bannedUntil)" = null ]
	[[ "$(jqr .createdAt)" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z$ ]]
	[ "$(jqr .updatedAt)" = "$(jqr .createdAt)" ]
	# without a level, the rating starts at 1500 / 350 and no level is effective
	[ "$(jqr -c '[.rating, .ratingDeviation, .ratedMatches, .effectiveSkillLevel]')" = '[1500,350,0,null]' ]
	[ "$(jqr 'keys | length')" = 15 ]
	[ "$(profile_row "$ANA")" = "t|100|0" ]
	created=$(jqr .createdAt)

	req GET /api/players/me -t "$TOKEN"
	expect 200
	[ "$(jqr .createdAt)" = "$created" ]
	[ "$(sql "SELECT count(*) FROM players")" = 1 ]
}

@test "an existing profile is shown as stored, service fields included" {
	id=$(fixture_player "$ANA" ADVANCED 40.5 -3.6)
	sql "UPDATE players SET reliability_score = 75, no_show_count = 1,
	         banned_until = '2031-02-03 04:05:06.789+00' WHERE user_id = '$id'"
	req GET /api/players/me -t "$TOKEN"
	expect 200
	[ "$(jqr .playerId)" = "$id" ]
	[ "$(jqr .displayName)" = "$ANA" ]
	[ "$(jqr .skillLevel)" = ADVANCED ]
	[ "$(jqr .homeLatitude)" = 40.5 ]
	[ "$(jqr .homeLongitude)" = -3.6 ]
	[ "$(jqr .reliabilityScore)" = 75 ]
	[ "$(jqr .noShowCount)" = 1 ]
	[ "$(jqr .bannedUntil)" = 2031-02-03T04:05:06.789Z ]
}

@test "PUT sets every editable field and answers the profile" {
	req PUT /api/players/me -t "$TOKEN" -d '{"displayName": "Ana G", "skillLevel": "INTERMEDIATE",
		"homeLatitude": 40.42, "homeLongitude": -3.71, "matchNotifications": false}'
	expect 200
	[ "$(jqr .playerId)" = "$(user_id "$ANA")" ]
	[ "$(jqr .displayName)" = "Ana G" ]
	[ "$(jqr .skillLevel)" = INTERMEDIATE ]
	[ "$(jqr .homeLatitude)" = 40.42 ]
	[ "$(jqr .homeLongitude)" = -3.71 ]
	[ "$(jqr .matchNotifications)" = false ]
	[ "$(jqr .reliabilityScore)" = 100 ]
	[ "$(jqr .noShowCount)" = 0 ]
	[ "$(jqr .bannedUntil)" = null ]
	[ "$(profile_row "$ANA")" = "Ana G|INTERMEDIATE|40.42|-3.71|f|100|0" ]
}

@test "PUT replaces the profile: absent fields become null and notifications default to on" {
	fixture_player "$ANA" ADVANCED 40.5 -3.6 >/dev/null
	sql "UPDATE players SET match_notifications = false"
	before=$(sql "SELECT updated_at FROM players")
	req PUT /api/players/me -t "$TOKEN" -d '{}'
	expect 200
	[ "$(jqr .displayName)" = null ]
	[ "$(jqr .skillLevel)" = null ]
	[ "$(jqr .homeLatitude)" = null ]
	[ "$(jqr .homeLongitude)" = null ]
	[ "$(jqr .matchNotifications)" = true ]
	[ "$(profile_row "$ANA")" = "t|100|0" ]
	[ "$(sql "SELECT updated_at > '$before' FROM players")" = t ]
}

@test "PUT accepts explicit nulls for the optional fields" {
	fixture_player "$ANA" ADVANCED 40.5 -3.6 >/dev/null
	req PUT /api/players/me -t "$TOKEN" -d '{"displayName": null, "skillLevel": null,
		"homeLatitude": null, "homeLongitude": null, "matchNotifications": null}'
	expect 200
	[ "$(jqr .displayName)" = null ]
	[ "$(jqr .skillLevel)" = null ]
	[ "$(jqr .homeLatitude)" = null ]
	[ "$(jqr .matchNotifications)" = true ]
	[ "$(profile_row "$ANA")" = "t|100|0" ]
}

@test "PUT never applies the read-only fields sent in the body" {
	id=$(fixture_player "$ANA" BEGINNER 40.5 -3.6)
	sql "UPDATE players SET reliability_score = 60, no_show_count = 2 WHERE user_id = '$id'"
	req PUT /api/players/me -t "$TOKEN" -d '{"skillLevel": "BEGINNER", "reliabilityScore": 100,
		"noShowCount": 0, "bannedUntil": "2020-01-01T00:00:00Z", "playerId": "00000000-0000-0000-0000-000000000000",
		"createdAt": "2000-01-01T00:00:00Z"}'
	expect 200
	[ "$(jqr .playerId)" = "$id" ]
	[ "$(jqr .reliabilityScore)" = 60 ]
	[ "$(jqr .noShowCount)" = 2 ]
	[ "$(jqr .bannedUntil)" = null ]
	[ "$(jqr '.createdAt | startswith("2000")')" = false ]
	[ "$(profile_row "$ANA")" = "BEGINNER|t|60|2" ]
}

@test "PUT creates the profile of a player who never had one" {
	req PUT /api/players/me -t "$TOKEN" -d '{"skillLevel": "PROFESSIONAL"}'
	expect 200
	[ "$(jqr .skillLevel)" = PROFESSIONAL ]
	[ "$(jqr .reliabilityScore)" = 100 ]
	[ "$(profile_row "$ANA")" = "PROFESSIONAL|t|100|0" ]
}

@test "a display name of 100 characters is accepted, counted in characters not bytes" {
	name=$(printf 'ñ%.0s' $(seq 100))
	req PUT /api/players/me -t "$TOKEN" -d "{\"displayName\": \"$name\"}"
	expect 200
	[ "$(jqr .displayName)" = "$name" ]
	req PUT /api/players/me -t "$TOKEN" -d "{\"displayName\": \"${name}x\"}"
	expect_problem 400 VALIDATION_FAILED displayName
	[ "$(sql "SELECT length(display_name) FROM players")" = 100 ]
}

@test "PUT rejects wrong fields, naming each, and changes nothing" {
	fixture_player "$ANA" ADVANCED 40.5 -3.6 >/dev/null
	before=$(profile_row "$ANA")
	req PUT /api/players/me -t "$TOKEN" -d '{"displayName": "  ", "skillLevel": "EXPERT",
		"homeLatitude": 91, "homeLongitude": -181, "matchNotifications": "yes"}'
	expect_problem 400 VALIDATION_FAILED displayName skillLevel homeLatitude homeLongitude matchNotifications
	[ "$(jqr '.errors | length')" = 5 ]
	req PUT /api/players/me -t "$TOKEN" -d '{"displayName": 7, "skillLevel": "ANY"}'
	expect_problem 400 VALIDATION_FAILED displayName skillLevel
	[ "$(profile_row "$ANA")" = "$before" ]
}

@test "a home needs both coordinates or neither" {
	req PUT /api/players/me -t "$TOKEN" -d '{"homeLatitude": 40.4}'
	expect_problem 400 VALIDATION_FAILED homeLongitude
	[ "$(jqr '.errors | length')" = 1 ]
	req PUT /api/players/me -t "$TOKEN" -d '{"homeLatitude": null, "homeLongitude": -3.7}'
	expect_problem 400 VALIDATION_FAILED homeLatitude
	[ "$(jqr '.errors | length')" = 1 ]
	[ "$(sql "SELECT count(*) FROM players")" = 0 ]
}

@test "the profile needs a token" {
	req GET /api/players/me
	expect_problem 401 UNAUTHORIZED
	req PUT /api/players/me -d '{}'
	expect_problem 401 UNAUTHORIZED
	[ "$(sql "SELECT count(*) FROM players")" = 0 ]
}

# notify SUB TYPE AGE: a notification for SUB created AGE ago; prints its id.
notify() {
	sql "INSERT INTO notifications (recipient_id, type, payload, created_at)
	     VALUES ('$(user_id "$1")', '$2', '{\"matchRequestId\": \"0b8a3c2e-3f35-4f43-9f27-6e0f3c7a1d11\"}',
	         now() - interval '$3') RETURNING id"
}

@test "notifications are listed newest first with their payload, only the caller's" {
	old=$(notify "$ANA" MATCH_INVITATION '3 hours')
	new=$(notify "$ANA" MATCH_FULL '1 minute')
	mid=$(notify "$ANA" PLAYER_JOINED '1 hour')
	notify "$BEA" MATCH_CANCELLED '1 second' >/dev/null
	sql "UPDATE notifications SET read_at = '2030-05-06 07:08:09+00' WHERE id = '$mid'"
	req GET /api/notifications -t "$TOKEN"
	expect 200
	[ "$(jqr 'length')" = 3 ]
	[ "$(jqr -c '[.[].id]')" = "[\"$new\",\"$mid\",\"$old\"]" ]
	[ "$(jqr -c '[.[].type]')" = '["MATCH_FULL","PLAYER_JOINED","MATCH_INVITATION"]' ]
	[ "$(jqr -c '.[0] | keys')" = '["createdAt","id","payload","readAt","type"]' ]
	[ "$(jqr -c '.[0].payload')" = '{"matchRequestId":"0b8a3c2e-3f35-4f43-9f27-6e0f3c7a1d11"}' ]
	[ "$(jqr '.[0].readAt')" = null ]
	[ "$(jqr '.[1].readAt')" = 2030-05-06T07:08:09.000Z ]
	[ "$(jqr '.[0].createdAt')" = "$(sql "SELECT api_ts(created_at) FROM notifications WHERE id = '$new'")" ]
}

@test "a player without notifications gets an empty list" {
	req GET /api/notifications -t "$TOKEN"
	expect 200
	[ "$HTTP_BODY" = '[]' ]
}

@test "the notification list is paged by 100, newest first, and limit takes the newest" {
	ana=$(user_id "$ANA")
	sql "INSERT INTO notifications (recipient_id, type, payload, created_at)
	     SELECT '$ana', 'PLAYER_JOINED', jsonb_build_object('matchRequestId', gen_random_uuid(), 'n', g),
	            now() - make_interval(mins => g)
	       FROM generate_series(1, 105) g"
	req GET /api/notifications -t "$TOKEN"
	expect 200
	[ "$(jqr 'length')" = 100 ]
	[ "$(jqr '.[0].payload.n')" = 1 ]
	[ "$(jqr '.[99].payload.n')" = 100 ]
	next=$(header Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
	[[ $next == /api/notifications\?limit=100\&cursor=* ]]
	req GET "$next" -t "$TOKEN"
	expect 200
	[ "$(jqr -c '[.[].payload.n]')" = '[101,102,103,104,105]' ]
	[ -z "$(header Link)" ]
	req GET '/api/notifications?limit=2' -t "$TOKEN"
	expect 200
	[ "$(jqr -c '[.[].payload.n]')" = '[1,2]' ]
}

@test "a limit outside 1..500 is a validation error" {
	for l in 0 501 -1 abc 1.5; do
		req GET "/api/notifications?limit=$l" -t "$TOKEN"
		expect_problem 400 VALIDATION_FAILED limit
	done
}

@test "marking a notification read sets read_at once" {
	id=$(notify "$ANA" MATCH_FULL '1 minute')
	req POST "/api/notifications/$id/read" -t "$TOKEN"
	expect 204 -
	first=$(sql "SELECT read_at FROM notifications WHERE id = '$id'")
	[ -n "$first" ]
	[ "$(sql "SELECT read_at <= now() AND read_at > now() - interval '1 minute' FROM notifications WHERE id = '$id'")" = t ]
	req POST "/api/notifications/$id/read" -t "$TOKEN"
	expect 204 -
	[ "$(sql "SELECT read_at FROM notifications WHERE id = '$id'")" = "$first" ]
	req GET /api/notifications -t "$TOKEN"
	[ "$(jqr '.[0].readAt')" != null ]
}

@test "another player's notification or an unknown id is not found" {
	theirs=$(notify "$BEA" MATCH_FULL '1 minute')
	req POST "/api/notifications/$theirs/read" -t "$TOKEN"
	expect_problem 404 NOT_FOUND
	[ "$(sql "SELECT read_at IS NULL FROM notifications WHERE id = '$theirs'")" = t ]
	req POST /api/notifications/5d0c5a9e-2f4e-4a59-8a3e-0c1b2d3e4f50/read -t "$TOKEN"
	expect_problem 404 NOT_FOUND
	req POST /api/notifications/not-a-uuid/read -t "$TOKEN"
	expect_problem 400 VALIDATION_FAILED id
}

@test "notifications need a token" {
	req GET /api/notifications
	expect_problem 401 UNAUTHORIZED
}
