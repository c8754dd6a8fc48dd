#!/usr/bin/env bash
# systemd-units.sh OUT: renders apache/systemd/OUT's name.in into OUT, a file of BUILD/systemd/,
# with the absolute path of that build directory (`make build`): courts-pool@.service runs
# BUILD/cgi-bin/NAME.cgi as a fixed pool, courts-pools.target wants one per program.
set -euo pipefail

out=$1
root=$(cd "$(dirname "$0")/.." && pwd -P)
name=$(basename "$out")
mkdir -p "$(dirname "$out")"
bin=$(cd "$(dirname "$out")/.." && pwd -P)

# a path inside a quoted argument of a unit file: \ and " escaped, % and $ doubled
unit_quote() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//%/%%}
	printf '%s' "${s//\$/\$\$}"
}

units=
for src in "$root"/cgi-bin/*.c; do
	units+="${units:+ }courts-pool@$(basename "$src" .c).service"
done

quoted=$(unit_quote "$bin")
# sed replacement text: & and | and \ are special to it
quoted=$(printf '%s' "$quoted" | sed 's/[&|\\]/\\&/g')
sed -e "s|@BIN@|$quoted|g" -e "s|@UNITS@|$units|g" "$root/apache/systemd/$name.in" >"$out.tmp"
mv "$out.tmp" "$out"
