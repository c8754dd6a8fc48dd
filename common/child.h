/* child: runs a helper program (curl, for the cron programs) and talks to it through pipes.
 * Not for the request path: the CGI programs never start a process. */
#ifndef COURTS_CHILD_H
#define COURTS_CHILD_H

#include <stddef.h>

/* Runs argv[0] (looked up in PATH) with argv, writes the inlen bytes of in to its standard
 * input (none when in is NULL: it reads end of file), and keeps what it writes on standard
 * output in out (at most outsize - 1 bytes, NUL-terminated; the rest is read and dropped).
 * Standard error is left to the caller's. Returns the exit status (128 + the signal for a
 * program killed by one), or -1 when it could not be started (errno says why). */
int child_run(char *const argv[], const char *in, size_t inlen, char *out, size_t outsize);

#endif
