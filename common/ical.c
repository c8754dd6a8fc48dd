/* ical: iCalendar content lines, folded and escaped (ical.h). */
#include <string.h>

#include "ical.h"

#define FOLD_AT	75	/* octets of a line before its break, CRLF not counted */

void
ical_init(struct ical *c, struct arena *a)
{
	c->a = a;
	c->cap = 4096;
	c->len = 0;
	c->buf = arena_alloc(a, c->cap);
	c->buf[0] = '\0';
}

static void
reserve(struct ical *c, size_t more)
{
	char *bigger;

	if (c->len + more + 1 <= c->cap)
		return;
	while (c->len + more + 1 > c->cap)
		c->cap *= 2;
	bigger = arena_alloc(c->a, c->cap);
	memcpy(bigger, c->buf, c->len + 1);
	c->buf = bigger;
}

/* Octets of the UTF-8 character that starts with lead octet ch (1 for anything else). */
static size_t
char_len(unsigned char ch)
{
	return ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
}

/* Appends n octets of one content line's logical text, breaking it with CRLF and a space
 * before a character that would make the physical line longer than FOLD_AT octets; *col
 * counts the octets of the current physical line. A character is never split. */
static void
put(struct ical *c, const char *s, size_t n, size_t *col)
{
	size_t i;

	reserve(c, n * 2 + 3);	/* room for every fold: at most one per 71 octets */
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch & 0xC0) != 0x80 && *col + char_len(ch) > FOLD_AT) {
			memcpy(c->buf + c->len, "\r\n ", 3);
			c->len += 3;
			*col = 1;
		}
		c->buf[c->len++] = (char)ch;
		(*col)++;
	}
	c->buf[c->len] = '\0';
}

static void
end_line(struct ical *c)
{
	reserve(c, 2);
	memcpy(c->buf + c->len, "\r\n", 3);
	c->len += 2;
}

void
ical_line(struct ical *c, const char *name, const char *value)
{
	size_t col = 0;

	put(c, name, strlen(name), &col);
	put(c, ":", 1, &col);
	put(c, value, strlen(value), &col);
	end_line(c);
}

void
ical_text(struct ical *c, const char *name, const char *text)
{
	size_t col = 0;
	const char *s;

	put(c, name, strlen(name), &col);
	put(c, ":", 1, &col);
	for (s = text; *s != '\0'; s++) {
		switch (*s) {
		case '\\':
			put(c, "\\\\", 2, &col);
			break;
		case ';':
			put(c, "\\;", 2, &col);
			break;
		case ',':
			put(c, "\\,", 2, &col);
			break;
		case '\r':
			if (s[1] == '\n')
				s++;
			/* FALLTHROUGH */
		case '\n':
			put(c, "\\n", 2, &col);
			break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\t')
				break;	/* other controls are not allowed in TEXT */
			put(c, s, 1, &col);
		}
	}
	end_line(c);
}

const char *
ical_body(const struct ical *c, size_t *len)
{
	*len = c->len;
	return c->buf;
}
