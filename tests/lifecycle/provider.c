/* provider.c: the payment provider of the sequences that have one, simulated: its
 * PaymentIntents (one per share owed, keyed by the share's ledger row), its refunds (keyed by
 * the ledger's refund row: the Idempotency-Key cron/sweep.c sends), and its events, queued
 * and delivered through payment_event_apply late, twice and out of order between the other
 * steps. The sweeper's calls (payments_due, then a refund sent or an intent cancelled, its
 * answer applied or lost) are made as cron/sweep.c makes them, on one sweeper connection or
 * two at once. Every answer is compared with the model's (rules.c) and the state read back.
 *
 * Checked on the provider's side, as the calls come: no refund row is sent again once the
 * ledger has its answer, no charge is refunded twice or by more than it took, nothing
 * uncharged is refunded, every intent cancelled is of a share the model cancelled. At the end
 * of a sequence, once every event is delivered and every call made: per share, what the
 * provider charged minus what it refunded is what the ledger says the club keeps (its PAID
 * amount less its REFUNDED refunds), or, for money of another amount than the share (now and
 * then the provider charges a cent more), the ledger keeps nothing and an open issue names
 * it; no refund is left PENDING, a refund the provider failed is an open issue, the sweeper
 * has stopped calling, and the provider took no money the ledger does not know of. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const pe_names[] = { "payment_intent.succeeded",
	"payment_intent.payment_failed", "payment_intent.canceled", "refund.created",
	"refund.updated" };
static const char *const re_words[] = { "pending", "succeeded", "failed" };
static const char *const lr_names[] = { "PENDING", "REFUNDED", "FAILED" };

/* Outcomes counted for the summary, by what gave them. */
static const char ev_what[] = "provider event";
static const char confirm_what[] = "confirm payment";
static const char refund_what[] = "refund sent";
static const char cancel_what[] = "intent cancelled";

static long seen_sequences, seen_events, seen_duplicates, seen_out_of_order, seen_late;
static long seen_refunds, seen_retries, seen_failed, seen_cancelled, seen_declined;
static long seen_lapsed, seen_lost, seen_shares, seen_mismatches;

/* "pi_" and a uuid's hex digits: an id of the provider's for ledger row key. */
static void
object_id(char *buf, const char *prefix, const char *key)
{
	size_t n = strlen(prefix);

	memcpy(buf, prefix, n);
	for (; *key != '\0' && n < ID_LEN - 1; key++)
		if (*key != '-')
			buf[n++] = *key;
	buf[n] = '\0';
}

static int
intent_by_id(const struct provider *pv, const char *id)
{
	int k;

	for (k = 0; id != NULL && k < pv->nin; k++)
		if (strcmp(pv->in[k].id, id) == 0)
			return k;
	return -1;
}

static int
refund_by_key(const struct provider *pv, const char *key)
{
	int k;

	for (k = 0; k < pv->nre; k++)
		if (strcmp(pv->re[k].key, key) == 0)
			return k;
	return -1;
}

const char *
provider_refund_status(const struct seq *s, const struct join *j)
{
	int k;

	if (j->refunded == 0)
		return "-";
	if (j->intent == 0)	/* no provider's money: given back at once */
		return "REFUNDED";
	for (k = 0; k < s->pv.nre; k++)
		if (s->pv.re[k].intent == j->intent - 1)
			return lr_names[s->pv.re[k].ledger];
	return "PENDING";	/* not sent yet */
}

static void
queue(struct seq *s, int type, int object, const char *status)
{
	struct provider *pv = &s->pv;

	pv->events_made++;
	if (pv->nev == MAX_EVENTS)
		return;	/* never with the model's few shares */
	pv->ev[pv->nev++] = (struct pevent){ .type = type, .object = object,
	    .number = pv->events_made };
	snprintf(pv->ev[pv->nev - 1].status, sizeof pv->ev[0].status, "%s", status);
}

/* What the ledger's row of refund f answers to the provider's status, and what it says
 * then (payment_refund_apply). */
static const char *
refund_word(struct prefund *f, int status)
{
	if (f->ledger != LR_PENDING)
		return "RECORDED";
	f->answered = true;	/* settled, or waiting for the provider's event: never due again */
	if (status == RE_SUCCEEDED) {
		f->ledger = LR_REFUNDED;
		return "REFUNDED";
	}
	if (status == RE_FAILED) {
		f->ledger = LR_FAILED;
		return "REFUND_FAILED";
	}
	return "RECORDED";
}

static int
status_of(const char *word)
{
	return strcmp(word, "succeeded") == 0 ? RE_SUCCEEDED :
	    strcmp(word, "failed") == 0 ? RE_FAILED : RE_PENDING;
}

/* What applying the provider's word that intent k succeeded answers, and does to the model:
 * money of another amount than the share pays nothing (an issue for an administrator). */
static const char *
succeeded_word(struct seq *s, int k)
{
	struct intent *in = &s->pv.in[k];
	const char *word;

	if (s->matches[in->match].joins[in->join].pay == PAY_PAID)
		return "ALREADY_PAID";
	if (in->charged != in->amount)
		return "AMOUNT_MISMATCH";
	word = rule_share_paid(s, in->match, in->join);
	seen_late += strcmp(word, "LATE_PAYMENT") == 0;
	return word;
}

/* Delivers waiting event k through payment_event_apply at the sequence's clock; it stays
 * waiting, to come again, now and then (redeliver). */
static int
deliver(struct run *r, struct seq *s, int k, bool redeliver)
{
	struct provider *pv = &s->pv;
	struct pevent e = pv->ev[k];
	char id[64], amount[24], minrel[8], now[40];
	const char *params[11], *want = "RECORDED";
	bool refund = e.type == PE_REFUND_CREATED || e.type == PE_REFUND_UPDATED;
	struct stmt st = { "SELECT payment_event_apply($1, $2, $3, $4, $5::uuid, $6, $7::bigint, "
	    "$8, $9, $10::int, $11::timestamptz)", 11, params };
	int i;

	snprintf(id, sizeof id, "evt_%s_%d", s->venue, e.number);
	snprintf(minrel, sizeof minrel, "%d", s->min_reliability);
	pg_time(s->now, now, sizeof now);
	params[0] = "stripe";
	params[1] = id;
	params[2] = pe_names[e.type];
	params[3] = refund ? pv->re[e.object].id : pv->in[e.object].id;
	params[4] = refund ? pv->re[e.object].key : NULL;
	params[5] = e.status;
	params[6] = NULL;
	if (e.type == PE_SUCCEEDED) {	/* the amount received */
		snprintf(amount, sizeof amount, "%ld", pv->in[e.object].charged);
		params[6] = amount;
	}
	params[7] = refund ? NULL : "eur";
	params[8] = refund && strcmp(e.status, "failed") == 0 ? "expired_or_canceled_card" : NULL;
	params[9] = minrel;
	params[10] = now;
	for (i = 0; i < pv->nev; i++)
		if (pv->ev[i].sent == 0 && pv->ev[i].number < e.number)
			break;
	seen_out_of_order += e.sent == 0 && i < pv->nev;
	model_log(r, "the provider delivers %s %s (%s)%s", pe_names[e.type], params[3], e.status,
	    e.sent > 0 ? " again" : "");
	if (e.sent > 0) {
		want = "DUPLICATE";
		seen_duplicates++;
	} else if (e.type == PE_SUCCEEDED)
		want = succeeded_word(s, e.object);
	else if (refund)
		want = refund_word(&pv->re[e.object], status_of(e.status));
	seen_events++;
	if (redeliver && e.sent < 2 && model_chance(s, 30))
		pv->ev[k].sent++;
	else
		pv->ev[k] = pv->ev[--pv->nev];
	return flow_outcome(r, s, ev_what, want, &st);
}

int
provider_event(struct run *r, struct seq *s)
{
	struct provider *pv = &s->pv;
	int pending[MAX_INTENTS], n = 0, k;

	for (k = 0; k < pv->nre; k++)
		if (pv->re[k].status == RE_PENDING)
			pending[n++] = k;
	if (n > 0 && (pv->nev == 0 || model_chance(s, 30))) {
		struct prefund *f = &pv->re[pending[model_rnd(s, n)]];

		f->status = model_chance(s, 85) ? RE_SUCCEEDED : RE_FAILED;
		queue(s, PE_REFUND_UPDATED, (int)(f - pv->re), re_words[f->status]);
		model_log(r, "the provider settles refund %s: %s\n", f->id, re_words[f->status]);
		return flow_state(r, s);
	}
	if (pv->nev == 0) {
		model_log(r, "the provider has nothing to say\n");
		return flow_state(r, s);
	}
	return deliver(r, s, model_rnd(s, pv->nev), true);
}

/* The intent of a share the model has owed: mostly one still owed, now and then any the
 * provider would still take money for (a place freed, its intent not cancelled yet). */
static int
payable(struct seq *s)
{
	struct provider *pv = &s->pv;
	int owed[MAX_INTENTS], open[MAX_INTENTS], n = 0, o = 0, k;

	for (k = 0; k < pv->nin; k++) {
		const struct join *j = &s->matches[pv->in[k].match].joins[pv->in[k].join];

		if (pv->in[k].status != PI_OPEN)
			continue;
		open[o++] = k;
		if (j->pay == PAY_PENDING)
			owed[n++] = k;
	}
	if (n > 0 && model_chance(s, 85))
		return owed[model_rnd(s, n)];
	return o > 0 ? open[model_rnd(s, o)] : -1;
}

/* A payer pays a share at the provider: declined now and then (payment_failed), else
 * charged (succeeded); the event comes at once, or later; the organizer may instead ask
 * confirm-payment, which applies what the provider answers (payment_intent_apply). */
int
provider_pay(struct run *r, struct seq *s)
{
	struct provider *pv = &s->pv;
	int k = payable(s);
	struct intent *in;
	const struct join *j;
	char amount[24], minrel[8], now[40];
	const char *params[7] = { "stripe", NULL, "succeeded", amount, "eur", minrel, now };
	struct stmt st = { "SELECT payment_intent_apply($1, $2, $3, $4::bigint, $5, $6::int, "
	    "$7::timestamptz)", 7, params };
	const char *want;

	if (k < 0) {
		model_log(r, "nobody has a share to pay\n");
		return flow_state(r, s);
	}
	in = &pv->in[k];
	j = &s->matches[in->match].joins[in->join];
	model_log(r, "p%d pays %s for m%d", j->player, in->id, in->match);
	if (model_chance(s, 12)) {
		seen_declined++;
		queue(s, PE_FAILED, k, "requires_payment_method");
		model_log(r, ", declined; ");
		return model_chance(s, 50) ? deliver(r, s, pv->nev - 1, true) :
		    (model_log(r, "the event waits\n"), flow_state(r, s));
	}
	in->status = PI_SUCCEEDED;
	in->charged = in->amount;
	if (model_chance(s, 5)) {	/* the intent's amount changed on the way */
		in->charged++;
		seen_mismatches++;
		model_log(r, ", a cent more");
	}
	queue(s, PE_SUCCEEDED, k, "succeeded");
	if (j->organizer && s->matches[in->match].status == ST_PENDING_PAYMENT &&
	    s->matches[in->match].expires > s->now && model_chance(s, 30)) {
		snprintf(amount, sizeof amount, "%ld", in->charged);
		snprintf(minrel, sizeof minrel, "%d", s->min_reliability);
		pg_time(s->now, now, sizeof now);
		params[1] = in->id;
		model_log(r, ", and confirms the payment");
		want = succeeded_word(s, k);
		return flow_outcome(r, s, confirm_what, want, &st);
	}
	if (model_chance(s, 55)) {
		model_log(r, "; ");
		return deliver(r, s, pv->nev - 1, true);
	}
	model_log(r, "; the event waits\n");
	return flow_state(r, s);
}

/* The intents the shares owed want (payment_intent_wanted), made at the provider and
 * recorded (payment_intent_record), as common/share.c does in the call that made the share;
 * the shares that want one must be those the model owes without one. */
int
provider_intents(struct run *r, struct seq *s)
{
	struct provider *pv = &s->pv;
	struct state_query q;
	char keys[MAX_INTENTS * ID_LEN], ids[MAX_INTENTS * ID_LEN];
	const char *params[2] = { keys, ids }, *one[1] = { q.matches };
	size_t kl = 0, il = 0;
	PGresult *res;
	struct join *j;
	int want = 0, order[MAX_INTENTS], row[MAX_INTENTS], i, k, m, n, x;

	for (m = 0; m < s->nmatches; m++)
		for (i = 0; i < s->matches[m].njoins; i++) {
			j = &s->matches[m].joins[i];
			want += j->left == LEFT_NONE && j->pay == PAY_PENDING && j->intent == 0 &&
			    j->paid > 0;
		}
	check_query(s, false, &q);
	res = pg_exec(r->pg->main,
	    "SELECT mp.match_request_id, mp.player_id, w.payment_id, w.minor, w.currency "
	    "  FROM match_players mp "
	    " CROSS JOIN LATERAL payment_intent_wanted(mp.match_request_id, mp.player_id) w "
	    " WHERE mp.match_request_id = ANY ($1::uuid[]) AND mp.left_at IS NULL", 1, one);
	if (res == NULL) {
		snprintf(r->err, sizeof r->err, "the shares owed could not be read");
		return -1;
	}
	n = PQntuples(res);
	if (n != want || n > MAX_INTENTS) {
		snprintf(r->err, sizeof r->err, "%d shares want a PaymentIntent, the model owes %d",
		    n, want);
		PQclear(res);
		return -1;
	}
	/* in the model's order of the shares, whatever the database's: a seed replays */
	for (i = 0; i < n; i++) {
		for (m = 0; m < s->nmatches; m++)
			if (strcmp(s->matches[m].id, PQgetvalue(res, i, 0)) == 0)
				break;
		for (k = 0; k < s->nplayers; k++)
			if (strcmp(s->players[k].id, PQgetvalue(res, i, 1)) == 0)
				break;
		j = m < s->nmatches && k < s->nplayers ?
		    effect_active_join(&s->matches[m], k) : NULL;
		order[i] = j != NULL ? m * MAX_JOINS + (int)(j - s->matches[m].joins) : -1;
		row[i] = i;
	}
	for (i = 1; i < n; i++)	/* insertion sort: a few rows */
		for (k = i; k > 0 && order[row[k - 1]] > order[row[k]]; k--) {
			x = row[k];
			row[k] = row[k - 1];
			row[k - 1] = x;
		}
	kl = (size_t)snprintf(keys, sizeof keys, "{");
	il = (size_t)snprintf(ids, sizeof ids, "{");
	for (x = 0; x < n; x++) {
		i = row[x];
		m = order[i] / MAX_JOINS;
		j = order[i] >= 0 ? &s->matches[m].joins[order[i] % MAX_JOINS] : NULL;
		if (j == NULL || j->left != LEFT_NONE || j->pay != PAY_PENDING || j->intent != 0 ||
		    strtol(PQgetvalue(res, i, 3), NULL, 10) != j->paid ||
		    strcmp(PQgetvalue(res, i, 4), "eur") != 0 || pv->nin == MAX_INTENTS) {
			snprintf(r->err, sizeof r->err, "a PaymentIntent of %s %s is wanted for a "
			    "share the model does not owe", PQgetvalue(res, i, 3),
			    PQgetvalue(res, i, 4));
			PQclear(res);
			return -1;
		}
		k = pv->nin++;
		memset(&pv->in[k], 0, sizeof pv->in[k]);
		snprintf(pv->in[k].key, ID_LEN, "%s", PQgetvalue(res, i, 2));
		object_id(pv->in[k].id, "pi_", pv->in[k].key);
		pv->in[k].match = m;
		pv->in[k].join = (int)(j - s->matches[m].joins);
		pv->in[k].amount = j->paid;
		j->intent = k + 1;
		seen_shares++;
		kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "%s%s", x > 0 ? "," : "",
		    pv->in[k].key);
		il += (size_t)snprintf(ids + il, sizeof ids - il, "%s%s", x > 0 ? "," : "",
		    pv->in[k].id);
	}
	PQclear(res);
	if (n == 0)
		return 0;
	snprintf(keys + kl, sizeof keys - kl, "}");
	snprintf(ids + il, sizeof ids - il, "}");
	res = pg_exec(r->pg->main,
	    "SELECT count(payment_intent_record(x.k, 'stripe', x.i, 'secret_' || x.i, "
	    "                                   'requires_payment_method')) "
	    "  FROM unnest($1::uuid[], $2::text[]) AS x(k, i)", 2, params);
	if (res == NULL) {
		snprintf(r->err, sizeof r->err, "the PaymentIntents could not be recorded");
		return -1;
	}
	PQclear(res);
	model_log(r, "     %d PaymentIntent%s made\n", n, n > 1 ? "s" : "");
	return 0;
}

/* Runs sql on c; its first cell ("" for none) in out, or -1 with r->err. */
static int
call(struct run *r, PGconn *c, const char *sql, int n, const char *const *params, char *out,
    size_t len)
{
	PGresult *res = pg_exec(c, sql, n, params);

	if (res == NULL) {
		snprintf(r->err, sizeof r->err, "the sweeper's statement failed: %.80s", sql);
		return -1;
	}
	snprintf(out, len, "%s", PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return 0;
}

static int
expect(struct run *r, const char *what, const char *got, const char *want)
{
	model_log(r, " -> %s", got);
	model_count(what, got);
	if (strcmp(got, want) == 0)
		return 0;
	snprintf(r->err, sizeof r->err, "%s answered %s, the model expects %s", what, got, want);
	return -1;
}

/* The sweeper sends refund row key of the charge of intent (minor units) to the provider,
 * which answers or not (lost); the answer is applied. 1, 0 when no answer came (the run
 * stops, as cron/sweep.c's does), -1 with r->err. */
static int
send_refund(struct run *r, struct seq *s, PGconn *c, const char *key, const char *intent,
    long minor, bool reliable)
{
	struct provider *pv = &s->pv;
	int ik = intent_by_id(pv, intent), k = refund_by_key(pv, key), i;
	char now[40], got[64];
	const char *params[6] = { "stripe", key, NULL, NULL, NULL, now };
	struct prefund *f;

	pg_time(s->now, now, sizeof now);
	model_log(r, "\n       refund %s of %s", key, intent != NULL ? intent : "nothing");
	if (ik < 0) {
		snprintf(r->err, sizeof r->err, "refund %s gives back from %s, which the provider "
		    "never made", key, intent != NULL ? intent : "no PaymentIntent");
		return -1;
	}
	if (k >= 0 && pv->re[k].answered) {
		snprintf(r->err, sizeof r->err, "refund %s sent twice: the ledger had the "
		    "provider's answer (%s)", key, lr_names[pv->re[k].ledger]);
		return -1;
	}
	if (k < 0) {
		for (i = 0; i < pv->nre; i++)
			if (pv->re[i].intent == ik) {
				snprintf(r->err, sizeof r->err, "%s refunded twice: refunds %s and "
				    "%s", intent, pv->re[i].key, key);
				return -1;
			}
		if (pv->in[ik].status != PI_SUCCEEDED || minor != pv->in[ik].charged) {
			snprintf(r->err, sizeof r->err, "refund %s of %ld from %s, which took %ld",
			    key, minor, intent, pv->in[ik].charged);
			return -1;
		}
		if (!reliable && model_chance(s, 4)) {	/* down before it made the refund */
			model_log(r, ": the provider is down");
			seen_lost++;
			return call(r, c, "SELECT payment_call_failed($1::uuid, $2, $3::timestamptz)",
			    3, (const char *[]){ key, "provider down", now }, got, sizeof got) == 0 ?
			    0 : -1;
		}
		k = pv->nre++;
		f = &pv->re[k];
		memset(f, 0, sizeof *f);
		snprintf(f->key, ID_LEN, "%s", key);
		object_id(f->id, "re_", key);
		f->intent = ik;
		f->amount = minor;
		f->status = model_chance(s, 70) ? RE_SUCCEEDED : RE_PENDING;
		queue(s, PE_REFUND_CREATED, k, re_words[f->status]);
		seen_refunds++;
	} else
		seen_retries++;	/* made again under its key: the same refund */
	f = &pv->re[k];
	f->creates++;
	if (!reliable && model_chance(s, 6)) {	/* made, and the answer lost on the way */
		model_log(r, ": made, the answer lost");
		seen_lost++;
		return call(r, c, "SELECT payment_call_failed($1::uuid, $2, $3::timestamptz)", 3,
		    (const char *[]){ key, "timeout", now }, got, sizeof got) == 0 ? 0 : -1;
	}
	params[2] = f->id;
	params[3] = re_words[f->status];
	if (call(r, c, "SELECT payment_refund_apply($1, $2::uuid, $3, $4, $5, $6::timestamptz)",
	    6, params, got, sizeof got) != 0)
		return -1;
	return expect(r, refund_what, got, refund_word(f, f->status)) == 0 ? 1 : -1;
}

/* The sweeper cancels intent of cancelled share key at the provider: cancelled there (or
 * already), or paid meanwhile: a late payment, applied. 1, 0, -1 as send_refund. */
static int
cancel_intent(struct run *r, struct seq *s, PGconn *c, const char *key, const char *intent,
    bool reliable)
{
	struct provider *pv = &s->pv;
	int ik = intent_by_id(pv, intent);
	char now[40], got[64], amount[24], minrel[8];
	const char *params[7] = { "stripe", intent, "succeeded", amount, "eur", minrel, now };
	struct intent *in;

	pg_time(s->now, now, sizeof now);
	model_log(r, "\n       cancel %s", intent != NULL ? intent : "nothing");
	if (ik < 0 || strcmp(pv->in[ik].key, key) != 0 ||
	    s->matches[pv->in[ik].match].joins[pv->in[ik].join].pay != PAY_CANCELLED) {
		snprintf(r->err, sizeof r->err, "the sweeper cancels %s of payment %s, not a "
		    "share the model cancelled", intent != NULL ? intent : "nothing", key);
		return -1;
	}
	in = &pv->in[ik];
	if (in->settled) {
		snprintf(r->err, sizeof r->err, "the sweeper cancels %s again: the ledger had the "
		    "answer to its cancel", intent);
		return -1;
	}
	if (!reliable && model_chance(s, 5)) {
		model_log(r, ": the provider is down");
		seen_lost++;
		return call(r, c, "SELECT payment_call_failed($1::uuid, $2, $3::timestamptz)", 3,
		    (const char *[]){ key, "provider down", now }, got, sizeof got) == 0 ? 0 : -1;
	}
	if (in->status == PI_SUCCEEDED) {	/* paid just as its place was freed */
		snprintf(amount, sizeof amount, "%ld", in->charged);
		snprintf(minrel, sizeof minrel, "%d", s->min_reliability);
		model_log(r, ": it was paid");
		in->settled = true;
		if (call(r, c, "SELECT payment_intent_apply($1, $2, $3, $4::bigint, $5, $6::int, "
		    "$7::timestamptz)", 7, params, got, sizeof got) != 0)
			return -1;
		return expect(r, cancel_what, got, succeeded_word(s, ik)) == 0 ? 1 : -1;
	}
	if (in->status == PI_OPEN) {
		in->status = PI_CANCELED;
		queue(s, PE_CANCELED, ik, "canceled");
		seen_cancelled++;
	}
	in->settled = true;
	if (call(r, c, "SELECT payment_intent_cancelled($1::uuid)", 1, (const char *[]){ key },
	    got, sizeof got) != 0)
		return -1;
	return expect(r, cancel_what, "canceled", "canceled") == 0 ? 1 : -1;
}

/* payments_due on the given sweeper connections at once (two sweepers lease apart); their
 * rows in due[], the caller's to PQclear. 0, or -1 with r->err. */
static int
lease(struct run *r, struct seq *s, int sweepers, const char *lim, PGresult **due)
{
	char now[40];
	const char *params[2] = { lim, now };
	PGresult *res;
	int i;

	pg_time(s->now, now, sizeof now);
	for (i = 0; i < sweepers; i++) {
		due[i] = NULL;
		if (!PQsendQueryParams(r->pg->sweeper[i], "SELECT id, kind, intent, minor "
		    "  FROM payments_due($1::int, $2::timestamptz) WHERE provider = 'stripe'", 2,
		    NULL, params, NULL, NULL, 0)) {
			snprintf(r->err, sizeof r->err, "cannot lease: %s",
			    PQerrorMessage(r->pg->sweeper[i]));
			return -1;
		}
	}
	for (i = 0; i < sweepers; i++)
		while ((res = PQgetResult(r->pg->sweeper[i])) != NULL) {
			if (due[i] == NULL)
				due[i] = res;
			else
				PQclear(res);
		}
	for (i = 0; i < sweepers; i++)
		if (PQresultStatus(due[i]) != PGRES_TUPLES_OK) {
			snprintf(r->err, sizeof r->err, "payments_due failed: %s",
			    PQresultErrorMessage(due[i]));
			return -1;
		}
	return 0;
}

/* A due row of a lease: its sweeper, its row in that sweeper's answer, and where it comes in
 * the provider's order (its intent's, a refund after a cancel). */
struct due_row {
	int	sweeper, row, rank;
};

#define PROVIDER_BATCH	20	/* cron/sweep.c's calls leased at a time */

/* Rule 9 of cron/sweep.c, by one sweeper or two at once: the due calls leased a batch at a
 * time, each made and its answer applied, until a batch comes back short or a call gets no
 * answer (the rest of the batch waits out its lease). The calls of a lease are made in the
 * provider's order of their intents, whatever order the rows came in (ties of
 * next_attempt_at have none): a seed replays. *made counts the calls; reliable: the provider
 * always answers. 0, or -1 with r->err. */
static int
calls(struct run *r, struct seq *s, int sweepers, bool reliable, int *made)
{
	struct due_row rows[2 * PROVIDER_BATCH], t;
	PGresult *due[2] = { NULL, NULL };
	char lim[16];
	bool full;
	int n, i, k, x, rc = 1;

	snprintf(lim, sizeof lim, "%d", PROVIDER_BATCH);
	do {
		if (lease(r, s, sweepers, lim, due) != 0) {
			PQclear(due[0]);
			PQclear(due[1]);
			return -1;
		}
		full = false;
		n = 0;
		for (i = 0; i < sweepers; i++) {
			full |= PQntuples(due[i]) == PROVIDER_BATCH;
			for (k = 0; k < PQntuples(due[i]) && n < 2 * PROVIDER_BATCH; k++) {
				const char *intent = PQgetisnull(due[i], k, 2) ? NULL :
				    PQgetvalue(due[i], k, 2);

				rows[n++] = (struct due_row){ i, k, 2 * intent_by_id(&s->pv, intent) +
				    (strcmp(PQgetvalue(due[i], k, 1), "REFUND") == 0) };
			}
		}
		for (i = 1; i < n; i++)
			for (k = i; k > 0 && rows[k - 1].rank > rows[k].rank; k--) {
				t = rows[k];
				rows[k] = rows[k - 1];
				rows[k - 1] = t;
			}
		for (k = 1; k < n; k++)
			if (rows[k].rank == rows[k - 1].rank && rows[k].rank >= 0) {
				snprintf(r->err, sizeof r->err, "%s was leased twice at once",
				    PQgetvalue(due[rows[k].sweeper], rows[k].row, 0));
				rc = -1;
			}
		for (x = 0; rc > 0 && x < n; x++) {
			PGresult *d = due[rows[x].sweeper];
			const char *id = PQgetvalue(d, rows[x].row, 0);
			const char *intent = PQgetisnull(d, rows[x].row, 2) ? NULL :
			    PQgetvalue(d, rows[x].row, 2);
			PGconn *c = r->pg->sweeper[rows[x].sweeper];

			(*made)++;
			rc = strcmp(PQgetvalue(d, rows[x].row, 1), "REFUND") == 0 ?
			    send_refund(r, s, c, id, intent,
				strtol(PQgetvalue(d, rows[x].row, 3), NULL, 10), reliable) :
			    cancel_intent(r, s, c, id, intent, reliable);
		}
		PQclear(due[0]);
		PQclear(due[1]);
		due[0] = due[1] = NULL;
	} while (rc > 0 && full);
	return rc < 0 ? -1 : 0;
}

int
provider_sweep(struct run *r, struct seq *s, int sweepers)
{
	int made = 0;

	model_log(r, "     %s calls the provider", sweepers == 2 ? "two sweepers" : "the sweeper");
	if (calls(r, s, sweepers, false, &made) != 0)
		return -1;
	model_log(r, "%s\n", made == 0 ? ": nothing due" : "");
	return flow_state(r, s);
}

/* The reconciliation: per share of the ledger, what the club keeps (PAID less REFUNDED
 * refunds) against the provider's charge less its refunds; nothing left to settle. */
static int
reconcile(struct run *r, struct seq *s)
{
	struct provider *pv = &s->pv;
	struct state_query q;
	const char *params[1] = { q.matches };
	PGresult *res;
	long charged = 0, known = 0;
	bool mismatch = false;
	int i, k, f, n;

	check_query(s, false, &q);
	res = pg_exec(r->pg->main,
	    "SELECT p.id, p.provider_ref, "
	    "       CASE WHEN p.status = 'PAID' THEN payment_minor_units(p.amount, p.currency) "
	    "            ELSE 0 END "
	    "       - COALESCE((SELECT sum(payment_minor_units(x.amount, x.currency)) "
	    "                     FROM payments x WHERE x.refund_of = p.id "
	    "                      AND x.kind = 'REFUND' AND x.status = 'REFUNDED'), 0), "
	    "       (SELECT count(*) FROM payments x WHERE x.refund_of = p.id "
	    "           AND x.status = 'PENDING'), "
	    "       (SELECT count(*) FROM payments x WHERE x.refund_of = p.id "
	    "           AND x.status = 'FAILED' AND NOT EXISTS (SELECT 1 FROM payment_issues i "
	    "               WHERE i.payment_id = x.id AND i.kind = 'REFUND_FAILED' "
	    "                 AND i.resolved_at IS NULL)), "
	    "       p.status = 'CANCELLED' AND p.provider IS NOT NULL "
	    "       AND p.provider_status IS DISTINCT FROM 'canceled', "
	    "       (SELECT count(*) FROM payment_issues i WHERE i.payment_id = p.id "
	    "           AND i.kind = 'AMOUNT_MISMATCH' AND i.resolved_at IS NULL) "
	    "  FROM payments p "
	    " WHERE p.match_request_id = ANY ($1::uuid[]) AND p.kind = 'PAYMENT'", 1, params);
	if (res == NULL) {
		snprintf(r->err, sizeof r->err, "the ledger could not be read");
		return -1;
	}
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		const char *ref = PQgetisnull(res, i, 1) ? NULL : PQgetvalue(res, i, 1);
		long kept = strtol(PQgetvalue(res, i, 2), NULL, 10), net = 0;
		bool other = false, issue = strcmp(PQgetvalue(res, i, 6), "0") != 0;

		if ((k = intent_by_id(pv, ref)) >= 0) {
			net = pv->in[k].charged;
			for (f = 0; f < pv->nre; f++)
				if (pv->re[f].intent == k && pv->re[f].status == RE_SUCCEEDED)
					net -= pv->re[f].amount;
			other = pv->in[k].status == PI_SUCCEEDED &&
			    pv->in[k].charged != pv->in[k].amount;
			known++;
		}
		/* money of another amount: the ledger keeps nothing of it, an open issue says
		 * what the provider has, and no call can cancel its intent */
		if (other ? kept != 0 || !issue : kept != net || issue ||
		    strcmp(PQgetvalue(res, i, 5), "f") != 0)
			mismatch = true;
		if (mismatch || (ref != NULL && k < 0) || strcmp(PQgetvalue(res, i, 3), "0") ||
		    strcmp(PQgetvalue(res, i, 4), "0")) {
			snprintf(r->err, sizeof r->err, "payment %s (%s): the ledger keeps %ld, the "
			    "provider charged less refunded %ld%s; %s refunds pending, %s failed with "
			    "no issue, intent cancelled there: %s, amount issue: %s",
			    PQgetvalue(res, i, 0), ref != NULL ? ref : "no intent", kept, net,
			    other ? " (another amount)" : "", PQgetvalue(res, i, 3),
			    PQgetvalue(res, i, 4), PQgetvalue(res, i, 5)[0] == 't' ? "no" : "yes",
			    issue ? "open" : "none");
			PQclear(res);
			return -1;
		}
	}
	PQclear(res);
	for (k = 0; k < pv->nin; k++)
		charged += pv->in[k].status == PI_SUCCEEDED;
	if (known != pv->nin) {
		snprintf(r->err, sizeof r->err, "the provider has %d PaymentIntents (%ld charged), "
		    "the ledger names %ld", pv->nin, charged, known);
		return -1;
	}
	model_log(r, "     the provider's books and the ledger agree on %d shares\n", n);
	return 0;
}

int
provider_finish(struct run *r, struct seq *s)
{
	struct provider *pv = &s->pv;
	int round, made, k, m, i;
	char at[48];

	for (round = 0; round < 12; round++) {
		for (k = 0; k < pv->nre; k++)
			if (pv->re[k].status == RE_PENDING) {
				pv->re[k].status = model_chance(s, 85) ? RE_SUCCEEDED : RE_FAILED;
				queue(s, PE_REFUND_UPDATED, k, re_words[pv->re[k].status]);
			}
		while (pv->nev > 0) {
			model_log(r, "     ");
			if (deliver(r, s, model_rnd(s, pv->nev), false) != 0)
				return -1;
		}
		/* past every lease and back-off */
		s->now += HOUR + MINUTE;
		made = 0;
		model_log(r, "     %s ", model_when(r, s->now, at, sizeof at));
		if (calls(r, s, 1, true, &made) != 0)
			return -1;
		model_log(r, "%s\n", made == 0 ? "nothing due" : "");
		if (made == 0 && pv->nev == 0)
			break;
	}
	if (round == 12) {
		snprintf(r->err, sizeof r->err, "the sweeper still calls the provider after %d "
		    "runs with every event delivered", round);
		return -1;
	}
	if (flow_state(r, s) != 0)
		return -1;
	seen_sequences++;
	for (m = 0; m < s->nmatches; m++)
		for (i = 0; i < s->matches[m].njoins; i++)
			seen_lapsed += s->matches[m].joins[i].left == LEFT_UNPAID;
	for (k = 0; k < pv->nre; k++)
		seen_failed += pv->re[k].status == RE_FAILED;
	return reconcile(r, s);
}

void
provider_summary(void)
{
	if (seen_sequences == 0)
		return;
	printf("# provider: sequences %ld, shares %ld, events %ld (duplicates %ld, out of order "
	    "%ld), declined %ld, lapsed shares %ld, late payments %ld, refunds sent %ld "
	    "(retried %ld, failed %ld), intents cancelled %ld, calls unanswered %ld, "
	    "mismatches %ld\n",
	    seen_sequences, seen_shares, seen_events, seen_duplicates, seen_out_of_order,
	    seen_declined, seen_lapsed, seen_late, seen_refunds, seen_retries, seen_failed,
	    seen_cancelled, seen_lost, seen_mismatches);
}
