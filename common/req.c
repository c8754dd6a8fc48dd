/* req: parameter lookups and the response setters. */
#include "req.h"

#include <string.h>

/* What a response becomes when its JSON cannot even be printed (memory exhausted). */
static const char out_of_memory[] =
    "{\"type\":\"https://courts.example/problems/internal-error\","
    "\"title\":\"Internal Server Error\",\"status\":500,"
    "\"detail\":\"The server could not complete the request.\","
    "\"code\":\"INTERNAL_ERROR\",\"errors\":[]}";

const char *
req_param(const struct req *r, const char *name)
{
	int i;

	for (i = 0; i < r->nparams; i++)
		if (strcmp(r->param_names[i], name) == 0)
			return r->param_values[i];
	return NULL;
}

const char *
req_query(const struct req *r, const char *name)
{
	int i;

	for (i = 0; i < r->nquery; i++)
		if (strcmp(r->query_names[i], name) == 0)
			return r->query_values[i];
	return NULL;
}

void
req_add_header(struct req *r, const char *name, const char *value)
{
	r->resp_headers = arena_printf(r->a, "%s%s: %s\r\n",
	    r->resp_headers != NULL ? r->resp_headers : "", name, value);
}

void
req_send_json(struct req *r, int status, const char *json)
{
	if (r->answered)
		return;
	r->answered = true;
	r->status = status;
	r->resp_len = strlen(json);
	r->resp_body = arena_strndup(r->a, json, r->resp_len);
	r->resp_type = "application/json";
}

/* Any other success type (text/calendar); body is copied. */
void
req_send_typed(struct req *r, int status, const char *type, const char *body, size_t len)
{
	if (r->answered)
		return;
	r->answered = true;
	r->status = status;
	r->resp_len = len;
	r->resp_body = arena_strndup(r->a, body, len);
	r->resp_type = type;
}

void
req_send_cjson(struct req *r, int status, const cJSON *doc)
{
	char *text;

	if (r->answered)
		return;
	r->answered = true;
	r->resp_type = "application/json";
	if ((text = cJSON_PrintUnformatted(doc)) == NULL) {
		text = arena_strdup(r->a, out_of_memory);
		status = 500;
		r->resp_type = "application/problem+json";
	}
	r->status = status;
	r->resp_body = text;
	r->resp_len = text != NULL ? strlen(text) : 0;
}

void
req_send_no_content(struct req *r)
{
	if (r->answered)
		return;
	r->answered = true;
	r->status = 204;
	r->resp_body = NULL;
	r->resp_len = 0;
}

void
req_send_not_modified(struct req *r)
{
	if (r->answered)
		return;
	r->answered = true;
	r->status = 304;
	r->resp_body = NULL;
	r->resp_len = 0;
}

const char *
req_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 503: return "Service Unavailable";
	default:  return status >= 500 ? "Internal Server Error" : "Error";
	}
}
