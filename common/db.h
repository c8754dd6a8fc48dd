/* db: the process's PostgreSQL connection and sessions of parameterised statements.
 *
 * The connection belongs to the process: it is opened on first use, kept across FastCGI
 * requests and sweeper batches, and re-established transparently when the server went away.
 * A struct db is one unit of work on it (a request, a batch): it owns the results of its
 * statements until db_end(), knows whether a transaction is open, and keeps the last error.
 * This layer answers nothing: callers decide what a failure means (sql.h does it for
 * requests). SQL is always a constant string with $n placeholders; values travel as
 * parameters, never in the text.
 */
#ifndef COURTS_DB_H
#define COURTS_DB_H

#include <stdbool.h>

#include <libpq-fe.h>

struct arena;

/* The last failure of a session, as PostgreSQL reported it. */
struct db_error {
	char	sqlstate[6];	/* "" when the last statement succeeded; "08000" when no server */
	char	constraint[64];	/* violated constraint, or "" */
	char	message[256];	/* primary message, or libpq's connection error */
	char	detail[256];	/* DETAIL, or "" */
	const char *hint;	/* HINT (in the session's arena), or NULL */
};

struct db_result;

struct db {
	struct arena		*a;		/* holds the bookkeeping of the results */
	struct db_result	*results;	/* cleared by db_end() */
	bool			 in_tx;
	bool			 one;		/* in_tx is the next statement alone (db_begin_one) */
	bool			 one_ran;	/* ... and it has run: the transaction has ended */
	bool			 replica;	/* statements go to DATABASE_READ_URL */
	struct db_error		 err;
};

/* Starts a session whose bookkeeping lives in a. */
void db_init(struct db *d, struct arena *a);

/* Runs sql with n text parameters (NULL entries are SQL NULL). Returns the result, owned by
 * the session until db_end(), or NULL with the cause in d->err. A statement that fails
 * because the server restarted is retried once on a new connection, outside transactions. */
PGresult *db_exec_n(struct db *d, const char *sql, int n, const char *const *params);

#define DB_NARGS(...) ((int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)))
#define db_exec(d, sql, ...) db_exec_n((d), (sql), DB_NARGS(__VA_ARGS__), \
	(const char *const[]){ __VA_ARGS__ })

/* Transactions: 0, or -1 with the cause in d->err. */
int db_begin(struct db *d);
int db_commit(struct db *d);
/* A transaction that is one statement: the next statement runs as a transaction of its own
 * (PostgreSQL's implicit one), without the two round trips of BEGIN and COMMIT; db_commit
 * after it sends nothing. Like db_begin, it is never retried on a new connection. Any
 * further statement before db_commit or db_end fails (XX000): it could not be atomic with
 * the first, which has committed. */
void db_begin_one(struct db *d);

/* Ends the session: rolls back a transaction still open and clears its results. The
 * session may be used again afterwards. */
void db_end(struct db *d);

/* From now until db_end(), the session's statements go to the read replica
 * (DATABASE_READ_URL), whose answers may lag the primary by its replication delay: for
 * read-only answers that may be that stale, never for a write or a check before one. Without
 * DATABASE_READ_URL, or while the replica does not answer (logged once, tried again every
 * 30 s), they go to the primary as before. Not inside a transaction. */
void db_read_replica(struct db *d);

/* true when the last failure was the server being unreachable or shutting down. */
bool db_unavailable(const struct db *d);

/* Value of a cell, NULL for SQL NULL. */
const char *db_value(const PGresult *res, int row, int col);

/* true when the database answers a trivial statement (health check). */
bool db_ping(struct db *d);

/* Closes the connection (process exit, tests). */
void db_close(void);

/* In a child just forked: forgets the sessions inherited from the parent without ending
 * them (they stay the parent's); the child's next statement opens a session of its own. */
void db_detach(void);

#endif
