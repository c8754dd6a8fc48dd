/* ical: iCalendar text (RFC 5545) as calendar apps read it: CRLF content lines folded at 75
 * octets (never inside a UTF-8 character), TEXT values escaped. All memory lives in the
 * arena given to ical_init. */
#ifndef COURTS_ICAL_H
#define COURTS_ICAL_H

#include <stddef.h>

#include "arena.h"

struct ical {
	struct arena	*a;
	char		*buf;
	size_t		 len, cap;
};

void ical_init(struct ical *c, struct arena *a);

/* The content line "name:value", value written as it is (a date-time, a number, a keyword). */
void ical_line(struct ical *c, const char *name, const char *value);

/* The content line "name:text" with text escaped as a TEXT value: backslash, semicolon and
 * comma escaped, each line break as \n. */
void ical_text(struct ical *c, const char *name, const char *text);

/* The text written so far (NUL-terminated) and its length. */
const char *ical_body(const struct ical *c, size_t *len);

#endif
