#!/usr/bin/env bats
# Any mode.
# The Debian package as an operator meets it (docs/operations.md, "The Debian package"). It is
# built by scripts/deb.sh with debhelper, and lintian has nothing to say of it. The package of
# the previous version, built from the commit that made the first package (or the newest
# v* tag), goes into a fresh Debian 12 root (debootstrap, then a chroot) with apt-get, with
# PostgreSQL and Apache in the same run. There the database is made once PostgreSQL runs,
# Apache and the pools are started as the package's own files say, and the README's player
# journey runs against it. Then this tree's package upgrades it: the data is kept, the
# database migrated. Then remove and purge, and what stays is checked. Last, the same root,
# without Node.js and with the npm registry unreachable, runs `make run` from a copy of the tree.
#
# The tests follow one another: each takes the root where the one before left it. Apache,
# PostgreSQL and the pools of the root listen on 127.0.0.1 (the pools on Unix sockets) and
# are stopped by their PIDs in teardown_file, whatever happened. A root needs root: a user
# runs these tests through passwordless sudo (tagged needs:root).

load test_helper

# the state of the file's tests, shared by them
DEB=$BATS_FILE_TMPDIR
ROOT=$DEB/root
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO="sudo -n"

setup_file() {
	mkdir -p "$DEB/new" "$DEB/prev"
	: >"$DEB/pids"
	: >"$DEB/servers"
}

teardown_file() {
	# the pools, Apache and PostgreSQL of the root, by their PIDs
	kill_listed "$DEB/pids"
	kill_listed "$DEB/servers"
	sleep 1
	if mountpoint -q "$ROOT/proc" 2>/dev/null; then
		$SUDO umount "$ROOT/proc" || $SUDO umount -l "$ROOT/proc"
	fi
	# the root's files are root's: removed here, never across a file system still mounted
	if [ -d "$ROOT" ] && ! mountpoint -q "$ROOT/proc"; then
		$SUDO rm -rf --one-file-system "$ROOT"
	fi
}

# kill_listed FILE: a TERM to each PID of FILE, one a line (a negative one is a process group:
# make run's)
kill_listed() {
	local pid
	while read -r pid; do
		$SUDO kill -- "$pid" 2>/dev/null || true
	done <"$1"
}

# in_root COMMAND...: COMMAND run as root inside the Debian root, with Debian's PATH and
# no locale of the caller's
in_root() {
	$SUDO env -i PATH="$DEBIAN_ROOT_PATH" LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		chroot "$ROOT" "$@"
}

# root_write FILE [>>]: standard input into FILE of the root (appended with >>)
root_write() {
	if [ "${2:-}" = '>>' ]; then
		in_root sh -c 'cat >>"$1"' sh "$1"
	else
		in_root sh -c 'cat >"$1"' sh "$1"
	fi
}

# root_sql DB QUERY: a query of the root's PostgreSQL, as its superuser
root_sql() {
	in_root runuser -u postgres -- psql -X -q -tA -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

# root_counts: the users, payments and match requests of the root's database, on one line
root_counts() {
	root_sql courts "SELECT count(*) || ' ' || (SELECT count(*) FROM payments) || ' ' ||
	                 (SELECT count(*) FROM match_requests) FROM users"
}

# mirror: the Debian mirror this machine's apt uses, for debootstrap
mirror() {
	local m
	m=$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$m" ] || m=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\/debian\) .*/\2/p' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	echo "${m:-http://deb.debian.org/debian}"
}

# previous: the commit the previous version's package is built from: the newest v* tag, or the
# commit that made the first package
previous() {
	git -C "$COURTS_ROOT" describe --tags --abbrev=0 --match 'v*' HEAD 2>/dev/null ||
		git -C "$COURTS_ROOT" log --format=%H --diff-filter=A -- debian/control | tail -n 1
}

# pools_start: every program's pool as the package's unit says, one per instance its target
# wants, started the way systemd starts a unit (which does not run in a chroot): the
# settings of EnvironmentFile read as root, the Environment lines, UMask, RuntimeDirectory,
# then User and Group with the user's supplementary groups, and ExecStart
pools_start() {
	local unit=$ROOT/lib/systemd/system/courts-pool@.service u name env exec user group mask
	user=$(unit_value "$unit" User)
	group=$(unit_value "$unit" Group)
	mask=$(unit_value "$unit" UMask)
	[ "$(unit_value "$unit" EnvironmentFile)" = -/etc/courts/courts.conf ]
	in_root install -d -o "$user" -g "$group" -m "$(unit_value "$unit" RuntimeDirectoryMode)" \
		"/run/$(unit_value "$unit" RuntimeDirectory)"
	for u in $(unit_value "$ROOT/lib/systemd/system/courts-pools.target" Wants); do
		name=${u#courts-pool@}
		name=${name%.service}
		mapfile -t env < <(unit_words "$(unit_value "$unit" Environment)" |
			sed -e "s|%t|/run|g" -e "s|%i|$name|g")
		mapfile -t exec < <(unit_words "$(unit_value "$unit" ExecStart)" | sed "s|%i|$name|g")
		$SUDO env -i PATH="$DEBIAN_ROOT_PATH" sh -c 'umask "$1"; shift; exec "$@"' sh "$mask" \
			chroot "$ROOT" /usr/lib/courts/courts-env env "${env[@]}" \
			setpriv --reuid="$user" --regid="$group" --init-groups "${exec[@]}" \
			>>"$DEB/pools.log" 2>&1 &
		echo $! >>"$DEB/pids"
	done
}

# pools_stop: the pools started by pools_start, by their PIDs
pools_stop() {
	kill_listed "$DEB/pids"
	: >"$DEB/pids"
	for _ in $(seq 50); do
		[ -z "$(ls -A "$ROOT/run/courts-pool" 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	false
}

# health_up: the root's API answers its health check UP within 10 s
health_up() {
	for _ in $(seq 100); do
		req GET /actuator/health -b "$(cat "$DEB/base")"
		[ "$HTTP_STATUS" = 200 ] && break
		sleep 0.1
	done
	expect 200
	[ "$(jq -r .status <<<"$HTTP_BODY")" = UP ]
}

# bats test_tags=needs:root
@test "the package builds with debhelper, lintian has nothing to say, and it holds what an operator looks for" {
	prev=$(previous)
	[ -n "$prev" ]
	[ "$(git -C "$COURTS_ROOT" rev-parse "$prev")" != "$(git -C "$COURTS_ROOT" rev-parse HEAD)" ] || {
		echo "the previous package's commit is HEAD: nothing to upgrade from"
		false
	}
	# this tree's (deb.sh fails on any line lintian prints), and the previous version's
	run "$COURTS_ROOT/scripts/deb.sh" --out "$DEB/new"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	new=${lines[-1]}
	run "$COURTS_ROOT/scripts/deb.sh" --rev "$prev" --out "$DEB/prev" --no-lint
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	old=${lines[-1]}
	echo "$new" >"$DEB/new.path"
	echo "$old" >"$DEB/prev.path"
	dpkg --compare-versions "$(dpkg-deb -f "$old" Version)" lt "$(dpkg-deb -f "$new" Version)"
	# lintian again, as an operator would run it: not a line
	run lintian --allow-root "$new"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# its conffiles: the settings, the cron jobs, Apache's snippet and module
	[ "$(dpkg-deb --ctrl-tarfile "$new" | tar -xO ./conffiles | sort | tr '\n' ' ')" = \
		"/etc/apache2/conf-available/courts.conf /etc/apache2/mods-available/courts_limits.conf /etc/apache2/mods-available/courts_limits.load /etc/courts/courts.conf /etc/cron.d/courts " ]
	# what the service runs, and nothing of the tests or the benchmarks
	contents=$(dpkg-deb -c "$new" | awk '{print $6}')
	for f in ./usr/lib/courts/cgi-bin/owner.cgi ./usr/lib/courts/cron/sweep ./usr/sbin/courts-db \
		./lib/systemd/system/courts-pool@.service ./lib/systemd/system/courts-pools.target \
		./usr/share/courts/sql/areas/60_lifecycle.sql ./usr/share/courts/scripts/migrate.sh \
		./usr/lib/courts/openapi/openapi.json ./usr/share/man/man8/courts-db.8.gz; do
		grep -qx "$f" <<<"$contents" || { echo "missing: $f"; false; }
	done
	! grep -E 'lifecycle-model|mint-token|/unit/|/fuzz/|node_modules|bench' <<<"$contents" || false
	# every setting the programs read is in the configuration file, with its comment
	conf=$(dpkg-deb --fsys-tarfile "$new" | tar -xO ./etc/courts/courts.conf)
	for name in $(grep -ohE '(config_env_int|env_str|getenv|setting)\("[A-Z_]+"' \
		"$COURTS_ROOT"/common/*.c "$COURTS_ROOT"/cron/*.c | sed 's/.*("//; s/"$//' | sort -u); do
		# (FCGI_LISTEN and COURTS_FCGID_WARM_TOKEN are set by what starts the programs, the
		# units and scripts/stack.sh, not by an operator)
		case $name in FCGI_LISTEN|COURTS_FCGID_WARM_TOKEN|TMPDIR|NOTIFY_WEBHOOK_SECRET) continue ;; esac
		grep -qE "^#?$name=" <<<"$conf" || { echo "not in courts.conf: $name"; false; }
	done
	# the pools run as the package's user, their sockets Apache's group's only
	unit=$(dpkg-deb --fsys-tarfile "$new" | tar -xO ./lib/systemd/system/courts-pool@.service)
	grep -qx 'User=courts' <<<"$unit"
	grep -qx 'Group=www-data' <<<"$unit"
	grep -qx 'UMask=0007' <<<"$unit"
	grep -qx 'ExecStart="/usr/lib/courts/cgi-bin/%i.cgi"' <<<"$unit"
}

# bats test_tags=needs:root
@test "apt-get installs the previous package into a fresh Debian 12 root with PostgreSQL in the same run, and courts-db setup makes the database once PostgreSQL runs" {
	[ -s "$DEB/prev.path" ]
	run $SUDO debootstrap --variant=minbase bookworm "$ROOT" "$(mirror)"
	[ "$status" -eq 0 ] || { echo "$output" | tail -n 20; false; }
	$SUDO mount -t proc proc "$ROOT/proc"
	# a root with no init: services are not started by packages (Debian's policy-rc.d)
	printf '#!/bin/sh\nexit 101\n' | root_write /usr/sbin/policy-rc.d
	in_root chmod 755 /usr/sbin/policy-rc.d
	$SUDO cp "$(cat "$DEB/prev.path")" "$ROOT/tmp/"
	run in_root apt-get update -q
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run in_root apt-get install -y -q "/tmp/$(basename "$(cat "$DEB/prev.path")")"
	echo "$output" | tail -n 30
	[ "$status" -eq 0 ]
	# PostgreSQL came in the same run, and was not running: the install went on, and said so
	[[ "$output" == *"Setting up postgresql-15 "* ]]
	[[ "$output" == *"courts-db: this machine's PostgreSQL is not running"* ]]
	[ "$(in_root dpkg-query -W -f '${Status}' courts)" = "install ok installed" ]
	# the system user, the state directory, the settings readable by it and root only
	[ "$(in_root id -un courts)" = courts ]
	in_root getent passwd courts | grep -q ':/var/lib/courts:/usr/sbin/nologin$'
	[ "$(in_root stat -c '%U:%G %a' /etc/courts/courts.conf)" = "root:courts 640" ]
	[ "$(in_root stat -c '%U:%G %a' /var/lib/courts)" = "courts:courts 750" ]
	# Apache's configuration and the modules it needs enabled, as a2enconf and a2enmod do
	[ -L "$ROOT/etc/apache2/conf-enabled/courts.conf" ]
	for m in courts_limits proxy proxy_fcgi buffer rewrite reqtimeout; do
		[ -L "$ROOT/etc/apache2/mods-enabled/$m.load" ] || { echo "not enabled: $m"; false; }
	done
	# the pools' target enabled, and the crontab in place
	[ -L "$ROOT/etc/systemd/system/multi-user.target.wants/courts-pools.target" ]
	grep -q '^\* \* \* \* \*    courts test -x /usr/lib/courts/cron/sweep' "$ROOT/etc/cron.d/courts"

	# PostgreSQL started (on its socket only), then courts-db setup: role, database, schema
	in_root sed -i "s/^#\{0,1\}listen_addresses = .*/listen_addresses = ''/" /etc/postgresql/15/main/postgresql.conf
	run in_root pg_ctlcluster 15 main start
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	in_root head -n 1 /var/lib/postgresql/15/main/postmaster.pid >>"$DEB/servers"
	run in_root courts-db setup
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"created the role courts"* ]]
	[[ "$output" == *"created the database courts"* ]]
	[ "$(root_sql courts "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'courts'")" = courts ]
	[ "$(root_sql courts "SELECT count(*) FROM schema_migrations")" = \
		"$(find "$ROOT/usr/share/courts/sql" -maxdepth 1 -name '[0-9]*.sql' | wc -l)" ]
	# a second run has nothing to do
	run in_root courts-db setup
	[ "$status" -eq 0 ]
	[[ "$output" != *created* ]]
	# with DATABASE_URL set, that database is used and nothing is created: one that cannot be
	# reached is said so (75, run it again later) and made nowhere
	echo 'DATABASE_URL="host=/var/run/postgresql dbname=elsewhere user=courts"' |
		root_write /etc/courts/courts.conf '>>'
	run in_root courts-db setup
	[ "$status" -eq 75 ]
	[[ "$output" == *"cannot reach the database (DATABASE_URL of /etc/courts/courts.conf)"* ]]
	[ "$(root_sql postgres "SELECT count(*) FROM pg_database WHERE datname = 'elsewhere'")" = 0 ]
	in_root sed -i '/^DATABASE_URL=/d' /etc/courts/courts.conf
}

# bats test_tags=needs:root
@test "Apache and the pools as the package set them up answer the README's player journey" {
	[ -f "$ROOT/usr/sbin/courts-db" ]
	# the identity provider's key: the suite's
	root_write /etc/courts/jwt_public.pem <"$JWT_PUBLIC_KEY_FILE"
	in_root chmod 644 /etc/courts/jwt_public.pem
	pools_start
	port=$(free_port)
	echo "Listen 127.0.0.1:$port" | root_write /etc/apache2/ports.conf
	echo "http://127.0.0.1:$port" >"$DEB/base"
	run in_root apache2ctl configtest
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run in_root apache2ctl start
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	for _ in $(seq 50); do
		[ -s "$ROOT/run/apache2/apache2.pid" ] && break
		sleep 0.1
	done
	cat "$ROOT/run/apache2/apache2.pid" >>"$DEB/servers"
	health_up
	# the sockets are Apache's group's only
	[ "$(in_root stat -c "%U:%G %a" /run/courts-pool/owner.sock)" = "courts:www-data 770" ]
	# Apache's own errors speak problem+json there too, and the API's description is served
	req GET /api/no-such-route -b "$(cat "$DEB/base")"
	expect_problem 404 NOT_FOUND
	req GET /api/openapi.json -b "$(cat "$DEB/base")"
	expect 200
	[ "$HTTP_TYPE" = application/json ]
	# the journey, as written, against the package's server; its checks read the root's database
	sql() { root_sql courts "$1"; }
	readme_journey "$(cat "$DEB/base")"
	[ "$(root_sql courts "SELECT count(*) FROM venues")" -ge 1 ]
	root_counts >"$DEB/counts"
	# nothing the service wrote went to the pools' stderr
	[ ! -s "$DEB/pools.log" ] || { cat "$DEB/pools.log"; false; }
}

# bats test_tags=needs:root
@test "upgrading to this tree's package keeps the data and the operator's settings, migrates the database, and the new programs answer" {
	[ -s "$DEB/counts" ]
	new=$(cat "$DEB/new.path")
	$SUDO cp "$new" "$ROOT/tmp/"
	# an operator's change to the settings is kept across the upgrade
	echo 'MIN_RELIABILITY=40' | root_write /etc/courts/courts.conf '>>'
	# unattended, as an operator upgrades: a changed default never overwrites their file
	run in_root apt-get install -y -q -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "/tmp/$(basename "$new")"
	echo "$output" | tail -n 20
	[ "$status" -eq 0 ]
	[ "$(in_root dpkg-query -W -f '${Version}' courts)" = "$(dpkg-deb -f "$new" Version)" ]
	in_root cat /etc/courts/courts.conf | grep -qx 'MIN_RELIABILITY=40'
	[ "$(in_root stat -c '%U:%G %a' /etc/courts/courts.conf)" = "root:courts 640" ]
	# the data is all there, and the schema is this version's: every migration and area
	[ "$(root_counts)" = "$(cat "$DEB/counts")" ]
	[ "$(root_sql courts "SELECT string_agg(version, ' ' ORDER BY version) FROM schema_migrations")" = \
		"$(cd "$COURTS_ROOT/sql" && ls [0-9]*.sql | sed 's/\.sql$//' | tr '\n' ' ' | sed 's/ $//')" ]
	for a in "$COURTS_ROOT"/sql/areas/*.sql; do
		[ "$(root_sql courts "SELECT sha256 FROM schema_areas WHERE area = '$(basename "$a" .sql)'")" = \
			"$(sha256sum "$a" | cut -d' ' -f1)" ] || { echo "area not at this version: $a"; false; }
	done
	# the new programs answer, with the new configuration of Apache's: the package restarts the
	# pools and reloads Apache through systemd and invoke-rc.d, which a chroot has not: by hand
	pools_stop
	pools_start
	run in_root apache2ctl graceful
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	health_up
	# now this tree's programs
	req GET /actuator/info -b "$(cat "$DEB/base")"
	[ "$(jq -r .build <<<"$HTTP_BODY")" = "$(dpkg-deb -f "$new" Version | sed 's/.*\.g//')" ]
	# a body far too large is refused by its length, before a pool reads it
	run curl -sS -o /dev/null -w '%{http_code} %{content_type}' -H 'Content-Length: 2000000' \
		--data-binary @/dev/null "$(cat "$DEB/base")/api/owner/venues"
	[ "$output" = "413 application/problem+json" ]
	owner=$(BUILD="$(cd "$COURTS_ROOT" && make_build)" make -s -C "$COURTS_ROOT" token SUB=olivia ROLES=OWNER)
	req GET /api/owner/venues -t "$owner" -b "$(cat "$DEB/base")"
	expect 200
	[ "$(jq -r '.[].name' <<<"$HTTP_BODY")" = "Club Sol" ]
}

# bats test_tags=needs:root
@test "remove keeps the data and the settings and turns Apache's configuration off; purge removes the settings and keeps the database" {
	[ -f "$ROOT/usr/sbin/courts-db" ]
	pools_stop
	run in_root apt-get remove -y -q courts
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ ! -e "$ROOT/usr/lib/courts/cgi-bin/owner.cgi" ]
	[ ! -e "$ROOT/etc/apache2/conf-enabled/courts.conf" ]
	[ ! -e "$ROOT/etc/apache2/mods-enabled/courts_limits.load" ]
	# kept: the settings (conffiles), the state directory, the user, the database
	in_root cat /etc/courts/courts.conf | grep -qx 'MIN_RELIABILITY=40'
	[ -f "$ROOT/etc/cron.d/courts" ]
	[ -d "$ROOT/var/lib/courts" ]
	in_root id courts >/dev/null
	[ "$(root_counts)" = "$(cat "$DEB/counts")" ]
	# the kept crontab's jobs do nothing once the programs are gone
	run in_root runuser -u courts -- sh -c "$(sed -n 's/^\* \* \* \* \*    courts //p' "$ROOT/etc/cron.d/courts" | head -n 1)"
	[ "$status" -ne 0 ]
	[ -z "$output" ]

	run in_root apt-get purge -y -q courts
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"the database courts and its role are kept"* ]]
	[ ! -e "$ROOT/etc/courts" ]
	[ ! -e "$ROOT/etc/cron.d/courts" ]
	[ ! -e "$ROOT/etc/apache2/conf-available/courts.conf" ]
	[ ! -e "$ROOT/var/lib/courts" ]
	[ "$(in_root dpkg-query -W -f '${Status}' courts 2>/dev/null || true)" != "install ok installed" ]
	[ "$(root_sql courts "SELECT count(*) FROM users")" = "$(cut -d' ' -f1 "$DEB/counts")" ]
}

# bats test_tags=needs:root
@test "the same Debian root, with no Node.js and the npm registry unreachable, runs make run from a copy of the tree and answers health UP" {
	[ -d "$ROOT/usr" ]
	# what the README asks of a minimal Debian first; nothing of Node.js's, and npm's registry
	# unreachable from the root
	run in_root apt-get install -y -q make
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	printf '127.0.0.1 registry.npmjs.org\n::1 registry.npmjs.org\n' | root_write /etc/hosts '>>'
	! in_root sh -c 'command -v node || command -v npm' || false
	in_root mkdir -p /srv/courts
	tree_tar "$COURTS_ROOT" | $SUDO tar -x -C "$ROOT/srv/courts"
	port=$(free_port)
	# in a session of its own, so that its process group (make, run.sh) is stopped as one; the
	# shared libpq (LEAN=0) spares the root PostgreSQL's server headers and LLVM
	$SUDO env -i PATH="$DEBIAN_ROOT_PATH" LANG=C.UTF-8 setsid chroot "$ROOT" sh -c \
		'echo $$ >/tmp/make-run.pid; cd /srv/courts && exec make run LEAN=0 PORT="$1"' sh "$port" \
		>"$DEB/make-run.log" 2>&1 &
	for _ in $(seq 1200); do
		[ -s "$ROOT/tmp/make-run.pid" ] && break
		sleep 0.1
	done
	echo "-$(cat "$ROOT/tmp/make-run.pid")" >>"$DEB/servers"
	# make run installs what the service needs, builds and starts: up to 15 minutes here
	up=0
	for _ in $(seq 900); do
		if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$port/actuator/health" 2>/dev/null; then
			up=1
			break
		fi
		grep -q '^make: \*\*\*' "$DEB/make-run.log" && break
		sleep 1
	done
	[ $up = 1 ] || { tail -n 40 "$DEB/make-run.log"; false; }
	req GET /actuator/health -b "http://127.0.0.1:$port"
	expect 200
	[ "$(jq -r .status <<<"$HTTP_BODY")" = UP ]
	req GET /api/openapi.json -b "http://127.0.0.1:$port"
	expect 200 application/json
	! in_root sh -c 'command -v node || command -v npm' || false
	! grep -q 'npm ci\|registry\.npmjs' "$DEB/make-run.log" || false
	# a TERM to its process group stops Apache and PostgreSQL, as Ctrl-C does (a job started in
	# the background ignores SIGINT, which its shells cannot trap then)
	$SUDO kill -TERM -- "-$(cat "$ROOT/tmp/make-run.pid")"
	for _ in $(seq 300); do
		grep -q 'stopping Apache and PostgreSQL' "$DEB/make-run.log" &&
			[ "$(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/actuator/health")" = 000 ] &&
			break
		sleep 0.1
	done
	run curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$port/actuator/health"
	[ "$status" -ne 0 ]
}
