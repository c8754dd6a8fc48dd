/* config: settings read once per process from the environment. */
#ifndef COURTS_CONFIG_H
#define COURTS_CONFIG_H

struct config {
	const char	*database_url;		/* DATABASE_URL: libpq conninfo or URI */
	const char	*database_read_url;	/* DATABASE_READ_URL: a read replica, "" for none */
	const char	*jwt_public_key_file;	/* JWT_PUBLIC_KEY_FILE: PEM */
	const char	*jwt_jwks_file;		/* JWT_JWKS_FILE: JWKS, "" for none; before the PEM */
	const char	*jwt_issuer;		/* JWT_ISSUER */
	const char	*jwt_audience;		/* JWT_AUDIENCE */
	const char	*jwt_algorithm;		/* JWT_ALGORITHM: RS256 or ES256 */
	const char	*jwt_roles_claim;	/* JWT_ROLES_CLAIM: claim name, dots walk objects */
	const char	*default_timezone;	/* DEFAULT_TIMEZONE: IANA name for new venues */
	const char	*base_path;		/* BASE_PATH: URL prefix before /api (shared hosting) */
	const char	*public_url;		/* PUBLIC_URL: scheme://host of absolute URLs, "" for the request's */
	int		 payment_hold_seconds;	/* PAYMENT_HOLD_SECONDS, default 900 */
	int		 checkin_radius_m;	/* CHECKIN_RADIUS_M, default 200 */
	int		 checkin_max_accuracy_m; /* CHECKIN_MAX_ACCURACY_M, default 100 */
	int		 min_reliability;	/* MIN_RELIABILITY: invitations need at least this */
	int		 db_prepare;		/* DB_PREPARE: 0 turns off server-side prepared statements */
	int		 max_unpaid_holds;	/* MAX_UNPAID_HOLDS: live holds awaiting payment per player */
	int		 max_pending_venues;	/* MAX_PENDING_VENUES: venues awaiting approval per owner */
	int		 write_budget_per_minute; /* WRITE_BUDGET_PER_MINUTE: refill; 0 turns it off */
	int		 write_budget_burst;	/* WRITE_BUDGET_BURST: writes in one go */
	const char	*payment_provider;	/* PAYMENT_PROVIDER: "none" (default) or "stripe" */
	const char	*stripe_secret_key;	/* STRIPE_SECRET_KEY: sk_live_... / sk_test_... */
	const char	*stripe_webhook_secret;	/* STRIPE_WEBHOOK_SECRET: whsec_..., comma-separated */
	const char	*stripe_api_base;	/* STRIPE_API_BASE: default https://api.stripe.com */
	int		 payment_provider_timeout; /* PAYMENT_PROVIDER_TIMEOUT_SECONDS, default 10 */
};

/* The process configuration, read from the environment on first call and kept.
 * Never NULL; unset or malformed variables fall back to the documented defaults. */
const struct config *config_get(void);

/* The whole number in environment variable name, or fallback when it is unset or empty; a
 * value that is no number from min to max is logged (one line naming what applies) and
 * fallback used. For the settings of programs of their own, such as the cron jobs. */
int config_env_int(const char *name, int fallback, int min, int max);

/* Forgets the cached configuration so the next config_get() reads the environment again
 * (unit tests only). */
void config_reload(void);

#endif
