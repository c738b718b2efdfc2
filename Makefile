# kbench — build, run and test.
#
#   make            build the harness, every benchmark and the driver into build/
#   make run        build, run the suite on this kernel, print the table
#   make quick      the same with short settings (a check, not a measurement)
#   make test       install missing test tools, build, run every test
#   make report     summary tables, charts and the HTML page from results/
#   make STATIC=1   link everything statically (binaries under build/static/)
#   make install PREFIX=/usr/local DESTDIR=
#
# A new benchmark is one new file: src/bench/NAME.cpp becomes build/bin/NAME.

CXX      ?= g++
CXXFLAGS ?= -O2 -g
LDFLAGS  ?=
PYTHON   ?= /usr/bin/python3
PREFIX   ?= /usr/local
DESTDIR  ?=
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# Flags the project needs whatever the user passes in CXXFLAGS.
KB_CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -Isrc -MMD -MP -pthread
KB_LDFLAGS  := -pthread

ifeq ($(STATIC),1)
BUILD      ?= build/static
KB_LDFLAGS += -static
else
BUILD      ?= build
endif

# Baked into the binaries so meta.json can say how they were built.
BUILD_INFO := -DKBENCH_VERSION='"$(VERSION)"' \
              -DKBENCH_COMPILER='"$(shell $(CXX) --version | head -n1)"' \
              -DKBENCH_CXXFLAGS='"$(strip $(CXXFLAGS) $(KB_CXXFLAGS) $(LDFLAGS) $(filter-out -pthread,$(KB_LDFLAGS)))"'

HARNESS_SRC := $(wildcard src/harness/*.cpp)
HARNESS_OBJ := $(patsubst src/%.cpp,$(BUILD)/obj/%.o,$(HARNESS_SRC))
HARNESS_LIB := $(BUILD)/lib/libkbench.a
BENCH_SRC   := $(wildcard src/bench/*.cpp)
BENCH_BIN   := $(patsubst src/bench/%.cpp,$(BUILD)/bin/%,$(BENCH_SRC))
DRIVER_SRC  := $(wildcard src/driver/*.cpp)
DRIVER_OBJ  := $(patsubst src/%.cpp,$(BUILD)/obj/%.o,$(DRIVER_SRC))
DRIVER_BIN  := $(if $(DRIVER_SRC),$(BUILD)/bin/kbench-run)
HELPER_BIN  := $(BUILD)/libexec/kbench-exec-helper
UNIT_SRC    := $(wildcard tests/unit/*.cpp)
UNIT_OBJ    := $(patsubst tests/%.cpp,$(BUILD)/obj/tests/%.o,$(UNIT_SRC))
UNIT_BIN    := $(BUILD)/tests/unit_tests

.SECONDARY:
.PHONY: all run quick test unit-tests report clean install check-deps
all: $(BENCH_BIN) $(DRIVER_BIN) $(HELPER_BIN)

# V=1 shows the full commands.
Q := $(if $(V),,@)

$(BUILD)/obj/%.o: src/%.cpp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(CXXFLAGS) $(BUILD_INFO) -c -o $@ $<

$(BUILD)/obj/tests/%.o: tests/%.cpp
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(CXXFLAGS) -c -o $@ $<

$(HARNESS_LIB): $(HARNESS_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/obj/bench/%.o $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) $(LDFLAGS) $(KB_LDFLAGS) -o $@ $< $(HARNESS_LIB)

$(BUILD)/bin/kbench-run: $(DRIVER_OBJ) $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) $(LDFLAGS) $(KB_LDFLAGS) -o $@ $(DRIVER_OBJ) $(HARNESS_LIB)

# The exec target of lat_proc: always static and tiny, so that `exec`
# measures the kernel's execve, not the dynamic loader.
$(HELPER_BIN): src/helper/exec_helper.c
	@mkdir -p $(@D)
	$(CC) -O2 -static -o $@ $<

$(UNIT_BIN): $(UNIT_OBJ) $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) $(LDFLAGS) $(KB_LDFLAGS) -o $@ $(UNIT_OBJ) $(HARNESS_LIB)

unit-tests: $(UNIT_BIN)

# The tests install what they need (Catch2, pytest, matplotlib, numpy)
# before building anything that includes Catch2.
test: check-deps
	$(MAKE) --no-print-directory all unit-tests
	$(UNIT_BIN)
	KBENCH_BUILD=$(BUILD) $(PYTHON) -m pytest -q tests

check-deps:
	@PYTHON=$(PYTHON) tests/ensure-deps.sh

# Extra kbench-run options, e.g. make run RUN_ARGS="--only lat_syscall".
RUN_ARGS ?=

# The driver prints the run directory on stdout (its only stdout); with
# Python and scripts/summarize present, their table replaces the driver's
# own. The status is the driver's, or the summary's if the driver succeeded.
define run_suite
	@table=; if command -v $(PYTHON) >/dev/null 2>&1 && [ -f scripts/summarize ]; then table=--no-table; fi; \
	dir=$$($(BUILD)/bin/kbench-run $$table $(1) $(RUN_ARGS)); status=$$?; \
	if [ -n "$$table" ] && [ -n "$$dir" ]; then \
	  $(PYTHON) scripts/summarize "$$dir"; sstatus=$$?; [ $$status -eq 0 ] && status=$$sstatus; \
	fi; \
	exit $$status
endef

run: all
	$(call run_suite,)

quick: all
	$(call run_suite,--quick)

# Summary tables, charts (plots/) and results/index.html from every run under results/.
report:
	$(PYTHON) scripts/report

clean:
	rm -rf build

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/kbench/bin $(DESTDIR)$(PREFIX)/lib/kbench/libexec $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BENCH_BIN) $(DRIVER_BIN) $(DESTDIR)$(PREFIX)/lib/kbench/bin/
	install -m 755 $(HELPER_BIN) $(DESTDIR)$(PREFIX)/lib/kbench/libexec/
	$(if $(DRIVER_BIN),ln -sf ../lib/kbench/bin/kbench-run $(DESTDIR)$(PREFIX)/bin/kbench-run)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
