/* problem: the one way errors leave the service, as application/problem+json (RFC 9457):
 * {type, title, status, detail, instance, code, requestId, errors: [{field, message}]}. */
#ifndef COURTS_PROBLEM_H
#define COURTS_PROBLEM_H

#include <stdbool.h>

#include <cJSON.h>

struct req;

/* Answers with status, a stable machine code (e.g. "SLOT_TAKEN") and a human detail.
 * Field errors collected so far are included. For 5xx the detail should say nothing
 * internal: the cause belongs in the log. */
void problem_send(struct req *r, int status, const char *code, const char *detail);

/* The same with more members of the body (a JSON object's, which it takes; NULL: none),
 * such as the ids of what is in the way. */
void problem_send_members(struct req *r, int status, const char *code, const char *detail,
    cJSON *members);

/* Records a validation error on field (JSON name or query/path parameter). */
void problem_field(struct req *r, const char *field, const char *message);

/* true when problem_field() was called for this request. */
bool problem_has_fields(const struct req *r);

/* If field errors were recorded, answers 400 VALIDATION_FAILED with all of them and
 * returns -1; otherwise returns 0. */
int problem_fields_or_send(struct req *r);

/* Shorthands for the common answers. */
void problem_not_found(struct req *r, const char *what);	/* 404 NOT_FOUND */
void problem_conflict(struct req *r, const char *code, const char *detail);	/* 409 */
void problem_internal(struct req *r);				/* 500, id only */

#endif
