/* act.c: the lifecycle calls a step makes. Each picks its subjects mostly among those
 * that make sense (the organizer pays, a player in the match leaves) and sometimes among
 * anyone, asks the model what the call must answer, and has flow.c make the call with the
 * sequence's clock as p_now and compare. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "model.h"

static void
random_uuid(struct seq *s, char *buf)
{
	unsigned long long a = model_next(s), b = model_next(s);

	snprintf(buf, ID_LEN, "%08llx-%04llx-4%03llx-8%03llx-%012llx", a >> 32, (a >> 16) & 0xffff,
	    a & 0xfff, b >> 52, b & 0xffffffffffffULL);
}

/* A random player now in match m (not the organizer unless organizer_too), or -1. */
static int
someone_in(struct seq *s, int m, bool organizer_too)
{
	const struct match *mm = &s->matches[m];
	int in[MAX_JOINS], n = 0, i;

	for (i = 0; i < mm->njoins; i++)
		if (mm->joins[i].left == LEFT_NONE && (organizer_too || !mm->joins[i].organizer))
			in[n++] = mm->joins[i].player;
	return n > 0 ? in[model_rnd(s, n)] : -1;
}

/* With pct percent a player in match m, else (or when there is none) anyone. */
static int
player_of(struct seq *s, int m, bool organizer_too, int pct)
{
	int p = model_chance(s, pct) ? someone_in(s, m, organizer_too) : -1;

	return p >= 0 ? p : model_rnd(s, s->nplayers);
}

/* A random player of match m whose place request is not approved, in the match (in) or not,
 * or -1 when there is none. */
static int
requester(struct seq *s, int m, bool in)
{
	struct match *mm = &s->matches[m];
	int ps[MAX_REQUESTS], n = 0, k;

	for (k = 0; k < mm->nreq; k++)
		if (mm->req[k].status != PR_APPROVED &&
		    (effect_active_join(mm, mm->req[k].player) != NULL) == in)
			ps[n++] = mm->req[k].player;
	return n > 0 ? ps[model_rnd(s, n)] : -1;
}

/* A player not in match m (there is always one: a match has room for fewer than the
 * players), mostly of another level than its: one who may ask for a place in it. */
static int
outsider(struct seq *s, int m)
{
	int p, tries = model_chance(s, 60) ? 16 : 0;

	do
		p = model_rnd(s, s->nplayers);
	while (effect_active_join(&s->matches[m], p) != NULL ||
	    (tries-- > 0 && s->players[p].skill == s->matches[m].skill));
	return p;
}

/* A hold as the driver asks for it: mostly on a court's grid in the coming days, sometimes
 * on a slot a match has or had (or the other court's slot at that time, held by a player not
 * in that match, who then plays at its time), off the grid or of another length. */
static void
draw_hold(struct seq *s, struct hold *h)
{
	static const int hold_seconds[] = { 900, 900, 900, 120, 3600 };
	static const int days[] = { 0, 1, 1, 2, 3, 3, 4, 5 };
	int slots, then = -1;

	h->court = model_rnd(s, s->ncourts);
	if (s->nmatches > 0 && model_chance(s, 20)) {	/* a slot a match has, or had */
		const struct match *m = &s->matches[model_rnd(s, s->nmatches)];

		h->court = m->court;
		h->starts = m->starts;
		if (s->ncourts > 1 && model_chance(s, 30)) {
			then = (int)(m - s->matches);
			h->court = 1 - m->court;
			h->starts -= (h->starts % DAY - 8 * HOUR) %
			    (s->courts[h->court].duration * MINUTE);
		}
	} else {
		slots = 14 * 60 / s->courts[h->court].duration;
		h->starts = (s->now / DAY + days[model_rnd(s, 8)]) * DAY + 8 * HOUR +
		    model_rnd(s, slots) * s->courts[h->court].duration * MINUTE;
		if (model_chance(s, 5))
			h->starts += 10 * MINUTE;	/* off the court's grid */
	}
	h->duration = s->courts[h->court].duration + (model_chance(s, 4) ? 30 : 0);
	h->format = model_chance(s, s->busy ? 85 : 45) ? F_ONE_VS_ONE :
	    model_chance(s, 65) ? F_TWO_VS_TWO : F_AMERICANO;
	h->skill = model_chance(s, 85) ? SK_INTERMEDIATE : SK_ADVANCED;
	/* regulars: p0 organizes often and p1 joins often, so that a player collects enough
	 * matches for the no-show ban to come into play */
	h->organizer = model_chance(s, s->busy ? 85 : 40) ? 0 : model_rnd(s, s->nplayers);
	if (then >= 0)
		h->organizer = outsider(s, then);
	h->hold_seconds = hold_seconds[model_rnd(s, 5)];
	h->radius_km = model_chance(s, 50) ? 5 : 10;
}

/* The text of a hold's parameters, for match_hold and match_series_hold. */
struct hold_text {
	char	date[16], start[8], dur[8], lat[32], lng[32], radius[16], secs[16], now[40];
};

/* Fills t and the first 11 parameters of match_hold (court to radius) for h, and logs it. */
static void
hold_params(struct run *r, struct seq *s, const struct hold *h, struct hold_text *t,
    const char **params)
{
	time_t tt = (time_t)h->starts;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(t->date, sizeof t->date, "%Y-%m-%d", &tm);
	strftime(t->start, sizeof t->start, "%H:%M", &tm);
	snprintf(t->dur, sizeof t->dur, "%d", h->duration);
	snprintf(t->lat, sizeof t->lat, "%.6f", s->lat);
	snprintf(t->lng, sizeof t->lng, "%.6f", s->lng);
	snprintf(t->radius, sizeof t->radius, "%.0f", h->radius_km);
	snprintf(t->secs, sizeof t->secs, "%d", h->hold_seconds);
	pg_time(s->now, t->now, sizeof t->now);
	params[0] = s->courts[h->court].id;
	params[1] = s->players[h->organizer].id;
	params[2] = t->date;
	params[3] = t->start;
	params[4] = t->dur;
	params[5] = format_names[h->format];
	params[6] = skill_names[h->skill];
	params[7] = model_chance(s, 50) ? "Model match" : NULL;
	params[8] = t->lat;
	params[9] = t->lng;
	params[10] = t->radius;
	model_log(r, "p%d holds court %d on %s at %s for %s min, %s %s within %s km, %s s to pay",
	    h->organizer, h->court, t->date, t->start, t->dur, format_names[h->format],
	    skill_names[h->skill], t->radius, t->secs);
}

int
act_hold(struct run *r, struct seq *s)
{
	const char *params[13];
	struct stmt st = { "SELECT match_hold($1::uuid, $2::uuid, $3::date, $4::time, $5::int, "
	    "$6::text, $7::text, $8::text, $9::float8, $10::float8, $11::numeric, $12::int, "
	    "$13::timestamptz)", 13, params };
	struct hold_text t;
	struct hold h;
	const char *want;

	draw_hold(s, &h);
	hold_params(r, s, &h, &t, params);
	params[11] = t.secs;
	params[12] = t.now;
	if (s->nmatches < MAX_MATCHES)
		model_log(r, " (m%d)", s->nmatches);
	want = rule_hold(s, &h);
	return flow_call(r, s, A_HOLD, want, &st, 1);
}

/* A weekly series of 1 to MAX_WEEKS weeks, as many as the model has room for. */
int
act_series(struct run *r, struct seq *s)
{
	const char *params[14];
	struct stmt st = { "SELECT match_series_hold($1::uuid, $2::uuid, $3::date, $4::time, "
	    "$5::int, $6::text, $7::text, $8::text, $9::float8, $10::float8, $11::numeric, "
	    "$12::int, $13::int, $14::timestamptz)", 14, params };
	char weeks_text[16], skipped[MAX_WEEKS * 48];
	int room = MAX_MATCHES - s->nmatches, weeks, first = s->nmatches;
	struct hold_text t;
	struct hold h;
	const char *want;

	weeks = 1 + model_rnd(s, room < MAX_WEEKS ? room : MAX_WEEKS);
	draw_hold(s, &h);
	hold_params(r, s, &h, &t, params);
	snprintf(weeks_text, sizeof weeks_text, "%d", weeks);
	params[11] = weeks_text;
	params[12] = t.secs;
	params[13] = t.now;
	model_log(r, ", every week for %d weeks (series %d)", weeks, s->nseries);
	want = rule_series(s, &h, weeks, skipped, sizeof skipped);
	return flow_series(r, s, want, &st, first, skipped);
}

int
act_pay(struct run *r, struct seq *s, int m)
{
	int p = model_chance(s, 85) ? s->matches[m].organizer : model_rnd(s, s->nplayers);
	char now[40], minrel[8];
	const char *params[4] = { s->matches[m].id, s->players[p].id, minrel, now };
	const char *expire[2] = { s->matches[m].id, now };
	struct stmt st[2] = {
		{ "SELECT match_pay($1::uuid, $2::uuid, $3::int, $4::timestamptz)", 4, params },
		/* what the handler does after PAYMENT_WINDOW_PASSED, in a transaction of its
		 * own: the lapsed hold ends */
		{ "SELECT match_expire_holds(ARRAY[$1::uuid], $2::timestamptz)", 2, expire },
	};
	const char *want;

	snprintf(minrel, sizeof minrel, "%d", s->min_reliability);
	pg_time(s->now, now, sizeof now);
	model_log(r, "p%d pays for m%d", p, m);
	want = rule_pay(s, m, p);
	if (want != NULL && strcmp(want, "PAYMENT_WINDOW_PASSED") == 0) {
		model_log(r, ", the lapsed hold is ended");
		rule_expire_hold(s, m);
		return flow_call(r, s, A_PAY, want, st, 2);
	}
	return flow_call(r, s, A_PAY, want, st, 1);
}

/* After a join refused for a lapsed offer (INVALID_STATE, TEAM_FULL), what the API does in a
 * transaction of its own: the match's lapsed offers passed on. The calls to make: 2 with
 * that follow-up, else 1. */
static int
refused_join(struct run *r, struct seq *s, int m, const char *want)
{
	if (want == NULL || (strcmp(want, "INVALID_STATE") != 0 && strcmp(want, "TEAM_FULL") != 0))
		return 1;
	model_log(r, ", lapsed offers passed on");
	(void)rule_settle(s, m);
	return 2;
}

/* Accepts or declines an invitation: mostly an existing one, by its own player. */
int
act_answer(struct run *r, struct seq *s, bool accept)
{
	int ms[MAX_MATCHES * MAX_PLAYERS], qs[MAX_MATCHES * MAX_PLAYERS], n = 0, m, q, p, team;
	bool pending = model_chance(s, 70);
	char id[ID_LEN], now[40];
	const char *params[4] = { id, NULL, NULL, now };
	const char *settle[2] = { id, now };
	struct stmt st[2] = { { NULL, 4, params },
		{ "SELECT match_offers_settle_of($1::uuid, NULL, $2::timestamptz)", 2, settle } };
	const char *want;

	bool offers = model_chance(s, 60);	/* an open offer, when there is one */

	for (m = 0; m < s->nmatches; m++)
		for (q = 0; q < s->nplayers; q++)
			if (s->matches[m].inv[q] == INV_PENDING &&
			    (s->matches[m].inv_kind[q] == IK_OFFER ||
			     s->matches[m].inv_kind[q] == IK_PLACE)) {
				ms[n] = m;
				qs[n++] = q;
			}
	for (m = 0; (!offers || n == 0) && m < s->nmatches; m++)
		for (q = 0; q < s->nplayers; q++)
			if (s->matches[m].inv[q] != INV_NONE &&
			    (!pending || s->matches[m].inv[q] == INV_PENDING)) {
				ms[n] = m;
				qs[n++] = q;
			}
	if (n == 0 || model_chance(s, 5)) {
		m = model_rnd(s, s->nmatches);
		q = model_rnd(s, s->nplayers);
	} else {
		n = model_rnd(s, n);
		m = ms[n];
		q = qs[n];
	}
	p = model_chance(s, 90) ? q : model_rnd(s, s->nplayers);
	team = model_rnd(s, 2);
	if ((s->matches[m].inv_kind[q] == IK_OFFER || s->matches[m].inv_kind[q] == IK_PLACE) &&
	    model_chance(s, 80))
		team = s->matches[m].inv_team[q];	/* an offer is for its team, a place too */
	if (s->matches[m].inv[q] != INV_NONE)
		snprintf(id, sizeof id, "%s", s->matches[m].inv_id[q]);
	else
		random_uuid(s, id);	/* an invitation that does not exist */
	pg_time(s->now, now, sizeof now);
	params[1] = s->players[p].id;
	if (!accept) {
		model_log(r, "p%d declines the invitation of p%d to m%d", p, q, m);
		want = rule_decline(s, m, q, p);
		st[0].sql = "SELECT match_decline_invitation($1::uuid, $2::uuid, $3::timestamptz)";
		st[0].n = 3;
		params[2] = now;
		return flow_call(r, s, A_DECLINE, want, st, 1);
	}
	model_log(r, "p%d accepts the invitation of p%d to m%d on team %c", p, q, m, 'A' + team);
	want = rule_accept(s, m, q, p, team);
	st[0].sql = "SELECT match_accept_invitation($1::uuid, $2::uuid, $3::text, $4::timestamptz)";
	params[2] = team == 0 ? "TEAM_A" : "TEAM_B";
	return flow_call(r, s, A_ACCEPT, want, st, refused_join(r, s, m, want));
}

int
act_join_by_link(struct run *r, struct seq *s, int m)
{
	int out[MAX_PLAYERS], n = 0, q, p, team = model_rnd(s, 2);
	char now[40];
	const char *params[4] = { s->matches[m].token, NULL, team == 0 ? "TEAM_A" : "TEAM_B", now };
	const char *settle[2] = { s->matches[m].token, now };
	struct stmt st[2] = { { "SELECT match_join_by_token($1::uuid, $2::uuid, $3::text, "
	    "$4::timestamptz)", 4, params },
		{ "SELECT match_offers_settle_of(NULL, $1::uuid, $2::timestamptz)", 2, settle } };
	const char *want;

	for (q = 0; q < s->nplayers; q++)
		if (effect_active_join(&s->matches[m], q) == NULL)
			out[n++] = q;
	/* now and then one who asked for a place and has no answer yet: the link has no level
	 * rule */
	if ((q = requester(s, m, false)) >= 0 && model_chance(s, 50))
		p = q;
	else if (s->busy && effect_active_join(&s->matches[m], 1) == NULL && model_chance(s, 80))
		p = 1;
	else
		p = n > 0 && model_chance(s, 75) ? out[model_chance(s, 40) ? 0 : model_rnd(s, n)] :
		    model_rnd(s, s->nplayers);
	params[1] = s->players[p].id;
	pg_time(s->now, now, sizeof now);
	model_log(r, "p%d joins m%d by its link on team %c", p, m, 'A' + team);
	want = rule_join_token(s, m, p, team);
	return flow_call(r, s, A_TOKEN, want, st, refused_join(r, s, m, want));
}

/* Joins (mostly a full match's list, mostly as someone not in it) or leaves (mostly as
 * someone on it) a waiting list. */
int
act_waitlist(struct run *r, struct seq *s, bool join)
{
	static const char *const teams[] = { "TEAM_A", "TEAM_B", "ANY" };
	int ms[MAX_MATCHES], n = 0, m, p, team = model_rnd(s, 3), k;
	char now[40];
	const char *params[4] = { NULL, NULL, teams[team], now };
	struct stmt st = { "SELECT match_waitlist_join($1::uuid, $2::uuid, $3::text, "
	    "$4::timestamptz)", 4, params };
	const char *want;

	for (m = 0; m < s->nmatches; m++)
		if (join ? s->matches[m].status == ST_MATCHED && s->matches[m].nwait < WAIT_DRAWN :
		    s->matches[m].nwait > 0)
			ms[n++] = m;
	m = n > 0 && model_chance(s, 90) ? ms[model_rnd(s, n)] : model_rnd(s, s->nmatches);
	if (join && s->matches[m].nwait >= WAIT_DRAWN)
		join = false;	/* the model keeps no more entries */
	p = model_rnd(s, s->nplayers);
	for (k = 0; !join && k < s->matches[m].nwait && model_chance(s, 85); k++)
		if (s->matches[m].wait[k].end == WE_WAITING) {
			p = s->matches[m].wait[k].player;
			break;
		}
	if (join && effect_active_join(&s->matches[m], p) != NULL && model_chance(s, 80))
		p = (p + 1 + model_rnd(s, s->nplayers - 1)) % s->nplayers;
	params[0] = s->matches[m].id;
	params[1] = s->players[p].id;
	pg_time(s->now, now, sizeof now);
	if (!join) {
		model_log(r, "p%d leaves the waiting list of m%d", p, m);
		st.sql = "SELECT match_waitlist_leave($1::uuid, $2::uuid, $3::timestamptz)";
		st.n = 3;
		params[2] = now;
		want = rule_waitlist_leave(s, m, p);
		return flow_call(r, s, A_UNWAITLIST, want, &st, 1);
	}
	model_log(r, "p%d joins the waiting list of m%d for %s", p, m, teams[team]);
	want = rule_waitlist_join(s, m, p, team);
	return flow_call(r, s, A_WAITLIST, want, &st, 1);
}

/* Joins match m from the open-match feed: mostly as someone not in it, of its level or not;
 * now and then anyone, or a match that does not exist. */
int
act_join_open(struct run *r, struct seq *s, int m)
{
	int out[MAX_PLAYERS], n = 0, q, p, team = model_rnd(s, 2);
	bool unknown = model_chance(s, 4);
	char id[ID_LEN], now[40];
	const char *params[4] = { id, NULL, team == 0 ? "TEAM_A" : "TEAM_B", now };
	const char *settle[2] = { id, now };
	struct stmt st[2] = { { "SELECT match_join_open($1::uuid, $2::uuid, $3::text, "
	    "$4::timestamptz)", 4, params },
		/* the API's follow-up to a refusal for a lapsed offer (common/join.c) */
		{ "SELECT match_offers_settle(m.id, $2::timestamptz) "
		  "  FROM (SELECT id FROM match_requests WHERE id = $1::uuid FOR UPDATE) m", 2,
		  settle } };
	const char *want;

	for (q = 0; q < s->nplayers; q++)
		if (effect_active_join(&s->matches[m], q) == NULL)
			out[n++] = q;
	p = n > 0 && model_chance(s, 85) ? out[model_rnd(s, n)] : model_rnd(s, s->nplayers);
	params[1] = s->players[p].id;
	pg_time(s->now, now, sizeof now);
	if (unknown) {
		random_uuid(s, id);
		model_log(r, "p%d joins a match that does not exist from the feed", p);
		want = rule_join_open(s, -1, p, team);
		return flow_call(r, s, A_JOIN_OPEN, want, st, 1);
	}
	snprintf(id, sizeof id, "%s", s->matches[m].id);
	model_log(r, "p%d joins m%d from the feed on team %c", p, m, 'A' + team);
	want = rule_join_open(s, m, p, team);
	return flow_call(r, s, A_JOIN_OPEN, want, st, refused_join(r, s, m, want));
}

/* A match that takes place requests: open or full, not started. */
static bool
requestable(const struct seq *s, int m)
{
	const struct match *mm = &s->matches[m];

	return (mm->status == ST_OPEN || mm->status == ST_MATCHED) && mm->starts > s->now;
}

/* Whether p may ask for a place in match m: of another level, not in it, not asked yet. */
static bool
may_ask(struct seq *s, int m, int p)
{
	const struct match *mm = &s->matches[m];
	int k;

	for (k = 0; k < mm->nreq; k++)
		if (mm->req[k].player == p)
			return false;
	return s->players[p].skill != mm->skill && effect_active_join(&s->matches[m], p) == NULL;
}

/* With pct percent a player who may ask for a place in match m, when there is one; else
 * anyone. */
static int
asker(struct seq *s, int m, int pct)
{
	int ps[MAX_PLAYERS], n = 0, q;

	for (q = 0; q < s->nplayers; q++)
		if (may_ask(s, m, q))
			ps[n++] = q;
	return n > 0 && model_chance(s, pct) ? ps[model_rnd(s, n)] : model_rnd(s, s->nplayers);
}

/* Asks for a place (TEAM_A, TEAM_B or ANY): mostly in a match open or full and not started,
 * as a player of another level who may (now and then one who plays elsewhere then, when there
 * is one); now and then anywhere, as anyone, or in a match that does not exist. */
int
act_place_request(struct run *r, struct seq *s)
{
	static const char *const teams[] = { "TEAM_A", "TEAM_B", "ANY" };
	int ms[MAX_MATCHES], n = 0, bm[MAX_MATCHES * MAX_PLAYERS], bp[MAX_MATCHES * MAX_PLAYERS];
	int nb = 0, m, p, team = model_rnd(s, 3);
	bool unknown = model_chance(s, 4);
	char id[ID_LEN], now[40];
	const char *params[5] = { id, NULL, teams[team],
		model_chance(s, 50) ? "I play at another level: may I join?" : NULL, now };
	struct stmt st = { "SELECT place_request_create($1::uuid, $2::uuid, $3::text, $4::text, "
	    "$5::timestamptz)", 5, params };
	const char *want;

	for (m = 0; m < s->nmatches; m++) {
		if (!requestable(s, m))
			continue;
		ms[n++] = m;
		for (p = 0; p < s->nplayers; p++)
			if (may_ask(s, m, p) && effect_busy(s, m, p)) {
				bm[nb] = m;
				bp[nb++] = p;
			}
	}
	if (nb > 0 && model_chance(s, 60)) {
		nb = model_rnd(s, nb);
		m = bm[nb];
		p = bp[nb];
	} else {
		m = n > 0 && model_chance(s, 90) ? ms[model_rnd(s, n)] : model_rnd(s, s->nmatches);
		p = asker(s, m, 85);
	}
	params[1] = s->players[p].id;
	pg_time(s->now, now, sizeof now);
	if (unknown) {
		random_uuid(s, id);
		model_log(r, "p%d asks for a place in a match that does not exist", p);
		want = rule_place_request(s, -1, p, team);
		return flow_call(r, s, A_PLACE_REQUEST, want, &st, 1);
	}
	snprintf(id, sizeof id, "%s", s->matches[m].id);
	model_log(r, "p%d asks for a place in m%d for %s", p, m, teams[team]);
	want = rule_place_request(s, m, p, team);
	return flow_call(r, s, A_PLACE_REQUEST, want, &st, 1);
}

/* A player now in match m to answer request k: with pct percent one who has not answered it
 * yet, when there is one; else any of them, or -1 when there is none. */
static int
answerer(struct seq *s, int m, int k, int pct)
{
	const struct match *mm = &s->matches[m];
	int fresh[MAX_JOINS], n = 0, i;

	for (i = 0; i < mm->njoins; i++)
		if (mm->joins[i].left == LEFT_NONE &&
		    mm->req[k].answer[mm->joins[i].player] == ANS_NONE)
			fresh[n++] = mm->joins[i].player;
	return n > 0 && model_chance(s, pct) ? fresh[model_rnd(s, n)] : someone_in(s, m, true);
}

/* Answers a place request: mostly an open one, by a player now in its match, one who has not
 * answered yet (mostly approving) or one who has (changing the answer or repeating it); now
 * and then one closed because its player took a place meanwhile (when there is one), one
 * approved or of a match no longer open, by anyone, or one that does not exist. */
int
act_place_answer(struct run *r, struct seq *s)
{
	int ms[3][MAX_MATCHES * MAX_REQUESTS], ks[3][MAX_MATCHES * MAX_REQUESTS];
	int n[3] = { 0 }, m, k, p, open;
	bool approve;
	char id[ID_LEN], now[40];
	const char *params[4] = { id, NULL, NULL, now };
	struct stmt st = { "SELECT place_request_answer($1::uuid, $2::uuid, $3::boolean, "
	    "$4::timestamptz)", 4, params };
	const char *want;

	/* 1 open, 2 closed only because its player plays in the match, 0 otherwise closed */
	for (m = 0; m < s->nmatches; m++)
		for (k = 0; k < s->matches[m].nreq; k++) {
			open = effect_request_open(&s->matches[m], k, s->now) ? 1 :
			    s->matches[m].req[k].status != PR_APPROVED && requestable(s, m) ? 2 : 0;
			ms[open][n[open]] = m;
			ks[open][n[open]++] = k;
		}
	if (n[2] > 0 && model_chance(s, 60))
		open = 2;
	else
		open = n[0] == 0 || (n[1] > 0 && model_chance(s, 85));
	pg_time(s->now, now, sizeof now);
	if (n[open] == 0 || model_chance(s, 4)) {
		random_uuid(s, id);	/* a place request that does not exist */
		p = model_rnd(s, s->nplayers);
		approve = model_chance(s, 50);
		params[1] = s->players[p].id;
		params[2] = approve ? "true" : "false";
		model_log(r, "p%d %s a place request that does not exist", p,
		    approve ? "approves" : "rejects");
		want = rule_place_answer(s, -1, -1, p, approve);
		return flow_call(r, s, A_PLACE_ANSWER, want, &st, 1);
	}
	k = model_rnd(s, n[open]);
	m = ms[open][k];
	k = ks[open][k];
	p = model_chance(s, 90) ? answerer(s, m, k, 60) : -1;
	if (p < 0)
		p = model_rnd(s, s->nplayers);
	if (s->matches[m].req[k].answer[p] == ANS_NONE)
		approve = model_chance(s, 80);
	else	/* changed half the time, repeated the other half */
		approve = (s->matches[m].req[k].answer[p] == ANS_APPROVE) == model_chance(s, 50);
	snprintf(id, sizeof id, "%s", s->matches[m].req[k].id);
	params[1] = s->players[p].id;
	params[2] = approve ? "true" : "false";
	model_log(r, "p%d %s the place request of p%d to m%d", p, approve ? "approves" : "rejects",
	    s->matches[m].req[k].player, m);
	want = rule_place_answer(s, m, k, p, approve);
	return flow_call(r, s, A_PLACE_ANSWER, want, &st, 1);
}

/* Leaves match m, or reports absence from it; now and then handing the place to another
 * player (the caller, one in the match or busy elsewhere now and then too). */
int
act_withdraw(struct run *r, struct seq *s, int m, bool leave)
{
	int p = player_of(s, m, false, 85), q = requester(s, m, true);
	int sub = model_chance(s, 40) ? model_rnd(s, s->nplayers) : -1;
	char now[40], minrel[8], via[40] = "";
	const char *params[5] = { s->matches[m].id, s->players[p].id, now,
		sub >= 0 ? s->players[sub].id : NULL, minrel };
	struct stmt st = { "SELECT match_leave($1::uuid, $2::uuid, $3::timestamptz, "
	    "p_substitute => $4::uuid, p_min_reliability => $5::int)", 5, params };
	const char *want;

	/* now and then one who took a place while asking for one: the request opens again */
	if (q >= 0 && model_chance(s, 60)) {
		p = q;
		params[1] = s->players[p].id;
	}
	pg_time(s->now, now, sizeof now);
	snprintf(minrel, sizeof minrel, "%d", s->min_reliability);
	if (sub >= 0)
		snprintf(via, sizeof via, ", handing over to p%d", sub);
	if (leave) {
		model_log(r, "p%d leaves m%d%s", p, m, via);
		want = rule_leave(s, m, p, sub);
		return flow_call(r, s, A_LEAVE, want, &st, 1);
	}
	params[2] = minrel;
	params[3] = now;
	params[4] = sub >= 0 ? s->players[sub].id : NULL;
	st = (struct stmt){ "SELECT match_absence($1::uuid, $2::uuid, $3::int, $4::timestamptz, "
	    "p_substitute => $5::uuid)", 5, params };
	model_log(r, "p%d reports absence from m%d%s", p, m, via);
	want = rule_absence(s, m, p, sub);
	return flow_call(r, s, A_ABSENCE, want, &st, 1);
}

/* Checks in to match m near the venue (11 m) or far (1.1 km), accurately or not. */
int
act_checkin(struct run *r, struct seq *s, int m)
{
	int p = player_of(s, m, true, 90);
	bool near = model_chance(s, 85), accurate = model_chance(s, 90);
	char lat[32], lng[32], radius[8], max_acc[8], now[40];
	const char *params[8] = { s->matches[m].id, s->players[p].id, lat, lng,
		accurate ? "10" : "150", radius, max_acc, now };
	struct stmt st = { "SELECT match_checkin($1::uuid, $2::uuid, $3::float8, $4::float8, "
	    "$5::float8, $6::int, $7::int, $8::timestamptz)", 8, params };
	const char *want;

	snprintf(lat, sizeof lat, "%.6f", s->lat + (near ? 0.0001 : 0.01));
	snprintf(lng, sizeof lng, "%.6f", s->lng);
	snprintf(radius, sizeof radius, "%d", CHECKIN_RADIUS_M);
	snprintf(max_acc, sizeof max_acc, "%d", CHECKIN_MAX_ACCURACY_M);
	pg_time(s->now, now, sizeof now);
	model_log(r, "p%d checks in to m%d %s, %s", p, m, near ? "near" : "far",
	    accurate ? "accurate" : "inaccurate");
	want = rule_checkin(s, m, p, near, accurate);
	return flow_call(r, s, A_CHECKIN, want, &st, 1);
}

/* Cancels a series: mostly by its organizer. */
int
act_series_cancel(struct run *r, struct seq *s)
{
	int k = model_rnd(s, s->nseries);
	int p = model_chance(s, 85) ? s->series[k].organizer : model_rnd(s, s->nplayers);
	char now[40];
	const char *params[3] = { s->series[k].id, s->players[p].id, now };
	struct stmt st = { "SELECT match_series_cancel($1::uuid, $2::uuid, $3::timestamptz)", 3,
	    params };
	const char *want;

	pg_time(s->now, now, sizeof now);
	model_log(r, "p%d cancels series %d", p, k);
	want = rule_series_cancel(s, k, p);
	return flow_call(r, s, A_SERIES_CANCEL, want, &st, 1);
}

int
act_cancel(struct run *r, struct seq *s, int m)
{
	int p = model_chance(s, 80) ? s->matches[m].organizer : model_rnd(s, s->nplayers);
	char now[40];
	const char *params[3] = { s->matches[m].id, s->players[p].id, now };
	struct stmt st = { "SELECT match_cancel($1::uuid, $2::uuid, $3::timestamptz)", 3, params };
	const char *want;

	pg_time(s->now, now, sizeof now);
	model_log(r, "p%d cancels m%d", p, m);
	want = rule_cancel(s, m, p);
	return flow_call(r, s, A_CANCEL, want, &st, 1);
}
