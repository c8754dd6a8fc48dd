# shellcheck shell=bash
# lib.sh: what the scripts need to know about the machine they run on: a PATH that finds the
# server programs, the users the private servers run as, whether those users can reach a
# path, PostgreSQL's programs, a free port, and a copy of the tree. Sourced by stack.sh,
# run.sh, test.sh, deb.sh, backup.sh, ha.sh, bench/run.sh, bench/restarts.sh and the tests;
# defines functions and SETUP_NOTES only.

# What was arranged on the caller's behalf, said in one line by setup_say.
SETUP_NOTES=()

setup_note() {
	SETUP_NOTES+=("$1")
}

# setup_joined: the notes joined by "; ".
setup_joined() {
	local line="" n
	for n in "${SETUP_NOTES[@]}"; do line+="${line:+; }$n"; done
	printf '%s' "$line"
}

# setup_say [PREFIX]: the notes as one line "PREFIXsetup: a; b", or nothing when there are none.
setup_say() {
	[ ${#SETUP_NOTES[@]} -eq 0 ] || printf '%ssetup: %s\n' "${1:-}" "$(setup_joined)"
}

# Debian gives users other than root a PATH without /usr/sbin and /sbin, where apache2,
# runuser and useradd live.
courts_path() {
	local d added=()
	for d in /usr/sbin /sbin; do
		case ":$PATH:" in
		*":$d:"*) ;;
		*) PATH=$PATH:$d; added+=("$d") ;;
		esac
	done
	export PATH
	[ ${#added[@]} -eq 0 ] || setup_note "${added[*]} added to PATH (apache2 is there)"
}

is_root() {
	[ "$(id -u)" -eq 0 ]
}

# The users the servers run as: PostgreSQL refuses to run as root and Apache's children drop
# root, so as root they are postgres and www-data; otherwise both are the caller.
pg_user() {
	if is_root; then echo postgres; else id -un; fi
}

web_user() {
	if is_root; then echo www-data; else id -un; fi
}

# as_user USER CMD...: runs CMD as USER with its groups (directly when USER is the caller).
as_user() {
	local user=$1
	shift
	if is_root && [ "$user" != root ]; then
		setpriv --reuid="$user" --regid="$user" --init-groups -- "$@"
	else
		"$@"
	fi
}

# pg_bin: the directory of the newest PostgreSQL server programs installed.
pg_bin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] || { echo "PostgreSQL server binaries not found" >&2; exit 1; }
	echo "$d"
}

# as_pg CMD...: CMD as PostgreSQL's user (it refuses to run as root); its data directories,
# and pgBackRest's repository, are that user's.
as_pg() {
	as_user "$(pg_user)" "$@"
}

# pg_owner PATH...: under root, PATH (recursively) becomes PostgreSQL's user's.
pg_owner() {
	if is_root; then chown -R postgres:postgres "$@"; fi
}

# can USER TEST-OPERATOR PATH: whether USER passes `test -r PATH`, `-x`... (every directory
# on the way must let USER through).
can() {
	as_user "$1" test "$2" "$3" 2>/dev/null
}

# Paths are written into Apache's config (in double quotes), PostgreSQL's config and
# connection strings, and sourced shell files: refuse the few characters that would need
# escaping in one of them, with one line naming the path.
path_ok() {
	local what=$1 path=$2
	case $path in
	*[\"\$\`\\]* | *$'\n'*)
		echo "$what $path contains one of \" \$ \` \\ or a newline, which the server configurations cannot hold: use a path without them" >&2
		return 1
		;;
	esac
}

# mode_ok MODE...: each is a run mode the stack knows; one line naming the wrong one if not
# (an unknown mode would otherwise run as plain CGI without a word).
mode_ok() {
	local m
	for m in "$@"; do
		case $m in
		cgi | fastcgi | pool) ;;
		*)
			echo "MODE=$m is not a run mode: use cgi, fastcgi (mod_fcgid) or pool" >&2
			return 1
			;;
		esac
	done
}

# free_port: a port on 127.0.0.1 nothing listens on now, below Linux's ephemeral range
# (32768-60999), so that no client socket can hold it (for the benchmarks' servers). Within
# FREE_PORTS (FIRST-LAST, default 20000-31999): the suite gives each mode it runs side by side
# a range of its own (scripts/test.sh), so that one mode's server cannot take the port another
# has just found free.
free_port() {
	local p lo=${FREE_PORTS:-20000-31999}
	local hi=${lo#*-}
	lo=${lo%-*}
	while :; do
		p=$((lo + RANDOM % (hi - lo + 1)))
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

# tree_tar DIR: on stdout, a tar stream of the files of the checkout DIR that git tracks or
# would track: changes not committed in, what .gitignore names (var/, build/) never, a
# tracked file since deleted left out (scripts/deb.sh, and the tests' copies of the tree)
tree_tar() {
	git -C "$1" ls-files -z -c -o --exclude-standard |
		tar -C "$1" --null -T - --ignore-failed-read -cf - 2>/dev/null
}
