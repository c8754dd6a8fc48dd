#!/usr/bin/env bats
# Runs last: whatever the suite did, the servers' logs show no crash, no sanitizer report and
# no handler that forgot to answer.

load test_helper

@test "Apache's error log shows no crashed program, sanitizer report or unanswered request" {
	log="$COURTS_STATE/apache/logs/error.log"
	[ -f "$log" ]
	run grep -iE 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation fault|exit signal|gave no answer|end of script output before headers' "$log"
	if [ "$status" -eq 0 ]; then
		echo "$output" >&2
		return 1
	fi
}

@test "PostgreSQL's log shows no server crash" {
	run grep -E 'PANIC|terminated by signal|server process .* was terminated' "$COURTS_STATE/log/postgresql.log"
	[ "$status" -ne 0 ]
}
