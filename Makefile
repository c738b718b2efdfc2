# kbench — build, run and test.
#
#   make            build the harness, every benchmark and the driver into build/
#   make run        build, run the suite on this kernel, print the table
#   make quick      the same with short settings (a check, not a measurement)
#   make test       install missing test tools, build, run every test
#   make report     summary tables, charts and the HTML page from results/
#   make STATIC=1   link everything statically (binaries under build/static/)
#   make STATIC=1 ARCH=arm64   the same for arm64, cross-built (build/arm64/)
#   make vm-run KERNEL=X   the suite on another kernel in a QEMU guest, no reboot
#   make test-lava  a real LAVA job of the suite on a QEMU guest (scripts/lab/lava)
#   make test-series-vm  a series of Debian kernels and a git bisect run in QEMU guests
#   make install PREFIX=/usr/local DESTDIR=
#
# A new benchmark is one new file: src/bench/NAME.cpp becomes build/bin/NAME.

CXX      ?= g++
# -g1: line tables and function names (perf, gdb's backtraces), not the
# variables' locations: make all took 109-127 s of CPU against 153 s at -g
# on the 2-vCPU VM, for the same code (the reports compare cxxflags without
# the -g options).
CXXFLAGS ?= -O2 -g1
LDFLAGS  ?=
PYTHON   ?= /usr/bin/python3
PREFIX   ?= /usr/local
DESTDIR  ?=
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# Flags the project needs whatever the user passes in CXXFLAGS.
KB_CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -Isrc -MMD -MP -pthread
KB_LDFLAGS  := -pthread

# ---- Another architecture: a cross build -------------------------------------
#   make STATIC=1 ARCH=arm64        aarch64 binaries with Debian's cross compiler
#                                   (g++-aarch64-linux-gnu, installed when missing,
#                                   as make test installs its tools) into build/arm64
#   make STATIC=1 CROSS=PREFIX-     any cross toolchain: PREFIX-g++, PREFIX-gcc,
#                                   PREFIX-ar; the directory is named after its target
# ARCH counts only on make's command line: the ARCH=arm64 a kernel tree's
# shell exports is ignored. Without STATIC=1 the binaries need the target's
# shared libraries (build/arm64-shared). A cross build is for another machine
# (make vm-run ARCH=arm64, a board): make run, quick, test and the sanitizer
# builds run here and refuse it.
ARCH  := $(if $(filter command line override,$(origin ARCH)),$(ARCH))
CROSS ?=
ifneq ($(ARCH),)
KB_ARCH := $(or $(if $(filter arm64 aarch64,$(ARCH)),arm64),$(if $(filter x86_64 amd64,$(ARCH)),x86_64))
ifeq ($(KB_ARCH),)
$(error ARCH=$(ARCH): not an architecture kbench builds for (arm64, x86_64))
endif
ifneq ($(KB_ARCH),$(subst aarch64,arm64,$(shell uname -m)))
CROSS := $(or $(CROSS),$(if $(filter arm64,$(KB_ARCH)),aarch64-linux-gnu-,x86_64-linux-gnu-))
endif
endif
ifneq ($(CROSS),)
# The compilers follow CROSS unless given on the command line themselves.
ifneq ($(origin CXX),command line)
override CXX := $(CROSS)g++
endif
ifneq ($(origin CC),command line)
override CC := $(CROSS)gcc
endif
ifneq ($(origin AR),command line)
override AR := $(CROSS)ar
endif
KB_TARGET := $(shell $(CXX) -dumpmachine 2>/dev/null)
KB_ARCH   := $(or $(KB_ARCH),$(subst aarch64,arm64,$(firstword $(subst -, ,$(or $(KB_TARGET),$(CROSS))))))
KB_CROSS_GOALS := $(filter run quick test unit-tests unit-objects test-asan test-tsan asan-build asan-objects asan-unit-objects fuzz fuzz-replay test-mutants,$(MAKECMDGOALS))
ifneq ($(KB_CROSS_GOALS),)
$(error make $(KB_CROSS_GOALS) runs on this machine ($(shell uname -m)): no ARCH= or CROSS= with it; a cross build is make STATIC=1 ARCH=$(KB_ARCH), run with make vm-run ARCH=$(KB_ARCH) or on the board)
endif
# Debian's cross compiler when it is missing (not under make -n, -q, nor for clean).
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS))),)
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
ifeq ($(shell command -v $(CXX) >/dev/null 2>&1 && command -v $(CC) >/dev/null 2>&1 && echo ok),)
KB_CROSS_PKG := $(if $(filter aarch64-linux-gnu-,$(CROSS)),g++-aarch64-linux-gnu gcc-aarch64-linux-gnu,$(if $(filter x86_64-linux-gnu-,$(CROSS)),g++-x86-64-linux-gnu gcc-x86-64-linux-gnu))
ifeq ($(KB_CROSS_PKG),)
$(error $(CXX) or $(CC) missing: install the $(CROSS) cross toolchain)
endif
$(info kbench: $(CXX) missing: installing Debian's $(KB_CROSS_PKG))
ifneq ($(shell scripts/install-packages.sh kbench $(KB_CROSS_PKG) >&2 && echo ok),ok)
$(error the cross compiler could not be installed: apt-get install $(KB_CROSS_PKG))
endif
KB_TARGET := $(shell $(CXX) -dumpmachine 2>/dev/null)
endif
endif
endif
endif

ifeq ($(STATIC),1)
BUILD      ?= build/$(if $(CROSS),$(KB_ARCH),static)
KB_LDFLAGS += -static
else
BUILD      ?= build$(if $(CROSS),/$(KB_ARCH)-shared)
endif

# Baked into the binaries so meta.json can say how they were built.
BUILD_INFO := -DKBENCH_VERSION='"$(VERSION)"' \
              -DKBENCH_COMPILER='"$(shell $(CXX) --version 2>/dev/null | head -n1)"' \
              -DKBENCH_CXXFLAGS='"$(strip $(CXXFLAGS) $(KB_CXXFLAGS) $(LDFLAGS) $(filter-out -pthread,$(KB_LDFLAGS)))"'

# What BUILD_INFO and the flags were at the last build: when VERSION, the
# compiler or the flags change, every object is rebuilt, so that meta.json and
# the samples never name a version or flags the binaries were not built with.
BUILD_STAMP      := $(BUILD)/build-info.txt
BUILD_STAMP_TEXT := $(VERSION) | $(CXX) | $(CXXFLAGS) | $(LDFLAGS) | $(KB_LDFLAGS)$(if $(CROSS), | target $(or $(KB_TARGET),$(KB_ARCH)))
# Not under make -n (or -q): a dry run writes nothing, not even the stamp.
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS))),)
ifneq ($(file <$(BUILD_STAMP)),$(BUILD_STAMP_TEXT))
$(shell mkdir -p $(BUILD))
$(file >$(BUILD_STAMP),$(BUILD_STAMP_TEXT))
endif
endif

# One goal (or none) builds in parallel, on every CPU: make, make run, make
# test. A -j of yours wins (make -j1 for one job at a time); several goals
# (make clean all) run as you ordered them, one job at a time, unless you
# give -j. Only the top-level make decides: a sub-make shares its jobs.
NPROC := $(shell nproc 2>/dev/null || echo 1)
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
ifeq ($(filter-out 0 1,$(words $(MAKECMDGOALS))),)
MAKEFLAGS += -j$(NPROC)
endif
endif
endif

HARNESS_SRC := $(wildcard src/harness/*.cpp src/harness/internal/*.cpp)
HARNESS_OBJ := $(patsubst src/%.cpp,$(BUILD)/obj/%.o,$(HARNESS_SRC))
HARNESS_LIB := $(BUILD)/lib/libkbench.a
BENCH_SRC   := $(wildcard src/bench/*.cpp)
BENCH_BIN   := $(patsubst src/bench/%.cpp,$(BUILD)/bin/%,$(BENCH_SRC))
DRIVER_SRC  := $(wildcard src/driver/*.cpp)
DRIVER_OBJ  := $(patsubst src/%.cpp,$(BUILD)/obj/%.o,$(DRIVER_SRC))
DRIVER_BIN  := $(if $(DRIVER_SRC),$(BUILD)/bin/kbench-run)
# the driver without its main(): the unit tests (its plan) and the fuzz replays link it
DRIVER_LIB  := $(BUILD)/lib/libkbench-driver.a
HELPER_BIN  := $(BUILD)/libexec/kbench-exec-helper $(BUILD)/libexec/kbench-fork-helper
UNIT_SRC    := $(wildcard tests/harness/unit/*.cpp)
UNIT_OBJ    := $(patsubst tests/%.cpp,$(BUILD)/obj/tests/%.o,$(UNIT_SRC))
UNIT_BIN    := $(BUILD)/tests/unit_tests
# UNITY=1 (the ASan build of make test): the harness library, the driver
# (all but its main.cpp) and the unit tests (all but the Catch2 runner) each
# compile as one translation unit, BUILD/unity/NAME.cpp, which includes their
# files: the shared headers (Catch2's among them) are parsed and their
# templates instantiated once. Under ASan+UBSan the harness takes 6 s of CPU
# instead of 18, the driver 13 instead of 28, the unit tests 10 instead of 23.
# The plain build keeps one object per file, so that an edit recompiles one
# file and the planted-bug run (tests/mutants/run) rebuilds only what a
# mutant touches. A name defined at file scope in two files of one unit
# breaks the unity build: give one of them another name.
UNITY ?=
UNITY_DRIVER_SRC := $(filter-out src/driver/main.cpp,$(DRIVER_SRC))
UNITY_UNIT_SRC   := $(filter-out tests/harness/unit/main.cpp,$(UNIT_SRC))
ifneq ($(UNITY),)
HARNESS_OBJ := $(BUILD)/obj/unity/harness.o
DRIVER_OBJ  := $(BUILD)/obj/driver/main.o $(if $(UNITY_DRIVER_SRC),$(BUILD)/obj/unity/driver.o)
UNIT_OBJ    := $(BUILD)/obj/tests/harness/unit/main.o $(BUILD)/obj/unity/unit.o
endif

.SECONDARY:
.PHONY: all run quick test unit-tests unit-objects report clean install check-deps
all: $(BENCH_BIN) $(DRIVER_BIN) $(HELPER_BIN)

# Written above when a real build parses this file; under make -n on a fresh
# tree it is missing, and the dry run shows every command all the same.
$(BUILD_STAMP): ;

# V=1 shows the full commands.
Q := $(if $(V),,@)

$(BUILD)/obj/%.o: src/%.cpp $(BUILD_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(CXXFLAGS) $(BUILD_INFO) -c -o $@ $<

$(BUILD)/obj/tests/%.o: tests/%.cpp $(BUILD_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(CXXFLAGS) -c -o $@ $<

# A unity source: one #include per file, by its path in the tree (found through
# -iquote ., so that a copy of the tree builds from its own files), rewritten
# only when the list changes.
define unity_source
	@mkdir -p $(@D)
	@printf '#include "%s"\n' $(1) > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
endef
$(BUILD)/unity/harness.cpp: FORCE
	$(call unity_source,$(HARNESS_SRC))
$(BUILD)/unity/driver.cpp: FORCE
	$(call unity_source,$(UNITY_DRIVER_SRC))
$(BUILD)/unity/unit.cpp: FORCE
	$(call unity_source,$(UNITY_UNIT_SRC))
.PHONY: FORCE
FORCE:

$(BUILD)/obj/unity/%.o: $(BUILD)/unity/%.cpp $(BUILD_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $* (one unit: $(BUILD)/unity/$*.cpp)")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(CXXFLAGS) $(BUILD_INFO) -iquote . -c -o $@ $<

# the unit tests' unit: at -O0, as each of their files is (below)
$(BUILD)/obj/unity/unit.o: $(BUILD)/unity/unit.cpp $(BUILD_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     unit tests (one unit: $<, -O0)")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(filter-out -O%,$(CXXFLAGS)) -O0 -iquote . -c -o $@ $<

# The unit tests' own files (Catch2's macros and our assertions) compile at
# -O0 in every build: 24 s of CPU for the plain build's, against 39 s at -O2.
# The code they test is the build's own libraries, with the build's flags
# (-O2 here, ASan+UBSan in build/asan).
$(BUILD)/obj/tests/harness/unit/%.o: tests/harness/unit/%.cpp $(BUILD_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $< (-O0: a unit test)")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(filter-out -O%,$(CXXFLAGS)) -O0 -c -o $@ $<

# The Catch2 runner (CATCH_CONFIG_MAIN: Catch2 itself, none of our code) is
# the one costly file: 28 s at -O2 and 104 s under ASan+UBSan (-O1), 13 s at
# -O0 without sanitizers. It is built that way in every build; the tests it
# runs keep the build's flags (the ASan build links it with the runtime).
# The ASan build takes this build's runner (CATCH_MAIN_FROM: asan-build and
# asan-unit-objects), rather than compile the same file again.
CATCH_MAIN_OBJ := $(BUILD)/obj/tests/harness/unit/main.o
CATCH_MAIN_FROM ?=
ifeq ($(CATCH_MAIN_FROM),)
$(CATCH_MAIN_OBJ): tests/harness/unit/main.cpp $(BUILD_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $< (-O0, no sanitizer: the Catch2 runner)")
	$(Q)$(CXX) $(KB_CXXFLAGS) $(filter-out -O% -fsanitize=% -fno-sanitize%,$(CXXFLAGS)) -O0 -c -o $@ $<
else
# (made by the make that passed it; the empty rule: a dry run on a fresh tree)
$(CATCH_MAIN_FROM): ;
$(CATCH_MAIN_OBJ): $(CATCH_MAIN_FROM)
	@mkdir -p $(@D)
	$(Q)cp $< $@
endif

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
$(BUILD)/libexec/kbench-exec-helper: src/helper/exec_helper.c
	@mkdir -p $(@D)
	$(CC) -O2 -static -o $@ $<

# The process lat_proc's fork, exec and shell fork from: static and small,
# so that fork copies a parent as small as a hand-written loop's.
$(BUILD)/libexec/kbench-fork-helper: src/helper/fork_helper.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror -static -o $@ $<

$(UNIT_BIN): $(UNIT_OBJ) $(DRIVER_LIB) $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) $(LDFLAGS) $(KB_LDFLAGS) -o $@ $(UNIT_OBJ) $(DRIVER_LIB) $(HARNESS_LIB)

unit-tests: $(UNIT_BIN)
# the unit tests' objects alone (make test compiles them once Catch2 is
# installed, beside the rest of the build)
unit-objects: $(UNIT_OBJ)

# The tests install what they need (Catch2, pytest, matplotlib, numpy,
# strace...: tests/ensure-deps.sh) while both builds (this one and the ASan
# one) compile what needs none of it; the unit tests' objects (Catch2)
# compile as soon as it is installed, beside them, then everything links.
# Then every part of both passes at once (tests/parallel.py: each part's
# output as it ends). Each test runs once:
#   - the ASan+UBSan pass (test-asan's, in parts): every pytest test that runs
#     something of the build (the build_dir fixture), the unit tests, the fuzz
#     corpus and a quick driver run, all against build/asan;
#   - the plain pass: pytest tests/scripts (pure Python), the tests that run
#     nothing of the build (the Makefile, the README, scripts/vm-run, make
#     quick) or run it under strace (LeakSanitizer cannot: --no-asan-share),
#     and this build's own unit tests and quick driver run;
#   - the planted bugs (tests/mutants/run), against this build.
# pytest -rs prints every skip with its reason; a skip of a test this
# machine can run fails the run (tests/conftest.py, MAY_SKIP). The sessions
# write no .pytest_cache (several run at once).
PYTEST = KBENCH_BUILD=$(BUILD) $(PYTHON) -m pytest -q -rs -p no:cacheprovider
test:
	+@{ PYTHON=$(PYTHON) tests/ensure-deps.sh && $(MAKE) --no-print-directory unit-objects asan-unit-objects; } & \
	  deps=$$!; $(MAKE) --no-print-directory all asan-objects; built=$$?; \
	  wait $$deps || exit 1; exit $$built
	+$(MAKE) --no-print-directory unit-tests asan-build
	$(PYTHON) tests/parallel.py \
	  --job "ASan+UBSan pass ($(ASAN_BUILD))" '$(ASAN_PASS)' \
	  --job "pytest tests/scripts, part 1 of 2" "$(PYTEST) --shard 1/2 tests/scripts" \
	  --job "pytest tests/scripts, part 2 of 2" "$(PYTEST) --shard 2/2 tests/scripts" \
	  --job "pytest, what the ASan pass does not run" "$(PYTEST) --no-asan-share tests --ignore=tests/scripts" \
	  --job "this build: unit tests, quick driver run" "tests/system/sanitizer-pass.sh binaries $(BUILD)" \
	  --job "planted bugs (tests/mutants/run)" "KBENCH_BUILD=$(BUILD) $(PYTHON) tests/mutants/run"

check-deps:
	@PYTHON=$(PYTHON) tests/ensure-deps.sh

# Planted bugs the tests must catch (tests/mutants/run: each mutant in a
# scratch copy of the tree, against the tests named for it; any survivor
# fails). make test runs it as one of its parts; this target runs it alone.
# MUTANTS="NAME ..." runs only those.
MUTANTS ?=
.PHONY: test-mutants
test-mutants: unit-tests
	KBENCH_BUILD=$(BUILD) $(PYTHON) tests/mutants/run $(foreach m,$(MUTANTS),--only $(m))

# The figures the README and the reference quote that the repository's data
# can show (the recorded run, the built-in drift prior), each against the
# bounds of its sentence, and the validation scripts that can run on the
# recorded run (tests/validation/recorded_figures.py; 2 s: make test runs it
# too, in tests/scripts/test_kb_validate.py); then the run-level model on the
# kept series in tests/validation/data/host-scale (run_level.py: every A/A
# split, every pair at one run a side, the kept slowdowns) and on synthetic
# runs with a known truth (simulate.py), each checking that
# tests/validation/README.md holds its tables word for word.
.PHONY: validate
validate:
	$(PYTHON) tests/validation/recorded_figures.py --check
	$(PYTHON) tests/validation/run_level.py --check >/dev/null
	$(PYTHON) tests/validation/simulate.py --check >/dev/null

# Extra kbench-run options, e.g. make run RUN_ARGS="--only lat_syscall".
RUN_ARGS ?=
# A name for the kernel under test, e.g. make run LABEL=patched: runs with
# different labels are different kernels in every report (kbench-run --label).
LABEL ?=
# make run's time budget in seconds: a first pass of 5 reps of every case,
# then more reps where the intervals are widest (kbench-run --budget).
BUDGET ?= 300
# make run's scaling cases (kbench-run --scaling: the default set at 1, 2, 4, ...
# and all CPUs; its 5-rep first pass, 20 cases, took 10.6 s of the 300 s on the
# 2-vCPU VM, more with more CPUs: SCALING= leaves them out).
SCALING ?= --scaling
# make quick's results root: kept apart from make run's results/<host>/...,
# so that a check never mixes with measurements (the scripts also never pool
# a quick run with full runs: meta.json says "quick": true).
QUICK_OUT ?= results/quick
QUICK_SAY := quick run (a check, not a measurement, kept apart from make run's results):

# numpy (the summary) and matplotlib (the charts and the page) for the
# Debian Python: when either is missing, make run installs it first, before
# anything is measured, where this user may (root or password-less sudo, and
# apt-get: scripts/install-packages.sh); AUTO_INSTALL=0 never installs.
AUTO_INSTALL ?= 1
PY_PACKAGES  := numpy:python3-numpy matplotlib:python3-matplotlib

# The driver prints the run directory on stdout (its only stdout); with
# Python, numpy and scripts/summarize present, their table replaces the
# driver's own (where numpy could not be installed, the driver's table and a
# hint how to get the full one). The status is the driver's, or the
# summary's if the driver succeeded. The last line says where the run is.
define run_suite
	@table=; if [ -f scripts/summarize ]; then \
	  missing=; for m in $(PY_PACKAGES); do \
	    $(PYTHON) -c "import $${m%%:*}" >/dev/null 2>&1 || missing="$$missing $${m#*:}"; \
	  done; \
	  if [ -n "$$missing" ] && [ "$(AUTO_INSTALL)" = 1 ] && [ "$(PYTHON)" = /usr/bin/python3 ]; then \
	    echo "kbench: for the summary, the comparisons and the page, installing:$$missing" >&2; \
	    scripts/install-packages.sh kbench $$missing; \
	  fi; \
	  if $(PYTHON) -c 'import numpy' >/dev/null 2>&1; then table=--no-table; else \
	    echo "kbench: $(PYTHON) has no numpy: the driver prints its own short table; for the full summary," \
	         "the comparisons and the page: apt-get install python3-numpy python3-matplotlib" \
	         "(make run does it as root or with password-less sudo)" >&2; \
	  fi; \
	  $(PYTHON) -c 'import matplotlib' >/dev/null 2>&1 || [ -z "$$table" ] || \
	    echo "kbench: $(PYTHON) has no matplotlib: the charts and the page need it: apt-get install python3-matplotlib" >&2; \
	fi; \
	dir=$$($(BUILD)/bin/kbench-run $$table $(1) $(if $(LABEL),--label '$(LABEL)') $(RUN_ARGS)); status=$$?; \
	if [ -n "$$table" ] && [ -n "$$dir" ]; then \
	  $(PYTHON) scripts/summarize "$$dir"; sstatus=$$?; [ $$status -eq 0 ] && status=$$sstatus; \
	fi; \
	[ -z "$$dir" ] || echo "kbench: $(if $(2),$(2) )results in $$dir" >&2; \
	exit $$status
endef

run: all
	$(call run_suite,--budget $(BUDGET) $(SCALING))

quick: all
	$(call run_suite,--quick --out $(QUICK_OUT),$(QUICK_SAY))

# ---- Another kernel without rebooting ----------------------------------------
#   make vm-run KERNEL=X [RUN_ARGS=...] [LABEL=...] [CPUS=N] [MEM=2G] [KERNEL_ARGS=...]
#                    X = a kernel image (bzImage, vmlinuz), a Debian kernel
#                    .deb, or a Debian kernel package name (apt-get download,
#                    never installed): the static suite in a QEMU guest of
#                    that kernel (KVM when it runs, else emulation, loudly),
#                    the run back in results/vm-<host>/<kernel>/ (scripts/vm-run;
#                    VM_OUT= another results root).
#   make vm-run KERNEL=X ARCH=arm64
#                    an arm64 kernel (Image, a linux-image-*-arm64 package or
#                    .deb) under qemu-system-aarch64 -M virt, emulated on an
#                    x86_64 host, with the aarch64 static suite (build/arm64);
#                    an arm64 package name or .deb says it without ARCH=.
#   make test-vm     boots one Debian cloud kernel package with a quick subset
#                    and checks the run end to end (downloads a kernel: not in
#                    make test). VM_TEST_KERNEL= chooses the package.
#   make test-vm-arm64  the same for one Debian arm64 kernel package, emulated
#                    (VM_TEST_KERNEL_ARM64=; 14 s here once the kernel is downloaded).
KERNEL ?=
CPUS   ?=
MEM    ?= 2G
VM_OUT ?= results
VM_TEST_KERNEL ?= linux-image-cloud-amd64
VM_TEST_KERNEL_ARM64 ?= linux-image-cloud-arm64
.PHONY: vm-run test-vm test-vm-arm64
vm-run:
	$(PYTHON) scripts/vm-run --out '$(VM_OUT)' --mem '$(MEM)' $(if $(KB_ARCH),--arch '$(KB_ARCH)') $(if $(CPUS),--cpus '$(CPUS)') $(if $(LABEL),--label '$(LABEL)') $(if $(KERNEL_ARGS),--append '$(KERNEL_ARGS)') '$(KERNEL)' -- $(RUN_ARGS)

test-vm:
	KBENCH_VM_TEST_KERNEL='$(VM_TEST_KERNEL)' $(PYTHON) -m pytest -q -rs -p no:cacheprovider tests/system/vm_check.py

# This machine's build lists the cases the guest's list is checked against.
test-vm-arm64: all
	KBENCH_VM_TEST_KERNEL='$(VM_TEST_KERNEL_ARM64)' KBENCH_VM_TEST_ARCH=arm64 $(PYTHON) -m pytest -q -rs -p no:cacheprovider tests/system/vm_check.py

#   make test-series-vm  a series of four Debian kernel packages and a git bisect
#                    run over two of them (the cloud kernel, then the PREEMPT_RT
#                    one), each booted by scripts/vm-run (tests/system/
#                    series_vm_check.py; downloads the kernels, four to five
#                    minutes under emulation: not in make test). SERIES_KERNELS= the
#                    packages, comma-separated.
SERIES_KERNELS ?=
.PHONY: test-series-vm
test-series-vm:
	$(if $(SERIES_KERNELS),KBENCH_SERIES_KERNELS='$(SERIES_KERNELS)') $(PYTHON) -m pytest -q -rs -p no:cacheprovider tests/system/series_vm_check.py

# ---- A campaign: several kernels booted in turn ------------------------------
#   make campaign KERNELS="A B [C ...]" [ROUNDS=2] [BUDGET=] [ONLY=] [LABEL=]
#                    boots each kernel in turn with kexec_file_load (as root), in a
#                    balanced order (A B B A ...), each step (one kbench-run) on a
#                    kexec boot of its own, resuming after every boot through a hook
#                    it installs and removes; at the end the default kernel again,
#                    the page and the comparison against A in results/campaign-ID/
#                    (src/reference/campaign.md). A kernel: an image path or an
#                    installed release, optionally ,initrd=FILE|none ,label=NAME.
#                    KERNEL_ARGS= extra command-line options; STEP_DEADLINE= seconds;
#                    WATCHDOG=auto|none|MODULE; DRY_RUN=1 prints the plan. Under sudo
#                    the tree is built as the user who ran sudo, never as root; the
#                    hook runs a static copy (build/static/bin/kbench-campaign).
#   make campaign-stop    ends the running campaign: the hook removed, the default kernel
#   make campaign-status  the latest campaign's boots, steps and ETA (CAMPAIGN=DIR another)
#   make campaign-report  its page and comparison again (CAMPAIGN=DIR)
#   make vm-campaign KERNELS="X Y"  the same plan, each step through make vm-run's
#                    scripts/vm-run in a QEMU guest: this machine does not reboot.
#   make test-campaign    a QEMU guest (TCG) kexecs through kernels that work, panic,
#                    hang, never reach the hook and fall back (downloads two Debian
#                    kernels: not in make test; tests/system/campaign_check.py).
KERNELS  ?=
ROUNDS   ?= 2
DRY_RUN  ?=
CAMPAIGN ?=
STEP_DEADLINE ?=
WATCHDOG ?=
CAMPAIGN_BIN := $(BUILD)/bin/kbench-campaign
CAMPAIGN_OBJ := $(patsubst src/%.cpp,$(BUILD)/obj/%.o,$(wildcard src/campaign/*.cpp))
CAMPAIGN_STATIC := build/static/bin/kbench-campaign
# The installed hook's copy: stop and status work with it even when the tree is gone.
CAMPAIGN_HOOK := /usr/local/sbin/kbench-campaign-hook
# What the user typed goes to the program through the environment, never
# through the shell's quoting: a KERNEL_ARGS or ONLY with a quote in it stays whole.
CAMPAIGN_RUN_ARGS = $(if $(BUDGET),--budget $(BUDGET)) $(if $(ONLY),--only "$$KB_ONLY") $(RUN_ARGS)
# ($(value X): a $ in them stays a $, as typed)
campaign vm-campaign: export KB_KERNEL_ARGS := $(value KERNEL_ARGS)
campaign vm-campaign: export KB_ONLY := $(value ONLY)
campaign vm-campaign: export KB_LABEL := $(value LABEL)
# Built by the user who ran sudo (SUDO_USER), so that sudo make campaign
# leaves no root-owned file in the tree.
campaign_as_user = if [ "$$(id -u)" = 0 ] && [ -n "$$SUDO_USER" ] && [ "$$SUDO_USER" != root ]; then \
	  sudo -u "$$SUDO_USER" $(MAKE) --no-print-directory $(1); else $(MAKE) --no-print-directory $(1); fi
.PHONY: campaign campaign-stop campaign-status campaign-report vm-campaign test-campaign campaign-build
all: $(CAMPAIGN_BIN)
$(CAMPAIGN_BIN): $(CAMPAIGN_OBJ) $(DRIVER_LIB) $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) $(LDFLAGS) $(KB_LDFLAGS) -o $@ $^
campaign-build:
	@$(call campaign_as_user,all) && $(call campaign_as_user,STATIC=1 $(CAMPAIGN_STATIC))
campaign: campaign-build
	$(CAMPAIGN_STATIC) start --rounds '$(ROUNDS)' --bin-dir '$(BUILD)/bin' --repo '$(CURDIR)' \
	  $(if $(LABEL),--label "$$KB_LABEL") $(if $(KERNEL_ARGS),--append "$$KB_KERNEL_ARGS") \
	  $(if $(STEP_DEADLINE),--step-deadline '$(STEP_DEADLINE)') $(if $(WATCHDOG),--watchdog '$(WATCHDOG)') \
	  $(if $(DRY_RUN),--dry-run) --python '$(PYTHON)' $(KERNELS) -- $(CAMPAIGN_RUN_ARGS) $(SCALING)
campaign-stop:
	@if [ -x $(CAMPAIGN_HOOK) ]; then echo "$(CAMPAIGN_HOOK) stop"; $(CAMPAIGN_HOOK) stop; \
	 else $(call campaign_as_user,$(CAMPAIGN_BIN)) && echo "$(CAMPAIGN_BIN) stop" && $(CAMPAIGN_BIN) stop; fi
campaign-status:
	@$(call campaign_as_user,$(CAMPAIGN_BIN)) && $(CAMPAIGN_BIN) status $(CAMPAIGN)
campaign-report: $(CAMPAIGN_BIN)
	$(CAMPAIGN_BIN) report $(CAMPAIGN)
vm-campaign: $(CAMPAIGN_BIN)
	$(CAMPAIGN_BIN) start --vm --rounds '$(ROUNDS)' $(if $(LABEL),--label "$$KB_LABEL") $(if $(DRY_RUN),--dry-run) --python '$(PYTHON)' \
	  $(if $(STEP_DEADLINE),--step-deadline '$(STEP_DEADLINE)') \
	  --vm-arg --mem --vm-arg '$(MEM)' $(if $(CPUS),--vm-arg --cpus --vm-arg '$(CPUS)') $(if $(KERNEL_ARGS),--vm-arg --append --vm-arg "$$KB_KERNEL_ARGS") \
	  $(KERNELS) -- $(CAMPAIGN_RUN_ARGS)
test-campaign:
	$(PYTHON) -m pytest -q -s -rs -p no:cacheprovider tests/system/campaign_check.py

# ---- Find the commit ---------------------------------------------------------
#   make bisect-step TREE=~/linux ONLY='^lat_syscall stat$$' [RECORD=good|bad] [ARGS=...]
#                    one step of scripts/bisect-step in the kernel tree TREE: with
#                    RECORD, measure its commit as the good or bad reference;
#                    without, judge it against them.  For git bisect run, call
#                    scripts/bisect-step itself: make turns every failure into
#                    exit 2, which git would read as "bad".
TREE   ?= .
ONLY   ?=
RECORD ?=
.PHONY: bisect-step
bisect-step:
	$(PYTHON) scripts/bisect-step --tree '$(TREE)' --only '$(ONLY)' $(if $(RECORD),--record '$(RECORD)') $(ARGS)

# ---- In a CI lab -------------------------------------------------------------
#   make test-lava   a real LAVA dispatcher (Debian's lava-dispatcher, installed
#                    with apt-get when missing, as root) runs the kbench job
#                    (scripts/lab/lava) on a QEMU guest of a Debian cloud kernel:
#                    a quick subset and a planted failure, checked in LAVA's
#                    results; the run comes back (scripts/lab/lava/lava-local;
#                    downloads a kernel: not in make test). LAVA_TEST_KERNEL=
#                    chooses the package.
LAVA_TEST_KERNEL ?= linux-image-cloud-amd64
.PHONY: test-lava
test-lava:
	KBENCH_LAVA_TEST_KERNEL='$(LAVA_TEST_KERNEL)' $(PYTHON) -m pytest -q -s -rs -p no:cacheprovider tests/system/lava_check.py

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
	install -d $(DESTDIR)$(PREFIX)/lib/kbench/scripts/kbench/model $(DESTDIR)$(PREFIX)/lib/kbench/scripts/kbench/views
	install -m 644 scripts/kbench/*.py $(DESTDIR)$(PREFIX)/lib/kbench/scripts/kbench/
	install -m 644 scripts/kbench/model/*.py scripts/kbench/model/drift_prior.json $(DESTDIR)$(PREFIX)/lib/kbench/scripts/kbench/model/
	install -m 644 scripts/kbench/views/*.py $(DESTDIR)$(PREFIX)/lib/kbench/scripts/kbench/views/
	for s in summarize compare plot report drift-prior; do \
	  install -m 755 scripts/$$s $(DESTDIR)$(PREFIX)/lib/kbench/scripts/$$s && \
	  ln -sf ../lib/kbench/scripts/$$s $(DESTDIR)$(PREFIX)/bin/kbench-$$s || exit 1; \
	done

# ---- Hardening: sanitizers and fuzzing --------------------------------------
#   make test-asan   harness, binaries, driver and tests built with ASan+UBSan
#                    into build/asan: unit tests, the fuzz corpus replayed,
#                    the pytest tests that run the build and a quick driver
#                    run; any sanitizer report fails it. `make test` runs it
#                    beside the plain pass.
#   make test-tsan   the binaries that use threads, under ThreadSanitizer
#                    (build/tsan), every case once.
#   make fuzz        libFuzzer (clang) on each tests/fuzz/fuzz_*.cpp for
#                    FUZZ_SECONDS s; new inputs go to build/fuzz/corpus,
#                    `make fuzz-merge` folds them into tests/fuzz/corpus.
# ASan and -static do not mix: these builds ignore STATIC. The two helpers
# stay plain static C programs in every build.
ASAN_BUILD    ?= build/asan
TSAN_BUILD    ?= build/tsan
FUZZ_BUILD    ?= build/fuzz
FUZZ_CXX      ?= clang++
FUZZ_SECONDS  ?= 60
# GCC warns falsely about <regex> under -fsanitize (maybe-uninitialized).
# ASan+UBSan at -O0: they check at least as much as at -O1, and the build
# takes half the time (127 s of CPU against 235 s; the tests under it 5% more).
SAN_CXXFLAGS  := -g -fno-omit-frame-pointer $(if $(findstring clang,$(CXX)),,-Wno-maybe-uninitialized)
# -g1: a report's stacks keep their files and lines; the full debug
# information would cost a tenth more compile time.
ASAN_CXXFLAGS := -O0 $(SAN_CXXFLAGS) -g1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
# Linked with the sanitizer runtimes inside and not position-independent: an
# ASan+UBSan process starts and ends in 52 ms of CPU here instead of 80 (fewer
# relocations; at exit LeakSanitizer scans every module's writable data, and
# the shared libasan and libubsan bring 12 MB of it). The pass starts
# thousands of them. (clang links its runtime statically anyway.)
ASAN_LDFLAGS  := -no-pie $(if $(findstring clang,$(CXX)),,-static-libasan -static-libubsan)
TSAN_CXXFLAGS := -O1 $(SAN_CXXFLAGS) -fsanitize=thread
FUZZ_CXXFLAGS := -O1 -g -fno-omit-frame-pointer -Wno-error \
                 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_NAMES    := $(patsubst tests/fuzz/%.cpp,%,$(wildcard tests/fuzz/fuzz_*.cpp))
REPLAY_BIN    := $(patsubst %,$(BUILD)/tests/replay_%,$(FUZZ_NAMES))
TSAN_BENCH    := $(patsubst src/bench/%.cpp,%,$(shell grep -lE 'std::(j?thread|async)|pthread_create' src/bench/*.cpp 2>/dev/null))
# The sanitizer builds compile in parallel unless make already runs with -j.
SAN_MAKE       = $(MAKE) --no-print-directory STATIC= $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(NPROC))

.PHONY: test-asan test-tsan fuzz fuzz-merge fuzz-replay

$(DRIVER_LIB): $(filter-out %/main.o,$(DRIVER_OBJ))
	@mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# A fuzz target with a plain main() that replays files (tests/fuzz/replay.cpp).
$(BUILD)/tests/replay_%: $(BUILD)/obj/tests/fuzz/%.o $(BUILD)/obj/tests/fuzz/replay.o $(DRIVER_LIB) $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) $(LDFLAGS) $(KB_LDFLAGS) -o $@ $^

fuzz-replay: $(REPLAY_BIN)

# A libFuzzer binary (in the clang build only).
$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(DRIVER_LIB) $(HARNESS_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(CXXFLAGS) -fsanitize=fuzzer $(LDFLAGS) $(KB_LDFLAGS) -o $@ $^

# make in the ASan build (its CATCH_MAIN_FROM: see the Catch2 runner above)
ASAN_MAKE = $(SAN_MAKE) BUILD=$(ASAN_BUILD) UNITY=1 CXXFLAGS="$(ASAN_CXXFLAGS)" LDFLAGS="$(ASAN_LDFLAGS)"
ASAN_PASS = PYTHON=$(PYTHON) KBENCH_TEST_CXXFLAGS="$(ASAN_CXXFLAGS)" KBENCH_TEST_LDFLAGS="$(ASAN_LDFLAGS)" \
            tests/system/sanitizer-pass.sh asan $(ASAN_BUILD)
.PHONY: asan-build asan-objects asan-unit-objects
asan-build: $(CATCH_MAIN_OBJ)
	+$(ASAN_MAKE) CATCH_MAIN_FROM=$(CATCH_MAIN_OBJ) all unit-tests fuzz-replay
# the part of it that needs no Catch2 (make test builds it while the test
# packages install)
asan-objects:
	+$(ASAN_MAKE) all fuzz-replay
asan-unit-objects: $(CATCH_MAIN_OBJ)
	+$(ASAN_MAKE) CATCH_MAIN_FROM=$(CATCH_MAIN_OBJ) unit-objects

test-asan: check-deps
	+$(MAKE) --no-print-directory asan-build
	$(ASAN_PASS)

test-tsan:
	$(SAN_MAKE) BUILD=$(TSAN_BUILD) CXXFLAGS="$(TSAN_CXXFLAGS)" \
	  $(patsubst %,$(TSAN_BUILD)/bin/%,$(TSAN_BENCH)) $(TSAN_BUILD)/libexec/kbench-exec-helper
	PYTHON=$(PYTHON) tests/system/sanitizer-pass.sh tsan $(TSAN_BUILD) $(TSAN_BENCH)

fuzz:
	@command -v $(FUZZ_CXX) >/dev/null 2>&1 || { echo "make fuzz needs clang: apt-get install -y clang" >&2; exit 1; }
	$(SAN_MAKE) BUILD=$(FUZZ_BUILD) CXX=$(FUZZ_CXX) CXXFLAGS="$(FUZZ_CXXFLAGS)" $(patsubst %,$(FUZZ_BUILD)/fuzz/%,$(FUZZ_NAMES))
	@for t in $(FUZZ_NAMES); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/artifacts; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  nice -n 19 $(FUZZ_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/$$t.dict \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

fuzz-merge:
	@for t in $(FUZZ_NAMES); do \
	  $(FUZZ_BUILD)/fuzz/$$t -merge=1 tests/fuzz/corpus/$$t $(FUZZ_BUILD)/corpus/$$t || exit 1; \
	done

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
