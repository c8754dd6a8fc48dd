/* check.c: after every step, the state of a sequence read back from the database, compared
 * line by line with the model's (rules.c), and the invariants that hold whatever the model
 * says: no two live matches overlap on a court; team counters equal the players and fit the
 * format; the open offers counted on a match are its pending offers, hand-overs and granted
 * places, and with the players fit each team; the ledger balances per join; status changes
 * follow match_transitions as one chain per match ending at its status; no event notifies a
 * recipient twice; a place request has a grant (a PLACE invitation or a waiting-list entry
 * of its player and match) exactly when APPROVED, every PLACE invitation is such a grant,
 * only players in the match answer, never the requester, and the place-request notices name
 * their request. A place request's line says whether it is open (place_request_open at the
 * sequence's clock), as the model's rule has it. One statement reads all of it, scoped to the
 * sequence's matches, players and courts. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The database's words for the model's enums. */
const char *const status_names[] = { "NONE", "PENDING_PAYMENT", "OPEN", "MATCHED", "CONFIRMED",
	"COMPLETED", "CANCELLED" };
const char *const reason_names[] = { "-", "ORGANIZER", "PAYMENT_EXPIRED", "NOT_FILLED" };
const char *const event_names[] = { "HOLD", "PAY", "EXPIRE_HOLD", "JOIN", "LEAVE", "ABSENCE",
	"CHECKIN", "CANCEL", "CANCEL_UNFILLED", "COMPLETE" };
const char *const inv_names[] = { "NONE", "PENDING", "ACCEPTED", "DECLINED", "EXPIRED" };
const char *const inv_kind_names[] = { "INVITE", "SUBSTITUTE", "OFFER", "HANDOVER", "PLACE" };
const char *const ho_status_names[] = { "OPEN", "REFILLED", "LAPSED" };
const char *const wait_end_names[] = { "-", "LEFT", "OFFERED", "JOINED", "MATCH_ENDED" };
static const char *const wait_team_names[] = { "TEAM_A", "TEAM_B", "ANY" };
const char *const pay_names[] = { "PENDING", "PAID", "CANCELLED" };
const char *const left_names[] = { "-", "LEFT", "ABSENT", "UNPAID" };
const char *const rel_names[] = { "NO_SHOW", "LATE_ABSENCE", "ATTENDED" };
const char *const note_names[] = { "PLAYER_JOINED", "MATCH_FULL", "PLAYER_LEFT", "PLAYER_ABSENT",
	"MATCH_INVITATION", "SUBSTITUTE_INVITATION", "MATCH_CONFIRMED", "MATCH_CANCELLED",
	"PAYMENT_EXPIRED", "MATCH_COMPLETED", "NO_SHOW", "PLACE_OFFERED", "HANDOVER_OFFERED",
	"PLACE_HANDED_OVER", "PLACE_REQUESTED", "PLACE_REQUEST_APPROVED",
	"PLACE_REQUEST_REJECTED" };
const char *const pr_status_names[] = { "PENDING", "REJECTED", "APPROVED" };
const char *const grant_names[] = { "-", "invitation", "waitlist" };
const char *const format_names[] = { "ONE_VS_ONE", "TWO_VS_TWO", "AMERICANO" };
const char *const skill_names[] = { "INTERMEDIATE", "ADVANCED" };

static const char *
money(long cents, char *buf, size_t len)
{
	snprintf(buf, len, "%ld.%02ld", cents / 100, cents % 100);
	return buf;
}

static void
line(struct lines *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
line(struct lines *out, const char *fmt, ...)
{
	va_list ap;

	if (out->n == LINES_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(out->v[out->n++], LINE_MAX_LEN, fmt, ap);
	va_end(ap);
}

/* Place request k of match m (index i) at now and its answers, in the lines the state query
 * answers. */
static void
request_lines(const struct match *m, int i, int k, long long now, struct lines *out)
{
	const struct place_request *pr = &m->req[k];
	char at[24];
	int q;

	snprintf(at, sizeof at, "%lld", pr->decided);
	line(out, "Q m%d p%d %s %s %s %s %s", i, pr->player, wait_team_names[pr->team],
	    pr_status_names[pr->status], effect_request_open(m, k, now) ? "open" : "closed",
	    grant_names[pr->grant], pr->status == PR_APPROVED ? at : "-");
	for (q = 0; q < MAX_PLAYERS; q++)
		if (pr->answer[q] != ANS_NONE)
			line(out, "A m%d p%d to p%d %s %lld", i, q, pr->player,
			    pr->answer[q] == ANS_APPROVE ? "approve" : "reject", pr->answered[q]);
}

/* The state the model expects, in the lines the state query answers. */
static void
model_lines(const struct seq *s, struct lines *out)
{
	char a[24], b[24], chain[LINE_MAX_LEN];
	int i, k, q;

	out->n = 0;
	for (i = 0; i < s->nmatches; i++) {
		const struct match *m = &s->matches[i];
		size_t len = 0;

		line(out, "M m%d %s %s %d %d %d %d", i, status_names[m->status],
		    reason_names[m->reason], effect_team_count(m, 0), effect_team_count(m, 1),
		    effect_offers(m, 0), effect_offers(m, 1));
		for (k = 0; k < m->njoins; k++) {
			const struct join *j = &m->joins[k];

			line(out, "J m%d p%d %s %s %s %s %s %s %s %s", i, j->player,
			    j->team == 0 ? "TEAM_A" : "TEAM_B",
			    j->organizer ? "ORGANIZER" : "PLAYER",
			    j->checked_in ? "in" : "out", left_names[j->left], pay_names[j->pay],
			    money(j->paid, a, sizeof a), money(j->refunded, b, sizeof b),
			    provider_refund_status(s, j));
		}
		for (q = 0; q < MAX_PLAYERS; q++) {
			bool held = effect_holds_place(m->inv_kind[q]);

			if (m->inv[q] == INV_NONE)
				continue;
			snprintf(a, sizeof a, "%lld", m->inv_expires[q]);
			line(out, "I m%d p%d %s %s %s %s", i, q, inv_names[m->inv[q]],
			    inv_kind_names[m->inv_kind[q]], !held ? "-" :
			    m->inv_team[q] == 0 ? "TEAM_A" : "TEAM_B", held ? a : "-");
		}
		for (k = 0; k < m->nreq; k++)
			request_lines(m, i, k, s->now, out);
		for (k = 0; k < m->nwait; k++)
			line(out, "W m%d p%d %s %s", i, m->wait[k].player,
			    wait_team_names[m->wait[k].team], wait_end_names[m->wait[k].end]);
		for (k = 0; k < m->nho; k++)
			line(out, "H m%d p%d %s %s %s %s", i, m->ho[k].player,
			    m->ho[k].leave ? "LEAVE" : "ABSENCE",
			    m->ho[k].team == 0 ? "TEAM_A" : "TEAM_B",
			    ho_status_names[m->ho[k].status], m->ho[k].late ? "true" : "false");
		for (k = 0; k < m->nchain && len < sizeof chain; k++)
			len += (size_t)snprintf(chain + len, sizeof chain - len, "%s%s>%s>%s",
			    k > 0 ? " " : "", status_names[m->chain[k].from],
			    event_names[m->chain[k].event], status_names[m->chain[k].to]);
		line(out, "S m%d %s", i, chain);
	}
	for (i = 0; i < s->nnotes; i++)
		line(out, "N m%d p%d %s %s x%d", s->notes[i].match, s->notes[i].recipient,
		    note_names[s->notes[i].type],
		    s->notes[i].refund >= 0 ? money(s->notes[i].refund, a, sizeof a) : "-",
		    s->notes[i].count);
	for (i = 0; i < s->nplayers; i++) {
		const struct player *p = &s->players[i];

		snprintf(b, sizeof b, "%lld", p->banned_until);
		line(out, "R p%d %d %d %s", i, p->score, p->no_shows,
		    p->banned_until != 0 ? b : "-");
	}
	for (i = 0; i < s->nrels; i++)
		line(out, "E m%d p%d %s", s->rels[i].match, s->rels[i].player,
		    rel_names[s->rels[i].kind]);
}

/* The rows of the sequence, each read once: its matches, every join of its players (an
 * unknown match among them shows), payments and refunds of its matches, the notifications
 * of its players, the status changes of its matches, their place requests and the answers. */
#define SEQUENCE_ROWS \
    "WITH m AS (SELECT * FROM match_requests WHERE id = ANY ($1::uuid[])), " \
    "mp AS (SELECT * FROM match_players WHERE player_id = ANY ($2::uuid[])), " \
    "pay AS (SELECT * FROM payments WHERE match_request_id = ANY ($1::uuid[])), " \
    "jp AS (SELECT mp.*, p.id AS pay_id, p.status AS pay_status, p.amount AS paid, " \
    "              p.provider AS pay_provider, p.expires_at AS pay_expires, " \
    "              p.updated_at AS pay_updated, " \
    "              r.amount AS refunded, " \
    "              r.status AS refund_status " \
    "         FROM mp " \
    "         LEFT JOIN pay p ON p.entry_id = mp.id AND p.kind = 'PAYMENT' " \
    "         LEFT JOIN pay r ON r.refund_of = p.id AND r.kind = 'REFUND'), " \
    "n AS (SELECT * FROM notifications WHERE recipient_id = ANY ($2::uuid[])), " \
    "c AS (SELECT * FROM match_status_changes WHERE match_request_id = ANY ($1::uuid[])), " \
    "pr AS (SELECT * FROM place_requests WHERE match_request_id = ANY ($1::uuid[])), " \
    "pa AS (SELECT a.*, q.match_request_id, q.player_id AS requester " \
    "         FROM place_request_answers a JOIN pr q ON q.id = a.place_request_id) "

/* A digest of every row of the sequence a sweeper may change, and the last status change
 * anywhere: a second sweeper run must change none of it. */
#define DIGEST \
    "SELECT 'D', NULL, NULL, md5(string_agg(x.r, E'\\n' ORDER BY x.r)) || ' ' || " \
    "       COALESCE((SELECT max(id) FROM match_status_changes), 0), NULL " \
    "  FROM (SELECT m::text AS r FROM m " \
    "        UNION ALL SELECT mp::text FROM mp " \
    "        UNION ALL SELECT i::text FROM invitations i " \
    "                   WHERE i.match_request_id = ANY ($1::uuid[]) " \
    "        UNION ALL SELECT w::text FROM match_waitlist w " \
    "                   WHERE w.match_request_id = ANY ($1::uuid[]) " \
    "        UNION ALL SELECT h::text FROM match_handovers h " \
    "                   WHERE h.match_request_id = ANY ($1::uuid[]) " \
    "        UNION ALL SELECT pay::text FROM pay " \
    "        UNION ALL SELECT c::text FROM c " \
    "        UNION ALL SELECT n::text FROM n " \
    "        UNION ALL SELECT e::text FROM reliability_events e " \
    "                   WHERE e.player_id = ANY ($2::uuid[]) " \
    "        UNION ALL SELECT pl::text FROM players pl " \
    "                   WHERE pl.user_id = ANY ($2::uuid[]) " \
    "        UNION ALL SELECT q::text FROM pr q " \
    "        UNION ALL SELECT a::text FROM pa a) x "

static const char digest_sql[] = SEQUENCE_ROWS DIGEST;

/* Columns: tag, match id, player id, the rest of the canonical line, and an id the model
 * learns (a match's token, an invitation's id, a place request's id). Tag X is a broken
 * invariant. */
static const char state_sql[] = SEQUENCE_ROWS
    /* the state, in the lines of model_lines() */
    "SELECT 'M', m.id::text, NULL, concat_ws(' ', m.status, COALESCE(m.cancel_reason, '-'), "
    "       m.team_a_count, m.team_b_count, m.offers_a, m.offers_b), m.invitation_token::text "
    "  FROM m "
    "UNION ALL "
    "SELECT 'J', jp.match_request_id::text, jp.player_id::text, "
    "       concat_ws(' ', jp.team, jp.role, "
    "                 CASE WHEN jp.checked_in_at IS NULL THEN 'out' ELSE 'in' END, "
    "                 COALESCE(jp.left_reason, '-'), COALESCE(jp.pay_status, 'NONE'), "
    "                 COALESCE(jp.paid::text, '-'), COALESCE(jp.refunded, 0.00)::text, "
    "                 COALESCE(jp.refund_status, '-')), NULL "
    "  FROM jp "
    "UNION ALL "
    "SELECT 'I', i.match_request_id::text, i.player_id::text, "
    "       concat_ws(' ', i.status, i.kind, COALESCE(i.team, '-'), "
    "                 COALESCE(extract(epoch FROM i.expires_at)::bigint::text, '-')), i.id::text "
    "  FROM invitations i WHERE i.match_request_id = ANY ($1::uuid[]) "
    "UNION ALL "
    "SELECT 'Q', q.match_request_id::text, q.player_id::text, "
    "       concat_ws(' ', q.team, q.status, "
    "                 (SELECT CASE WHEN place_request_open(t, mr, $4::timestamptz) "
    "                              THEN 'open' ELSE 'closed' END "
    "                    FROM place_requests t, match_requests mr "
    "                   WHERE t.id = q.id AND mr.id = q.match_request_id), "
    "                 CASE WHEN q.invitation_id IS NOT NULL THEN 'invitation' "
    "                      WHEN q.waitlist_id IS NOT NULL THEN 'waitlist' ELSE '-' END, "
    "                 COALESCE(extract(epoch FROM q.decided_at)::bigint::text, '-')), q.id::text "
    "  FROM pr q "
    "UNION ALL "
    "SELECT 'A', a.match_request_id::text, a.player_id::text, "
    "       concat_ws(' ', 'to', 'p' || array_position($2::uuid[], a.requester) - 1, "
    "                 CASE WHEN a.approve THEN 'approve' ELSE 'reject' END, "
    "                 extract(epoch FROM a.answered_at)::bigint), NULL "
    "  FROM pa a "
    "UNION ALL "
    "SELECT 'W', w.match_request_id::text, w.player_id::text, "
    "       concat_ws(' ', w.team, COALESCE(w.ended_reason, '-')), NULL "
    "  FROM match_waitlist w WHERE w.match_request_id = ANY ($1::uuid[]) "
    "UNION ALL "
    "SELECT 'H', h.match_request_id::text, h.player_id::text, "
    "       concat_ws(' ', h.event, h.team, h.status, h.late_penalty::text), NULL "
    "  FROM match_handovers h WHERE h.match_request_id = ANY ($1::uuid[]) "
    "UNION ALL "
    "SELECT 'N', n.payload->>'matchRequestId', n.recipient_id::text, "
    "       concat_ws(' ', n.type, COALESCE(n.payload->>'refund', '-'), 'x' || count(*)), NULL "
    "  FROM n GROUP BY n.payload->>'matchRequestId', n.recipient_id, n.type, "
    "                  n.payload->>'refund' "
    "UNION ALL "
    "SELECT 'R', NULL, p.user_id::text, concat_ws(' ', p.reliability_score, p.no_show_count, "
    "       COALESCE(extract(epoch FROM p.banned_until)::bigint::text, '-')), NULL "
    "  FROM players p WHERE p.user_id = ANY ($2::uuid[]) "
    "UNION ALL "
    "SELECT 'E', e.match_request_id::text, e.player_id::text, e.kind, NULL "
    "  FROM reliability_events e WHERE e.player_id = ANY ($2::uuid[]) "
    "UNION ALL "
    "SELECT 'S', c.match_request_id::text, NULL, "
    "       string_agg(c.from_status || '>' || c.event || '>' || c.to_status, ' ' ORDER BY c.id), "
    "       NULL "
    "  FROM c GROUP BY c.match_request_id "
    /* live (not cancelled, not a lapsed hold) matches never overlap on a court */
    "UNION ALL "
    "SELECT 'X', a.id::text, NULL, 'live matches ' || a.id || ' and ' || b.id || "
    "       ' overlap on a court', NULL "
    "  FROM unnest($3::uuid[]) AS court(id) "
    "  JOIN match_requests a ON a.resource_id = court.id "
    "  JOIN match_requests b ON b.resource_id = court.id AND b.id > a.id "
    " WHERE a.status <> 'CANCELLED' "
    "   AND NOT (a.status = 'PENDING_PAYMENT' AND a.expires_at <= $4::timestamptz) "
    "   AND b.status <> 'CANCELLED' "
    "   AND NOT (b.status = 'PENDING_PAYMENT' AND b.expires_at <= $4::timestamptz) "
    "   AND tsrange(a.booking_date + a.start_time, a.booking_date + a.end_time) "
    "       && tsrange(b.booking_date + b.start_time, b.booking_date + b.end_time) "
    /* the counters are the players in each team, within the format's team size */
    "UNION ALL "
    "SELECT 'X', m.id::text, NULL, 'counters ' || m.team_a_count || '/' || m.team_b_count || "
    "       ', players ' || COALESCE(t.a, 0) || '/' || COALESCE(t.b, 0) || ', team size ' || "
    "       m.team_size || ', format ' || f.team_size, NULL "
    "  FROM m JOIN match_formats f ON f.format = m.format "
    "  LEFT JOIN (SELECT match_request_id, count(*) FILTER (WHERE team = 'TEAM_A') AS a, "
    "                    count(*) FILTER (WHERE team = 'TEAM_B') AS b "
    "               FROM mp WHERE left_at IS NULL GROUP BY match_request_id) t "
    "         ON t.match_request_id = m.id "
    " WHERE m.team_a_count <> COALESCE(t.a, 0) OR m.team_b_count <> COALESCE(t.b, 0) "
    "    OR m.team_size <> f.team_size OR t.a > f.team_size OR t.b > f.team_size "
    /* the open offers counted on the match are its pending offers, team by team */
    "UNION ALL "
    "SELECT 'X', m.id::text, NULL, 'open offers ' || m.offers_a || '/' || m.offers_b || "
    "       ', pending offers ' || COALESCE(o.a, 0) || '/' || COALESCE(o.b, 0), NULL "
    "  FROM m LEFT JOIN (SELECT match_request_id, count(*) FILTER (WHERE team = 'TEAM_A') AS a, "
    "                           count(*) FILTER (WHERE team = 'TEAM_B') AS b "
    "                      FROM invitations WHERE kind IN ('OFFER', 'HANDOVER', 'PLACE') "
    "                       AND status = 'PENDING' "
    "                     GROUP BY match_request_id) o ON o.match_request_id = m.id "
    " WHERE m.offers_a <> COALESCE(o.a, 0) OR m.offers_b <> COALESCE(o.b, 0) "
    /* players and held places together fit each team */
    "UNION ALL "
    "SELECT 'X', m.id::text, NULL, 'players and held places ' || m.team_a_count + m.offers_a "
    "       || '/' || m.team_b_count + m.offers_b || ', team size ' || m.team_size, NULL "
    "  FROM m WHERE m.team_a_count + m.offers_a > m.team_size "
    "            OR m.team_b_count + m.offers_b > m.team_size "
    /* a place request is granted exactly when APPROVED, one place of its own player and
     * match: an invitation or a waiting-list entry */
    "UNION ALL "
    "SELECT 'X', q.match_request_id::text, q.player_id::text, 'place request ' || q.id || ' ' "
    "       || q.status || ' with invitation ' || COALESCE(q.invitation_id::text, '-') || "
    "       ' and waiting-list entry ' || COALESCE(q.waitlist_id::text, '-'), NULL "
    "  FROM pr q "
    "  LEFT JOIN invitations i ON i.id = q.invitation_id "
    "  LEFT JOIN match_waitlist w ON w.id = q.waitlist_id "
    " WHERE (q.invitation_id IS NOT NULL)::int + (q.waitlist_id IS NOT NULL)::int "
    "       <> (q.status = 'APPROVED')::int "
    "    OR (q.status = 'APPROVED') <> (q.decided_at IS NOT NULL) "
    "    OR i.match_request_id <> q.match_request_id OR i.player_id <> q.player_id "
    "    OR w.match_request_id <> q.match_request_id OR w.player_id <> q.player_id "
    /* a PLACE invitation is the grant of an approved place request of its player */
    "UNION ALL "
    "SELECT 'X', i.match_request_id::text, i.player_id::text, 'PLACE invitation ' || i.id || "
    "       ' is no approved place request''s', NULL "
    "  FROM invitations i "
    " WHERE i.match_request_id = ANY ($1::uuid[]) AND i.kind = 'PLACE' "
    "   AND NOT EXISTS (SELECT 1 FROM pr q WHERE q.invitation_id = i.id "
    "                      AND q.player_id = i.player_id AND q.status = 'APPROVED') "
    /* only a player in the match answers its place requests, never its requester (a request
     * is closed while its player plays in the match) */
    "UNION ALL "
    "SELECT 'X', a.match_request_id::text, a.player_id::text, 'answer to place request ' || "
    "       a.place_request_id || ' by a player not in the match then', NULL "
    "  FROM pa a "
    " WHERE NOT EXISTS (SELECT 1 FROM mp WHERE mp.match_request_id = a.match_request_id "
    "                      AND mp.player_id = a.player_id AND mp.joined_at <= a.answered_at) "
    "UNION ALL "
    "SELECT 'X', a.match_request_id::text, a.player_id::text, 'place request ' || "
    "       a.place_request_id || ' answered by its own player', NULL "
    "  FROM pa a WHERE a.player_id = a.requester "
    /* the place-request notices name a request of their match: its requester (told of the
     * request), or its player as recipient; an approval its grant, told when decided */
    "UNION ALL "
    "SELECT 'X', n.payload->>'matchRequestId', n.recipient_id::text, n.type || ' ' || "
    "       n.payload::text || ' does not match its place request', NULL "
    "  FROM n LEFT JOIN pr q ON q.id = (n.payload->>'placeRequestId')::uuid "
    " WHERE n.type IN ('PLACE_REQUESTED', 'PLACE_REQUEST_APPROVED', 'PLACE_REQUEST_REJECTED') "
    "   AND (q.id IS NULL OR q.match_request_id::text <> n.payload->>'matchRequestId' "
    "        OR (n.type = 'PLACE_REQUESTED' AND (q.player_id::text <> n.payload->>'playerId' "
    "                                            OR n.created_at <> q.created_at)) "
    "        OR (n.type <> 'PLACE_REQUESTED' AND q.player_id <> n.recipient_id) "
    "        OR (n.type = 'PLACE_REQUEST_APPROVED' "
    "            AND (q.status <> 'APPROVED' OR n.created_at <> q.decided_at "
    "                 OR (n.payload->>'invitationId') IS DISTINCT FROM q.invitation_id::text))) "
    /* a refund gives back in full a PAID payment of the same player and match, once: at
     * once without a provider, else through it (PENDING until it settled) */
    "UNION ALL "
    "SELECT 'X', r.match_request_id::text, NULL, 'refund ' || r.id || "
    "       ' does not give back a PAID payment of its player and match in full', NULL "
    "  FROM pay r LEFT JOIN payments p ON p.id = r.refund_of "
    " WHERE r.kind = 'REFUND' "
    "   AND (p.id IS NULL OR p.kind <> 'PAYMENT' OR p.status <> 'PAID' "
    "        OR r.provider IS DISTINCT FROM p.provider "
    "        OR (r.provider IS NULL AND r.status <> 'REFUNDED') "
    "        OR r.status NOT IN ('PENDING', 'REFUNDED', 'FAILED') "
    "        OR p.player_id <> r.player_id "
    "        OR p.match_request_id <> r.match_request_id OR p.amount <> r.amount) "
    "UNION ALL "
    "SELECT 'X', NULL, NULL, 'payment ' || refund_of || ' refunded ' || count(*) || ' times', "
    "       NULL "
    "  FROM pay WHERE kind = 'REFUND' GROUP BY refund_of HAVING count(*) > 1 "
    "UNION ALL "
    "SELECT 'X', p.match_request_id::text, p.player_id::text, 'payment ' || p.id || "
    "       ' does not pay for a join of its player and match', NULL "
    "  FROM pay p LEFT JOIN match_players mp ON mp.id = p.entry_id "
    " WHERE p.kind = 'PAYMENT' AND (mp.id IS NULL OR mp.player_id <> p.player_id "
    "                               OR mp.match_request_id <> p.match_request_id) "
    /* per join, one payment, and paid minus refunded is what the player owes: the share
     * while in the match, after an absence or once played; nothing after leaving, while the
     * hold awaits payment, or after a cancellation, but for the organizer's share when the
     * organizer called a paid match off less than organizer_refund_notice ahead; with a
     * provider nothing while a share is owed or once it was cancelled unpaid, and nothing
     * after its place was freed unpaid or its player reported absent while it was owed
     * (money that came later is given back) */
    "UNION ALL "
    "SELECT 'X', jp.match_request_id::text, jp.player_id::text, 'join ' || jp.id || ': ' || "
    "       count(DISTINCT jp.pay_id) || ' payments, paid - refunded = ' || "
    "       min(CASE WHEN jp.pay_status = 'PAID' THEN jp.paid ELSE 0 END "
    "           - COALESCE(jp.refunded, 0)) || ', owed ' || min(o.owed), NULL "
    "  FROM jp "
    "  JOIN m ON m.id = jp.match_request_id "
    " CROSS JOIN match_policy pol "
    "  LEFT JOIN LATERAL (SELECT c.from_status, c.changed_at FROM c "
    "                      WHERE c.match_request_id = m.id AND c.to_status = 'CANCELLED' "
    "                      ORDER BY c.id DESC LIMIT 1) cx ON true "
    " CROSS JOIN LATERAL (SELECT CASE WHEN jp.role = 'ORGANIZER' "
    "                            THEN m.court_price - m.price_per_player * (2 * m.team_size - 1) "
    "                            ELSE m.price_per_player END AS share) sh "
    " CROSS JOIN LATERAL (SELECT CASE "
    "       WHEN jp.left_reason IN ('LEFT', 'UNPAID') THEN 0 "
    "       WHEN (jp.pay_provider IS NOT NULL OR jp.pay_expires IS NOT NULL) "
    "            AND jp.pay_status IN ('PENDING', 'CANCELLED') "
    "            THEN 0 "
    "       WHEN jp.left_reason = 'ABSENT' AND EXISTS (SELECT 1 FROM match_handovers h "
    "            WHERE h.entry_id = jp.id AND h.status = 'REFILLED') THEN 0 "
    "       WHEN jp.left_reason = 'ABSENT' AND jp.pay_expires IS NOT NULL "
    "            AND jp.pay_updated >= jp.left_at THEN 0 "
    "       WHEN jp.left_reason = 'ABSENT' THEN sh.share "
    "       WHEN m.status = 'PENDING_PAYMENT' THEN 0 "
    "       WHEN m.status = 'CANCELLED' AND jp.role = 'ORGANIZER' "
    "            AND m.cancel_reason = 'ORGANIZER' AND cx.from_status <> 'PENDING_PAYMENT' "
    "            AND m.starts_at - cx.changed_at < pol.organizer_refund_notice THEN sh.share "
    "       WHEN m.status = 'CANCELLED' THEN 0 "
    "       ELSE sh.share END AS owed) o "
    " GROUP BY jp.id, jp.match_request_id, jp.player_id "
    "HAVING count(jp.pay_id) <> 1 "
    "    OR min(CASE WHEN jp.pay_status = 'PAID' THEN jp.paid ELSE 0 END "
    "           - COALESCE(jp.refunded, 0)) <> min(o.owed) "
    "UNION ALL "
    "SELECT 'X', jp.match_request_id::text, NULL, "
    "       'awaiting payment, the organizer''s payment is ' || COALESCE(jp.pay_status, 'none'), "
    "       NULL "
    "  FROM jp JOIN m ON m.id = jp.match_request_id "
    " WHERE m.status = 'PENDING_PAYMENT' AND jp.role = 'ORGANIZER' "
    "   AND jp.pay_status IS DISTINCT FROM 'PENDING' "
    /* every status change is a transition, and they chain from NONE to the status */
    "UNION ALL "
    "SELECT 'X', c.match_request_id::text, NULL, 'status change ' || c.from_status || ' ' || "
    "       c.event || ' ' || c.to_status || ' is not in match_transitions', NULL "
    "  FROM c LEFT JOIN match_transitions t "
    "         ON t.from_status = c.from_status AND t.event = c.event AND t.to_status = c.to_status "
    " WHERE t.event IS NULL "
    "UNION ALL "
    "SELECT 'X', x.match_request_id::text, NULL, 'status change ' || x.id || ' starts from ' || "
    "       x.from_status || ' after ' || x.prev, NULL "
    "  FROM (SELECT c.id, c.match_request_id, c.from_status, "
    "               lag(c.to_status, 1, 'NONE') OVER (PARTITION BY c.match_request_id "
    "                                                 ORDER BY c.id) AS prev FROM c) x "
    " WHERE x.from_status <> x.prev "
    "UNION ALL "
    "SELECT 'X', m.id::text, NULL, 'status ' || m.status || ' ' || COALESCE(m.cancel_reason, '-') "
    "       || ' is not where the recorded changes end', NULL "
    "  FROM m "
    "  LEFT JOIN LATERAL (SELECT c.to_status, t.cancel_reason FROM c "
    "                       JOIN match_transitions t "
    "                         ON t.from_status = c.from_status AND t.event = c.event "
    "                      WHERE c.match_request_id = m.id ORDER BY c.id DESC LIMIT 1) l "
    "         ON true "
    " WHERE l.to_status IS DISTINCT FROM m.status "
    "    OR l.cancel_reason IS DISTINCT FROM m.cancel_reason "
    /* one event tells each recipient once (every step of a sequence has its own instant) */
    "UNION ALL "
    "SELECT 'X', n.payload->>'matchRequestId', n.recipient_id::text, n.type || ' ' || "
    "       n.payload::text || ' notified ' || count(*) || ' times at once', NULL "
    "  FROM n GROUP BY n.recipient_id, n.type, n.payload, n.created_at HAVING count(*) > 1 "
    /* and when asked ($5), the digest */
    "UNION ALL " DIGEST
    " WHERE $5::boolean";

static void
ids_text(char *buf, size_t len, int n, const char *first, size_t stride)
{
	size_t used = (size_t)snprintf(buf, len, "{");
	int i;

	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i > 0 ? "," : "",
		    first + (size_t)i * stride);
	if (used < len)
		snprintf(buf + used, len - used, "}");
}

static int
match_index(const struct seq *s, const char *id)
{
	int i;

	for (i = 0; id != NULL && i < s->nmatches; i++)
		if (strcmp(s->matches[i].id, id) == 0)
			return i;
	return -1;
}

static int
player_index(const struct seq *s, const char *id)
{
	int i;

	for (i = 0; id != NULL && i < s->nplayers; i++)
		if (strcmp(s->players[i].id, id) == 0)
			return i;
	return -1;
}

/* The id of the place request of player p in match m. */
static void
learn_request(struct match *m, int p, const char *id)
{
	int k;

	for (k = 0; k < m->nreq; k++)
		if (m->req[k].player == p)
			snprintf(m->req[k].id, ID_LEN, "%s", id);
}

static int
line_cmp(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Appends to err the lines only one side has, "db:" or "model:" before each. */
static void
diff(const struct lines *got, const struct lines *want, char *err, size_t errlen)
{
	size_t used = strlen(err);
	int i = 0, k = 0, c;

	while ((i < got->n || k < want->n) && used < errlen) {
		c = i == got->n ? 1 : k == want->n ? -1 : strcmp(got->v[i], want->v[k]);
		if (c == 0) {
			i++;
			k++;
			continue;
		}
		used += (size_t)snprintf(err + used, errlen - used, "\n    %s %s",
		    c < 0 ? "db:   " : "model:", c < 0 ? got->v[i++] : want->v[k++]);
	}
}

void
check_query(const struct seq *s, bool digest, struct state_query *q)
{
	ids_text(q->matches, sizeof q->matches, s->nmatches, s->matches[0].id,
	    sizeof s->matches[0]);
	ids_text(q->players, sizeof q->players, s->nplayers, s->players[0].id,
	    sizeof s->players[0]);
	ids_text(q->courts, sizeof q->courts, s->ncourts, s->courts[0].id, sizeof s->courts[0]);
	pg_time(s->now, q->now, sizeof q->now);
	q->params[0] = q->matches;
	q->params[1] = q->players;
	q->params[2] = q->courts;
	q->params[3] = q->now;
	q->params[4] = digest ? "t" : "f";
	q->st = (struct stmt){ state_sql, 5, q->params };
}

int
check_result(PGresult *res, struct seq *s, struct lines *got, struct lines *want, char *digest,
    size_t digest_len, char *err, size_t errlen)
{
	size_t used = 0;
	int i, m, p, rc = 0;

	err[0] = '\0';
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, errlen, "the state could not be read: %s", PQresultErrorMessage(res));
		PQclear(res);
		return -1;
	}
	got->n = 0;
	for (i = 0; i < PQntuples(res); i++) {
		const char *tag = PQgetvalue(res, i, 0), *rest = PQgetvalue(res, i, 3);
		const char *extra = PQgetisnull(res, i, 4) ? NULL : PQgetvalue(res, i, 4);
		char mt[16] = "", pt[16] = "";

		m = PQgetisnull(res, i, 1) ? -2 : match_index(s, PQgetvalue(res, i, 1));
		p = PQgetisnull(res, i, 2) ? -2 : player_index(s, PQgetvalue(res, i, 2));
		if (*tag == 'D') {
			if (digest != NULL)
				snprintf(digest, digest_len, "%s", rest);
			continue;
		}
		if (*tag == 'X') {
			used += (size_t)snprintf(err + used, used < errlen ? errlen - used : 0,
			    "\n    invariant: %s", rest);
			rc = -1;
			continue;
		}
		if (*tag == 'M' && m >= 0 && extra != NULL)
			snprintf(s->matches[m].token, ID_LEN, "%s", extra);
		if (*tag == 'I' && m >= 0 && p >= 0 && extra != NULL)
			snprintf(s->matches[m].inv_id[p], ID_LEN, "%s", extra);
		if (*tag == 'Q' && m >= 0 && p >= 0 && extra != NULL)
			learn_request(&s->matches[m], p, extra);
		if (m != -2)
			snprintf(mt, sizeof mt, m >= 0 ? " m%d" : " m?", m);
		if (p != -2)
			snprintf(pt, sizeof pt, p >= 0 ? " p%d" : " p?", p);
		if (got->n < LINES_MAX)
			snprintf(got->v[got->n++], LINE_MAX_LEN, "%s%s%s %s", tag, mt, pt, rest);
	}
	PQclear(res);
	model_lines(s, want);
	qsort(got->v, (size_t)got->n, sizeof got->v[0], line_cmp);
	qsort(want->v, (size_t)want->n, sizeof want->v[0], line_cmp);
	for (i = 0; i < got->n && i < want->n && got->n == want->n; i++)
		if (strcmp(got->v[i], want->v[i]) != 0)
			break;
	if (got->n != want->n || i < got->n) {
		diff(got, want, err, errlen);
		rc = -1;
	}
	return rc;
}

void
check_digest_query(const struct seq *s, struct state_query *q)
{
	check_query(s, false, q);
	q->st = (struct stmt){ digest_sql, 2, q->params };
}

int
check_digest(PGresult *res, char *digest, size_t len)
{
	int rc = -1;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
		snprintf(digest, len, "%s", PQgetvalue(res, 0, 3));
		rc = 0;
	}
	PQclear(res);
	return rc;
}
