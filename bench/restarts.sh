#!/usr/bin/env bash
# restarts.sh: graceful restarts under load, counted. Starts the stack in MODE (default cgi)
# under bench/work/restarts, keeps CLIENTS (default 4) clients looping over a read, the
# health check and a write, makes ROUNDS (default 20) `apache2 -k graceful` SPACING (default
# 65) seconds apart, and prints for each round the requests answered and those that were not
# 200, then the error log's lines about them. A spacing over a minute is the case of a server
# that has been up a while, which is what most restarts of a production server are (docs/operations.md,
# "Operations", says what mod_cgid does then). Takes ROUNDS x SPACING seconds.
#
# Everything listens on 127.0.0.1; everything started here is stopped by PID when the script
# ends, whether it succeeds, fails or is interrupted.
set -euo pipefail
unset EXTERNAL_DATABASE_URL JWT_PUBLIC_KEY_FILE
# four clients write far more than a person would: the write budget is not what is measured
export WRITE_BUDGET_PER_MINUTE=1000000 WRITE_BUDGET_BURST=1000000
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
courts_path
build=${BUILD:-build}
[[ $build == /* ]] || build=$root/$build
build=$(cd "$build" && pwd)
mode=${MODE:-cgi} clients=${CLIENTS:-4} rounds=${ROUNDS:-20} spacing=${SPACING:-65}
work=$root/bench/work/restarts
state=$work/state

pids=()
cleanup() {
	touch "$work/stop"
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" 2>/dev/null || true
	"$root/scripts/stack.sh" stop "$state" >/dev/null 2>&1 || true
}

# client N: requests in a loop until $work/stop exists; one "STATUS PATH" line per request
client() {
	local out="$work/codes-$1" tok path code
	tok=$("$build/tools/mint-token" -k "$JWT_PRIVATE_KEY_FILE" -s "restart-$1" \
		-i https://auth.courts.local/ -a courts-api)
	while [ ! -e "$work/stop" ]; do
		for path in /api/venues /actuator/health /api/players/me; do
			if [ "$path" = /api/players/me ]; then
				code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 70 -X PUT \
					-H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
					--data '{"displayName":"Restart"}' "$BASE_URL$path") || true
			else
				code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 70 "$BASE_URL$path") || true
			fi
			echo "$code $path" >>"$out"
		done
	done
}

answers() { cat "$work"/codes-* 2>/dev/null | wc -l; }
failed() { cat "$work"/codes-* 2>/dev/null | grep -vc '^200 ' || true; }

# what an interrupted run left running, by its pid files
"$root/scripts/stack.sh" stop "$state" >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work"
chmod 755 "$work"
trap cleanup EXIT
trap 'exit 130' INT TERM
port=$(free_port)
echo "restarts: $mode mode on 127.0.0.1:$port, $clients clients, $rounds graceful restarts $spacing s apart"
"$root/scripts/stack.sh" start "$state" "$port" "$mode" "$build" >"$work/stack.log" 2>&1 ||
	{ cat "$work/stack.log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$state/env"
for c in $(seq 1 "$clients"); do
	client "$c" &
	pids+=($!)
done
# a sleep the signals' trap need not wait for
pause() { sleep "$1" & wait $!; }
pause "$spacing"
printf '%-6s %10s %8s\n' round answered failed
for round in $(seq 1 "$rounds"); do
	a0=$(answers) f0=$(failed)
	"$root/scripts/stack.sh" graceful "$state"
	pause "$spacing"
	printf '%-6s %10d %8d\n' "$round" $(($(answers) - a0)) $(($(failed) - f0))
done
touch "$work/stop"
wait "${pids[@]}"
pids=()
echo "in all: $(answers) requests, $(failed) not 200:"
cat "$work"/codes-* | grep -v '^200 ' | sort | uniq -c || true
echo "the error log's lines about them (restart notices left out):"
grep -v ':notice\]' "$state/apache/logs/error.log" | grep -oE '(AH[0-9]{5}|mod_fcgid): .*' |
	sed -E 's/^(AH[0-9]{5}): stderr from [^:]*: /\1: /; s/\.sock\.[0-9]+/.sock/; s/pid [0-9]+/pid N/' |
	sort | uniq -c | sort -rn | head -20 || true
