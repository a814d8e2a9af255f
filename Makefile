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

INCLUDES  := -Iinclude -Iuser/lib -I$(OUTPUT)
CFLAGS    ?= -O2 -g
CFLAGS    += $(SAN_FLAGS) -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Wno-missing-field-initializers -Werror -std=gnu11 $(INCLUDES) $(LIBBPF_CFLAGS)
# BPF atomics (compare-and-swap) need -mcpu=v3.
BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	      -Iinclude -Ibpf $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH))

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
SKEL      := $(OUTPUT)/xdp_rl.skel.h
# user/lib: libxrl, every map and attach operation, the grammar and the
# config reader; user/rlctl and user/rld: the two thin programs on top.
LIB_SRCS  := $(wildcard user/lib/*/*.c)
LIB_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(LIB_SRCS))
CLI_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(wildcard user/rlctl/*.c))
RLD_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(wildcard user/rld/*.c))
LIBXRL    := $(OUTPUT)/libxrl.a
CLI       := $(OUTPUT)/xdp-rlctl
DAEMON    := $(OUTPUT)/xdp-rld
# bash completion, written from the grammar's table by a generator
COMPGEN   := $(OUTPUT)/gen-completion
COMPLETION := $(OUTPUT)/xdp-rlctl.bash
CHECKS    := $(OUTPUT)/test_meter $(OUTPUT)/test_grammar $(OUTPUT)/test_classes $(OUTPUT)/test_kernel
TESTS     := $(CHECKS) $(OUTPUT)/test_prog $(OUTPUT)/udpflood $(OUTPUT)/microbench \
	     $(OUTPUT)/xrl-flood $(OUTPUT)/xdp-ref $(OUTPUT)/udpsink $(OUTPUT)/xrl-fuzz

.PHONY: all clean check test demo deps install microbench bench fuzz fuzz-parsers demo-fleet FORCE
.SECONDARY:
all: $(CLI) $(DAEMON) $(COMPLETION) $(TESTS)

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

$(OUTPUT)/%.o: user/%.c user/*/*.h user/lib/*/*.h include/*.h $(SKEL) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I$(<D) -c $< -o $@

# rewritten when VERSION changes only, so that nothing else rebuilds
$(OUTPUT)/xrl_version.h: FORCE | $(OUTPUT)
	$(Q)echo '#define XRL_VERSION "$(VERSION)"' >$@.tmp && \
		{ cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }

$(OUTPUT)/lib/base/version.o: $(OUTPUT)/xrl_version.h

$(LIBXRL): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(CLI): $(CLI_OBJS) $(LIBXRL)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -lpcap -o $@

$(DAEMON): $(RLD_OBJS) $(LIBXRL)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -lmnl -lmicrohttpd -lsystemd -lcap-ng -lhiredis -lm -lpthread -o $@

$(COMPGEN): user/bashcomp/gen_completion.c $(LIBXRL)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(COMPLETION): $(COMPGEN)
	$(call msg,GEN,$@)
	$(Q)$(COMPGEN) >$@.tmp && mv $@.tmp $@

$(OUTPUT)/test_meter: tests/unit/test_meter.c include/*.h tests/testlib.h | $(OUTPUT)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests $< -o $@

$(OUTPUT)/test_grammar: tests/unit/test_grammar.c tests/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_classes: tests/unit/test_classes.c tests/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_kernel: tests/unit/test_kernel.c tests/testlib.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests $< $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_prog: tests/bpf/test_prog.c tests/testlib.h tests/bpf/pkt.h $(LIBXRL) $(OUTPUT)/xrl_test_progs.skel.h
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests $< $(LIBXRL) $(LIBBPF_LIBS) -lpthread -o $@

# The differential fuzzer: the program against the reference model.
$(OUTPUT)/xrl-fuzz: tests/fuzz/fuzz.c tests/fuzz/model.c tests/fuzz/model.h $(LIBXRL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/fuzz tests/fuzz/fuzz.c tests/fuzz/model.c $(LIBXRL) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/microbench: tests/bench/microbench.c tests/bpf/pkt.h $(LIBXRL) $(OUTPUT)/xrl_test_progs.skel.h
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/bpf $< $(LIBXRL) $(LIBBPF_LIBS) -lpthread -o $@

$(OUTPUT)/xrl-flood: tests/tools/xrl_flood.c $(OUTPUT)/xrl_flood.skel.h
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -lpthread -o $@

$(OUTPUT)/xdp-ref: tests/tools/xdp_ref.c $(OUTPUT)/xrl_test_progs.skel.h
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -o $@

$(OUTPUT)/udpsink: tests/tools/udpsink.c | $(OUTPUT)
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
FUZZ_CFLAGS := -g -O1 -std=gnu11 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -Iinclude -Iuser/lib -I$(OUTPUT) $(LIBBPF_CFLAGS)
FUZZ_TARGETS := $(patsubst tests/fuzz/parsers/%.c,$(FUZZ_OUT)/%,$(wildcard tests/fuzz/parsers/fuzz_*.c))
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(FUZZ_OUT)/%.o,$(LIB_SRCS))
FUZZ_TIME   ?= 300

$(FUZZ_OUT)/%.o: user/%.c user/*/*.h user/lib/*/*.h include/*.h $(SKEL)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -I$(<D) -c $< -o $@

$(FUZZ_OUT)/fuzz_%: tests/fuzz/parsers/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) $(LIBBPF_LIBS) -lpcap -lhiredis -lm -o $@

$(FUZZ_OUT)/lib/base/version.o: $(OUTPUT)/xrl_version.h

fuzz-parsers: $(FUZZ_TARGETS)
	$(Q)FUZZ_TIME=$(FUZZ_TIME) tests/fuzz/parsers/run.sh

# Without root and without installing anything: the grammar, the config
# checker and the metering maths.
check: $(CHECKS)
	$(Q)XRL_OUT=$(OUTPUT) tests/check.sh

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

# Side by side with bare XDP_DROP, nftables and iptables, then goodput with
# iperf3 and a DNS server under a flood (under 10 minutes).
bench:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/bench.sh

demo:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

# two hosts sharing one limit through Redis
demo-fleet:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo-fleet.sh

# The unit goes under the prefix, where systemd looks for it; the alerting
# rules beside the other data, in $(PREFIX)/share/xdp-rl.
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
	@if [ -e $(DESTDIR)/etc/xdp-rl/rules.conf ]; then \
		echo "keeping the existing $(DESTDIR)/etc/xdp-rl/rules.conf"; \
	else \
		install -D -m 0644 packaging/rules.conf $(DESTDIR)/etc/xdp-rl/rules.conf; \
	fi

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)
