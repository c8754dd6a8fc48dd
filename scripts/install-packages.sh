#!/bin/sh
# install-packages.sh: installs the Debian packages given that are missing (as root, or through
# sudo), in one apt-get run; a no-op when all are there. With --node first, Node.js and npm
# too, unless the machine has a node and an npm of its own (NodeSource's nodejs includes npm).
#   usage: scripts/install-packages.sh [--node] PACKAGE...
#
# A pgbouncer it installs is left stopped and disabled: Debian's package starts a system
# service, and the project starts its own (PGBOUNCER=1) on the ports it chooses.
set -eu

node=0
if [ "${1:-}" = --node ]; then
	node=1
	shift
fi
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ $node = 1 ] && ! { command -v node >/dev/null && command -v npm >/dev/null; }; then
	missing="$missing nodejs npm"
fi
[ -n "$missing" ] || exit 0
echo "installing:$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
# shellcheck disable=SC2086 # one word per package
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
case " $missing " in
*" pgbouncer "*)
	if command -v systemctl >/dev/null && systemctl is-enabled -q pgbouncer 2>/dev/null; then
		echo "setup: the system's pgbouncer service left stopped and disabled (the project" \
			"starts its own with PGBOUNCER=1)"
		$SUDO systemctl disable -q pgbouncer
		if [ -d /run/systemd/system ]; then
			$SUDO systemctl stop pgbouncer
		elif $SUDO service pgbouncer status >/dev/null 2>&1; then
			$SUDO service pgbouncer stop >/dev/null
		fi
	fi
	;;
esac
