/* stub/db_stub.h: the fuzzer's stand-in for common/db.c, linked in its place.
 *
 * No server: the statement that resolves the caller (users) answers one row with a fixed id,
 * the write budget's statement (budget.c) answers the wait set here, "0" (the write was
 * spent) unless told otherwise, BEGIN and COMMIT succeed, and every other statement fails
 * with the error set here. So a write runs its whole path, body and handler included, up to
 * and including its first statement past the budget's (the handler's, or the claim of an
 * Idempotency-Key) and the mapping of that failure to an answer (sql.c); or, the budget's
 * answer set to fail, up to the budget's statement. */
#ifndef COURTS_FUZZ_STUB_DB_H
#define COURTS_FUZZ_STUB_DB_H

#include "db.h"

#define STUB_USER_ID "00000000-0000-4000-8000-00000000f022"

/* The failure of every statement but the caller's and the budget's; sqlstate "" means 08006
 * (no server). */
extern struct db_error stub_db_failure;

/* The budget statement's answer: the seconds the caller must wait, digits, "0" when the
 * write was spent; "" to fail it with stub_db_failure instead. */
extern char stub_db_budget[16];

/* Statements that failed since the last stub_db_reset(). */
extern int stub_db_failures;

void stub_db_reset(void);

#endif
