#!/usr/bin/env bash
# run.sh: `make run`. Starts the private PostgreSQL cluster (var/) and Apache on
# 127.0.0.1:$PORT with the project's apache/ config, shows Apache's error log, and stops
# both on Ctrl-C. DATABASE_URL set in the environment replaces the private cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/var"
port=${PORT:-8080}
mode=${MODE:-cgi}
build=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)

[ -n "${DATABASE_URL:-}" ] && export EXTERNAL_DATABASE_URL=$DATABASE_URL
# a key pair of the operator's replaces the development one
[ -n "${JWT_PUBLIC_KEY_FILE:-}" ] && export JWT_PUBLIC_KEY_FILE
stop() {
	trap - INT TERM EXIT
	echo
	echo "stopping Apache and PostgreSQL..."
	"$root/scripts/stack.sh" stop "$state"
	[ -n "${tail_pid:-}" ] && kill "$tail_pid" 2>/dev/null || true
}
trap stop INT TERM EXIT
"$root/scripts/stack.sh" start "$state" "$port" "$mode" "$build"

cat <<MSG

courts is running ($mode) on http://127.0.0.1:$port   (Ctrl-C stops Apache and PostgreSQL)

  a development token:   export TOKEN=\$(make -s token SUB=alice ROLES=OWNER)
  a first call:          curl -s -H "Authorization: Bearer \$TOKEN" http://127.0.0.1:$port/api/owner/venues
  health:                curl -s http://127.0.0.1:$port/actuator/health
  the sweeper, once:     make sweep

Apache's error log follows.
MSG
tail -n 0 -F "$state/apache/logs/error.log" &
tail_pid=$!
pid=$(cat "$state/apache/run/httpd.pid")
while kill -0 "$pid" 2>/dev/null; do sleep 1; done
