# Suite set-up: a private PostgreSQL cluster and a private Apache (the project's apache/
# config) in a temporary directory, on 127.0.0.1 and a free port; torn down by PID at the
# end, pass or fail. MODE=fastcgi runs the programs under mod_fcgid.

setup_suite() {
	# the suite means the same whoever runs it: characters are UTF-8 (bash counts them in
	# ${#s} and ${s:n}), dates without a zone are UTC, and what the servers' users read is
	# readable whatever the caller's umask
	export LC_ALL=C.UTF-8 TZ=UTC
	unset LANGUAGE
	umask 022
	# free_port and the other helpers
	. "$BATS_TEST_DIRNAME/test_helper.bash"
	COURTS_ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	export COURTS_ROOT
	export COURTS_BUILD=${COURTS_BUILD:-$COURTS_ROOT/build}
	export COURTS_MODE=${MODE:-cgi}
	# a test account writes far more than a person would; the write budget itself is proven
	# by tests/53-write-budget.bats on servers of its own with the shipped defaults
	export WRITE_BUDGET_PER_MINUTE=${WRITE_BUDGET_PER_MINUTE:-1000000}
	export WRITE_BUDGET_BURST=${WRITE_BUDGET_BURST:-1000000}
	# the /courts-test/status/NNN route of apache/httpd.conf (tests/04-error-answers.bats)
	export COURTS_TEST_STATUS=1
	# a throwaway cluster: no need to wait for the disk at every commit (the suite runs its
	# three modes side by side on a small machine); a clean restart still keeps everything
	export PG_FSYNC=${PG_FSYNC:-off} PG_SYNC_COMMIT=${PG_SYNC_COMMIT:-off}
	COURTS_STATE=$(mktemp -d "${TMPDIR:-/tmp}/courts-test.XXXXXX")
	export COURTS_STATE
	chmod 755 "$COURTS_STATE"
	local port
	port=$(free_port)
	# the pool mode runs on a database migrated by the last commit before sql/areas/ and then
	# upgraded by this tree, the others on new ones: the suite passes on both
	local from=
	if [ "$COURTS_MODE" = pool ]; then
		if git -C "$COURTS_ROOT" cat-file -e "$BEFORE_AREAS^{commit}" 2>/dev/null; then
			from=$BEFORE_AREAS
		else	# tests/06-schema.bats says so; the mode's other tests run on a new database
			echo "# pool mode: commit $BEFORE_AREAS is not in this clone: a new database" >&3
		fi
	fi
	# no WAL archiving (scripts/stack.sh, pgbr_conf): the suite resets its tables thousands of
	# times; tests/77-backup.bats starts a cluster of its own that archives
	if ! PG_ARCHIVE=0 UPGRADE_FROM=$from "$COURTS_ROOT/scripts/stack.sh" start "$COURTS_STATE" "$port" \
		"$COURTS_MODE" "$COURTS_BUILD" >"$COURTS_STATE/stack.log" 2>&1; then
		cat "$COURTS_STATE/stack.log" >&2
		cat "$COURTS_STATE/apache/logs/error.log" >&2 2>/dev/null || true
		"$COURTS_ROOT/scripts/stack.sh" stop "$COURTS_STATE" || true
		return 1
	fi
	# shellcheck disable=SC1091
	. "$COURTS_STATE/env"
	export COURTS_PORT=$port
	# the cluster's own psql: Debian's /usr/bin/psql is a Perl wrapper that takes about 25 ms
	# to start, and the tests run psql some thousands of times
	export PATH="$PG_BIN:$PATH"
}

teardown_suite() {
	[ -n "${COURTS_STATE:-}" ] || return 0
	"$COURTS_ROOT/scripts/stack.sh" stop "$COURTS_STATE" || true
	# each extra Apache, and the pgbouncer or replica cluster of one, by their PIDs
	for dir in "$COURTS_STATE"/extra-*; do
		[ -d "$dir" ] || continue
		"$COURTS_ROOT/scripts/stack.sh" stop-apache "$dir"
		"$COURTS_ROOT/scripts/stack.sh" replica-stop "$dir"
	done
	if [ -n "${KEEP_STATE:-}" ]; then
		echo "# state kept in $COURTS_STATE" >&3
	else
		rm -rf "$COURTS_STATE"
	fi
}
