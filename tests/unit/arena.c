/* arena: alignment, zeroing, big allocations, resets, printf and string copies.
 * Run under valgrind too: every block must be released by arena_free(). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "arena.h"
#include "unit.h"

/* "aligned for any type" (arena.h) */
#define MAX_ALIGN _Alignof(max_align_t)

static bool
all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

static void
test_alignment(struct arena *a)
{
	static const size_t sizes[] = { 1, 3, 7, 8, 15, 16, 17, 31, 100, 1000, 4095 };
	bool aligned = true, distinct = true;
	unsigned char *prev = NULL, *p;
	size_t i, prev_size = 0;

	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		p = arena_alloc(a, sizes[i]);
		if ((uintptr_t)p % MAX_ALIGN != 0)
			aligned = false;
		if (prev != NULL && p < prev + prev_size && p + sizes[i] > prev)
			distinct = false;
		prev = p;
		prev_size = sizes[i];
	}
	CHECK(aligned, "alloc: every pointer is aligned for any type (max_align_t)");
	CHECK(distinct, "alloc: consecutive allocations do not overlap");
	p = arena_alloc(a, 0);
	CHECK(p != NULL && (uintptr_t)p % MAX_ALIGN == 0,
	    "alloc: size 0 gives a usable aligned pointer");
}

static void
test_zeroing(struct arena *a)
{
	unsigned char *p;
	bool zero = true;
	int round;

	/* dirty memory, reset, and allocate the same bytes again: they must come back zeroed */
	for (round = 0; round < 3; round++) {
		p = arena_alloc(a, 4096);
		if (!all_zero(p, 4096))
			zero = false;
		memset(p, 0xAB, 4096);
		arena_reset(a);
	}
	CHECK(zero, "alloc: memory is zeroed, also when reused after a reset");
}

static void
test_big(struct arena *a)
{
	unsigned char *small1, *big, *small2, *huge;
	bool fill_ok = true;
	size_t i;

	arena_reset(a);
	small1 = arena_alloc(a, 32);
	memset(small1, 0x11, 32);
	big = arena_alloc(a, 200000);
	CHECK(big != NULL && (uintptr_t)big % MAX_ALIGN == 0, "big: 200000 bytes are aligned");
	CHECK(all_zero(big, 200000), "big: 200000 bytes are zeroed");
	memset(big, 0x22, 200000);
	small2 = arena_alloc(a, 32);
	memset(small2, 0x33, 32);
	for (i = 0; i < 32; i++)
		if (small1[i] != 0x11 || small2[i] != 0x33)
			fill_ok = false;
	for (i = 0; i < 200000; i++)
		if (big[i] != 0x22)
			fill_ok = false;
	CHECK(fill_ok, "big: a big block and the small ones around it do not overlap");
	CHECK(arena_used(a) >= 200000 + 64, "big: arena_used counts big allocations");
	huge = arena_alloc(a, 8u << 20);
	CHECK(huge != NULL && all_zero(huge, 8u << 20), "big: 8 MiB allocation is zeroed");
	huge[(8u << 20) - 1] = 1;
}

static void
test_many_blocks(struct arena *a)
{
	unsigned char *ptrs[400];
	bool ok = true;
	size_t i, j;

	arena_reset(a);
	/* 400 x 1000 bytes span several 64 KiB blocks; each keeps its own content */
	for (i = 0; i < 400; i++) {
		ptrs[i] = arena_alloc(a, 1000);
		memset(ptrs[i], (int)(i & 0xff), 1000);
	}
	for (i = 0; i < 400; i++)
		for (j = 0; j < 1000; j++)
			if (ptrs[i][j] != (unsigned char)(i & 0xff))
				ok = false;
	CHECK(ok, "blocks: allocations across many blocks keep their contents");
	CHECK(arena_used(a) >= 400000, "blocks: arena_used counts every allocation");
}

static void
test_reset(struct arena *a)
{
	char *s;
	int i;
	bool ok = true;

	for (i = 0; i < 50; i++) {
		arena_alloc(a, 70000);
		arena_alloc(a, 5000);
		arena_reset(a);
		if (arena_used(a) != 0)
			ok = false;
	}
	CHECK(ok, "reset: arena_used is 0 after every reset");
	s = arena_strdup(a, "still working");
	CHECK_STR(s, "still working", "reset: the arena keeps working after many resets");
	arena_reset(NULL);
	CHECK(1, "reset: arena_reset(NULL) is harmless");
}

static void
test_strings(struct arena *a)
{
	char long_src[3000], *s;
	const char *src = "hello world";

	arena_reset(a);
	s = arena_strdup(a, src);
	CHECK_STR(s, "hello world", "strdup: copies the string");
	CHECK(s != src, "strdup: the copy is arena memory");
	CHECK_STR(arena_strdup(a, ""), "", "strdup: empty string");
	CHECK_STR(arena_strndup(a, src, 5), "hello", "strndup: stops after n bytes");
	CHECK_STR(arena_strndup(a, src, 100), "hello world", "strndup: n beyond the end copies all");
	CHECK_STR(arena_strndup(a, src, 0), "", "strndup: n 0 gives an empty string");
	/* strndup must not read past the terminator even when n is larger */
	CHECK_STR(arena_strndup(a, "ab\0cd", 5), "ab", "strndup: stops at the terminator");
	memset(long_src, 'x', sizeof long_src - 1);
	long_src[sizeof long_src - 1] = '\0';
	s = arena_strdup(a, long_src);
	CHECK(s != NULL && strlen(s) == sizeof long_src - 1 && s[0] == 'x',
	    "strdup: 2999 characters copied whole");
}

static void
test_printf(struct arena *a)
{
	char *s;
	char big[100001];

	arena_reset(a);
	CHECK_STR(arena_printf(a, "%s-%d-%05.2f", "ab", 42, 3.14159), "ab-42-03.14",
	    "printf: formats strings and numbers");
	CHECK_STR(arena_printf(a, "%s", ""), "", "printf: empty result");
	CHECK_STR(arena_printf(a, "%lld.%02lld", 12LL, 5LL), "12.05", "printf: money shape");
	/* around the 256-byte stack buffer arena_vprintf tries first */
	memset(big, 'z', 300);
	big[300] = '\0';
	s = arena_printf(a, "%.254s!", big);
	CHECK(strlen(s) == 255 && s[254] == '!', "printf: 255 characters");
	s = arena_printf(a, "%.255s!", big);
	CHECK(strlen(s) == 256 && s[255] == '!' && s[0] == 'z', "printf: 256 characters");
	s = arena_printf(a, "%.256s!", big);
	CHECK(strlen(s) == 257 && s[256] == '!' && s[255] == 'z', "printf: 257 characters");
	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	s = arena_printf(a, "<%s>", big);
	CHECK(s != NULL && strlen(s) == 100002 && s[0] == '<' && s[100001] == '>',
	    "printf: 100002 characters (larger than a block)");
}

int
main(void)
{
	struct arena *a;

	unit_start();
	a = arena_new();
	CHECK(a != NULL, "arena_new gives an arena");
	if (a == NULL)
		return unit_done();
	CHECK_INT(arena_used(a), 0, "a new arena has used nothing");
	test_alignment(a);
	test_zeroing(a);
	test_big(a);
	test_many_blocks(a);
	test_reset(a);
	test_strings(a);
	test_printf(a);
	arena_free(a);
	arena_free(NULL);
	CHECK(1, "arena_free(NULL) is harmless");
	return unit_done();
}
