/* outbound: the HTTP requests the service makes to others (the payment provider, the
 * operator's webhook, the identity provider's keys), with libcurl in the process: no program
 * is started for a call, and one handle is kept per process, so that its connection to a host
 * is used again by the next call there (a FastCGI process's next request, the cron programs'
 * runs of calls). libcurl is loaded at the first call: a program that makes none never
 * loads it.
 */
#ifndef COURTS_OUTBOUND_H
#define COURTS_OUTBOUND_H

#include <stdbool.h>
#include <stddef.h>

struct outbound {
	const char		*method;	/* "GET" (NULL too), "POST", ... */
	const char		*url;		/* http:// or https://; no redirect is followed */
	const char *const	*headers;	/* "Name: value" lines, NULL-terminated, or NULL */
	const char		*body;		/* sent as it is, or NULL */
	size_t			 body_len;
	long			 timeout;	/* seconds for the whole call */
	size_t			 max_answer;	/* octets of the answer kept at most (a longer one
						   fails the call); 0: the answer is not kept */
};

struct outbound_answer {
	long	 status;		/* the HTTP status, 0 when no answer came */
	char	*body;			/* what was kept, NUL-terminated; free with free() */
	size_t	 len;
	char	 why[256];		/* why no answer came, as libcurl says it */
};

/* Makes the call o. 0 when an answer came, whatever its status (a->status); -1 when none did
 * (a refused connection, a timeout, an answer over o->max_answer), with a->why. */
int outbound_call(const struct outbound *o, struct outbound_answer *a);

#endif
