/* effects.c: what the transitions of the model do, each written once: a status change by
 * the table of allowed ones, notifications, invitations of eligible players, refunds,
 * reliability events, the end of a match (cancellation or an expired hold), its completion,
 * the decision of a place request by its answers. rules.c decides when they happen. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

static const int rel_delta[] = { -25, -10, 5 };	/* by enum rel_kind */

/* The allowed status changes (DESIGN.md), and the reason a move to CANCELLED gives. */
static const struct {
	int	from, event, to, reason;
} transitions[] = {
	{ ST_NONE, EV_HOLD, ST_PENDING_PAYMENT, RS_NONE },
	{ ST_PENDING_PAYMENT, EV_PAY, ST_OPEN, RS_NONE },
	{ ST_PENDING_PAYMENT, EV_EXPIRE_HOLD, ST_CANCELLED, RS_PAYMENT_EXPIRED },
	{ ST_PENDING_PAYMENT, EV_CANCEL, ST_CANCELLED, RS_ORGANIZER },
	{ ST_OPEN, EV_JOIN, ST_MATCHED, RS_NONE },
	{ ST_OPEN, EV_CANCEL, ST_CANCELLED, RS_ORGANIZER },
	{ ST_OPEN, EV_CANCEL_UNFILLED, ST_CANCELLED, RS_NOT_FILLED },
	{ ST_MATCHED, EV_LEAVE, ST_OPEN, RS_NONE },
	{ ST_MATCHED, EV_ABSENCE, ST_OPEN, RS_NONE },
	{ ST_MATCHED, EV_CHECKIN, ST_CONFIRMED, RS_NONE },
	{ ST_MATCHED, EV_CANCEL, ST_CANCELLED, RS_ORGANIZER },
	{ ST_MATCHED, EV_COMPLETE, ST_COMPLETED, RS_NONE },
	{ ST_CONFIRMED, EV_COMPLETE, ST_COMPLETED, RS_NONE },
};

/* Applies event to m if it is a transition of its status; true if it moved. */
bool
effect_move(struct match *m, int event)
{
	size_t i;
	int k;

	for (i = 0; i < sizeof transitions / sizeof transitions[0]; i++) {
		if (transitions[i].from != m->status || transitions[i].event != event)
			continue;
		if (m->nchain < MAX_CHAIN)
			m->chain[m->nchain++] =
			    (struct change){ m->status, event, transitions[i].to };
		m->status = transitions[i].to;
		m->reason = transitions[i].reason;
		/* a match cancelled, confirmed or over has no waiting list (a trigger) */
		if (m->status == ST_CANCELLED || m->status == ST_CONFIRMED ||
		    m->status == ST_COMPLETED)
			for (k = 0; k < m->nwait; k++)
				if (m->wait[k].end == WE_WAITING)
					m->wait[k].end = WE_MATCH_ENDED;
		return true;
	}
	return false;
}

struct join *
effect_active_join(struct match *m, int p)
{
	int i;

	for (i = 0; i < m->njoins; i++)
		if (m->joins[i].player == p && m->joins[i].left == LEFT_NONE)
			return &m->joins[i];
	return NULL;
}

static bool
ever_in(const struct match *m, int p)
{
	int i;

	for (i = 0; i < m->njoins; i++)
		if (m->joins[i].player == p)
			return true;
	return false;
}

int
effect_team_count(const struct match *m, int team)
{
	int i, n = 0;

	for (i = 0; i < m->njoins; i++)
		n += m->joins[i].left == LEFT_NONE && m->joins[i].team == team;
	return n;
}

void
effect_notify(struct seq *s, int recipient, int type, int m, long refund)
{
	int i;

	for (i = 0; i < s->nnotes; i++) {
		struct note_count *n = &s->notes[i];

		if (n->recipient == recipient && n->type == type && n->match == m &&
		    n->refund == refund) {
			n->count++;
			return;
		}
	}
	if (s->nnotes < MAX_NOTES)
		s->notes[s->nnotes++] = (struct note_count){ recipient, type, m, refund, 1 };
}

/* Tells every player now in match m but one (-1: all). */
void
effect_notify_players(struct seq *s, int m, int type, int except)
{
	struct match *mm = &s->matches[m];
	int i;

	for (i = 0; i < mm->njoins; i++)
		if (mm->joins[i].left == LEFT_NONE && mm->joins[i].player != except)
			effect_notify(s, mm->joins[i].player, type, m, -1);
}

/* Great-circle distance in metres on the sphere of PostgreSQL's earthdistance. */
static double
distance_m(double lat1, double lng1, double lat2, double lng2)
{
	const double r = 6378168.0, rad = M_PI / 180;
	double a = sin((lat2 - lat1) * rad / 2) * sin((lat2 - lat1) * rad / 2) +
	    cos(lat1 * rad) * cos(lat2 * rad) * sin((lng2 - lng1) * rad / 2) *
	    sin((lng2 - lng1) * rad / 2);

	return 2 * r * asin(sqrt(a));
}

static bool
eligible(const struct seq *s, const struct match *m, const struct player *p)
{
	return p->notifications && p->skill == m->skill &&
	    distance_m(s->lat, s->lng, p->lat, p->lng) <= m->radius_km * 1000 &&
	    (p->banned_until == 0 || p->banned_until <= s->now) &&
	    p->score >= s->min_reliability;
}

/* Invites the eligible players who never played in match m and were never invited to it. */
void
effect_invite(struct seq *s, int m, int kind)
{
	struct match *mm = &s->matches[m];
	int q;

	for (q = 0; q < s->nplayers; q++) {
		if (!eligible(s, mm, &s->players[q]) || ever_in(mm, q) || mm->inv[q] != INV_NONE)
			continue;
		mm->inv[q] = INV_PENDING;
		mm->inv_kind[q] = kind;
		effect_notify(s, q,
		    kind == IK_SUBSTITUTE ? N_SUBSTITUTE_INVITATION : N_MATCH_INVITATION,
		    m, -1);
	}
}

/* The kinds of invitation that hold a place of their team while PENDING: an offer from the
 * waiting list, a hand-over, a place granted to a place request. */
bool
effect_holds_place(int kind)
{
	return kind == IK_OFFER || kind == IK_HANDOVER || kind == IK_PLACE;
}

int
effect_offers(const struct match *m, int team)
{
	int q, n = 0;

	for (q = 0; q < MAX_PLAYERS; q++)
		n += m->inv[q] == INV_PENDING && effect_holds_place(m->inv_kind[q]) &&
		    m->inv_team[q] == team;
	return n;
}

/* Whether p plays in match m, or in another live match overlapping it (match_player_busy). */
bool
effect_busy(const struct seq *s, int m, int p)
{
	const struct match *mm = &s->matches[m], *o;
	int i, k;

	for (i = 0; i < s->nmatches; i++) {
		o = &s->matches[i];
		if (o->status != ST_PENDING_PAYMENT && o->status != ST_OPEN &&
		    o->status != ST_MATCHED && o->status != ST_CONFIRMED)
			continue;
		if (i != m && (o->starts >= mm->ends || mm->starts >= o->ends))
			continue;
		for (k = 0; k < o->njoins; k++)
			if (o->joins[k].player == p && o->joins[k].left == LEFT_NONE)
				return true;
	}
	return false;
}

/* Whether p may be offered a place in match m now: not banned, not busy
 * (offer_candidate_free). */
static bool
free_for_offer(const struct seq *s, int m, int p)
{
	return s->players[p].banned_until <= s->now && !effect_busy(s, m, p);
}

/* A place of team free and held by no offer. */
static bool
unheld(const struct match *m, int team)
{
	return effect_team_count(m, team) + effect_offers(m, team) < m->team_size;
}

void
effect_offer_places(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];
	struct wait *w = NULL;
	int k, team;

	for (;;) {
		if (mm->status != ST_OPEN || mm->starts <= s->now)
			return;
		for (k = 0; k < mm->nwait; k++) {
			w = &mm->wait[k];
			if (w->end == WE_WAITING &&
			    (((w->team == 0 || w->team == 2) && unheld(mm, 0)) ||
			     ((w->team == 1 || w->team == 2) && unheld(mm, 1))) &&
			    free_for_offer(s, m, w->player))
				break;
		}
		if (k == mm->nwait)
			return;
		team = w->team != 2 ? w->team : unheld(mm, 0) ? 0 : 1;
		w->end = WE_OFFERED;
		mm->inv[w->player] = INV_PENDING;
		mm->inv_kind[w->player] = IK_OFFER;
		mm->inv_team[w->player] = team;
		mm->inv_expires[w->player] = s->now + OFFER_WINDOW;
		s->offers_made++;
		effect_notify(s, w->player, N_PLACE_OFFERED, m, -1);
	}
}

/* After a hand-over ended unaccepted and the waiting list had its turn: a place still free
 * and unheld goes to SUBSTITUTE invitations (match_handover_pass_on). */
void
effect_pass_on(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];

	if (mm->status == ST_OPEN && mm->starts > s->now &&
	    2 * mm->team_size - effect_team_count(mm, 0) - effect_team_count(mm, 1) -
	    effect_offers(mm, 0) - effect_offers(mm, 1) > 0)
		effect_invite(s, m, IK_SUBSTITUTE);
}

/* A paid join of p into team of match m refills the open hand-over of that team handed to
 * p, else the oldest: the leaver refunded (once) and told (match_handover_refill). */
void
effect_refill(struct seq *s, int m, int p, int team)
{
	struct match *mm = &s->matches[m];
	struct handover *h = NULL;
	int k;

	for (k = 0; k < mm->nho; k++) {
		struct handover *c = &mm->ho[k];

		if (c->status != HO_OPEN || c->team != team || c->window_ends <= s->now)
			continue;
		if (h == NULL || (c->substitute == p && h->substitute != p))
			h = c;
	}
	if (h == NULL)
		return;
	h->status = HO_REFILLED;
	s->refilled++;
	k = (int)effect_refund(&mm->joins[h->join]);
	effect_notify(s, h->player, N_PLACE_HANDED_OVER, m, k > 0 ? k : -1);
}

/* The joins of match m whose share is owed past its window end UNPAID, their payments
 * cancelled: each is told PAYMENT_EXPIRED and the players still in the match PLAYER_LEFT of
 * each, the places are offered on, and the place requests decided again as the call commits
 * (match_shares_lapse, and the deferred trigger of a leave). No reliability is lost. */
static void
lapse_shares(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];
	int lapsed[MAX_JOINS], n = 0, i, k;

	for (i = 0; i < mm->njoins; i++) {
		struct join *j = &mm->joins[i];

		if (j->left != LEFT_NONE || j->pay != PAY_PENDING || j->expires == 0 ||
		    j->expires > s->now)
			continue;
		j->left = LEFT_UNPAID;
		j->pay = PAY_CANCELLED;
		lapsed[n++] = j->player;
	}
	if (n == 0)
		return;
	for (k = 0; k < n; k++)
		effect_notify(s, lapsed[k], N_PAYMENT_EXPIRED, m, -1);
	for (k = 0; k < n; k++)
		effect_notify_players(s, m, N_PLAYER_LEFT, -1);
	effect_offer_places(s, m);
	s->pv.decide[m] = true;
}

/* Lapsed offers, hand-overs and granted places of match m -> EXPIRED; hand-over windows that
 * closed -> LAPSED with their late penalties; the places offered on, a hand-over's then
 * passed on (match_offers_settle); shares owed past their window lapse first. Returns how
 * many offers, hand-overs and places lapsed. */
long
effect_settle(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];
	long lapsed = 0;
	bool handover = false;
	int q, kind = REL_LATE_ABSENCE;

	lapse_shares(s, m);
	for (q = 0; q < MAX_PLAYERS; q++)
		if (mm->inv[q] == INV_PENDING && effect_holds_place(mm->inv_kind[q]) &&
		    mm->inv_expires[q] <= s->now) {
			mm->inv[q] = INV_EXPIRED;
			handover |= mm->inv_kind[q] == IK_HANDOVER;
			lapsed++;
		}
	s->offers_lapsed += lapsed;
	for (q = 0; q < mm->nho; q++)
		if (mm->ho[q].status == HO_OPEN && mm->ho[q].window_ends <= s->now) {
			mm->ho[q].status = HO_LAPSED;
			if (mm->ho[q].late)
				(void)effect_reliability(s, &mm->ho[q].player, m, &kind, 1);
		}
	if (lapsed > 0)
		effect_offer_places(s, m);
	if (handover)
		effect_pass_on(s, m);
	return lapsed;
}

long
effect_expire_invitations(struct match *m)
{
	long n = 0;
	int q;

	for (q = 0; q < MAX_PLAYERS; q++)
		if (m->inv[q] == INV_PENDING) {
			m->inv[q] = INV_EXPIRED;
			n++;
		}
	return n;
}

/* Refunds the payment of join j in full, once; returns the amount given back. */
long
effect_refund(struct join *j)
{
	if (j->pay != PAY_PAID || j->paid <= 0 || j->refunded > 0)
		return 0;
	j->refunded = j->paid;
	return j->paid;
}

/* Records reliability events once per (player, match, kind), each moving its player's score
 * in turn, clamped to 0..100; no-shows counted, a ban when the no-shows within the window
 * reach the limit, each no-show told. Returns the no-shows recorded. */
long
effect_reliability(struct seq *s, const int *players, int m, const int *kinds, int n)
{
	long no_shows = 0;
	int i, k, recent;

	for (i = 0; i < n; i++) {
		struct player *p = &s->players[players[i]];

		for (k = 0; k < s->nrels; k++)
			if (s->rels[k].player == players[i] && s->rels[k].match == m &&
			    s->rels[k].kind == kinds[i])
				break;
		if (k < s->nrels || s->nrels == MAX_RELS)
			continue;
		s->rels[s->nrels++] = (struct rel){ players[i], m, kinds[i], s->now };
		p->score += rel_delta[kinds[i]];
		p->score = p->score < 0 ? 0 : p->score > 100 ? 100 : p->score;
		if (kinds[i] != REL_NO_SHOW)
			continue;
		p->no_shows++;
		no_shows++;
		effect_notify(s, players[i], N_NO_SHOW, m, -1);
		for (recent = 0, k = 0; k < s->nrels; k++)
			recent += s->rels[k].player == players[i] &&
			    s->rels[k].kind == REL_NO_SHOW && s->rels[k].at > s->now - BAN_WINDOW;
		if (recent >= BAN_NO_SHOWS && p->banned_until < s->now + BAN_LENGTH)
			p->banned_until = s->now + BAN_LENGTH;
	}
	return no_shows;
}

/* Ends match m by EXPIRE_HOLD, CANCEL or CANCEL_UNFILLED: refunds, pending payments
 * cancelled, invitations expired, players told. Returns the invitations expired. */
long
effect_end(struct seq *s, int m, int event)
{
	struct match *mm = &s->matches[m];
	long expired, back;
	int i;

	if (!effect_move(mm, event))
		return 0;
	for (i = 0; i < mm->njoins; i++) {
		struct join *j = &mm->joins[i];

		if (j->left != LEFT_NONE)
			continue;
		back = 0;
		if (!(event == EV_CANCEL && j->organizer &&
		    mm->starts - s->now < ORGANIZER_REFUND_NOTICE))
			back = effect_refund(j);
		if (j->pay == PAY_PENDING)
			j->pay = PAY_CANCELLED;
		effect_notify(s, j->player,
		    event == EV_EXPIRE_HOLD ? N_PAYMENT_EXPIRED : N_MATCH_CANCELLED, m,
		    event == EV_CANCEL && back > 0 ? back : -1);
	}
	expired = effect_expire_invitations(mm);
	return expired;
}

/* COMPLETE of match m: everyone in it told, ATTENDED or NO_SHOW each. */
long
effect_complete(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];
	int players[MAX_JOINS], kinds[MAX_JOINS], n = 0, i;

	(void)effect_move(mm, EV_COMPLETE);
	for (i = 0; i < mm->njoins; i++) {
		if (mm->joins[i].left != LEFT_NONE)
			continue;
		effect_notify(s, mm->joins[i].player, N_MATCH_COMPLETED, m, -1);
		players[n] = mm->joins[i].player;
		kinds[n++] = mm->joins[i].checked_in ? REL_ATTENDED : REL_NO_SHOW;
	}
	return effect_reliability(s, players, m, kinds, n);
}

/* The status place request k of match m has by the answers of the players now in the
 * match: REJECTED when one of them rejects it, APPROVED when every one approves it. */
static int
verdict(const struct match *m, int k)
{
	const struct place_request *pr = &m->req[k];
	bool all = true;
	int i, a;

	for (i = 0; i < m->njoins; i++) {
		if (m->joins[i].left != LEFT_NONE)
			continue;
		a = pr->answer[m->joins[i].player];
		if (a == ANS_REJECT)
			return PR_REJECTED;
		all &= a == ANS_APPROVE;
	}
	return all ? PR_APPROVED : PR_PENDING;
}

/* The team of a free place of match m that no invitation holds, for a request of team (2:
 * ANY, TEAM_A first); -1 when none (or the match is not OPEN). */
static int
granted_team(const struct match *m, int team)
{
	if (m->status != ST_OPEN)
		return -1;
	if (team != 1 && unheld(m, 0))
		return 0;
	if (team != 0 && unheld(m, 1))
		return 1;
	return -1;
}

/* Approved, request k of match m grants its player a PLACE invitation for a free place,
 * theirs for the offer window (they leave the waiting list), else a place on the waiting
 * list for the team asked for (an entry they have already stands). */
static void
grant(struct seq *s, int m, int k)
{
	struct match *mm = &s->matches[m];
	struct place_request *pr = &mm->req[k];
	int team = granted_team(mm, pr->team), p = pr->player, i;
	bool waiting = false;

	for (i = 0; i < mm->nwait; i++)
		if (mm->wait[i].player == p && mm->wait[i].end == WE_WAITING) {
			waiting = true;
			if (team >= 0)
				mm->wait[i].end = WE_OFFERED;
		}
	if (team >= 0) {
		mm->inv[p] = INV_PENDING;
		mm->inv_kind[p] = IK_PLACE;
		mm->inv_team[p] = team;
		mm->inv_expires[p] = s->now + OFFER_WINDOW;
		pr->grant = GR_INVITATION;
		s->granted++;
		return;
	}
	if (!waiting && mm->nwait < MAX_WAIT)
		mm->wait[mm->nwait++] = (struct wait){ .player = p, .team = pr->team };
	pr->grant = GR_WAITLIST;
	s->waitlisted++;
}

/* Whether place request k of match m is open at now (place_request_open): not approved, the
 * match OPEN or full and not started, and its player not in it (one who took a place by the
 * link, or by a hand-over, while asking is granted nothing until they leave). */
bool
effect_request_open(const struct match *m, int k, long long now)
{
	const struct place_request *pr = &m->req[k];
	int i;

	if (pr->status == PR_APPROVED || (m->status != ST_OPEN && m->status != ST_MATCHED) ||
	    m->starts <= now)
		return false;
	for (i = 0; i < m->njoins; i++)
		if (m->joins[i].player == pr->player && m->joins[i].left == LEFT_NONE)
			return false;
	return true;
}

/* Decides place request k of match m again by its answers (place_request_decide), while it is
 * open: REJECTED tells the requester, APPROVED grants a place and tells them. */
void
effect_decide(struct seq *s, int m, int k)
{
	struct match *mm = &s->matches[m];
	struct place_request *pr = &mm->req[k];
	int v = verdict(mm, k);

	if (v == pr->status || !effect_request_open(mm, k, s->now))
		return;
	pr->status = v;
	if (v == PR_REJECTED) {
		s->rejected++;
		effect_notify(s, pr->player, N_PLACE_REQUEST_REJECTED, m, -1);
	}
	if (v != PR_APPROVED)
		return;
	pr->decided = s->now;
	s->approved++;
	grant(s, m, k);
	effect_notify(s, pr->player, N_PLACE_REQUEST_APPROVED, m, -1);
}

/* A leave or an absence, when it commits: the open place requests of match m decided again,
 * in the order they were made (place_requests_player_left). The model decides them at the
 * leave's instant, its p_now. */
void
effect_decide_open(struct seq *s, int m)
{
	struct place_request *pr;
	int k, was;

	for (k = 0; k < s->matches[m].nreq; k++) {
		pr = &s->matches[m].req[k];
		if (pr->status == PR_APPROVED)
			continue;
		was = pr->status;
		effect_decide(s, m, k);
		if (pr->status != was)
			model_count("place request decided by a leave",
			    pr_status_names[pr->status]);
	}
}

/* Once every place of OPEN match m is taken and paid: MATCHED, its pending invitations
 * expired, its players told (match_fill). */
void
effect_fill(struct seq *s, int m)
{
	struct match *mm = &s->matches[m];
	int i;

	if (mm->status != ST_OPEN ||
	    effect_team_count(mm, 0) + effect_team_count(mm, 1) < 2 * mm->team_size)
		return;
	for (i = 0; i < mm->njoins; i++)
		if (mm->joins[i].left == LEFT_NONE && mm->joins[i].pay == PAY_PENDING)
			return;
	(void)effect_move(mm, EV_JOIN);
	(void)effect_expire_invitations(mm);
	effect_notify_players(s, m, N_MATCH_FULL, -1);
}

/* A call that freed places of lapsed shares commits: the place requests of those matches
 * are decided again (the deferred trigger of a leave). */
void
effect_decide_lapsed(struct seq *s)
{
	int m;

	for (m = 0; m < s->nmatches; m++)
		if (s->pv.decide[m]) {
			s->pv.decide[m] = false;
			effect_decide_open(s, m);
		}
}
