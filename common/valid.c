/* valid: strict parsers for the text shapes of the API. */
#include "valid.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool
digits(const char *s, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int
num(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

bool
valid_uuid(const char *s)
{
	int i;

	if (s == NULL || strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

const char *
valid_date_problem(const char *s)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d, max;

	if (s == NULL || strlen(s) != 10 || s[4] != '-' || s[7] != '-' ||
	    !digits(s, 4) || !digits(s + 5, 2) || !digits(s + 8, 2))
		return VALID_DATE_SHAPE;
	y = num(s, 4);
	m = num(s + 5, 2);
	d = num(s + 8, 2);
	if (y < 1 || m < 1 || m > 12 || d < 1)
		return VALID_DATE_CALENDAR;
	max = mdays[m - 1];
	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		max = 29;
	return d <= max ? NULL : VALID_DATE_CALENDAR;
}

bool
valid_date(const char *s)
{
	return valid_date_problem(s) == NULL;
}

bool
valid_time(const char *s, bool allow_24, int *secs)
{
	int h, m, sec;

	if (s == NULL || strlen(s) != 8 || s[2] != ':' || s[5] != ':' ||
	    !digits(s, 2) || !digits(s + 3, 2) || !digits(s + 6, 2))
		return false;
	h = num(s, 2);
	m = num(s + 3, 2);
	sec = num(s + 6, 2);
	if (m > 59 || sec > 59)
		return false;
	if (h > 23 && !(allow_24 && h == 24 && m == 0 && sec == 0))
		return false;
	if (secs != NULL)
		*secs = h * 3600 + m * 60 + sec;
	return true;
}

bool
valid_currency(const char *s)
{
	return s != NULL && strlen(s) == 3 && isupper((unsigned char)s[0]) &&
	    isupper((unsigned char)s[1]) && isupper((unsigned char)s[2]) &&
	    (unsigned char)s[0] < 0x80 && (unsigned char)s[1] < 0x80 && (unsigned char)s[2] < 0x80;
}

bool
valid_not_blank(const char *s)
{
	if (s == NULL)
		return false;
	for (; *s != '\0'; s++)
		if (!isspace((unsigned char)*s))
			return true;
	return false;
}

bool
valid_enum(const char *s, const char *const *allowed)
{
	if (s == NULL)
		return false;
	for (; *allowed != NULL; allowed++)
		if (strcmp(s, *allowed) == 0)
			return true;
	return false;
}

bool
valid_number(const char *s, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return false;
	v = strtod(s, &end);
	if (*end != '\0' || !isfinite(v))
		return false;
	*out = v;
	return true;
}

bool
valid_latitude(double v)
{
	return isfinite(v) && v >= -90.0 && v <= 90.0;
}

bool
valid_longitude(double v)
{
	return isfinite(v) && v >= -180.0 && v <= 180.0;
}

bool
valid_money(double v, long long *cents)
{
	double c;

	if (!isfinite(v) || v < 0 || v >= 1e10)
		return false;
	c = round(v * 100.0);
	/* 12.345 is refused; 0.1 + 0.2 style binary noise is not */
	if (fabs(v * 100.0 - c) > 1e-6)
		return false;
	*cents = (long long)c;
	return true;
}

int
valid_day_of_week(const char *s)
{
	static const char *const days[] = { "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY",
	    "FRIDAY", "SATURDAY", "SUNDAY" };
	int i;

	for (i = 0; s != NULL && i < 7; i++)
		if (strcmp(s, days[i]) == 0)
			return i + 1;
	return 0;
}
