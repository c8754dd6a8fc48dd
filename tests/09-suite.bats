#!/usr/bin/env bats
# The suite itself: every check in it can fail. Bats stops a test at the first command that
# fails, through `set -e`, which does not see two kinds of command:
# - a list joined by &&: `[ a ] && [ b ]` whose first test is false is a list that failed,
#   which `set -e` lets pass unless it is the last command of the test or function;
# - a command negated by !: `! grep -q x file` never stops a test.
# So a check of either kind before the end of its block has to be written otherwise: one test
# per line, or `! cmd || false`.
# Any mode.

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
