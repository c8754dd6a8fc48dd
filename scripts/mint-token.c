/* mint-token: signs a development JWT with libjwt, for `make token` and the test suite.
 *
 *   mint-token -k private.pem -s SUB [-r "OWNER ADMIN"] [-i ISS] [-a AUD] [-e SECONDS]
 *              [-A RS256|ES256|HS256|none] [-K KID] [-x] [-c name=json]...
 *
 * -e sets exp relative to now (negative: already expired); -x leaves exp out; -A HS256 uses
 * the key file's bytes as the HMAC secret (to prove the service refuses that forgery);
 * -K names the key in the header (kid); -c adds a raw JSON claim. The token is printed on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jwt.h>

static unsigned char *
slurp(const char *path, int *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		perror(path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(2);
	}
	buf[n] = '\0';
	fclose(f);
	*len = (int)n;
	return buf;
}

int
main(int argc, char **argv)
{
	const char *key_path = NULL, *sub = NULL, *roles = "", *iss = "https://auth.courts.local/";
	const char *aud = "courts-api", *alg_name = "RS256", *kid = NULL;
	long ttl = 3600;
	int c, key_len = 0, with_exp = 1, rc = 1;
	unsigned char *key = NULL;
	char *extra[16], *out = NULL, *roles_json, *p;
	int nextra = 0, i;
	jwt_t *jwt = NULL;
	jwt_alg_t alg;
	time_t now = time(NULL);
	size_t cap;

	while ((c = getopt(argc, argv, "k:s:r:i:a:e:A:K:xc:")) != -1) {
		switch (c) {
		case 'k': key_path = optarg; break;
		case 's': sub = optarg; break;
		case 'r': roles = optarg; break;
		case 'i': iss = optarg; break;
		case 'a': aud = optarg; break;
		case 'e': ttl = strtol(optarg, NULL, 10); break;
		case 'A': alg_name = optarg; break;
		case 'K': kid = optarg; break;
		case 'x': with_exp = 0; break;
		case 'c': if (nextra < 16) extra[nextra++] = optarg; break;
		default:
			fprintf(stderr, "usage: mint-token -k key.pem -s sub [-r roles] [-i iss] "
			    "[-a aud] [-e ttl] [-A alg] [-K kid] [-x] [-c name=json]\n");
			return 2;
		}
	}
	if (sub == NULL || (key_path == NULL && strcmp(alg_name, "none") != 0)) {
		fprintf(stderr, "mint-token: -s and -k are required\n");
		return 2;
	}
	alg = jwt_str_alg(alg_name);
	if (strcmp(alg_name, "none") == 0)
		alg = JWT_ALG_NONE;
	else if (alg == JWT_ALG_INVAL) {
		fprintf(stderr, "mint-token: unknown algorithm %s\n", alg_name);
		return 2;
	}
	if (key_path != NULL && alg != JWT_ALG_NONE)
		key = slurp(key_path, &key_len);
	/* roles as a JSON array built from the space-separated list */
	cap = strlen(roles) * 3 + 8;
	roles_json = calloc(1, cap);
	strcpy(roles_json, "[");
	for (p = strtok((char *)roles, " ,"); p != NULL; p = strtok(NULL, " ,"))
		snprintf(roles_json + strlen(roles_json), cap - strlen(roles_json), "%s\"%s\"",
		    roles_json[1] != '\0' ? "," : "", p);
	strcat(roles_json, "]");

	if (jwt_new(&jwt) != 0 ||
	    jwt_add_grant(jwt, "sub", sub) != 0 ||
	    jwt_add_grant(jwt, "iss", iss) != 0 ||
	    jwt_add_grant(jwt, "aud", aud) != 0 ||
	    jwt_add_grant_int(jwt, "iat", (long)now) != 0 ||
	    (with_exp && jwt_add_grant_int(jwt, "exp", (long)now + ttl) != 0) ||
	    (kid != NULL && jwt_add_header(jwt, "kid", kid) != 0))
		goto out;
	{
		char *grants = malloc(strlen(roles_json) + 16);

		sprintf(grants, "{\"roles\":%s}", roles_json);
		if (jwt_add_grants_json(jwt, grants) != 0) {
			free(grants);
			goto out;
		}
		free(grants);
	}
	for (i = 0; i < nextra; i++) {
		char *eq = strchr(extra[i], '='), *doc;

		if (eq == NULL)
			goto out;
		*eq = '\0';
		doc = malloc(strlen(extra[i]) + strlen(eq + 1) + 8);
		sprintf(doc, "{\"%s\":%s}", extra[i], eq + 1);
		jwt_del_grants(jwt, extra[i]);
		if (jwt_add_grants_json(jwt, doc) != 0) {
			free(doc);
			goto out;
		}
		free(doc);
	}
	if (jwt_set_alg(jwt, alg, key, key_len) != 0 || (out = jwt_encode_str(jwt)) == NULL)
		goto out;
	puts(out);
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "mint-token: cannot build the token\n");
	free(out);	/* libjwt 1.10 has no jwt_free_str */
	jwt_free(jwt);
	free(key);
	free(roles_json);
	return rc;
}
