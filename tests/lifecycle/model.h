/* model.h: the randomized lifecycle test (tests/lifecycle/): a reference model of the match
 * lifecycle of sql/areas/60_lifecycle.sql (with the weekly series of 80_series.sql, the
 * waiting lists and offers, the hand-overs and the place requests of 65_places.sql, and
 * joining from the open-match feed of 70_open_matches.sql), and the database side that the
 * model is checked against after every step.
 *
 *   model.c   the driver: arguments, sequences, the step log, the summary;
 *   flow.c    the steps: what comes next, the call and the state read after it, compared;
 *             clock moves, instants the rules turn on, sweeper runs;
 *   act.c     the lifecycle calls a step makes, with their subjects;
 *   rules.c   the reference model: what each call must answer, checked in the service's
 *             order, and which effects it has;
 *   effects.c the model's effects: status by the allowed transitions, ledger, invitations,
 *             scores and bans, notifications, place requests decided by their answers;
 *   pg.c      the database: connections, statements in one round trip, set-up rows, the
 *             outcome of a call, sweepers on one or two connections;
 *   check.c   the state read back, the invariants, the comparison with the model;
 *   provider.c with a payment provider (a share of the sequences, --provider): a simulated
 *             provider, its PaymentIntents, refunds and events, delivered late, twice and
 *             out of order, the sweeper's calls to it, and the reconciliation of its books
 *             with the ledger.
 *
 * With a provider a join's share is owed for the sequence's share window
 * (courts.share_hold_seconds, as common/join.c sets it) and its place held meanwhile; every
 * share owed gets a PaymentIntent (as common/share.c makes them); a share is PAID only on the
 * provider's word (its event, the organizer's confirm-payment, the sweeper finding an intent
 * it meant to cancel paid); a share not paid in time frees its place (UNPAID), a match is
 * MATCHED only once every place is paid, and money that comes after the place was freed is
 * taken and refunded in full, money of another amount pays nothing (an issue). Refunds are
 * PENDING until the sweeper sent them and the provider settled them. As the calls come no
 * refund is sent twice or exceeds its charge, and no intent is cancelled twice; at the end
 * of a sequence, once every event is delivered and every call made, the provider charged
 * minus what it refunded is, share by share, what the ledger says the club keeps (or an open
 * issue says why not).
 *
 * The model's matches are PUBLIC and competitive (the defaults), its players never rated:
 * a player's level is the declared one, INTERMEDIATE or ADVANCED, and one of another level
 * than a match's is refused joining from the feed and its waiting list, and asks for a place
 * instead.
 *
 * Times are whole seconds since the epoch, UTC (the test venues are in UTC, so a slot's
 * local date and time are its instant's); money is in cents. */
#ifndef COURTS_LIFECYCLE_MODEL_H
#define COURTS_LIFECYCLE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#define MAX_PLAYERS	8
#define MAX_MATCHES	4
#define MAX_SERIES	MAX_MATCHES	/* a series makes one match or more */
#define MAX_WEEKS	3		/* of a series */
#define MAX_WAIT	20		/* waiting-list entries of a match */
#define WAIT_DRAWN	12		/* of them, made by joining the list; the rest is room for
					 * the place requests approved, one per player */
#define MAX_HANDOVERS	16		/* hand-overs of a match */
#define MAX_REQUESTS	MAX_PLAYERS	/* place requests of a match: one per player */
#define MAX_COURTS	2
#define MAX_JOINS	32
#define MAX_CHAIN	48
#define MAX_NOTES	768
#define MAX_RELS	96
#define ID_LEN		40	/* a uuid's text and its NUL, with room */

#define MINUTE	60LL
#define HOUR	(60 * MINUTE)
#define DAY	(24 * HOUR)

/* The policy of sql/0010_lifecycle.sql (match_policy, reliability_rules), restated: the
 * model must not read the numbers it checks from the database it checks. */
#define LEAVE_NOTICE		(48 * HOUR)
#define LATE_ABSENCE_WINDOW	(24 * HOUR)
#define ORGANIZER_REFUND_NOTICE	(24 * HOUR)
#define CHECKIN_OPENS_BEFORE	(30 * MINUTE)
#define OFFER_WINDOW		(15 * MINUTE)
#define HANDOVER_NOTICE		(2 * HOUR)
#define BAN_NO_SHOWS		3
#define BAN_WINDOW		(90 * DAY)
#define BAN_LENGTH		(30 * DAY)
#define CHECKIN_RADIUS_M	200	/* the service's defaults (common/config.c) */
#define CHECKIN_MAX_ACCURACY_M	100

enum status { ST_NONE, ST_PENDING_PAYMENT, ST_OPEN, ST_MATCHED, ST_CONFIRMED, ST_COMPLETED,
	ST_CANCELLED };
enum reason { RS_NONE, RS_ORGANIZER, RS_PAYMENT_EXPIRED, RS_NOT_FILLED };
enum event { EV_HOLD, EV_PAY, EV_EXPIRE_HOLD, EV_JOIN, EV_LEAVE, EV_ABSENCE, EV_CHECKIN,
	EV_CANCEL, EV_CANCEL_UNFILLED, EV_COMPLETE };
enum inv { INV_NONE, INV_PENDING, INV_ACCEPTED, INV_DECLINED, INV_EXPIRED };
enum inv_kind { IK_INVITE, IK_SUBSTITUTE, IK_OFFER, IK_HANDOVER, IK_PLACE };
enum ho_status { HO_OPEN, HO_REFILLED, HO_LAPSED };
enum wait_end { WE_WAITING, WE_LEFT, WE_OFFERED, WE_JOINED, WE_MATCH_ENDED };
enum pay { PAY_PENDING, PAY_PAID, PAY_CANCELLED };
enum left { LEFT_NONE, LEFT_LEFT, LEFT_ABSENT, LEFT_UNPAID };
enum rel_kind { REL_NO_SHOW, REL_LATE_ABSENCE, REL_ATTENDED };
enum note { N_PLAYER_JOINED, N_MATCH_FULL, N_PLAYER_LEFT, N_PLAYER_ABSENT, N_MATCH_INVITATION,
	N_SUBSTITUTE_INVITATION, N_MATCH_CONFIRMED, N_MATCH_CANCELLED, N_PAYMENT_EXPIRED,
	N_MATCH_COMPLETED, N_NO_SHOW, N_PLACE_OFFERED, N_HANDOVER_OFFERED, N_PLACE_HANDED_OVER,
	N_PLACE_REQUESTED, N_PLACE_REQUEST_APPROVED, N_PLACE_REQUEST_REJECTED };
enum pr_status { PR_PENDING, PR_REJECTED, PR_APPROVED };
enum grant { GR_NONE, GR_INVITATION, GR_WAITLIST };
enum answer { ANS_NONE, ANS_APPROVE, ANS_REJECT };
enum format { F_ONE_VS_ONE, F_TWO_VS_TWO, F_AMERICANO };
enum skill { SK_INTERMEDIATE, SK_ADVANCED };

extern const char *const status_names[];
extern const char *const reason_names[];
extern const char *const event_names[];
extern const char *const inv_names[];
extern const char *const inv_kind_names[];
extern const char *const wait_end_names[];
extern const char *const ho_status_names[];
extern const char *const pay_names[];
extern const char *const left_names[];
extern const char *const rel_names[];
extern const char *const note_names[];
extern const char *const format_names[];
extern const char *const skill_names[];
extern const char *const pr_status_names[];
extern const char *const grant_names[];

/* One join of a player to a match (a match_players row with the payment that pays it). */
struct join {
	int	player;
	int	team;		/* 0 TEAM_A, 1 TEAM_B */
	bool	organizer;
	bool	checked_in;
	int	left;		/* enum left */
	int	pay;		/* enum pay */
	long	paid;		/* the payment's amount */
	long	refunded;	/* refunded of it */
	long long expires;	/* a share owed with a provider: until when (0: paid at once) */
	int	intent;		/* its PaymentIntent: 1 + an index of the provider's, 0 none */
};

struct change {
	int	from, event, to;
};

/* An entry of a match's waiting list (match_waitlist), in the order of joining. */
struct wait {
	int	player;
	int	team;		/* 0 TEAM_A, 1 TEAM_B, 2 ANY */
	int	end;		/* enum wait_end */
};

/* A place handed to a substitute by a leave or an absence (match_handovers), in the order
 * made. */
struct handover {
	int	player, join;	/* the leaver and the join that ended (an index of joins) */
	int	team, substitute;
	bool	leave, late;	/* a leave (else an absence); a late absence's penalty waits */
	long long window_ends;
	int	status;		/* enum ho_status */
};

/* A place request of a player of another level (place_requests), in the order made, with the
 * latest answer of each player who answered it (place_request_answers). */
struct place_request {
	char	id[ID_LEN];		/* learnt from the database */
	int	player;
	int	team;			/* 0 TEAM_A, 1 TEAM_B, 2 ANY */
	int	status;			/* enum pr_status */
	int	grant;			/* enum grant: what approving it gave */
	long long decided;		/* when it was approved */
	int	answer[MAX_PLAYERS];	/* per player: enum answer */
	long long answered[MAX_PLAYERS];	/* per player: when the answer was last changed */
};

struct match {
	char	id[ID_LEN], token[ID_LEN];
	int	court, format, team_size, skill, organizer;
	long	price, ppp;		/* court price, price per player */
	long long starts, ends, expires;
	double	radius_km;
	int	status, reason;
	struct join joins[MAX_JOINS];
	int	njoins;
	int	inv[MAX_PLAYERS];	/* per player: enum inv */
	int	inv_kind[MAX_PLAYERS];	/* per player: enum inv_kind */
	int	inv_team[MAX_PLAYERS];	/* per player: an offer's team, 0 or 1 */
	long long inv_expires[MAX_PLAYERS];	/* per player: an offer's end */
	char	inv_id[MAX_PLAYERS][ID_LEN];		/* learnt from the database */
	struct change chain[MAX_CHAIN];
	int	nchain;
	struct wait wait[MAX_WAIT];
	int	nwait;
	struct handover ho[MAX_HANDOVERS];
	int	nho;
	struct place_request req[MAX_REQUESTS];
	int	nreq;
};

struct player {
	char	id[ID_LEN];
	int	skill;
	double	lat, lng;
	bool	notifications;
	int	score, no_shows;
	long long banned_until;	/* 0: never banned */
};

struct court {
	char	id[ID_LEN];
	int	duration;		/* minutes */
	long	weekday_price, weekend_price;
};

/* Notifications the model expects: how many of a type a recipient got about a match (and,
 * for a cancellation by the organizer, with which refund; -1 none). */
struct note_count {
	int	recipient, type, match;
	long	refund;
	int	count;
};

/* A reliability event recorded (reliability_events). */
struct rel {
	int	player, match, kind;
	long long at;
};

/* What a sweeper run changed, as its functions count it. */
struct sweep_counts {
	long	expired_holds, unfilled, completed, no_shows, invitations_expired;
};

/* A weekly series (sql/0021_series.sql): the matches it made, in date order. */
struct series {
	char	id[ID_LEN];
	int	organizer;
	int	matches[MAX_WEEKS];
	int	nmatches;
};

/* The simulated payment provider of a sequence (provider.c). Amounts are in cents (the
 * model's currency is EUR). */
#define MAX_INTENTS	(MAX_MATCHES * MAX_JOINS)
#define MAX_EVENTS	256
enum pi_status { PI_OPEN, PI_SUCCEEDED, PI_CANCELED };
enum re_status { RE_PENDING, RE_SUCCEEDED, RE_FAILED };
enum ledger_refund { LR_PENDING, LR_REFUNDED, LR_FAILED };
enum pe_type { PE_SUCCEEDED, PE_FAILED, PE_CANCELED, PE_REFUND_CREATED, PE_REFUND_UPDATED };

/* A PaymentIntent, made for one share (its ledger row's id is the idempotency key). */
struct intent {
	char	id[ID_LEN], key[ID_LEN];
	int	match, join;	/* the share: its match and join */
	long	amount, charged;
	int	status;		/* enum pi_status */
	bool	settled;	/* the ledger has the answer to the sweeper's cancel */
};

/* A refund at the provider, made for one ledger refund row (its id is the key). */
struct prefund {
	char	id[ID_LEN], key[ID_LEN];
	int	intent;
	long	amount;
	int	status;		/* enum re_status */
	int	ledger;		/* enum ledger_refund: what the ledger's row says by now */
	bool	answered;	/* the ledger has an answer: the row is not sent again */
	int	creates;	/* creation calls with its key */
};

/* An event of the provider, waiting for delivery (it may be delivered again). */
struct pevent {
	int	type, object;	/* enum pe_type; an intent's index, or a refund's */
	int	number;		/* its id's number */
	int	sent;		/* deliveries so far */
	char	status[24];	/* the object's status it carries */
};

struct provider {
	struct intent	in[MAX_INTENTS];
	int		nin;
	struct prefund	re[MAX_INTENTS];
	int		nre;
	struct pevent	ev[MAX_EVENTS];
	int		nev, events_made;
	bool		decide[MAX_MATCHES];	/* place requests to decide at commit (a lapse) */
};

/* One sequence: its rows, its clock, and the model's state of everything it made. */
struct seq {
	unsigned long long rng;
	long long now;
	int	min_reliability;
	bool	busy;			/* p0 and p1 play one match after another (bans) */
	double	lat, lng;		/* the venue and the centre of every search */
	char	venue[ID_LEN];
	struct court courts[MAX_COURTS];
	int	ncourts;
	struct player players[MAX_PLAYERS];
	int	nplayers;
	struct match matches[MAX_MATCHES];
	int	nmatches;
	struct series series[MAX_SERIES];
	int	nseries;
	struct note_count notes[MAX_NOTES];
	int	nnotes;
	struct rel rels[MAX_RELS];
	int	nrels;
	long	offers_made, offers_lapsed;	/* places offered, offers that lapsed */
	long	handovers, refilled;		/* hand-overs made, refilled in time */
	long	requests_made, approved, rejected;	/* place requests made, turned APPROVED,
						 * turned REJECTED (each time) */
	long	granted, waitlisted, taken;	/* approved with a PLACE invitation, with a
						 * waiting-list entry; PLACE invitations taken */
	long	joined_asking, refused_in, reopened;	/* requesters who took a place while
						 * their request was not approved; answers
						 * refused as they played; their leaves that
						 * opened it again */
	bool	provider;		/* a payment provider takes the shares */
	int	share_hold;		/* its share window, seconds */
	struct provider pv;
};

/* A hold as the driver asks for it. */
struct hold {
	int	court, format, skill, organizer, hold_seconds;
	long long starts;		/* wanted start; on the court's grid or not */
	int	duration;		/* minutes; the court's or not */
	double	radius_km;
};

/* The state as lines of text (check.c), compared as sorted multisets. */
#define LINE_MAX_LEN	160
#define LINES_MAX	2048
struct lines {
	int	n;
	char	v[LINES_MAX][LINE_MAX_LEN];
};

/* ---- rules.c: the reference model ----
 * Each rule_* returns what the call must answer, NULL for success or the problem code, and
 * moves the model to the state the call must leave. rule_hold's new match gets the next
 * index; its id comes from the database. rule_series makes weeks holds a week apart, those
 * that succeed as rule_hold's, and writes the others as "YYYY-MM-DD:CODE,..." to skipped;
 * its series gets the next index. rule_place_request's request gets the next index of its
 * match's; its id comes from the database. A leave or an absence decides the match's open
 * place requests again as it commits, at its own instant. */
const char *rule_hold(struct seq *s, const struct hold *h);
const char *rule_series(struct seq *s, const struct hold *h, int weeks, char *skipped,
    size_t len);
const char *rule_series_cancel(struct seq *s, int k, int p);
const char *rule_pay(struct seq *s, int m, int p);
void rule_expire_hold(struct seq *s, int m);
const char *rule_accept(struct seq *s, int m, int invitee, int p, int team);
const char *rule_join_token(struct seq *s, int m, int p, int team);
const char *rule_decline(struct seq *s, int m, int invitee, int p);
const char *rule_leave(struct seq *s, int m, int p, int sub);
const char *rule_absence(struct seq *s, int m, int p, int sub);
const char *rule_checkin(struct seq *s, int m, int p, bool near, bool accurate);
const char *rule_cancel(struct seq *s, int m, int p);
const char *rule_waitlist_join(struct seq *s, int m, int p, int team);
const char *rule_waitlist_leave(struct seq *s, int m, int p);
/* m -1: a match that does not exist; k -1: a place request that does not exist. */
const char *rule_join_open(struct seq *s, int m, int p, int team);
const char *rule_place_request(struct seq *s, int m, int p, int team);
const char *rule_place_answer(struct seq *s, int m, int k, int p, bool approve);
long rule_settle(struct seq *s, int m);
void rule_sweep(struct seq *s, struct sweep_counts *c);
/* The provider's word that the share of join j of match m succeeded, applied
 * (payment_intent_apply): PAID, ALREADY_PAID or LATE_PAYMENT. */
const char *rule_share_paid(struct seq *s, int m, int j);

/* ---- effects.c: what the transitions do, for rules.c ---- */
bool effect_move(struct match *m, int event);
struct join *effect_active_join(struct match *m, int p);
int effect_team_count(const struct match *m, int team);
void effect_notify(struct seq *s, int recipient, int type, int m, long refund);
void effect_notify_players(struct seq *s, int m, int type, int except);
bool effect_holds_place(int kind);
int effect_offers(const struct match *m, int team);
bool effect_busy(const struct seq *s, int m, int p);
void effect_refill(struct seq *s, int m, int p, int team);
void effect_pass_on(struct seq *s, int m);
long effect_settle(struct seq *s, int m);
void effect_offer_places(struct seq *s, int m);
void effect_invite(struct seq *s, int m, int kind);
long effect_expire_invitations(struct match *m);
long effect_refund(struct join *j);
long effect_reliability(struct seq *s, const int *players, int m, const int *kinds, int n);
long effect_end(struct seq *s, int m, int event);
long effect_complete(struct seq *s, int m);
bool effect_request_open(const struct match *m, int k, long long now);
void effect_decide(struct seq *s, int m, int k);
void effect_decide_open(struct seq *s, int m);
void effect_fill(struct seq *s, int m);
void effect_decide_lapsed(struct seq *s);

/* ---- pg.c: the database ---- */
struct pg {
	PGconn	*main;		/* the lifecycle calls, the state read after each, set-up */
	PGconn	*sweeper[2];	/* sweeper runs, one or two at once */
};

/* A statement and its text parameters, for pg_pipeline. */
struct stmt {
	const char		*sql;
	int			 n;
	const char *const	*params;
};
#define PIPELINE_MAX	12
#define SWEEP_RULES	5

/* Outcome of a lifecycle call: "" for success, else the problem code (SLOT_TAKEN for the
 * exclusion constraint), or "SQLSTATE xxxxx: message" for anything unexpected. */
struct outcome {
	char	code[256];
	char	value[ID_LEN];		/* first cell of a success (a new match's id) */
};

int pg_open(struct pg *g, const char *conninfo);
void pg_close(struct pg *g);
PGresult *pg_exec(PGconn *c, const char *sql, int n, const char *const *params);
int pg_pipeline(PGconn *c, const struct stmt *st, int n, PGresult **res);
void pg_outcome(PGconn *c, PGresult *res, struct outcome *o);
long long pg_now(struct pg *g);
long pg_location_base(struct pg *g);
int pg_setup(struct pg *g, struct seq *s);
int pg_share_hold(struct pg *g, int seconds);
int pg_sweep(struct pg *g, int sweepers, int limit, long long now, struct sweep_counts *c,
    char *err, size_t errlen);
void pg_sweep_stmts(struct stmt *st, const char *const *params);
long pg_sweep_result(PGresult *res, int rule, struct sweep_counts *c, char *err,
    size_t errlen);
const char *pg_time(long long t, char *buf, size_t len);

/* ---- check.c: the state read back and the invariants ---- */
/* The state query of a sequence, its parameters held here, ready for a pipeline; with
 * digest, it also answers a digest of every row of the sequence a sweeper may change. */
struct state_query {
	char	matches[MAX_MATCHES * ID_LEN + 8], players[MAX_PLAYERS * ID_LEN + 8];
	char	courts[MAX_COURTS * ID_LEN + 8], now[40];
	const char *params[5];
	struct stmt st;
};
void check_query(const struct seq *s, bool digest, struct state_query *q);

/* Compares the state query's answer res (consumed) with the model's state: 0, or -1 with
 * what differs in err. Learns the tokens of matches and the ids of invitations, and the
 * digest when asked for. */
int check_result(PGresult *res, struct seq *s, struct lines *got, struct lines *want,
    char *digest, size_t digest_len, char *err, size_t errlen);

/* The digest alone (check_digest_query), and its answer res (consumed): 0, or -1. */
void check_digest_query(const struct seq *s, struct state_query *q);
int check_digest(PGresult *res, char *digest, size_t len);

/* ---- model.c: the run, its log and its random draws ---- */
struct run {
	struct pg	*pg;
	struct seq	*seq;
	struct lines	*got, *want;
	long long	 db_now;	/* the database's now() when the run started */
	long long	 t0;		/* where the sequence's clock started */
	int		 min_steps, max_steps, two_sweepers, provider;
	bool		 verbose;
	long		 steps, sweeps, two_sweeper_runs;
	double		 secs[3];	/* spent in set-up, steps, sweeper steps */
	char		 err[16384];
	char		 log[65536];	/* the step log of the sequence running */
	size_t		 loglen;
};

void model_log(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void model_count(const char *action, const char *code);
const char *model_when(const struct run *r, long long t, char *buf, size_t len);
unsigned long long model_next(struct seq *s);
int model_rnd(struct seq *s, int n);
bool model_chance(struct seq *s, int pct);
double model_clock(void);
enum { T_SETUP, T_STEPS, T_SWEEPS };

/* ---- flow.c: the steps ---- */
enum action { A_HOLD, A_SERIES, A_PAY, A_ACCEPT, A_DECLINE, A_TOKEN, A_LEAVE, A_ABSENCE,
	A_CHECKIN, A_CANCEL, A_SERIES_CANCEL, A_WAITLIST, A_UNWAITLIST, A_JOIN_OPEN,
	A_PLACE_REQUEST, A_PLACE_ANSWER, A_EVENT, A_CLOCK, A_SWEEP, A_EDGE, A_COUNT };
extern const char *const action_names[];

/* Step k of a sequence: a random action, its answer and the state after it checked; 0, or
 * -1 with the reason in r->err. flow_finish moves the clock to last and sweeps. flow_call
 * makes the calls st (the first answering want, the others following up) and checks the
 * state; flow_series makes a series call, learns the ids of the matches it made (the
 * model's from first on) and checks the dates it skipped against skipped; flow_state only
 * checks the state; flow_sweep runs the sweeper. */
int flow_step(struct run *r, struct seq *s, int k);
int flow_finish(struct run *r, struct seq *s, int k, long long last);
int flow_call(struct run *r, struct seq *s, int action, const char *want, const struct stmt *st,
    int n);
int flow_series(struct run *r, struct seq *s, const char *want, const struct stmt *st,
    int first, const char *skipped);
int flow_state(struct run *r, struct seq *s);
/* A call whose answer is a word (an outcome, counted under what), and the state after it. */
int flow_outcome(struct run *r, struct seq *s, const char *what, const char *want,
    const struct stmt *st);
int flow_sweep(struct run *r, struct seq *s, int sweepers, int limit);

/* ---- act.c: the actions; 0, or -1 with the reason in r->err ---- */
int act_hold(struct run *r, struct seq *s);
int act_series(struct run *r, struct seq *s);
int act_series_cancel(struct run *r, struct seq *s);
int act_pay(struct run *r, struct seq *s, int m);
int act_answer(struct run *r, struct seq *s, bool accept);
int act_join_by_link(struct run *r, struct seq *s, int m);
int act_withdraw(struct run *r, struct seq *s, int m, bool leave);
int act_checkin(struct run *r, struct seq *s, int m);
int act_cancel(struct run *r, struct seq *s, int m);
int act_waitlist(struct run *r, struct seq *s, bool join);
int act_join_open(struct run *r, struct seq *s, int m);
int act_place_request(struct run *r, struct seq *s);
int act_place_answer(struct run *r, struct seq *s);

/* ---- provider.c: the payment provider; 0, or -1 with the reason in r->err ----
 * provider_intents makes the intents the shares owed want; provider_pay has a payer pay one
 * at the provider; provider_event delivers a waiting event (or settles a refund there);
 * provider_sweep makes the sweeper's calls to it; provider_finish delivers and calls
 * everything left and reconciles the books with the ledger. */
int provider_intents(struct run *r, struct seq *s);
int provider_pay(struct run *r, struct seq *s);
int provider_event(struct run *r, struct seq *s);
int provider_sweep(struct run *r, struct seq *s, int sweepers);
int provider_finish(struct run *r, struct seq *s);
const char *provider_refund_status(const struct seq *s, const struct join *j);
void provider_summary(void);

#endif
