/* db: the process's PostgreSQL connection and parameterised queries.
 *
 * The connection belongs to the process, not the request: it is opened on first use, kept
 * across FastCGI requests, and re-established transparently when the server went away.
 * Results belong to the request and are cleared when it ends, so handlers never PQclear.
 * SQL is always a constant string with $n placeholders; values travel as parameters.
 */
#ifndef COURTS_DB_H
#define COURTS_DB_H

#include <stdbool.h>

#include <libpq-fe.h>

struct req;

/* Runs sql with n text parameters (NULL entries are SQL NULL). Returns the result, owned by
 * the request, or NULL after answering the request with the mapped problem (see
 * db_answer_error). sql must be a string literal: its address keys the statement cache. */
PGresult *db_query_n(struct req *r, const char *sql, int n, const char *const *params);

/* Same, but on error answers nothing: the caller inspects db_error_constraint() /
 * db_error_sqlstate() and then either handles it or calls db_answer_error(). */
PGresult *db_try_n(struct req *r, const char *sql, int n, const char *const *params);

#define DB_NARGS(...) ((int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)))
#define db_query(r, sql, ...) db_query_n((r), (sql), DB_NARGS(__VA_ARGS__), \
	(const char *const[]){ __VA_ARGS__ })
#define db_try(r, sql, ...) db_try_n((r), (sql), DB_NARGS(__VA_ARGS__), \
	(const char *const[]){ __VA_ARGS__ })
#define db_query0(r, sql) db_query_n((r), (sql), 0, NULL)

/* SQLSTATE and constraint name of the last failed query of r ("" when none). */
const char *db_error_sqlstate(const struct req *r);
const char *db_error_constraint(const struct req *r);

/* Answers r for its last database error: constraint violations map to 409 / 404 / 400 with
 * a stable code, an unreachable server to 503, anything else to 500 (cause logged). */
void db_answer_error(struct req *r);

/* Transactions: 0 on success, -1 after answering. A transaction still open when the request
 * ends is rolled back by the driver. */
int db_begin(struct req *r);
int db_commit(struct req *r);

/* Runs sql; if it returns a row, answers status with the first column as JSON text,
 * otherwise answers 404 naming what. Returns 1 answered with the row, 0 answered 404,
 * -1 answered with an error. */
int db_send_json_n(struct req *r, int status, const char *what, const char *sql, int n,
    const char *const *params);
#define db_send_json(r, status, what, sql, ...) db_send_json_n((r), (status), (what), (sql), \
	DB_NARGS(__VA_ARGS__), (const char *const[]){ __VA_ARGS__ })

/* Value of a cell, NULL for SQL NULL. */
const char *db_value(const PGresult *res, int row, int col);

/* true when the database answers a trivial query (health check); never answers r. */
bool db_ping(struct req *r);

/* Called by the driver when a request ends: rolls back an open transaction and clears the
 * request's results. */
void db_request_end(struct req *r);

/* Extra server settings for this program's connection, in libpq "options" form
 * ("-c name=value ..."), sent with the connection request so they cost no round trip.
 * Call before the first query; the string is borrowed for the life of the process. */
void db_set_options(const char *options);

/* Closes the connection (process exit, tests). */
void db_close(void);

#endif
