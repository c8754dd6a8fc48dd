/* utf8: RFC 3629's UTF-8, checked and repaired. */
#include <stdbool.h>

#include "arena.h"
#include "utf8.h"
#include "unit.h"

static struct arena *arena;

/* utf8_char over the whole of s. */
static size_t
char_len(const char *s)
{
	return utf8_char((const unsigned char *)s, strlen(s));
}

static const char *
repaired(const char *s)
{
	size_t n;

	return utf8_repaired(arena, s, strlen(s), &n);
}

static void
test_char(void)
{
	CHECK_INT(char_len("a"), 1, "char: ASCII is one octet");
	CHECK_INT(char_len("\xc3\xa9"), 2, "char: U+00E9 is two");
	CHECK_INT(char_len("\xe2\x82\xac"), 3, "char: U+20AC is three");
	CHECK_INT(char_len("\xf0\x9f\x8e\xbe"), 4, "char: U+1F3BE is four");
	CHECK_INT(char_len("\xf4\x8f\xbf\xbf"), 4, "char: U+10FFFF, the last, is four");
	CHECK_INT(char_len("\xef\xbf\xbd"), 3, "char: U+FFFD itself");
	CHECK_INT(char_len("\x80"), 0, "char: a continuation octet starts nothing");
	CHECK_INT(char_len("\xc0\x80"), 0, "char: C0 80, an overlong NUL");
	CHECK_INT(char_len("\xc1\xbf"), 0, "char: C1, overlong ASCII");
	CHECK_INT(char_len("\xe0\x80\xaf"), 0, "char: E0 80 AF, an overlong '/'");
	CHECK_INT(char_len("\xe0\xa0\x80"), 3, "char: E0 A0 80, U+0800, the first of three");
	CHECK_INT(char_len("\xf0\x80\x80\xaf"), 0, "char: F0 80 80 AF, an overlong '/'");
	CHECK_INT(char_len("\xed\xa0\x80"), 0, "char: U+D800, a surrogate");
	CHECK_INT(char_len("\xed\xbf\xbf"), 0, "char: U+DFFF, a surrogate");
	CHECK_INT(char_len("\xed\x9f\xbf"), 3, "char: U+D7FF, just before them");
	CHECK_INT(char_len("\xf4\x90\x80\x80"), 0, "char: U+110000, past the last");
	CHECK_INT(char_len("\xf5\x80\x80\x80"), 0, "char: F5, never UTF-8");
	CHECK_INT(char_len("\xff"), 0, "char: FF, never UTF-8");
	CHECK_INT(char_len("\xe2\x82"), 0, "char: a character cut short");
	CHECK_INT(char_len("\xe2\x28\xa1"), 0, "char: a lead without its continuation");
	CHECK_INT(utf8_char((const unsigned char *)"\xc3\xa9", 1), 0,
	    "char: only the octets left are read");
}

static void
test_repaired(void)
{
	const char *ok = "Plaza Mayor, caf\xc3\xa9 \xf0\x9f\x8e\xbe";
	size_t n;

	CHECK(utf8_repaired(arena, ok, strlen(ok), &n) == ok && n == strlen(ok),
	    "repaired: valid text is given back itself");
	CHECK_INT(utf8_invalid_at(ok, strlen(ok)), strlen(ok), "invalid_at: none in valid text");
	CHECK_INT(utf8_invalid_at("ab\xff" "c", 4), 2, "invalid_at: the first octet of none");
	CHECK_STR(repaired("/api/\xff"), "/api/\xef\xbf\xbd", "repaired: FF becomes U+FFFD");
	CHECK_STR(repaired("\xc0\x80x"), "\xef\xbf\xbd\xef\xbf\xbdx",
	    "repaired: each octet of an overlong form is replaced");
	CHECK_STR(repaired("a\xe2\x82"), "a\xef\xbf\xbd\xef\xbf\xbd",
	    "repaired: a character cut short at the end");
	CHECK_STR(repaired("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
	    "repaired: a surrogate's three octets");
	CHECK_STR(repaired("\"\xff\":1"), "\"\xef\xbf\xbd\":1",
	    "repaired: JSON's own punctuation is never touched");
	utf8_repaired(arena, "\xff\xff", 2, &n);
	CHECK_INT(n, 6, "repaired: the length of the copy");
}

int
main(void)
{
	unit_start();
	if ((arena = arena_new()) == NULL)
		return 2;
	test_char();
	test_repaired();
	arena_free(arena);
	return unit_done();
}
