#!/usr/bin/env bash
# backup.sh: `make backup` and `make restore`, with pgBackRest (docs/operations.md, "Backups").
#
#   scripts/backup.sh backup  [STATE_DIR]                  a full backup when the repository
#                                                          has none, else an incremental one
#   scripts/backup.sh restore TIME [STATE_DIR [NEW_DIR]]   the database as it was at TIME, in
#                                                          NEW_DIR/pg (a new data directory)
#
# STATE_DIR is the state directory of the cluster (default: var/ of this checkout, `make run`'s);
# its pgBackRest configuration, STATE_DIR/pgbackrest/pgbackrest.conf (stanza courts, the
# repository STATE_DIR/backup or BACKUP_REPO), is written by scripts/stack.sh when the cluster
# starts. TIME is an ISO 8601 timestamp with its offset, e.g. 2026-12-04T13:45:00+01:00 or
# 2026-12-04T12:45:00Z; anything else is refused (exit 2). NEW_DIR defaults to
# STATE_DIR/restore/<TIME in UTC>; it must not hold a data directory already: a restore never
# writes over a cluster.
set -euo pipefail
umask 022
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
courts_path

usage() {
	echo "usage: $0 backup [STATE_DIR] | restore TIME [STATE_DIR [NEW_DIR]]" >&2
	exit 2
}

# state_of DIR: the state directory, absolute (var/ may be a link, scripts/run.sh)
state_of() {
	local dir=${1:-$root/var}
	[ -d "$dir" ] || { echo "backup: no state directory $dir: start the service once with make run" >&2; exit 1; }
	readlink -f "$dir"
}

pgbr() {
	as_pg pgbackrest "--config=$conf" --stanza=courts "$@"
}

cmd=${1:-}
[ $# -ge 1 ] && shift
case $cmd in
backup)
	[ $# -le 1 ] || usage
	state=$(state_of "${1:-}")
	conf=$state/pgbackrest/pgbackrest.conf
	[ -f "$conf" ] || { echo "make backup: no $conf: the cluster was started before backups were set up; restart it (make run)" >&2; exit 1; }
	[ -f "$state/pg/postmaster.pid" ] || { echo "make backup: the cluster of $state is not running: start it (make run)" >&2; exit 1; }
	cd /
	archiving=$(as_pg psql -X -h "$state/pgsock" -U postgres -d postgres -qtAc "SHOW archive_mode")
	if [ "$archiving" != on ]; then
		echo "make backup: the cluster of $state runs without WAL archiving (PG_ARCHIVE=0): restart it with PG_ARCHIVE=1 (make run's default)" >&2
		exit 1
	fi
	pgbr stanza-create >/dev/null
	pgbr check >/dev/null
	# the first backup is full, later ones incremental (on the last backup, whatever its type)
	if pgbr info | grep -q '^ *full backup:'; then type=incr; else type=full; fi
	start=$SECONDS
	pgbr --type="$type" backup
	label=$(pgbr info | grep -E '^ *(full|incr|diff) backup:' | tail -n 1 | sed 's/.*backup: //')
	echo "make backup: $type backup $label of $state in $((SECONDS - start)) s"
	;;
restore)
	[ $# -ge 1 ] && [ $# -le 3 ] || usage
	time=$1
	# an instant, not a local time that depends on whoever reads it: the offset is required
	re='^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$'
	if ! [[ $time =~ $re ]] || ! utc=$(date -u -d "$time" '+%Y-%m-%d %H:%M:%S.%6N+00' 2>/dev/null); then
		echo "make restore: TIME='$time' is not an ISO 8601 timestamp with its offset: give e.g. TIME=2026-12-04T13:45:00+01:00 or TIME=2026-12-04T12:45:00Z" >&2
		exit 2
	fi
	if [ "$(date -u -d "$time" +%s)" -gt "$(date -u +%s)" ]; then
		echo "make restore: TIME=$time is in the future: give a time the archive covers" >&2
		exit 2
	fi
	state=$(state_of "${2:-}")
	conf=$state/pgbackrest/pgbackrest.conf
	[ -f "$conf" ] || { echo "make restore: no $conf: no backup was set up for $state" >&2; exit 1; }
	new=${3:-$state/restore/$(date -u -d "$time" +%Y%m%dT%H%M%SZ)}
	path_ok "the restore directory" "$new"
	if [ -e "$new/pg" ] && [ -n "$(ls -A "$new/pg" 2>/dev/null)" ]; then
		echo "make restore: $new/pg already holds a data directory: a restore never writes over one; remove it or name another directory" >&2
		exit 1
	fi
	mkdir -p "$new/pg"
	new=$(cd "$new" && pwd)
	cd /
	chmod 755 "$new"
	chmod 700 "$new/pg"
	is_root && chown postgres:postgres "$new/pg"
	start=$SECONDS
	# the last backup before TIME, then the archived WAL up to TIME; promoted once there
	pgbr "--pg1-path=$new/pg" --type=time "--target=$utc" --target-action=promote restore
	cat <<MSG
make restore: the database as it was at $time ($utc) restored into $new/pg in $((SECONDS - start)) s;
it replays the archived WAL up to that time when it first starts, then takes writes.

  try it on its own socket:   scripts/stack.sh db $new     (stop: scripts/stack.sh stop $new)
                              psql "host=$new/pgsock dbname=courts user=courts"
  run the service on it:      stop make run (Ctrl-C), then
                              mv $state/pg $state/pg.before-restore
                              mv $new/pg $state/pg
                              make run, and make backup (the restored cluster starts a new timeline)
MSG
	;;
*)
	usage
	;;
esac
