/* rules.c: the reference model of the match lifecycle, written from DESIGN.md "Match
 * requests" and the comments of sql/areas/60_lifecycle.sql and the areas after it (series,
 * waiting lists, hand-overs, joining from the feed, place requests), independently of their
 * SQL: the preconditions of each call in the order the service checks them, the answer, and
 * the effects (effects.c) each one has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

void
rule_expire_hold(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];

	if (mm->status == ST_PENDING_PAYMENT && mm->expires <= s->now)
		(void)effect_end(s, m, EV_EXPIRE_HOLD);
}

/* The court's price on the day of starts: its weekend rule on Saturday and Sunday. */
static long
price_on(const struct seq *s, int court, long long starts)
{
	long long day = starts / DAY;
	int isodow = (int)((day + 3) % 7) + 1;	/* 1970-01-01 was a Thursday */

	return isodow >= 6 ? s->courts[court].weekend_price : s->courts[court].weekday_price;
}

const char *
rule_hold(struct seq *s, const struct hold *h)
{
	const struct court *c = &s->courts[h->court];
	long long tod = h->starts % DAY, dur = c->duration * MINUTE, ends = h->starts + dur;
	bool lapsed[MAX_MATCHES] = { false };
	struct match *m;
	int i;

	/* courts open 08:00-22:00, slots back to back from the opening */
	if (h->duration != c->duration || tod < 8 * HOUR || (tod - 8 * HOUR) % dur != 0 ||
	    tod + dur > 22 * HOUR)
		return "SLOT_NOT_OFFERED";
	if (h->starts <= s->now)
		return "SLOT_IN_PAST";
	for (i = 0; i < s->nmatches; i++) {
		m = &s->matches[i];
		if (m->court != h->court || m->status == ST_CANCELLED || m->starts >= ends ||
		    h->starts >= m->ends)
			continue;
		if (m->status != ST_PENDING_PAYMENT || m->expires > s->now)
			return "SLOT_TAKEN";
		lapsed[i] = true;	/* a lapsed hold never blocks: it is ended first */
	}
	for (i = 0; i < s->nmatches; i++)
		if (lapsed[i])
			rule_expire_hold(s, i);
	m = &s->matches[s->nmatches++];
	memset(m, 0, sizeof *m);
	m->court = h->court;
	m->format = h->format;
	m->team_size = h->format == F_ONE_VS_ONE ? 1 : 2;
	m->skill = h->skill;
	m->organizer = h->organizer;
	m->price = price_on(s, h->court, h->starts);
	m->ppp = m->price / (2 * m->team_size);
	m->starts = h->starts;
	m->ends = ends;
	m->expires = s->now + h->hold_seconds;
	m->radius_km = h->radius_km;
	m->status = ST_NONE;
	(void)effect_move(m, EV_HOLD);
	m->joins[m->njoins++] = (struct join){ .player = h->organizer, .team = 0,
	    .organizer = true, .pay = PAY_PENDING,
	    .paid = m->price - m->ppp * (2 * m->team_size - 1) };
	return NULL;
}

const char *
rule_series(struct seq *s, const struct hold *h, int weeks, char *skipped, size_t len)
{
	struct series *se = &s->series[s->nseries];
	struct hold week = *h;
	const char *code;
	size_t used = 0;
	char date[16];
	time_t tt;
	struct tm tm;
	int k;

	memset(se, 0, sizeof *se);
	se->organizer = h->organizer;
	skipped[0] = '\0';
	for (k = 0; k < weeks; k++) {
		week.starts = h->starts + k * 7 * DAY;
		/* a date refused is refused before anything is written (rule_hold's order) */
		code = rule_hold(s, &week);
		if (code == NULL) {
			se->matches[se->nmatches++] = s->nmatches - 1;
			continue;
		}
		tt = (time_t)week.starts;
		gmtime_r(&tt, &tm);
		strftime(date, sizeof date, "%Y-%m-%d", &tm);
		if (used < len)
			used += (size_t)snprintf(skipped + used, len - used, "%s%s:%s",
			    used > 0 ? "," : "", date, code);
	}
	if (se->nmatches == 0)
		return "NO_BOOKABLE_DATE";
	s->nseries++;
	return NULL;
}

const char *
rule_series_cancel(struct seq *s, int k, int p)
{
	const struct series *se = &s->series[k];
	const struct match *m;
	int i;

	if (p != se->organizer)
		return "NOT_FOUND";
	/* each match to come that one cancel would take, as that cancel, in date order */
	for (i = 0; i < se->nmatches; i++) {
		m = &s->matches[se->matches[i]];
		if (m->starts > s->now && (m->status == ST_PENDING_PAYMENT ||
		    m->status == ST_OPEN || m->status == ST_MATCHED))
			(void)rule_cancel(s, se->matches[i], p);
	}
	return NULL;
}

/* The player p must be in match m (match_lock); NULL when not. */
static struct join *
locked(struct seq *s, int m, int p)
{
	return m >= 0 && m < s->nmatches ? effect_active_join(&s->matches[m], p) : NULL;
}

const char *
rule_pay(struct seq *s, int m, int p)
{
	struct match *mm = &s->matches[m];
	struct join *j = locked(s, m, p);

	if (j == NULL)
		return "NOT_FOUND";
	if (mm->organizer != p)
		return "NOT_ORGANIZER";
	if ((mm->status == ST_PENDING_PAYMENT && mm->expires <= s->now) ||
	    (mm->status == ST_CANCELLED && mm->reason == RS_PAYMENT_EXPIRED))
		return "PAYMENT_WINDOW_PASSED";
	if (mm->status != ST_PENDING_PAYMENT)
		return "INVALID_STATE";
	(void)effect_move(mm, EV_PAY);
	if (j->pay == PAY_PENDING)
		j->pay = PAY_PAID;
	effect_invite(s, m, IK_INVITE);
	return NULL;
}

/* Outcomes counted for the summary: offers taken and turned down. */
static const char offer_taken[] = "offer accepted";
static const char offer_declined[] = "offer declined";
static const char handover_taken[] = "hand-over accepted";
static const char handover_declined[] = "hand-over declined";
static const char place_taken[] = "place accepted";
static const char place_declined[] = "place declined";

/* A refusal rolls back the whole call: what a rule changed before it refused (lapsed offers
 * passed on) is undone by putting back the state kept by keep(). */
static struct seq kept;

static void
keep(const struct seq *s)
{
	memcpy(&kept, s, sizeof kept);
}

static const char *
refuse(struct seq *s, const char *code)
{
	memcpy(s, &kept, sizeof *s);
	return code;
}

/* The place request of p in match m that is not approved (open unless p plays in the match
 * or the match is no longer open), or -1. */
static int
asking(const struct match *m, int p)
{
	int k;

	for (k = 0; k < m->nreq; k++)
		if (m->req[k].player == p && m->req[k].status != PR_APPROVED)
			return k;
	return -1;
}

/* JOIN of match m by p on team, through p's invitation when by_invitation: lapsed offers are
 * passed on first; a place an open offer holds is free only to the offer's player, in its
 * team. */
static const char *
join(struct seq *s, int m, int p, int team, bool by_invitation)
{
	struct match *mm = &s->matches[m];
	bool own, owed;
	int k;

	keep(s);
	(void)effect_settle(s, m);
	if (by_invitation && mm->inv[p] != INV_PENDING)
		return refuse(s, "INVALID_STATE");
	if (mm->status != ST_OPEN)
		return refuse(s, "MATCH_NOT_OPEN");
	if (mm->starts <= s->now)
		return refuse(s, "MATCH_STARTED");
	if (effect_active_join(mm, p) != NULL)
		return refuse(s, "ALREADY_IN_MATCH");
	own = mm->inv[p] == INV_PENDING && effect_holds_place(mm->inv_kind[p]);
	if (own && mm->inv_team[p] != team)
		return refuse(s, "OFFER_FOR_OTHER_TEAM");
	if (effect_team_count(mm, team) + effect_offers(mm, team) - own >= mm->team_size)
		return refuse(s, "TEAM_FULL");
	if (own)
		model_count(mm->inv_kind[p] == IK_OFFER ? offer_taken :
		    mm->inv_kind[p] == IK_HANDOVER ? handover_taken : place_taken, "ok");
	if (own && mm->inv_kind[p] == IK_PLACE)
		s->taken++;
	if (mm->inv[p] == INV_PENDING)
		mm->inv[p] = INV_ACCEPTED;
	for (k = 0; k < mm->nwait; k++)
		if (mm->wait[k].player == p && mm->wait[k].end == WE_WAITING)
			mm->wait[k].end = WE_JOINED;
	/* a player asking for a place takes one (by the link, or a hand-over): the request
	 * closes while they play, its answers as they are */
	s->joined_asking += asking(mm, p) >= 0;
	/* with a provider a share is owed for its window, and refills a hand-over once paid */
	owed = s->provider && mm->ppp > 0;
	if (mm->njoins < MAX_JOINS)
		mm->joins[mm->njoins++] = (struct join){ .player = p, .team = team,
		    .pay = owed ? PAY_PENDING : PAY_PAID, .paid = mm->ppp,
		    .expires = owed ? s->now + s->share_hold : 0 };
	if (!owed)
		effect_refill(s, m, p, team);
	effect_notify_players(s, m, N_PLAYER_JOINED, p);
	effect_fill(s, m);
	return NULL;
}

const char *
rule_accept(struct seq *s, int m, int invitee, int p, int team)
{
	if (s->matches[m].inv[invitee] == INV_NONE || invitee != p)
		return "NOT_FOUND";
	return join(s, m, p, team, true);
}

const char *
rule_join_token(struct seq *s, int m, int p, int team)
{
	return join(s, m, p, team, false);
}

const char *
rule_decline(struct seq *s, int m, int invitee, int p)
{
	struct match *mm = &s->matches[m];

	if (mm->inv[invitee] == INV_NONE || invitee != p)
		return "NOT_FOUND";
	keep(s);
	(void)effect_settle(s, m);
	if (mm->inv[p] != INV_PENDING)
		return refuse(s, "INVALID_STATE");
	if (mm->inv_kind[p] == IK_OFFER)
		model_count(offer_declined, "ok");
	if (mm->inv_kind[p] == IK_HANDOVER)
		model_count(handover_declined, "ok");
	if (mm->inv_kind[p] == IK_PLACE)
		model_count(place_declined, "ok");
	mm->inv[p] = INV_DECLINED;
	effect_offer_places(s, m);
	if (mm->inv_kind[p] == IK_HANDOVER)
		effect_pass_on(s, m);
	return NULL;
}

const char *
rule_waitlist_join(struct seq *s, int m, int p, int team)
{
	struct match *mm = &s->matches[m];
	int k;

	keep(s);
	(void)effect_settle(s, m);
	if (effect_active_join(mm, p) != NULL)
		return refuse(s, "ALREADY_IN_MATCH");
	if (mm->starts <= s->now)
		return refuse(s, "MATCH_STARTED");
	if (mm->status != ST_MATCHED)
		return refuse(s, "MATCH_NOT_FULL");
	for (k = 0; k < mm->nwait; k++)
		if (mm->wait[k].player == p && mm->wait[k].end == WE_WAITING)
			return refuse(s, "ALREADY_WAITING");
	/* the model's matches are PUBLIC and competitive, its players never rated */
	if (mm->skill != s->players[p].skill)
		return refuse(s, "LEVEL_MISMATCH");
	if (mm->nwait < MAX_WAIT)
		mm->wait[mm->nwait++] = (struct wait){ .player = p, .team = team };
	return NULL;
}

/* JOIN from the open-match feed: a PUBLIC match (the model's all are), of the caller's level
 * unless they are in it already (the model's players are never rated: their level is the
 * declared one); then the link's rules. */
const char *
rule_join_open(struct seq *s, int m, int p, int team)
{
	if (m < 0)
		return "NOT_FOUND";
	if (effect_active_join(&s->matches[m], p) == NULL &&
	    s->matches[m].skill != s->players[p].skill)
		return "LEVEL_MISMATCH";
	return join(s, m, p, team, false);
}

/* PLACE REQUEST by p for team (2: ANY) of match m, competitive and PUBLIC as all the model's
 * are: lapsed offers are passed on first; the players now in the match are told. */
const char *
rule_place_request(struct seq *s, int m, int p, int team)
{
	struct match *mm;
	struct place_request *pr;
	int k;

	if (m < 0)
		return "NOT_FOUND";
	mm = &s->matches[m];
	keep(s);
	(void)effect_settle(s, m);
	if (effect_active_join(mm, p) != NULL)
		return refuse(s, "ALREADY_IN_MATCH");
	if (mm->starts <= s->now)
		return refuse(s, "MATCH_STARTED");
	if (mm->status != ST_OPEN && mm->status != ST_MATCHED)
		return refuse(s, "MATCH_NOT_OPEN");
	if (mm->skill == s->players[p].skill)
		return refuse(s, "JOIN_INSTEAD");
	if (effect_busy(s, m, p))
		return refuse(s, "PLAYER_BUSY");
	for (k = 0; k < mm->nreq; k++)
		if (mm->req[k].player == p)
			return refuse(s, "PLACE_REQUEST_EXISTS");
	/* the venues of the model have no booking rules */
	pr = &mm->req[mm->nreq++];
	memset(pr, 0, sizeof *pr);
	pr->player = p;
	pr->team = team;
	pr->status = PR_PENDING;
	s->requests_made++;
	effect_notify_players(s, m, N_PLACE_REQUESTED, -1);
	return NULL;
}

/* APPROVE or REJECT of request k of match m by p, a player now in the match: lapsed offers
 * are passed on first; a request that is not open (approved, the match no longer open or
 * started, or its player in the match) refuses it, its answers as they were; else an answer
 * changes only when it differs (its instant with it), and the request is decided again. */
const char *
rule_place_answer(struct seq *s, int m, int k, int p, bool approve)
{
	struct match *mm = m >= 0 ? &s->matches[m] : NULL;
	struct place_request *pr;
	int a = approve ? ANS_APPROVE : ANS_REJECT;

	if (mm == NULL || k < 0 || effect_active_join(mm, p) == NULL)
		return "NOT_FOUND";
	keep(s);
	(void)effect_settle(s, m);
	if (effect_active_join(mm, p) == NULL)	/* their share lapsed: freed just now */
		return refuse(s, "NOT_FOUND");
	pr = &mm->req[k];
	if (!effect_request_open(mm, k, s->now)) {
		/* closed only because its player took a place meanwhile: counted after the state
		 * is put back */
		bool in = effect_active_join(mm, pr->player) != NULL &&
		    pr->status != PR_APPROVED && (mm->status == ST_OPEN ||
		    mm->status == ST_MATCHED) && mm->starts > s->now;

		(void)refuse(s, "PLACE_REQUEST_CLOSED");
		s->refused_in += in;
		return "PLACE_REQUEST_CLOSED";
	}
	if (pr->answer[p] != a) {
		pr->answer[p] = a;
		pr->answered[p] = s->now;
	}
	effect_decide(s, m, k);
	return NULL;
}

const char *
rule_waitlist_leave(struct seq *s, int m, int p)
{
	struct match *mm = &s->matches[m];
	int k;

	for (k = 0; k < mm->nwait; k++)
		if (mm->wait[k].player == p && mm->wait[k].end == WE_WAITING) {
			mm->wait[k].end = WE_LEFT;
			return NULL;
		}
	return "NOT_FOUND";
}

long
rule_settle(struct seq *s, int m)
{
	return effect_settle(s, m);
}

/* Whether join j's share is owed past its window: the settling a leave or an absence does
 * first frees its place, and the player is no longer in the match. */
static bool
lapsing(const struct join *j, long long now)
{
	return j->pay == PAY_PENDING && j->expires != 0 && j->expires <= now;
}

/* Takes p out of match m by LEAVE or ABSENCE, the place handed to sub first (-1: none; late:
 * a late absence); returns the join that ended, or NULL when the hand-over is refused
 * (SUBSTITUTE_UNAVAILABLE: the rule refuses, which undoes all of it). */
static struct join *
withdraw(struct seq *s, int m, int p, int event, int sub, bool late)
{
	struct match *mm = &s->matches[m];
	struct join *j = effect_active_join(mm, p);
	int k;

	(void)effect_settle(s, m);
	j->left = event == EV_LEAVE ? LEFT_LEFT : LEFT_ABSENT;
	if (j->pay == PAY_PENDING)	/* a share owed is owed no more */
		j->pay = PAY_CANCELLED;
	(void)effect_move(mm, event);
	effect_notify_players(s, m, event == EV_LEAVE ? N_PLAYER_LEFT : N_PLAYER_ABSENT, -1);
	if (sub >= 0) {
		if (sub == p || effect_busy(s, m, sub))
			return NULL;
		mm->inv[sub] = INV_PENDING;
		mm->inv_kind[sub] = IK_HANDOVER;
		mm->inv_team[sub] = j->team;
		mm->inv_expires[sub] = s->now + OFFER_WINDOW;
		for (k = 0; k < mm->nwait; k++)
			if (mm->wait[k].player == sub && mm->wait[k].end == WE_WAITING)
				mm->wait[k].end = WE_OFFERED;
		if (mm->nho < MAX_HANDOVERS) {
			bool open = s->now < mm->starts - HANDOVER_NOTICE;

			mm->ho[mm->nho++] = (struct handover){ .player = p,
			    .join = (int)(j - mm->joins), .team = j->team, .substitute = sub,
			    .leave = event == EV_LEAVE, .late = late && open,
			    .window_ends = mm->starts - HANDOVER_NOTICE,
			    .status = open ? HO_OPEN : HO_LAPSED };
		}
		s->handovers++;
		effect_notify(s, sub, N_HANDOVER_OFFERED, m, -1);
	}
	effect_offer_places(s, m);
	return j;
}

const char *
rule_leave(struct seq *s, int m, int p, int sub)
{
	struct match *mm = &s->matches[m];
	struct join *j;

	if (locked(s, m, p) == NULL)
		return "NOT_FOUND";
	if (mm->organizer == p)
		return "ORGANIZER_CANNOT_LEAVE";
	if (mm->status != ST_OPEN && mm->status != ST_MATCHED)
		return "INVALID_STATE";
	if (mm->starts - s->now <= LEAVE_NOTICE)
		return "LEAVE_TOO_LATE";
	if (lapsing(locked(s, m, p), s->now))
		return "NOT_FOUND";
	keep(s);
	if ((j = withdraw(s, m, p, EV_LEAVE, sub, false)) == NULL)
		return refuse(s, "SUBSTITUTE_UNAVAILABLE");
	(void)effect_refund(j);
	s->reopened += asking(mm, p) >= 0;	/* their own request open again */
	effect_decide_open(s, m);
	return NULL;
}

const char *
rule_absence(struct seq *s, int m, int p, int sub)
{
	struct match *mm = &s->matches[m];
	int kind = REL_LATE_ABSENCE, k;
	bool late = mm->starts - s->now < LATE_ABSENCE_WINDOW, deferred = false;
	struct join *j;

	if (locked(s, m, p) == NULL)
		return "NOT_FOUND";
	if (mm->organizer == p)
		return "ORGANIZER_CANNOT_LEAVE";
	if (mm->status != ST_OPEN && mm->status != ST_MATCHED)
		return "INVALID_STATE";
	if (s->now >= mm->starts)
		return "MATCH_STARTED";
	if (lapsing(locked(s, m, p), s->now))
		return "NOT_FOUND";
	keep(s);
	if ((j = withdraw(s, m, p, EV_ABSENCE, sub, late)) == NULL)
		return refuse(s, "SUBSTITUTE_UNAVAILABLE");
	if (sub < 0)
		effect_invite(s, m, IK_SUBSTITUTE);
	for (k = 0; k < mm->nho; k++)
		deferred |= &mm->joins[mm->ho[k].join] == j && mm->ho[k].status == HO_OPEN;
	if (late && !deferred)
		(void)effect_reliability(s, &p, m, &kind, 1);
	s->reopened += asking(mm, p) >= 0;	/* their own request open again */
	effect_decide_open(s, m);
	return NULL;
}

const char *
rule_checkin(struct seq *s, int m, int p, bool near, bool accurate)
{
	struct match *mm = &s->matches[m];
	struct join *j = locked(s, m, p);
	int i;

	if (j == NULL)
		return "NOT_FOUND";
	if (mm->status != ST_MATCHED && mm->status != ST_CONFIRMED)
		return "INVALID_STATE";
	if (j->checked_in)
		return NULL;
	if (s->now < mm->starts - CHECKIN_OPENS_BEFORE)
		return "CHECKIN_TOO_EARLY";
	if (s->now > mm->ends)
		return "CHECKIN_CLOSED";
	if (!accurate)
		return "INACCURATE_POSITION";
	if (!near)
		return "TOO_FAR";
	j->checked_in = true;
	for (i = 0; i < mm->njoins; i++)
		if (mm->joins[i].left == LEFT_NONE && !mm->joins[i].checked_in)
			return NULL;
	if (effect_move(mm, EV_CHECKIN))
		effect_notify_players(s, m, N_MATCH_CONFIRMED, -1);
	return NULL;
}

const char *
rule_cancel(struct seq *s, int m, int p)
{
	struct match *mm = &s->matches[m];

	if (locked(s, m, p) == NULL)
		return "NOT_FOUND";
	if (mm->organizer != p)
		return "NOT_ORGANIZER";
	if (mm->status == ST_CANCELLED)
		return NULL;
	if (mm->status == ST_PENDING_PAYMENT && mm->expires <= s->now) {
		rule_expire_hold(s, m);
		return NULL;
	}
	if (mm->status != ST_PENDING_PAYMENT && mm->status != ST_OPEN &&
	    mm->status != ST_MATCHED)
		return "INVALID_STATE";
	if (s->now >= mm->starts)
		return "MATCH_STARTED";
	(void)effect_end(s, m, EV_CANCEL);
	return NULL;
}

static int
by_end(const void *a, const void *b, void *ctx)
{
	const struct match *x = &((const struct seq *)ctx)->matches[*(const int *)a];
	const struct match *y = &((const struct seq *)ctx)->matches[*(const int *)b];

	if (x->ends != y->ends)
		return x->ends < y->ends ? -1 : 1;
	return strcmp(x->id, y->id);
}

void
rule_sweep(struct seq *s, struct sweep_counts *c)
{
	int order[MAX_MATCHES], n = 0, i, q;

	memset(c, 0, sizeof *c);
	for (i = 0; i < s->nmatches; i++)
		if (s->matches[i].status == ST_PENDING_PAYMENT && s->matches[i].expires <= s->now) {
			(void)effect_end(s, i, EV_EXPIRE_HOLD);
			c->expired_holds++;
		}
	for (i = 0; i < s->nmatches; i++)
		if (s->matches[i].status == ST_OPEN && s->matches[i].starts <= s->now) {
			c->invitations_expired += effect_end(s, i, EV_CANCEL_UNFILLED);
			c->unfilled++;
		}
	/* in the order the matches ended, then by id: scores move by attendance in that order */
	for (i = 0; i < s->nmatches; i++)
		if ((s->matches[i].status == ST_MATCHED || s->matches[i].status == ST_CONFIRMED) &&
		    s->matches[i].ends <= s->now)
			order[n++] = i;
	qsort_r(order, (size_t)n, sizeof order[0], by_end, s);
	for (i = 0; i < n; i++) {
		c->no_shows += effect_complete(s, order[i]);
		c->completed++;
	}
	for (i = 0; i < s->nmatches; i++) {
		struct match *m = &s->matches[i];

		if (m->status == ST_OPEN && m->starts > s->now)
			continue;
		for (q = 0; q < MAX_PLAYERS; q++)
			if (m->inv[q] == INV_PENDING) {
				m->inv[q] = INV_EXPIRED;
				c->invitations_expired++;
			}
	}
	/* lapsed offers passed on (counted with the invitations: whichever rule ends an offer
	 * of a match that started, the sum is the same), lapsed shares freed */
	for (i = 0; i < s->nmatches; i++)
		c->invitations_expired += effect_settle(s, i);
	effect_decide_lapsed(s);
}

const char *
rule_share_paid(struct seq *s, int m, int ji)
{
	struct match *mm = &s->matches[m];
	struct join *j = &mm->joins[ji];

	if (j->pay == PAY_PAID)
		return "ALREADY_PAID";
	if (j->pay == PAY_PENDING && j->organizer) {
		if (mm->expires > s->now) {
			(void)rule_pay(s, m, j->player);
			return "PAID";
		}
		rule_expire_hold(s, m);	/* the hold lapsed before the money came */
	} else if (j->pay == PAY_PENDING && j->expires > s->now) {
		j->pay = PAY_PAID;
		effect_refill(s, m, j->player, j->team);
		effect_fill(s, m);
		return "PAID";
	} else if (j->pay == PAY_PENDING)
		(void)effect_settle(s, m);	/* past its window: the place is freed now */
	/* money for a place no longer held: taken, and given back in full */
	j->pay = PAY_PAID;
	(void)effect_refund(j);
	effect_decide_lapsed(s);
	return "LATE_PAYMENT";
}

