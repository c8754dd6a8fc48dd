#!/usr/bin/env bats
# The suite itself: every check in it can fail, and its runner shows every failure.
# Bats stops a test at the first command that fails, through `set -e`, which does not see two
# kinds of command:
# - a list joined by &&: `[ a ] && [ b ]` whose first test is false is a list that failed,
#   which `set -e` lets pass unless it is the last command of the test or function;
# - a command negated by !: `! grep -q x file` never stops a test.
# So a check of either kind before the end of its block has to be written otherwise: one test
# per line, or `! cmd || false`.
# Any mode.

load test_helper

# unsure FILE...: the lines of FILE... that hold a check of either kind that cannot fail.
unsure() {
	awk '
		function flush() {
			if (pending != "" && !closing) print pending
			pending = ""
		}
		FNR == 1 { pending = ""; stmt = "" }
		# a statement negated by !, with its continuation lines
		stmt != "" || /^[ \t]+! / {
			stmt = stmt $0
			if ($0 ~ /\\$/) next
			if (stmt !~ /\|\|/) { closing = 0; flush(); pending = FILENAME ":" FNR ": " stmt; stmt = ""; next }
			stmt = ""
		}
		/^[ \t]*(#.*)?$/ { next }
		{ closing = ($0 ~ /^[ \t]*}/); flush() }
		# a line of tests joined by &&, nothing after the last one (read without its quoted words)
		{
			bare = $0
			gsub(/"[^"]*"|\047[^\047]*\047/, "", bare)
			if (bare ~ /^[ \t]+\[\[? .*\]\]? && \[\[? .*\]\]?[ \t]*$/) pending = FILENAME ":" FNR ": " $0
		}
		END { closing = 0; flush() }
	' "$@"
}

@test "no check in the suite is one that cannot fail" {
	run unsure "$BATS_TEST_DIRNAME"/*.bats "$BATS_TEST_DIRNAME"/*.bash
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "the scan finds both kinds, and leaves sound checks alone" {
	# (printf: a here-document with <<- would strip the tabs the scan reads)
	printf '%s\n' '@test "sample" {' \
		$'\t[ 1 = 2 ] && [ 3 = 3 ]' \
		$'\t! true' \
		$'\t! grep -q x \\' \
		$'\t\t/dev/null' \
		$'\t[ 1 = 1 ]' \
		$'\t! grep -q x /dev/null || false' \
		$'\t[ a = a ] || [ b = b ]' \
		$'\t[ -n "$x" ] && sep=1' \
		$'\t[ 1 = 1 ] && [ 2 = 2 ]' \
		'}' \
		'f() {' \
		$'\t[ 1 = 1 ] && [ 2 = 2 ]' \
		$'\t# a comment' \
		'}' >"$BATS_TEST_TMPDIR/sample.bats"
	run unsure "$BATS_TEST_TMPDIR/sample.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c . <<<"$output")" = 3 ]
	[[ $output == *"sample.bats:2: "*"[ 1 = 2 ] && [ 3 = 3 ]"* ]]
	[[ $output == *"sample.bats:3: "*"! true"* ]]
	[[ $output == *"sample.bats:5: "*"! grep -q x"* ]]
}

# runner MODES LINE...: make test's runner (scripts/test.sh) in MODES on a bats file of the
# LINEs, from a fresh login's environment; sets status and lines as `run` does, and
# failures_again to the block the runner repeats before its last line (without that line).
runner() {
	local modes=$1 dir=$BATS_TEST_TMPDIR/runner
	shift
	mkdir -p "$dir"
	printf '%s\n' "$@" >"$dir/sample.bats"
	run env -i PATH="$(debian_path)" HOME="$HOME" BUILD="$COURTS_BUILD" FUZZ_RUNS=1 MODES="$modes" \
		"$COURTS_ROOT/scripts/test.sh" "$dir/sample.bats" 3>&-
	failures_again=$(printf '%s\n' "${lines[@]}" | sed -n '/^# the failures again:$/,$p' | sed '$d')
	echo "$failures_again"
}

# Two modes, and a file whose second test fails: the count says so, and the failure, with
# what it printed, is shown again under its mode just before the last line, where a long
# output cut to its end still shows it.
@test "make test repeats every failure, with its mode and diagnostics, just before its last line" {
	runner "cgi pool" '@test "this one passes" { true; }' \
		'@test "this one fails" { echo "what it saw" >&2; false; }'
	[ "$status" -eq 1 ]
	[[ ${lines[-1]} =~ ^[0-9]+\ passed,\ 2\ failed$ ]]
	# the heading, then each failure's line and diagnostics, by mode
	[ "$(sed -n 2p <<<"$failures_again")" = "[cgi] not ok 2 this one fails" ]
	grep -qx '\[cgi\] # what it saw' <<<"$failures_again"
	grep -qx '\[pool\] not ok 2 this one fails' <<<"$failures_again"
	grep -qx '\[pool\] # what it saw' <<<"$failures_again"
	# nothing else: no passing test, no runner line
	[ "$(grep -c . <<<"$failures_again")" = "$((1 + 2 * $(grep -c '^\[cgi\]' <<<"$failures_again")))" ]
	! grep -q 'this one passes\|bats exit' <<<"$failures_again" || false
}

# A test whose process dies is not reported by bats as failed: bats only warns that it ran
# fewer tests than it counted, and ends with status 1. The runner counts that as a failure.
@test "make test counts a test that vanished as a failure, with what bats said" {
	runner pool '@test "this one passes" { true; }' '@test "this one dies" { kill -9 $BASHPID; }'
	[ "$status" -eq 1 ]
	[[ ${lines[-1]} =~ ^[0-9]+\ passed,\ 1\ failed$ ]]
	[ "$(sed -n 2p <<<"$failures_again")" = "[pool] not ok - bats ended with status 1 in pool mode, and no test failed" ]
	grep -qx '\[pool\] # # bats warning: Executed 1 instead of expected 2 tests' <<<"$failures_again"
}
