#!/usr/bin/env bash
# systemd-units.sh OUT [BIN]: renders apache/systemd/OUT's name.in into OUT, a file of
# BUILD/systemd/, with the absolute path of that build directory (`make build`), or BIN where
# the programs will be installed (the Debian package: /usr/lib/courts): courts-pool@.service
# runs BIN/cgi-bin/NAME.cgi as a fixed pool as the user COURTS_UNIT_USER (www-data unless
# given; the package's is courts), courts-pools.target wants one per program.
set -euo pipefail

out=$1
root=$(cd "$(dirname "$0")/.." && pwd -P)
name=$(basename "$out")
mkdir -p "$(dirname "$out")"
bin=${2:-$(cd "$(dirname "$out")/.." && pwd -P)}
user=${COURTS_UNIT_USER:-www-data}

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
sed -e "s|@BIN@|$quoted|g" -e "s|@UNITS@|$units|g" -e "s|@USER@|$user|g" "$root/apache/systemd/$name.in" >"$out.tmp"
mv "$out.tmp" "$out"
