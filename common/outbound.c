/* outbound: HTTP calls through libcurl, one handle per process.
 *
 * libcurl is loaded by the first call (dlopen), not linked: it brings some twenty shared
 * libraries of its own, and loading them costs a plain CGI program about 3 ms at every start
 * (bench/sql.md has the measure), which the requests that never call out must not pay. */
#include "outbound.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

/* the libcurl functions used, by their names in libcurl.so.4 */
static struct {
	CURLcode	 (*global_init)(long);
	CURL		*(*easy_init)(void);
	void		 (*easy_reset)(CURL *);
	CURLcode	 (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode	 (*easy_perform)(CURL *);
	CURLcode	 (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char	*(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void		 (*slist_free_all)(struct curl_slist *);
} curl;

static CURL *handle;
static char error[CURL_ERROR_SIZE];	/* the handle's, for as long as it lives */

/* Loads libcurl and starts the handle; 0, or -1 with why. */
static int
curl_load(char *why, size_t whylen)
{
	void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (lib == NULL) {
		snprintf(why, whylen, "cannot load libcurl: %s", dlerror());
		return -1;
	}
	/* POSIX lets a function pointer be read through a void * from dlsym */
	*(void **)&curl.global_init = dlsym(lib, "curl_global_init");
	*(void **)&curl.easy_init = dlsym(lib, "curl_easy_init");
	*(void **)&curl.easy_reset = dlsym(lib, "curl_easy_reset");
	*(void **)&curl.easy_setopt = dlsym(lib, "curl_easy_setopt");
	*(void **)&curl.easy_perform = dlsym(lib, "curl_easy_perform");
	*(void **)&curl.easy_getinfo = dlsym(lib, "curl_easy_getinfo");
	*(void **)&curl.easy_strerror = dlsym(lib, "curl_easy_strerror");
	*(void **)&curl.slist_append = dlsym(lib, "curl_slist_append");
	*(void **)&curl.slist_free_all = dlsym(lib, "curl_slist_free_all");
	if (curl.global_init == NULL || curl.easy_init == NULL || curl.easy_reset == NULL ||
	    curl.easy_setopt == NULL || curl.easy_perform == NULL || curl.easy_getinfo == NULL ||
	    curl.easy_strerror == NULL || curl.slist_append == NULL || curl.slist_free_all == NULL) {
		snprintf(why, whylen, "libcurl.so.4 lacks a function this program calls");
		return -1;
	}
	if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (handle = curl.easy_init()) == NULL) {
		snprintf(why, whylen, "cannot start libcurl");
		return -1;
	}
	return 0;
}

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
		if (curl_load(a->why, sizeof a->why) != 0)
			return -1;
	} else {
		curl.easy_reset(handle);	/* the settings go, the connections stay */
	}
	/* a call may not wait for a 100 Continue, and sends its own User-Agent */
	if ((headers = curl.slist_append(NULL, "Expect:")) == NULL)
		goto nomem;
	for (h = o->headers; h != NULL && *h != NULL; h++) {
		if ((more = curl.slist_append(headers, *h)) == NULL)
			goto nomem;
		headers = more;
	}
	curl.easy_setopt(handle, CURLOPT_URL, o->url);
	curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
	curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(handle, CURLOPT_TIMEOUT, o->timeout);
	curl.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
	curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
	curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, sink_write);
	curl.easy_setopt(handle, CURLOPT_WRITEDATA, &s);
	if (s.keep)
		curl.easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_answer);
	if (o->body != NULL) {
		curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
		curl.easy_setopt(handle, CURLOPT_POSTFIELDS, o->body);
	}
	if (o->method != NULL && strcmp(o->method, o->body != NULL ? "POST" : "GET") != 0)
		curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, o->method);
	rc = curl.easy_perform(handle);
	if (rc == CURLE_OK) {
		curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &a->status);
		ret = 0;
	} else if (s.over || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(a->why, sizeof a->why, "the answer is over %zu bytes", o->max_answer);
	} else {
		snprintf(a->why, sizeof a->why, "%s", *error != '\0' ? error : curl.easy_strerror(rc));
	}
	curl.slist_free_all(headers);
	if (ret != 0) {
		free(a->body);
		a->body = NULL;
		a->len = 0;
	}
	return ret;
nomem:
	curl.slist_free_all(headers);
	snprintf(a->why, sizeof a->why, "out of memory");
	return -1;
}
