# ebprof: one non-recursive Makefile. Build output goes under build/.
#
#   make            the CLI (build/ebprof) and the collectd plugin (build/ebprof.so)
#   make check      every test: unit tests under ASan+UBSan (tests/unit, then
#                   tests/root on real BPF), then end to end
#   make check-kernels  the end-to-end tests inside Debian 12's 6.1 (qemu)
#   make deps       install the Debian packages (safe to run again), then
#                   check that every collectd plugin the tests load can load
#   make demo       collectd with the plugin on examples/collectd.conf
#   make install    ebprof.so into collectd's PluginDir, ebprof into $(PREFIX)/bin,
#                   ebprof(1) and ebprof-collectd(5) into $(PREFIX)/share/man
#   make deb        the same as a Debian package, build/ebprof_VERSION_ARCH.deb
#   make lint       cppcheck and clang-tidy

CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PREFIX   ?= /usr/local
PLUGINDIR ?= /usr/lib/collectd
B        ?= build
VERSION  := 0.1.0

WARN     := -Wall -Wextra -Werror -Wno-missing-field-initializers
BASEFLAGS := -std=c11 -D_GNU_SOURCE -g -fPIC -fvisibility=hidden $(WARN) -I. -I$(B)
CFLAGS   ?= -O2
LIBS     := -lbpf -ldw -lelf -lz -llzma -lpthread
# The terminal library of `ebprof top`: the CLI links it, the plugin never does.
CLI_LIBS := -lncursesw
SANFLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# collectd 5.12 headers as Debian installs them; HAVE_CONFIG_H pulls in its config.h.
COLLECTD_CFLAGS := -DHAVE_CONFIG_H -I/usr/include/collectd/core -I/usr/include/collectd

# The library: everything below the composition roots (plugin/, cli/).
CORE_SRCS := $(filter-out %.bpf.c,$(wildcard bpf/*.c)) $(wildcard symbolizer/*.c) \
	     $(wildcard render/*.c)
PLUGIN_SRCS := $(wildcard plugin/*.c)
CLI_SRCS := $(wildcard cli/*.c)
# tests/unit: pure unit tests, any user, no BPF. tests/root: unit tests on
# real BPF (the sampler, capture, the unwinder's maps, the plugin's init,
# the kernel probes), which need root (or CAP_BPF and CAP_PERFMON).
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
ROOT_UNIT_SRCS := $(wildcard tests/root/test_*.c)
STUB_SRCS := $(wildcard tests/unit/stub_*.c)

CORE_OBJS := $(CORE_SRCS:%.c=$(B)/obj/%.o)
PLUGIN_OBJS := $(PLUGIN_SRCS:%.c=$(B)/obj/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(B)/obj/%.o)
SAN_OBJS := $(CORE_SRCS:%.c=$(B)/san/%.o) $(PLUGIN_SRCS:%.c=$(B)/san/%.o) \
	    $(STUB_SRCS:%.c=$(B)/san/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
ROOT_UNIT_BINS := $(ROOT_UNIT_SRCS:tests/root/%.c=$(B)/tests/root/%)

SKEL := $(B)/bpf/ebprof.skel.h

.PHONY: all examples check preflight unit unit-root e2e deps install uninstall deb demo lint clean bench
.DEFAULT_GOAL := all

all: $(B)/ebprof $(B)/ebprof.so examples

# --- BPF: vmlinux.h from this kernel's BTF, the object, the skeleton ------
$(B)/bpf/vmlinux.h:
	@mkdir -p $(@D)
	@test -r /sys/kernel/btf/vmlinux || { echo "no /sys/kernel/btf/vmlinux: the kernel needs CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/bpf/ebprof.bpf.o: bpf/ebprof.bpf.c bpf/offcpu.bpf.h bpf/python.bpf.h bpf/ebprof.h bpf/unwind.h $(B)/bpf/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I. -I$(B)/bpf -Wall -Werror -c $< -o $@

$(SKEL): $(B)/bpf/ebprof.bpf.o
	$(BPFTOOL) gen skeleton $< name ebprof_bpf > $@.tmp && mv $@.tmp $@

# --- user space ------------------------------------------------------------
$(B)/obj/%.o: %.c | $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/plugin/%.o: plugin/%.c | $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CPPFLAGS) $(CFLAGS) $(COLLECTD_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libebprof.a: $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/ebprof: $(CLI_OBJS) $(B)/libebprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(B)/libebprof.a $(LIBS) $(CLI_LIBS)

# The plugin exports module_register only (-fvisibility=hidden everywhere else).
$(B)/ebprof.so: $(PLUGIN_OBJS) $(B)/libebprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(PLUGIN_OBJS) $(B)/libebprof.a $(LIBS)

# --- tests: unit tests build against an ASan+UBSan copy of every module ----
$(B)/san/%.o: %.c | $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(SANFLAGS) -MMD -MP -c $< -o $@

$(B)/san/plugin/%.o: plugin/%.c | $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(SANFLAGS) $(COLLECTD_CFLAGS) -MMD -MP -c $< -o $@

$(B)/san/tests/unit/%.o: tests/unit/%.c | $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(SANFLAGS) $(COLLECTD_CFLAGS) -MMD -MP -c $< -o $@

$(B)/san/tests/root/%.o: tests/root/%.c | $(SKEL)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(SANFLAGS) $(COLLECTD_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libebprof-san.a: $(SAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/tests/%: $(B)/san/tests/unit/%.o $(B)/libebprof-san.a
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(B)/libebprof-san.a -lcmocka $(LIBS)

$(B)/tests/root/%: $(B)/san/tests/root/%.o $(B)/libebprof-san.a
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -o $@ $< $(B)/libebprof-san.a -lcmocka $(LIBS)

# Fixture programs for the unit tests, built by the test run from C sources:
# each tests/fixtures/NAME.c becomes a PIE, a non-PIE executable and a
# shared object, with frame pointers and symbols.
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURE_FLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline
FIXTURES := $(foreach f,$(FIXTURE_SRCS:tests/fixtures/%.c=%),\
	$(B)/fixtures/$(f)-pie $(B)/fixtures/$(f)-nopie $(B)/fixtures/lib$(f).so)

$(B)/fixtures/%-pie: tests/fixtures/%.c
	@mkdir -p $(@D)
	$(CC) $(FIXTURE_FLAGS) -fPIE -pie -o $@ $<
$(B)/fixtures/%-nopie: tests/fixtures/%.c
	@mkdir -p $(@D)
	$(CC) $(FIXTURE_FLAGS) -fno-pie -no-pie -o $@ $<
$(B)/fixtures/lib%.so: tests/fixtures/%.c
	@mkdir -p $(@D)
	$(CC) $(FIXTURE_FLAGS) -fPIC -shared -DFIXTURE_SHARED -o $@ $<

# cfifix's CFI in .debug_frame rather than .eh_frame (tests/unit/test_cfi.c).
FIXTURES += $(B)/fixtures/cfifix-debugframe
$(B)/fixtures/cfifix-debugframe: tests/fixtures/cfifix.c
	@mkdir -p $(@D)
	$(CC) $(FIXTURE_FLAGS) -fno-asynchronous-unwind-tables -DCFIX_DEBUG_FRAME -o $@ $<

$(UNIT_BINS) $(ROOT_UNIT_BINS): | $(FIXTURES)

# Workloads with known answers (examples/*.c), four builds each:
#   NAME         GCC -fno-omit-frame-pointer, as distributions build; GCC 12
#                still sets up no frame in leaf functions (see README)
#   NAME-leaffp  clang -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer:
#                every frame walkable (GCC 12 ignores the leaf flag)
#   NAME-nofp    GCC -fomit-frame-pointer: a frame-pointer walk truncates
#                its stacks; unwind tables do not
#   NAME-clangnofp  clang -fomit-frame-pointer, the same for clang's tables
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_FLAGS := -O2 -g -fno-optimize-sibling-calls
EXAMPLES := $(foreach v,% %-leaffp %-nofp %-clangnofp,\
	$(EXAMPLE_SRCS:examples/%.c=$(B)/examples/$(v)))

$(B)/examples/%-leaffp: examples/%.c
	@mkdir -p $(@D)
	$(CLANG) $(EXAMPLE_FLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o $@ $<
$(B)/examples/%-nofp: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_FLAGS) -fomit-frame-pointer -o $@ $<
$(B)/examples/%-clangnofp: examples/%.c
	@mkdir -p $(@D)
	$(CLANG) $(EXAMPLE_FLAGS) -fomit-frame-pointer -o $@ $<
$(B)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_FLAGS) -fno-omit-frame-pointer -o $@ $<

# The workloads with a known split share examples/clocksplit.h.
$(EXAMPLES): examples/clocksplit.h

examples: $(EXAMPLES)

# Oracles the end-to-end tests run: tests/oracle/NAME.c against build/libebprof.a.
ORACLE_SRCS := $(wildcard tests/oracle/*.c)
ORACLES := $(ORACLE_SRCS:tests/oracle/%.c=$(B)/oracle/%)

$(B)/oracle/%: tests/oracle/%.c $(B)/libebprof.a
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< $(B)/libebprof.a $(LIBS) $(ORACLE_LIBS)

# elfutils' libdw (libdw-dev, a test-only dependency: tests/deps.sh).
$(B)/oracle/unwind_libdw: ORACLE_LIBS := -ldw

.PHONY: oracles
oracles: $(ORACLES)

unit: $(UNIT_BINS)
	@tests/run.sh unit $(UNIT_BINS)

unit-root: $(ROOT_UNIT_BINS)
	@tests/run.sh unit-root $(ROOT_UNIT_BINS)

e2e: preflight
	@$(MAKE) --no-print-directory all $(ORACLES)
	@tests/run.sh e2e $(sort $(wildcard tests/e2e/*.sh))

# The fresh-machine guard first, before anything is built: a collectd
# plugin that cannot load fails here, naming its library and package, not
# in a test minutes later.
preflight:
	@tests/preflight.sh

check: preflight
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(ROOT_UNIT_BINS) $(ORACLES)
	@tests/run.sh all $(UNIT_BINS) $(ROOT_UNIT_BINS) $(sort $(wildcard tests/e2e/*.sh))

# --- other kernels (tests/kernel/) ------------------------------------------
# `make check` runs tests/e2e/90_kernel_61_smoke.sh: a smoke suite inside
# Debian 12's own 6.1 kernel, booted in qemu (tests/kernel/vm.sh). `make
# check-kernels` runs the whole end-to-end suite (KERNEL_TESTS) in that
# guest, which takes hours under TCG (see README); its logs land in
# build/test-logs-kernel/. KERNEL_PACKAGE picks another Debian kernel
# package (default: the newest linux-image-6.1.0-*-amd64-unsigned).
KERNEL_TESTS ?= $(filter-out %_kernel_61_smoke.sh,$(sort $(wildcard tests/e2e/*.sh)))
KERNEL_TIMEOUT ?= 21600
KERNEL_PACKAGE ?=
.PHONY: check-kernels
check-kernels: all fuzz-build bench-tools
	@rm -rf $(B)/test-logs-kernel && mkdir -p $(B)/test-logs-kernel
	@tests/kernel/vm.sh -t $(KERNEL_TIMEOUT) -m 4096 -w $(B)/test-logs-kernel \
		$(if $(KERNEL_PACKAGE),-k $(KERNEL_PACKAGE)) -- \
		env TEST_LOGS=$(B)/test-logs-kernel tests/run.sh kernel $(KERNEL_TESTS)

# --- fuzzing and soak (tests/fuzz, tests/e2e/6*_reliability_*) -------------
# libFuzzer targets, one per parser of outside input, built with clang and
# ASan+UBSan from the module sources they need. `make fuzz` runs each for
# FUZZ_SECONDS on its seed corpus; `make check` runs each briefly through
# tests/e2e/60_reliability_fuzz_smoke.sh. `make soak DURATION=1h` is the
# long soak (tests/bench/soak.sh: 1h, 90m, 6h or seconds), its CSV, summary
# and plots in build/soak/; the 2-minute form is 61_reliability_soak.sh.
FUZZ_SECONDS ?= 600
DURATION ?= 1h
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(filter-out $(B)/fuzz/fuzz_file,$(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz/%))
FUZZ_LIB_SRCS := bpf/grow.c $(wildcard symbolizer/*.c) $(wildcard render/*.c) \
	plugin/config.c tests/unit/stub_collectd.c tests/fuzz/fuzz_file.c
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(B)/fuzzobj/%.o: %.c | $(SKEL)
	@mkdir -p $(@D)
	$(CLANG) $(BASEFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(COLLECTD_CFLAGS) -MMD -MP -c $< -o $@

$(B)/libebprof-fuzz.a: $(FUZZ_LIB_SRCS:%.c=$(B)/fuzzobj/%.o)
	@rm -f $@
	ar rcs $@ $^

$(B)/fuzz/%: $(B)/fuzzobj/tests/fuzz/%.o $(B)/libebprof-fuzz.a
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(B)/libebprof-fuzz.a $(LIBS)

.PHONY: fuzz fuzz-build soak
fuzz-build: $(FUZZ_BINS) $(FIXTURES)

fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

soak: all
	bash tests/bench/soak.sh $(DURATION)

# --- benchmarks (tests/bench/) ---------------------------------------------
# `make bench` measures ebprof beside perf, bpftrace and the floor (an empty
# BPF program on the same CPU-clock event), prints a table, and writes
# build/bench/bench.csv and build/bench/scaling.svg (root). It is the quick
# survey (bench.py --quick: 3 pairs a figure, shorter runs; about 15 min);
# `make bench-full` is the full run (5 pairs, every frequency and depth, the
# slowdown section: 45 min, 2,721 s, in its last run). Each figure the README quotes
# names its own section's command, with the pairs that resolve it.
# `make bench-smoke` runs every row for a few seconds; `make check` runs it
# through tests/e2e/70_bench_smoke.sh so that the rows cannot rot.
# The benchmark's own C tools (make lint checks them too).
BENCH_SRCS := $(filter-out %.bpf.c,$(wildcard tests/bench/*.c))
BENCH_TOOLS := $(B)/bench/floor $(B)/bench/floor.bpf.o $(B)/bench/findvma.bpf.o $(B)/bench/work \
	$(B)/bench/manystacks $(B)/bench/symbench $(B)/bench/unwbench $(B)/bench/pingpong \
	$(B)/bench/ticks $(B)/bench/idlers $(B)/bench/hostcost $(B)/bench/vmaiter \
	$(B)/bench/vmaiter.bpf.o

$(B)/bench/floor.bpf.o: tests/bench/floor.bpf.c
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -I/usr/include/$(shell $(CC) -dumpmachine) -Wall -Werror \
		-c $< -o $@

$(B)/bench/findvma.bpf.o $(B)/bench/vmaiter.bpf.o: $(B)/bench/%.bpf.o: tests/bench/%.bpf.c \
		$(B)/bpf/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(B)/bpf -Wall -Werror -c $< -o $@

$(B)/bench/floor $(B)/bench/vmaiter: $(B)/bench/%: tests/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< $(LIBS)

$(B)/bench/work $(B)/bench/manystacks $(B)/bench/pingpong $(B)/bench/ticks \
$(B)/bench/idlers $(B)/bench/hostcost: $(B)/bench/%: tests/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) -O2 -fno-omit-frame-pointer -o $@ $< -lpthread

$(B)/bench/symbench $(B)/bench/unwbench: $(B)/bench/%: tests/bench/%.c $(B)/libebprof.a
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< $(B)/libebprof.a $(LIBS)

.PHONY: bench-tools bench-smoke bench-full
bench-tools: all $(BENCH_TOOLS)

bench:
	@tests/deps.sh
	@$(MAKE) --no-print-directory bench-tools
	python3 tests/bench/bench.py --quick $(BENCH_ARGS)

bench-full:
	@tests/deps.sh
	@$(MAKE) --no-print-directory bench-tools
	python3 tests/bench/bench.py $(BENCH_ARGS)

bench-smoke: bench-tools
	python3 tests/bench/bench.py --smoke $(BENCH_ARGS)

# Accuracy against perf and against known answers (tests/e2e/2*_accuracy_*.sh,
# which `make check` runs too), ending with a table: expected, ebprof, perf.
.PHONY: accuracy
accuracy: all
	@tests/accuracy/run.sh

# --- set-up, install, demo -------------------------------------------------
deps:
	@tests/deps.sh

MANDIR ?= $(PREFIX)/share/man
# The Debian package puts the plugin at the same path: refuse to overwrite
# a file dpkg owns (dpkg -r would then delete our copy, and dpkg -V flag it).
install: all
	@if [ -z "$(DESTDIR)" ] && owner=$$(dpkg-query -S $(PLUGINDIR)/ebprof.so 2>/dev/null); then \
		echo "make install: $(PLUGINDIR)/ebprof.so belongs to the Debian package" \
			"$${owner%%:*}: remove it first (dpkg -r $${owner%%:*}), or install" \
			"elsewhere (DESTDIR=..., PLUGINDIR=...)" >&2; exit 1; fi
	install -d $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5
	install -m 0644 $(B)/ebprof.so $(DESTDIR)$(PLUGINDIR)/ebprof.so
	install -m 0755 $(B)/ebprof $(DESTDIR)$(PREFIX)/bin/ebprof
	install -m 0644 cli/ebprof.1 $(DESTDIR)$(MANDIR)/man1/ebprof.1
	install -m 0644 plugin/ebprof-collectd.5 $(DESTDIR)$(MANDIR)/man5/ebprof-collectd.5

uninstall:
	rm -f $(DESTDIR)$(PLUGINDIR)/ebprof.so $(DESTDIR)$(PREFIX)/bin/ebprof \
		$(DESTDIR)$(MANDIR)/man1/ebprof.1 $(DESTDIR)$(MANDIR)/man5/ebprof-collectd.5

# The Debian package (contrib/debian/mkdeb.sh says what goes where and why
# dpkg-deb rather than debhelper). Its binaries are built apart, under
# $(B)/deb-build, with Debian's own flags (hardening=+all), so the package
# is built the way Debian builds packages and `make` keeps its flags.
DEB_FLAGS = DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get
deb:
	@command -v dpkg-buildflags >/dev/null || { echo "make deb: needs dpkg-dev (make deps)" >&2; exit 1; }
	$(MAKE) --no-print-directory B=$(B)/deb-build CFLAGS="$$($(DEB_FLAGS) CFLAGS)" \
		CPPFLAGS="$$($(DEB_FLAGS) CPPFLAGS)" LDFLAGS="$$($(DEB_FLAGS) LDFLAGS)" \
		$(B)/deb-build/ebprof $(B)/deb-build/ebprof.so
	contrib/debian/mkdeb.sh $(B)/deb-build $(B) $(VERSION)

demo: all
	@examples/demo.sh

lint: $(SKEL)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem -I. -I$(B) -D__x86_64__ $(CORE_SRCS) $(CLI_SRCS) \
		$(BENCH_SRCS)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem -I. -I$(B) -D__x86_64__ $(COLLECTD_CFLAGS) \
		$(PLUGIN_SRCS)
	bash tests/lint-tidy.sh $(CORE_SRCS) $(CLI_SRCS) $(BENCH_SRCS) -- $(BASEFLAGS)
	bash tests/lint-tidy.sh $(PLUGIN_SRCS) -- $(BASEFLAGS) $(COLLECTD_CFLAGS)

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
