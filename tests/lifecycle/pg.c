/* pg.c: the model test's side of the database: connections, statements sent together in one
 * round trip, the set-up rows of a sequence (users, player profiles, a venue and its courts,
 * written directly: they are not what is under test), the outcome of a lifecycle call, and
 * sweeper runs on one or two connections at once. Every value travels as a parameter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

/* Statements prepared on each connection, by SQL text: the model runs a few statements
 * tens of thousands of times, and planning the state query costs more than running it. */
#define PREPARED_MAX	64
static struct {
	PGconn		*c;
	const char	*sql;
} prepared[PREPARED_MAX];
static int nprepared;

#define NO_WAIT	"-c synchronous_commit=off"

static PGconn *
connect_one(const char *conninfo, const char *options)
{
	const char *const keys[] = { "dbname", "application_name", "options", NULL };
	const char *const values[] = { conninfo, "lifecycle-model", options, NULL };
	PGconn *c = PQconnectdbParams(keys, values, 1);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "lifecycle-model: cannot connect: %s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	return c;
}

int
pg_open(struct pg *g, const char *conninfo)
{
	memset(g, 0, sizeof *g);
	/* no session waits for the disk at commit: a test database need not survive a crash.
	 * The calls and the state read after each share a connection, so that both go in one
	 * round trip, planned once: the state query's custom plans cost more to make than to
	 * run, and a plan changes how a function runs, never what it does */
	if ((g->main = connect_one(conninfo,
	        NO_WAIT " -c plan_cache_mode=force_generic_plan")) == NULL ||
	    (g->sweeper[0] = connect_one(conninfo, NO_WAIT)) == NULL ||
	    (g->sweeper[1] = connect_one(conninfo, NO_WAIT)) == NULL) {
		pg_close(g);
		return -1;
	}
	return 0;
}

void
pg_close(struct pg *g)
{
	nprepared = 0;
	PQfinish(g->main);
	PQfinish(g->sweeper[0]);
	PQfinish(g->sweeper[1]);
	memset(g, 0, sizeof *g);
}

/* Name of sql prepared on c (prepared now if new), or NULL to run it unprepared. */
static const char *
statement(PGconn *c, const char *sql, char *name, size_t len)
{
	PGresult *res;
	int i;

	for (i = 0; i < nprepared; i++)
		if (prepared[i].c == c && strcmp(prepared[i].sql, sql) == 0)
			break;
	snprintf(name, len, "m%d", i);
	if (i < nprepared)
		return name;
	if (nprepared == PREPARED_MAX) {
		fprintf(stderr, "lifecycle-model: more than %d statements to prepare\n", PREPARED_MAX);
		return NULL;
	}
	res = PQprepare(c, name, sql, 0, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "lifecycle-model: %s  in: %.200s\n", PQresultErrorMessage(res), sql);
		PQclear(res);
		return NULL;
	}
	PQclear(res);
	prepared[nprepared].c = c;
	prepared[nprepared++].sql = sql;
	return name;
}

/* Runs sql with text parameters, prepared; the result is the caller's. */
static PGresult *
pg_run(PGconn *c, const char *sql, int n, const char *const *params)
{
	char buf[16];
	const char *name = statement(c, sql, buf, sizeof buf);

	if (name == NULL)
		return PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	return PQexecPrepared(c, name, n, params, NULL, NULL, 0);
}

/* Runs sql with text parameters; the result is the caller's to PQclear, or NULL after
 * reporting a failure on stderr (for statements that must not fail). */
PGresult *
pg_exec(PGconn *c, const char *sql, int n, const char *const *params)
{
	PGresult *res = pg_run(c, sql, n, params);
	ExecStatusType st = PQresultStatus(res);

	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
		return res;
	fprintf(stderr, "lifecycle-model: %s\n  in: %.200s\n", PQresultErrorMessage(res), sql);
	PQclear(res);
	return NULL;
}

/* Sends the n statements in one round trip, each in a transaction of its own (one that
 * fails stops none of the others), and puts their results in res, the caller's to PQclear.
 * 0, or -1 when the connection failed (the results are then NULL). */
int
pg_pipeline(PGconn *c, const struct stmt *st, int n, PGresult **res)
{
	char names[PIPELINE_MAX][16];
	PGresult *r;
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		res[i] = NULL;
		/* prepared now: nothing that waits for an answer may run inside the pipeline */
		if (statement(c, st[i].sql, names[i], sizeof names[i]) == NULL)
			return -1;
	}
	if (!PQenterPipelineMode(c))
		return -1;
	for (i = 0; i < n; i++)
		if (!PQsendQueryPrepared(c, names[i], st[i].n, st[i].params, NULL, NULL, 0) ||
		    !PQpipelineSync(c))
			rc = -1;
	for (i = 0; rc == 0 && i < n; i++) {
		res[i] = PQgetResult(c);
		while ((r = PQgetResult(c)) != NULL)	/* the end of this statement's results */
			PQclear(r);
		while ((r = PQgetResult(c)) != NULL && PQresultStatus(r) != PGRES_PIPELINE_SYNC)
			PQclear(r);
		if (r == NULL)
			rc = -1;
		PQclear(r);
	}
	(void)PQexitPipelineMode(c);
	return rc != 0 || PQstatus(c) != CONNECTION_OK ? -1 : 0;
}

/* The outcome of a lifecycle call from its result, which it consumes. */
void
pg_outcome(PGconn *c, PGresult *res, struct outcome *o)
{
	const char *state, *msg, *constraint;

	memset(o, 0, sizeof *o);
	if (PQresultStatus(res) == PGRES_TUPLES_OK) {
		if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
			snprintf(o->value, sizeof o->value, "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		return;
	}
	state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	constraint = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
	if (state != NULL && strncmp(state, "CR", 2) == 0 && msg != NULL)
		snprintf(o->code, sizeof o->code, "%s", msg);
	else if (state != NULL && strcmp(state, "23P01") == 0 && constraint != NULL &&
	    strcmp(constraint, "match_requests_no_double_booking") == 0)
		snprintf(o->code, sizeof o->code, "SLOT_TAKEN");
	else
		snprintf(o->code, sizeof o->code, "SQLSTATE %s: %s", state != NULL ? state : "-",
		    msg != NULL ? msg : PQerrorMessage(c));
	PQclear(res);
}

/* t as a timestamptz literal in UTC, for a parameter. */
const char *
pg_time(long long t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S+00", &tm);
	return buf;
}

static long long
first_number(PGresult *res)
{
	long long v = -1;

	if (res != NULL && PQntuples(res) > 0)
		v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

long long
pg_now(struct pg *g)
{
	return first_number(pg_exec(g->main, "SELECT extract(epoch FROM now())::bigint", 0, NULL));
}

/* Venues already in the database: each sequence's place on the map is counted from here, so
 * a sequence never shares its neighbourhood with one that ran before it. */
long
pg_location_base(struct pg *g)
{
	return (long)first_number(pg_exec(g->main, "SELECT count(*) FROM venues", 0, NULL));
}

/* items as a PostgreSQL array literal "{a,b,...}" (numbers and plain words only). */
static void
array_text(char *buf, size_t len, int n, const char *const *items)
{
	size_t used = 0;
	int i;

	used += (size_t)snprintf(buf + used, len - used, "{");
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i > 0 ? "," : "",
		    items[i]);
	if (used < len)
		snprintf(buf + used, len - used, "}");
}

static const char players_sql[] =
    "WITH x AS (SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[], $4::bool[]) "
    "                         WITH ORDINALITY AS x(skill, lat, lng, notif, n)), "
    "g AS (SELECT gen_random_uuid() AS id, x.* FROM x), "
    "u AS (INSERT INTO users (id, issuer, subject) "
    "      SELECT id, 'lifecycle-model', id::text FROM g), "
    "p AS (INSERT INTO players (user_id, display_name, skill_level, home_latitude, "
    "                           home_longitude, match_notifications) "
    "      SELECT id, 'model player ' || n, skill, lat, lng, notif FROM g) "
    "SELECT id FROM g ORDER BY n";

/* venues in UTC: a slot's local date and time are then its instant's */
static const char courts_sql[] =
    "WITH o AS (INSERT INTO users (issuer, subject) "
    "           VALUES ('lifecycle-model', gen_random_uuid()::text) RETURNING id), "
    "v AS (INSERT INTO venues (owner_id, name, street, city, country, latitude, longitude, "
    "                          timezone, status) "
    "      SELECT o.id, 'Model club', 'Model street 1', 'Model city', 'Model country', "
    "             $1::float8, $2::float8, 'UTC', 'ACTIVE' FROM o "
    "      RETURNING id), "
    "c AS (SELECT gen_random_uuid() AS id, x.dur, x.wk, x.we, x.n "
    "        FROM unnest($3::int[], $4::numeric[], $5::numeric[]) "
    "             WITH ORDINALITY AS x(dur, wk, we, n)), "
    "r AS (INSERT INTO resources (id, venue_id, name, type, slot_duration_minutes, status) "
    "      SELECT c.id, v.id, 'Court ' || c.n, 'PADEL_COURT', c.dur, 'ACTIVE' FROM c, v), "
    "s AS (INSERT INTO resource_schedules (resource_id, day_of_week, opening_time, "
    "                                      closing_time) "
    "      SELECT c.id, d, '08:00', '22:00' FROM c, generate_series(1, 7) d), "
    "p AS (INSERT INTO price_rules (resource_id, day_type, start_time, end_time, price, "
    "                               currency) "
    "      SELECT c.id, t.day_type, '00:00', '24:00', "
    "             CASE t.day_type WHEN 'WEEKDAY' THEN c.wk ELSE c.we END, 'EUR' "
    "        FROM c, (VALUES ('WEEKDAY'), ('WEEKEND')) AS t(day_type)) "
    "SELECT v.id, c.id FROM v, c ORDER BY c.n";

static const char *
money_text(long cents, char *buf, size_t len)
{
	snprintf(buf, len, "%ld.%02ld", cents / 100, cents % 100);
	return buf;
}

/* The sequence's players (a user and a profile each), its venue (and the venue's owner) and
 * its courts, in one round trip; fills in their ids. 0, or -1 after reporting. */
int
pg_setup(struct pg *g, struct seq *s)
{
	char skills[256], lats[512], lngs[512], notif[64], durs[64], wk[128], we[128];
	char lat[32], lng[32], item[3][MAX_PLAYERS][32];
	const char *a[MAX_PLAYERS], *b[MAX_PLAYERS], *c[MAX_PLAYERS], *d[MAX_PLAYERS];
	const char *pp[4] = { skills, lats, lngs, notif }, *cp[5] = { lat, lng, durs, wk, we };
	struct stmt st[2] = { { players_sql, 4, pp }, { courts_sql, 5, cp } };
	PGresult *res[2];
	int i, rc = -1;

	for (i = 0; i < s->nplayers; i++) {
		a[i] = skill_names[s->players[i].skill];
		snprintf(item[0][i], 32, "%.6f", s->players[i].lat);
		snprintf(item[1][i], 32, "%.6f", s->players[i].lng);
		b[i] = item[0][i];
		c[i] = item[1][i];
		d[i] = s->players[i].notifications ? "t" : "f";
	}
	array_text(skills, sizeof skills, s->nplayers, a);
	array_text(lats, sizeof lats, s->nplayers, b);
	array_text(lngs, sizeof lngs, s->nplayers, c);
	array_text(notif, sizeof notif, s->nplayers, d);
	for (i = 0; i < s->ncourts; i++) {
		snprintf(item[0][i], 32, "%d", s->courts[i].duration);
		a[i] = item[0][i];
		b[i] = money_text(s->courts[i].weekday_price, item[1][i], 32);
		c[i] = money_text(s->courts[i].weekend_price, item[2][i], 32);
	}
	array_text(durs, sizeof durs, s->ncourts, a);
	array_text(wk, sizeof wk, s->ncourts, b);
	array_text(we, sizeof we, s->ncourts, c);
	snprintf(lat, sizeof lat, "%.6f", s->lat);
	snprintf(lng, sizeof lng, "%.6f", s->lng);
	if (pg_pipeline(g->main, st, 2, res) != 0)
		fprintf(stderr, "lifecycle-model: set-up: %s", PQerrorMessage(g->main));
	else if (PQresultStatus(res[0]) != PGRES_TUPLES_OK ||
	    PQresultStatus(res[1]) != PGRES_TUPLES_OK)
		fprintf(stderr, "lifecycle-model: set-up: %s%s", PQresultErrorMessage(res[0]),
		    PQresultErrorMessage(res[1]));
	else if (PQntuples(res[0]) == s->nplayers && PQntuples(res[1]) == s->ncourts) {
		for (i = 0; i < s->nplayers; i++)
			snprintf(s->players[i].id, ID_LEN, "%s", PQgetvalue(res[0], i, 0));
		snprintf(s->venue, ID_LEN, "%s", PQgetvalue(res[1], 0, 0));
		for (i = 0; i < s->ncourts; i++)
			snprintf(s->courts[i].id, ID_LEN, "%s", PQgetvalue(res[1], i, 1));
		rc = 0;
	}
	PQclear(res[0]);
	PQclear(res[1]);
	return rc;
}

/* The share window of the sequence's joins on the connection of its calls, as common/join.c
 * sets it for a payment provider (0: none, shares paid at once). 0, or -1 after reporting. */
int
pg_share_hold(struct pg *g, int seconds)
{
	char text[16] = "";
	const char *params[1] = { text };
	PGresult *res;

	if (seconds > 0)
		snprintf(text, sizeof text, "%d", seconds);
	if ((res = pg_exec(g->main, "SELECT set_config('courts.share_hold_seconds', $1, false)",
	    1, params)) == NULL)
		return -1;
	PQclear(res);
	return 0;
}

/* The rules of cron/sweep.c that move matches, in its order: a batch each, what it claimed
 * in the first column and a second count. */
static const char *const sweep_sql[] = {
	"SELECT sweep_expired_holds($1::int, $2::timestamptz), 0",
	"SELECT unfilled, invitations_expired FROM sweep_unfilled($1::int, $2::timestamptz)",
	"SELECT completed, no_shows FROM sweep_completed($1::int, $2::timestamptz)",
	"SELECT sweep_invitations($1::int, $2::timestamptz), 0",
	"SELECT settled, lapsed FROM sweep_offers($1::int, $2::timestamptz)",
};
_Static_assert(sizeof sweep_sql / sizeof sweep_sql[0] == SWEEP_RULES, "five sweeper rules");
#define SWEEP_ATTEMPTS	3	/* a batch that lost a deadlock is retried, as cron/sweep.c does */

struct sweeper {
	PGconn	*c;
	int	rule, attempts;
	bool	busy, done;
};

static void
sweep_add(struct sweep_counts *c, int rule, long a, long b)
{
	switch (rule) {
	case 0: c->expired_holds += a; break;
	case 1: c->unfilled += a; c->invitations_expired += b; break;
	case 2: c->completed += a; c->no_shows += b; break;
	/* stale invitations, and lapsed offers (whichever ends an offer, the sum is the same;
	 * the offers rule claims matches, and says how many offers lapsed second) */
	case 3: c->invitations_expired += a; break;
	default: c->invitations_expired += b; break;
	}
}

/* Takes the answer of w's batch in flight: 1 when it claimed a whole batch (run the rule
 * again), 0 when the rule is done, -1 on a failure that is not a lost deadlock. */
static int
sweep_collect(struct sweeper *w, long limit, struct sweep_counts *c, char *err, size_t errlen)
{
	PGresult *res, *last = NULL;
	int rc = 0;

	while ((res = PQgetResult(w->c)) != NULL) {
		PQclear(last);
		last = res;
	}
	w->busy = false;
	if (PQresultStatus(last) == PGRES_TUPLES_OK && PQntuples(last) == 1) {
		long a = strtol(PQgetvalue(last, 0, 0), NULL, 10);

		sweep_add(c, w->rule, a, strtol(PQgetvalue(last, 0, 1), NULL, 10));
		w->attempts = 0;
		rc = a >= limit;
	} else {
		const char *state = PQresultErrorField(last, PG_DIAG_SQLSTATE);

		if (state != NULL && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0) &&
		    ++w->attempts < SWEEP_ATTEMPTS)
			rc = 1;
		else {
			snprintf(err, errlen, "sweeper rule %d failed: %s", w->rule + 1,
			    last != NULL ? PQresultErrorMessage(last) : PQerrorMessage(w->c));
			rc = -1;
		}
	}
	PQclear(last);
	return rc;
}

/* One sweeper run as of now (n = 1), or two at once on two connections (n = 2) with both
 * batches in flight together: each runs the rules in order, a batch of at most limit rows at
 * a time, until a batch comes back short. Adds what they changed to c. 0, or -1 with err. */
int
pg_sweep(struct pg *g, int n, int limit, long long now, struct sweep_counts *c, char *err,
    size_t errlen)
{
	struct sweeper w[2] = { { .c = g->sweeper[0] }, { .c = g->sweeper[1] } };
	char lim[16], at[40], buf[16];
	const char *params[2] = { lim, at }, *name;
	bool failed = false;
	int i, rc;

	snprintf(lim, sizeof lim, "%d", limit);
	pg_time(now, at, sizeof at);
	memset(c, 0, sizeof *c);
	for (i = n; i < 2; i++)
		w[i].done = true;
	while (!w[0].done || !w[1].done) {
		for (i = 0; i < 2; i++) {
			if (w[i].done || failed)
				continue;
			name = statement(w[i].c, sweep_sql[w[i].rule], buf, sizeof buf);
			if (name == NULL ||
			    !PQsendQueryPrepared(w[i].c, name, 2, params, NULL, NULL, 0)) {
				snprintf(err, errlen, "cannot send a sweeper batch: %s",
				    PQerrorMessage(w[i].c));
				w[i].done = failed = true;
				continue;
			}
			w[i].busy = true;
		}
		for (i = 0; i < 2; i++) {
			if (!w[i].busy)
				continue;
			if ((rc = sweep_collect(&w[i], limit, c, err, errlen)) < 0)
				failed = true;
			if (rc == 0 && ++w[i].rule == SWEEP_RULES)
				w[i].done = true;
			if (failed)
				w[i].done = true;
		}
		if (failed && !w[0].busy && !w[1].busy)
			break;
	}
	return failed ? -1 : 0;
}

/* The four rules of one sweeper run as of params[1] with batches of params[0] rows, in
 * cron/sweep.c's order, for a pipeline (params must outlive st). */
void
pg_sweep_stmts(struct stmt *st, const char *const *params)
{
	int rule;

	for (rule = 0; rule < SWEEP_RULES; rule++)
		st[rule] = (struct stmt){ sweep_sql[rule], 2, params };
}

/* Adds to c what the answer res of rule (0..4) says it changed, and consumes res; the rows
 * the batch claimed, or -1 with the reason in err. */
long
pg_sweep_result(PGresult *res, int rule, struct sweep_counts *c, char *err, size_t errlen)
{
	long n = -1;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
		n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
		sweep_add(c, rule, n, strtol(PQgetvalue(res, 0, 1), NULL, 10));
	} else
		snprintf(err, errlen, "sweeper rule %d failed: %s", rule + 1,
		    res != NULL ? PQresultErrorMessage(res) : "no answer");
	PQclear(res);
	return n;
}
