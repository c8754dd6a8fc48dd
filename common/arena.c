/* arena: a chain of blocks; allocations bump a pointer, nothing is freed one by one. */
#include "arena.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 65536
#define ARENA_ALIGN 16

struct block {
	struct block	*next;
	size_t		 size;	/* usable bytes in data */
	size_t		 used;
	_Alignas(max_align_t) unsigned char data[];
};

struct arena {
	struct block	*head;	/* current block; older ones follow via next */
	struct block	*first;	/* kept across resets */
	size_t		 total;
};

static struct block *
block_new(size_t size)
{
	struct block *b = malloc(sizeof *b + size);

	if (b == NULL) {
		fputs("arena: out of memory\n", stderr);
		abort();
	}
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

struct arena *
arena_new(void)
{
	struct arena *a = calloc(1, sizeof *a);

	if (a == NULL)
		return NULL;
	a->first = a->head = block_new(ARENA_BLOCK);
	return a;
}

void
arena_reset(struct arena *a)
{
	struct block *b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		if (b != a->first)
			free(b);
	}
	a->head = a->first;
	a->first->next = NULL;
	a->first->used = 0;
	a->total = 0;
}

void
arena_free(struct arena *a)
{
	if (a == NULL)
		return;
	arena_reset(a);
	free(a->first);
	free(a);
}

void *
arena_alloc(struct arena *a, size_t size)
{
	struct block *b = a->head;
	size_t off = (b->used + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (size == 0)
		size = 1;
	if (off + size > b->size) {
		/* big allocations get a block of their own behind the current one */
		if (size > ARENA_BLOCK / 4) {
			struct block *big = block_new(size);

			big->used = size;
			big->next = b->next;
			b->next = big;
			a->total += size;
			memset(big->data, 0, size);
			return big->data;
		}
		b = block_new(ARENA_BLOCK);
		b->next = a->head;
		a->head = b;
		off = 0;
	}
	p = b->data + off;
	b->used = off + size;
	a->total += size;
	memset(p, 0, size);
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = arena_alloc(a, len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_vprintf(struct arena *a, const char *fmt, va_list ap)
{
	char buf[256], *p;
	va_list cp;
	int n;

	/* most strings fit the stack buffer: format once, copy once */
	va_copy(cp, ap);
	n = vsnprintf(buf, sizeof buf, fmt, cp);
	va_end(cp);
	if (n < 0)
		return arena_strdup(a, "");
	if ((size_t)n < sizeof buf)
		return arena_strndup(a, buf, (size_t)n);
	p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

size_t
arena_used(const struct arena *a)
{
	return a->total;
}
