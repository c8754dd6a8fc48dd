/* budget: a write budget per caller, so that one account cannot flood the service.
 *
 * Writes (POST, PUT, PATCH, DELETE) of players and owners spend from a token bucket of
 * WRITE_BUDGET_BURST writes refilled at WRITE_BUDGET_PER_MINUTE (write_budget_spend,
 * sql/areas/55_fair_use.sql); administrators are exempt. The bucket is in the database, which
 * every run mode shares.
 */
#ifndef COURTS_BUDGET_H
#define COURTS_BUDGET_H

struct req;

/* Spends one write for r's caller when r is a write. Returns 0, or -1 after answering 429
 * RATE_LIMITED with Retry-After (or the database error). */
int budget_spend_or_answer(struct req *r);

#endif
