/* log: stderr lines, escaped so a hostile value cannot forge a second line. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "req.h"

static const char *program_name = "courts";

void
log_set_program(const char *program)
{
	program_name = program;
}

const char *
log_program(void)
{
	return program_name;
}

void
log_msg(const struct req *r, const char *level, const char *fmt, ...)
{
	char buf[1024], out[2048];
	size_t i, o = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (i = 0; buf[i] != '\0' && o + 5 < sizeof out; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c < 0x20 || c == 0x7f) {
			/* libpq messages end in \n: drop a trailing one, escape the rest */
			if (c == '\n' && buf[i + 1] == '\0')
				break;
			o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
		} else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	fprintf(stderr, "%s[%ld] req=%s %s: %s\n", program_name, (long)getpid(),
	    r != NULL && r->id != NULL ? r->id : "-", level, out);
	fflush(stderr);
}
