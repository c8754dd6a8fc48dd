/* utf8: checking and repairing UTF-8. */
#include "utf8.h"

#include <string.h>

#include "arena.h"

size_t
utf8_char(const unsigned char *s, size_t left)
{
	unsigned c = s[0];

	if (left == 0)
		return 0;
	if (c < 0x80)
		return 1;
	/* C0, C1: overlong forms of ASCII; F5..FF: past U+10FFFF */
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return left >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c < 0xf0) {
		if (left < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)	/* overlong: below U+0800 */
			return 0;
		if (c == 0xed && s[1] >= 0xa0)	/* U+D800..U+DFFF */
			return 0;
		return 3;
	}
	if (left < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
		return 0;
	if (c == 0xf0 && s[1] < 0x90)		/* overlong: below U+10000 */
		return 0;
	if (c == 0xf4 && s[1] >= 0x90)		/* past U+10FFFF */
		return 0;
	return 4;
}

size_t
utf8_invalid_at(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		if ((n = utf8_char(u + i, len - i)) == 0)
			return i;
		i += n;
	}
	return len;
}

const char *
utf8_repaired(struct arena *a, const char *s, size_t len, size_t *out_len)
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = utf8_invalid_at(s, len), n, o;
	char *out;

	*out_len = len;
	if (i == len)
		return s;
	/* at most three octets for every one replaced */
	out = arena_alloc(a, 3 * len + 1);
	memcpy(out, s, i);
	o = i;
	while (i < len) {
		if ((n = utf8_char(u + i, len - i)) == 0) {
			memcpy(out + o, replacement, 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}
