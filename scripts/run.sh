#!/usr/bin/env bash
# run.sh: `make run`. Starts the private PostgreSQL cluster (var/) and Apache on
# 127.0.0.1:$PORT with the project's apache/ config, shows Apache's error log, and stops
# both on Ctrl-C. DATABASE_URL set in the environment replaces the private cluster.
#
# Before it starts anything it checks what it can (scripts/stack.sh check: the port, the public
# key) and exits non-zero with one line per problem. When the servers' users cannot enter the
# checkout (as root, a clone under /root, which is mode 700), the state lives outside it and
# var/ links there; what it arranged is said in one line "setup: ...".
set -euo pipefail
umask 022
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
courts_path
port=${PORT:-8080}
mode=${MODE:-cgi}
mode_ok "$mode" || exit 2
build=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)

# Why var/ cannot stay in the checkout, if it cannot: both servers' users must enter it, the
# Unix sockets under it (var/apache/run/pool/invitations.sock is the longest) must fit the
# 107 bytes the kernel allows, and mod_fcgid runs no program from a path with a space (the
# programs are then served from a copy in var/).
var_problem() {
	local user
	for user in $(pg_user) $(web_user); do
		can "$user" -x "$root" || { echo "$user cannot enter $root"; return 0; }
	done
	[ ${#root} -le 68 ] || { echo "Unix sockets under $root/var would be too long"; return 0; }
	if [ "$mode" = fastcgi ] && [[ $root == *[[:space:]]* ]]; then
		echo "mod_fcgid cannot start programs from a path with a space"
		return 0
	fi
	return 1
}

# Where var/ goes then: a directory per checkout, named after it, in a place the servers'
# users reach and that survives reboots.
var_home() {
	local base name
	if is_root; then base=/var/lib/courts; else base=${XDG_STATE_HOME:-$HOME/.local/state}/courts; fi
	name=$(printf '%s' "${root##*/}" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-20)
	echo "$base/$name-$(printf '%s' "$root" | sha256sum | cut -c1-8)"
}

state=$root/var
if [ -L "$state" ]; then
	state=$(readlink -f "$state")
	mkdir -p "$state"
	why=$(var_problem) || why="moved by an earlier run"
	setup_note "state in $state, linked from var/ ($why)"
elif why=$(var_problem); then
	target=$(var_home)
	mkdir -p "${target%/*}"
	is_root && chmod 755 "${target%/*}"
	if [ -d "$state" ]; then
		# an earlier run left state here: it moves along (PostgreSQL finds its socket
		# directory again at start)
		if [ -e "$target" ]; then
			echo "make run: both $state and $target hold state ($why): keep one, remove the other, and run again" >&2
			exit 1
		fi
		mv "$state" "$target"
	fi
	mkdir -p "$target"
	ln -s "$target" "$state"
	state=$target
	setup_note "state in $state, linked from var/ ($why)"
fi

[ -n "${DATABASE_URL:-}" ] && export EXTERNAL_DATABASE_URL=$DATABASE_URL
# the cluster archives its WAL with pgBackRest unless PG_ARCHIVE=0 (make backup, make restore)
export PG_ARCHIVE=${PG_ARCHIVE:-1}
# a key pair of the operator's replaces the development one; the programs do not run here
if [ -n "${JWT_PUBLIC_KEY_FILE:-}" ]; then
	[[ $JWT_PUBLIC_KEY_FILE == /* ]] || JWT_PUBLIC_KEY_FILE=$PWD/$JWT_PUBLIC_KEY_FILE
	export JWT_PUBLIC_KEY_FILE
fi
"$root/scripts/stack.sh" check "$state" "$port" || exit 1

stop() {
	trap - INT TERM EXIT
	echo
	echo "stopping Apache and PostgreSQL..."
	"$root/scripts/stack.sh" stop "$state"
	[ -n "${tail_pid:-}" ] && kill "$tail_pid" 2>/dev/null || true
}
trap stop INT TERM EXIT
# under mod_fcgid every program's processes are started before the first burst
# (docs/operations.md, "Plain CGI or FastCGI")
[ "$mode" != fastcgi ] || export FCGID_WARM=${FCGID_WARM:-1}
COURTS_SETUP_NOTES=$(setup_joined) "$root/scripts/stack.sh" start "$state" "$port" "$mode" "$build"

cat <<MSG

courts is running ($mode) on http://127.0.0.1:$port   (Ctrl-C stops Apache and PostgreSQL)

  a development token:   export TOKEN=\$(make -s token SUB=alice ROLES=OWNER)
  a first call:          curl -s -H "Authorization: Bearer \$TOKEN" http://127.0.0.1:$port/api/owner/venues
  health:                curl -s http://127.0.0.1:$port/actuator/health
  the API, for people:   http://127.0.0.1:$port/api/docs (OpenAPI: /api/openapi.json)
  the sweeper, once:     make sweep
  a backup:              make backup   (WAL archived to $state/backup; make restore TIME=...)

Apache's error log follows.
MSG
tail -n 0 -F "$state/apache/logs/error.log" &
tail_pid=$!
pid=$(cat "$state/apache/run/httpd.pid")
while kill -0 "$pid" 2>/dev/null; do sleep 1; done
