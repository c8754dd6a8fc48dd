/* Fuzz target input: every body and query reader of common/input.c on every field sent.
 *
 * Input: the query string up to '\n', then the body, read as the driver reads one (JSON,
 * no NUL inside). Each reader runs on each body member and query parameter under three sets
 * of flags; what it promises is checked: true records nothing, false on a value that is
 * there records exactly one error (none for an allowed null), and the problem that answers
 * all of them is well-formed. */
#include <math.h>

#include "fuzz.h"
#include "input.h"
#include "problem.h"
#include "url.h"

static const char *const skills[] = { "BEGINNER", "INTERMEDIATE", "ADVANCED", "PROFESSIONAL",
    NULL };
static const unsigned flag_sets[] = { 0, IN_REQUIRED | IN_NOT_BLANK, IN_NULLABLE };

/* errors a reader may add: 0 when it read the value, else one unless absence is allowed */
static void
check_read(struct req *r, int before, bool ok, bool absent_ok)
{
	FUZZ_CHECK(fuzz_nerrors(r) == before + (ok || absent_ok ? 0 : 1));
}

static void
body_field(struct req *r, const char *name, unsigned fl)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(r->body, name);
	bool null_ok = cJSON_IsNull(it) && !(fl & IN_REQUIRED) && (fl & IN_NULLABLE);
	const char *s;
	double d;
	long l;
	long long c;
	bool b;
	int n;

#define READ(call) do { n = fuzz_nerrors(r); check_read(r, n, (call), null_ok); } while (0)
	READ(body_string(r, name, fl, &s));
	READ(body_number(r, name, fl, &d));
	READ(body_int(r, name, fl, &l) && (input_fmt_long(r, l) != NULL));
	READ(body_bool(r, name, fl, &b));
	READ(body_enum(r, name, fl, skills, &s));
	READ(body_uuid(r, name, fl, &s));
	READ(body_date(r, name, fl, &s));
	READ(body_time(r, name, fl, false, &s));
	READ(body_time(r, name, fl, true, &s));
	READ(body_latitude(r, name, fl, &d) && input_fmt_double(r, d) != NULL);
	READ(body_longitude(r, name, fl, &d));
	n = fuzz_nerrors(r);
	if (body_money(r, name, fl, &c)) {
		/* the exact decimal text reads back as the same cents */
		const char *t = input_fmt_cents(r, c);

		FUZZ_CHECK(c > 0 && llround(strtod(t, NULL) * 100) == c);
		check_read(r, n, true, null_ok);
	} else
		check_read(r, n, false, null_ok);
#undef READ
}

static void
query_param(struct req *r, const char *name, unsigned fl)
{
	/* an empty value reads as absent */
	bool empty_ok = *req_query(r, name) == '\0' && !(fl & IN_REQUIRED);
	const char *s;
	double d;
	long l;
	int n;

#define READ(call) do { n = fuzz_nerrors(r); check_read(r, n, (call), empty_ok); } while (0)
	READ(query_string(r, name, fl, &s));
	READ(query_number(r, name, fl, &d));
	READ(query_int(r, name, fl, &l));
	READ(query_enum(r, name, fl, skills, &s));
	READ(query_date(r, name, fl, &s));
	READ(query_time(r, name, fl, &s));
	READ(query_latitude(r, name, fl, &d));
	READ(query_longitude(r, name, fl, &d));
#undef READ
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct req r;
	const cJSON *it;
	const char *qs, *end = NULL;
	size_t f;
	int i, n;

	fuzz_arena_use();
	fuzz_req_init(&r, "POST", "/fuzz");
	qs = fuzz_line(&data, &size);
	url_query_parse(&r, qs);
	if (memchr(data, '\0', size) == NULL)
		r.body = cJSON_ParseWithLengthOpts(fuzz_text(data, size), size + 1, &end, true);
	if (!cJSON_IsObject(r.body))
		r.body = NULL;

	for (f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
		cJSON_ArrayForEach(it, r.body)
			if (it->string != NULL) {
				FUZZ_CHECK(body_has(&r, it->string));
				body_field(&r, it->string, flag_sets[f]);
			}
		for (i = 0; i < r.nquery; i++)
			query_param(&r, r.query_names[i], flag_sets[f]);
	}
	/* a required field that was not sent is one error */
	n = fuzz_nerrors(&r);
	if (!body_has(&r, "absent"))
		FUZZ_CHECK(!body_string(&r, "absent", IN_REQUIRED, &qs) && fuzz_nerrors(&r) == ++n);
	if (req_query(&r, "absent") == NULL)
		FUZZ_CHECK(!query_date(&r, "absent", IN_REQUIRED, &qs) && fuzz_nerrors(&r) == ++n);
	FUZZ_CHECK(problem_fields_or_send(&r) == -1 && r.status == 400);
	fuzz_check_problem(&r);
	return 0;
}
