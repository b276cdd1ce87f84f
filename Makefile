# esxwatch — see README.md.  `make run` and `make test` set everything up.
VERSION	:= 0.1.0
# Parallel compile jobs of `make test` (its builds; the tests run one at a time).
JOBS	?= $(shell nproc 2>/dev/null || echo 2)
CC	?= cc
PKGS	:= libcurl yaml-0.1 zlib libpcre2-8 openssl expat

ifeq ($(SANITIZE),1)
B	:= build/asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
B	:= build
SANFLAGS :=
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wformat=2 \
	   -Wno-format-nonliteral -fstack-protector-strong -D_FORTIFY_SOURCE=2 \
	   -DESXWATCH_VERSION='"$(VERSION)"' $(SANFLAGS) $(PKG_CFLAGS) -MMD -MP
ifeq ($(SANITIZE),1)
CFLAGS	:= $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS)) -O1
endif
LDFLAGS	+= $(SANFLAGS) -Wl,-z,relro -Wl,-z,now
LDLIBS	+= $(PKG_LIBS) -lpthread -lm

SRCS	:= $(wildcard agent/*.c agent/*/*.c collectors/*.c collectors/*/*.c output/*.c)
LIBSRCS	:= $(filter-out agent/main.c,$(SRCS))
# The queue behind agent/spool/queue.h: spool (durable, agent/spool/queue.c over
# agent/spool/spool.c) or, for the benchmark only, memqueue (in memory,
# bench/memqueue.c).  Switching is this one line (a build dir holds one
# kind: build the other with B=build/memq QUEUE=memqueue).
QUEUE	?= spool
LIBSRCS	:= $(if $(filter memqueue,$(QUEUE)),$(filter-out agent/spool/queue.c,$(LIBSRCS)) bench/memqueue.c,$(LIBSRCS))
LIBOBJS	:= $(LIBSRCS:%.c=$(B)/obj/%.o)
# The rule catalogue is built into the binary: its YAML text as a C array,
# generated into each build directory (collectors/logwatch/rules_catalogue.h).
RULES_YAML := collectors/logwatch/rules/esxi.yaml
LIBOBJS	+= $(B)/obj/gen/rules_catalogue_builtin.o
TESTSRCS := $(wildcard tests/unit/test_*.c)
TESTBINS := $(TESTSRCS:tests/unit/%.c=$(B)/tests/%)

.PHONY: all deps run test test-deps bench-deps unit check clean bench vib deb esxi fuzz lint man

all: $(B)/esxwatch

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# (a pattern, so the fuzz build's directory gets one too)
%/gen/rules_catalogue_builtin.c: $(RULES_YAML) packaging/embed.sh
	@mkdir -p $(dir $@)
	sh packaging/embed.sh rules_catalogue_builtin $(RULES_YAML) >$@.tmp
	mv $@.tmp $@

$(B)/obj/gen/rules_catalogue_builtin.o: $(B)/gen/rules_catalogue_builtin.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libesxwatch.a: $(LIBOBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/esxwatch: $(B)/obj/agent/main.o $(B)/libesxwatch.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c tests/unit/t.h $(B)/libesxwatch.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(B)/libesxwatch.a $(LDFLAGS) $(LDLIBS)

unit: $(TESTBINS)

deps:
	@sh packaging/install-deps.sh build

test-deps:
	@sh packaging/install-deps.sh test

bench-deps:
	@sh packaging/install-deps.sh bench

# A foreground run of the example configuration as any user: its
# storage.directory (empty = /var/lib/esxwatch, root's) is replaced by
# RUN_DIR, a directory of the user's own under build/.
RUN_DIR	?= $(CURDIR)/$(B)/run
run: deps
	$(MAKE) all
	@mkdir -p $(RUN_DIR) && chmod 0700 $(RUN_DIR)
	@sed 's|^  directory: ""|  directory: "$(RUN_DIR)"|' agent.yaml >$(RUN_DIR)/agent.yaml
	@grep -q '^  directory: "$(RUN_DIR)"' $(RUN_DIR)/agent.yaml || \
	    { echo "make run: agent.yaml has no storage 'directory: \"\"' line to point at $(RUN_DIR)" >&2; exit 1; }
	$(B)/esxwatch -c $(RUN_DIR)/agent.yaml

check: all unit

# The house rules (COMMON/DESIGN): no assignment in a condition, no banned
# function, strerror only in the log helpers, file and function size limits.
# tests/lint/allow.txt lists the files not yet clean.
lint:
	@python3 tests/lint/checksrc.py

# The whole suite: unit tests (normal and sanitizer builds), end-to-end tests
# against the real binary.  Last line: "N passed, N failed".
test: test-deps
	$(MAKE) lint
	$(MAKE) -j$(JOBS) all unit
	$(MAKE) -j$(JOBS) SANITIZE=1 all unit
	-$(MAKE) esxi
	@sh tests/run-all.sh

# The static build too: bench_footprint_esxi.py measures it (skipped, and
# said so, when it cannot be built).
bench: bench-deps
	$(MAKE) all
	-$(MAKE) esxi
	@sh bench/run-all.sh

# The static ESXi build: build/esxi/esxwatch (musl, own libcurl/OpenSSL/zlib/
# libyaml from Debian source packages, cached; docs/esxi-build.md).
esxi:
	@sh packaging/esxi-build.sh

# Fuzz targets (clang libFuzzer): build/fuzz/fuzz_NAME from tests/fuzz/fuzz_NAME.c.
FUZZSRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZBINS := $(FUZZSRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsanitize=fuzzer-no-link,address,undefined -MMD -MP \
	-DESXWATCH_VERSION='"$(VERSION)"' $(PKG_CFLAGS) $(QUEUEFLAGS)
FUZZOBJS := $(LIBSRCS:%.c=build/fuzz/obj/%.o) build/fuzz/obj/gen/rules_catalogue_builtin.o
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZFLAGS) -c -o $@ $<
build/fuzz/obj/gen/rules_catalogue_builtin.o: build/fuzz/gen/rules_catalogue_builtin.c
	@mkdir -p $(dir $@)
	clang $(FUZZFLAGS) -c -o $@ $<
build/fuzz/libfuzz.a: $(FUZZOBJS)
	@rm -f $@
	ar rcs $@ $^
build/fuzz/%: tests/fuzz/%.c build/fuzz/libfuzz.a
	clang $(FUZZFLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libfuzz.a $(PKG_LIBS) -lpthread -lm
fuzz: $(FUZZBINS)

# Packages (packaging/, docs/install.md).  PKG_BIN is what the .deb ships.
# VIB_BIN is what the VIB ships: the static ESXi build, build/esxi/esxwatch
# (built by make esxi when missing).  A dynamically linked binary does not
# run on ESXi, so mkvib.py refuses one unless VIB_ALLOW_DYNAMIC=1 (tests only:
# VIB_BIN=build/esxwatch VIB_ALLOW_DYNAMIC=1 make vib).
PKG_BIN	?= build/esxwatch
VIB_BIN	?= build/esxi/esxwatch

# (not while esxi-build.sh itself builds it with B=build/esxi: then the link
# rule above is the one, and this one would call the script again)
ifneq ($(B),build/esxi)
build/esxi/esxwatch:
	@sh packaging/esxi-build.sh
endif

vib: $(VIB_BIN)
	python3 packaging/mkvib.py --bin $(VIB_BIN) --version $(VERSION) --out build \
	    $(if $(filter 1,$(VIB_ALLOW_DYNAMIC)),--allow-dynamic)
	python3 packaging/verify-vib build/esxwatch-$(VERSION).vib build/esxwatch-$(VERSION)-offline-bundle.zip

deb: $(PKG_BIN)
	python3 packaging/mkdeb.py --bin $(PKG_BIN) --version $(VERSION) --out build

# The man page the .deb ships, generated from the binary's -h (packaging/mkman.py).
man: $(PKG_BIN)
	python3 packaging/mkman.py --bin $(PKG_BIN) -o build/esxwatch.1

clean:
	rm -rf build

# Header dependencies (-MMD): the library, the binary, the unit tests (so a
# test binary rebuilds when tests/unit/*.h or a product header changes) and
# the fuzz targets.
-include $(LIBOBJS:.o=.d) $(B)/obj/agent/main.d $(TESTBINS:=.d)
-include $(FUZZOBJS:.o=.d) $(FUZZBINS:=.d)
