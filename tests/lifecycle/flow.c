/* flow.c: the steps of a sequence: which action comes next, the call and the state read
 * after it in one round trip, compared with the model; clock moves; steps at the instants
 * the rules turn on; sweeper runs, and after one that changed something a second run that
 * must change nothing. */
#include <stdio.h>
#include <string.h>

#include "model.h"

const char *const action_names[] = { "hold", "series", "pay", "accept", "decline",
	"join by link", "leave", "absence", "check-in", "cancel", "cancel series", "waitlist",
	"leave waitlist", "join from feed", "place request", "place answer", "provider event",
	"clock", "sweep", "edge" };

/* The outcome counted for a series made with a date skipped. */
static const char series_skipping[] = "series with a date skipped";

/* Compares the answer o of an action with the model's (NULL: success). */
static int
expect(struct run *r, int action, const char *want, const struct outcome *o)
{
	const char *got = o->code[0] != '\0' ? o->code : "ok";

	model_log(r, " -> %s\n", got);
	model_count(action_names[action], got);
	if (strcmp(want != NULL ? want : "", o->code) == 0)
		return 0;
	snprintf(r->err, sizeof r->err, "%s answered %s, the model expects %s",
	    action_names[action], got, want != NULL ? want : "ok");
	return -1;
}

/* Compares the state query's answer res (consumed) with the model; 0, or -1. */
static int
compare(struct run *r, struct seq *s, PGresult *res, char *digest, size_t len)
{
	char diff[sizeof r->err - 64];

	if (check_result(res, s, r->got, r->want, digest, len, diff, sizeof diff) == 0)
		return 0;
	snprintf(r->err, sizeof r->err, "the state differs:%s", diff);
	return -1;
}

static void
clear(PGresult **res, int n)
{
	int i;

	for (i = 0; i < n; i++)
		PQclear(res[i]);
}

/* Makes the lifecycle call st[0] (and its follow-ups, which must succeed) and reads the
 * state back, all in one round trip unless the call makes a match the state query must
 * name; compares the answer with want and the state with the model. 0, or -1 with r->err. */
int
flow_call(struct run *r, struct seq *s, int action, const char *want, const struct stmt *st,
    int n)
{
	bool new_match = action == A_HOLD && want == NULL;
	struct stmt all[PIPELINE_MAX];
	PGresult *res[PIPELINE_MAX];
	struct state_query q;
	struct outcome o;
	int i, rc = 0;

	effect_decide_lapsed(s);
	memcpy(all, st, (size_t)n * sizeof *st);
	check_query(s, false, &q);
	all[n] = q.st;
	if (pg_pipeline(r->pg->main, all, new_match ? n : n + 1, res) != 0) {
		clear(res, n + 1);
		snprintf(r->err, sizeof r->err, "the database went away: %s",
		    PQerrorMessage(r->pg->main));
		return -1;
	}
	pg_outcome(r->pg->main, res[0], &o);
	res[0] = NULL;
	if (expect(r, action, want, &o) != 0)
		rc = -1;
	for (i = 1; rc == 0 && i < n; i++) {
		pg_outcome(r->pg->main, res[i], &o);
		res[i] = NULL;
		if (o.code[0] != '\0') {
			snprintf(r->err, sizeof r->err, "the follow-up answered %s", o.code);
			rc = -1;
		}
	}
	if (rc != 0 || new_match) {
		clear(res, new_match ? n : n + 1);
		if (rc != 0)
			return -1;
		snprintf(s->matches[s->nmatches - 1].id, ID_LEN, "%s", o.value);
		return flow_state(r, s);
	}
	return compare(r, s, res[n], NULL, 0);
}

int
flow_series(struct run *r, struct seq *s, const char *want, const struct stmt *st, int first,
    const char *skipped)
{
	struct series *se = &s->series[s->nseries - 1];
	const char *params[1];
	PGresult *res;
	struct outcome o;
	char *ids, *id;
	int i;

	if (pg_pipeline(r->pg->main, st, 1, &res) != 0) {
		PQclear(res);
		snprintf(r->err, sizeof r->err, "the database went away: %s",
		    PQerrorMessage(r->pg->main));
		return -1;
	}
	pg_outcome(r->pg->main, res, &o);
	if (expect(r, A_SERIES, want, &o) != 0)
		return -1;
	if (want != NULL)
		return flow_state(r, s);
	snprintf(se->id, ID_LEN, "%s", o.value);
	if (skipped[0] != '\0')
		model_count(series_skipping, "ok");
	params[0] = se->id;
	res = pg_exec(r->pg->main,
	    "SELECT coalesce(string_agg(m.id::text, ',' ORDER BY m.booking_date), ''), "
	    "       (SELECT coalesce(string_agg((e->>'bookingDate') || ':' || (e->>'code'), ',' "
	    "                                   ORDER BY n), '') "
	    "          FROM match_series x, jsonb_array_elements(x.skipped) WITH ORDINALITY AS j(e, n) "
	    "         WHERE x.id = $1::uuid) "
	    "  FROM match_series_matches sm JOIN match_requests m ON m.id = sm.match_request_id "
	    " WHERE sm.series_id = $1::uuid", 1, params);
	if (res == NULL) {
		snprintf(r->err, sizeof r->err, "the series could not be read back");
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 1), skipped) != 0) {
		snprintf(r->err, sizeof r->err, "the series skipped %s, the model expects %s",
		    PQgetvalue(res, 0, 1), skipped);
		PQclear(res);
		return -1;
	}
	ids = PQgetvalue(res, 0, 0);
	for (i = first; i < s->nmatches && (id = strsep(&ids, ",")) != NULL; i++)
		snprintf(s->matches[i].id, ID_LEN, "%s", id);
	if (i != s->nmatches || ids != NULL) {
		snprintf(r->err, sizeof r->err, "the series made other matches than the model's %d",
		    s->nmatches - first);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return flow_state(r, s);
}

int
flow_outcome(struct run *r, struct seq *s, const char *what, const char *want,
    const struct stmt *st)
{
	struct stmt all[2];
	PGresult *res[2];
	struct state_query q;
	struct outcome o;
	const char *got;

	effect_decide_lapsed(s);
	check_query(s, false, &q);
	all[0] = *st;
	all[1] = q.st;
	if (pg_pipeline(r->pg->main, all, 2, res) != 0) {
		clear(res, 2);
		snprintf(r->err, sizeof r->err, "the database went away: %s",
		    PQerrorMessage(r->pg->main));
		return -1;
	}
	pg_outcome(r->pg->main, res[0], &o);
	got = o.code[0] != '\0' ? o.code : o.value;
	model_log(r, " -> %s\n", got);
	model_count(what, got);
	if (strcmp(got, want) != 0) {
		PQclear(res[1]);
		snprintf(r->err, sizeof r->err, "%s answered %s, the model expects %s", what, got,
		    want);
		return -1;
	}
	return compare(r, s, res[1], NULL, 0);
}

/* Reads the state back and compares it with the model; 0, or -1 with r->err. */
int
flow_state(struct run *r, struct seq *s)
{
	struct state_query q;
	PGresult *res;

	check_query(s, false, &q);
	if (pg_pipeline(r->pg->main, &q.st, 1, &res) != 0) {
		PQclear(res);
		snprintf(r->err, sizeof r->err, "the database went away");
		return -1;
	}
	return compare(r, s, res, NULL, 0);
}

static bool
counts_differ(const struct sweep_counts *a, const struct sweep_counts *b)
{
	return a->expired_holds != b->expired_holds || a->unfilled != b->unfilled ||
	    a->completed != b->completed || a->no_shows != b->no_shows ||
	    a->invitations_expired != b->invitations_expired;
}

static const char *
counts_text(const struct sweep_counts *c, char *buf, size_t len)
{
	snprintf(buf, len, "expired_holds=%ld unfilled=%ld completed=%ld no_shows=%ld "
	    "invitations_expired=%ld", c->expired_holds, c->unfilled, c->completed, c->no_shows,
	    c->invitations_expired);
	return buf;
}

/* Adds what batch answer res (consumed) of rule changed to c; 0, or -1 when it failed or
 * claimed a whole batch (the run would need another), the reason in r->err unless an
 * earlier failure (failed) is already there. */
static int
batch(struct run *r, PGresult *res, int rule, int limit, struct sweep_counts *c, int failed)
{
	char scratch[256];
	long n = pg_sweep_result(res, rule, c, failed ? scratch : r->err,
	    failed ? sizeof scratch : sizeof r->err);

	if (n >= 0 && n < limit)
		return 0;
	if (n >= limit && !failed)
		snprintf(r->err, sizeof r->err, "sweeper rule %d: a batch of %d was not enough",
		    rule + 1, limit);
	return -1;
}

/* A sweeper run (or two at once) as of the clock, then the state read back with a digest;
 * when it changed anything, a second run and the digest again: the first must do what the
 * model says, the second nothing at all. (After a first run that counted nothing, the state
 * read back already shows it changed nothing.) One sweeper with batches larger than
 * anything there is sends its four rules in the round trip of the state (the server runs
 * them in order all the same); smaller batches and two sweepers run batch by batch, as
 * cron/sweep.c does. */
int
flow_sweep(struct run *r, struct seq *s, int sweepers, int limit)
{
	struct sweep_counts want, got = { 0 }, again = { 0 }, none = { 0 };
	struct state_query q;
	struct stmt st[SWEEP_RULES + 1];
	PGresult *res[SWEEP_RULES + 1];
	char lim[16], at[40], a[160], b[160], d1[80] = "", d2[80] = "";
	const char *first[2] = { lim, at }, *second[2] = { "100000", at };
	bool piped = sweepers == 1 && limit >= 1000;
	int n = 0, rule, rc = 0;

	model_log(r, "%s, batches of %d", sweepers == 2 ? "two sweepers at once" : "sweeper",
	    limit);
	rule_sweep(s, &want);
	r->sweeps++;
	r->two_sweeper_runs += sweepers == 2;
	model_count(action_names[A_SWEEP], sweepers == 2 ? "two at once" : "one");
	snprintf(lim, sizeof lim, "%d", limit);
	pg_time(s->now, at, sizeof at);
	if (piped) {
		pg_sweep_stmts(st, first);
		n = SWEEP_RULES;
	} else if (pg_sweep(r->pg, sweepers, limit, s->now, &got, r->err, sizeof r->err) != 0) {
		model_log(r, " -> failed\n");
		return -1;
	}
	check_query(s, true, &q);
	st[n] = q.st;
	if (pg_pipeline(r->pg->main, st, n + 1, res) != 0) {
		clear(res, n + 1);
		snprintf(r->err, sizeof r->err, "the database went away");
		return -1;
	}
	for (rule = 0; rule < n; rule++)
		rc |= batch(r, res[rule], rule, limit, &got, rc);
	model_log(r, " -> %s\n", counts_text(&got, a, sizeof a));
	if (rc == 0 && counts_differ(&got, &want)) {
		snprintf(r->err, sizeof r->err, "the sweeper counted %s, the model expects %s",
		    counts_text(&got, a, sizeof a), counts_text(&want, b, sizeof b));
		rc = -1;
	}
	if (rc != 0) {
		PQclear(res[n]);
		return -1;
	}
	if (compare(r, s, res[n], d1, sizeof d1) != 0)
		return -1;
	if (!counts_differ(&got, &none))
		return 0;

	pg_sweep_stmts(st, second);
	check_digest_query(s, &q);
	st[SWEEP_RULES] = q.st;
	if (pg_pipeline(r->pg->main, st, SWEEP_RULES + 1, res) != 0) {
		clear(res, SWEEP_RULES + 1);
		snprintf(r->err, sizeof r->err, "the database went away");
		return -1;
	}
	for (rule = 0; rule < SWEEP_RULES; rule++)
		rc |= batch(r, res[rule], rule, 100000, &again, rc);
	if (check_digest(res[SWEEP_RULES], d2, sizeof d2) != 0 && rc == 0) {
		snprintf(r->err, sizeof r->err, "the digest could not be read");
		rc = -1;
	}
	if (rc == 0 && (counts_differ(&again, &none) || strcmp(d1, d2) != 0)) {
		snprintf(r->err, sizeof r->err, "a second sweeper run changed the state: %s, "
		    "digest %s then %s", counts_text(&again, a, sizeof a), d1, d2);
		rc = -1;
	}
	return rc;
}

static bool
awaits_payment(const struct seq *s, int m)
{
	return s->matches[m].status == ST_PENDING_PAYMENT && s->matches[m].expires > s->now;
}

/* A match with a join's share owed (with a provider). */
static bool
owes(const struct seq *s, int m)
{
	int i;

	for (i = 0; i < s->matches[m].njoins; i++)
		if (s->matches[m].joins[i].left == LEFT_NONE &&
		    s->matches[m].joins[i].pay == PAY_PENDING && s->matches[m].joins[i].expires > 0)
			return true;
	return false;
}

/* A sweeper run, or two at once, and with a provider the sweeper's calls to it. */
static int
sweep(struct run *r, struct seq *s, int sweepers, int limit)
{
	int rc = flow_sweep(r, s, sweepers, limit);

	if (rc == 0 && s->provider)
		rc = provider_sweep(r, s, sweepers);
	return rc;
}

/* PAY: without a provider the organizer's word, with one a payer paying there. */
static int
pay(struct run *r, struct seq *s, int m)
{
	return s->provider ? provider_pay(r, s) : act_pay(r, s, m);
}

static bool
is_open(const struct seq *s, int m)
{
	return s->matches[m].status == ST_OPEN;
}

static bool
has_players(const struct seq *s, int m)
{
	int i;

	for (i = 0; i < s->matches[m].njoins; i++)
		if (s->matches[m].joins[i].left == LEFT_NONE && !s->matches[m].joins[i].organizer)
			return true;
	return false;
}

static bool
is_full(const struct seq *s, int m)
{
	return s->matches[m].status == ST_MATCHED || s->matches[m].status == ST_CONFIRMED;
}

static bool
checkin_open(const struct seq *s, int m)
{
	return is_full(s, m) && s->now >= s->matches[m].starts - CHECKIN_OPENS_BEFORE &&
	    s->now <= s->matches[m].ends;
}

static bool
full_ahead(const struct seq *s, int m)
{
	return is_full(s, m) && s->now < s->matches[m].starts - CHECKIN_OPENS_BEFORE;
}

static bool
invited(const struct seq *s, int m)
{
	int q;

	for (q = 0; q < s->nplayers; q++)
		if (s->matches[m].inv[q] == INV_PENDING)
			return true;
	return false;
}

/* A full match with players waiting for a place. */
static bool
awaited(const struct seq *s, int m)
{
	int k;

	for (k = 0; is_full(s, m) && k < s->matches[m].nwait; k++)
		if (s->matches[m].wait[k].end == WE_WAITING)
			return true;
	return false;
}

/* A match with an open offer, or a place granted to a place request. */
static bool
offered(const struct seq *s, int m)
{
	int q;

	for (q = 0; q < s->nplayers; q++)
		if (s->matches[m].inv[q] == INV_PENDING && (s->matches[m].inv_kind[q] == IK_OFFER ||
		    s->matches[m].inv_kind[q] == IK_PLACE))
			return true;
	return false;
}

/* A match open or full, not started, with a player of another level to ask for a place. */
static bool
askable(const struct seq *s, int m)
{
	const struct match *mm = &s->matches[m];
	int q;

	if ((mm->status != ST_OPEN && mm->status != ST_MATCHED) || mm->starts <= s->now)
		return false;
	for (q = 0; q < s->nplayers; q++)
		if (s->players[q].skill != mm->skill)
			return true;
	return false;
}

/* A match open or full, not started, with a place request to answer. */
static bool
asked(const struct seq *s, int m)
{
	const struct match *mm = &s->matches[m];
	int k;

	if ((mm->status != ST_OPEN && mm->status != ST_MATCHED) || mm->starts <= s->now)
		return false;
	for (k = 0; k < mm->nreq; k++)
		if (mm->req[k].status != PR_APPROVED)
			return true;
	return false;
}

/* A match open or full, not started, with a place request closed only because its player
 * took a place meanwhile. */
static bool
asker_plays(const struct seq *s, int m)
{
	const struct match *mm = &s->matches[m];
	int k, i;

	if ((mm->status != ST_OPEN && mm->status != ST_MATCHED) || mm->starts <= s->now)
		return false;
	for (k = 0; k < mm->nreq; k++)
		for (i = 0; mm->req[k].status != PR_APPROVED && i < mm->njoins; i++)
			if (mm->joins[i].player == mm->req[k].player &&
			    mm->joins[i].left == LEFT_NONE)
				return true;
	return false;
}

static bool
any(const struct seq *s, bool (*fits)(const struct seq *, int))
{
	int m;

	for (m = 0; m < s->nmatches; m++)
		if (fits(s, m))
			return true;
	return false;
}

/* With pct percent a match for which fits() holds, if there is one; else any match. */
static int
pick_match(struct seq *s, int pct, bool (*fits)(const struct seq *, int))
{
	int ms[MAX_MATCHES], n = 0, m;

	for (m = 0; m < s->nmatches; m++)
		if (fits(s, m))
			ms[n++] = m;
	return n > 0 && model_chance(s, pct) ? ms[model_rnd(s, n)] : model_rnd(s, s->nmatches);
}

/* Moves the clock: minutes, hours, days, to just before (or at) a start, past an end, past
 * a hold's expiry; a full match waiting for its check-in draws the clock to it. */
static void
flow_clock(struct run *r, struct seq *s)
{
	static const long long before[] = { 49 * HOUR, 47 * HOUR, 25 * HOUR, 23 * HOUR,
		31 * MINUTE, 29 * MINUTE, 10, 0 };
	int mi = s->nmatches > 0 ? pick_match(s, 60, is_full) : -1;
	const struct match *m = mi >= 0 ? &s->matches[mi] : NULL;
	int kind = model_rnd(s, m != NULL ? 14 : 7);
	long long target = s->now;
	char at[48];

	if (m != NULL && full_ahead(s, mi) && model_chance(s, 60))
		target = m->starts - before[4 + model_rnd(s, 4)];
	else if (kind < 3)
		target += (1 + model_rnd(s, 59)) * MINUTE;
	else if (kind < 5)
		target += (1 + model_rnd(s, 12)) * HOUR;
	else if (kind < 7)
		target += (1 + model_rnd(s, 3)) * DAY;
	else if (kind < 11)
		target = m->starts - before[model_rnd(s, 8)];
	else if (kind < 13)
		target = m->ends + (1 + model_rnd(s, 90)) * MINUTE;
	else
		target = m->expires + model_rnd(s, 120);
	if (target <= s->now)
		target = s->now + 1 + model_rnd(s, 600);
	s->now = target;
	model_log(r, "clock -> %s", model_when(r, s->now, at, sizeof at));
	model_count(action_names[A_CLOCK], "ok");
}

/* The instants the rules turn on, and what a step does at one of them. */
enum edge { E_LEAVE, E_LATE, E_REFUND, E_CHECKIN, E_END, E_START, E_EXPIRY, E_COUNT };
static const char *const edge_names[] = { "the end of the leave notice",
	"the start of the late-absence window", "the end of the organizer's refund notice",
	"the opening of check-in", "the end", "the start", "the expiry of the hold" };

/* Whether edge of match m can change an answer: a player to leave or be absent, a match to
 * cancel, one to check in to, one open or awaiting payment. */
static bool
edge_fits(const struct seq *s, int m, int edge)
{
	int st = s->matches[m].status;

	switch (edge) {
	case E_LEAVE:
	case E_LATE: return has_players(s, m) && (st == ST_OPEN || st == ST_MATCHED);
	case E_REFUND: return st == ST_PENDING_PAYMENT || st == ST_OPEN || st == ST_MATCHED;
	case E_CHECKIN:
	case E_END: return is_full(s, m);
	case E_START: return st == ST_OPEN;
	default: return st == ST_PENDING_PAYMENT;
	}
}

static long long
edge_instant(const struct match *mm, int edge)
{
	switch (edge) {
	case E_LEAVE: return mm->starts - LEAVE_NOTICE;
	case E_LATE: return mm->starts - LATE_ABSENCE_WINDOW;
	case E_REFUND: return mm->starts - ORGANIZER_REFUND_NOTICE;
	case E_CHECKIN: return mm->starts - CHECKIN_OPENS_BEFORE;
	case E_END: return mm->ends;
	case E_START: return mm->starts;
	default: return mm->expires;
	}
}

/* Moves the clock to a second before, at or after one of the instants the rules turn on:
 * an edge drawn among those ahead, mostly among those that can change an answer, then a
 * match it is ahead for. The edge (its match in *m), or -1 when none is ahead. */
static int
edge_at(struct seq *s, int *m)
{
	int ms[E_COUNT][MAX_MATCHES], n[E_COUNT] = { 0 }, edges[E_COUNT], ne = 0, k, e;
	bool fitting = model_chance(s, 85);

	for (e = 0; e < E_COUNT; e++) {
		for (k = 0; k < s->nmatches; k++)
			if (edge_instant(&s->matches[k], e) > s->now + 1 &&
			    (!fitting || edge_fits(s, k, e)))
				ms[e][n[e]++] = k;
		if (n[e] > 0)
			edges[ne++] = e;
	}
	if (ne == 0)
		return -1;
	e = edges[model_rnd(s, ne)];
	/* players in a match two days ahead are rare: their edges first when there are some */
	if (n[E_LEAVE] + n[E_LATE] > 0 && model_chance(s, 60))
		e = n[E_LEAVE] > 0 && (n[E_LATE] == 0 || model_chance(s, 50)) ? E_LEAVE : E_LATE;
	*m = ms[e][model_rnd(s, n[e])];
	s->now = edge_instant(&s->matches[*m], e) + model_rnd(s, 3) - 1;
	return e;
}

/* At edge of match m: the call whose answer turns on it (or a sweeper run). */
static int
flow_edge(struct run *r, struct seq *s, int edge, int m)
{
	bool sweeping = model_chance(s, 50);
	int sweepers = model_chance(s, r->two_sweepers) ? 2 : 1;

	model_log(r, "(%s of m%d) ", edge_names[edge], m);
	switch (edge) {
	case E_LEAVE: return act_withdraw(r, s, m, true);
	case E_LATE: return act_withdraw(r, s, m, false);
	case E_REFUND: return act_cancel(r, s, m);
	case E_CHECKIN: return act_checkin(r, s, m);
	case E_END: return sweeping ? sweep(r, s, sweepers, 1000) : act_checkin(r, s, m);
	case E_START: return sweeping ? sweep(r, s, sweepers, 1000) : act_join_by_link(r, s, m);
	default: return sweeping ? sweep(r, s, sweepers, 1000) : pay(r, s, m);
	}
}

/* The next action: what can move a match on is likelier, anything stays possible. */
static int
choose(struct seq *s)
{
	int w[A_COUNT] = { 0 }, total = 0, x, a;

	w[A_HOLD] = s->nmatches == MAX_MATCHES ? 0 : s->nmatches == 0 ? 60 : 10;
	w[A_SERIES] = s->nmatches == MAX_MATCHES ? 0 : 3;
	w[A_PAY] = any(s, awaits_payment) ? 25 : 2;
	w[A_ACCEPT] = any(s, invited) ? 14 : 2;
	w[A_DECLINE] = any(s, invited) ? 3 : 1;
	w[A_TOKEN] = any(s, is_open) ? 14 : 2;
	w[A_LEAVE] = any(s, has_players) ? 8 : 1;
	w[A_ABSENCE] = any(s, has_players) ? 5 : 1;
	w[A_CHECKIN] = any(s, checkin_open) ? 40 : any(s, is_full) ? 8 : 2;
	w[A_CANCEL] = 3;
	w[A_SERIES_CANCEL] = s->nseries > 0 ? 3 : 0;
	w[A_WAITLIST] = any(s, is_full) ? 30 : 1;
	w[A_UNWAITLIST] = 2;
	w[A_JOIN_OPEN] = any(s, is_open) ? 8 : 1;
	w[A_PLACE_REQUEST] = any(s, askable) ? 8 : 1;
	w[A_PLACE_ANSWER] = any(s, asked) ? 24 : 1;
	if (any(s, asker_plays)) {	/* answer that request (refused), or leave and open it */
		w[A_PLACE_ANSWER] += 12;
		w[A_LEAVE] += 8;
		w[A_ABSENCE] += 8;
	}
	if (any(s, awaited)) {	/* free a place someone waits for */
		w[A_LEAVE] += 20;
		w[A_ABSENCE] += 30;
	}
	if (any(s, offered)) {	/* answer the offer, or let it lapse */
		w[A_ACCEPT] += 12;
		w[A_DECLINE] += 6;
		w[A_CLOCK] += 20;
		w[A_SWEEP] += 12;
	}
	w[A_CLOCK] = any(s, full_ahead) ? 24 : 12;
	if (s->provider) {	/* shares to pay, the provider's word to deliver */
		if (any(s, owes))
			w[A_PAY] += 20;
		w[A_EVENT] = s->pv.nev > 0 ? 24 : 3;
	}
	w[A_SWEEP] = 4;
	w[A_EDGE] = s->nmatches > 0 ? 10 : 0;
	if (s->busy) {	/* hold, pay and fill matches one after another */
		w[A_HOLD] *= 2;
		w[A_PAY] *= 8;
		w[A_TOKEN] *= 6;
		w[A_EDGE] /= 4;
		w[A_CHECKIN] /= 4;
		w[A_CLOCK] /= 2;
	}
	if (s->nmatches == 0)	/* nothing to act on yet */
		for (a = A_PAY; a < A_CLOCK; a++)
			w[a] = 0;
	for (a = 0; a < A_COUNT; a++)
		total += w[a];
	x = model_rnd(s, total);
	for (a = 0; x >= w[a]; a++)
		x -= w[a];
	return a;
}

int
flow_step(struct run *r, struct seq *s, int k)
{
	int a = choose(s), edge = -1, m = -1, rc;
	char at[48];

	if (a == A_EDGE && (edge = edge_at(s, &m)) < 0)
		a = A_CLOCK;	/* that instant has passed */
	if (a != A_EDGE)
		s->now += 1 + model_rnd(s, 30);	/* every step its own instant */
	model_log(r, "  %2d %s ", k, model_when(r, s->now, at, sizeof at));
	if (a == A_SWEEP) {
		r->secs[T_SWEEPS] -= model_clock();
		rc = sweep(r, s, model_chance(s, r->two_sweepers) ? 2 : 1,
		    model_chance(s, 50) ? 1000 : 1 + model_rnd(s, 3));
		r->secs[T_SWEEPS] += model_clock();
		return rc;
	}
	r->secs[T_STEPS] -= model_clock();
	switch (a) {
	case A_HOLD: rc = act_hold(r, s); break;
	case A_SERIES: rc = act_series(r, s); break;
	case A_SERIES_CANCEL: rc = act_series_cancel(r, s); break;
	case A_WAITLIST: rc = act_waitlist(r, s, true); break;
	case A_UNWAITLIST: rc = act_waitlist(r, s, false); break;
	case A_JOIN_OPEN: rc = act_join_open(r, s, pick_match(s, 80, is_open)); break;
	case A_PLACE_REQUEST: rc = act_place_request(r, s); break;
	case A_PLACE_ANSWER: rc = act_place_answer(r, s); break;
	case A_PAY: rc = pay(r, s, pick_match(s, 85, awaits_payment)); break;
	case A_EVENT: rc = provider_event(r, s); break;
	case A_ACCEPT: rc = act_answer(r, s, true); break;
	case A_DECLINE: rc = act_answer(r, s, false); break;
	case A_TOKEN: rc = act_join_by_link(r, s, pick_match(s, 80, is_open)); break;
	case A_LEAVE:
	case A_ABSENCE:
		/* mostly a place someone waits for, when there is one; else now and then a match
		 * where one who asked for a place plays */
		rc = act_withdraw(r, s, any(s, awaited) && model_chance(s, 75) ?
		    pick_match(s, 90, awaited) : any(s, asker_plays) && model_chance(s, 50) ?
		    pick_match(s, 100, asker_plays) : pick_match(s, 80, has_players), a == A_LEAVE);
		break;
	case A_CHECKIN:
		rc = act_checkin(r, s,
		    pick_match(s, 85, any(s, checkin_open) ? checkin_open : is_full));
		break;
	case A_CANCEL: rc = act_cancel(r, s, model_rnd(s, s->nmatches)); break;
	case A_EDGE: rc = flow_edge(r, s, edge, m); break;
	default:
		flow_clock(r, s);
		/* nothing was written: the state must read as before, the invariants hold */
		model_log(r, "\n");
		rc = flow_state(r, s);
	}
	/* the service makes the PaymentIntent of a share owed in the call that made it */
	if (rc == 0 && s->provider && (a == A_HOLD || a == A_SERIES || a == A_ACCEPT ||
	    a == A_TOKEN || a == A_JOIN_OPEN || a == A_EDGE))
		rc = provider_intents(r, s);
	r->secs[T_STEPS] += model_clock();
	return rc;
}

int
flow_finish(struct run *r, struct seq *s, int k, long long last)
{
	char at[48];
	int rc;

	s->now = last > s->now ? last : s->now + 1;
	model_log(r, "  %2d %s past every end and expiry: ", k,
	    model_when(r, s->now, at, sizeof at));
	r->secs[T_SWEEPS] -= model_clock();
	rc = sweep(r, s, model_chance(s, r->two_sweepers) ? 2 : 1,
	    model_chance(s, 50) ? 1000 : 1 + model_rnd(s, 3));
	if (rc == 0 && s->provider)
		rc = provider_finish(r, s);
	r->secs[T_SWEEPS] += model_clock();
	return rc;
}
