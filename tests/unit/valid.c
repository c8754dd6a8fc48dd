/* valid: every text-shape check of common/valid.h, with its edge cases. */
#include <math.h>
#include <stdbool.h>

#include "unit.h"
#include "valid.h"

static void
test_uuid(void)
{
	CHECK(valid_uuid("123e4567-e89b-12d3-a456-426614174000"), "uuid: lower case accepted");
	CHECK(valid_uuid("123E4567-E89B-12D3-A456-426614174000"), "uuid: upper case accepted");
	CHECK(valid_uuid("123e4567-E89B-12d3-A456-426614174000"), "uuid: mixed case accepted");
	CHECK(valid_uuid("00000000-0000-0000-0000-000000000000"), "uuid: nil uuid accepted");
	CHECK(!valid_uuid("123e4567-e89b-12d3-a456-42661417400"), "uuid: 35 characters refused");
	CHECK(!valid_uuid("123e4567-e89b-12d3-a456-4266141740000"), "uuid: 37 characters refused");
	CHECK(!valid_uuid("123e4567e89b12d3a456426614174000"), "uuid: without dashes refused");
	CHECK(!valid_uuid("123e4567-e89b-12d3-a456_426614174000"), "uuid: underscore for dash refused");
	CHECK(!valid_uuid("123e456-7e89b-12d3-a456-426614174000"), "uuid: dash misplaced refused");
	CHECK(!valid_uuid("123e4567-e89b-12d3-a456-42661417400g"), "uuid: non-hex letter refused");
	CHECK(!valid_uuid("{23e4567-e89b-12d3-a456-42661417400}"), "uuid: braces refused");
	CHECK(!valid_uuid(" 23e4567-e89b-12d3-a456-426614174000"), "uuid: leading space refused");
	CHECK(!valid_uuid(""), "uuid: empty refused");
	CHECK(!valid_uuid(NULL), "uuid: NULL refused");
}

static void
test_date(void)
{
	CHECK(valid_date("2024-02-29"), "date: 2024-02-29 (leap year) accepted");
	CHECK(!valid_date("2023-02-29"), "date: 2023-02-29 refused");
	CHECK(!valid_date("1900-02-29"), "date: 1900-02-29 (century, not leap) refused");
	CHECK(valid_date("2000-02-29"), "date: 2000-02-29 (400-year leap) accepted");
	CHECK(valid_date("2023-02-28"), "date: 2023-02-28 accepted");
	CHECK(!valid_date("2024-02-30"), "date: 2024-02-30 refused");
	CHECK(valid_date("2024-12-31"), "date: 2024-12-31 accepted");
	CHECK(valid_date("2024-01-01"), "date: 2024-01-01 accepted");
	CHECK(!valid_date("2024-13-01"), "date: month 13 refused");
	CHECK(!valid_date("2024-00-10"), "date: month 00 refused");
	CHECK_STR(valid_date_problem("2026-02-30"), "is not a date on the calendar",
	    "date: a day the month lacks is said to be no date on the calendar");
	CHECK_STR(valid_date_problem("2026-13-01"), "is not a date on the calendar",
	    "date: so is month 13");
	CHECK_STR(valid_date_problem("2026-2-3"), "must be a date YYYY-MM-DD",
	    "date: a text of another shape is told the shape");
	CHECK(valid_date_problem("2028-02-29") == NULL, "date: no problem with a real day");
	CHECK(!valid_date("2024-05-00"), "date: day 00 refused");
	CHECK(!valid_date("2024-04-31"), "date: 31 April refused");
	CHECK(valid_date("2024-04-30"), "date: 30 April accepted");
	CHECK(!valid_date("2024-05-32"), "date: day 32 refused");
	CHECK(!valid_date("0000-01-01"), "date: year 0 refused");
	CHECK(!valid_date("2024-5-01"), "date: one-digit month refused");
	CHECK(!valid_date("2024/05/01"), "date: slashes refused");
	CHECK(!valid_date("2024-05-01T00"), "date: trailing text refused");
	CHECK(!valid_date("20240501"), "date: compact form refused");
	CHECK(!valid_date("2024-0a-01"), "date: letter refused");
	CHECK(!valid_date(""), "date: empty refused");
	CHECK(!valid_date(NULL), "date: NULL refused");
}

static void
test_time(void)
{
	int secs = -1;

	CHECK(valid_time("00:00:00", false, &secs) && secs == 0, "time: 00:00:00 is 0 s");
	CHECK(valid_time("23:59:59", false, &secs) && secs == 86399, "time: 23:59:59 is 86399 s");
	CHECK(valid_time("08:30:15", false, &secs) && secs == 8 * 3600 + 30 * 60 + 15,
	    "time: 08:30:15 in seconds");
	CHECK(!valid_time("24:00:00", false, NULL), "time: 24:00:00 refused without allow_24");
	CHECK(valid_time("24:00:00", true, &secs) && secs == 86400,
	    "time: 24:00:00 accepted with allow_24 as 86400 s");
	CHECK(!valid_time("24:00:01", true, NULL), "time: 24:00:01 refused even with allow_24");
	CHECK(!valid_time("24:01:00", true, NULL), "time: 24:01:00 refused even with allow_24");
	CHECK(!valid_time("25:00:00", true, NULL), "time: 25:00:00 refused");
	CHECK(!valid_time("23:60:00", false, NULL), "time: minute 60 refused");
	CHECK(!valid_time("23:00:60", false, NULL), "time: second 60 refused");
	CHECK(!valid_time("8:00:00", false, NULL), "time: one-digit hour refused");
	CHECK(!valid_time("08:00", false, NULL), "time: HH:MM without seconds refused");
	CHECK(!valid_time("08-00-00", false, NULL), "time: dashes refused");
	CHECK(!valid_time("08:00:00Z", false, NULL), "time: trailing zone refused");
	CHECK(!valid_time("", true, NULL), "time: empty refused");
	CHECK(!valid_time(NULL, true, NULL), "time: NULL refused");
	secs = 42;
	CHECK(!valid_time("99:99:99", true, &secs) && secs == 42,
	    "time: refused value leaves *secs alone");
}

static void
test_currency(void)
{
	CHECK(valid_currency("EUR"), "currency: EUR accepted");
	CHECK(valid_currency("USD"), "currency: USD accepted");
	CHECK(!valid_currency("eur"), "currency: lower case refused");
	CHECK(!valid_currency("Eur"), "currency: mixed case refused");
	CHECK(!valid_currency("EU"), "currency: two letters refused");
	CHECK(!valid_currency("EURO"), "currency: four letters refused");
	CHECK(!valid_currency("E1R"), "currency: digit refused");
	CHECK(!valid_currency("\xc3\x89UR"), "currency: non-ASCII letter refused");
	CHECK(!valid_currency("\xc9UR"), "currency: Latin-1 byte refused");
	CHECK(!valid_currency(" EU"), "currency: space refused");
	CHECK(!valid_currency(""), "currency: empty refused");
	CHECK(!valid_currency(NULL), "currency: NULL refused");
}

static void
test_blank(void)
{
	CHECK(valid_not_blank("a"), "not_blank: one letter accepted");
	CHECK(valid_not_blank("  x  "), "not_blank: padded text accepted");
	CHECK(!valid_not_blank(""), "not_blank: empty refused");
	CHECK(!valid_not_blank("   "), "not_blank: spaces refused");
	CHECK(!valid_not_blank("\t"), "not_blank: tab refused");
	CHECK(!valid_not_blank(" \t\r\n\v\f"), "not_blank: mixed white space refused");
	CHECK(!valid_not_blank(NULL), "not_blank: NULL refused");
}

static void
test_enum(void)
{
	static const char *const formats[] = { "TWO_VS_TWO", "ONE_VS_ONE", "AMERICANO", NULL };
	static const char *const none[] = { NULL };

	CHECK(valid_enum("TWO_VS_TWO", formats), "enum: first entry accepted");
	CHECK(valid_enum("AMERICANO", formats), "enum: last entry accepted");
	CHECK(!valid_enum("two_vs_two", formats), "enum: case differs refused");
	CHECK(!valid_enum("TWO_VS_TW", formats), "enum: prefix refused");
	CHECK(!valid_enum("TWO_VS_TWO ", formats), "enum: trailing space refused");
	CHECK(!valid_enum("", formats), "enum: empty refused");
	CHECK(!valid_enum(NULL, formats), "enum: NULL refused");
	CHECK(!valid_enum("X", none), "enum: empty list refuses everything");
}

static void
test_number(void)
{
	double v = -1;

	CHECK(valid_number("1e3", &v) && v == 1000.0, "number: 1e3 is 1000");
	CHECK(valid_number("-3.5", &v) && v == -3.5, "number: -3.5 accepted");
	CHECK(valid_number("0", &v) && v == 0.0, "number: 0 accepted");
	CHECK(valid_number("40.4168", &v) && fabs(v - 40.4168) < 1e-12, "number: 40.4168 accepted");
	v = 7;
	CHECK(!valid_number("", &v) && v == 7, "number: empty refused, out untouched");
	CHECK(!valid_number(" 1", &v), "number: leading space refused");
	CHECK(!valid_number("1 ", &v), "number: trailing space refused");
	CHECK(!valid_number("1x", &v), "number: trailing letter refused");
	CHECK(!valid_number("nan", &v), "number: nan refused");
	CHECK(!valid_number("NaN", &v), "number: NaN refused");
	CHECK(!valid_number("inf", &v), "number: inf refused");
	CHECK(!valid_number("-infinity", &v), "number: -infinity refused");
	CHECK(!valid_number("1e999", &v), "number: overflow to infinity refused");
	CHECK(!valid_number("abc", &v), "number: letters refused");
	CHECK(!valid_number("\t2", &v), "number: leading tab refused");
	CHECK(!valid_number(NULL, &v), "number: NULL refused");
}

static void
test_geo(void)
{
	CHECK(valid_latitude(90.0) && valid_latitude(-90.0) && valid_latitude(0.0),
	    "latitude: -90, 0, 90 accepted");
	CHECK(!valid_latitude(90.0000001) && !valid_latitude(-90.5), "latitude: beyond 90 refused");
	CHECK(!valid_latitude(NAN) && !valid_latitude(INFINITY), "latitude: nan and inf refused");
	CHECK(valid_longitude(180.0) && valid_longitude(-180.0) && valid_longitude(-3.7038),
	    "longitude: -180, 180, -3.7038 accepted");
	CHECK(!valid_longitude(180.01) && !valid_longitude(-181.0),
	    "longitude: beyond 180 refused");
	CHECK(!valid_longitude(NAN) && !valid_longitude(-INFINITY),
	    "longitude: nan and -inf refused");
}

static void
test_money(void)
{
	long long c = -1;

	CHECK(valid_money(12.5, &c) && c == 1250, "money: 12.5 is 1250 cents");
	CHECK(valid_money(20.0, &c) && c == 2000, "money: 20 is 2000 cents");
	CHECK(valid_money(0.01, &c) && c == 1, "money: 0.01 is 1 cent");
	CHECK(valid_money(0.0, &c) && c == 0, "money: 0 is 0 cents");
	CHECK(valid_money(0.1 + 0.2, &c) && c == 30, "money: 0.1 + 0.2 is 30 cents");
	CHECK(valid_money(19.99, &c) && c == 1999, "money: 19.99 is 1999 cents");
	CHECK(valid_money(1.15, &c) && c == 115, "money: 1.15 (binary 1.149999...) is 115 cents");
	CHECK(valid_money(9999999999.99, &c) && c == 999999999999LL,
	    "money: 9999999999.99 is the largest amount");
	c = 5;
	CHECK(!valid_money(12.345, &c) && c == 5, "money: 12.345 refused, cents untouched");
	CHECK(!valid_money(0.001, &c), "money: 0.001 refused");
	CHECK(!valid_money(1e10, &c), "money: 1e10 refused");
	CHECK(!valid_money(-1.0, &c), "money: negative refused");
	CHECK(!valid_money(-0.01, &c), "money: -0.01 refused");
	CHECK(!valid_money(NAN, &c), "money: nan refused");
	CHECK(!valid_money(INFINITY, &c), "money: inf refused");
}

static void
test_days(void)
{
	static const char *const days[] = { "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY",
	    "FRIDAY", "SATURDAY", "SUNDAY" };
	char name[64];
	int i;

	for (i = 0; i < 7; i++) {
		snprintf(name, sizeof name, "day: %s is %d", days[i], i + 1);
		CHECK_INT(valid_day_of_week(days[i]), i + 1, name);
	}
	CHECK_INT(valid_day_of_week("monday"), 0, "day: lower case is unknown");
	CHECK_INT(valid_day_of_week("MON"), 0, "day: abbreviation is unknown");
	CHECK_INT(valid_day_of_week("MONDAYS"), 0, "day: longer name is unknown");
	CHECK_INT(valid_day_of_week(""), 0, "day: empty is unknown");
	CHECK_INT(valid_day_of_week(NULL), 0, "day: NULL is unknown");
}

int
main(void)
{
	unit_start();
	test_uuid();
	test_date();
	test_time();
	test_currency();
	test_blank();
	test_enum();
	test_number();
	test_geo();
	test_money();
	test_days();
	return unit_done();
}
