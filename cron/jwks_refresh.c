/* jwks-refresh: fetches the identity provider's JWKS document (JWT_JWKS_URL) and replaces
 * JWT_JWKS_FILE with it when it parses and holds at least one usable signing key.
 *
 *   JWT_JWKS_URL=https://idp.example.com/.well-known/jwks.json \
 *   JWT_JWKS_FILE=/etc/courts/jwks.json  build/cron/jwks-refresh
 *
 * The document is fetched (common/outbound.h; https, or http to this machine only) within
 * JWKS_FETCH_TIMEOUT seconds (default 10), checked with the service's own parser
 * (common/jwks.c), written to a temporary file beside JWT_JWKS_FILE with the old file's mode
 * (0644 for a first one) and renamed over it: a reader sees the old document or the new one, never a part. The
 * programs pick up the new file within a second. An unchanged document is left alone.
 *
 * Exit status: 0 when the file holds the provider's current keys (or JWT_JWKS_URL is unset:
 * nothing to do), 1 when the fetch or the check failed (the old file is untouched; one line on
 * stderr says why), 2 for a usage error.
 *
 *   build/cron/jwks-refresh --check FILE
 *
 * checks a JWKS file the way the programs read it: says how many usable keys it holds and
 * exits 0, or says why none and exits 1 (`make run` checks JWT_JWKS_FILE with it).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jwks.h"
#include "outbound.h"

#define DOC_MAX	(1024 * 1024)

/* the whole file at path (at most DOC_MAX bytes) in a malloc'd buffer; NULL on failure */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;

	if (f == NULL)
		return NULL;
	if ((buf = malloc(DOC_MAX + 1)) != NULL) {
		*len = fread(buf, 1, DOC_MAX + 1, f);
		if (ferror(f) || *len > DOC_MAX) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* http only to this machine: keys fetched in clear text from afar could be anyone's */
static int
url_allowed(const char *url)
{
	static const char *const local[] = { "http://127.0.0.1:", "http://127.0.0.1/",
	    "http://localhost:", "http://localhost/", "http://[::1]:", "http://[::1]/" };
	size_t i;

	if (strncmp(url, "https://", 8) == 0)
		return 1;
	for (i = 0; i < sizeof local / sizeof local[0]; i++)
		if (strncmp(url, local[i], strlen(local[i])) == 0)
			return 1;
	return 0;
}

/* GETs URL within timeout seconds: the document (malloc'd, at most DOC_MAX bytes) when it
 * answered 2xx, else NULL with the reason in why */
static char *
fetch(const char *url, const char *timeout, size_t *len, char *why, size_t whysize)
{
	struct outbound call = { "GET", url, NULL, NULL, 0, strtol(timeout, NULL, 10), DOC_MAX };
	struct outbound_answer a;

	if (outbound_call(&call, &a) != 0) {
		snprintf(why, whysize, "%s", a.why);
		return NULL;
	}
	if (a.status < 200 || a.status > 299) {
		snprintf(why, whysize, "HTTP %ld", a.status);
		free(a.body);
		return NULL;
	}
	*len = a.len;
	return a.body != NULL ? a.body : calloc(1, 1);
}

/* Writes len bytes of doc to a new file beside file, with mode, and renames it over file:
 * a reader sees the old document or the new one, never a part. 0, or -1 with errno. */
static int
replace(const char *file, const char *doc, size_t len, mode_t mode)
{
	char tmp[4096], dir[4096];
	int fd, saved, ok;

	snprintf(dir, sizeof dir, "%s", file);
	if (snprintf(tmp, sizeof tmp, "%s/.jwks-refresh.XXXXXX", dirname(dir)) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(tmp)) < 0)
		return -1;
	ok = write(fd, doc, len) == (ssize_t)len && fchmod(fd, mode) == 0;
	saved = errno;
	if (close(fd) != 0 && ok) {
		ok = 0;
		saved = errno;
	}
	if (ok && rename(tmp, file) == 0)
		return 0;
	if (ok)
		saved = errno;
	unlink(tmp);
	errno = saved;
	return -1;
}

/* --check FILE: the programs' verdict on a JWKS file */
static int
check(const char *file)
{
	const char *why = NULL;
	struct jwks set;
	size_t len = 0;
	char *doc;
	int n;

	if ((doc = slurp(file, &len)) == NULL) {
		fprintf(stderr, "%s cannot be read or is over 1 MiB\n", file);
		return 1;
	}
	n = jwks_parse(doc, len, &set, &why);
	free(doc);
	if (n <= 0) {
		fprintf(stderr, "%s %s\n", file, why);
		return 1;
	}
	jwks_free(&set);
	printf("%s holds %d usable signing key%s\n", file, n, n == 1 ? "" : "s");
	return 0;
}

int
main(int argc, char **argv)
{
	const char *url = getenv("JWT_JWKS_URL"), *file = getenv("JWT_JWKS_FILE");
	const char *timeout = getenv("JWKS_FETCH_TIMEOUT"), *why = NULL;
	char failed[512], *doc = NULL, *old = NULL;
	size_t len = 0, old_len = 0;
	struct jwks set;
	struct stat st;
	mode_t mode = 0644;
	int n, rc = 1;

	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: jwks-refresh (settings in JWT_JWKS_URL, JWT_JWKS_FILE, "
		    "JWKS_FETCH_TIMEOUT) | jwks-refresh --check FILE\n");
		return 2;
	}
	if (url == NULL || *url == '\0')
		return 0;
	if (file == NULL || *file == '\0') {
		fprintf(stderr, "jwks-refresh: JWT_JWKS_URL is set but JWT_JWKS_FILE is not\n");
		return 2;
	}
	if (!url_allowed(url)) {
		fprintf(stderr, "jwks-refresh: JWT_JWKS_URL %s must be https (http only to this "
		    "machine)\n", url);
		return 2;
	}
	if (timeout == NULL || *timeout == '\0' || strspn(timeout, "0123456789") != strlen(timeout))
		timeout = "10";
	if ((doc = fetch(url, timeout, &len, failed, sizeof failed)) == NULL) {
		fprintf(stderr, "jwks-refresh: fetching %s failed (%s); %s is unchanged\n", url,
		    failed, file);
		goto out;
	}
	if ((n = jwks_parse(doc, len, &set, &why)) <= 0) {
		fprintf(stderr, "jwks-refresh: the document from %s %s; %s is unchanged\n", url, why,
		    file);
		goto out;
	}
	jwks_free(&set);
	if ((old = slurp(file, &old_len)) != NULL && old_len == len && memcmp(old, doc, len) == 0) {
		rc = 0;		/* the same keys: the file and its mtime stay as they are */
		goto out;
	}
	if (stat(file, &st) == 0)
		mode = st.st_mode & 07777;
	if (replace(file, doc, len, mode) != 0) {
		fprintf(stderr, "jwks-refresh: cannot replace %s: %s\n", file, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(doc);
	free(old);
	return rc;
}
