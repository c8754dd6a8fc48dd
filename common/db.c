/* db: a kept connection to the primary (and one to the read replica, when there is one),
 * each with a statement cache keyed by the SQL text; session-owned results. */
#include "db.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "config.h"
#include "log.h"

#define STMT_SLOTS 256	/* statement cache size; more distinct statements just go unprepared */

struct db_result {
	PGresult		*res;
	struct db_result	*next;
};

struct stmt {
	char		*sql;	/* key: a copy of the text */
	uint32_t	 hash;
	unsigned	 uses;
	bool		 prepared;
};

/* A server and what the process keeps of it across requests. */
struct link {
	PGconn		*conn;
	struct stmt	 stmts[STMT_SLOTS];
};

static struct link primary, replica;

/* The replica found unreachable: not tried again before this (CLOCK_REALTIME seconds). A
 * plain CGI process lives for one request, so it learns it from a mark file that the one
 * which found the replica down leaves in the temporary directory; the first to find it down
 * after the pause logs one line. */
#define REPLICA_PAUSE_S	30
static time_t replica_down_until;

/* Forgets which statements the server has prepared (a new connection has none); the texts
 * stay, so the slots keep their names. */
static void
stmt_cache_unprepare(struct link *l)
{
	size_t i;

	for (i = 0; i < STMT_SLOTS; i++) {
		l->stmts[i].prepared = false;
		l->stmts[i].uses = 0;
	}
}

static uint32_t
fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The cache slot of sql's text, claimed if new; NULL when the cache is full. */
static struct stmt *
stmt_lookup(struct link *l, const char *sql)
{
	uint32_t h = fnv1a(sql);
	size_t i;

	for (i = 0; i < STMT_SLOTS; i++) {
		struct stmt *s = &l->stmts[(h + i) % STMT_SLOTS];

		if (s->sql != NULL && s->hash == h && strcmp(s->sql, sql) == 0)
			return s;
		if (s->sql == NULL) {
			if ((s->sql = strdup(sql)) == NULL)
				return NULL;
			s->hash = h;
			return s;
		}
	}
	return NULL;
}

static void
error_set(struct db *d, const char *sqlstate, const char *message)
{
	memset(&d->err, 0, sizeof d->err);
	snprintf(d->err.sqlstate, sizeof d->err.sqlstate, "%s", sqlstate);
	snprintf(d->err.message, sizeof d->err.message, "%s", message);
}

static void
connect_failed(struct db *d, PGconn *conn)
{
	char msg[sizeof d->err.message];

	snprintf(msg, sizeof msg, "database connect failed: %s", PQerrorMessage(conn));
	error_set(d, "08000", msg);
}

/* l's connection made anew; false with the cause in d->err */
static bool
link_renew(struct db *d, struct link *l)
{
	PQreset(l->conn);
	stmt_cache_unprepare(l);
	if (PQstatus(l->conn) == CONNECTION_OK)
		return true;
	connect_failed(d, l->conn);
	return false;
}

static bool
link_connect(struct db *d, struct link *l, const char *url)
{
	static const char *const keys[] = { "dbname", "options", "application_name",
	    "connect_timeout", NULL };
	const char *values[5];

	if (l->conn != NULL && PQstatus(l->conn) == CONNECTION_OK)
		return true;
	if (l->conn != NULL)
		return link_renew(d, l);
	values[0] = url;
	/* UTC session: timestamps are formatted in SQL; venue zones are explicit there. A
	 * transaction pooler drops these: its server sessions must set the same (docs/operations.md) */
	values[1] = "-c TimeZone=UTC -c statement_timeout=15000";
	values[2] = log_program();
	values[3] = "5";
	values[4] = NULL;
	l->conn = PQconnectdbParams(keys, values, 1);
	stmt_cache_unprepare(l);
	if (PQstatus(l->conn) != CONNECTION_OK) {
		connect_failed(d, l->conn);
		return false;
	}
	return true;
}

/* The mark file of the replica's pause, one per DATABASE_READ_URL and user. */
static void
replica_mark_path(char *path, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, size, "%s/courts-replica-down.%u.%08x", tmp != NULL && *tmp == '/' ? tmp :
	    "/tmp", (unsigned)getuid(), (unsigned)fnv1a(config_get()->database_read_url));
}

/* true while the replica is to be left alone, this process's word or another's */
static bool
replica_paused(void)
{
	char path[512];
	struct stat st;
	time_t now = time(NULL);

	if (now < replica_down_until)
		return true;
	replica_mark_path(path, sizeof path);
	if (stat(path, &st) == 0 && st.st_mtime > now - REPLICA_PAUSE_S) {
		replica_down_until = st.st_mtime + REPLICA_PAUSE_S;
		return true;
	}
	return false;
}

/* The replica did not answer: reads go to the primary for REPLICA_PAUSE_S seconds, and the
 * first process to find it so after a pause says it once. */
static void
replica_failed(const struct db *d)
{
	char path[512];
	struct stat st;
	time_t now = time(NULL);
	bool fresh;
	FILE *f;

	replica_down_until = now + REPLICA_PAUSE_S;
	replica_mark_path(path, sizeof path);
	fresh = !(stat(path, &st) == 0 && st.st_mtime > now - 2 * REPLICA_PAUSE_S);
	if ((f = fopen(path, "w")) != NULL)
		fclose(f);
	if (fresh) {
		char why[sizeof d->err.message];

		/* libpq's message runs over lines: its first says it */
		snprintf(why, sizeof why, "%s", d->err.message);
		why[strcspn(why, "\n")] = '\0';
		log_msg(NULL, "error", "DATABASE_READ_URL does not answer (%s); reading from the "
		    "primary, trying it again every %d s", why, REPLICA_PAUSE_S);
	}
}

/* The link the session's statements go to, connected; NULL when it cannot be. A session on
 * the replica whose replica does not answer goes on, for good, on the primary (not in the
 * middle of a transaction, which it fails). */
static struct link *
db_connect(struct db *d)
{
	if (d->replica) {
		/* a kept connection that works needs no look at the pause */
		if (replica.conn != NULL && PQstatus(replica.conn) == CONNECTION_OK)
			return &replica;
		if (!replica_paused()) {
			if (link_connect(d, &replica, config_get()->database_read_url))
				return &replica;
			replica_failed(d);
		}
		if (d->in_tx)
			return NULL;
		d->replica = false;
	}
	return link_connect(d, &primary, config_get()->database_url) ? &primary : NULL;
}

static void
error_record(struct db *d, PGconn *conn, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *cons = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);

	if (msg == NULL)	/* no server answer: the connection's own message */
		msg = PQerrorMessage(conn);
	error_set(d, state != NULL ? state : "08000", msg != NULL ? msg : "");
	snprintf(d->err.constraint, sizeof d->err.constraint, "%s", cons != NULL ? cons : "");
	snprintf(d->err.detail, sizeof d->err.detail, "%s", detail != NULL ? detail : "");
	d->err.hint = hint != NULL ? arena_strdup(d->a, hint) : NULL;
}

/* true when the server has something to say to an idle connection: we listen to nothing,
 * so it is ending it (a restart, an administrator's pg_terminate_backend) */
static bool
link_ended(struct link *l)
{
	struct pollfd p = { .fd = PQsocket(l->conn), .events = POLLIN };

	return p.fd < 0 || poll(&p, 1, 0) != 0;
}

static PGresult *
exec_once(struct link *l, const char *sql, int n, const char *const *params)
{
	struct stmt *s = config_get()->db_prepare ? stmt_lookup(l, sql) : NULL;
	PGconn *conn = l->conn;
	char name[24];

	if (s == NULL)
		return PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	snprintf(name, sizeof name, "s%zu", (size_t)(s - l->stmts));
	/* prepare on second use: a plain CGI process runs each statement once and pays no
	 * extra round trip; a FastCGI process prepares what it runs again and again */
	if (!s->prepared && ++s->uses >= 2 &&
	    PQtransactionStatus(conn) != PQTRANS_INERROR) {
		PGresult *p = PQprepare(conn, name, sql, 0, NULL);

		s->prepared = PQresultStatus(p) == PGRES_COMMAND_OK;
		PQclear(p);
	}
	if (s->prepared)
		return PQexecPrepared(conn, name, n, params, NULL, NULL, 0);
	return PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
}

void
db_init(struct db *d, struct arena *a)
{
	memset(d, 0, sizeof *d);
	d->a = a;
}

PGresult *
db_exec_n(struct db *d, const char *sql, int n, const char *const *params)
{
	PGresult *res = NULL;
	ExecStatusType st;
	struct db_result *node;
	struct link *l;
	int attempt;

	memset(&d->err, 0, sizeof d->err);
	if (d->one) {
		if (d->one_ran) {
			error_set(d, "XX000", "a second statement in a one-statement transaction");
			return NULL;
		}
		d->one_ran = true;
	}
	for (attempt = 0; attempt < 2; attempt++) {
		if ((l = db_connect(d)) == NULL)
			return NULL;
		/* a one-statement transaction is never sent twice: a kept connection the server
		 * has ended since (a restart) is found before, and made anew, as BEGIN's retry
		 * does for the others */
		if (d->one && attempt == 0 && link_ended(l) && !link_renew(d, l))
			return NULL;
		res = exec_once(l, sql, n, params);
		st = PQresultStatus(res);
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
			break;
		error_record(d, l->conn, res);
		PQclear(res);
		res = NULL;
		/* a server restart kills a kept connection: reconnect and retry once, but never in
		 * the middle of a transaction, whose earlier work is gone */
		if (PQstatus(l->conn) != CONNECTION_BAD || d->in_tx)
			break;
	}
	if (res == NULL)
		return NULL;
	if ((node = arena_alloc(d->a, sizeof *node)) == NULL) {
		PQclear(res);
		error_set(d, "53200", "out of memory");
		return NULL;
	}
	node->res = res;
	node->next = d->results;
	d->results = node;
	return res;
}

int
db_begin(struct db *d)
{
	if (db_exec_n(d, "BEGIN", 0, NULL) == NULL)
		return -1;
	d->in_tx = true;
	return 0;
}

void
db_begin_one(struct db *d)
{
	d->in_tx = true;
	d->one = true;
	d->one_ran = false;
}

int
db_commit(struct db *d)
{
	PGresult *res;

	if (d->one) {	/* it committed with its statement: nothing to send */
		d->in_tx = d->one = d->one_ran = false;
		return 0;
	}
	res = db_exec_n(d, "COMMIT", 0, NULL);
	d->in_tx = false;
	return res == NULL ? -1 : 0;
}

/* a transaction left open on l is rolled back */
static void
link_rollback(struct link *l)
{
	if (l->conn != NULL && PQstatus(l->conn) == CONNECTION_OK &&
	    PQtransactionStatus(l->conn) != PQTRANS_IDLE)
		PQclear(PQexec(l->conn, "ROLLBACK"));
}

void
db_end(struct db *d)
{
	struct db_result *n;

	for (n = d->results; n != NULL; n = n->next)
		PQclear(n->res);
	d->results = NULL;
	link_rollback(&primary);
	link_rollback(&replica);
	d->in_tx = d->one = d->one_ran = false;
	d->replica = false;
}

void
db_read_replica(struct db *d)
{
	const char *url = config_get()->database_read_url;

	d->replica = url[0] != '\0' && !d->in_tx;
}

bool
db_unavailable(const struct db *d)
{
	const struct link *l = d->replica ? &replica : &primary;

	return strncmp(d->err.sqlstate, "08", 2) == 0 || strncmp(d->err.sqlstate, "57P", 3) == 0 ||
	    l->conn == NULL || PQstatus(l->conn) != CONNECTION_OK;
}

const char *
db_value(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

bool
db_ping(struct db *d)
{
	return db_exec_n(d, "SELECT 1", 0, NULL) != NULL;
}

static void
link_close(struct link *l)
{
	size_t i;

	if (l->conn != NULL)
		PQfinish(l->conn);
	l->conn = NULL;
	for (i = 0; i < STMT_SLOTS; i++)
		free(l->stmts[i].sql);
	memset(l->stmts, 0, sizeof l->stmts);
}

void
db_close(void)
{
	link_close(&primary);
	link_close(&replica);
}

/* The child's copy of a session's socket is pointed at /dev/null before libpq says goodbye
 * on it: the goodbye would end the parent's session at the server. A socket that cannot be
 * pointed away is left, its connection unfreed, rather than ended. */
static void
link_detach(struct link *l)
{
	int fd = l->conn != NULL ? PQsocket(l->conn) : -1;
	int nul = fd >= 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : -1;

	if (fd >= 0 && (nul < 0 || dup2(nul, fd) < 0))
		l->conn = NULL;
	if (nul >= 0)
		(void)close(nul);
	link_close(l);
}

void
db_detach(void)
{
	link_detach(&primary);
	link_detach(&replica);
}
