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
# in the select list or, for a set, in FROM (sql/README.md says why it matters).
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

# ---- sql/: numbered migrations, then areas (sql/README.md) ------------------------------

teardown() {
	drop_scratch
}

# area_names: "kind name" of everything the area files create, one a line.
area_names() {
	cat "$COURTS_ROOT"/sql/areas/*.sql | created_names
}

# created_names: "kind name" of each CREATE of a function, procedure, aggregate, view or
# trigger in the SQL on stdin (a statement starts its line).
created_names() {
	grep -ioE '^[[:space:]]*CREATE[[:space:]]+(OR[[:space:]]+REPLACE[[:space:]]+)?(CONSTRAINT[[:space:]]+)?(FUNCTION|PROCEDURE|AGGREGATE|VIEW|MATERIALIZED[[:space:]]+VIEW|TRIGGER)[[:space:]]+[a-z0-9_.]+' |
		tr '[:upper:]' '[:lower:]' | sed -E 's/^ *create +(or +replace +)?(constraint +)?//; s/materialized +view/view/; s/procedure/function/; s/aggregate/function/; s/ +/ /g; s/public\.//'
}

# db_names CONNINFO: "kind name" of the functions, views and triggers of the database's own
# (none of an extension's, nor a range type's constructors).
db_names() {
	psql "$1" -X -q -tA -v ON_ERROR_STOP=1 -c "
	    SELECT 'function ' || p.proname FROM pg_proc p
	     WHERE p.pronamespace = 'public'::regnamespace
	       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
	                          AND d.objid = p.oid AND d.deptype IN ('e', 'i'))
	    UNION ALL
	    SELECT 'view ' || c.relname FROM pg_class c
	     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('v', 'm')
	    UNION ALL
	    SELECT 'trigger ' || t.tgname FROM pg_trigger t WHERE NOT t.tgisinternal"
}

@test "the database's functions, views and triggers are the ones the area files create" {
	files=$(area_names | sort -u)
	[ "$(wc -l <<<"$files")" -ge 190 ]
	run db_names "$PSQL_ADMIN"
	[ "$status" -eq 0 ]
	db=$(sort -u <<<"$output")
	diff <(echo "$files") <(echo "$db") >&2
}

@test "every function, view and trigger is created once, in one area file; no migration after the history creates one" {
	local f dup
	dup=$(for f in "$COURTS_ROOT"/sql/areas/*.sql; do created_names <"$f" | sort -u; done |
		sort | uniq -d)
	[ -z "$dup" ] || { echo "created in two area files, or twice in one: $dup" >&2; false; }
	dup=$(cat "$COURTS_ROOT"/sql/areas/*.sql | created_names | sort | uniq -d)
	[ -z "$dup" ] || { echo "created twice: $dup" >&2; false; }
	for f in "$COURTS_ROOT"/sql/[0-9][0-9][0-9][0-9]_*.sql; do
		[[ $(basename "$f") > 0048_~ ]] || continue
		run created_names <"$f"
		[ -z "$output" ] || { echo "$(basename "$f") creates $output: it belongs in an area file" >&2; false; }
	done
}

@test "no block of six lines stands in two area files" {
	# each window of six lines that say something (spaces folded; blank lines, comments and
	# the keywords that frame every PL/pgSQL function left out), with the file it is in
	run awk '
	    FNR == 1 { n = 0 }
	    { line = $0; sub(/--.*/, "", line); gsub(/[[:space:]]+/, " ", line); sub(/^ /, "", line); sub(/ $/, "", line) }
	    line == "" || line ~ /^(AS \$\$|BEGIN|DECLARE|ELSE|END|END;|END \$\$;|END IF;|END LOOP;|RETURN;|RETURN NULL;|LANGUAGE [a-z]+( [A-Z ]+)?|RETURNS [a-z_ ]+|[();,]+)$/ { next }
	    { w[n % 6] = line; n++ }
	    n >= 6 {
	        key = ""
	        for (i = n - 6; i < n; i++) key = key w[i % 6] "\n"
	        if ((key in seen) && seen[key] != FILENAME) { print seen[key] " and " FILENAME ":\n" key; bad = 1 }
	        else if (!(key in seen)) seen[key] = FILENAME
	    }
	    END { exit bad }' "$COURTS_ROOT"/sql/areas/*.sql
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
}

# sample_data DB: on a database of the schema, what a club's first week leaves: a venue and
# a court (its kept slots written by the triggers), players around it, and a match made, paid
# and joined, through the functions the service calls.
sample_data() {
	psql "$(admin_on "$1")" -X -q -tA -v ON_ERROR_STOP=1 <<-'SQL'
	INSERT INTO users (issuer, subject)
	SELECT 'https://auth.courts.local/', s FROM unnest(ARRAY['owner', 'p1', 'p2', 'p3', 'p4']) s;
	INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude, timezone, status)
	SELECT id, 'Club Central', 'Calle Mayor 1', 'Madrid', 'Spain', 40.4168, -3.7038, 'Europe/Madrid', 'ACTIVE'
	  FROM users WHERE subject = 'owner';
	INSERT INTO resources (venue_id, name, type, slot_duration_minutes, status)
	SELECT id, 'Court 1', 'PADEL_COURT', 90, 'ACTIVE' FROM venues;
	INSERT INTO resource_schedules (resource_id, day_of_week, opening_time, closing_time)
	SELECT r.id, d, '08:00', '22:00' FROM resources r, generate_series(1, 7) d;
	INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, currency)
	SELECT id, k, '00:00', '24:00', p, 'EUR' FROM resources, (VALUES ('WEEKDAY', 20.00), ('WEEKEND', 30.00)) x(k, p);
	INSERT INTO players (user_id, display_name, skill_level, home_latitude, home_longitude)
	SELECT id, subject, 'INTERMEDIATE', 40.42, -3.70 FROM users WHERE subject LIKE 'p%';
	SELECT match_create('PUBLIC', false, r.id, u.id, current_date + 3, '09:30', 90, 'TWO_VS_TWO',
	                    'INTERMEDIATE', 'Friendly', 40.4168, -3.7038, 10, 900, 3)
	  FROM resources r, users u WHERE u.subject = 'p1';
	SELECT match_pay(m.id, m.organizer_id, 0) FROM match_requests m;
	SELECT match_join_by_token(m.invitation_token, u.id, 'TEAM_B')
	  FROM match_requests m, users u WHERE u.subject = 'p2';
	SQL
}

# observed DB: what the service reads of the sample: every table's rows counted, the match,
# the venue and the court's day as the API shows them, a search, and the checks of what the
# triggers keep (no row when right).
observed() {
	psql "$(admin_on "$1")" -X -q -tA -v ON_ERROR_STOP=1 <<-'SQL'
	SELECT c.relname, (xpath('/row/n/text()', query_to_xml('SELECT count(*) AS n FROM ' || c.oid::regclass, false, true, '')))[1]::text
	  FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
	   AND c.relname NOT LIKE 'schema_%' ORDER BY 1;
	SELECT json_match_request(m, true) FROM match_requests m;
	SELECT json_venue(v, true) FROM venues v;
	SELECT c.* FROM resources r, court_day_slots(r.id, current_date + 3) c;
	SELECT s.* FROM match_search_rows(40.4168, -3.7038, 10, current_date + 4, '08:00', '22:00',
	                                  90, 'INTERMEDIATE', 0, NULL, 5) s;
	SELECT 'drift', * FROM free_slots_drift();
	SELECT 'cells', * FROM player_home_cells_drift();
	SQL
}

# schema_of DB: the schema as pg_dump writes it, but the per-dump restrict key.
schema_of() {
	pg_dump --schema-only "$(admin_on "$1")" | grep -v '^\\\(un\)\?restrict '
}

@test "a database migrated before sql/areas/ is upgraded to the schema a new database gets, its data kept" {
	old=$BATS_TEST_TMPDIR/before
	mkdir -p "$old"
	git -C "$COURTS_ROOT" cat-file -e "$BEFORE_AREAS^{commit}" ||
		{ echo "the test needs commit $BEFORE_AREAS: run it in a clone with its history" >&2; false; }
	git -C "$COURTS_ROOT" archive "$BEFORE_AREAS" sql scripts/migrate.sh | tar -x -C "$old"
	[ ! -d "$old/sql/areas" ]
	SCRATCH="courts_upgraded courts_new"
	scratch_db courts_upgraded "$old/scripts/migrate.sh"
	sample_data courts_upgraded
	run observed courts_upgraded
	[ "$status" -eq 0 ]
	before=$output
	# the sample is what it says: a match of two players who paid, and the kept slots
	grep -qx 'match_players|2' <<<"$before"
	grep -qx 'payments|2' <<<"$before"
	grep -qE '^free_slots\|[1-9][0-9]+$' <<<"$before"
	grep -q '"status" : "OPEN"' <<<"$before"
	[ -z "$(grep -E '^(drift|cells)\|' <<<"$before")" ]

	run "$COURTS_ROOT/scripts/migrate.sh" "${DATABASE_URL/dbname=courts/dbname=courts_upgraded}"
	[ "$status" -eq 0 ]
	grep -qx 'applying 0049_areas' <<<"$output"
	grep -qx 'applying areas/60_lifecycle' <<<"$output"
	run observed courts_upgraded
	[ "$status" -eq 0 ]
	# the tables of later migrations are new, and empty; the reference data they extend only
	# grew; everything else reads the same
	output=$(reference_grown "$before" "$output") || false
	[ "$(old_tables_only "$before" "$output")" = "$before" ] ||
		{ diff <(echo "$before") <(echo "$output") >&2; false; }

	scratch_db courts_new
	diff <(schema_of courts_upgraded) <(schema_of courts_new) >&2
	# and the same data written on the new schema reads the same, but for ids and instants
	sample_data courts_new
	run observed courts_new
	[ "$status" -eq 0 ]
	output=$(reference_grown "$before" "$output") || false
	diff <(anonymous <<<"$before") <(old_tables_only "$before" "$output" | anonymous) >&2
}

# reference_grown BEFORE AFTER: AFTER with the row count of each table of reference data that
# later migrations add rows to (match_transitions: 0051's club cancellation) as in BEFORE;
# fails when one has fewer rows than BEFORE.
reference_grown() {
	local line name was
	while IFS= read -r line; do
		name=${line%%|*}
		if [ "$name" = match_transitions ] && [[ $line =~ ^[a-z_]+\|[0-9]+$ ]]; then
			was=$(grep "^$name|" <<<"$1") || { echo "$name: no count before" >&2; return 1; }
			[ "${line#*|}" -ge "${was#*|}" ] || { echo "$name lost rows: $line" >&2; return 1; }
			line=$was
		fi
		printf '%s\n' "$line"
	done <<<"$2"
}

# old_tables_only BEFORE AFTER: AFTER without the row counts of tables BEFORE does not have
# (a later migration's), each of which must be empty; fails when one is not.
old_tables_only() {
	local name line
	while IFS= read -r line; do
		name=${line%%|*}
		if [[ $line =~ ^[a-z_0-9]+\|[0-9]+$ ]] && ! grep -q "^$name|" <<<"$1"; then
			[[ $line == *"|0" ]] || { echo "new table $line is not empty" >&2; return 1; }
			continue
		fi
		printf '%s\n' "$line"
	done <<<"$2"
}

# anonymous: the text on stdin with its ids and the instants of its JSON replaced by names.
anonymous() {
	sed -E 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/ID/g
	        s/"(createdAt|updatedAt|expiresAt|joinedAt)" : "[^"]*"/\1/g'
}

# migrate_copy DIR: this tree's scripts/migrate.sh and sql/ copied to DIR, to be changed there.
migrate_copy() {
	mkdir -p "$1/scripts"
	cp "$COURTS_ROOT/scripts/migrate.sh" "$1/scripts/"
	cp -r "$COURTS_ROOT/sql" "$1/"
}

@test "migrate.sh applies nothing twice: a changed area alone, every area after a new migration" {
	copy=$BATS_TEST_TMPDIR/tree
	migrate_copy "$copy"
	SCRATCH=courts_rerun
	scratch_db courts_rerun "$copy/scripts/migrate.sh"
	url=${DATABASE_URL/dbname=courts/dbname=courts_rerun}
	run "$copy/scripts/migrate.sh" "$url"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# an area changed: that one, and its new text is what the database has
	sed -i 's/ISO 8601 UTC text of a timestamp, as the API shows it./ISO 8601 in UTC, as the API shows it./' \
		"$copy/sql/areas/10_basics.sql"
	run "$copy/scripts/migrate.sh" "$url"
	[ "$status" -eq 0 ]
	[ "$output" = "applying areas/10_basics" ]
	[ "$(psql "$(admin_on courts_rerun)" -X -tA -c "SELECT obj_description('api_ts(timestamptz)'::regprocedure)")" = \
		"ISO 8601 in UTC, as the API shows it." ]
	# a migration that drops what an area created: every area again, so nothing is lost
	printf 'DROP FUNCTION match_search(double precision, double precision, numeric, date, time, time, integer, text, integer, uuid, integer, timestamptz);\n' \
		>"$copy/sql/9999_test.sql"
	run "$copy/scripts/migrate.sh" "$url"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^applying areas/' <<<"$output")" -eq "$(ls "$copy"/sql/areas/*.sql | wc -l)" ]
	[ "$(head -1 <<<"$output")" = "applying 9999_test" ]
	run db_names "$(admin_on courts_rerun)"
	grep -qx 'function match_search' <<<"$output"
	# a failing area: nothing of the run stays, its migration included
	printf 'SELECT 1;\n' >"$copy/sql/9999_test2.sql"
	printf 'CREATE OR REPLACE FUNCTION broken() RETURNS int LANGUAGE sql RETURN no_such_column;\n' \
		>>"$copy/sql/areas/95_sweeper.sql"
	run "$copy/scripts/migrate.sh" "$url"
	[ "$status" -ne 0 ]
	[ "$(psql "$(admin_on courts_rerun)" -X -tA -c "SELECT count(*) FROM schema_migrations WHERE version = '9999_test2'")" = 0 ]
}

@test "migrate.sh refuses a database part-way through the history, and leaves it as it was" {
	SCRATCH=courts_partial
	psql "$(admin_on postgres)" -X -q -c "DROP DATABASE IF EXISTS courts_partial" -c "CREATE DATABASE courts_partial OWNER courts"
	url=${DATABASE_URL/dbname=courts/dbname=courts_partial}
	psql "$url" -X -q -c "CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())" \
		-c "INSERT INTO schema_migrations (version) VALUES ('0001_core')"
	run "$COURTS_ROOT/scripts/migrate.sh" "$url"
	[ "$status" -ne 0 ]
	[[ $output == *"migrated by a version older than 0048_search_answer_kept"* ]]
	[ "$(psql "$url" -X -tA -c "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" = 1 ]
}
