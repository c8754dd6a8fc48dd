/* utf8: UTF-8 as RFC 3629 defines it, the only encoding of text the service reads or writes.
 *
 * A character is one to four octets: no overlong form (C0 80 for NUL), no surrogate (U+D800
 * to U+DFFF, which only UTF-16 pairs), nothing past U+10FFFF. Whatever a client sends is
 * checked against it before it is decoded, stored or echoed (url.h, the body), and what a
 * problem answer echoes is made valid with it (problem.c), a last guard: a strict client must
 * always be able to read an error. Every other answer is the database's text, which a UTF8
 * database holds valid.
 */
#ifndef COURTS_UTF8_H
#define COURTS_UTF8_H

#include <stdbool.h>
#include <stddef.h>

struct arena;

/* Octets of the valid character that starts s (left octets of it readable), 0 when s does
 * not start one. */
size_t utf8_char(const unsigned char *s, size_t left);

/* Offset of the first octet of s[0..len) that starts no valid character, or len when all
 * of it is valid UTF-8. */
size_t utf8_invalid_at(const char *s, size_t len);

/* s[0..len) with each octet that starts no valid character replaced by U+FFFD (the
 * replacement character): s itself when it is valid, else a copy in a's memory; its length
 * in *out_len. */
const char *utf8_repaired(struct arena *a, const char *s, size_t len, size_t *out_len);

#endif
