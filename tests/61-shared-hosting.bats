#!/usr/bin/env bats
# Shared hosting, proven: what a typical host gives (an unprivileged account whose
# public_html a plain-CGI Apache serves with .htaccess allowed only what the documents say,
# and a crontab), the "Shared hosting" blocks of docs/operations.md run as written by that
# account, then the README's player journey through /courts/api, Authorization with and without CGIPassAuth,
# and the sweeper from the crontab's line, run the way cron runs it. The host's Apache is its
# own (plain CGI, as on a shared host), whatever the suite's mode:
# Any mode.

load test_helper

setup_file() {
	HOST_DIR=$COURTS_STATE/hosting
	mkdir -p "$HOST_DIR"
	chmod 755 "$HOST_DIR"
	ACCOUNT_HOME=$HOST_DIR/home
	# the account: a throwaway one under root, else the caller itself
	ACCOUNT=$(throwaway_user courts-h "$ACCOUNT_HOME" "$HOST_DIR")
	export HOST_DIR ACCOUNT ACCOUNT_HOME
	# what the host made: the home (others may only pass), public_html the server reads
	mkdir -p "$ACCOUNT_HOME/public_html" "$ACCOUNT_HOME/keys" "$ACCOUNT_HOME/checkout/build"
	# what the account uploaded: the checkout with its build, the identity provider's key
	cp -R "$COURTS_ROOT/apache" "$ACCOUNT_HOME/checkout/"
	cp -R "$COURTS_BUILD/cgi-bin" "$COURTS_BUILD/cron" "$COURTS_BUILD/openapi" \
		"$ACCOUNT_HOME/checkout/build/"
	cp "$JWT_PUBLIC_KEY_FILE" "$ACCOUNT_HOME/keys/jwt_public.pem"
	[ "$(id -u)" -ne 0 ] || chown -R "$ACCOUNT:" "$ACCOUNT_HOME"
	chmod 711 "$ACCOUNT_HOME"
	chmod 755 "$ACCOUNT_HOME/public_html" "$ACCOUNT_HOME/keys"
	chmod 644 "$ACCOUNT_HOME/keys/jwt_public.pem"

	# the README's two blocks, as the account, with this suite's settings for the README's
	run_readme_blocks
	HOST_URL=$(shared_host_apache hosting "$ACCOUNT_HOME/public_html")
	export HOST_URL
}

teardown_file() {
	[ -z "${HOST_DIR:-}" ] || throwaway_user_remove "$HOST_DIR"
}

setup() {
	reset_db
}

# readme_block TITLE: the shell block of docs/operations.md whose first line is "# TITLE".
readme_block() {
	awk -v first="# $1" '
		/^```sh$/ { code = 1; n = 0; next }
		code && /^```$/ { code = 0; if (mine) exit; next }
		code && n++ == 0 { mine = ($0 == first) }
		code && mine { print }' "$COURTS_ROOT/docs/operations.md"
}

# as_account CMD...: CMD as the account, with a login's environment (HOME, Debian's PATH).
as_account() {
	as_login "$ACCOUNT" "$ACCOUNT_HOME" "$@"
}

# run_readme_blocks: the settings block with every variable it names given this suite's value,
# then the steps block as written, from the uploaded checkout. There is no cron daemon here:
# `crontab` keeps the account's table in ~/crontab.txt.
run_readme_blocks() {
	local settings steps vars
	settings=$(readme_block 'shared hosting: the settings')
	steps=$(readme_block 'shared hosting: the steps')
	[ -n "$settings" ] && [ -n "$steps" ] || { echo "README blocks not found" >&2; return 1; }
	# the README names these settings, and only these
	vars=$(sed -n 's/^\([a-z_]*\)=.*/\1/p' <<<"$settings" | tr '\n' ' ')
	[ "$vars" = "site base database_url public_key issuer audience " ] ||
		{ echo "README settings: $vars" >&2; return 1; }
	as_account bash -c '
		set -euo pipefail
		crontab() {
			case $1 in
			-l) cat ~/crontab.txt 2>/dev/null ;;
			-) cat >~/crontab.txt.new && mv ~/crontab.txt.new ~/crontab.txt ;;
			esac
		}
		site=$HOME/public_html/courts
		base=/courts
		database_url=$1
		public_key=$HOME/keys/jwt_public.pem
		issuer=$2
		audience=$3
		cd ~/checkout
		eval "$4"
		# a second run (an update) leaves one job, not two
		eval "$4"' \
		_ "$DATABASE_URL" "${JWT_ISSUER:-https://auth.courts.local/}" "${JWT_AUDIENCE:-courts-api}" \
		"$steps" >"$HOST_DIR/steps.log" 2>&1 || { cat "$HOST_DIR/steps.log" >&2; return 1; }
}

# htaccess_edit SED: the account edits its .htaccess in place.
htaccess_edit() {
	as_account sed -i "$1" "$ACCOUNT_HOME/public_html/courts/.htaccess"
}

@test "the README's steps, run by the account, leave the site, its .htaccess and the crontab they describe" {
	local site=$ACCOUNT_HOME/public_html/courts
	[ "$(stat -c %U "$site/.htaccess")" = "$ACCOUNT" ]
	[ "$(find "$site/app" -name '*.cgi' -perm -o+x | wc -l)" = "$(ls "$COURTS_BUILD"/cgi-bin/*.cgi | wc -l)" ]
	[ -f "$site/courts-errors/404.json" ]
	[ -f "$site/openapi/openapi.json" ]
	# the settings, once each, and Apache's own errors under the base path
	[ "$(grep -c '^SetEnv ' "$site/.htaccess")" = 5 ]
	grep -qx 'SetEnv BASE_PATH "/courts"' "$site/.htaccess"
	grep -qx 'ErrorDocument 404 /courts/courts-errors/404.json' "$site/.htaccess"
	! grep -q '^ErrorDocument [0-9]* /courts-errors/' "$site/.htaccess" || false
	# two runs, one job: the setting line and the job line
	[ "$(grep -c 'courts-cron/sweep' "$ACCOUNT_HOME/crontab.txt")" = 1 ]
	grep -qx "\\* \\* \\* \\* \\* $ACCOUNT_HOME/courts-cron/sweep >/dev/null" "$ACCOUNT_HOME/crontab.txt"
	[ -x "$ACCOUNT_HOME/courts-cron/sweep" ]
	# the server's configuration holds nothing of the project
	! grep -qE "SetEnv|PassEnv|CGIPassAuth|ScriptAlias|Fcgid|$COURTS_ROOT" \
		"$COURTS_STATE/extra-hosting/apache/httpd.conf" || false
}

@test "through that site the README's player journey runs end to end under /courts" {
	readme_journey "$HOST_URL/courts"
	req GET /actuator/health -b "$HOST_URL/courts"
	expect 200
	# the programs are not reachable where they lie, nor is .htaccess with its settings
	req GET /app/owner.cgi -b "$HOST_URL/courts"
	expect_problem 403 FORBIDDEN
	expect_log apache 'AH01630: client denied by server configuration: .*/public_html/courts/\.htaccess'
	req GET /.htaccess -b "$HOST_URL/courts"
	expect_problem 403 FORBIDDEN
	! grep -q 'DATABASE_URL' <<<"$HTTP_BODY" || false
	req GET /api/nothing-here -b "$HOST_URL/courts"
	expect_problem 404 NOT_FOUND
}

@test "Authorization reaches the programs with CGIPassAuth, and without it through the rewrite rule" {
	local owner site=$ACCOUNT_HOME/public_html/courts
	owner=$(token olivia OWNER)
	as_account cp "$site/.htaccess" "$site/.htaccess.orig"
	req GET /api/owner/venues -b "$HOST_URL/courts" -t "$owner"
	expect 200
	# an Apache without CGIPassAuth: the README says delete the line
	htaccess_edit '/^CGIPassAuth On$/d'
	! grep -q '^CGIPassAuth' "$site/.htaccess" || false
	req GET /api/owner/venues -b "$HOST_URL/courts" -t "$owner"
	expect 200
	req GET /api/owner/venues -b "$HOST_URL/courts" -t "$(token ana)"
	expect_problem 403 FORBIDDEN
	req GET /api/owner/venues -b "$HOST_URL/courts"
	expect_problem 401 UNAUTHORIZED
	# and it is that rule that carries it: without either, no token reaches them
	htaccess_edit '/^RewriteRule \^ - \[E=HTTP_AUTHORIZATION:/d'
	! grep -q '^RewriteRule.*HTTP_AUTHORIZATION' "$site/.htaccess" || false
	req GET /api/owner/venues -b "$HOST_URL/courts" -t "$owner"
	expect_problem 401 UNAUTHORIZED
	as_account mv "$site/.htaccess.orig" "$site/.htaccess"
	req GET /api/owner/venues -b "$HOST_URL/courts" -t "$owner"
	expect 200
}

@test "the sweeper runs from the crontab's line as the account, its setting from the crontab itself" {
	local court env=() cmd line
	court=$(fixture_court "$(fixture_venue olivia)")
	fixture_hold "$court" "$(local_date 2)" 10:00 11:30 PENDING_PAYMENT "now() - interval '1 minute'"
	# as cron does: NAME="value" lines into the environment (quotes taken off), then each
	# job's command through /bin/sh with HOME, LOGNAME, SHELL and a short PATH
	while IFS= read -r line; do
		if [[ $line =~ ^([A-Z_]+)=\"(.*)\"$ ]]; then
			env+=("${BASH_REMATCH[1]}=${BASH_REMATCH[2]}")
		elif [[ $line =~ ^\*\ \*\ \*\ \*\ \*\ (.*)$ ]]; then
			cmd=${BASH_REMATCH[1]}
		fi
	done <"$ACCOUNT_HOME/crontab.txt"
	[ "${#env[@]}" -ge 1 ]
	[ -n "$cmd" ]
	run as_account env -i HOME="$ACCOUNT_HOME" LOGNAME="$ACCOUNT" SHELL=/bin/sh PATH=/usr/bin:/bin \
		"${env[@]}" /bin/sh -c "$cmd"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(sql "SELECT status || ' ' || cancel_reason FROM match_requests")" = "CANCELLED PAYMENT_EXPIRED" ]
}
