/* outbound: HTTP calls through libcurl, one handle per process. */
#include "outbound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

static CURL *handle;
static char error[CURL_ERROR_SIZE];	/* the handle's, for as long as it lives */

struct sink {
	struct outbound_answer	*a;
	size_t			 max;
	bool			 keep;
	bool			 over;
};

static size_t
sink_write(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	char *grown;

	if (!s->keep)
		return len;
	if (s->a->len + len > s->max) {
		s->over = true;
		return 0;	/* ends the transfer: CURLE_WRITE_ERROR */
	}
	if ((grown = realloc(s->a->body, s->a->len + len + 1)) == NULL)
		return 0;
	memcpy(grown + s->a->len, data, len);
	s->a->body = grown;
	s->a->len += len;
	grown[s->a->len] = '\0';
	return len;
}

int
outbound_call(const struct outbound *o, struct outbound_answer *a)
{
	struct sink s = { a, o->max_answer, o->max_answer > 0, false };
	struct curl_slist *headers = NULL, *more;
	const char *const *h;
	CURLcode rc;
	int ret = -1;

	memset(a, 0, sizeof *a);
	error[0] = '\0';
	if (handle == NULL) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
		    (handle = curl_easy_init()) == NULL) {
			snprintf(a->why, sizeof a->why, "cannot start libcurl");
			return -1;
		}
	} else {
		curl_easy_reset(handle);	/* the settings go, the connections stay */
	}
	/* a call may not wait for a 100 Continue, and sends its own User-Agent */
	if ((headers = curl_slist_append(NULL, "Expect:")) == NULL)
		goto nomem;
	for (h = o->headers; h != NULL && *h != NULL; h++) {
		if ((more = curl_slist_append(headers, *h)) == NULL)
			goto nomem;
		headers = more;
	}
	curl_easy_setopt(handle, CURLOPT_URL, o->url);
	curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(handle, CURLOPT_TIMEOUT, o->timeout);
	curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
	curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(handle, CURLOPT_WRITEDATA, &s);
	if (s.keep)
		curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_answer);
	if (o->body != NULL) {
		curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
		curl_easy_setopt(handle, CURLOPT_POSTFIELDS, o->body);
	}
	if (o->method != NULL && strcmp(o->method, o->body != NULL ? "POST" : "GET") != 0)
		curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, o->method);
	rc = curl_easy_perform(handle);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &a->status);
		ret = 0;
	} else if (s.over || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(a->why, sizeof a->why, "the answer is over %zu bytes", o->max_answer);
	} else {
		snprintf(a->why, sizeof a->why, "%s", *error != '\0' ? error : curl_easy_strerror(rc));
	}
	curl_slist_free_all(headers);
	if (ret != 0) {
		free(a->body);
		a->body = NULL;
		a->len = 0;
	}
	return ret;
nomem:
	curl_slist_free_all(headers);
	snprintf(a->why, sizeof a->why, "out of memory");
	return -1;
}
