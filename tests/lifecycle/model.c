/* lifecycle-model: the randomized state-machine test of the match lifecycle.
 *
 *   lifecycle-model [--seed N] [--sequences M] [--steps MIN-MAX] [--two-sweepers PCT]
 *                   [--provider PCT] [--db CONNINFO] [--verbose]
 *
 * Runs M independent sequences of random steps against the database of DATABASE_URL (or
 * --db), calling the functions of sql/areas/ (60_lifecycle.sql and the places, open-match,
 * series and sweeper areas) directly with a test clock as their p_now: holds, weekly series,
 * payments, invitations accepted and declined, joins by link and from the open-match feed,
 * waiting lists, leaves and absences (handing the place over or not), place requests and
 * their answers, check-ins near and far, cancellations, clock moves (minutes, hours, days,
 * to just before a start, past an end or a hold's expiry) and sweeper runs, one sweeper or
 * two at once (PCT of the runs, default 40). Each sequence has its own players, at a place
 * of its own on the map so that no other sequence's players are ever eligible, and its own
 * courts. PCT of the sequences (--provider, default none) run with a payment provider
 * (provider.c): shares owed for a window, paid at a simulated provider whose events come
 * late, twice and out of order, refunds sent by the sweeper, the books reconciled at the end.
 * After every step the answer is compared with the model's (rules.c), the state read back
 * with the model's and the invariants checked (check.c); after a sweeper run that changed
 * something, a second run must change nothing. A sequence ends with the clock past
 * everything and a sweep, so it leaves nothing live for the next one.
 *
 * Sequence i runs on seed N + i and replays alone with --seed N+i --sequences 1: its clock
 * starts at a time of the week the seed picks, in the week after the database's now(), so
 * a replay takes the same steps on any day. The first line names the seed; a failure prints
 * the sequence's seed, the difference and the step log, and exits 1. The last line is a TAP
 * line, "ok - ..." or "not ok - ...". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

#define OUTCOMES_MAX	160

struct outcome_count {
	const char *action;
	char	code[48];
	long	count;
};

static struct outcome_count outcomes[OUTCOMES_MAX];
static int noutcomes;
static long transitions_seen[EV_COMPLETE + 1];
static long events_seen[REL_ATTENDED + 1], bans_seen;
static long offers_seen[2];	/* places offered from a waiting list, offers that lapsed */
static long handovers_seen[2];	/* hand-overs made, refilled in time */
static long requests_seen[9];	/* place requests made, approved, rejected, granted a PLACE
				 * invitation, waitlisted; PLACE invitations taken; requesters
				 * who took a place while asking, answers refused as they
				 * played, their leaves opening the request again */

void
model_log(struct run *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->loglen >= sizeof r->log - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(r->log + r->loglen, sizeof r->log - r->loglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->loglen += (size_t)n;
	if (r->loglen >= sizeof r->log - 1)
		r->loglen = sizeof r->log - 1;
	if (r->verbose) {
		fputs(r->log + r->loglen - (size_t)n, stdout);
	}
}

void
model_count(const char *action, const char *code)
{
	int i;

	for (i = 0; i < noutcomes; i++)
		if (outcomes[i].action == action && strcmp(outcomes[i].code, code) == 0) {
			outcomes[i].count++;
			return;
		}
	if (noutcomes < OUTCOMES_MAX) {
		outcomes[noutcomes].action = action;
		snprintf(outcomes[noutcomes].code, sizeof outcomes[noutcomes].code, "%s", code);
		outcomes[noutcomes++].count = 1;
	}
}

/* "t+1d02:03:04": an instant of sequence s relative to where its clock started. */
const char *
model_when(const struct run *r, long long t, char *buf, size_t len)
{
	long long d = t - r->t0;
	const char *sign = d < 0 ? "-" : "+";

	if (d < 0)
		d = -d;
	snprintf(buf, len, "t%s%lldd%02lld:%02lld:%02lld", sign, d / DAY, d % DAY / HOUR,
	    d % HOUR / MINUTE, d % MINUTE);
	return buf;
}

unsigned long long
model_next(struct seq *s)
{
	unsigned long long z = (s->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int
model_rnd(struct seq *s, int n)
{
	return n > 0 ? (int)(model_next(s) % (unsigned long long)n) : 0;
}

bool
model_chance(struct seq *s, int pct)
{
	return model_rnd(s, 100) < pct;
}

/* Seconds on a monotonic clock. */
double
model_clock(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The sequence's people, courts and place, from its seed. */
static void
sequence_make(struct run *r, struct seq *s, long location)
{
	static const long prices[] = { 2000, 2501, 1003, 799, 3000, 4999, 3 };
	long cell = location % (220 * 220);
	int i;

	/* cells 0.5 degrees of latitude and 1.5 of longitude apart (35 km and more): with
	 * search radii of at most 10 km and players at most 15 km from their centre, no
	 * sequence ever sees another's players */
	s->lat = -55.0 + (double)(cell / 220) * 0.5;
	s->lng = -165.0 + (double)(cell % 220) * 1.5;
	s->min_reliability = model_chance(s, 50) ? 50 : 80;
	s->busy = model_chance(s, 15);
	s->nplayers = 5 + model_rnd(s, MAX_PLAYERS - 4);
	for (i = 0; i < s->nplayers; i++) {
		struct player *p = &s->players[i];
		bool far = model_chance(s, 12);

		p->skill = model_chance(s, 80) ? SK_INTERMEDIATE : SK_ADVANCED;
		p->lat = s->lat + (far ? 0.13 : (model_rnd(s, 2001) - 1000) / 50000.0);
		p->lng = s->lng + (model_rnd(s, 2001) - 1000) / 50000.0;
		p->notifications = model_chance(s, 92);
		p->score = 100;
	}
	s->ncourts = 1 + model_rnd(s, MAX_COURTS);
	for (i = 0; i < s->ncourts; i++) {
		s->courts[i].duration = model_chance(s, 50) ? 60 : 90;
		s->courts[i].weekday_price = prices[model_rnd(s, 7)];
		s->courts[i].weekend_price = prices[model_rnd(s, 7)];
	}
	/* drawn only when asked for: the sequences of a seed stay as they were without */
	s->provider = r->provider >= 100 || (r->provider > 0 && model_chance(s, r->provider));
	if (s->provider) {
		static const int windows[] = { 120, 600, 900, 1800 };

		s->share_hold = windows[model_rnd(s, 4)];
	}
	model_log(r, "  %d players (min reliability %d%s), %d courts:", s->nplayers,
	    s->min_reliability, s->busy ? ", p0 and p1 busy" : "", s->ncourts);
	for (i = 0; i < s->ncourts; i++)
		model_log(r, " [%d min, %ld/%ld cents]", s->courts[i].duration,
		    s->courts[i].weekday_price, s->courts[i].weekend_price);
	if (s->provider)
		model_log(r, ", a payment provider, shares owed for %d s", s->share_hold);
	model_log(r, "\n");
	for (i = 0; i < s->nplayers; i++)
		model_log(r, "  p%d %s%s%s\n", i, skill_names[s->players[i].skill],
		    s->players[i].lat - s->lat > 0.1 ? ", 14 km away" : "",
		    s->players[i].notifications ? "" : ", no automatic invitations");
}

/* One sequence; 0, or -1 with the reason in r->err. */
static int
sequence_run(struct run *r, unsigned long long seed, long location)
{
	struct seq *s = r->seq;
	long long day, monday, last;
	char at[40];
	int steps, k, i;

	memset(s, 0, sizeof *s);
	r->loglen = 0;
	r->log[0] = '\0';
	s->rng = seed;
	/* the week after the database's now(), at a time of it the seed picks */
	day = r->db_now / DAY;
	monday = day - (day + 3) % 7;
	r->t0 = s->now = (monday + 7) * DAY + model_rnd(s, 7 * 24 * 60) * MINUTE;
	model_log(r, "  clock starts at %s\n", pg_time(s->now, at, sizeof at));
	sequence_make(r, s, location);
	r->secs[T_SETUP] -= model_clock();
	if (pg_setup(r->pg, s) != 0 || pg_share_hold(r->pg, s->provider ? s->share_hold : 0) != 0) {
		snprintf(r->err, sizeof r->err, "set-up rows could not be written");
		return -1;
	}
	r->secs[T_SETUP] += model_clock();
	steps = r->min_steps + model_rnd(s, r->max_steps - r->min_steps + 1);
	for (k = 1; k <= steps; k++) {
		r->steps++;
		if (flow_step(r, s, k) != 0)
			return -1;
	}
	/* past every end and expiry: everything the sequence made ends now */
	last = s->now + 1;
	for (i = 0; i < s->nmatches; i++) {
		if (s->matches[i].ends + MINUTE > last)
			last = s->matches[i].ends + MINUTE;
		if (s->matches[i].expires + MINUTE > last)
			last = s->matches[i].expires + MINUTE;
	}
	r->steps++;
	if (flow_finish(r, s, k, last) != 0)
		return -1;
	for (i = 0; i < s->nmatches; i++)
		for (k = 0; k < s->matches[i].nchain; k++)
			transitions_seen[s->matches[i].chain[k].event]++;
	for (i = 0; i < s->nrels; i++)
		events_seen[s->rels[i].kind]++;
	for (i = 0; i < s->nplayers; i++)
		bans_seen += s->players[i].banned_until != 0;
	offers_seen[0] += s->offers_made;
	offers_seen[1] += s->offers_lapsed;
	handovers_seen[0] += s->handovers;
	handovers_seen[1] += s->refilled;
	requests_seen[0] += s->requests_made;
	requests_seen[1] += s->approved;
	requests_seen[2] += s->rejected;
	requests_seen[3] += s->granted;
	requests_seen[4] += s->waitlisted;
	requests_seen[5] += s->taken;
	requests_seen[6] += s->joined_asking;
	requests_seen[7] += s->refused_in;
	requests_seen[8] += s->reopened;
	return 0;
}

static void
summary(void)
{
	bool done[OUTCOMES_MAX] = { false };
	int i, k;

	printf("# transitions:");
	for (i = 0; i <= EV_COMPLETE; i++)
		printf(" %s %ld", event_names[i], transitions_seen[i]);
	printf("\n# reliability:");
	for (i = 0; i <= REL_ATTENDED; i++)
		printf(" %s %ld", rel_names[i], events_seen[i]);
	printf(", bans %ld\n", bans_seen);
	printf("# offers: made %ld, lapsed %ld\n", offers_seen[0], offers_seen[1]);
	provider_summary();
	printf("# hand-overs: made %ld, refilled %ld\n", handovers_seen[0], handovers_seen[1]);
	printf("# place requests: made %ld, approved %ld, rejected %ld, granted as invitation %ld, "
	    "waitlisted %ld, taken %ld, joined while asking %ld, refused while in %ld, "
	    "reopened %ld\n", requests_seen[0], requests_seen[1], requests_seen[2], requests_seen[3],
	    requests_seen[4], requests_seen[5], requests_seen[6], requests_seen[7],
	    requests_seen[8]);
	for (i = 0; i < noutcomes; i++) {
		if (done[i])
			continue;
		printf("# %s:", outcomes[i].action);
		for (k = i; k < noutcomes; k++)
			if (outcomes[k].action == outcomes[i].action) {
				printf(" %s %ld", outcomes[k].code, outcomes[k].count);
				done[k] = true;
			}
		printf("\n");
	}
}

static int
usage(void)
{
	fprintf(stderr, "usage: lifecycle-model [--seed N] [--sequences M] [--steps MIN-MAX] "
	    "[--two-sweepers PCT] [--provider PCT] [--db CONNINFO] [--verbose]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	static struct run r;
	struct pg g;
	struct timespec t0, t1;
	unsigned long long seed = ((unsigned long long)time(NULL) * 1000 + (unsigned)getpid()) %
	    1000000000ULL;
	const char *db = getenv("DATABASE_URL");
	long sequences = 100, i, base;
	double secs;

	r.min_steps = 6;
	r.max_steps = 14;
	r.two_sweepers = 40;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--verbose") == 0)
			r.verbose = true;
		else if (i + 1 == argc)
			return usage();
		else if (strcmp(argv[i], "--seed") == 0)
			seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--sequences") == 0)
			sequences = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--steps") == 0) {
			if (sscanf(argv[++i], "%d-%d", &r.min_steps, &r.max_steps) != 2 ||
			    r.min_steps < 1 || r.max_steps < r.min_steps)
				return usage();
		} else if (strcmp(argv[i], "--two-sweepers") == 0)
			r.two_sweepers = atoi(argv[++i]);
		else if (strcmp(argv[i], "--provider") == 0)
			r.provider = atoi(argv[++i]);
		else if (strcmp(argv[i], "--db") == 0)
			db = argv[++i];
		else
			return usage();
	}
	if (db == NULL || sequences < 1)
		return usage();
	printf("# lifecycle-model: seed %llu, %ld sequences of %d-%d steps\n", seed, sequences,
	    r.min_steps, r.max_steps);
	fflush(stdout);
	if (pg_open(&g, db) != 0)
		return 1;
	r.pg = &g;
	r.seq = calloc(1, sizeof *r.seq);
	r.got = calloc(1, sizeof *r.got);
	r.want = calloc(1, sizeof *r.want);
	if (r.seq == NULL || r.got == NULL || r.want == NULL)
		return 1;
	r.db_now = pg_now(&g);
	base = pg_location_base(&g);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < sequences; i++) {
		if (r.verbose)
			printf("# sequence %ld, seed %llu\n", i, seed + (unsigned long long)i);
		if (sequence_run(&r, seed + (unsigned long long)i, base + i) != 0) {
			printf("# sequence %ld failed: %s\n# replay: lifecycle-model --seed %llu "
			    "--sequences 1 --steps %d-%d --two-sweepers %d --provider %d --verbose\n"
			    "# step log:\n%s",
			    i, r.err, seed + (unsigned long long)i, r.min_steps, r.max_steps,
			    r.two_sweepers, r.provider, r.log);
			printf("not ok - lifecycle model: sequence %ld of seed %llu disagrees "
			    "(seed %llu)\n", i, seed, seed + (unsigned long long)i);
			pg_close(&g);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	summary();
	printf("# time: set-up %.1f s, steps %.1f s, sweeper steps %.1f s\n",
	    r.secs[T_SETUP], r.secs[T_STEPS], r.secs[T_SWEEPS]);
	printf("ok - lifecycle model: %ld sequences, %ld steps, %ld sweeper runs (%ld with two "
	    "sweepers) agree with the model and the invariants in %.1f s, seed %llu\n",
	    sequences, r.steps, r.sweeps, r.two_sweeper_runs, secs, seed);
	pg_close(&g);
	free(r.seq);
	free(r.got);
	free(r.want);
	return 0;
}
