#!/usr/bin/env bash
# deb.sh: builds the Debian package (`make deb`) with Debian's own tools and checks it with
# lintian.
#   usage: scripts/deb.sh [--rev COMMIT] [--out DIR] [--no-lint]
#
# The package is built from a copy of the tree in DIR/src: the files git tracks or would track
# (uncommitted changes included, ignored files such as var/ and build/ never), or with --rev
# the tree of COMMIT. Its version is the Makefile's VERSION, then +r and the number of commits
# up to that one, then .g and its hash (0.1.0+r391.g8760e09): a later commit's package is an
# upgrade of an earlier one's, as apt sees it. The entry debian/changelog gets for it is
# written into the copy, never into the tree.
#
# Prints the path of the .deb on its last line. lintian runs at the level Debian's archive
# accepts (errors and warnings; what debian/courts.lintian-overrides says, with its reasons,
# is left out): any line it prints fails the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
rev= out=$root/build/deb lint=1
while [ $# -gt 0 ]; do
	case $1 in
	--rev) rev=${2:?--rev needs a commit}; shift 2 ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--no-lint) lint=0; shift ;;
	*) echo "usage: scripts/deb.sh [--rev COMMIT] [--out DIR] [--no-lint]" >&2; exit 2 ;;
	esac
done
[[ $out == /* ]] || out=$PWD/$out
cd "$root"
commit=$(git rev-parse --verify "${rev:-HEAD}^{commit}")
short=$(git rev-parse --short=7 "$commit")
count=$(git rev-list --count "$commit")
src=$out/src
rm -rf "$src"
mkdir -p "$src/courts"
if [ -n "$rev" ]; then
	git archive "$commit" | tar -x -C "$src/courts"
else
	tree_tar "$root" | tar -x -C "$src/courts"
fi
[ -f "$src/courts/debian/control" ] || {
	echo "deb.sh: ${rev:-this tree} has no debian/: nothing to package" >&2
	exit 1
}
base=$(sed -n 's/^VERSION *:= *//p' "$src/courts/Makefile")
version=$base+r$count.g$short
# the commit's time, or a second after the newest entry's when that is later
when=$(git log -1 --format=%ct "$commit")
last=$(date -d "$(sed -n 's/^ -- .*>  //p' "$src/courts/debian/changelog" | head -n 1)" +%s)
[ "$when" -gt "$last" ] || when=$((last + 1))
{
	printf 'courts (%s) bookworm; urgency=medium\n\n' "$version"
	printf '  * Built from commit %s.\n\n' "$short"
	printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$src/courts/debian/control")" \
		"$(LC_ALL=C date -R -u -d "@$when")"
	cat "$src/courts/debian/changelog"
} >"$src/courts/debian/changelog.new"
mv "$src/courts/debian/changelog.new" "$src/courts/debian/changelog"

# the build's own messages on stderr; only the package's path on stdout
(cd "$src/courts" && COURTS_GIT_REV=$short LC_ALL=C.UTF-8 \
	dpkg-buildpackage --build=binary --no-sign -j"$(nproc)") >&2
arch=$(dpkg --print-architecture)
deb=$src/courts_${version}_$arch.deb
mv -f "$deb" "$src/courts_${version}_$arch.buildinfo" "$src/courts_${version}_$arch.changes" "$out/"
deb=$out/$(basename "$deb")
if [ $lint = 1 ]; then
	# as root lintian refuses to unpack what it checks unless told it may
	report=$(LC_ALL=C.UTF-8 lintian --fail-on none --allow-root \
		--display-level '>=warning' "$deb" 2>&1) || true
	if [ -n "$report" ]; then
		echo "$report" >&2
		echo "deb.sh: lintian: $(grep -c . <<<"$report") lines above; fix each, or override it in debian/courts.lintian-overrides with the reason" >&2
		exit 1
	fi
fi
echo "$deb"
