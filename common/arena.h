/* arena: per-request memory, released all at once when the request ends. */
#ifndef COURTS_ARENA_H
#define COURTS_ARENA_H

#include <stdarg.h>
#include <stddef.h>

struct arena;

/* New empty arena, or NULL when out of memory. Release with arena_free(). */
struct arena *arena_new(void);

/* Releases the arena and everything allocated from it; NULL is fine. */
void arena_free(struct arena *a);

/* Releases every allocation but keeps the first block for the next request. */
void arena_reset(struct arena *a);

/* size bytes aligned for any type, zeroed; aborts the process when memory is gone
 * (a request cannot answer sensibly without memory, and the driver has a last-resort 500). */
void *arena_alloc(struct arena *a, size_t size);

/* Copies of strings, owned by the arena. arena_strndup copies at most n bytes. */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* printf into arena memory. Never used to build SQL. */
char *arena_printf(struct arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *arena_vprintf(struct arena *a, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Bytes handed out since the last reset (for tests and the memory benchmark). */
size_t arena_used(const struct arena *a);

#endif
