/* config: environment variables, read once per process; values are never per request. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "log.h"

#define DEFAULT_DATABASE_URL	"dbname=courts"
#define DEFAULT_KEY_FILE	"var/keys/jwt_public.pem"

static struct config cfg;
static bool loaded;

static const char *
env_str(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : fallback;
}

int
config_env_int(const char *name, int fallback, int min, int max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return fallback;
	n = strtol(v, &end, 10);
	if (*end != '\0' || n < min || n > max) {
		/* the operator meant something: say what applies instead of it */
		log_msg(NULL, "error", "setting %s=%s is not a whole number from %d to %d; %d applies",
		    name, v, min, max, fallback);
		return fallback;
	}
	return (int)n;
}

const struct config *
config_get(void)
{
	if (loaded)
		return &cfg;
	cfg.database_url = env_str("DATABASE_URL", DEFAULT_DATABASE_URL);
	cfg.database_read_url = env_str("DATABASE_READ_URL", "");
	cfg.jwt_public_key_file = env_str("JWT_PUBLIC_KEY_FILE", DEFAULT_KEY_FILE);
	cfg.jwt_jwks_file = env_str("JWT_JWKS_FILE", "");
	cfg.jwt_issuer = env_str("JWT_ISSUER", "https://auth.courts.local/");
	cfg.jwt_audience = env_str("JWT_AUDIENCE", "courts-api");
	cfg.jwt_algorithm = env_str("JWT_ALGORITHM", "RS256");
	cfg.jwt_roles_claim = env_str("JWT_ROLES_CLAIM", "roles");
	cfg.default_timezone = env_str("DEFAULT_TIMEZONE", "Europe/Madrid");
	cfg.base_path = env_str("BASE_PATH", "");
	cfg.public_url = env_str("PUBLIC_URL", "");
	cfg.payment_hold_seconds = config_env_int("PAYMENT_HOLD_SECONDS", 900, 1, 86400);
	cfg.checkin_radius_m = config_env_int("CHECKIN_RADIUS_M", 200, 1, 100000);
	cfg.checkin_max_accuracy_m = config_env_int("CHECKIN_MAX_ACCURACY_M", 100, 1, 100000);
	cfg.min_reliability = config_env_int("MIN_RELIABILITY", 50, 0, 100);
	cfg.db_prepare = config_env_int("DB_PREPARE", 1, 0, 1);
	cfg.max_unpaid_holds = config_env_int("MAX_UNPAID_HOLDS", 2, 1, 1000);
	cfg.max_pending_venues = config_env_int("MAX_PENDING_VENUES", 10, 1, 100000);
	cfg.write_budget_per_minute = config_env_int("WRITE_BUDGET_PER_MINUTE", 60, 0, 1000000);
	cfg.write_budget_burst = config_env_int("WRITE_BUDGET_BURST", 20, 1, 1000000);
	cfg.payment_provider = env_str("PAYMENT_PROVIDER", "none");
	cfg.stripe_secret_key = env_str("STRIPE_SECRET_KEY", "");
	cfg.stripe_webhook_secret = env_str("STRIPE_WEBHOOK_SECRET", "");
	cfg.stripe_api_base = env_str("STRIPE_API_BASE", "https://api.stripe.com");
	cfg.payment_provider_timeout = config_env_int("PAYMENT_PROVIDER_TIMEOUT_SECONDS", 10, 1, 60);
	loaded = true;
	return &cfg;
}

void
config_reload(void)
{
	loaded = false;
}
