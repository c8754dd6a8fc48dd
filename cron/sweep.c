/* sweep: the cron sweeper. Tidies what time has decided, in ten rules, each a transition
 * of sql/areas/60_lifecycle.sql (or of another area) applied to a batch:
 *
 *   1. expired holds:  PENDING_PAYMENT past expires_at -> CANCELLED (PAYMENT_EXPIRED), the
 *                      organizer's pending payment cancelled, organizer told PAYMENT_EXPIRED
 *                      (sweep_expired_holds -> match_end);
 *   2. not filled:     OPEN at or past starts_at -> CANCELLED (NOT_FILLED), the current join
 *                      of every player refunded, pending invitations EXPIRED, every player
 *                      told MATCH_CANCELLED (sweep_unfilled -> match_cancel_unfilled);
 *   3. completion:     MATCHED / CONFIRMED past ends_at -> COMPLETED, every player told
 *                      MATCH_COMPLETED, one NO_SHOW per player who did not check in and one
 *                      ATTENDED per player who did, a ban on repeated no-shows
 *                      (sweep_completed -> match_complete -> reliability_apply);
 *   4. invitations:    PENDING invitations of requests no longer OPEN, or already started,
 *                      -> EXPIRED (sweep_invitations -> invitations_expire);
 *   5. offers:         open offers and hand-overs of a freed place past their expires_at
 *                      -> EXPIRED, the place offered to the next free player on the waiting
 *                      list (a hand-over's, with nobody there, to SUBSTITUTE invitations);
 *                      hand-over windows that closed unfilled -> LAPSED with their deferred
 *                      LATE_ABSENCE, a batch of matches at a time (sweep_offers ->
 *                      match_offers_settle, sql/areas/65_places.sql);
 *   6. results:        PENDING results of matches that ended 48 hours ago -> CONFIRMED,
 *                      a competitive match's ratings moved, the players told
 *                      (sweep_results -> match_result_rate, sql/areas/75_results.sql);
 *   7. retry keys:     Idempotency-Key answers older than 24 hours are forgotten
 *                      (sweep_idempotency_keys, sql/areas/95_sweeper.sql);
 *   8. kept slots:     the search's free slots are kept for UTC yesterday to 14 days ahead:
 *                      past dates forgotten, new ones added and filled a batch of courts
 *                      per transaction (free_slot_dates_keep, sql/areas/30_slots.sql);
 *   9. the provider:   with a payment provider (PAYMENT_PROVIDER), the calls the ledger
 *                      waits for: each PENDING refund sent (POST /v1/refunds, the refund
 *                      row's id as its Idempotency-Key), REFUNDED or FAILED as the provider
 *                      answers, and the PaymentIntent of each share cancelled unpaid
 *                      cancelled there (one that succeeded meanwhile is a late payment,
 *                      refunded in full); a call that gets no answer is tried again by a
 *                      later run, after 30 s doubling up to an hour (payments_due and the
 *                      functions after it, sql/areas/92_payments.sql);
 *  10. kept answers:   the slots answers and owner lists kept for plain CGI that can no
 *                      longer be served (time or a write changed them, their date is past,
 *                      a list was kept 30 days ago) are forgotten (sweep_kept_answers,
 *                      sql/areas/95_sweeper.sql).
 *
 * The API never depends on this program (an expired hold is already ignored by slot and
 * create queries); it only moves rows to the state they would be read as.
 *
 * Each rule runs in batches of SWEEP_BATCH rows (default 1000), one transaction per batch,
 * until a batch comes back short. A batch claims its rows with FOR UPDATE SKIP LOCKED and
 * the transitions are guarded, so two sweepers running at once share the work and never
 * handle a row twice; a row an API request holds is left for the next run. Refunds and
 * reliability events are also unique in the schema, so nothing is ever counted twice.
 *
 * A rule whose batches share no row with each other (1, 4, 7 and 10: each writes only the
 * rows it claimed and rows of theirs) and that finds more than a batch due, a backlog, runs
 * in SWEEP_SESSIONS sessions at once (default 2): this process and helpers forked for that
 * rule, each with a session of its own, claiming batches side by side until they come back
 * short; each helper hands what it committed to this process, which sums the one summary
 * line. One session is bound by one core (about 100 us a lapsed hold on the bench's
 * machine: sql/areas/60_lifecycle.sql's writes and their index entries). The rules that
 * meet in shared rows (a court's day of versions, a player's reliability and rating) stay
 * in one session, where their batches cannot wait for each other.
 *
 * Output: one summary line on stdout and exit 0, or a line on stderr and exit 1. A failure
 * rolls back the batch it happened in; batches already committed stay done.
 * Settings: DATABASE_URL and the payment provider's (common/config.h), SWEEP_BATCH (rows
 * per transaction, 1..100000), SWEEP_SESSIONS (sessions a backlog of the rules above takes,
 * 1..8; 1 keeps every rule in one session).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "payment.h"

#define BATCH_DEFAULT	1000
#define BATCH_MAX	100000
#define SESSIONS_DEFAULT 2
#define SESSIONS_MAX	8
#define BATCH_ATTEMPTS	3	/* a batch that lost a deadlock or serialization race is retried */
#define PROVIDER_BATCH	20	/* calls to the payment provider leased at a time, at most */

/* What one batch or the whole run changed. */
struct counts {
	long	expired_holds;
	long	unfilled;
	long	completed;
	long	no_shows;
	long	invitations_expired;
	long	keys_expired;
	long	slot_dates_added;
	long	answers_forgotten;
	long	offers_lapsed;
	long	results_confirmed;
	long	refunds_sent;
	long	refunds_failed;
	long	intents_cancelled;
	long	provider_retries;
};

/* One rule: runs one batch of at most limit rows inside an open transaction, adds what it
 * changed to c, and returns the number of rows it claimed, or -1 after a database error.
 * A rule runs until a batch claims fewer than limit rows, or with until_none until one
 * does nothing at all (its steps are not all as large as limit). A rule apart writes only
 * rows its batch claimed and rows of those (no two of its batches can wait for each other),
 * so a backlog of it is run in several sessions at once. */
struct rule {
	const char	*name;
	long		(*batch)(struct db *d, const char *limit, struct counts *c);
	bool		until_none;
	bool		apart;
};

/* A child process running a rule's batches beside this one, and the pipe it reports on. */
struct helper {
	pid_t	pid;
	int	fd;
};

static long
count_cell(const PGresult *res, int col)
{
	const char *v = db_value(res, 0, col);

	return v != NULL ? strtol(v, NULL, 10) : 0;
}

static long
batch_expired_holds(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT sweep_expired_holds($1::int)", limit);

	if (res == NULL)
		return -1;
	c->expired_holds += count_cell(res, 0);
	return count_cell(res, 0);
}

static long
batch_unfilled(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT unfilled, invitations_expired FROM sweep_unfilled($1::int)",
	    limit);

	if (res == NULL)
		return -1;
	c->unfilled += count_cell(res, 0);
	c->invitations_expired += count_cell(res, 1);
	return count_cell(res, 0);
}

static long
batch_completed(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT completed, no_shows FROM sweep_completed($1::int)",
	    limit);

	if (res == NULL)
		return -1;
	c->completed += count_cell(res, 0);
	c->no_shows += count_cell(res, 1);
	return count_cell(res, 0);
}

static long
batch_invitations(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT sweep_invitations($1::int)", limit);

	if (res == NULL)
		return -1;
	c->invitations_expired += count_cell(res, 0);
	return count_cell(res, 0);
}

static long
batch_offers(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT settled, lapsed FROM sweep_offers($1::int)", limit);

	if (res == NULL)
		return -1;
	c->offers_lapsed += count_cell(res, 1);
	return count_cell(res, 0);
}

static long
batch_results(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT sweep_results($1::int)", limit);

	if (res == NULL)
		return -1;
	c->results_confirmed += count_cell(res, 0);
	return count_cell(res, 0);
}

static long
batch_keys(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT sweep_idempotency_keys($1::int)", limit);

	if (res == NULL)
		return -1;
	c->keys_expired += count_cell(res, 0);
	return count_cell(res, 0);
}

static long
batch_kept_answers(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res = db_exec(d, "SELECT sweep_kept_answers($1::int)", limit);

	if (res == NULL)
		return -1;
	c->answers_forgotten += count_cell(res, 0);
	return count_cell(res, 0);
}

/* A step of keeping the search's free slots: dates added, or a batch of courts filled on a
 * date (at most 200 per transaction whatever SWEEP_BATCH says: writes wait for it). */
static long
batch_slot_dates(struct db *d, const char *limit, struct counts *c)
{
	PGresult *res;

	(void)limit;
	res = db_exec_n(d, "SELECT dates_added, courts_filled FROM free_slot_dates_keep()", 0, NULL);
	if (res == NULL)
		return -1;
	c->slot_dates_added += count_cell(res, 0);
	return count_cell(res, 0) + count_cell(res, 1);
}

/* One call of rule 9 for payments_due's row: a refund sent, or an intent cancelled, and its
 * outcome applied. 1; 0 when the provider could not be reached (the row is tried again
 * later, and so is the rest of the batch); -1 after a database error. */
static int
provider_call(struct db *d, const struct payment_provider *pp, PGresult *due, int row,
    struct counts *c)
{
	const char *id = db_value(due, row, 0), *kind = db_value(due, row, 1);
	const char *intent = db_value(due, row, 3);
	struct payment_object o;
	struct payment_args args;
	enum payment_call call;

	if (strcmp(kind, "REFUND") == 0) {
		call = pp->refund_create(id, intent != NULL ? intent : "",
		    strtoll(db_value(due, row, 4), NULL, 10), &o);
		if (call == PAYMENT_DOWN)
			goto down;
		if (call == PAYMENT_REFUSED)
			snprintf(o.status, sizeof o.status, "failed");
		if (db_exec(d, "SELECT payment_refund_apply($1, $2::uuid, $3, $4, $5)", pp->name, id,
		    *o.id != '\0' ? o.id : NULL, o.status,
		    call == PAYMENT_REFUSED ? o.why : (*o.reason != '\0' ? o.reason : NULL)) == NULL)
			return -1;
		c->refunds_sent += call == PAYMENT_DONE;
		c->refunds_failed += call == PAYMENT_REFUSED || strcmp(o.status, "failed") == 0;
		return 1;
	}
	call = pp->intent_cancel(intent != NULL ? intent : "", &o);
	if (call == PAYMENT_DOWN)
		goto down;
	/* cancelled already, or unknown there: nothing can charge it */
	if (call == PAYMENT_DONE || strcmp(o.status, "canceled") == 0 ||
	    strcmp(o.reason, "resource_missing") == 0) {
		c->intents_cancelled++;
		return db_exec(d, "SELECT payment_intent_cancelled($1::uuid)", id) != NULL ? 1 : -1;
	}
	if (strcmp(o.status, "succeeded") == 0) {
		/* paid just as the place was freed: a late payment, refunded in full */
		payment_intent_args(pp, &o, &args);
		args.v[1] = intent;
		return db_exec_n(d, PAYMENT_INTENT_APPLY, args.n, args.v) != NULL ? 1 : -1;
	}
down:
	log_msg(NULL, "warning", "payment provider: %s; tried again later", o.why);
	c->provider_retries++;
	return db_exec(d, "SELECT payment_call_failed($1::uuid, $2)", id, o.why) != NULL ? 0 : -1;
}

/* Rule 9: the calls to the payment provider that are due, leased a batch at a time in a
 * transaction of their own (payments_due), each then made with no transaction open, and its
 * outcome applied in one of its own: no row is locked while the provider answers, and its
 * events, which may come before its answer, find their rows free. The run stops at the
 * first call that gets no answer: the provider is down, and the rest waits for a later run
 * (their leases end in five minutes) rather than each waiting out its timeout. 0, or -1
 * after reporting a database failure on stderr. */
static int
provider_run(struct db *d, long limit, struct counts *total)
{
	const struct payment_provider *pp = payment_provider();
	char lim[24];
	PGresult *due;
	int i, n, done = 1;

	if (pp == NULL)
		return 0;
	snprintf(lim, sizeof lim, "%ld", limit < PROVIDER_BATCH ? limit : PROVIDER_BATCH);
	do {
		if ((due = db_exec(d, "SELECT id, kind, provider, intent, minor "
		    "  FROM payments_due($1::int) WHERE provider = $2", lim, pp->name)) == NULL)
			break;
		n = PQntuples(due);
		for (i = 0; i < n && done > 0; i++)
			done = provider_call(d, pp, due, i, total);
		arena_reset(d->a);
		if (done < 0)
			break;
	} while (done > 0 && n == atoi(lim));
	if (done >= 0 && *d->err.sqlstate == '\0')
		return 0;
	log_msg(NULL, "error", "payments at the provider: %s %s", d->err.sqlstate, d->err.message);
	return -1;
}

static const struct rule rules[] = {
	{ "expired holds", batch_expired_holds, false, true },
	{ "unfilled matches", batch_unfilled, false, false },
	{ "completed matches", batch_completed, false, false },
	{ "stale invitations", batch_invitations, false, true },
	{ "lapsed offers", batch_offers, false, false },
	{ "undisputed results", batch_results, false, false },
	{ "old idempotency keys", batch_keys, false, true },
	{ "kept free slots", batch_slot_dates, true, false },
	{ "kept slots answers", batch_kept_answers, false, true },
};

static void
counts_add(struct counts *total, const struct counts *c)
{
	total->expired_holds += c->expired_holds;
	total->unfilled += c->unfilled;
	total->completed += c->completed;
	total->no_shows += c->no_shows;
	total->invitations_expired += c->invitations_expired;
	total->keys_expired += c->keys_expired;
	total->slot_dates_added += c->slot_dates_added;
	total->answers_forgotten += c->answers_forgotten;
	total->offers_lapsed += c->offers_lapsed;
	total->results_confirmed += c->results_confirmed;
	total->refunds_sent += c->refunds_sent;
	total->refunds_failed += c->refunds_failed;
	total->intents_cancelled += c->intents_cancelled;
	total->provider_retries += c->provider_retries;
}

/* Ends a batch: rolls back whatever is still open and clears its results and memory. */
static void
batch_end(struct db *d)
{
	db_end(d);
	arena_reset(d->a);
}

static bool
retryable(const struct db *d)
{
	return strcmp(d->err.sqlstate, "40P01") == 0 || strcmp(d->err.sqlstate, "40001") == 0;
}

/* One committed batch of rule, tried again after a lost deadlock or serialization race.
 * Adds what it committed to total and returns the rows it claimed, or -1 after reporting
 * the failure on stderr. */
static long
batch_run(struct db *d, const struct rule *rule, long limit, struct counts *total)
{
	struct counts c;
	char lim[24];
	long n = 0;
	int attempt;

	snprintf(lim, sizeof lim, "%ld", limit);
	for (attempt = 1; ; attempt++) {
		memset(&c, 0, sizeof c);
		if (db_begin(d) == 0 && (n = rule->batch(d, lim, &c)) >= 0 && db_commit(d) == 0)
			break;
		if (attempt < BATCH_ATTEMPTS && retryable(d)) {
			batch_end(d);
			continue;
		}
		log_msg(NULL, "error", "%s: batch failed, rolled back; earlier batches stay "
		    "committed: %s %s", rule->name, d->err.sqlstate, d->err.message);
		batch_end(d);
		return -1;
	}
	batch_end(d);
	counts_add(total, &c);
	return n;
}

/* Whether a batch that claimed n rows leaves more of rule due. */
static bool
more_due(const struct rule *rule, long n, long limit)
{
	return rule->until_none ? n > 0 : n >= limit;
}

/* Runs batches of rule while the last one, which claimed n rows, leaves more due. 0, or -1
 * after reporting the failure on stderr. */
static int
batches_run(struct db *d, const struct rule *rule, long limit, long n, struct counts *total)
{
	while (more_due(rule, n, limit))
		if ((n = batch_run(d, rule, limit, total)) < 0)
			return -1;
	return 0;
}

/* Forks a helper that forgets this process's session, runs rule's batches in one of its own
 * until they come back short, and writes what it committed to a pipe. false when none could
 * be started (the work is then this process's alone). */
static bool
helper_start(struct db *d, const struct rule *rule, long limit, struct helper *h)
{
	struct counts c = { 0 };
	int p[2], status;

	if (pipe(p) != 0)
		return false;
	(void)fflush(NULL);
	if ((h->pid = fork()) < 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return false;
	}
	if (h->pid > 0) {
		(void)close(p[1]);
		h->fd = p[0];
		return true;
	}
	(void)close(p[0]);
	db_detach();
	/* n = limit: at least one batch */
	status = batches_run(d, rule, limit, limit, &c);
	/* at most PIPE_BUF bytes: written whole or not at all */
	if (status == 0 && write(p[1], &c, sizeof c) != (ssize_t)sizeof c)
		status = -1;
	db_close();
	arena_free(d->a);
	exit(status == 0 ? 0 : 1);
}

/* Waits for a helper of rule and adds what it committed to total. 0, or -1 when it failed
 * (said on stderr, by the helper or here when it could not). */
static int
helper_end(const struct rule *rule, struct helper *h, struct counts *total)
{
	struct counts c;
	ssize_t got;
	int st = 0;

	do
		got = read(h->fd, &c, sizeof c);
	while (got < 0 && errno == EINTR);
	(void)close(h->fd);
	while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof c && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		counts_add(total, &c);
		return 0;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 0)
		log_msg(NULL, "error", "%s: a helper session ended without its report%s", rule->name,
		    WIFSIGNALED(st) ? " (killed by a signal)" : "");
	return -1;
}

/* Runs rule in committed batches until one claims fewer than limit rows (nothing left that
 * another transaction does not hold), or none for an until_none rule; a rule apart whose
 * first batch leaves more due takes up to sessions - 1 helpers. Adds what was committed
 * to total. 0, or -1 after reporting the failure on stderr. */
static int
rule_run(struct db *d, const struct rule *rule, long limit, long sessions,
    struct counts *total)
{
	struct helper helpers[SESSIONS_MAX - 1];
	int started = 0, i, status;
	long n;

	if ((n = batch_run(d, rule, limit, total)) < 0)
		return -1;
	if (rule->apart && more_due(rule, n, limit))
		while (started < sessions - 1 && helper_start(d, rule, limit, &helpers[started]))
			started++;
	status = batches_run(d, rule, limit, n, total);
	for (i = 0; i < started; i++)
		if (helper_end(rule, &helpers[i], total) != 0)
			status = -1;
	return status;
}

/* A whole-number setting in 1..max, def when unset or not one (with a warning). */
static long
setting(const char *name, long def, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return def;
	n = strtol(v, &end, 10);
	if (*end != '\0' || n < 1 || n > max) {
		log_msg(NULL, "warn", "%s=%s is not a number in 1..%ld; using %ld", name, v, max,
		    def);
		return def;
	}
	return n;
}

static long
elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - start->tv_sec) * 1000 +
	    (now.tv_nsec - start->tv_nsec) / 1000000;
}

int
main(void)
{
	struct timespec start;
	struct counts total = { 0 };
	struct arena *a;
	struct db d;
	long limit, sessions;
	size_t i;
	int status = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	log_set_program("sweep");
	if ((a = arena_new()) == NULL) {
		log_msg(NULL, "error", "out of memory");
		return 1;
	}
	db_init(&d, a);
	(void)config_get();
	limit = setting("SWEEP_BATCH", BATCH_DEFAULT, BATCH_MAX);
	sessions = setting("SWEEP_SESSIONS", SESSIONS_DEFAULT, SESSIONS_MAX);
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (rule_run(&d, &rules[i], limit, sessions, &total) != 0) {
			status = 1;
			break;
		}
	if (status == 0 && provider_run(&d, limit, &total) != 0)
		status = 1;
	db_close();
	arena_free(a);
	if (status != 0)
		return status;
	printf("sweep: expired_holds=%ld unfilled=%ld completed=%ld no_shows=%ld "
	    "invitations_expired=%ld offers_lapsed=%ld results_confirmed=%ld "
	    "idempotency_keys_expired=%ld slot_dates_added=%ld kept_answers_forgotten=%ld "
	    "refunds_sent=%ld refunds_failed=%ld intents_cancelled=%ld provider_retries=%ld "
	    "elapsed_ms=%ld\n",
	    total.expired_holds, total.unfilled, total.completed, total.no_shows,
	    total.invitations_expired, total.offers_lapsed, total.results_confirmed,
	    total.keys_expired, total.slot_dates_added, total.answers_forgotten, total.refunds_sent,
	    total.refunds_failed,
	    total.intents_cancelled, total.provider_retries, elapsed_ms(&start));
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
