#!/usr/bin/env bats
# The schema keeps the promises the code relies on.

load test_helper

# names of the constraints common/sql.c maps to answers of their own
mapped_constraints() {
	sed -n '/known_constraints\[\] = {/,/^};/p' "$COURTS_ROOT/common/sql.c" |
		grep -oE '^[[:space:]]*\{ "[a-z0-9_]+"' | grep -oE '[a-z0-9_]+'
}

@test "every constraint that common/sql.c maps to an answer exists under that name" {
	names=$(mapped_constraints)
	[ "$(wc -l <<<"$names")" -ge 8 ]
	for n in $names; do
		found=$(sql "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '$n')
		                 OR EXISTS (SELECT 1 FROM pg_class WHERE relname = '$n' AND relkind = 'i')")
		[ "$found" = t ] || { echo "constraint $n is not in the schema" >&2; return 1; }
	done
}

@test "no unique or exclusion constraint carries a name PostgreSQL made up" {
	run sql "SELECT conrelid::regclass || '.' || conname FROM pg_constraint
	          WHERE connamespace = 'public'::regnamespace AND contype IN ('u', 'x')
	            AND conname ~ '_key[0-9]*$|_excl[0-9]*$'"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
