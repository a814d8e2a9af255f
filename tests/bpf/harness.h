/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the BPF tests share: a fresh, unpinned instance of the program with
 * the test clock, packets run through BPF_PROG_TEST_RUN, rules applied in
 * the CLI grammar, counters, buckets and events read back.
 */
#ifndef XRL_TEST_HARNESS_H
#define XRL_TEST_HARNESS_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <net/if.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <time.h>

#include "testlib.h"
#include "pkt.h"
#include "text/grammar.h"
#include "libxrl.h"
#include "fleet/fleet.h"
#include "xrl_meter.h"

#define SEC	1000000000ULL
#define T0	(1000 * SEC)
#define PASS	XDP_PASS
#define DROP	XDP_DROP

/* TCP flags */
#define SYN	0x02
#define ACK	0x10

/* The instance under test (setup(), instance()). */
extern struct xrl *X;
/* run_raw() runs the tc program (an skb test run) instead of the XDP one,
 * its return code as PASS (TC_ACT_UNSPEC) or DROP (TC_ACT_SHOT), else -2 */
extern bool run_at_tc;
/* run_raw() at tc: the kernel's skb test run refused the frame (EINVAL: too
 * short for the IP header its ethertype announces) */
#define RUN_REFUSED	(-3)

struct xrl *instance(bool test_clock);
void setup(void);
void teardown(void);
int run_raw(const void *buf, size_t len);
int run(const struct pkt_spec *s);
int run_from(const char *src);
int passes_from(const char *net, int first, int n);
int set_rules(const char *const *lines);
struct xrl_rule_stats rstats(__u32 id);
struct xrl_global_stats gstats(void);

/* The rule set, as "rule add" lines of the CLI grammar, committed at once. */
#define RULES(...) set_rules((const char *const[]){ __VA_ARGS__, NULL })

struct xrl_rule_entry entry(const char *line);
struct xrl_bucket bucket_of(__u32 id, const char *src);
int ep_send(const char *src, uint8_t proto, uint16_t dport, uint8_t flags,
	    bool frag, int n);
int collect(const struct xrl_event *e, void *ctx);
size_t events_read(struct xrl_events *ev);
void one_cpu(void);
/* The CPUs as the process started: saved once, given back before each test,
 * so that no test runs pinned by one_cpu() of the test before it. */
void cpus_save(void);
void cpus_restore(void);
void share(const struct xrl_rule_entry *e, unsigned n);

/* The events collect() gathered (events_read()). */
extern struct xrl_event evs[8192];
extern size_t nevs;

#endif
