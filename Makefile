# xdp-rl — build, test, demo. Quiet unless V=1.
CLANG     ?= clang
CC        ?= gcc
# SANITIZE=1: the CLI, the daemon, the library and the tools built with
# AddressSanitizer and UndefinedBehaviorSanitizer, in a tree of their own
# (.output/san) that `make test SANITIZE=1` runs the suites on.
ifeq ($(SANITIZE),1)
OUTPUT    := .output/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
OUTPUT    := .output
SAN_FLAGS :=
endif
BPFTOOL   ?= bpftool
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

LIBBPF_CFLAGS := $(shell pkg-config --cflags libbpf 2>/dev/null)
LIBBPF_LIBS   := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
# libxrl's rtnetlink (the clsact fallback of hook tc) too
LIBBPF_LIBS   += -lmnl

INCLUDES  := -Iinclude -Iuser/lib -I$(OUTPUT)
CFLAGS    ?= -O2 -g
# -MMD -MP: each object's header dependencies, written beside it (.d) and
# read back below, so that a header's change rebuilds its users only
DEPFLAGS  := -MMD -MP
# CPPFLAGS and LDFLAGS come from the environment when there are any (the
# Debian package's dpkg-buildflags: _FORTIFY_SOURCE, relro, bindnow)
CFLAGS    += $(CPPFLAGS) $(DEPFLAGS) $(SAN_FLAGS) -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Wno-missing-field-initializers -Werror -std=gnu11 $(INCLUDES) $(LIBBPF_CFLAGS)
# BPF atomics (compare-and-swap) need -mcpu=v3.
# BPF_EXTRA_CFLAGS: the package's -ffile-prefix-map (debian/rules)
BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	      -Iinclude -Ibpf $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH)) $(BPF_EXTRA_CFLAGS)

PREFIX    ?= /usr/local
# The version, defined here only: `git describe` in a git clone (a v* tag
# and what follows it, or RELEASE and the commit), RELEASE outside one.
RELEASE   := 0.1.0
VERSION   ?= $(or $(shell git describe --tags --always --dirty 2>/dev/null | \
		sed -e 's/^v\([0-9]\)/\1/;t' -e 's/^/$(RELEASE)-g/'),$(RELEASE))

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_OBJS  := $(OUTPUT)/xdp_rl.bpf.o
TEST_BPF  := $(OUTPUT)/xrl_test_progs.bpf.o
SKEL      := $(OUTPUT)/xdp_rl.skel.h $(OUTPUT)/xrl_emit.skel.h
# user/lib: libxrl, every map and attach operation, the grammar and the
# config reader; user/rlctl and user/rld: the two thin programs on top.
LIB_SRCS  := $(sort $(shell find user/lib -name '*.c'))
LIB_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(LIB_SRCS))
CLI_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(wildcard user/rlctl/*.c))
RLD_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(wildcard user/rld/*.c))
LIBXRL    := $(OUTPUT)/libxrl.a
CLI       := $(OUTPUT)/xdp-rlctl
DAEMON    := $(OUTPUT)/xdp-rld
# bash completion, written from the grammar's table by a generator
COMPGEN   := $(OUTPUT)/gen-completion
COMPLETION := $(OUTPUT)/xdp-rlctl.bash
CHECKS    := $(OUTPUT)/test_meter $(OUTPUT)/test_grammar $(OUTPUT)/test_classes $(OUTPUT)/test_deciders $(OUTPUT)/test_testlib \
	     $(OUTPUT)/test_kernel $(OUTPUT)/test_pcapw $(OUTPUT)/test_setfile \
	     $(OUTPUT)/test_suggest
TESTS     := $(CHECKS) $(OUTPUT)/test_prog $(OUTPUT)/udpflood $(OUTPUT)/xdp_deny_port.bpf.o $(OUTPUT)/microbench $(OUTPUT)/casbench $(OUTPUT)/verifier-stats \
	     $(OUTPUT)/xrl-flood $(OUTPUT)/xdp-ref $(OUTPUT)/udpsink $(OUTPUT)/xrl-fuzz $(OUTPUT)/setgen \
	     $(OUTPUT)/xdp_pass.bpf.o $(OUTPUT)/xdp_drop.bpf.o $(OUTPUT)/xdp_tx.bpf.o \
	     $(OUTPUT)/tc_pass.bpf.o $(OUTPUT)/tcx-attach

.PHONY: all programs deb clean check lint test demo deps install microbench bench fuzz fuzz-parsers demo-fleet verifier-stats FORCE
# the BPF objects and their skeletons, reached through pattern rules, are
# kept; every other file is a target of its own, so a missing object (a
# source moved or added) is built, not skipped as an unneeded intermediate
BPF_SRCS  := $(notdir $(wildcard bpf/*.bpf.c tests/*/*.bpf.c))
.SECONDARY: $(addprefix $(OUTPUT)/,$(BPF_SRCS:.bpf.c=.bpf.o) $(BPF_SRCS:.bpf.c=.skel.h))
# a recipe that fails leaves no half-written target behind
.DELETE_ON_ERROR:
all: $(CLI) $(DAEMON) $(COMPLETION) $(TESTS)
# what make install and the Debian package install
programs: $(CLI) $(DAEMON) $(COMPLETION)

deps:
	$(Q)scripts/deps.sh

$(OUTPUT):
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c bpf/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.bpf.o: tests/bpf/%.bpf.c bpf/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.bpf.o: tests/tools/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$(basename $(basename $(notdir $<)))) > $@.tmp && mv $@.tmp $@

# the skeleton and the version header are generated: made before any
# object compiles, and, through the .d files, rebuild only their users.
# An object without its .d file (deleted, or built before there were any)
# is rebuilt, so that it gets one; clang writes the .d after the object,
# hence the touch. The old object goes first: gcc leaves it in place when
# the compile fails, and .DELETE_ON_ERROR removes only what a recipe changed.
$(OUTPUT)/%.o: user/%.c $(OUTPUT)/%.d | $(SKEL) $(OUTPUT)/xrl_version.h $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && $(CC) $(CFLAGS) -I$(<D) -c $< -o $@ && touch $@

# rewritten when VERSION changes only, so that nothing else rebuilds
$(OUTPUT)/xrl_version.h: FORCE | $(OUTPUT)
	$(Q)echo '#define XRL_VERSION "$(VERSION)"' >$@.tmp && \
		{ cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

# the list of the library's objects, rewritten when it changes only: a
# source removed or moved rebuilds the archive without its old object
$(OUTPUT)/libxrl.objs: FORCE | $(OUTPUT)
	$(Q)echo '$(LIB_OBJS)' >$@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(LIBXRL): $(LIB_OBJS) $(OUTPUT)/libxrl.objs
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(LIB_OBJS)

$(CLI): $(CLI_OBJS) $(LIBXRL)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBBPF_LIBS) -lpcap -o $@

$(DAEMON): $(RLD_OBJS) $(LIBXRL)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBBPF_LIBS) -lmnl -lmicrohttpd -lsystemd -lcap-ng -lhiredis -lm -lpthread -o $@

$(COMPGEN): user/bashcomp/gen_completion.c $(LIBXRL)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(COMPLETION): $(COMPGEN)
	$(call msg,GEN,$@)
	$(Q)$(COMPGEN) >$@.tmp && mv $@.tmp $@

$(OUTPUT)/test_meter: tests/unit/test_meter.c include/*.h tests/lib/testlib.h | $(OUTPUT)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< -o $@

# the harness itself (tests/lib/test_testlib.sh)
$(OUTPUT)/test_testlib: tests/lib/test_testlib.c tests/lib/testlib.h | $(OUTPUT)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< -o $@

$(OUTPUT)/test_grammar: tests/unit/test_grammar.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_classes: tests/unit/test_classes.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_deciders: tests/unit/test_deciders.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_pcapw: tests/unit/test_pcapw.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_setfile: tests/unit/test_setfile.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_suggest: tests/unit/test_suggest.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_kernel: tests/unit/test_kernel.c tests/lib/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

# The BPF tests: one file per feature (tests/bpf/t_*.c) and their list,
# written from the TEST( lines, so that a new test is only its definition.
PROG_TEST_SRCS := $(sort $(wildcard tests/bpf/t_*.c))
$(OUTPUT)/test_prog_list.h: $(PROG_TEST_SRCS) | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)sed -nE 's/^[[:space:]]*TEST[[:space:]]*\(([A-Za-z0-9_]+)\).*/TL_TEST(\1)/p' $(PROG_TEST_SRCS) >$@.tmp
	$(Q)n=$$(cat $(PROG_TEST_SRCS) | grep -cE '(^|[^A-Za-z0-9_])TEST[[:space:]]*\('); \
	if [ "$$n" != "$$(wc -l <$@.tmp)" ]; then \
		echo "Error: tests/bpf/t_*.c: $$n TEST( but $$(wc -l <$@.tmp) tests listed: write each as TEST(name) at a line's start" >&2; \
		rm -f $@.tmp; exit 1; fi
	$(Q)mv $@.tmp $@

$(OUTPUT)/test_prog: tests/bpf/test_prog.c tests/bpf/harness.c $(PROG_TEST_SRCS) tests/bpf/harness.h \
		     tests/lib/testlib.h tests/bpf/pkt.h $(OUTPUT)/test_prog_list.h $(LIBXRL) \
		     $(OUTPUT)/xrl_test_progs.skel.h
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib -Itests/bpf tests/bpf/test_prog.c tests/bpf/harness.c \
		$(PROG_TEST_SRCS) $(LIBXRL) $(LIBBPF_LIBS) -lpthread -o $@

# The differential fuzzer: the program against the reference model. Two
# objects, as each needs a .d file of its own.
XFUZZ_OBJS := $(OUTPUT)/tests/fuzz/fuzz.o $(OUTPUT)/tests/fuzz/model.o
$(OUTPUT)/tests/fuzz/%.o: tests/fuzz/%.c $(OUTPUT)/tests/fuzz/%.d | $(SKEL) $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && $(CC) $(CFLAGS) -Itests/fuzz -c $< -o $@ && touch $@

$(OUTPUT)/xrl-fuzz: $(XFUZZ_OBJS) $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(OUTPUT)/microbench: tests/bench/microbench.c tests/bpf/pkt.h $(LIBXRL) $(OUTPUT)/xrl_test_progs.skel.h
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bpf $< $(LIBXRL) $(LIBBPF_LIBS) -lpthread -o $@

# A compare-and-swap on one cache line shared by every CPU against a line each.
$(OUTPUT)/casbench: tests/bench/casbench.c | $(OUTPUT)
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $< -lpthread -o $@

# The verifier's processed-instruction count of each program of an object.
$(OUTPUT)/verifier-stats: tests/bench/verifier_stats.c | $(OUTPUT)
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -o $@

$(OUTPUT)/xrl-flood: tests/tools/xrl_flood.c $(OUTPUT)/xrl_flood.skel.h
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -lpthread -o $@

$(OUTPUT)/xdp-ref: tests/tools/xdp_ref.c $(OUTPUT)/xrl_test_progs.skel.h
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -o $@

$(OUTPUT)/tcx-attach: tests/tools/tcx_attach.c | $(OUTPUT)
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -o $@

$(OUTPUT)/udpsink: tests/tools/udpsink.c | $(OUTPUT)
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

$(OUTPUT)/setgen: tests/tools/setgen.c | $(OUTPUT)
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

$(OUTPUT)/udpflood: tests/tools/udpflood.c | $(OUTPUT)
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

# Coverage-guided fuzzing of the userspace parsers (libFuzzer, ASan, UBSan;
# clang): the grammar, the config reader, the value parsers. Objects of
# their own in .output/fuzz; `make fuzz-parsers FUZZ_TIME=S` runs each
# target S seconds (300 by default) from tests/fuzz/parsers/corpus.
FUZZ_OUT    := $(OUTPUT)/fuzz
FUZZ_CFLAGS := $(DEPFLAGS) -g -O1 -std=gnu11 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -Iinclude -Iuser/lib -I$(OUTPUT) $(LIBBPF_CFLAGS)
FUZZ_TARGETS := $(patsubst tests/fuzz/parsers/%.c,$(FUZZ_OUT)/%,$(wildcard tests/fuzz/parsers/fuzz_*.c))
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(FUZZ_OUT)/%.o,$(LIB_SRCS))
FUZZ_TIME   ?= 300

$(FUZZ_OUT)/%.o: user/%.c $(FUZZ_OUT)/%.d | $(SKEL) $(OUTPUT)/xrl_version.h
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && $(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -I$(<D) -c $< -o $@ && touch $@

# the targets' .d files in a folder of their own: tests/fuzz/parsers/run.sh
# runs every $(FUZZ_OUT)/fuzz_*
$(FUZZ_OUT)/fuzz_%: tests/fuzz/parsers/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(call msg,FUZZER,$@)
	$(Q)mkdir -p $(FUZZ_OUT)/deps
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MF $(FUZZ_OUT)/deps/fuzz_$*.d -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) $(LIBBPF_LIBS) -lpcap -lhiredis -lm -o $@

fuzz-parsers: $(FUZZ_TARGETS)
	$(Q)FUZZ_TIME=$(FUZZ_TIME) tests/fuzz/parsers/run.sh

# Without root and without installing anything: the grammar, the config
# checker and the metering maths.
# the programs' objects too: the layering test reads their calls
check: $(CHECKS) $(CLI_OBJS) $(RLD_OBJS)
	$(Q)XRL_OUT=$(OUTPUT) tests/run.sh --check

# shellcheck on the shell scripts (.ci/run's lint stage)
lint:
	$(Q).ci/run lint

# The README's test command: install what is missing, build, run every test
# (make check's suites first).
test:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all $(FUZZ_TARGETS)
	$(Q)XRL_OUT=$(OUTPUT) tests/run.sh

# Differential fuzzing of the data path: FRAMES frames (10 million by
# default) through the program and the reference model; SEED to repeat a run.
FRAMES ?= 10000000
fuzz: $(OUTPUT)/xrl-fuzz
	$(Q)$(OUTPUT)/xrl-fuzz --frames $(FRAMES) $(if $(SEED),--seed $(SEED))

# The program's per-packet cost next to a bare XDP_DROP program.
microbench:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUTPUT)/microbench

# The verifier's processed-instruction count of each program (needs root).
verifier-stats: $(OUTPUT)/verifier-stats $(BPF_OBJS)
	$(Q)$(OUTPUT)/verifier-stats $(BPF_OBJS)

# Side by side with bare XDP_DROP, nftables and iptables, then goodput with
# iperf3 and a DNS server under a flood (under 10 minutes).
bench:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/bench.sh

# A first try: only the packages the build and the demos need (the demo set
# of scripts/deps.sh, not the test toolchain), only the binaries they run.
DEMO_BINS := $(CLI) $(DAEMON) $(OUTPUT)/udpflood
demo:
	$(Q)scripts/deps.sh demo
	$(Q)$(MAKE) --no-print-directory $(DEMO_BINS)
	$(Q)scripts/demo.sh

# two hosts sharing one limit through Redis
demo-fleet:
	$(Q)scripts/deps.sh demo
	$(Q)$(MAKE) --no-print-directory $(DEMO_BINS)
	$(Q)scripts/demo-fleet.sh

# The unit goes under the prefix, where systemd looks for it; the alerting
# rules and the Grafana dashboard beside the other data, in $(PREFIX)/share/xdp-rl.
# The unit:
# PREFIX=/usr -> /usr/lib/systemd/system, /usr/local -> /usr/local/lib/systemd/system.
# Another PREFIX needs SYSTEMDDIR= naming a directory of systemd's unit path.
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
install: $(CLI) $(DAEMON) $(COMPLETION)
	install -D -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/sbin/xdp-rlctl
	install -D -m 0755 $(DAEMON) $(DESTDIR)$(PREFIX)/sbin/xdp-rld
	install -D -m 0644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/xdp-rlctl
	install -D -m 0644 man/xdp-rlctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/xdp-rlctl.8
	install -D -m 0644 man/xdp-rld.8 $(DESTDIR)$(PREFIX)/share/man/man8/xdp-rld.8
	install -D -m 0644 man/xdp-rl.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/xdp-rl.conf.5
	install -d $(DESTDIR)$(SYSTEMDDIR)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' packaging/xdp-rld.service > $(DESTDIR)$(SYSTEMDDIR)/xdp-rld.service
	chmod 0644 $(DESTDIR)$(SYSTEMDDIR)/xdp-rld.service
	install -D -m 0644 packaging/xdp-rl-alerts.yml $(DESTDIR)$(PREFIX)/share/xdp-rl/xdp-rl-alerts.yml
	install -D -m 0644 packaging/fail2ban/action.d/xdp-rl.conf \
		$(DESTDIR)$(PREFIX)/share/xdp-rl/fail2ban/action.d/xdp-rl.conf
	install -D -m 0644 packaging/grafana/xdp-rl.json $(DESTDIR)$(PREFIX)/share/xdp-rl/grafana/xdp-rl.json
	@if [ -e $(DESTDIR)/etc/xdp-rl/rules.conf ]; then \
		echo "keeping the existing $(DESTDIR)/etc/xdp-rl/rules.conf"; \
	else \
		install -D -m 0644 packaging/rules.conf $(DESTDIR)/etc/xdp-rl/rules.conf; \
	fi

# The Debian package (docs/install.md; the tools: scripts/deps.sh deb), built by dpkg-buildpackage from a
# clean copy of the tree's tracked files as they are now (git stash create:
# uncommitted changes included, untracked files not; outside a git clone,
# the tree without .output), in DEB_WORK; the .deb is left in DEB_OUT.
DEB_WORK  ?= .output/deb
DEB_OUT   ?= .output
deb:
	$(Q)scripts/deps.sh deb
	$(Q)scripts/deb.sh "$(DEB_WORK)" "$(DEB_OUT)"

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

# the header dependencies of every object and binary built so far (the
# sanitizer tree's only in its own build); an object's .d file is a target
# with no recipe, so that its absence is no error but rebuilds the object
OBJ_DEPS := $(patsubst %.o,%.d,$(LIB_OBJS) $(CLI_OBJS) $(RLD_OBJS) $(XFUZZ_OBJS) $(FUZZ_LIB_OBJS))
$(OBJ_DEPS): ;
-include $(shell find $(OUTPUT) $(if $(SAN_FLAGS),,-path $(OUTPUT)/san -prune -o) -name '*.d' -print 2>/dev/null)
