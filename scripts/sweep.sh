#!/usr/bin/env bash
# sweep.sh: `make sweep`, `make deliver` and `make reconcile`. Runs a cron program once (the
# sweeper, the deliverer, the reconciliation) against the database of `make run` (or
# DATABASE_URL when set).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${DATABASE_URL:-}" ]; then
	[ -f "$root/var/env" ] || { echo "$(basename "$1"): no var/env; start the service with make run" >&2; exit 1; }
	# shellcheck disable=SC1091
	. "$root/var/env"
fi
exec "$1"
