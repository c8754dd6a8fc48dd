/* unit.h: a minimal TAP producer for the C unit tests (scripts/test.sh counts the lines). */
#ifndef COURTS_UNIT_H
#define COURTS_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed;

/* CHECK(cond, name): one TAP line. */
#define CHECK(cond, name) do {						\
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

#endif
