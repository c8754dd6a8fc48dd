#!/usr/bin/env bash
# test.sh: `make test`. Runs the C unit tests and each fuzz target over its kept corpus, then
# the bats suite against a real PostgreSQL and a real Apache (tests/setup_suite.bash) once per
# mode in $MODES, the modes side by side (each has its own cluster, server and port), and
# ends with one line "N passed, N failed".
# Arguments, if any, are bats files to run instead of all.
#
# The suite does not depend on the caller's locale, time zone or umask: tests/setup_suite.bash
# pins them. What had to be arranged for this machine is said in one line "# setup: ...".
set -uo pipefail
umask 022
root=$(cd "$(dirname "$0")/.." && pwd)
b=${BUILD:-build}
[[ $b == /* ]] || b=$root/$b
build=$(cd "$b" && pwd) || exit 1
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
courts_path
can "$(web_user)" -x "$build/cgi-bin/health.cgi" ||
	setup_note "programs served from a copy in each test state directory ($(web_user) cannot reach $build)"
setup_say '# '
modes=${MODES:-${MODE:-cgi fastcgi pool}}
# shellcheck disable=SC2086 # one word per mode
mode_ok $modes || exit 2
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# count_tap [LABEL]: reads TAP on stdin, echoes it, adds to pass / fail, and keeps each
# failure (its line and the diagnostics under it, at most 40) in $work/failures, which is
# printed again just before the last line: a failure in the first of three modes is not lost
# when only the end of a long output is kept.
count_tap() {
	local line label=${1:+[$1] } keep=0
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok "*"# skip"*) fail=$((fail + 1)) keep=1 ;;	# a skipped test is a failure
		"ok "*) pass=$((pass + 1)) keep=0 ;;
		"not ok "*) fail=$((fail + 1)) keep=1 ;;
		"# bats exit "*) keep=0 ;;
		"#"*) [ $keep -eq 0 ] || keep=$((keep + 1)) ;;
		*) keep=0 ;;
		esac
		if [ $keep -ge 1 ] && [ $keep -le 41 ]; then
			printf '%s%s\n' "$label" "$line" >>"$work/failures"
		fi
	done
}

# count_run LABEL WHAT WHERE RC FILE: counts FILE, the TAP of a run of WHAT that ended with
# status RC (count_tap LABEL). A run that counted no test, or that ended badly while no test of
# it failed (a unit program that crashed, a test whose process died), is one failure more,
# shown with the end of FILE but its passed tests.
count_run() {
	local label=$1 what=$2 where=$3 rc=$4 file=$5 before=$((pass + fail)) before_fail=$fail why
	count_tap "$label" <"$file"
	if [ $((pass + fail)) -eq "$before" ]; then
		why="$what ran no test$where"
	elif [ "$fail" -eq "$before_fail" ] && [ "$rc" != 0 ]; then
		why="$what ended with status $rc$where, and no test failed"
	else
		return 0
	fi
	count_tap "$label" < <(echo "not ok - $why"; grep -v '^ok ' "$file" | tail -n 20 | sed 's/^/# /')
}

echo "# unit tests"
for t in "$build"/unit/*; do
	[ -x "$t" ] || continue
	"$t" >"$work/unit.out" 2>&1
	rc=$?
	count_run "" "$(basename "$t")" "" $rc "$work/unit.out"
done

# each fuzz target over its kept corpus and a fixed number of mutations (scripts/fuzz.sh)
echo "# fuzz targets, ${FUZZ_RUNS:-2000} runs each"
BUILD=$build "$root/scripts/fuzz.sh" -r "${FUZZ_RUNS:-2000}" >"$work/fuzz.out" 2>&1
count_run "" scripts/fuzz.sh "" $? "$work/fuzz.out"

files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$root"/tests/*.bats)
# Tests tagged needs:root check what only root meets (a checkout only root may enter). A user
# without passwordless sudo cannot run them: they are left out, and this says so.
bats_opts=()
if ! is_root && ! sudo -n true 2>/dev/null && grep -qs 'test_tags=needs:root' "${files[@]}"; then
	bats_opts=(--filter-tags '!needs:root')
	echo "# not run: the tests tagged needs:root ($(grep -h -A1 'test_tags=needs:root' "${files[@]}" |
		grep -c '^@test')): they need root or passwordless sudo; make test as root runs them, as does a user after sudo -v"
fi
pids=()
first=1
ports=20000	# each mode's servers take their ports from a range of their own (free_port)
for mode in $modes; do
	# in the whole suite, a file marked "# Any mode." tests no server (SQL functions, the
	# sweeper, the pool supervisor on its own socket): it runs with the first mode only
	mode_files=()
	for f in "${files[@]}"; do
		if [ $# -gt 0 ] || [ $first = 1 ] || ! grep -qx '# Any mode\.' "$f"; then
			mode_files+=("$f")
		fi
	done
	first=0
	(cd "$root" && MODE=$mode COURTS_BUILD="$build" FREE_PORTS=$ports-$((ports + 3999)) bats --tap "${bats_opts[@]}" "${mode_files[@]}" \
		>"$work/bats-$mode.tap" 2>&1; echo "# bats exit $?" >>"$work/bats-$mode.tap") &
	pids+=($!)
	ports=$((ports + 4000))
done
wait "${pids[@]}"
for mode in $modes; do
	echo "# bats suite, $mode mode"
	tap=$work/bats-$mode.tap
	rc=$(sed -n 's/^# bats exit \([0-9]*\)$/\1/p' "$tap" | tail -n 1)
	count_run "$mode" bats " in $mode mode" "${rc:-unknown}" "$tap"
done
if [ -s "$work/failures" ]; then
	echo "# the failures again:"
	cat "$work/failures"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
