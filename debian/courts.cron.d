# /etc/cron.d/courts: the jobs of the courts service, as the user courts, with the settings of
# /etc/courts/courts.conf (docs/operations.md, "Operations"). Each summary line goes to
# syslog; a failure writes its line to stderr, which cron mails to MAILTO.
#   every minute: the sweeper (holds past their window, matches started or ended, refunds
#                 sent) and the notifications' deliverer (nothing while NOTIFY_WEBHOOK_URL
#                 is unset)
#   every 15 min: the identity provider's keys (nothing while JWT_JWKS_URL is unset)
#   every hour:   reconciliation with the payment provider (nothing with PAYMENT_PROVIDER=none)
# flock -n lets one run of each at a time; the programs' test keeps the jobs quiet once the
# package is removed and this file is kept.
SHELL=/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
MAILTO=root

* * * * *    courts test -x /usr/lib/courts/cron/sweep && flock -n /run/lock/courts-sweep.lock /usr/lib/courts/courts-env /usr/lib/courts/cron/sweep | logger -t courts-sweep -p cron.info
* * * * *    courts test -x /usr/lib/courts/cron/deliver && flock -n /run/lock/courts-deliver.lock /usr/lib/courts/courts-env /usr/lib/courts/cron/deliver | logger -t courts-deliver -p cron.info
*/15 * * * * courts test -x /usr/lib/courts/cron/jwks-refresh && /usr/lib/courts/courts-env /usr/lib/courts/cron/jwks-refresh
17 * * * *   courts test -x /usr/lib/courts/cron/reconcile && /usr/lib/courts/courts-env /usr/lib/courts/cron/reconcile | logger -t courts-reconcile -p cron.info
