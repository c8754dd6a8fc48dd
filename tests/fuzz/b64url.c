/* Fuzz target b64url: the strict base64url decoder of JWT segments (b64url_decode).
 * Input: the characters of one segment. */
#include "fuzz.h"
#include "jwks.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Unpadded base64url of n bytes into out (room for 4 * n / 3 + 4). */
static size_t
encode(const unsigned char *in, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		out[o++] = alphabet[in[i] >> 2];
		out[o++] = alphabet[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		out[o++] = alphabet[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
		out[o++] = alphabet[in[i + 2] & 63];
	}
	if (n - i == 1) {
		out[o++] = alphabet[in[i] >> 2];
		out[o++] = alphabet[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		out[o++] = alphabet[in[i] >> 2];
		out[o++] = alphabet[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		out[o++] = alphabet[(in[i + 1] & 15) << 2];
	}
	return o;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly the room the header promises, so ASan sees one byte too many */
	unsigned char *out = malloc(size * 3 / 4);
	char *again = malloc(size + 4);
	long n;

	FUZZ_CHECK(out != NULL && again != NULL);
	n = b64url_decode((const char *)data, size, out);
	if (n >= 0) {
		/* canonical: one spelling per byte string, so encoding gives the input back */
		FUZZ_CHECK((size_t)n == size * 3 / 4);
		FUZZ_CHECK(encode(out, (size_t)n, again) == size);
		FUZZ_CHECK(memcmp(again, data, size) == 0);
	}
	free(out);
	free(again);
	return 0;
}
