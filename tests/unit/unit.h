/* unit.h: a minimal TAP producer for the C unit tests (scripts/test.sh counts the lines).
 *
 * Each test program's main() calls unit_start(), runs CHECK lines and ends in
 * `return unit_done();`, which prints the plan and exits non-zero when a check failed. */
#ifndef COURTS_UNIT_H
#define COURTS_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed;
static int unit_run;

/* CHECK(cond, name): one TAP line. */
#define CHECK(cond, name) do {						\
	unit_run++;							\
	if (cond)							\
		printf("ok - %s\n", (name));				\
	else {								\
		printf("not ok - %s (%s:%d)\n", (name), __FILE__, __LINE__); \
		unit_failed++;						\
	}								\
} while (0)

#define CHECK_STR(got, want, name) do {					\
	const char *g_ = (got), *w_ = (want);				\
	CHECK(g_ != NULL && strcmp(g_, w_) == 0, (name));		\
	if (g_ == NULL || strcmp(g_, w_) != 0)				\
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_); \
} while (0)

#define CHECK_INT(got, want, name) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	CHECK(g_ == w_, (name));					\
	if (g_ != w_)							\
		printf("#   got %lld, want %lld\n", g_, w_);		\
} while (0)

/* Line-buffers stdout: log lines the code under test writes on stderr then never land in
 * the middle of a TAP line when both go to one pipe. */
static inline void
unit_start(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/* Prints the TAP plan; the exit status of the program. */
static inline int
unit_done(void)
{
	printf("1..%d\n", unit_run);
	fflush(stdout);
	return unit_failed != 0;
}

#endif
