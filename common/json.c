/* json: allocation hooks, money, result rows written as JSON without a cJSON tree, and the
 * checks of a JSON text that cJSON does not make. */
#include "json.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "utf8.h"

static struct arena *json_arena;

static void *
hook_malloc(size_t size)
{
	return arena_alloc(json_arena, size);
}

static void
hook_free(void *p)
{
	(void)p;	/* released with the arena */
}

void
json_use_arena(struct arena *a)
{
	cJSON_Hooks hooks = { hook_malloc, hook_free };

	json_arena = a;
	if (a != NULL)
		cJSON_InitHooks(&hooks);
	else
		cJSON_InitHooks(NULL);
}

void
json_add_money(cJSON *obj, const char *name, long long cents)
{
	char buf[32];
	long long a = cents < 0 ? -cents : cents;

	snprintf(buf, sizeof buf, "%s%lld.%02lld", cents < 0 ? "-" : "", a / 100, a % 100);
	cJSON_AddRawToObject(obj, name, buf);
}

/* PostgreSQL's text of a number is a JSON number unless it is NaN or an infinity. */
static bool
json_number_text(const char *v)
{
	if (*v == '-')
		v++;
	return isdigit((unsigned char)*v);
}

/* The letter of c's two-character escape in a JSON string, or 0 when it has none. */
static char
json_escape_letter(unsigned char c)
{
	switch (c) {
	case '"':
		return '"';
	case '\\':
		return '\\';
	case '\b':
		return 'b';
	case '\f':
		return 'f';
	case '\n':
		return 'n';
	case '\r':
		return 'r';
	case '\t':
		return 't';
	default:
		return 0;
	}
}

/* Writes the n bytes of s at out + *len (when out is not NULL) and counts them in *len. */
static void
json_put(char *out, size_t *len, const char *s, size_t n)
{
	if (out != NULL)
		memcpy(out + *len, s, n);
	*len += n;
}

/* Writes v as a JSON string at out + *len (when out is not NULL) and counts it in *len.
 * Escapes as cJSON does: quote, backslash and the control characters; UTF-8 passes
 * unchanged. The bytes between two escapes go in one copy. */
static void
json_string(char *out, size_t *len, const char *v)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p, *run;
	char esc[6];

	json_put(out, len, "\"", 1);
	for (p = run = (const unsigned char *)v; *p != '\0'; p++) {
		if (*p >= 0x20 && *p != '"' && *p != '\\')
			continue;
		json_put(out, len, (const char *)run, (size_t)(p - run));
		run = p + 1;
		if ((esc[1] = json_escape_letter(*p)) != 0) {
			esc[0] = '\\';
			json_put(out, len, esc, 2);
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 0xf];
			json_put(out, len, esc, 6);
		}
	}
	json_put(out, len, (const char *)run, (size_t)(p - run));
	json_put(out, len, "\"", 1);
}

/* Writes the rows at out (when out is not NULL); returns the length. */
static size_t
json_rows_write(char *out, const PGresult *res, int skip_null, const struct json_field *fields,
    size_t n)
{
	size_t len = 0, i;
	int row;
	bool first = true;

	json_put(out, &len, "[", 1);
	for (row = 0; row < PQntuples(res); row++) {
		if (skip_null >= 0 && PQgetisnull(res, row, skip_null))
			continue;
		json_put(out, &len, first ? "{" : ",{", first ? 1 : 2);
		first = false;
		for (i = 0; i < n; i++) {
			const struct json_field *f = &fields[i];
			const char *v = PQgetvalue(res, row, f->column);

			if (i > 0)
				json_put(out, &len, ",", 1);
			json_string(out, &len, f->name);
			json_put(out, &len, ":", 1);
			if (PQgetisnull(res, row, f->column))
				json_put(out, &len, "null", 4);
			else if (f->kind == JSON_NUMBER && json_number_text(v))
				json_put(out, &len, v, (size_t)PQgetlength(res, row, f->column));
			else
				json_string(out, &len, v);
		}
		json_put(out, &len, "}", 1);
	}
	json_put(out, &len, "]", 1);
	return len;
}

char *
json_rows(struct arena *a, const PGresult *res, int skip_null, const struct json_field *fields,
    size_t n)
{
	size_t len = json_rows_write(NULL, res, skip_null, fields, n);
	char *out = arena_alloc(a, len + 1);

	json_rows_write(out, res, skip_null, fields, n);
	out[len] = '\0';
	return out;
}

/* ---- the checks of a JSON text ---------------------------------------------------------- */

#define PATH_DEPTH	32	/* levels a path names; deeper ones name their ancestor */

struct level {
	bool	 object;
	bool	 want_name;	/* an object's next string is a member's name */
	size_t	 name_at;	/* its last member's name: text[name_at..name_at + name_len) */
	size_t	 name_len;
	long	 index;		/* an array's element */
};

/* The path of levels 1..depth (level 0 is the text itself). */
static const char *
path_of(struct arena *a, const char *text, const struct level *lv, int depth)
{
	const char *path = "";
	int d;

	for (d = 1; d <= depth && d < PATH_DEPTH; d++)
		path = lv[d].object ?
		    arena_printf(a, "%s%s%.*s", path, *path != '\0' ? "." : "", (int)lv[d].name_len,
			text + lv[d].name_at) :
		    arena_printf(a, "%s[%ld]", path, lv[d].index);
	return path;
}

void
json_text_check(struct arena *a, const char *text, size_t len, struct json_text_faults *out)
{
	const unsigned char *u = (const unsigned char *)text;
	struct level lv[PATH_DEPTH];
	size_t i = 0, n;
	int depth = 0, top;
	bool in_string = false, is_name = false;

	memset(out, 0, sizeof *out);
	out->bad_at = len;
	memset(&lv[0], 0, sizeof lv[0]);
	while (i < len) {
		top = depth < PATH_DEPTH ? depth : PATH_DEPTH - 1;
		if (u[i] >= 0x80) {
			if ((n = utf8_char(u + i, len - i)) == 0) {
				out->bad_at = i;
				out->bad_why = "an octet that is not UTF-8";
				return;
			}
			i += n;
			continue;
		}
		if (in_string) {
			if (u[i] < 0x20) {
				out->bad_at = i;
				out->bad_why = "a control character inside a string (escape it)";
				return;
			}
			if (u[i] == '\\') {
				if (i + 5 < len && u[i + 1] == 'u' && memcmp(text + i + 2, "0000", 4) == 0 &&
				    out->nul_field == NULL) {
					out->nul_field = path_of(a, text, lv, depth);
					out->nul_in_name = is_name;
				}
				i += 2;		/* the escaped character, or the u of \uXXXX */
				continue;
			}
			if (u[i] == '"') {
				in_string = false;
				if (is_name)
					lv[top].name_len = i - lv[top].name_at;
			}
			i++;
			continue;
		}
		switch (u[i]) {
		case '\0':	/* cJSON would end the text there */
			out->bad_at = i;
			out->bad_why = "a NUL octet";
			return;
		case '"':
			in_string = true;
			is_name = depth > 0 && lv[top].object && lv[top].want_name;
			if (is_name) {
				lv[top].name_at = i + 1;
				lv[top].name_len = 0;
				lv[top].want_name = false;
			}
			break;
		case '{':
		case '[':
			depth++;
			if (depth < PATH_DEPTH) {
				memset(&lv[depth], 0, sizeof lv[depth]);
				lv[depth].object = u[i] == '{';
				lv[depth].want_name = lv[depth].object;
			}
			break;
		case '}':
		case ']':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (depth > 0 && lv[top].object)
				lv[top].want_name = true;
			else if (depth > 0)
				lv[top].index++;
			break;
		}
		i++;
	}
}

void
json_text_position(const char *text, size_t at, int *line, int *column)
{
	const unsigned char *u = (const unsigned char *)text;
	size_t i;

	*line = 1;
	*column = 1;
	for (i = 0; i < at; i++) {
		if (u[i] == '\n') {
			(*line)++;
			*column = 1;
		} else if ((u[i] & 0xc0) != 0x80) {	/* not a continuation octet */
			(*column)++;
		}
	}
}
