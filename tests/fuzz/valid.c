/* Fuzz target valid: the checks of common/valid.c, each on the input as text, the numbers
 * also on its first 8 bytes as a double. Dates are compared with the C library's calendar. */
#include <ctype.h>
#include <math.h>
#include <time.h>

#include "fuzz.h"
#include "valid.h"

static const char *const skills[] = { "BEGINNER", "INTERMEDIATE", "ADVANCED", "PROFESSIONAL",
    NULL };

/* The verdict of timegm()'s calendar on a YYYY-MM-DD text, -1 when not of that shape. */
static int
calendar_date(const char *s)
{
	struct tm tm, back;
	time_t t;
	int i;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
			return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = atoi(s + 5) - 1;
	tm.tm_mday = atoi(s + 8);
	tm.tm_hour = 12;
	if (atoi(s) < 1 || (t = timegm(&tm)) == (time_t)-1 || gmtime_r(&t, &back) == NULL)
		return 0;
	/* a day that does not exist is normalised into another one */
	return back.tm_year == atoi(s) - 1900 && back.tm_mon == atoi(s + 5) - 1 &&
	    back.tm_mday == atoi(s + 8);
}

static void
check_number(double v)
{
	long long cents;

	if (valid_latitude(v))
		FUZZ_CHECK(v >= -90 && v <= 90);
	if (valid_longitude(v))
		FUZZ_CHECK(v >= -180 && v <= 180);
	if (valid_money(v, &cents)) {
		FUZZ_CHECK(cents >= 0 && cents <= 1000000000000LL);
		FUZZ_CHECK(fabs((double)cents - v * 100.0) < 0.01);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s;
	double v;
	int secs = -1, cal;

	fuzz_arena_use();
	s = fuzz_text(data, size);
	if (valid_uuid(s))
		FUZZ_CHECK(strlen(s) == 36);
	if ((cal = calendar_date(s)) >= 0)
		FUZZ_CHECK(valid_date(s) == (cal == 1));
	else
		FUZZ_CHECK(!valid_date(s));
	if (valid_time(s, false, &secs))
		FUZZ_CHECK(secs >= 0 && secs < 86400);
	if (valid_time(s, true, &secs))
		FUZZ_CHECK(secs >= 0 && secs <= 86400);
	if (valid_currency(s))
		FUZZ_CHECK(strlen(s) == 3);
	if (!valid_not_blank(s))
		FUZZ_CHECK(strspn(s, " \t\n\v\f\r") == strlen(s));
	if (valid_enum(s, skills))
		FUZZ_CHECK(strlen(s) >= 8);
	FUZZ_CHECK(valid_day_of_week(s) >= 0 && valid_day_of_week(s) <= 7);
	if (valid_number(s, &v)) {
		FUZZ_CHECK(isfinite(v));
		check_number(v);
	}
	if (size >= sizeof v) {
		memcpy(&v, data, sizeof v);
		check_number(v);
	}
	return 0;
}
