#!/usr/bin/env bash
# migrate.sh: brings a database to the schema of this tree, in one transaction.
#   usage: scripts/migrate.sh CONNINFO
#
# 1. The numbered migrations, sql/NNNN_*.sql, in order, each once: tables, indexes, types and
#    data changes (recorded in schema_migrations).
# 2. Then the area files, sql/areas/NN_*.sql, in the order of their names: every function,
#    view, trigger and aggregate, each in its current definition (CREATE OR REPLACE). An area
#    is applied when its content differs from what was last applied (its SHA-256 is recorded
#    in schema_areas), and every area is applied again after a run that applied a numbered
#    migration, which may have dropped what an area created (a function whose signature or
#    return type changes is dropped by a numbered migration and created again by its area).
#
# All of it is one transaction under an advisory lock: a failure leaves the database as it
# was, and two runs at once apply everything once. A re-run with nothing changed writes
# nothing. sql/README.md says how to add to each kind of file.
set -euo pipefail
db=${1:?usage: migrate.sh CONNINFO}
sqldir=$(cd "$(dirname "$0")/../sql" && pwd)

# The migrations before sql/areas/ held functions of their own; they now hold tables only.
# A database that applied some of them but not the last one cannot be brought up to date by
# this tree (what it misses ran through functions that are no longer there).
history_last=0048_search_answer_kept

# lit NAME: NAME as a psql literal (the names are checked below to need no escaping)
lit() {
	printf "'%s'" "$1"
}

script() {
	cat <<-'EOF'
	\set ON_ERROR_STOP on
	SELECT pg_advisory_xact_lock(hashtext('courts migrate.sh')) AS locked \gset
	CREATE TABLE IF NOT EXISTS schema_migrations (
	    version    text PRIMARY KEY,
	    applied_at timestamptz NOT NULL DEFAULT now());
	COMMENT ON TABLE schema_migrations IS 'Numbered migrations of sql/ already applied.';
	CREATE TABLE IF NOT EXISTS schema_areas (
	    area       text PRIMARY KEY,
	    sha256     text NOT NULL,
	    applied_at timestamptz NOT NULL DEFAULT now());
	COMMENT ON TABLE schema_areas IS 'Area files of sql/areas/ as last applied: their SHA-256.';
	EOF
	printf "SELECT EXISTS (SELECT 1 FROM schema_migrations) AND NOT EXISTS (SELECT 1 FROM schema_migrations WHERE version = %s) AS too_old \\gset\n" "$(lit "$history_last")"
	cat <<-EOF
	\\if :too_old
	DO \$\$ BEGIN RAISE EXCEPTION 'this database was migrated by a version older than $history_last: migrate it first with scripts/migrate.sh of a commit that has sql/$history_last.sql and no sql/areas/'; END \$\$;
	\\endif
	\\set migrated false
	EOF
	local f v a sum
	for f in "$sqldir"/[0-9][0-9][0-9][0-9]_*.sql; do
		v=$(basename "$f" .sql)
		printf "SELECT NOT EXISTS (SELECT 1 FROM schema_migrations WHERE version = %s) AS todo \\gset\n" "$(lit "$v")"
		printf '\\if :todo\n\\echo applying %s\n' "$v"
		cat "$f"
		printf '\n;\nINSERT INTO schema_migrations (version) VALUES (%s);\n\\set migrated true\n\\endif\n' "$(lit "$v")"
	done
	for f in "$sqldir"/areas/[0-9][0-9]_*.sql; do
		a=$(basename "$f" .sql)
		sum=$(sha256sum <"$f")
		sum=${sum%% *}
		printf "SELECT :'migrated'::boolean OR NOT EXISTS (SELECT 1 FROM schema_areas WHERE area = %s AND sha256 = '%s') AS todo \\gset\n" "$(lit "$a")" "$sum"
		printf '\\if :todo\n\\echo applying areas/%s\n' "$a"
		cat "$f"
		printf "\n;\nINSERT INTO schema_areas (area, sha256) VALUES (%s, '%s')\n    ON CONFLICT (area) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now();\n\\\\endif\n" "$(lit "$a")" "$sum"
	done
}

for f in "$sqldir"/[0-9][0-9][0-9][0-9]_*.sql "$sqldir"/areas/[0-9][0-9]_*.sql; do
	case $(basename "$f") in
	*[!A-Za-z0-9_.]*) echo "migrate.sh: $f: a file name of letters, digits and _ only" >&2; exit 1 ;;
	esac
done
# the whole script first, then psql: psql must never commit a script cut short
work=$(mktemp)
trap 'rm -f "$work"' EXIT
script >"$work"
# warnings and errors only: a migration's RESET client_min_messages comes back to this
PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql "$db" -X -q -1 -v ON_ERROR_STOP=1 -f "$work"
