/* problem: builds and sends problem+json bodies. */
#include "problem.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "req.h"
#include "utf8.h"

/* s as UTF-8: a problem echoes what a request sent (its path, a field's name), which the
 * readers (url.h, the body's check) have refused already when it was not; this is the last
 * guard, so that a strict client can always read an error. */
static const char *
text(struct req *r, const char *s)
{
	size_t n;

	return utf8_repaired(r->a, s, strlen(s), &n);
}

void
problem_field(struct req *r, const char *field, const char *message)
{
	cJSON *e;

	if (r->field_errors == NULL)
		r->field_errors = cJSON_CreateArray();
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "field", text(r, field));
	cJSON_AddStringToObject(e, "message", text(r, message));
	cJSON_AddItemToArray(r->field_errors, e);
}

bool
problem_has_fields(const struct req *r)
{
	return r->field_errors != NULL && cJSON_GetArraySize(r->field_errors) > 0;
}

void
problem_send(struct req *r, int status, const char *code, const char *detail)
{
	problem_send_members(r, status, code, detail, NULL);
}

void
problem_send_members(struct req *r, int status, const char *code, const char *detail,
    cJSON *members)
{
	cJSON *doc, *m, *next;
	char type[96];
	size_t i;

	if (r->answered) {
		cJSON_Delete(members);
		return;
	}
	snprintf(type, sizeof type, "https://courts.example/problems/%s", code);
	for (i = strlen("https://courts.example/problems/"); type[i] != '\0'; i++)
		type[i] = type[i] == '_' ? '-' : (char)tolower((unsigned char)type[i]);
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "type", type);
	cJSON_AddStringToObject(doc, "title", req_reason(status));
	cJSON_AddNumberToObject(doc, "status", status);
	cJSON_AddStringToObject(doc, "detail", text(r, detail));
	cJSON_AddStringToObject(doc, "instance", r->path != NULL ? text(r, r->path) : "");
	cJSON_AddStringToObject(doc, "code", code);
	cJSON_AddStringToObject(doc, "requestId", r->id != NULL ? r->id : "");
	cJSON_AddItemToObject(doc, "errors",
	    r->field_errors != NULL ? r->field_errors : cJSON_CreateArray());
	r->field_errors = NULL;
	for (m = members != NULL ? members->child : NULL; m != NULL; m = next) {
		next = m->next;
		if (m->string != NULL && !cJSON_HasObjectItem(doc, m->string))
			cJSON_AddItemToObject(doc, m->string,
			    cJSON_DetachItemViaPointer(members, m));
	}
	cJSON_Delete(members);
	req_send_cjson(r, status, doc);
	r->resp_type = "application/problem+json";
}

int
problem_fields_or_send(struct req *r)
{
	if (!problem_has_fields(r))
		return 0;
	problem_send(r, 400, "VALIDATION_FAILED", "The request has invalid fields; see errors.");
	return -1;
}

void
problem_not_found(struct req *r, const char *what)
{
	char detail[160];

	snprintf(detail, sizeof detail, "%s not found.", what);
	problem_send(r, 404, "NOT_FOUND", detail);
}

void
problem_conflict(struct req *r, const char *code, const char *detail)
{
	problem_send(r, 409, code, detail);
}

void
problem_internal(struct req *r)
{
	problem_send(r, 500, "INTERNAL_ERROR",
	    "The server could not complete the request; quote the requestId when reporting it.");
}
