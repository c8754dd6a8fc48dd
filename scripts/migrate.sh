#!/usr/bin/env bash
# migrate.sh: applies sql/NNNN_*.sql in order, each once, each in its own transaction, and
# records what it applied in schema_migrations.   usage: scripts/migrate.sh CONNINFO
set -euo pipefail
db=${1:?usage: migrate.sh CONNINFO}
sqldir=$(cd "$(dirname "$0")/../sql" && pwd)
psql_q() { psql "$db" -X -q -v ON_ERROR_STOP=1 "$@"; }

# a re-run finds the table: no NOTICE about it
psql_q -c "SET client_min_messages TO warning" -c "CREATE TABLE IF NOT EXISTS schema_migrations (
	version text PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now())" \
	-c "COMMENT ON TABLE schema_migrations IS 'Migration files of sql/ already applied.'"
applied=$(psql_q -tA -c "SELECT version FROM schema_migrations")
for f in "$sqldir"/[0-9][0-9][0-9][0-9]_*.sql; do
	v=$(basename "$f" .sql)
	grep -qx "$v" <<<"$applied" && continue
	echo "applying $v"
	# one transaction: the file and its record land together or not at all
	{ cat "$f"; printf '\nINSERT INTO schema_migrations (version) VALUES (:%s);\n' "'version'"; } |
		psql_q -1 -v version="$v" -f -
done
