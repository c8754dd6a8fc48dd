/* valid: pure checks of text values; no allocation, no I/O (unit-tested directly). */
#ifndef COURTS_VALID_H
#define COURTS_VALID_H

#include <stdbool.h>

/* 8-4-4-4-12 hexadecimal UUID, either case. */
bool valid_uuid(const char *s);

/* YYYY-MM-DD naming a real calendar day (leap years included). */
bool valid_date(const char *s);

/* Why s is no date for the API: NULL when it is one, VALID_DATE_SHAPE when it is not written
 * YYYY-MM-DD, VALID_DATE_CALENDAR when it is but names no day of the calendar (2026-02-30,
 * 2026-13-01, 0000-01-01). Both are field messages. */
#define VALID_DATE_SHAPE	"must be a date YYYY-MM-DD"
#define VALID_DATE_CALENDAR	"is not a date on the calendar"
const char *valid_date_problem(const char *s);

/* HH:MM:SS, 00:00:00..23:59:59; with allow_24, also exactly 24:00:00 (end of day).
 * On success *secs (may be NULL) is seconds since midnight. */
bool valid_time(const char *s, bool allow_24, int *secs);

/* Three upper-case ASCII letters (ISO 4217 shape). */
bool valid_currency(const char *s);

/* Not NULL and not only white space. */
bool valid_not_blank(const char *s);

/* s equals one entry of the NULL-terminated list. */
bool valid_enum(const char *s, const char *const *allowed);

/* Parses a whole decimal number (no trailing text, finite). */
bool valid_number(const char *s, double *out);

/* Latitude within [-90, 90], longitude within [-180, 180]. */
bool valid_latitude(double v);
bool valid_longitude(double v);

/* A JSON number as exact cents: positive or zero, at most two decimals, below 10^10.
 * Returns false for more decimals or out-of-range values. */
bool valid_money(double v, long long *cents);

/* Day name MONDAY..SUNDAY to ISO number 1..7; 0 if unknown. */
int valid_day_of_week(const char *s);

#endif
