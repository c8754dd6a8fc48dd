/* ical: content lines, TEXT escaping and folding at 75 octets (RFC 5545 3.1, 3.3.11). */
#include <string.h>

#include "arena.h"
#include "ical.h"
#include "unit.h"

/* Whether every line of text ends in CRLF and has at most 75 octets, and no fold splits a
 * UTF-8 character. */
static int
lines_ok(const char *text)
{
	const char *s = text, *eol;

	while (*s != '\0') {
		if ((eol = strstr(s, "\r\n")) == NULL || eol - s > 75)
			return 0;
		if (eol[2] == ' ' && ((unsigned char)eol[3] & 0xC0) == 0x80)
			return 0;
		s = eol + 2;
	}
	return 1;
}

/* text with every fold (CRLF and one space) taken out */
static char *
unfold(struct arena *a, const char *text)
{
	char *out = arena_alloc(a, strlen(text) + 1), *o = out;

	for (; *text != '\0'; text++) {
		if (text[0] == '\r' && text[1] == '\n' && text[2] == ' ') {
			text += 2;
			continue;
		}
		*o++ = *text;
	}
	*o = '\0';
	return out;
}

int
main(void)
{
	struct arena *a = arena_new();
	struct ical c;
	const char *body;
	char longtext[400];
	size_t len, i;

	unit_start();
	ical_init(&c, a);
	ical_line(&c, "BEGIN", "VCALENDAR");
	ical_text(&c, "SUMMARY", "a\\b;c,d\ne\r\nf\001g");
	body = ical_body(&c, &len);
	CHECK_STR(body, "BEGIN:VCALENDAR\r\nSUMMARY:a\\\\b\\;c\\,d\\ne\\nfg\r\n",
	    "ical: backslash, semicolon, comma and line breaks escaped; controls dropped");
	CHECK_INT(len, strlen(body), "ical: the length is the text's");

	ical_init(&c, a);
	for (i = 0; i + 2 < sizeof longtext; i += 2)
		memcpy(longtext + i, "\xc3\xa9", 2);	/* é, two octets each */
	longtext[i] = '\0';
	ical_text(&c, "LOCATION", longtext);
	ical_line(&c, "X", longtext);
	body = ical_body(&c, &len);
	CHECK(lines_ok(body), "ical: lines of at most 75 octets, CRLF, no character split");
	CHECK_STR(unfold(a, body), arena_printf(a, "LOCATION:%s\r\nX:%s\r\n", longtext, longtext),
	    "ical: unfolding gives the lines back whole");
	CHECK(strstr(body, "\r\n ") != NULL, "ical: a long line is folded");
	arena_free(a);
	return unit_done();
}
