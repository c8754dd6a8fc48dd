/* deliver: sends the notifications outbox to the operator's webhook, for cron.
 *
 *   NOTIFY_WEBHOOK_URL=https://hooks.example.com/courts NOTIFY_WEBHOOK_SECRET=... \
 *   DATABASE_URL=... build/cron/deliver
 *
 * Each due notification is claimed (notification_claim, sql/areas/50_notifications.sql: one
 * row, FOR UPDATE SKIP LOCKED, the attempt counted, the row leased for 2 * NOTIFY_TIMEOUT + 5
 * seconds), POSTed as JSON within NOTIFY_TIMEOUT seconds (common/outbound.h: one connection
 * kept for the run), and marked delivered on a 2xx; otherwise it is tried again after
 * NOTIFY_BACKOFF_SECONDS * 2^(attempt - 1) (at most 6 hours), and after NOTIFY_MAX_ATTEMPTS
 * attempts it is dead: one line on stderr says so, and it waits for `deliver --retry-dead`. Several deliverers at once never hold one
 * notification at the same moment; one that dies between sending and marking leaves the
 * lease to run out, and the notification is sent again: delivery is at least once, and the
 * notification id in the Idempotency-Key header lets a receiver drop a repeat.
 *
 * Each request carries
 *   Content-Type: application/json
 *   Idempotency-Key: <notification id>
 *   Courts-Delivery-Attempt: <1, 2, ...>
 *   Courts-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>
 * and the body {"id", "type", "createdAt", "recipient": {"id", "issuer", "subject"}, "payload"}.
 *
 * The secret is NOTIFY_WEBHOOK_SECRET or the first line of the file NOTIFY_WEBHOOK_SECRET_FILE
 * (at least 16 characters). Output: one summary line on stdout; exit 0, 1 when the database
 * failed (what was marked stays marked), 2 for a usage or settings error. Nothing is
 * done, quietly, while NOTIFY_WEBHOOK_URL is unset.
 *
 *   build/cron/deliver --list-dead     the dead notifications, one per line (id, type,
 *                                      attempts, dead since, last error), tab-separated
 *   build/cron/deliver --retry-dead    releases them all for a fresh round of attempts
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "arena.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "outbound.h"

#define USER_AGENT	"courts-deliver/" COURTS_VERSION
#define SECRET_MIN	16

struct settings {
	const char	*url;
	const char	*secret;
	int		 timeout;	/* seconds per attempt */
	int		 max_attempts;
	int		 backoff;	/* seconds before the second attempt; doubles after */
	int		 batch;		/* attempts per run at most */
};

struct totals {
	long	delivered;
	long	retry;
	long	dead;
};

/* NOTIFY_WEBHOOK_SECRET, or the first line of the file NOTIFY_WEBHOOK_SECRET_FILE names (so
 * that the secret need not be in a crontab everyone may read); NULL when neither is set,
 * with why set when the file cannot be read */
static const char *
secret_get(const char **why)
{
	static char buf[4096];
	const char *v = getenv("NOTIFY_WEBHOOK_SECRET"), *path = getenv("NOTIFY_WEBHOOK_SECRET_FILE");
	FILE *f;

	if (v != NULL && *v != '\0')
		return v;
	if (path == NULL || *path == '\0')
		return NULL;
	if ((f = fopen(path, "r")) == NULL) {
		*why = "cannot be read";
		return NULL;
	}
	if (fgets(buf, sizeof buf, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf;
}

static int
db_failed(struct db *d, const char *what)
{
	fprintf(stderr, "deliver: %s failed: %s %s\n", what, d->err.sqlstate, d->err.message);
	return 1;
}

/* hex HMAC-SHA256 of "<t>.<body>" keyed with secret, into hex (65 bytes) */
static int
sign(const char *secret, long t, const char *body, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	size_t blen = strlen(body), len;
	char *msg = malloc(blen + 32);

	if (msg == NULL)
		return -1;
	len = (size_t)snprintf(msg, 32, "%ld.", t);
	memcpy(msg + len, body, blen);
	len += blen;
	if (HMAC(EVP_sha256(), secret, (int)strlen(secret), (unsigned char *)msg, len, md,
	    &mdlen) == NULL) {
		free(msg);
		return -1;
	}
	free(msg);
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[2 * i] = '\0';
	return 0;
}

/* POSTs body; 0 on a 2xx, 1 on any other answer or a transport failure (why says which) */
static int
post(const struct settings *s, const char *id, const char *attempt, const char *body,
    char *why, size_t whysize)
{
	char h_id[128], h_attempt[64], h_sig[160], hex[65];
	const char *headers[] = { "Content-Type: application/json", "User-Agent: " USER_AGENT,
	    h_id, h_attempt, h_sig, NULL };
	struct outbound call = { "POST", s->url, headers, body, strlen(body), s->timeout, 0 };
	struct outbound_answer a;
	long t = (long)time(NULL);

	if (sign(s->secret, t, body, hex) != 0) {
		snprintf(why, whysize, "cannot sign: out of memory");
		return 1;
	}
	snprintf(h_id, sizeof h_id, "Idempotency-Key: %s", id);
	snprintf(h_attempt, sizeof h_attempt, "Courts-Delivery-Attempt: %s", attempt);
	snprintf(h_sig, sizeof h_sig, "Courts-Signature: t=%ld,v1=%s", t, hex);
	if (outbound_call(&call, &a) != 0) {
		snprintf(why, whysize, "%s", a.why);
		return 1;
	}
	free(a.body);
	if (a.status >= 200 && a.status <= 299)
		return 0;
	snprintf(why, whysize, "HTTP %ld", a.status);
	return 1;
}

/* One attempt at the oldest due notification: 1 when there was one, 0 when none is due,
 * -1 on failure (reported). */
static int
attempt_one(struct db *d, const struct settings *s, struct totals *tot)
{
	char lease[16], max[16], backoff[16], why[256], id[40], attempt[16], *body;
	const char *verdict;
	PGresult *res;
	int rc;

	snprintf(lease, sizeof lease, "%d", 2 * s->timeout + 5);
	res = db_exec(d, "SELECT id, attempt, body FROM notification_claim($1::int)", lease);
	if (res == NULL)
		return -db_failed(d, "claiming a notification");
	if (PQntuples(res) == 0)
		return 0;
	snprintf(id, sizeof id, "%s", db_value(res, 0, 0));
	snprintf(attempt, sizeof attempt, "%s", db_value(res, 0, 1));
	if ((body = strdup(db_value(res, 0, 2))) == NULL) {
		fprintf(stderr, "deliver: out of memory\n");
		return -1;
	}
	db_end(d);
	rc = post(s, id, attempt, body, why, sizeof why);
	free(body);
	if (rc == 0) {
		if (db_exec(d, "SELECT notification_delivered($1::uuid)", id) == NULL)
			return -db_failed(d, "marking a notification delivered");
		tot->delivered++;
		return 1;
	}
	snprintf(max, sizeof max, "%d", s->max_attempts);
	snprintf(backoff, sizeof backoff, "%d", s->backoff);
	res = db_exec(d, "SELECT notification_failed($1::uuid, $2::int, $3, $4::int, $5::int)",
	    id, attempt, why, max, backoff);
	if (res == NULL)
		return -db_failed(d, "recording a failed attempt");
	verdict = db_value(res, 0, 0);
	if (verdict != NULL && strcmp(verdict, "DEAD") == 0) {
		tot->dead++;
		fprintf(stderr, "deliver: notification %s is dead after %s attempts, the last: %s "
		    "(deliver --retry-dead sends it again)\n", id, attempt, why);
	} else {
		tot->retry++;
	}
	return 1;
}

static int
list_dead(struct db *d)
{
	PGresult *res = db_exec(d, "SELECT id, type, attempts, api_ts(dead_at), "
	    "coalesce(last_error, '') FROM notifications WHERE dead_at IS NOT NULL "
	    "ORDER BY dead_at, id");
	int i;

	if (res == NULL)
		return db_failed(d, "listing dead notifications");
	for (i = 0; i < PQntuples(res); i++)
		printf("%s\t%s\t%s\t%s\t%s\n", db_value(res, i, 0), db_value(res, i, 1),
		    db_value(res, i, 2), db_value(res, i, 3), db_value(res, i, 4));
	return 0;
}

static int
retry_dead(struct db *d)
{
	PGresult *res = db_exec(d, "SELECT notifications_retry_dead()");

	if (res == NULL)
		return db_failed(d, "releasing dead notifications");
	printf("deliver: %s dead notifications released for new attempts\n", db_value(res, 0, 0));
	return 0;
}

static int
deliver(struct db *d, const struct settings *s)
{
	struct totals tot = { 0, 0, 0 };
	struct timespec start, end;
	PGresult *res;
	int n, rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (n = 0; n < s->batch; n++) {
		rc = attempt_one(d, s, &tot);
		db_end(d);
		arena_reset(d->a);
		if (rc <= 0)
			break;
	}
	if (rc < 0)
		return 1;
	if ((res = db_exec(d, "SELECT count(*) FROM notifications WHERE dead_at IS NOT NULL")) ==
	    NULL)
		return db_failed(d, "counting dead notifications");
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("deliver: delivered=%ld retry=%ld dead=%ld dead_total=%s elapsed_ms=%ld\n",
	    tot.delivered, tot.retry, tot.dead, db_value(res, 0, 0),
	    (long)(end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1000000);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "", *why = NULL;
	struct settings s;
	struct arena *a;
	struct db d;
	int rc;

	log_set_program("deliver");
	if (argc > 2 || (argc == 2 && strcmp(cmd, "--list-dead") != 0 &&
	    strcmp(cmd, "--retry-dead") != 0)) {
		fprintf(stderr, "usage: deliver [--list-dead | --retry-dead]\n");
		return 2;
	}
	s.url = getenv("NOTIFY_WEBHOOK_URL");
	s.secret = secret_get(&why);
	s.timeout = config_env_int("NOTIFY_TIMEOUT", 10, 1, 300);
	s.max_attempts = config_env_int("NOTIFY_MAX_ATTEMPTS", 8, 1, 100);
	s.backoff = config_env_int("NOTIFY_BACKOFF_SECONDS", 30, 0, 86400);
	s.batch = config_env_int("NOTIFY_BATCH", 1000, 1, 100000);
	if (argc == 1) {
		if (s.url == NULL || *s.url == '\0')
			return 0;
		if (strncmp(s.url, "https://", 8) != 0 && strncmp(s.url, "http://", 7) != 0) {
			fprintf(stderr, "deliver: NOTIFY_WEBHOOK_URL %s is not an http(s) URL\n", s.url);
			return 2;
		}
		if (why != NULL) {
			fprintf(stderr, "deliver: NOTIFY_WEBHOOK_SECRET_FILE %s %s\n",
			    getenv("NOTIFY_WEBHOOK_SECRET_FILE"), why);
			return 2;
		}
		if (s.secret == NULL || strlen(s.secret) < SECRET_MIN) {
			fprintf(stderr, "deliver: NOTIFY_WEBHOOK_SECRET (or the first line of "
			    "NOTIFY_WEBHOOK_SECRET_FILE) must be set, at least %d characters (e.g. "
			    "openssl rand -hex 32), for the receiver to check the signature\n",
			    SECRET_MIN);
			return 2;
		}
	}
	if ((a = arena_new()) == NULL) {
		fprintf(stderr, "deliver: out of memory\n");
		return 1;
	}
	db_init(&d, a);
	(void)config_get();
	if (strcmp(cmd, "--list-dead") == 0)
		rc = list_dead(&d);
	else if (strcmp(cmd, "--retry-dead") == 0)
		rc = retry_dead(&d);
	else
		rc = deliver(&d, &s);
	db_end(&d);
	db_close();
	arena_free(a);
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = 1;
	return rc;
}
