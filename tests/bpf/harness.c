// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The BPF tests' harness (harness.h): loading the program, running
 * packets, rules, counters, buckets and events.
 */
#include "harness.h"

struct xrl *X;
bool run_at_tc;

/*
 * Loading the object verifies its programs again (over a second of kernel
 * time each), most of this binary's run time when every test loaded its
 * own. instance() hands out one loaded instance per clock kind instead,
 * back to its just-loaded state (xrl_test_reset(): every map emptied or
 * zeroed as the kernel creates it, the handle's sets forgotten) when the
 * test before it gave it back with teardown(). A second instance wanted
 * while the first is out, or one the reset refuses, is loaded afresh; an
 * instance opened by a test with other options is closed by teardown().
 */
static struct pooled {
	struct xrl *x;
	bool out;
} pool[2];	/* [test_clock] */

static struct xrl *load(bool test_clock)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = test_clock, .keys = 4096 };
	struct xrl *x;

	if (xrl_open(&o, &x)) {
		fprintf(stderr, "    cannot load: %s\n", xrl_errmsg());
		exit(2);
	}
	return x;
}

/* at exit: the pool closed (the leak checker of the sanitizer build) */
static void pool_close(void)
{
	for (int i = 0; i < 2; i++) {
		xrl_close(pool[i].x);
		pool[i].x = NULL;
	}
}

struct xrl *instance(bool test_clock)
{
	struct pooled *p = &pool[test_clock];
	static bool registered;

	if (!registered && !atexit(pool_close))
		registered = true;

	if (p->x && !p->out) {
		if (!xrl_test_reset(p->x)) {
			p->out = true;
			return p->x;
		}
		fprintf(stderr, "    reset refused (%s): loading afresh\n", xrl_errmsg());
		xrl_close(p->x);
		p->x = NULL;
	}
	if (p->x)
		return load(test_clock);
	p->x = load(test_clock);
	p->out = true;
	return p->x;
}

/* An instance back: to the pool if it came from there, else closed. */
static void give_back(struct xrl *x)
{
	for (int i = 0; i < 2; i++) {
		if (pool[i].x == x) {
			pool[i].out = false;
			return;
		}
	}
	xrl_close(x);
}

void setup(void)
{
	X = instance(true);
	xrl_test_clock_set(X, T0);
}

void teardown(void)
{
	if (X)
		give_back(X);
	X = NULL;
}

int run_raw(const void *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1);
	/* the tc program is loaded at its first use (libxrl) */
	int fd = run_at_tc ? xrl_tc_prog_fd(X) : xrl_prog_fd(X), err;

	if (fd < 0) {
		fprintf(stderr, "    %s\n", xrl_errmsg());
		return -1;
	}
	err = bpf_prog_test_run_opts(fd, &o);

	/* the kernel builds no skb of a frame too short for the IP header
	 * its ethertype announces */
	if (err && run_at_tc && errno == EINVAL)
		return RUN_REFUSED;
	if (err) {
		fprintf(stderr, "    test run (len %zu): %s\n", len, strerror(errno));
		return -1;
	}
	if (run_at_tc)
		return (int)o.retval == TC_ACT_UNSPEC ? PASS : (int)o.retval == TC_ACT_SHOT ? DROP : -2;
	return o.retval;
}

int run(const struct pkt_spec *s)
{
	uint8_t buf[512];

	return run_raw(buf, pkt_build(buf, s));
}

int run_from(const char *src)
{
	struct pkt_spec s = { .src = src, .payload = 18 };

	return run(&s);
}

/* One packet from each of the n sources NET.first .. NET.first+n-1 (NET
 * ends with a dot); how many passed. */
int passes_from(const char *net, int first, int n)
{
	char src[32];
	int passed = 0;

	for (int i = first; i < first + n; i++) {
		snprintf(src, sizeof(src), "%s%d", net, i);
		passed += run_from(src) == PASS;
	}
	return passed;
}

/* The rule set, as "rule add" lines of the CLI grammar, committed at once. */
int set_rules(const char *const *lines)
{
	struct xrl_rule_entry v[32];
	size_t n = 0;

	for (; *lines; lines++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		if (xrl_cmd_parse_line(*lines, XRL_IN_CLI, &c, &e) || c.kind != XRL_CMD_RULE_ADD) {
			fprintf(stderr, "    bad rule '%s': %s\n", *lines, e.msg);
			return -1;
		}
		v[n++] = c.rule;
	}
	return xrl_rules_commit(X, v, n) ? -1 : 0;	/* the caller reports xrl_errmsg() */
}


struct xrl_rule_stats rstats(__u32 id)
{
	struct xrl_rule_stats s = {};
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(X, &v, &n))
		return s;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id == id)
			xrl_rule_stats_get(X, v[i].r.slot, &s);
	free(v);
	return s;
}

struct xrl_global_stats gstats(void)
{
	struct xrl_global_stats g = {};

	xrl_global_stats_get(X, &g);
	return g;
}

size_t nevs;

struct xrl_event evs[8192];

/* One rule in the CLI grammar, parsed into an entry. */
struct xrl_rule_entry entry(const char *line)
{
	struct xrl_rule_entry r = {};
	struct xrl_parse_err e;
	struct xrl_cmd c;

	if (xrl_cmd_parse_line(line, XRL_IN_CLI, &c, &e) || c.kind != XRL_CMD_RULE_ADD) {
		fprintf(stderr, "    bad rule '%s': %s\n", line, e.msg);
		return r;
	}
	return c.rule;
}

/* The bucket of rule `id` for a source. */
struct xrl_bucket bucket_of(__u32 id, const char *src)
{
	struct xrl_bucket b = {};
	struct xrl_rule_entry *v;
	struct xrl_key k;
	__u8 a[16];
	int family;
	size_t n;

	if (xrl_addr_parse(src, &family, a) || xrl_rules_get(X, &v, &n))
		return b;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id == id) {
			xrl_key_of(&k, &v[i].r, family, a);
			xrl_bucket_get(X, &k, &b);
		}
	}
	free(v);
	return b;
}

/* n packets from src to (proto, dport), TCP flags; a non-first fragment
 * with frag; how many passed */
int ep_send(const char *src, uint8_t proto, uint16_t dport, uint8_t flags,
	    bool frag, int n)
{
	bool v6 = strchr(src, ':') != NULL;
	struct frame f = { .src = src, .l4 = proto, .payload = 20 };
	uint8_t buf[512], *l4;
	size_t len;
	int ok = 0;

	if (frag && !v6)
		f.frag_off = 100;
	else if (frag)
		f.ext[0] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .frag_off = 100 }, f.n_ext = 1;
	if (proto == IPPROTO_UDP)
		f.payload = 12;
	len = frame_build(buf, sizeof(buf), &f);
	l4 = buf + 14 + (v6 ? 40 + 8 * f.n_ext : 20);
	l4[2] = dport >> 8;
	l4[3] = dport & 0xff;
	if (proto == IPPROTO_TCP)
		l4[13] = flags;
	for (int i = 0; i < n; i++)
		ok += run_raw(buf, len) == PASS;
	return ok;
}

int collect(const struct xrl_event *e, void *ctx)
{
	(void)ctx;
	if (nevs < sizeof(evs) / sizeof(evs[0]))
		evs[nevs] = *e;
	nevs++;
	return 0;
}

/* The events the program wrote since the last call (the daemon's ring). */
size_t events_read(struct xrl_events *ev)
{
	nevs = 0;
	CHECK(xrl_events_consume(ev) >= 0, "consume");
	return nevs;
}

/* The CPUs the process may run on, as it started. */
static cpu_set_t cpus_start;
static bool cpus_saved;

void cpus_save(void)
{
	cpus_saved = !sched_getaffinity(0, sizeof(cpus_start), &cpus_start);
}

void cpus_restore(void)
{
	if (cpus_saved)
		sched_setaffinity(0, sizeof(cpus_start), &cpus_start);
}

/* One CPU: the global cap is per CPU. */
void one_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The share of N hosts, as the daemon writes it. */
void share(const struct xrl_rule_entry *e, unsigned n)
{
	struct xrl_fleet_rule fr = { .interval = e->r.interval * n, .hosts = n,
				     .state = XRL_FLEET_SYNCED, .rule_id = e->r.id };

	fr.limit = xrl_burst_limit(fr.interval, e->r.burst / n);
	CHECK(!xrl_fleet_rule_put(X, e->r.slot, &fr), "share");
}
