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

# The LANGUAGE sql functions of the schema that the planner does not inline where they are
# called, each checked on its own: called with the columns of a table of its argument types,
# in the select list or, for a set, in FROM (sql/0027_kept_plans.sql says why it matters).
sql_functions_not_inlined() {
	sql "CREATE FUNCTION pg_temp.not_inlined() RETURNS SETOF text LANGUAGE plpgsql AS \$\$
	     DECLARE
	         p record;
	         cols text;
	         args text;
	         line text;
	         plan text;
	     BEGIN
	         FOR p IN
	             SELECT f.oid, f.proname, f.proretset, f.proargtypes FROM pg_proc f
	              WHERE f.pronamespace = 'public'::regnamespace AND f.prokind = 'f'
	                AND f.prolang = (SELECT oid FROM pg_language WHERE lanname = 'sql')
	                AND NOT EXISTS (SELECT 1 FROM pg_depend d
	                                 WHERE d.classid = 'pg_proc'::regclass AND d.objid = f.oid
	                                   AND d.deptype = 'e')
	         LOOP
	             SELECT string_agg(format('a%s %s', n, format_type(t, NULL)), ', ' ORDER BY n),
	                    string_agg(format('t.a%s', n), ', ' ORDER BY n)
	               INTO cols, args
	               FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, n);
	             EXECUTE 'DROP TABLE IF EXISTS pg_temp.inline_args';
	             EXECUTE format('CREATE TEMP TABLE inline_args (%s)', COALESCE(cols, 'x int'));
	             plan := '';
	             FOR line IN EXECUTE format(CASE WHEN p.proretset
	                 THEN 'EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM pg_temp.inline_args t, LATERAL %s(%s) f'
	                 ELSE 'EXPLAIN (VERBOSE, COSTS OFF) SELECT %s(%s) FROM pg_temp.inline_args t' END,
	                 quote_ident(p.proname), COALESCE(args, ''))
	             LOOP
	                 plan := plan || line || E'\n';
	             END LOOP;
	             IF plan ~ ('\m' || p.proname || '\(') THEN
	                 RETURN NEXT p.oid::regprocedure::text;
	             END IF;
	         END LOOP;
	     END \$\$;
	     SET client_min_messages = warning;
	     SELECT * FROM pg_temp.not_inlined() ORDER BY 1"
}

@test "every LANGUAGE sql function is inlined where it is called, but the drift check" {
	run sql_functions_not_inlined
	[ "$status" -eq 0 ]
	# the drift check (its SET jit = off keeps it from being inlined, and the check finds it)
	# is run by the tests only; anything else is planned again at every call: write it as
	# an expression, or in PL/pgSQL
	[ "$output" = "free_slots_drift(timestamp with time zone)" ] || { echo "$output" >&2; false; }
}
