/* reconcile: the ledger against the payment provider's books.
 *
 * Reads the provider's events of the last RECONCILE_DAYS days (default 3; Stripe keeps 30),
 * newest first a page at a time (GET /v1/events, paged with starting_after), and applies
 * each one the ledger has not applied yet exactly as its webhook would have been
 * (payment_event_apply, sql/areas/92_payments.sql): a webhook that never arrived is made
 * good, one that did is a DUPLICATE and changes nothing. Then prints every difference
 * between the ledger and the provider that nobody has settled (payment_issues_open): money
 * taken for no share of the ledger, a payment of another amount than its share, a refund the
 * provider refused.
 *
 * Output: a summary line on stdout (the crontab sends it to syslog) and one line per
 * difference on stderr (mailed by cron: a human settles each), exit 0; or a line on stderr
 * and exit 1 (the provider or the database cannot be reached; what was applied stays).
 * With PAYMENT_PROVIDER=none there is nothing to reconcile: it does nothing, silently.
 * Settings: DATABASE_URL and the payment provider's (common/config.h), RECONCILE_DAYS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "payment.h"

#define PAGE		100
#define DAYS_DEFAULT	3
#define DAYS_MAX	30	/* what Stripe keeps */

/* Applies event e, as its webhook would be; its outcome, or NULL after a database error. */
static const char *
apply(struct db *d, const struct payment_provider *pp, const struct payment_event *e)
{
	struct payment_args args;
	PGresult *res;

	payment_event_args(pp, e, &args);
	res = db_exec_n(d, PAYMENT_EVENT_APPLY, args.n, args.v);
	return res != NULL ? db_value(res, 0, 0) : NULL;
}

int
main(void)
{
	const struct payment_provider *pp;
	static struct payment_event page[PAGE];
	char after[256] = "", why[256];
	struct timespec start, now;
	struct arena *a;
	struct db d;
	long events = 0, applied = 0, already = 0, differences = 0;
	long long since;
	bool more = true;
	int n, i, status = 0;
	PGresult *res;

	clock_gettime(CLOCK_MONOTONIC, &start);
	log_set_program("reconcile");
	if ((pp = payment_provider()) == NULL)
		return 0;	/* no money is taken online */
	if ((a = arena_new()) == NULL) {
		log_msg(NULL, "error", "out of memory");
		return 1;
	}
	db_init(&d, a);
	since = (long long)time(NULL) -
	    86400LL * config_env_int("RECONCILE_DAYS", DAYS_DEFAULT, 1, DAYS_MAX);
	while (more && status == 0) {
		if (pp->events_list(after, since, page, PAGE, &n, &more, why, sizeof why) !=
		    PAYMENT_DONE) {
			log_msg(NULL, "error", "payment provider: %s; what was applied stays", why);
			status = 1;
			break;
		}
		for (i = 0; i < n && status == 0; i++) {
			const char *outcome = apply(&d, pp, &page[i]);

			if (outcome == NULL) {
				log_msg(NULL, "error", "event %s: %s %s", page[i].id, d.err.sqlstate,
				    d.err.message);
				status = 1;
				break;
			}
			events++;
			if (strcmp(outcome, "DUPLICATE") == 0)
				already++;
			else
				applied++;
			arena_reset(a);
		}
		if (n == 0)
			break;
		snprintf(after, sizeof after, "%s", page[n - 1].id);
	}
	if (status == 0) {
		if ((res = db_exec_n(&d, "SELECT kind, line FROM payment_issues_open()", 0, NULL)) ==
		    NULL) {
			log_msg(NULL, "error", "%s %s", d.err.sqlstate, d.err.message);
			status = 1;
		} else {
			for (i = 0; i < PQntuples(res); i++)
				fprintf(stderr, "reconcile: difference %s: %s\n",
				    db_value(res, i, 0), db_value(res, i, 1));
			differences = PQntuples(res);
		}
	}
	db_close();
	arena_free(a);
	if (status != 0)
		return status;
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("reconcile: events=%ld applied=%ld already_applied=%ld differences=%ld "
	    "elapsed_ms=%ld\n", events, applied, already, differences,
	    (long)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
