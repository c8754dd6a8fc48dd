#!/usr/bin/env bats
# Runs last: whatever the suite did, the servers' logs hold no line that a test did not cause
# on purpose. In Apache's error logs (the suite's and every extra server's): no line at level
# error or above, no program line at level error, no access denial (AH01630), no crash,
# sanitizer report or unanswered request. In PostgreSQL's log: no ERROR, FATAL or PANIC.
# A test that causes such lines names them with expect_log (test_helper.bash); they are the
# only ones let through.

load test_helper

# unexpected apache|postgres FILE...: the lines of FILEs that count as failures, less those
# matching a pattern some test recorded with expect_log.
unexpected() {
	local kind=$1 expected="$COURTS_STATE/expected-$1.log" bad
	shift
	if [ "$kind" = apache ]; then
		bad='^\[[^]]*\] \[[a-z_0-9]+:(error|crit|alert|emerg)\]|AH01630|AddressSanitizer|LeakSanitizer'
		bad+='|runtime error:|Segmentation fault|exit signal|gave no answer'
		bad+='|end of script output before headers|^[a-z-]+\[[0-9]+\] req=[^ ]+ (error|fatal):'
	else
		bad='(ERROR|FATAL|PANIC):|terminated by signal|server process .* was terminated'
	fi
	grep -ihE "$bad" "$@" | if [ -s "$expected" ]; then grep -vEf "$expected"; else cat; fi
}

@test "Apache's error logs hold no error, denial, crash or unanswered request that no test caused" {
	# the extra servers some tests start (none when only a few files run)
	shopt -s nullglob
	logs=("$COURTS_STATE"/apache/logs/error.log "$COURTS_STATE"/extra-*/apache/logs/error.log)
	shopt -u nullglob
	[ -f "${logs[0]}" ]
	run unexpected apache "${logs[@]}"
	[ -z "$output" ] || { echo "$output" | head -n 40 >&2; return 1; }
}

@test "PostgreSQL's log holds no ERROR, FATAL or crash that no test caused" {
	[ -f "$COURTS_STATE/log/postgresql.log" ]
	run unexpected postgres "$COURTS_STATE/log/postgresql.log"
	[ -z "$output" ] || { echo "$output" | head -n 40 >&2; return 1; }
}
