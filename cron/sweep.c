/* sweep: the cron sweeper. Tidies what time has decided, in four rules:
 *
 *   1. expired holds:  PENDING_PAYMENT past expires_at -> CANCELLED (PAYMENT_EXPIRED), the
 *                      organizer's PENDING payment CANCELLED, organizer told PAYMENT_EXPIRED;
 *   2. not filled:     OPEN at or past starts_at -> CANCELLED (NOT_FILLED), every active
 *                      player's PAID payments refunded, pending invitations EXPIRED, every
 *                      active player told MATCH_CANCELLED;
 *   3. completion:     MATCHED / CONFIRMED past ends_at -> COMPLETED, every active player told
 *                      MATCH_COMPLETED, one NO_SHOW (-25) per player who did not check in and one
 *                      ATTENDED (+5) per player who did, a 30-day ban on the third no-show
 *                      within 90 days;
 *   4. invitations:    PENDING invitations of requests no longer OPEN, or already started,
 *                      -> EXPIRED.
 *
 * The API never depends on this program (an expired hold is already ignored by slot and
 * create queries); it only moves rows to the state they would be read as.
 *
 * Each rule runs in batches of SWEEP_BATCH rows (default 1000), one transaction per batch,
 * until a batch comes back short. A batch claims its rows with FOR UPDATE SKIP LOCKED and
 * changes them with guarded updates, so two sweepers running at once share the work and never
 * handle a row twice; a row an API request holds is left for the next run. Refunds and
 * reliability events are also unique in the schema, so nothing is ever counted twice.
 *
 * Output: one summary line on stdout and exit 0, or a line on stderr and exit 1. A failure
 * rolls back the batch it happened in; batches already committed stay done.
 * Settings: DATABASE_URL (common/config.h), SWEEP_BATCH (rows per transaction, 1..100000).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "config.h"
#include "db.h"
#include "http.h"
#include "json.h"
#include "log.h"

#define BATCH_DEFAULT	1000
#define BATCH_MAX	100000
#define BATCH_ATTEMPTS	3	/* a batch that lost a deadlock or serialization race is retried */

/* What one batch or the whole run changed. */
struct counts {
	long	expired_holds;
	long	unfilled;
	long	completed;
	long	no_shows;
	long	invitations_expired;
};

/* One rule: runs one batch of at most limit rows inside an open transaction, adds what it
 * changed to c, and returns the number of rows it claimed, or -1 after a database error. */
struct rule {
	const char	*name;
	long		(*batch)(struct req *r, const char *limit, struct counts *c);
};

static long
count_cell(const PGresult *res, int col)
{
	const char *v = db_value(res, 0, col);

	return v != NULL ? strtol(v, NULL, 10) : 0;
}

/* Rule 1. The slot is free for others already (resource_slots and the create endpoint
 * ignore expired holds); this records it. */
static long
batch_expired_holds(struct req *r, const char *limit, struct counts *c)
{
	PGresult *res = db_query(r,
	    "WITH batch AS MATERIALIZED ("
	    "    SELECT id FROM match_requests"
	    "     WHERE status = 'PENDING_PAYMENT' AND expires_at <= now()"
	    "     ORDER BY expires_at"
	    "     LIMIT $1::integer"
	    "     FOR UPDATE SKIP LOCKED"
	    "), held AS ("
	    "    UPDATE match_requests m"
	    "       SET status = 'CANCELLED', cancel_reason = 'PAYMENT_EXPIRED', updated_at = now()"
	    "      FROM batch"
	    "     WHERE m.id = batch.id AND m.status = 'PENDING_PAYMENT'"
	    "    RETURNING m.id, m.organizer_id"
	    "), payment AS ("
	    "    UPDATE payments p"
	    "       SET status = 'CANCELLED', updated_at = now()"
	    "      FROM held"
	    "     WHERE p.match_request_id = held.id AND p.player_id = held.organizer_id"
	    "       AND p.kind = 'PAYMENT' AND p.status = 'PENDING'"
	    "), notice AS ("
	    "    INSERT INTO notifications (recipient_id, type, payload)"
	    "    SELECT organizer_id, 'PAYMENT_EXPIRED', jsonb_build_object('matchRequestId', id)"
	    "      FROM held"
	    ")"
	    "SELECT count(*) FROM held",
	    limit);

	if (res == NULL)
		return -1;
	c->expired_holds += count_cell(res, 0);
	return count_cell(res, 0);
}

/* Rule 2. A refund gives back what the player paid for this match; payments_one_refund_idx
 * makes a second refund of the same player and match impossible, hence DO NOTHING. */
static long
batch_unfilled(struct req *r, const char *limit, struct counts *c)
{
	PGresult *res = db_query(r,
	    "WITH batch AS MATERIALIZED ("
	    "    SELECT id FROM match_requests"
	    "     WHERE status = 'OPEN' AND starts_at <= now()"
	    "     ORDER BY starts_at"
	    "     LIMIT $1::integer"
	    "     FOR UPDATE SKIP LOCKED"
	    "), unfilled AS ("
	    "    UPDATE match_requests m"
	    "       SET status = 'CANCELLED', cancel_reason = 'NOT_FILLED', updated_at = now()"
	    "      FROM batch"
	    "     WHERE m.id = batch.id AND m.status = 'OPEN'"
	    "    RETURNING m.id"
	    "), active AS ("
	    "    SELECT mp.match_request_id, mp.player_id"
	    "      FROM match_players mp JOIN unfilled u ON u.id = mp.match_request_id"
	    "     WHERE mp.left_at IS NULL"
	    "), refund AS ("
	    "    INSERT INTO payments (match_request_id, player_id, kind, amount, currency, status)"
	    "    SELECT p.match_request_id, p.player_id, 'REFUND', sum(p.amount), p.currency,"
	    "           'REFUNDED'"
	    "      FROM payments p JOIN active a USING (match_request_id, player_id)"
	    "     WHERE p.kind = 'PAYMENT' AND p.status = 'PAID'"
	    "     GROUP BY p.match_request_id, p.player_id, p.currency"
	    "    ON CONFLICT (match_request_id, player_id) WHERE kind = 'REFUND' DO NOTHING"
	    "), invitation AS ("
	    "    UPDATE invitations i"
	    "       SET status = 'EXPIRED'"
	    "      FROM unfilled u"
	    "     WHERE i.match_request_id = u.id AND i.status = 'PENDING'"
	    "    RETURNING i.id"
	    "), notice AS ("
	    "    INSERT INTO notifications (recipient_id, type, payload)"
	    "    SELECT player_id, 'MATCH_CANCELLED',"
	    "           jsonb_build_object('matchRequestId', match_request_id, 'reason', 'NOT_FILLED')"
	    "      FROM active"
	    ")"
	    "SELECT (SELECT count(*) FROM unfilled), (SELECT count(*) FROM invitation)",
	    limit);

	if (res == NULL)
		return -1;
	c->unfilled += count_cell(res, 0);
	c->invitations_expired += count_cell(res, 1);
	return count_cell(res, 0);
}

/* Rule 3, first statement: completes the matches, records one reliability event per active
 * player and match (the key of reliability_events turns a repeat into nothing), tells the
 * players, and locks the players rows of the new events (creating missing ones) in id order,
 * so that two sweepers scoring the same player wait for each other instead of deadlocking.
 * Returns the new events as arrays for the second statement. */
static const char sql_complete[] =
    "WITH batch AS MATERIALIZED ("
    "    SELECT id FROM match_requests"
    "     WHERE status IN ('MATCHED', 'CONFIRMED') AND ends_at <= now()"
    "     ORDER BY ends_at"
    "     LIMIT $1::integer"
    "     FOR UPDATE SKIP LOCKED"
    "), completed AS ("
    "    UPDATE match_requests m"
    "       SET status = 'COMPLETED', updated_at = now()"
    "      FROM batch"
    "     WHERE m.id = batch.id AND m.status IN ('MATCHED', 'CONFIRMED')"
    "    RETURNING m.id"
    "), active AS ("
    "    SELECT mp.match_request_id, mp.player_id, mp.checked_in_at IS NOT NULL AS attended"
    "      FROM match_players mp JOIN completed c ON c.id = mp.match_request_id"
    "     WHERE mp.left_at IS NULL"
    "), event AS ("
    "    INSERT INTO reliability_events (player_id, match_request_id, kind, delta)"
    "    SELECT player_id, match_request_id,"
    "           CASE WHEN attended THEN 'ATTENDED' ELSE 'NO_SHOW' END,"
    "           CASE WHEN attended THEN 5 ELSE -25 END"
    "      FROM active"
    "    ON CONFLICT (player_id, match_request_id, kind) DO NOTHING"
    "    RETURNING player_id, match_request_id, kind, delta"
    "), profile AS ("
    "    INSERT INTO players (user_id)"
    "    SELECT DISTINCT player_id FROM event ORDER BY player_id"
    "    ON CONFLICT (user_id) DO UPDATE SET updated_at = now()"
    "), notice AS ("
    "    INSERT INTO notifications (recipient_id, type, payload)"
    "    SELECT player_id, 'MATCH_COMPLETED', jsonb_build_object('matchRequestId', match_request_id)"
    "      FROM active"
    ")"
    "SELECT (SELECT count(*) FROM completed),"
    "       array_agg(player_id), array_agg(match_request_id), array_agg(kind), array_agg(delta)"
    "  FROM event";

/* Rule 3, second statement: applies the new events to the scores (the sum of a batch's
 * events for one player, clamped to 0..100), tells each no-show, and bans a player whose
 * no-shows within 90 days reach three. It runs after the first statement, so its snapshot
 * sees the no-shows a concurrent sweeper committed while this one waited for the player's
 * row, and a third no-show is never missed. */
static const char sql_score[] =
    "WITH event AS ("
    "    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::integer[])"
    "        AS e(player_id, match_request_id, kind, delta)"
    "), total AS ("
    "    SELECT player_id, sum(delta) AS delta, count(*) FILTER (WHERE kind = 'NO_SHOW') AS no_shows"
    "      FROM event GROUP BY player_id"
    "), score AS ("
    "    UPDATE players p"
    "       SET reliability_score = least(100, greatest(0, p.reliability_score + t.delta)),"
    "           no_show_count = p.no_show_count + t.no_shows,"
    "           banned_until = CASE"
    "               WHEN t.no_shows > 0 AND (SELECT count(*) FROM reliability_events r"
    "                                         WHERE r.player_id = p.user_id AND r.kind = 'NO_SHOW'"
    "                                           AND r.created_at > now() - interval '90 days') >= 3"
    "               THEN greatest(p.banned_until, now() + interval '30 days')"
    "               ELSE p.banned_until END,"
    "           updated_at = now()"
    "      FROM total t"
    "     WHERE p.user_id = t.player_id"
    "    RETURNING p.user_id, p.reliability_score"
    "), notice AS ("
    "    INSERT INTO notifications (recipient_id, type, payload)"
    "    SELECT e.player_id, 'NO_SHOW', jsonb_build_object('matchRequestId', e.match_request_id,"
    "           'reliabilityScore', s.reliability_score)"
    "      FROM event e JOIN score s ON s.user_id = e.player_id"
    "     WHERE e.kind = 'NO_SHOW'"
    ")"
    "SELECT count(*) FILTER (WHERE kind = 'NO_SHOW') FROM event";

static long
batch_completed(struct req *r, const char *limit, struct counts *c)
{
	PGresult *res = db_query(r, sql_complete, limit), *score;
	long n;

	if (res == NULL)
		return -1;
	n = count_cell(res, 0);
	if (db_value(res, 0, 1) != NULL) {
		score = db_query(r, sql_score, db_value(res, 0, 1), db_value(res, 0, 2),
		    db_value(res, 0, 3), db_value(res, 0, 4));
		if (score == NULL)
			return -1;
		c->no_shows += count_cell(score, 0);
	}
	c->completed += n;
	return n;
}

/* Rule 4. Rule 2 expires the invitations of what it cancels; this catches the rest: requests
 * cancelled, filled or completed with invitations still pending, and OPEN requests already
 * started that rule 2 skipped because a request held them. */
static long
batch_invitations(struct req *r, const char *limit, struct counts *c)
{
	PGresult *res = db_query(r,
	    "WITH batch AS MATERIALIZED ("
	    "    SELECT i.id FROM invitations i JOIN match_requests m ON m.id = i.match_request_id"
	    "     WHERE i.status = 'PENDING' AND (m.status <> 'OPEN' OR m.starts_at <= now())"
	    "     LIMIT $1::integer"
	    "     FOR UPDATE OF i SKIP LOCKED"
	    "), expired AS ("
	    "    UPDATE invitations i"
	    "       SET status = 'EXPIRED'"
	    "      FROM batch"
	    "     WHERE i.id = batch.id AND i.status = 'PENDING'"
	    "    RETURNING i.id"
	    ")"
	    "SELECT count(*) FROM expired",
	    limit);

	if (res == NULL)
		return -1;
	c->invitations_expired += count_cell(res, 0);
	return count_cell(res, 0);
}

static const struct rule rules[] = {
	{ "expired holds", batch_expired_holds },
	{ "unfilled matches", batch_unfilled },
	{ "completed matches", batch_completed },
	{ "stale invitations", batch_invitations },
};

static void
counts_add(struct counts *total, const struct counts *c)
{
	total->expired_holds += c->expired_holds;
	total->unfilled += c->unfilled;
	total->completed += c->completed;
	total->no_shows += c->no_shows;
	total->invitations_expired += c->invitations_expired;
}

/* Ends a batch: rolls back whatever is still open, clears its results and memory, and
 * leaves r as new for the next batch. */
static void
batch_end(struct req *r)
{
	struct arena *a = r->a;
	const char *id = r->id;

	db_request_end(r);
	arena_reset(a);
	memset(r, 0, sizeof *r);
	r->a = a;
	r->id = id;
}

static bool
retryable(const struct req *r)
{
	const char *state = db_error_sqlstate(r);

	return strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0;
}

/* Runs rule in committed batches until one claims fewer than limit rows (nothing left that
 * another transaction does not hold). Adds what was committed to total. 0, or -1 after
 * reporting the failure on stderr. */
static int
rule_run(struct req *r, const struct rule *rule, long limit, struct counts *total)
{
	char lim[24];
	struct counts c;
	long n = 0;
	int attempt;

	snprintf(lim, sizeof lim, "%ld", limit);
	do {
		for (attempt = 1; ; attempt++) {
			memset(&c, 0, sizeof c);
			if (db_begin(r) == 0 && (n = rule->batch(r, lim, &c)) >= 0 &&
			    db_commit(r) == 0)
				break;
			if (attempt < BATCH_ATTEMPTS && retryable(r)) {
				batch_end(r);
				continue;
			}
			log_msg(r, "error", "%s: batch failed (SQLSTATE %s), rolled back; earlier "
			    "batches stay committed", rule->name, db_error_sqlstate(r));
			batch_end(r);
			return -1;
		}
		batch_end(r);
		counts_add(total, &c);
	} while (n >= limit);
	return 0;
}

static long
batch_size(void)
{
	const char *v = getenv("SWEEP_BATCH");
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return BATCH_DEFAULT;
	n = strtol(v, &end, 10);
	if (*end != '\0' || n < 1 || n > BATCH_MAX) {
		log_msg(NULL, "warn", "SWEEP_BATCH=%s is not a number in 1..%d; using %d", v,
		    BATCH_MAX, BATCH_DEFAULT);
		return BATCH_DEFAULT;
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
	struct req r;
	char id[32];
	long limit;
	size_t i;
	int status = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	log_set_program("sweep");
	snprintf(id, sizeof id, "sweep-%ld", (long)getpid());
	memset(&r, 0, sizeof r);
	r.id = id;
	r.a = arena_new();
	if (r.a == NULL) {
		log_msg(&r, "error", "out of memory");
		return 1;
	}
	/* the db layer answers errors into r like a request; nothing reads those answers */
	json_use_arena(r.a);
	(void)config_get();
	limit = batch_size();
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (rule_run(&r, &rules[i], limit, &total) != 0) {
			status = 1;
			break;
		}
	db_close();
	json_use_arena(NULL);
	arena_free(r.a);
	if (status != 0)
		return status;
	printf("sweep: expired_holds=%ld unfilled=%ld completed=%ld no_shows=%ld "
	    "invitations_expired=%ld elapsed_ms=%ld\n", total.expired_holds, total.unfilled,
	    total.completed, total.no_shows, total.invitations_expired, elapsed_ms(&start));
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
