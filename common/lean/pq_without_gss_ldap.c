/* pq_without_gss_ldap: lets the programs link libpq statically without Kerberos and LDAP.
 *
 * Debian's libpq is built with GSSAPI and LDAP service lookups. Linking the shared libpq
 * loads 22 libraries (Kerberos, LDAP -> GnuTLS -> p11-kit, SASL...) whose start-up costs about
 * 1.2 ms per exec, which a plain CGI pays on every request (measured: 2.0 ms -> 0.8 ms per
 * exec of health.cgi, see bench/README.md). The static libpq.a still names the GSSAPI and LDAP
 * functions, so the lean build (Makefile LEAN=1, the default when libpq.a is available)
 * provides them here as "unavailable" answers, with the real signatures:
 *
 *  - gss_acquire_cred fails, so libpq sees no credential cache: GSS encryption and GSSAPI
 *    authentication are simply not offered (gssencmode=prefer falls back to a plain
 *    connection; gssencmode=require fails with libpq's own message);
 *  - ldap_init returns NULL, so an ldap:// entry in pg_service.conf fails with libpq's own
 *    "could not create LDAP structure" message.
 *
 * Nothing else in libpq changes. Deployments that need Kerberos or LDAP build with LEAN=0.
 */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t OM_uint32;
typedef void *gss_opaque;	/* every gss_*_t handle is a pointer */

#define GSS_S_FAILURE	(13u << 16)

struct gss_oid_desc_struct {
	OM_uint32	 length;
	void		*elements;
};
/* libpq only passes this OID on to gss_import_name, which never succeeds here */
static struct gss_oid_desc_struct hostbased_service;
void *GSS_C_NT_HOSTBASED_SERVICE = &hostbased_service;

static OM_uint32
gss_unavailable(OM_uint32 *minor)
{
	if (minor != NULL)
		*minor = 0;
	return GSS_S_FAILURE;
}

OM_uint32 gss_acquire_cred(OM_uint32 *, gss_opaque, OM_uint32, gss_opaque, int, gss_opaque *,
    gss_opaque *, OM_uint32 *);
OM_uint32 gss_acquire_cred(OM_uint32 *minor, gss_opaque name, OM_uint32 time_req,
    gss_opaque mechs, int usage, gss_opaque *cred, gss_opaque *actual, OM_uint32 *time_rec)
{
	(void)name; (void)time_req; (void)mechs; (void)usage; (void)cred; (void)actual;
	(void)time_rec;
	return gss_unavailable(minor);
}

OM_uint32 gss_import_name(OM_uint32 *, gss_opaque, gss_opaque, gss_opaque *);
OM_uint32 gss_import_name(OM_uint32 *minor, gss_opaque buf, gss_opaque type, gss_opaque *out)
{
	(void)buf; (void)type; (void)out;
	return gss_unavailable(minor);
}

OM_uint32 gss_init_sec_context(OM_uint32 *, gss_opaque, gss_opaque *, gss_opaque, gss_opaque,
    OM_uint32, OM_uint32, gss_opaque, gss_opaque, gss_opaque *, gss_opaque, OM_uint32 *,
    OM_uint32 *);
OM_uint32 gss_init_sec_context(OM_uint32 *minor, gss_opaque cred, gss_opaque *ctx,
    gss_opaque name, gss_opaque mech, OM_uint32 flags, OM_uint32 time_req, gss_opaque chan,
    gss_opaque in, gss_opaque *mech_out, gss_opaque out, OM_uint32 *ret_flags,
    OM_uint32 *time_rec)
{
	(void)cred; (void)ctx; (void)name; (void)mech; (void)flags; (void)time_req; (void)chan;
	(void)in; (void)mech_out; (void)out; (void)ret_flags; (void)time_rec;
	return gss_unavailable(minor);
}

OM_uint32 gss_delete_sec_context(OM_uint32 *, gss_opaque *, gss_opaque);
OM_uint32 gss_delete_sec_context(OM_uint32 *minor, gss_opaque *ctx, gss_opaque out)
{
	(void)ctx; (void)out;
	return gss_unavailable(minor);
}

OM_uint32 gss_display_status(OM_uint32 *, OM_uint32, int, gss_opaque, OM_uint32 *, gss_opaque);
OM_uint32 gss_display_status(OM_uint32 *minor, OM_uint32 status, int type, gss_opaque mech,
    OM_uint32 *ctx, gss_opaque out)
{
	(void)status; (void)type; (void)mech; (void)ctx; (void)out;
	return gss_unavailable(minor);
}

OM_uint32 gss_release_buffer(OM_uint32 *, gss_opaque);
OM_uint32 gss_release_buffer(OM_uint32 *minor, gss_opaque buf)
{
	(void)buf;
	return gss_unavailable(minor);
}

OM_uint32 gss_release_cred(OM_uint32 *, gss_opaque *);
OM_uint32 gss_release_cred(OM_uint32 *minor, gss_opaque *cred)
{
	(void)cred;
	return gss_unavailable(minor);
}

OM_uint32 gss_release_name(OM_uint32 *, gss_opaque *);
OM_uint32 gss_release_name(OM_uint32 *minor, gss_opaque *name)
{
	(void)name;
	return gss_unavailable(minor);
}

OM_uint32 gss_wrap(OM_uint32 *, gss_opaque, int, OM_uint32, gss_opaque, int *, gss_opaque);
OM_uint32 gss_wrap(OM_uint32 *minor, gss_opaque ctx, int conf, OM_uint32 qop, gss_opaque in,
    int *conf_state, gss_opaque out)
{
	(void)ctx; (void)conf; (void)qop; (void)in; (void)conf_state; (void)out;
	return gss_unavailable(minor);
}

OM_uint32 gss_unwrap(OM_uint32 *, gss_opaque, gss_opaque, gss_opaque, int *, OM_uint32 *);
OM_uint32 gss_unwrap(OM_uint32 *minor, gss_opaque ctx, gss_opaque in, gss_opaque out,
    int *conf_state, OM_uint32 *qop)
{
	(void)ctx; (void)in; (void)out; (void)conf_state; (void)qop;
	return gss_unavailable(minor);
}

OM_uint32 gss_wrap_size_limit(OM_uint32 *, gss_opaque, int, OM_uint32, OM_uint32, OM_uint32 *);
OM_uint32 gss_wrap_size_limit(OM_uint32 *minor, gss_opaque ctx, int conf, OM_uint32 qop,
    OM_uint32 req, OM_uint32 *max)
{
	(void)ctx; (void)conf; (void)qop; (void)req; (void)max;
	return gss_unavailable(minor);
}

/* LDAP: ldap_init fails first, so libpq never calls the others with a handle. */
#define LDAP_OTHER	0x50

void *ldap_init(const char *, int);
void *ldap_init(const char *host, int port)
{
	(void)host; (void)port;
	return NULL;
}

int ldap_set_option(void *, int, const void *);
int ldap_set_option(void *ld, int option, const void *value)
{
	(void)ld; (void)option; (void)value;
	return LDAP_OTHER;
}

int ldap_simple_bind(void *, const char *, const char *);
int ldap_simple_bind(void *ld, const char *who, const char *passwd)
{
	(void)ld; (void)who; (void)passwd;
	return -1;
}

int ldap_search_st(void *, const char *, int, const char *, char **, int, void *, void **);
int ldap_search_st(void *ld, const char *base, int scope, const char *filter, char **attrs,
    int attrsonly, void *timeout, void **res)
{
	(void)ld; (void)base; (void)scope; (void)filter; (void)attrs; (void)attrsonly;
	(void)timeout; (void)res;
	return LDAP_OTHER;
}

int ldap_result(void *, int, int, void *, void **);
int ldap_result(void *ld, int msgid, int all, void *timeout, void **res)
{
	(void)ld; (void)msgid; (void)all; (void)timeout; (void)res;
	return -1;
}

int ldap_count_entries(void *, void *);
int ldap_count_entries(void *ld, void *chain)
{
	(void)ld; (void)chain;
	return -1;
}

void *ldap_first_entry(void *, void *);
void *ldap_first_entry(void *ld, void *chain)
{
	(void)ld; (void)chain;
	return NULL;
}

void **ldap_get_values_len(void *, void *, const char *);
void **ldap_get_values_len(void *ld, void *entry, const char *attr)
{
	(void)ld; (void)entry; (void)attr;
	return NULL;
}

void ldap_value_free_len(void **);
void ldap_value_free_len(void **vals)
{
	(void)vals;
}

int ldap_msgfree(void *);
int ldap_msgfree(void *msg)
{
	(void)msg;
	return 0;
}

int ldap_unbind(void *);
int ldap_unbind(void *ld)
{
	(void)ld;
	return 0;
}

char *ldap_err2string(int);
char *ldap_err2string(int err)
{
	(void)err;
	return (char *)"LDAP is not available in this build";
}
