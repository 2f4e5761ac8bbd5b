# wick — build: `make` builds build/wick and build/libwick.a; `make test` runs every test.
# `make test SAN=1` builds and runs the tests under ASan+UBSan (in build-san/).
# `make test T=serve_` runs the suites whose name starts with serve_; J=N runs N at once (default 2).

CC      ?= cc
SAN     ?= 0
J       ?= 2
T       ?=
PKGS    := libcjson libpcre2-8 libutf8proc libmicrohttpd libxxhash libzmq
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lcjson -lpcre2-8 -lutf8proc -lmicrohttpd -lxxhash -lzmq)

ifeq ($(SAN),1)
TEST_LIMIT ?= 3600
BUILD   ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
OPT     := -O1 -g -fno-omit-frame-pointer $(SANFLAGS)
else
TEST_LIMIT ?= 1800
BUILD   ?= build
OPT     := -O2 -g
endif

CFLAGS  += -std=c17 $(OPT) -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -Iinclude -Isrc $(PKG_CFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS  += $(PKG_LIBS) -lm -pthread

LIB_SRC  := $(sort $(filter-out src/cli/%,$(wildcard src/*/*.c)))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The web chat's files (src/serve/webui/, Debian's libjs-marked and node-dompurify),
# embedded in libwick.a by a C source generated into $(BUILD)/gen (see webui.h)
WEBUI_FILES := $(sort $(wildcard src/serve/webui/*.html src/serve/webui/*.js src/serve/webui/*.css)) \
               /usr/share/javascript/marked/marked.min.js /usr/share/nodejs/dompurify/dist/purify.min.js
LIB_OBJ  += $(BUILD)/obj/gen/webui_files.o
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
# tests/*.c not named test_*: helper programs the *.test.sh scripts run (tests/run.sh does not)
TEST_AUX := $(sort $(filter-out tests/test_%,$(wildcard tests/*.c)))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%) $(TEST_AUX:tests/%.c=$(BUILD)/tests/%)
DEPS     := $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_SRC:tests/%.c=$(BUILD)/obj/tests/%.d) \
            $(TEST_AUX:tests/%.c=$(BUILD)/obj/tests/%.d)

.PHONY: all test clean bench FORCE
all: $(BUILD)/wick $(BUILD)/libwick.a

$(BUILD)/libwick.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/wick: $(CLI_OBJ) $(BUILD)/libwick.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libwick.a $(LDLIBS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/embed_files: scripts/embed_files.c
	@mkdir -p $(@D)
	$(CC) -std=c17 -O1 -Wall -Wextra -Werror -o $@ $<
$(BUILD)/gen/webui_files.c: $(BUILD)/embed_files $(WEBUI_FILES)
	@mkdir -p $(@D)
	$(BUILD)/embed_files $@ $(WEBUI_FILES)
$(BUILD)/obj/gen/webui_files.o: $(BUILD)/gen/webui_files.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The build's identity for `wick --version` (wick_build()): the git commit,
# "-dirty" with local changes, "unknown" outside git. $(BUILD)/build_id
# changes only when the identity does, so version.o is rebuilt only then.
BUILD_ID := $(or $(shell git describe --always --dirty --abbrev=12 2>/dev/null),unknown)
$(BUILD)/build_id: FORCE
	@mkdir -p $(@D)
	@echo '$(BUILD_ID)' | cmp -s - $@ || echo '$(BUILD_ID)' > $@
$(BUILD)/obj/src/core/version.o: $(BUILD)/build_id
$(BUILD)/obj/src/core/version.o: CFLAGS += -DWICK_BUILD_ID='"$(BUILD_ID)"'
FORCE:

# CLI-side code the tests and bench/ programs link too, outside libwick.a:
# the test-model writer and the measurements of `wick bench`
CLI_SHARED_OBJ := $(BUILD)/obj/src/cli/testmodel.o $(BUILD)/obj/src/cli/bench_measure.o

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(CLI_SHARED_OBJ) $(BUILD)/libwick.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(CLI_SHARED_OBJ) $(BUILD)/libwick.a $(LDLIBS)

# bench/*.c: timing programs (not tests), built by `make bench` into $(BUILD)/bench/
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out bench/llamacpp_ref.c,$(wildcard bench/*.c)))
bench: $(BENCH_BIN)
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(CLI_SHARED_OBJ) $(BUILD)/libwick.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(CLI_SHARED_OBJ) $(BUILD)/libwick.a $(LDLIBS)

test: all $(TEST_BIN)
	@tests/run.sh -j $(J) -t $(TEST_LIMIT) $(BUILD) $(T)

clean:
	rm -rf build build-san

-include $(DEPS)
