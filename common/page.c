/* page: keyset paging of lists, see page.h. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "config.h"
#include "input.h"
#include "jwks.h"
#include "page.h"
#include "problem.h"
#include "req.h"
#include "sql.h"
#include "valid.h"

#define CURSOR_MAX	2048	/* bytes of a cursor as sent; a key is far shorter */
#define PAGE_PARAMS	16	/* a list's own parameters and the two of paging */

struct page {
	long		 limit;		/* items per page */
	const char	*after;		/* the cursor's key as JSON array text, or NULL: first page */
};

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Unpadded base64url of s, in the arena. */
static char *
encode(struct arena *a, const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *out = arena_alloc(a, n * 4 / 3 + 4);
	unsigned long acc = 0;
	int bits = 0;

	for (i = 0; i < n; i++) {
		acc = (acc << 8) | (unsigned char)s[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = b64url[(acc >> bits) & 63];
		}
		acc &= (1UL << bits) - 1;
	}
	if (bits > 0)
		out[o++] = b64url[(acc << (6 - bits)) & 63];
	out[o] = '\0';
	return out;
}

/* An ISO 8601 timestamp as PostgreSQL writes one in JSON: 2026-11-24T05:00:00.123456+00:00
 * (fraction and offset minutes optional). */
static bool
timestamp_ok(const char *s)
{
	char date[11], time[9];
	size_t n = strlen(s), i = 19;

	if (n < 20 || s[10] != 'T')
		return false;
	memcpy(date, s, 10);
	date[10] = '\0';
	memcpy(time, s + 11, 8);
	time[8] = '\0';
	if (!valid_date(date) || !valid_time(time, false, NULL))
		return false;
	if (s[i] == '.') {
		for (i++; i < n && i <= 26 && isdigit((unsigned char)s[i]); i++)
			;
		if (i == 20)
			return false;
	}
	if (strcmp(s + i, "Z") == 0)
		return true;
	if ((s[i] != '+' && s[i] != '-') || !isdigit((unsigned char)s[i + 1]) ||
	    !isdigit((unsigned char)s[i + 2]))
		return false;
	i += 3;
	if (s[i] == '\0')
		return true;
	return s[i] == ':' && isdigit((unsigned char)s[i + 1]) &&
	    isdigit((unsigned char)s[i + 2]) && s[i + 3] == '\0';
}

/* One value of a key against its letter. */
static bool
key_value_ok(const cJSON *v, char kind)
{
	switch (kind) {
	case 't':
		return cJSON_IsString(v) && timestamp_ok(v->valuestring);
	case 'u':
		return cJSON_IsString(v) && valid_uuid(v->valuestring);
	case 's':
		return cJSON_IsString(v);
	case 'n':
		return cJSON_IsNumber(v) && isfinite(v->valuedouble);
	case 'b':
		return cJSON_IsBool(v);
	default:
		return false;
	}
}

/* The key a cursor carries, as JSON array text, or NULL when it is not one of this list's. */
static const char *
cursor_key(struct req *r, const char *cursor, const char *keys)
{
	size_t n = strlen(cursor), i;
	unsigned char *raw;
	long len;
	cJSON *doc, *v;
	bool ok;

	if (n > CURSOR_MAX)
		return NULL;
	raw = arena_alloc(r->a, n + 1);
	if ((len = b64url_decode(cursor, n, raw)) <= 0)
		return NULL;
	raw[len] = '\0';
	if (strlen((char *)raw) != (size_t)len || (doc = cJSON_Parse((char *)raw)) == NULL)
		return NULL;
	ok = cJSON_IsArray(doc) && (size_t)cJSON_GetArraySize(doc) == strlen(keys);
	for (i = 0, v = ok ? doc->child : NULL; ok && v != NULL; i++, v = v->next)
		ok = key_value_ok(v, keys[i]);
	cJSON_Delete(doc);
	return ok ? (const char *)raw : NULL;
}

/* Reads ?limit= and ?cursor= into p; field problems on r. */
static void
page_read(struct req *r, const char *keys, struct page *p)
{
	const char *cursor = NULL;

	p->limit = PAGE_DEFAULT;
	p->after = NULL;
	if (query_int(r, "limit", 0, &p->limit) && (p->limit < 1 || p->limit > PAGE_MAX))
		problem_field(r, "limit", "must be between 1 and 500");
	if (query_string(r, "cursor", 0, &cursor) &&
	    (p->after = cursor_key(r, cursor, keys)) == NULL)
		problem_field(r, "cursor", "is not a cursor of this list; follow the Link header");
}

/* Appends s percent-encoded (all but RFC 3986's unreserved characters) to out at *o. */
static void
pct(char *out, size_t *o, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
			out[(*o)++] = (char)c;
		else {
			out[(*o)++] = '%';
			out[(*o)++] = hex[c >> 4];
			out[(*o)++] = hex[c & 15];
		}
	}
	out[*o] = '\0';
}

/* The Link header's target: this list's path and query, with the cursor after key. */
static const char *
next_link(struct req *r, const struct page *p, const char *key)
{
	const char *base = config_get()->base_path, *cursor = encode(r->a, key);
	size_t cap = 3 * (strlen(base) + strlen(r->path)) + strlen(cursor) + 64, o = 0;
	char *out;
	int i;

	for (i = 0; i < r->nquery; i++)
		cap += 3 * (strlen(r->query_names[i]) + strlen(r->query_values[i])) + 2;
	out = arena_alloc(r->a, cap);
	out[o++] = '<';
	pct(out, &o, base);
	pct(out, &o, r->path);
	out[o++] = '?';
	for (i = 0; i < r->nquery; i++) {
		if (strcmp(r->query_names[i], "limit") == 0 ||
		    strcmp(r->query_names[i], "cursor") == 0)
			continue;
		pct(out, &o, r->query_names[i]);
		out[o++] = '=';
		pct(out, &o, r->query_values[i]);
		out[o++] = '&';
	}
	o += (size_t)snprintf(out + o, cap - o, "limit=%ld&cursor=%s>; rel=\"next\"", p->limit,
	    cursor);
	return out;
}

/* Answers 200 with the first p->limit documents of res and the link to the next page when
 * there are more. */
static void
page_send(struct req *r, const struct page *p, PGresult *res)
{
	int rows = PQntuples(res), n = rows > p->limit ? (int)p->limit : rows, i;
	size_t len = 3, o = 0;
	char *body;

	for (i = 0; i < n; i++)
		len += (size_t)PQgetlength(res, i, 0) + 1;
	body = arena_alloc(r->a, len);
	body[o++] = '[';
	for (i = 0; i < n; i++) {
		if (i > 0)
			body[o++] = ',';
		memcpy(body + o, PQgetvalue(res, i, 0), (size_t)PQgetlength(res, i, 0));
		o += (size_t)PQgetlength(res, i, 0);
	}
	body[o++] = ']';
	body[o] = '\0';
	if (rows > p->limit)
		req_add_header(r, "Link", next_link(r, p, PQgetvalue(res, n - 1, 1)));
	req_send_json(r, 200, body);
}

void
page_list_n(struct req *r, const char *keys, const char *sql, int n,
    const char *const *params)
{
	const char *all[PAGE_PARAMS];
	struct page p;
	PGresult *res;

	page_read(r, keys, &p);
	if (problem_fields_or_send(r) != 0)
		return;
	if (n < 0 || n + 2 > PAGE_PARAMS) {
		problem_internal(r);
		return;
	}
	if (n > 0)
		memcpy(all, params, (size_t)n * sizeof *all);
	all[n] = input_fmt_long(r, p.limit + 1);
	all[n + 1] = p.after;
	if ((res = sql_query_n(r, sql, n + 2, all)) != NULL)
		page_send(r, &p, res);
}
