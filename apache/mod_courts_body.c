/* mod_courts_body: reads a request's whole body before its handler runs.
 *
 * Why: mod_reqtimeout bounds how long a client may take to send its body, but when the
 * deadline passes inside mod_fcgid's handler, mod_fcgid answers every failed body read with
 * a bare 500 ("can't get data from http client"), whatever the cause. Reading the body one
 * step earlier, in the fixups phase, lets Apache answer a stalled or trickling upload with
 * 408 (or 413 past LimitRequestBody, 400 for a broken chunked body) through the usual
 * ErrorDocument, before any FastCGI process is involved. The handler then reads the same
 * bytes from memory at full speed.
 *
 * Enabled per directory or location with `CourtsBodyFirst On` (apache/courts.conf does so
 * for the mod_fcgid programs). Plain CGI (mod_cgid) and mod_proxy_fcgi already answer 408
 * themselves and do not need it. Bodies are held in the request pool, so a size limit
 * belongs in front of it (LimitRequestBody, and courts.conf's Content-Length rule).
 */
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"

#include "apr_buckets.h"
#include "apr_strings.h"

module AP_MODULE_DECLARE_DATA courts_body_module;

struct body_conf {
	int enabled;		/* -1 unset, 0 off, 1 on */
};

static ap_filter_rec_t *replay_filter_handle;

static void *
body_conf_create(apr_pool_t *p, char *dir)
{
	struct body_conf *c = apr_pcalloc(p, sizeof *c);

	(void)dir;
	c->enabled = -1;
	return c;
}

static void *
body_conf_merge(apr_pool_t *p, void *basev, void *addv)
{
	struct body_conf *c = apr_pcalloc(p, sizeof *c);
	const struct body_conf *base = basev, *add = addv;

	c->enabled = add->enabled != -1 ? add->enabled : base->enabled;
	return c;
}

static const char *
body_first_set(cmd_parms *cmd, void *confv, int on)
{
	struct body_conf *c = confv;

	(void)cmd;
	c->enabled = on;
	return NULL;
}

/* Hands the kept body to whoever reads the request's input, in pieces of at most the size
 * asked for, then the end-of-stream bucket kept with it. */
static apr_status_t
replay_filter(ap_filter_t *f, apr_bucket_brigade *out, ap_input_mode_t mode,
    apr_read_type_e block, apr_off_t readbytes)
{
	apr_bucket_brigade *kept = f->ctx;
	apr_bucket *split;
	apr_status_t rv;

	(void)block;
	if (mode != AP_MODE_READBYTES && mode != AP_MODE_SPECULATIVE)
		return ap_get_brigade(f->next, out, mode, block, readbytes);
	if (APR_BRIGADE_EMPTY(kept)) {
		APR_BRIGADE_INSERT_TAIL(out, apr_bucket_eos_create(f->c->bucket_alloc));
		return APR_SUCCESS;
	}
	if (mode == AP_MODE_SPECULATIVE) {
		apr_bucket *b, *copy;

		for (b = APR_BRIGADE_FIRST(kept); b != APR_BRIGADE_SENTINEL(kept);
		    b = APR_BUCKET_NEXT(b)) {
			if ((rv = apr_bucket_copy(b, &copy)) != APR_SUCCESS)
				return rv;
			APR_BRIGADE_INSERT_TAIL(out, copy);
		}
		return APR_SUCCESS;
	}
	rv = apr_brigade_partition(kept, readbytes, &split);
	if (rv != APR_SUCCESS && rv != APR_INCOMPLETE)
		return rv;
	while (!APR_BRIGADE_EMPTY(kept) && APR_BRIGADE_FIRST(kept) != split) {
		apr_bucket *b = APR_BRIGADE_FIRST(kept);

		APR_BUCKET_REMOVE(b);
		APR_BRIGADE_INSERT_TAIL(out, b);
	}
	/* the end-of-stream bucket follows the last data at once */
	if (!APR_BRIGADE_EMPTY(kept) && APR_BUCKET_IS_EOS(APR_BRIGADE_FIRST(kept))) {
		apr_bucket *b = APR_BRIGADE_FIRST(kept);

		APR_BUCKET_REMOVE(b);
		APR_BRIGADE_INSERT_TAIL(out, b);
	}
	return APR_SUCCESS;
}

/* Reads the whole body under the connection's read deadlines (mod_reqtimeout); a failure
 * becomes the matching status (408 for a deadline) answered by Apache itself. */
static int
body_first_fixups(request_rec *r)
{
	const struct body_conf *c = ap_get_module_config(r->per_dir_config, &courts_body_module);
	apr_bucket_brigade *kept, *tmp;
	int seen_eos = 0;

	if (c->enabled != 1 || r->main != NULL || r->prev != NULL || !ap_request_has_body(r))
		return DECLINED;
	kept = apr_brigade_create(r->pool, r->connection->bucket_alloc);
	tmp = apr_brigade_create(r->pool, r->connection->bucket_alloc);
	while (!seen_eos) {
		apr_status_t rv = ap_get_brigade(r->input_filters, tmp, AP_MODE_READBYTES,
		    APR_BLOCK_READ, HUGE_STRING_LEN);

		if (rv != APR_SUCCESS) {
			int status = ap_map_http_request_error(rv, HTTP_BAD_REQUEST);

			if (status != AP_FILTER_ERROR)
				ap_log_rerror(APLOG_MARK, APLOG_INFO, rv, r,
				    "courts_body: request body not received whole; answering %d",
				    status);
			r->connection->keepalive = AP_CONN_CLOSE;
			return status;
		}
		seen_eos = !APR_BRIGADE_EMPTY(tmp) && APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(tmp));
		if ((rv = ap_save_brigade(NULL, &kept, &tmp, r->pool)) != APR_SUCCESS)
			return HTTP_INTERNAL_SERVER_ERROR;
		apr_brigade_cleanup(tmp);
	}
	ap_add_input_filter_handle(replay_filter_handle, kept, r, r->connection);
	return DECLINED;
}

static const command_rec body_cmds[] = {
	AP_INIT_FLAG("CourtsBodyFirst", body_first_set, NULL, OR_FILEINFO,
	    "On: read the whole request body before the handler runs (408 on a deadline)"),
	{ NULL }
};

static void
body_register_hooks(apr_pool_t *p)
{
	(void)p;
	replay_filter_handle = ap_register_input_filter("COURTS_BODY_REPLAY", replay_filter,
	    NULL, AP_FTYPE_RESOURCE);
	ap_hook_fixups(body_first_fixups, NULL, NULL, APR_HOOK_LAST);
}

AP_DECLARE_MODULE(courts_body) = {
	STANDARD20_MODULE_STUFF,
	body_conf_create,
	body_conf_merge,
	NULL,
	NULL,
	body_cmds,
	body_register_hooks,
	0
};
