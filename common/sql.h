/* sql: a request's statements. Runs SQL on the request's database session (db.h) and, when a
 * statement fails, answers the request with the problem its failure maps to: the one place
 * where database failures become HTTP answers.
 *
 * Mapping, in order:
 *   - SQLSTATE class CR (raised by the lifecycle functions of sql/): "CRnnn" answers status
 *     nnn, the message is the stable code and the DETAIL the human detail;
 *   - a constraint of the known table in sql.c: its status, code and detail;
 *   - other integrity violations (class 23): 409 CONFLICT; data exceptions (22): 400;
 *   - serialization failures and deadlocks: 409 CONCURRENT_UPDATE;
 *   - an unreachable server: 503 DATABASE_UNAVAILABLE; anything else: 500.
 * Each failure writes at most one log line, here.
 */
#ifndef COURTS_SQL_H
#define COURTS_SQL_H

#include <stdbool.h>

#include "db.h"

struct req;

/* Runs sql with n text parameters on r's session. Returns the result (owned by the request
 * until it ends) or NULL after answering r with the mapped problem. */
PGresult *sql_query_n(struct req *r, const char *sql, int n, const char *const *params);

/* Same, but answers nothing on failure: the caller reads r->db->err and then handles it or
 * calls sql_answer_error(). */
PGresult *sql_try_n(struct req *r, const char *sql, int n, const char *const *params);

#define sql_query(r, sql, ...) sql_query_n((r), (sql), DB_NARGS(__VA_ARGS__), \
	(const char *const[]){ __VA_ARGS__ })
#define sql_try(r, sql, ...) sql_try_n((r), (sql), DB_NARGS(__VA_ARGS__), \
	(const char *const[]){ __VA_ARGS__ })

/* Answers r for the last failure of its session (see the mapping above). */
void sql_answer_error(struct req *r);

/* Transactions: 0, or -1 after answering. A transaction still open when the request ends is
 * rolled back by the driver. Inside a transaction the driver opened (idem.h), both join it:
 * the driver commits once the answer is known. */
int sql_begin(struct req *r);
int sql_commit(struct req *r);
/* A transaction that is the next statement alone (db_begin_one): one round trip instead of
 * three; sql_commit after it sends nothing. Inside the driver's transaction, joins it. */
void sql_begin_one(struct req *r);

/* Runs sql; if it returns a row whose first column is not NULL, answers status with that
 * column as JSON text, otherwise answers 404 naming what. Returns 1 answered with the row,
 * 0 answered 404, -1 answered with an error. */
int sql_send_json_n(struct req *r, int status, const char *what, const char *sql, int n,
    const char *const *params);
#define sql_send_json(r, status, what, sql, ...) sql_send_json_n((r), (status), (what), (sql), \
	DB_NARGS(__VA_ARGS__), (const char *const[]){ __VA_ARGS__ })

/* Commits, then answers status with json (copied); the answer never claims what was rolled
 * back. json NULL means the request was answered already: nothing is done. */
void sql_commit_and_send(struct req *r, int status, const char *json);

/* Commits, then answers 204. */
void sql_commit_and_no_content(struct req *r);

#endif
