# courts: court booking and match-making service (C CGI / FastCGI over PostgreSQL).
#
#   make run      install what the service needs, build, start PostgreSQL + Apache on 127.0.0.1:$(PORT)
#   make test     install that and the test tools, build, run unit tests and the bats suite
#   make token    mint a development token: make token SUB=alice ROLES=OWNER (no ROLES: a player)
#   make sweep    run the cron sweeper once against the `make run` database
#   make deliver  send the notifications outbox to NOTIFY_WEBHOOK_URL once (cron/deliver.c)
#   make reconcile  apply the payment provider's events the ledger missed, print differences
#   make backup   back up the `make run` database with pgBackRest (first full, then incremental)
#   make restore  TIME=2026-12-04T13:45:00+01:00: that database as it was then, in a new data directory
#   make bench    benchmark plain CGI and FastCGI (see bench/)
#   make fuzz     build the libFuzzer targets of tests/fuzz/ and fuzz each for FUZZ_SECONDS
#   make openapi  rebuild the API's description in openapi/dist/ (Node.js; commit the result)
#   make deb      build the Debian package build/deb/courts_<version>_<arch>.deb and lint it

VERSION   := 0.1.0
BUILD     ?= build
# V=1 shows the commands of the build; without it only what they print (a compiler's errors)
Q         := $(if $(V),,@)
PORT      ?= 8080
MODE      ?= cgi
PGBOUNCER ?=
SUB       ?= dev-user
ROLES     ?=
TTL       ?= 3600
# the key `make token` signs with; the test suite points it at its own
JWT_PRIVATE_KEY_FILE ?= var/keys/jwt_private.pem
SANITIZE  ?=

CC        ?= cc
PKGS      := libpq libcjson libjwt openssl
GIT_REV   := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
             -Icommon $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
             -DCOURTS_VERSION='"$(VERSION)"' -DCOURTS_BUILD='"$(GIT_REV)"'
LDFLAGS   += -Wl,--as-needed

# LEAN=1 links libpq statically without Kerberos and LDAP (common/lean/): a plain CGI then
# loads 10 shared libraries instead of 30 and starts in 0.8 ms instead of 2.0 ms. On by
# default when the static libraries are installed; LEAN=0 links Debian's shared libpq.
PG_LIBDIR    := $(shell pg_config --libdir 2>/dev/null)
PG_PKGLIBDIR := $(shell pg_config --pkglibdir 2>/dev/null)
LEAN_LIBS    := $(PG_LIBDIR)/libpq.a $(PG_PKGLIBDIR)/libpgcommon_shlib.a $(PG_PKGLIBDIR)/libpgport_shlib.a
LEAN      ?= $(if $(wildcard $(LEAN_LIBS)),1,0)
ifeq ($(LEAN),1)
LEAN_OBJ  := $(BUILD)/lean/pq_without_gss_ldap.o
PQ_LIBS   := $(LEAN_OBJ) $(LEAN_LIBS)
else
LEAN_OBJ  :=
PQ_LIBS   := -lpq
endif
LDLIBS    := -lfcgi $(PQ_LIBS) $(shell pkg-config --libs libcjson libjwt openssl 2>/dev/null || \
             echo -ljwt -lcjson -lssl -lcrypto) -lm
# The libraries linked are a build input: a program is relinked when they change, as when a
# build made before `make install` (shared libpq) is followed by one after it (lean).
LINK_STAMP := $(BUILD)/link-libs
ifneq ($(SANITIZE),)
CFLAGS    += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS   += -fsanitize=address,undefined
endif

COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
CGI_SRC    := $(wildcard cgi-bin/*.c)
CGI_BIN    := $(CGI_SRC:cgi-bin/%.c=$(BUILD)/cgi-bin/%.cgi)
UNIT_SRC   := $(wildcard tests/unit/*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
CRON_BIN   := $(if $(wildcard cron/sweep.c),$(BUILD)/cron/sweep)
JWKS_BIN   := $(BUILD)/cron/jwks-refresh
DELIVER_BIN := $(BUILD)/cron/deliver
RECONCILE_BIN := $(BUILD)/cron/reconcile
TOOLS_BIN  := $(BUILD)/tools/mint-token
APACHE_MOD := $(BUILD)/apache/mod_courts_body.so $(BUILD)/apache/mod_courts_limits.so
MODEL_SRC  := $(wildcard tests/lifecycle/*.c)
MODEL_BIN  := $(if $(MODEL_SRC),$(BUILD)/tools/lifecycle-model)
LIB        := $(BUILD)/libcommon.a
NODE_MODULES := openapi/node_modules/.package-lock.json
BENCH_NODE_MODULES := bench/express/node_modules/.package-lock.json
TEST_NODE_MODULES  := tests/node_modules/.package-lock.json
OPENAPI_DOC  := $(BUILD)/openapi/openapi.json
SYSTEMD_UNITS := $(BUILD)/systemd/courts-pool@.service $(BUILD)/systemd/courts-pools.target

# What the service needs to build and run (make run): the compiler, Apache with its modules and
# its development files (apache/'s modules are built with apxs), PostgreSQL, the libraries,
# openssl (the development keys) and curl and procps (scripts/stack.sh waits for the servers
# with them), pgbackrest (WAL archiving, make backup and make restore); the static libraries
# of the lean build unless LEAN=0 is asked for (about 35 packages and 520 MB: PostgreSQL's
# server headers bring clang and LLVM); pgbouncer with PGBOUNCER=1.
RUN_PACKAGES := build-essential pkg-config apache2 apache2-dev libapache2-mod-fcgid \
	postgresql postgresql-contrib libpq-dev libcjson-dev libjwt-dev libfcgi-dev libssl-dev \
	libcurl4-openssl-dev openssl curl procps pgbackrest $(if $(PGBOUNCER),pgbouncer) \
	$(if $(and $(filter command line environment,$(origin LEAN)),$(filter 0,$(LEAN))),,\
	postgresql-server-dev-all)
# What `make deb` adds: Debian's packaging tools (the package's own build dependencies are
# the service's: RUN_PACKAGES); the suite adds debootstrap, to install the package into a
# fresh Debian root (tests/97-deb.bats).
DEB_PACKAGES := debhelper dpkg-dev lintian
# What the tests, the benchmarks and the fuzzers add (make test, make bench, make fuzz, make
# openapi), with Node.js and npm: bats and jq, wrk, the FastCGI client, clang's fuzzer,
# pgbouncer, Chromium for the API page's test, systemd for the units' check, a second iCalendar
# reader, pg_auto_failover; and the npm packages of openapi/ (the document's build and
# checks) and tests/.
TOOL_PACKAGES = bats jq wrk time iproute2 libfcgi-bin clang libclang-rt-14-dev pgbouncer \
	chromium systemd python3-icalendar $(DEB_PACKAGES) debootstrap $(HA_PACKAGES)
# pg_auto_failover for the PostgreSQL that `make install` installed (scripts/ha.sh, the
# failover's test): its package is named after PostgreSQL's major version, known once
# `install` has run (this is expanded in install-tools' recipe, after it)
HA_PACKAGES = postgresql-$(or $(shell ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1),15)-auto-failover

.PHONY: all build programs install install-tools openapi run test unit token sweep deliver reconcile \
	backup restore ha ha-stop bench fuzz fuzz-build deb clean FORCE
.SECONDARY:

all: build

build: programs $(TOOLS_BIN) $(MODEL_BIN) $(UNIT_BIN) $(SYSTEMD_UNITS)

# what the service runs, no test tool among them (the Debian package's build, debian/rules)
programs: $(CGI_BIN) $(CRON_BIN) $(JWKS_BIN) $(DELIVER_BIN) $(RECONCILE_BIN) $(APACHE_MOD) $(OPENAPI_DOC)

# Installs the Debian packages the service needs that are missing (needs root or sudo); a
# no-op when all are there. No npm: the API's description is served from openapi/dist/.
install:
	@scripts/install-packages.sh $(RUN_PACKAGES)

# What the tests, benchmarks and fuzzers need besides, and the npm packages of openapi/.
install-tools: install
	@scripts/install-packages.sh --node $(TOOL_PACKAGES)
	@$(MAKE) --no-print-directory -s $(NODE_MODULES)

# The npm packages of a folder with a package-lock.json, into its node_modules (not in git);
# their install scripts are not run. openapi/'s, by `make install-tools`: the API's
# description (the OpenAPI document, built by Node from the route tables of cgi-bin/ and
# openapi/api.mjs, and its page, Swagger UI) needs the renderer, the validators and the
# headless browser's driver. bench/express/'s, by `make bench`: its reference service (bench/express/server.js).
# tests/'s, by `make test` and `make bench`: the payment provider's official client, which
# signs the events of the stand-in provider (tests/stripe-stand-in.mjs) and checks its answers.
%/node_modules/.package-lock.json: %/package.json %/package-lock.json
	@echo "installing: the npm packages of $*/package-lock.json"
	cd $* && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# The API's description as Apache serves it (apache/courts.conf): openapi/dist/, which `make
# openapi` builds with Node.js from the route tables and openapi/ and git keeps, so that
# building and running the service need neither Node.js nor npm (tests/95-openapi.bats fails
# when it is not what they give).
$(OPENAPI_DOC): $(shell find openapi/dist -type f 2>/dev/null)
	@rm -rf $(BUILD)/openapi && mkdir -p $(BUILD) && cp -R openapi/dist $(BUILD)/openapi

openapi: install-tools
	$(Q)node openapi/build.mjs openapi/dist openapi/node_modules
	@echo "openapi/dist/ rebuilt: commit it with the change that made it"


# rewritten only when the libraries change, so that only then the programs are relinked
$(LINK_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(LDLIBS)' | cmp -s - $@ || echo '$(LDLIBS)' >$@

$(BUILD)/common/%.o: common/%.c common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(COMMON_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/lean/%.o: common/lean/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/cgi-bin/%.cgi: cgi-bin/%.c $(LIB) $(LEAN_OBJ) $(LINK_STAMP) common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@.tmp $< $(LIB) $(LDLIBS)
	@mv -f $@.tmp $@	# rename, never overwrite: a running FastCGI worker keeps its text

# the cron programs: build/cron/NAME from cron/NAME.c, dashes of NAME as underscores
.SECONDEXPANSION:
$(CRON_BIN) $(JWKS_BIN) $(DELIVER_BIN) $(RECONCILE_BIN): $(BUILD)/cron/%: cron/$$(subst -,_,$$*).c $(LIB) $(LEAN_OBJ) \
		$(LINK_STAMP) common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# the Apache modules (per address limits; FastCGI mode: 408 for a late body); Apache's
# headers from apache2-dev
$(APACHE_MOD): $(BUILD)/apache/%.so: apache/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(filter-out -fsanitize=%,$(CFLAGS)) -fPIC -shared \
		-I$(shell apxs -q INCLUDEDIR 2>/dev/null) $(shell apr-1-config --includes 2>/dev/null) \
		-o $@.tmp $<
	@mv -f $@.tmp $@

# the pool mode's systemd units, with this build's absolute path (docs/operations.md, "Your own Apache")
$(BUILD)/systemd/%: apache/systemd/%.in scripts/systemd-units.sh $(CGI_SRC)
	$(Q)scripts/systemd-units.sh $@

$(BUILD)/tools/mint-token: scripts/mint-token.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ljwt

# the randomized lifecycle test (tests/48-lifecycle-model.bats): libpq only, no common/
$(MODEL_BIN): $(MODEL_SRC) tests/lifecycle/model.h $(LEAN_OBJ) $(LINK_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(MODEL_SRC) $(LDLIBS)

$(BUILD)/unit/%: tests/unit/%.c $(LIB) $(LEAN_OBJ) $(LINK_STAMP) common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Fuzzing (tests/fuzz/): every parser of untrusted bytes as a libFuzzer target, built with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer over a copy of the library built the same way.
# `make test` runs each one over its kept corpus for FUZZ_RUNS inputs; `make fuzz` fuzzes each
# for FUZZ_SECONDS (FUZZ_TARGETS="auth url" picks some), see docs/testing.md.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= 2000
FUZZ_TARGETS ?=
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# The test keys the targets sign and verify tokens with, made for each build directory (no key
# is kept in the repository); the targets read them at run time from this absolute path.
FUZZ_KEYS    := $(addprefix $(BUILD)/fuzz/keys/,rsa_private.pem rsa_public.pem ec_private.pem \
                ec_public.pem)
FUZZ_KEY_DIR := $(if $(filter /%,$(firstword $(BUILD))),,$(CURDIR)/)$(BUILD)/fuzz/keys
FUZZ_CFLAGS  := -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
                -Icommon -Itests/fuzz $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
                -DCOURTS_VERSION='"$(VERSION)"' -DCOURTS_BUILD='"$(GIT_REV)"' $(FUZZ_SAN) \
                -DFUZZ_KEY_DIR='"$(FUZZ_KEY_DIR)"'
FUZZ_LDLIBS  := -lfcgi -lpq $(shell pkg-config --libs libcjson libjwt openssl 2>/dev/null || \
                echo -ljwt -lcjson -lssl -lcrypto) -lm
FUZZ_SRC     := $(wildcard tests/fuzz/*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LIB     := $(BUILD)/fuzz/libcommon.a
FUZZ_CGI_OBJ := $(CGI_SRC:cgi-bin/%.c=$(BUILD)/fuzz/cgi-bin/%.o)

# the keys by name too: under .SECONDARY a missing one is made again only when asked for
fuzz-build: $(FUZZ_KEYS) $(FUZZ_BIN)

fuzz: install-tools fuzz-build
	@BUILD=$(BUILD) scripts/fuzz.sh -t $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(BUILD)/fuzz/common/%.o: common/%.c common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(COMMON_SRC:%.c=$(BUILD)/fuzz/%.o)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/fuzz/stub/%.o: tests/fuzz/stub/%.c tests/fuzz/stub/*.h common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# A program's own file, its main() renamed and http_main() turned into a hand-over of the
# route table to the target (see tests/fuzz/route.c): the real tables, not copies.
$(BUILD)/fuzz/cgi-bin/%.o: cgi-bin/%.c common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Dmain=fuzz_main_$* \
		-Dhttp_main=fuzz_routes_take -c -o $@ $<

# the whole request path of owner.cgi, the database stubbed; the router against every table
$(BUILD)/fuzz/request: $(BUILD)/fuzz/cgi-bin/owner.o $(BUILD)/fuzz/stub/db_stub.o
$(BUILD)/fuzz/route: $(FUZZ_CGI_OBJ)

# RSA 2048 and EC P-256, the private keys readable by their owner only; made again only when
# gone (a target reads them when it starts: a new key needs no relink)
$(FUZZ_BIN): | $(FUZZ_KEYS)

$(BUILD)/fuzz/keys/rsa_private.pem:
	@mkdir -p "$(dir $@)"
	$(Q)umask 077 && openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		-out "$@.tmp"
	@mv -f "$@.tmp" "$@"

$(BUILD)/fuzz/keys/ec_private.pem:
	@mkdir -p "$(dir $@)"
	$(Q)umask 077 && openssl genpkey -quiet -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-out "$@.tmp"
	@mv -f "$@.tmp" "$@"

$(BUILD)/fuzz/keys/%_public.pem: $(BUILD)/fuzz/keys/%_private.pem
	$(Q)openssl pkey -in "$<" -pubout -out "$@"

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_LIB) common/*.h
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(filter %.o,$^) $(FUZZ_LIB) \
		$(FUZZ_LDLIBS)

# run, test and bench build in a second make: it reads this file again after `install`, so
# that a first build on a fresh machine sees pg_config and the static libraries (lean).
run: install
	@$(MAKE) --no-print-directory build
	@BUILD=$(BUILD) PORT=$(PORT) MODE=$(MODE) PGBOUNCER=$(PGBOUNCER) scripts/run.sh

# all three modes unless MODE is given on the command line
test: install-tools
	@$(MAKE) --no-print-directory build fuzz-build
	@$(MAKE) --no-print-directory -s $(TEST_NODE_MODULES)
	@BUILD=$(BUILD) FUZZ_RUNS=$(FUZZ_RUNS) MODES="$(if $(filter command line,$(origin MODE)),$(MODE),cgi fastcgi pool)" \
		scripts/test.sh $(TESTS)

token: $(TOOLS_BIN)
	@case "$(TTL)" in ''|*[!0-9]*) echo "make token: TTL=$(TTL) is not a number of seconds: e.g. TTL=86400" >&2; exit 2 ;; esac; \
	$(TOOLS_BIN) -k "$(JWT_PRIVATE_KEY_FILE)" -s "$(SUB)" -r "$(ROLES)" -e "$(TTL)" \
		-i "$${JWT_ISSUER:-https://auth.courts.local/}" -a "$${JWT_AUDIENCE:-courts-api}"

sweep: $(CRON_BIN)
	@scripts/sweep.sh $(CRON_BIN)

deliver: $(DELIVER_BIN)
	@scripts/sweep.sh $(DELIVER_BIN)

reconcile: $(RECONCILE_BIN)
	@scripts/sweep.sh $(RECONCILE_BIN)

# A highly available PostgreSQL on 127.0.0.1 with pg_auto_failover (scripts/ha.sh;
# docs/operations.md, "Failover"): `make ha` starts a monitor and two nodes in HA_DIR and
# prints the URL that `make run DATABASE_URL=...` takes; `make ha-stop` stops them.
HA_DIR ?= var/ha

ha: install
	@scripts/install-packages.sh $(HA_PACKAGES)
	@scripts/ha.sh start "$(HA_DIR)"

ha-stop:
	@scripts/ha.sh stop "$(HA_DIR)"

# Backups with pgBackRest (scripts/backup.sh; docs/operations.md, "Backups") of the `make run`
# cluster, or of the state directory STATE=DIR. restore writes a new data directory (RESTORE_DIR,
# default STATE/restore/<time>) and says how to start the service on it.
STATE       ?=
RESTORE_DIR ?=
backup:
	@scripts/backup.sh backup $(if $(STATE),"$(STATE)")

restore:
	@scripts/backup.sh restore "$(TIME)" $(if $(or $(STATE),$(RESTORE_DIR)),"$(or $(STATE),var)") \
		$(if $(RESTORE_DIR),"$(RESTORE_DIR)")

bench: install-tools
	@$(MAKE) --no-print-directory build $(BENCH_NODE_MODULES)
	@$(MAKE) --no-print-directory -s $(TEST_NODE_MODULES)
	@BUILD=$(BUILD) bench/run.sh

# The Debian package of this tree (scripts/deb.sh; docs/operations.md, "The Debian package"):
# build/deb/courts_<version>_<arch>.deb, built with debhelper from the files git tracks or
# would track, then checked by lintian. REV=<commit> packages that commit instead.
deb: install
	@scripts/install-packages.sh $(DEB_PACKAGES)
	@scripts/deb.sh $(if $(REV),--rev $(REV)) --out $(BUILD)/deb

clean:
	rm -rf $(BUILD)
