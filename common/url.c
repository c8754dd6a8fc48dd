/* url: decoding of the request target; what does not decode is refused, never guessed. */
#include "url.h"

#include <string.h>

#include "arena.h"
#include "problem.h"
#include "req.h"
#include "utf8.h"

static int
hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

char *
url_decode(struct arena *a, const char *s, size_t n, bool plus)
{
	char *out = arena_alloc(a, n + 1), *o = out;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= n || (hi = hexval(s[i + 1])) < 0 || (lo = hexval(s[i + 2])) < 0 ||
			    (hi == 0 && lo == 0))
				return NULL;
			*o++ = (char)(hi * 16 + lo);
			i += 2;
		} else if (plus && s[i] == '+')
			*o++ = ' ';
		else
			*o++ = s[i];
	}
	*o = '\0';
	/* text, not bytes: what is not UTF-8 is refused here, before anything echoes it */
	if (utf8_invalid_at(out, (size_t)(o - out)) != (size_t)(o - out))
		return NULL;
	return out;
}

char *
url_path(struct arena *a, const char *uri, const char *base)
{
	size_t n = strcspn(uri, "?"), blen = strlen(base);
	char *path;

	if (blen > 0 && n >= blen && strncmp(uri, base, blen) == 0) {
		uri += blen;
		n -= blen;
	}
	if ((path = url_decode(a, uri, n, false)) == NULL)
		return NULL;
	n = strlen(path);
	if (n > 1 && path[n - 1] == '/')
		path[n - 1] = '\0';
	return path;
}

void
url_query_parse(struct req *r, const char *qs)
{
	int refused = 0;

	while (qs != NULL && *qs != '\0' && r->nquery < REQ_MAX_QUERY && refused < REQ_MAX_QUERY) {
		size_t len = strcspn(qs, "&"), klen = strcspn(qs, "=");
		const char *name, *value;

		if (klen > len)
			klen = len;
		name = url_decode(r->a, qs, klen, true);
		value = klen < len ? url_decode(r->a, qs + klen + 1, len - klen - 1, true) : "";
		if (name == NULL || value == NULL)
			refused++;
		if (name == NULL)
			problem_field(r, "query", "a parameter's name is not percent-encoded UTF-8 "
			    "text (a malformed escape, %00, or octets that are not UTF-8)");
		else if (value == NULL)
			problem_field(r, name, "is not percent-encoded UTF-8 text (a malformed "
			    "escape, %00, or octets that are not UTF-8)");
		else if (*name != '\0' && req_query(r, name) == NULL) {
			r->query_names[r->nquery] = name;
			r->query_values[r->nquery] = value;
			r->nquery++;
		}
		qs += len;
		if (*qs == '&')
			qs++;
	}
}
