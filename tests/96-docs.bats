#!/usr/bin/env bats
# The documents: the README is a front door (at most about 250 lines) whose list of documents,
# and every document of docs/, lead somewhere: every relative link names a file of the
# checkout and every #anchor a heading of its target, as GitHub makes anchors; each document of
# docs/ opens with a contents list of its headings.

load test_helper

# links FILE...: "FILE TARGET" for every Markdown link of the files that is not a URL.
links() {
	local f
	for f; do
		grep -o '\]([^)]*)' "$f" | sed 's/^](//; s/)$//' | grep -v '^[a-z]*://' |
			sed "s|^|$f |"
	done
}

# anchors FILE: the anchors of FILE's headings, one per line.
anchors() {
	grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ //' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9_ -]//g; s/ /-/g'
}

@test "the README is a front door: the two commands first, at most 250 lines, and the list of documents" {
	[ "$(wc -l <"$COURTS_ROOT/README.md")" -le 250 ]
	grep -q '^    make run ' "$COURTS_ROOT/README.md"
	grep -q '^    make test ' "$COURTS_ROOT/README.md"
	for d in "$COURTS_ROOT"/docs/*.md; do
		grep -qF "](docs/${d##*/})" "$COURTS_ROOT/README.md" ||
			{ echo "docs/${d##*/} is not in the README's list" >&2; return 1; }
	done
}

@test "every relative link of the README and of docs/ names a file, and every anchor a heading" {
	local file target path anchor bad=0
	cd "$COURTS_ROOT"
	while read -r file target; do
		path=${target%%#*}
		anchor=${target#"$path"}
		anchor=${anchor#\#}
		if [ -n "$path" ]; then
			path=$(dirname "$file")/$path
			[ -e "$path" ] || { echo "$file: $target: no such file" >&2; bad=1; continue; }
		else
			path=$file
		fi
		if [ -n "$anchor" ]; then
			anchors "$path" | grep -qx -- "$anchor" ||
				{ echo "$file: $target: no such heading" >&2; bad=1; }
		fi
	done < <(links README.md docs/*.md sql/README.md bench/README.md)
	[ "$bad" = 0 ]
	# the check reads links at all
	[ "$(links README.md docs/*.md | wc -l)" -gt 20 ]
}

@test "each document of docs/ opens with a contents list of its headings" {
	local d h
	for d in "$COURTS_ROOT"/docs/*.md; do
		[ "$(sed -n 1p "$d" | cut -c1-2)" = '# ' ]
		grep -qx '## Contents' "$d" || { echo "$d: no contents" >&2; return 1; }
		while read -r h; do
			grep -qF "](#$h)" "$d" || { echo "$d: #$h is not in its contents" >&2; return 1; }
		done < <(grep -E '^##+ ' "$d" | grep -vx '## Contents' | sed -E 's/^#+ //' |
			tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9_ -]//g; s/ /-/g')
	done
}
