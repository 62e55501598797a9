# dpsynth: PGXS build.  `make && make install`, then `make installcheck` against a running server;
# `make unit` runs the pure C unit tests without a server.  scripts/test runs everything.
EXTENSION = dpsynth
# The version is written once, in dpsynth.control.  sql/dpsynth.sql is the current install script
# (copied to dpsynth--$(EXTVERSION).sql).  sql/ keeps one older full script, the base
# dpsynth--0.1.0.sql, and the update scripts dpsynth--OLD--NEW.sql; the wildcard picks the latter up,
# and PostgreSQL installs any other version as the base plus the chain of updates that reaches it.
# (A full script that a build of an earlier version copied into sql/ is not shipped: it would
# shadow the chain.)
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" dpsynth.control)
MODULE_big = dpsynth
DATA = sql/dpsynth--$(EXTVERSION).sql sql/dpsynth--0.1.0.sql $(wildcard sql/dpsynth--*--*.sql)

CORE_SRCS = $(wildcard src/core/*.c)
GLUE_SRCS = $(wildcard src/*.c)
OBJS = $(CORE_SRCS:.c=.o) $(GLUE_SRCS:.c=.o)
# (not HEADERS: that is PGXS's list of headers to install, and these are private)
DP_HEADERS = $(wildcard src/*.h src/core/*.h)

SHLIB_LINK = -lsodium -lm -lpthread

# pg_regress tests: sql/NN_name.sql with expected/NN_name.out (the extension script in sql/ is not a test)
REGRESS = $(sort $(patsubst sql/%.sql,%,$(wildcard sql/[0-9]*.sql)))
# (REGRESS_OUT=DIR: another output directory, for two runs at once: scripts/test)
REGRESS_OUT = test/regress_out
REGRESS_OPTS = --inputdir=. --outputdir=$(REGRESS_OUT) --load-extension=dpsynth

PG_CONFIG ?= pg_config
PG_INCLUDE_SERVER := $(shell $(PG_CONFIG) --includedir-server)
# PostgreSQL's own headers are treated as system headers so that -Wextra speaks about our code only.
PG_CPPFLAGS = -isystem $(PG_INCLUDE_SERVER) -Isrc -Isrc/core
# warnings only: the optimisation level is PostgreSQL's (pg_config --cflags) or the user's CFLAGS
PG_CFLAGS = -std=gnu11 -Wall -Wextra -ffp-contract=off
PG_CPPFLAGS += -DDPSYNTH_VERSION='"$(EXTVERSION)"'

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): $(DP_HEADERS)

sql/dpsynth--$(EXTVERSION).sql: sql/dpsynth.sql
	cp $< $@
all: sql/dpsynth--$(EXTVERSION).sql

# A full script of another version that an earlier `make install` left behind would shadow the
# chain (PostgreSQL installs a version from its own full script when there is one): install
# removes every full script of the extension that DATA does not ship.  Update scripts stay.
.PHONY: remove-stale-scripts
install: remove-stale-scripts
remove-stale-scripts:
	@for f in '$(DESTDIR)$(datadir)/$(datamoduledir)/$(EXTENSION)'--*.sql; do \
		name=$${f##*/}; \
		case "$$name" in $(EXTENSION)--*--*) continue ;; esac; \
		case " $(notdir $(DATA)) " in *" $$name "*) continue ;; esac; \
		[ -f "$$f" ] || continue; \
		rm -f "$$f" && echo "removed $$f (installed through the update chain now)"; \
	done

# ---- the core as a static library, compiled once per flavour ----
# Unit tests, their sanitizer build, fuzzers and benches link a libcore.a of src/core/*.c
# (the wildcard: a new core file joins by itself) instead of compiling every core file again for
# each binary.  Each flavour keeps its objects beside its binaries: test/unit/bin (the unit tests
# and the benches), test/unit/bin-san (ASan + UBSan), test/fuzz/bin (libFuzzer, clang).
# The unit flavours are compiled with -DDPSYNTH_TEST_RNG: src/core/dp_random.c then has
# dp_random_test_seed(), the seam through which the unit tests run their statistical bars on a
# fixed seed (test/unit/unit.h).  The extension's build never defines it (dp_random.c refuses
# the define beside DPSYNTH_VERSION, and scripts/test checks that dpsynth.so has no such symbol).
CORE_HDRS = $(wildcard src/core/*.h)
CORE_LIBS_LINK = -lsodium -lm -lpthread

# $(1): directory, $(2): compiler, $(3): flags.  The flavours' objects and binaries are kept from
# one build to the next (`make clean` does not reach them: PGXS reads EXTRA_CLEAN before it is set
# below), so they also depend on this Makefile, where their flags are written: a changed flag
# compiles them again.
define core_lib
$(1)/core/%.o: src/core/%.c $$(CORE_HDRS) Makefile
	@mkdir -p $$(@D)
	$(2) $(3) -c -o $$@ $$<
$(1)/libcore.a: $$(patsubst src/core/%.c,$(1)/core/%.o,$$(CORE_SRCS))
	@rm -f $$@
	ar rcs $$@ $$^
endef

# ---- pure C unit tests (no server) ----
UNIT_CFLAGS = -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffp-contract=off -Isrc/core
UNIT_TESTS = $(patsubst test/unit/%.c,test/unit/bin/%,$(wildcard test/unit/test_*.c))
UNIT_LIB = test/unit/bin/libcore.a
$(eval $(call core_lib,test/unit/bin,$(CC),$(UNIT_CFLAGS) -DDPSYNTH_TEST_RNG))

test/unit/bin/%: test/unit/%.c $(UNIT_LIB) $(CORE_HDRS) $(wildcard test/unit/*.h) Makefile
	$(CC) $(UNIT_CFLAGS) -DDPSYNTH_TEST_RNG -o $@ $< $(UNIT_LIB) $(CORE_LIBS_LINK)

.PHONY: unit unit-build
unit-build: $(UNIT_TESTS)
# every benchmark program (bench/*.c) built against the same library: the test command checks it
BENCH_PROGRAMS = $(patsubst bench/%.c,bench/bin/%,$(wildcard bench/*.c))
bench-build: $(BENCH_PROGRAMS)
unit: unit-build
	@rc=0; for t in $(UNIT_TESTS); do echo "# $$t"; ./$$t || rc=1; done; exit $$rc

# the same tests built with AddressSanitizer and UndefinedBehaviorSanitizer (any report fails)
UNIT_SAN_CFLAGS = -std=gnu11 -O1 -g -ffp-contract=off -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -Isrc/core
UNIT_SAN_TESTS = $(patsubst test/unit/%.c,test/unit/bin-san/%,$(wildcard test/unit/test_*.c))
UNIT_SAN_LIB = test/unit/bin-san/libcore.a
$(eval $(call core_lib,test/unit/bin-san,$(CC),$(UNIT_SAN_CFLAGS) -DDPSYNTH_TEST_RNG))

test/unit/bin-san/%: test/unit/%.c $(UNIT_SAN_LIB) $(CORE_HDRS) $(wildcard test/unit/*.h) Makefile
	$(CC) $(UNIT_SAN_CFLAGS) -DDPSYNTH_TEST_RNG -o $@ $< $(UNIT_SAN_LIB) $(CORE_LIBS_LINK)

.PHONY: unit-san unit-san-build
unit-san-build: $(UNIT_SAN_TESTS)
unit-san: unit-san-build
	@rc=0; for t in $(UNIT_SAN_TESTS); do echo "# $$t"; ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./$$t || rc=1; done; exit $$rc

EXTRA_CLEAN = test/unit/bin test/unit/bin-san test/fuzz/bin test/regress_out bench/bin sql/dpsynth--$(EXTVERSION).sql

# ---- benchmarks of the core (no server): bench/gum_bench.c, linked with the unit tests' library ----
bench/bin/%: bench/%.c $(UNIT_LIB) $(CORE_HDRS) $(wildcard test/unit/*.h) $(wildcard bench/*.h) Makefile
	@mkdir -p bench/bin
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_LIB) $(CORE_LIBS_LINK)

.PHONY: bench-gum bench-build
bench-gum: bench/bin/gum_bench

# ---- fuzzing of the core with libFuzzer (clang, ASan + UBSan): scripts/fuzz runs them ----
FUZZ_CC ?= clang
FUZZ_COMMON = -std=gnu11 -O1 -g -fno-sanitize-recover=undefined -Isrc/core
FUZZ_FLAGS = $(FUZZ_COMMON) -fsanitize=fuzzer,address,undefined
# the library's objects: instrumented the same way, without libFuzzer's main (each harness links it)
FUZZ_LIB_FLAGS = $(FUZZ_COMMON) -fsanitize=fuzzer-no-link,address,undefined
FUZZ_BINS = $(patsubst test/fuzz/%.c,test/fuzz/bin/%,$(wildcard test/fuzz/fuzz_*.c))
FUZZ_LIB = test/fuzz/bin/libcore.a
$(eval $(call core_lib,test/fuzz/bin,$(FUZZ_CC),$(FUZZ_LIB_FLAGS)))

test/fuzz/bin/%: test/fuzz/%.c test/fuzz/fuzz_input.h $(FUZZ_LIB) $(CORE_HDRS) Makefile
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LIB) $(CORE_LIBS_LINK)

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS)
