#!/usr/bin/env bash
# fuzz.sh: runs the libFuzzer targets of $BUILD/fuzz/ (tests/fuzz/) over their kept corpus,
# tests/fuzz/corpus/<target>/, one target at a time.
#
#   scripts/fuzz.sh -t SECONDS [TARGET...]   fuzz each for SECONDS (`make fuzz`): inputs that
#       reach new code go to $BUILD/fuzz/corpus/<target>/, a crash to $BUILD/fuzz/crashes/
#   scripts/fuzz.sh -r RUNS [TARGET...]      `make test`: RUNS inputs each from a fixed seed,
#       nothing written beside a temporary directory; one TAP line per target
#
# With no TARGET, every target built. Exits non-zero when a target failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
[[ $build == /* ]] || build=$root/$build
build=$(cd "$build" && pwd)
seconds="" runs=""
while getopts t:r: opt; do
	case $opt in
	t) seconds=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) echo "usage: fuzz.sh -t SECONDS | -r RUNS [TARGET...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in "$build"/fuzz/*; do
		[ -f "$f" ] && [ -x "$f" ] && targets+=("$(basename "$f")")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no target in $build/fuzz (make fuzz-build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# "N runs in S s, E exec/s, cov C, ft F, corpus K" from a libFuzzer log
summary() {
	awk '/(DONE|pulse|NEW|REDUCE|INITED) +cov:/ { line = $0 }
	     /^Done [0-9]+ runs in/ { runs = $2; secs = $5 }
	     /stat::number_of_executed_units/ { runs = $2 }
	     /stat::average_exec_per_sec/ { eps = $2 }
	     END {
		for (i = 1; i <= split(line, f, " "); i++) {
			if (f[i] == "cov:") cov = f[i + 1]
			if (f[i] == "ft:") ft = f[i + 1]
			if (f[i] == "corp:") corp = f[i + 1]
		}
		printf "%s runs in %s s, %s exec/s, cov %s, ft %s, corpus %s\n", runs, secs, eps, cov, ft, corp
	     }' "$1"
}

for t in "${targets[@]}"; do
	bin=$build/fuzz/$t seeds=$root/tests/fuzz/corpus/$t log=$tmp/$t.log dict=()
	mkdir -p "$seeds"
	[ ! -f "$root/tests/fuzz/$t.dict" ] || dict=(-dict="$root/tests/fuzz/$t.dict")
	if [ -n "$runs" ]; then
		mkdir -p "$tmp/$t"
		if "$bin" -runs="$runs" -seed=1 -timeout=10 -print_final_stats=1 "${dict[@]}" \
			-artifact_prefix="$tmp/$t/" "$tmp/$t" "$seeds" >"$log" 2>&1; then
			echo "ok - fuzz $t: $(summary "$log")"
		else
			echo "not ok - fuzz $t: a crash or a broken check over the kept corpus"
			grep -E 'fuzz: check failed|ERROR|SUMMARY|^ +#[0-9] ' "$log" | head -20 | sed 's/^/# /'
			status=1
		fi
	else
		mkdir -p "$build/fuzz/corpus/$t" "$build/fuzz/crashes"
		echo "== $t: fuzzing for $seconds s"
		if "$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 "${dict[@]}" \
			-artifact_prefix="$build/fuzz/crashes/$t-" \
			"$build/fuzz/corpus/$t" "$seeds" >"$log" 2>&1; then
			echo "   $(summary "$log")"
		else
			grep -E 'fuzz: check failed|ERROR|SUMMARY|Test unit written|^ +#[0-9] ' "$log" |
				head -30
			echo "   $t FAILED: keep the input of $build/fuzz/crashes/ in $seeds once fixed"
			status=1
		fi
	fi
done
exit $status
