/* mod_courts_limits: per client address limits, without a lock.
 *
 * Two limits per client address, for every request the server reads (an internal redirect or
 * a subrequest is the same request, not counted again):
 *   CourtsAddrConcurrent N   requests of one address in progress at once, reading a body
 *                            included; the request that would be the N+1st is refused
 *   CourtsAddrPerMinute N    requests one address may start within 60 s from the first;
 *                            past N each is refused until those 60 s are over
 * A refused request is answered 429 by Apache itself (its ErrorDocument: problem+json), with
 * Retry-After: 60, before any handler runs. Refusals show in the access log only: one error
 * line each would flood the error log under the very load the limits are for.
 *   CourtsAddrExemptLoopback On|Off   loopback clients (127.0.0.0/8, ::1) are exempt (On)
 *   CourtsAddrEntries N      addresses tracked at once (65536); an address is forgotten once
 *                            it has nothing in progress and its minute is over, and when
 *                            every place near it is held, it is served without limits (a
 *                            warning in the error log, at most once a minute)
 * An IPv6 client is its /64: one subscriber's prefix, where a single machine can pick any
 * of 2^64 addresses. The address is the one Apache gives the request (mod_remoteip's, behind
 * a proxy that it trusts).
 *
 * Why not mod_qos, which these limits used: every request took its process-shared mutex (a
 * priority-inheritance futex), exempt addresses included: under load a health check in pool
 * mode took 0.377 ms of CPU with it against 0.347 with this module. Here the counters live
 * in one table of shared memory, created before the children fork, and are changed with
 * atomic instructions: an address's entry is found by a keyed hash of the address and a few
 * probes, and a minute is one 64-bit word (its first second and its count) replaced with
 * compare-and-swap, so a count and its minute never tear. A graceful restart starts a new
 * table; the requests of the old children finish on the old one.
 */
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include "apr_general.h"
#include "apr_shm.h"
#include "apr_strings.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

module AP_MODULE_DECLARE_DATA courts_limits_module;

#define MINUTE		60
#define PROBES		8
#define RETRY_AFTER	"60"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
    "the counters are shared between processes: their atomics must not take a lock");

struct entry {
	_Atomic uint64_t	tag;	/* keyed hash of the address; 0: free */
	_Atomic uint64_t	minute;	/* first second of the minute << 32 | requests in it */
	_Atomic uint32_t	active;	/* requests in progress */
	uint32_t		pad;
};

struct limits_conf {
	int	concurrent;		/* 0: no limit */
	int	per_minute;		/* 0: no limit */
	int	exempt_loopback;
	int	entries;
};

/* The shared memory of this generation of the server: set in the parent before the children
 * fork. */
struct shared {
	_Atomic int64_t		warned;	/* when the last warning of a full table was logged */
	struct entry		table[];
};

static struct shared *shared;	/* NULL: no limit is set */
static uint64_t mask;
static uint64_t key[2];
static const struct limits_conf defaults = { 0, 0, 1, 65536 };
static struct limits_conf conf;

static const char *
set_count(cmd_parms *cmd, void *dummy, const char *arg)
{
	const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
	char *end;
	long v;

	(void)dummy;
	if (err != NULL)
		return err;
	v = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || v < 0 || v > 1000000000)
		return apr_pstrcat(cmd->pool, cmd->cmd->name, " takes a whole number (0: off)", NULL);
	*(int *)((char *)&conf + (size_t)cmd->info) = (int)v;
	return NULL;
}

static const char *
set_exempt_loopback(cmd_parms *cmd, void *dummy, int on)
{
	const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);

	(void)dummy;
	if (err != NULL)
		return err;
	conf.exempt_loopback = on;
	return NULL;
}

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The request's client as 16 bytes (IPv4 as ::ffff:a.b.c.d, IPv6 cut to its /64); 0 when
 * it has no address Apache knows, 1 when it is a loopback one. */
static int
client_key(const request_rec *r, unsigned char out[16], int *loopback)
{
	const apr_sockaddr_t *sa = r->useragent_addr;
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char v6_loopback[16] = { [15] = 1 };

	if (sa == NULL)
		return 0;
	memset(out, 0, 16);
	if (sa->family == APR_INET) {
		memcpy(out, mapped, sizeof mapped);
		memcpy(out + 12, &sa->sa.sin.sin_addr, 4);
	}
#if APR_HAVE_IPV6
	else if (sa->family == APR_INET6) {
		const unsigned char *a = (const unsigned char *)&sa->sa.sin6.sin6_addr;

		*loopback = memcmp(a, v6_loopback, 16) == 0;
		if (memcmp(a, mapped, sizeof mapped) == 0)
			memcpy(out, a, 16);
		else
			memcpy(out, a, 8);
	}
#endif
	else
		return 0;
	if (memcmp(out, mapped, sizeof mapped) == 0)
		*loopback = out[12] == 127;
	return 1;
}

/* The entry of `tag`, taken if need be; NULL when every place it may have is held. */
static struct entry *
entry_find(uint64_t tag, uint32_t now)
{
	uint64_t i, h = tag;
	struct entry *e;

	for (i = 0; i < PROBES; i++) {
		uint64_t seen = 0;

		e = &shared->table[(h + i) & mask];
		if (atomic_load(&e->tag) == tag)
			return e;
		if (atomic_compare_exchange_strong(&e->tag, &seen, tag) || seen == tag)
			return e;
	}
	/* all held by others: take over one whose address has nothing in progress and whose
	 * minute is over (a request that found it just before counts on its new owner once,
	 * and gives its count back there too) */
	for (i = 0; i < PROBES; i++) {
		uint64_t old;

		e = &shared->table[(h + i) & mask];
		old = atomic_load(&e->tag);
		if (atomic_load(&e->active) == 0 &&
		    now - (uint32_t)(atomic_load(&e->minute) >> 32) >= MINUTE &&
		    atomic_compare_exchange_strong(&e->tag, &old, tag)) {
			atomic_store(&e->minute, 0);
			return e;
		}
	}
	return NULL;
}

/* Counts a request in the minute of its address: whether it is within the limit. */
static int
minute_count(struct entry *e, uint32_t now)
{
	uint64_t v = atomic_load(&e->minute), next;
	uint32_t n;

	do {
		if (now - (uint32_t)(v >> 32) >= MINUTE)
			next = (uint64_t)now << 32 | 1;
		else if ((uint32_t)v == UINT32_MAX)
			next = v;
		else
			next = v + 1;
	} while (!atomic_compare_exchange_weak(&e->minute, &v, next));
	n = (uint32_t)next;
	return n <= (uint32_t)conf.per_minute;
}

static apr_status_t
active_release(void *data)
{
	struct entry *e = data;

	atomic_fetch_sub(&e->active, 1);
	return APR_SUCCESS;
}

static int
refuse(request_rec *r)
{
	apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
	return HTTP_TOO_MANY_REQUESTS;
}

static int
limits_post_read_request(request_rec *r)
{
	unsigned char a[16];
	uint64_t lo, hi, tag;
	uint32_t now;
	int loopback = 0;
	struct entry *e;

	if (shared == NULL || r->main != NULL || r->prev != NULL ||
	    !client_key(r, a, &loopback) || (loopback && conf.exempt_loopback))
		return DECLINED;
	memcpy(&lo, a, 8);
	memcpy(&hi, a + 8, 8);
	tag = mix(mix(lo ^ key[0]) ^ hi ^ key[1]);
	if (tag == 0)
		tag = 1;
	now = (uint32_t)apr_time_sec(r->request_time);
	if ((e = entry_find(tag, now)) == NULL) {
		int64_t last = atomic_load(&shared->warned);

		if (r->request_time - last > apr_time_from_sec(MINUTE) &&
		    atomic_compare_exchange_strong(&shared->warned, &last, r->request_time))
			ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
			    "courts_limits: no room for another address (CourtsAddrEntries %d): "
			    "%s served without limits", conf.entries, r->useragent_ip);
		return DECLINED;
	}
	if (conf.per_minute > 0 && !minute_count(e, now))
		return refuse(r);
	if (conf.concurrent > 0) {
		uint32_t n = atomic_fetch_add(&e->active, 1) + 1;

		apr_pool_cleanup_register(r->pool, e, active_release, apr_pool_cleanup_null);
		if (n > (uint32_t)conf.concurrent)
			return refuse(r);
	}
	return DECLINED;
}

static int
limits_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
	apr_shm_t *shm;
	apr_status_t rv;
	uint64_t n = 1;

	(void)plog;
	(void)ptemp;
	shared = NULL;
	if (conf.concurrent == 0 && conf.per_minute == 0)
		return OK;
	while (n < (uint64_t)(conf.entries > PROBES ? conf.entries : PROBES))
		n <<= 1;
	if ((rv = apr_shm_create(&shm, sizeof(struct shared) + n * sizeof(struct entry), NULL,
	    pconf)) != APR_SUCCESS) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
		    "courts_limits: cannot create the shared table of %lu addresses",
		    (unsigned long)n);
		return HTTP_INTERNAL_SERVER_ERROR;
	}
	if ((rv = apr_generate_random_bytes((unsigned char *)key, sizeof key)) != APR_SUCCESS) {
		ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "courts_limits: no random key");
		return HTTP_INTERNAL_SERVER_ERROR;
	}
	shared = apr_shm_baseaddr_get(shm);
	memset(shared, 0, sizeof(struct shared) + n * sizeof(struct entry));
	mask = n - 1;
	return OK;
}

/* Each reading of the configuration (a restart) starts from the defaults. */
static int
limits_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
	(void)pconf;
	(void)plog;
	(void)ptemp;
	conf = defaults;
	return OK;
}

static const command_rec limits_cmds[] = {
	AP_INIT_TAKE1("CourtsAddrConcurrent", set_count,
	    (void *)APR_OFFSETOF(struct limits_conf, concurrent), RSRC_CONF,
	    "requests one client address may have in progress at once (0: no limit)"),
	AP_INIT_TAKE1("CourtsAddrPerMinute", set_count,
	    (void *)APR_OFFSETOF(struct limits_conf, per_minute), RSRC_CONF,
	    "requests one client address may start within 60 s (0: no limit)"),
	AP_INIT_TAKE1("CourtsAddrEntries", set_count,
	    (void *)APR_OFFSETOF(struct limits_conf, entries), RSRC_CONF,
	    "client addresses tracked at once (65536)"),
	AP_INIT_FLAG("CourtsAddrExemptLoopback", set_exempt_loopback, NULL, RSRC_CONF,
	    "On: loopback clients are not limited (the default)"),
	{ NULL }
};

static void
limits_register_hooks(apr_pool_t *p)
{
	static const char *const after[] = { "mod_remoteip.c", NULL };

	(void)p;
	ap_hook_pre_config(limits_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_post_config(limits_post_config, NULL, NULL, APR_HOOK_MIDDLE);
	ap_hook_post_read_request(limits_post_read_request, after, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(courts_limits) = {
	STANDARD20_MODULE_STUFF,
	NULL,
	NULL,
	NULL,
	NULL,
	limits_cmds,
	limits_register_hooks,
	0
};
