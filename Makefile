# esxwatch — see README.md.  `make run` and `make test` set everything up.
VERSION	:= 0.1.0
CC	?= cc
PKGS	:= libcurl yaml-0.1 zlib libpcre2-8

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
LDFLAGS	+= $(SANFLAGS)
LDLIBS	+= $(PKG_LIBS) -lpthread -lm

SRCS	:= $(wildcard agent/*.c collectors/*.c output/*.c)
LIBSRCS	:= $(filter-out agent/main.c,$(SRCS))
# The queue behind agent/queue.h: spool (durable, agent/spool.c) or memqueue
# (in memory, agent/memqueue.c).  Switching is this one line (a build dir
# holds one kind: build the other with B=build/memq QUEUE=memqueue).
QUEUE	?= spool
QUEUEFLAGS := $(if $(filter spool,$(QUEUE)),-DESXWATCH_SPOOL_QUEUE)
LIBSRCS	:= $(filter-out $(if $(filter spool,$(QUEUE)),agent/memqueue.c),$(LIBSRCS))
CFLAGS	+= $(QUEUEFLAGS)
LIBOBJS	:= $(LIBSRCS:%.c=$(B)/obj/%.o)
TESTSRCS := $(wildcard tests/unit/test_*.c)
TESTBINS := $(TESTSRCS:tests/unit/%.c=$(B)/tests/%)

.PHONY: all deps run test test-deps unit check clean bench vib deb esxi fuzz

all: $(B)/esxwatch

$(B)/obj/%.o: %.c
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

run: deps
	$(MAKE) all
	$(B)/esxwatch -c agent.yaml

check: all unit

# The whole suite: unit tests (normal and sanitizer builds), end-to-end tests
# against the real binary.  Last line: "N passed, N failed".
test: test-deps
	$(MAKE) all unit
	$(MAKE) SANITIZE=1 all unit
	-$(MAKE) esxi
	@sh tests/run-all.sh

bench: deps
	$(MAKE) all
	@sh bench/run-all.sh

# The static ESXi build: build/esxi/esxwatch (musl, own libcurl/OpenSSL/zlib/
# libyaml from Debian source packages, cached; docs/esxi-build.md).
esxi:
	@sh packaging/esxi-build.sh

# Fuzz targets (clang libFuzzer): build/fuzz/fuzz_NAME from tests/fuzz/fuzz_NAME.c.
FUZZSRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZBINS := $(FUZZSRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsanitize=fuzzer-no-link,address,undefined \
	-DESXWATCH_VERSION='"$(VERSION)"' $(PKG_CFLAGS) $(QUEUEFLAGS)
FUZZOBJS := $(LIBSRCS:%.c=build/fuzz/obj/%.o)
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZFLAGS) -c -o $@ $<
build/fuzz/libfuzz.a: $(FUZZOBJS)
	@rm -f $@
	ar rcs $@ $^
build/fuzz/%: tests/fuzz/%.c build/fuzz/libfuzz.a
	clang $(FUZZFLAGS) -fsanitize=fuzzer -o $@ $< build/fuzz/libfuzz.a $(PKG_LIBS) -lpthread -lm
fuzz: $(FUZZBINS)

# Packages (packaging/, docs/install.md).  PKG_BIN is what the .deb ships.
# VIB_BIN is what the VIB ships: the static ESXi build (make esxi) when it
# exists, else PKG_BIN (a glibc build: fine for tests, it will not run on ESXi).
PKG_BIN	?= build/esxwatch
VIB_BIN	?= $(if $(wildcard build/esxi/esxwatch),build/esxi/esxwatch,$(PKG_BIN))

vib: $(VIB_BIN)
	python3 packaging/mkvib.py --bin $(VIB_BIN) --version $(VERSION) --out build
	python3 packaging/verify-vib build/esxwatch-$(VERSION).vib build/esxwatch-$(VERSION)-offline-bundle.zip

deb: $(PKG_BIN)
	python3 packaging/mkdeb.py --bin $(PKG_BIN) --version $(VERSION) --out build

clean:
	rm -rf build

-include $(LIBOBJS:.o=.d) $(B)/obj/agent/main.d
