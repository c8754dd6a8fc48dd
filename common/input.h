/* input: typed readers for JSON body fields and query parameters.
 *
 * Every reader returns true when the value is present and valid and stores it in *out.
 * It returns false when the value is absent (or null, for IN_NULLABLE) or invalid; an invalid
 * value, a missing IN_REQUIRED value and a null without IN_NULLABLE are recorded with
 * problem_field(), so a handler reads every field, then calls problem_fields_or_send() once
 * and the client sees all its mistakes in one answer. Strings are borrowed from the request.
 */
#ifndef COURTS_INPUT_H
#define COURTS_INPUT_H

#include <stdbool.h>

struct req;

#define IN_REQUIRED	0x1u	/* absence is an error */
#define IN_NOT_BLANK	0x2u	/* strings: blank is an error */
#define IN_NULLABLE	0x4u	/* JSON null is allowed and reads as absent */

#define INPUT_STRING_MAX 2000	/* characters in any string field */

/* true when the body has the key, whatever its value (null included). */
bool body_has(const struct req *r, const char *name);

bool body_string(struct req *r, const char *name, unsigned flags, const char **out);
bool body_number(struct req *r, const char *name, unsigned flags, double *out);
bool body_int(struct req *r, const char *name, unsigned flags, long *out);
bool body_bool(struct req *r, const char *name, unsigned flags, bool *out);
bool body_enum(struct req *r, const char *name, unsigned flags,
    const char *const *allowed, const char **out);
bool body_uuid(struct req *r, const char *name, unsigned flags, const char **out);
bool body_date(struct req *r, const char *name, unsigned flags, const char **out);
/* allow_24 admits 24:00:00 (closing and end times). */
bool body_time(struct req *r, const char *name, unsigned flags, bool allow_24, const char **out);
bool body_money(struct req *r, const char *name, unsigned flags, long long *cents);
bool body_latitude(struct req *r, const char *name, unsigned flags, double *out);
bool body_longitude(struct req *r, const char *name, unsigned flags, double *out);

bool query_string(struct req *r, const char *name, unsigned flags, const char **out);
bool query_number(struct req *r, const char *name, unsigned flags, double *out);
bool query_int(struct req *r, const char *name, unsigned flags, long *out);
bool query_enum(struct req *r, const char *name, unsigned flags,
    const char *const *allowed, const char **out);
bool query_date(struct req *r, const char *name, unsigned flags, const char **out);
bool query_time(struct req *r, const char *name, unsigned flags, const char **out);
bool query_latitude(struct req *r, const char *name, unsigned flags, double *out);
bool query_longitude(struct req *r, const char *name, unsigned flags, double *out);

/* Text of a double for a SQL parameter ("%.17g"), in request memory. */
const char *input_fmt_double(struct req *r, double v);
/* Text of an integer for a SQL parameter, in request memory. */
const char *input_fmt_long(struct req *r, long long v);
/* Text of cents as an exact decimal ("1250" -> "12.50"), in request memory. */
const char *input_fmt_cents(struct req *r, long long cents);

#endif
