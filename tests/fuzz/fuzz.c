// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xrl-fuzz: differential fuzzing of the data path. Random and mutated
 * frames, random rule sets, modes, heartbeats and clock steps go through the
 * real program (BPF_PROG_TEST_RUN, the test clock, rules published by
 * libxrl) and through the reference model (model.c); every verdict and every
 * counter is compared after every frame. A disagreement is shrunk to a
 * minimal sequence of steps and printed in the case format that
 * `xrl-fuzz --replay FILE` runs (tests/fuzz/cases/).
 *
 *   xrl-fuzz [--frames N] [--seconds S] [--seed N] [--quiet] [--fresh]
 *   xrl-fuzz --replay FILE... [--fresh]
 *
 * --fresh loads the program for every sequence instead of resetting one
 * loaded instance (sut_open()).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "text/grammar.h"
#include "libxrl.h"
#include "model.h"
#include "xrl_meter.h"

#define MAX_FRAME	3000	/* some frames past a full-size one: byte budgets */
#define MAX_STEPS	40000
#define IFINDEX		1
#define HB_NOW		UINT64_MAX	/* BPF_PROG_TEST_RUN's frames arrive on lo */

enum step_kind { S_FRAME, S_CLOCK, S_MODE, S_HEARTBEAT, S_RULES };

struct step {
	enum step_kind kind;
	uint64_t v;		/* clock ns, mode, watchdog ns, rule set index */
	uint64_t at;		/* heartbeat: its time (HB_NOW: the clock's) */
	uint16_t len;
	uint8_t *frame;
};

/* A rule set: its "rule add" lines (room for every word the generator
 * writes, aggregate and new-keys included). */
#define RULE_LINE	256
struct ruleset {
	int n;
	char line[M_MAX_RULES][RULE_LINE];
};

static struct {
	struct step *s;
	int n;
	struct ruleset *sets;
	int n_sets;
	uint64_t keys;		/* the table size of the run ("keys N") */
} LOG;

static bool quiet;

/* ---- randomness ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned pct)
{
	return below(100) < pct;
}

/* ---- the program side ---- */

/* The table size: the default new-key budget is derived from it (half of
 * it at once, a sixteenth a second). Some runs take a small table so that
 * the default binds; the model has no LRU, so a run stops comparing before
 * the table could evict: the kernel's LRU starts evicting when fewer than
 * its per-CPU batch (128) is free, for buckets of every rule generation. */
#define FUZZ_KEYS	65536
#define FUZZ_KEYS_SMALL	1024
#define FUZZ_LRU_SLACK	256

struct sut {
	struct xrl *x;
	struct m_rule rules[M_MAX_RULES];
	int n;
};

/*
 * A fresh instance for each sequence of steps. Loading the program takes
 * ~1.5 s (its verification), longer than running a sequence: one instance
 * per table size is loaded once and reset (xrl_test_reset(): every map
 * emptied as the kernel made it) for each sequence after the first. With
 * --fresh, each sequence loads its own, as the fuzzer did first: the
 * instance a reset gives must be the one a load gives (the same seed gives
 * the same frames and must give the same result either way).
 */
static bool fresh_load;
static unsigned long loads;	/* programs loaded, and the time it took */
static double load_s;
static struct {
	uint64_t keys;
	struct xrl *x;
} loaded[2];

static int sut_open(struct sut *s, uint64_t keys)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = true, .keys = keys };
	struct timespec t0, t1;
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; !fresh_load && i < 2; i++) {
		if (loaded[i].x && loaded[i].keys == keys) {
			if (xrl_test_reset(loaded[i].x)) {
				fprintf(stderr, "cannot reset the program: %s\n", xrl_errmsg());
				return -1;
			}
			s->x = loaded[i].x;
			return 0;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (xrl_open(&o, &s->x)) {
		fprintf(stderr, "cannot load the program: %s\n", xrl_errmsg());
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	loads++;
	load_s += t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (i = 0; !fresh_load && i < 2; i++)
		if (!loaded[i].x) {
			loaded[i].x = s->x;
			loaded[i].keys = keys;
			break;
		}
	return 0;
}

static void sut_close(struct sut *s)
{
	for (int i = 0; i < 2; i++)
		if (loaded[i].x == s->x) {
			s->x = NULL;	/* kept for the next sequence */
			return;
		}
	xrl_close(s->x);
	s->x = NULL;
}

static void sut_unload(void)
{
	for (int i = 0; i < 2; i++) {
		xrl_close(loaded[i].x);
		loaded[i].x = NULL;
	}
}

static int run_frame(struct sut *s, const uint8_t *f, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = len, .repeat = 1);

	if (bpf_prog_test_run_opts(xrl_prog_fd(s->x), &o)) {
		fprintf(stderr, "test run (len %zu): %s\n", len, strerror(errno));
		return -1;
	}
	return o.retval;
}

/* A rule line's endpoint words (proto tcp|udp|icmp|icmpv6|N, dport N|N-M,
 * syn) and dry-run, read from the text as the operator wrote them. */
static void model_rule_words(const char *line, struct m_rule *r)
{
	const char *agg = strstr(line, " aggregate ");
	unsigned burst;

	r->fleet = strstr(line, " scope fleet") != NULL;
	/* a burst right after "aggregate RATE" is the aggregate's */
	if (agg && sscanf(agg, " aggregate %*s burst %u", &burst) == 1)
		r->agg_burst = burst;
	static const struct { const char *w; int p; } words[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "icmpv6", 58 },
	};
	const char *w;
	char name[16];

	r->dry_run = strstr(line, " dry-run") != NULL;
	r->syn = strstr(line, " syn") != NULL;
	if ((w = strstr(line, " slip ")) && sscanf(w, " slip %u", &burst) == 1)
		r->slip = burst;
	if ((w = strstr(line, " proto ")) && sscanf(w, " proto %15s", name) == 1) {
		r->ep = true;
		r->proto = atoi(name);
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strcmp(name, words[i].w))
				r->proto = words[i].p;
	}
	if ((w = strstr(line, " dport "))) {
		unsigned lo, hi;
		int n = sscanf(w, " dport %u-%u", &lo, &hi);

		r->has_dport = n >= 1;
		r->dport_lo = lo;
		r->dport_hi = n == 2 ? hi : lo;
	}
}

/* Parse the set's lines with the CLI grammar, commit them, and give the
 * model the same rules with the generations libxrl handed out. */
static int apply_rules(struct sut *s, struct model *m, const struct ruleset *rs)
{
	struct xrl_rule_entry v[M_MAX_RULES], *got;
	struct m_rule mr[M_MAX_RULES];
	size_t n_got;

	for (int i = 0; i < rs->n; i++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		if (xrl_cmd_parse_line(rs->line[i], XRL_IN_CLI, &c, &e) ||
		    c.kind != XRL_CMD_RULE_ADD) {
			fprintf(stderr, "bad rule '%s': %s\n", rs->line[i], e.msg);
			return -1;
		}
		v[i] = c.rule;
		memset(&mr[i], 0, sizeof(mr[i]));
		mr[i].family = c.rule.family;
		memcpy(mr[i].addr, c.rule.addr, 16);
		mr[i].prefix_len = c.rule.prefix_len;
		mr[i].key_len = c.rule.r.key_len;
		mr[i].action = c.rule.r.action;
		mr[i].on_failure = c.rule.r.on_failure;
		mr[i].algo = c.rule.r.algo;
		mr[i].unit = c.rule.r.unit;
		mr[i].rate_count = c.rule.r.rate_count;
		mr[i].rate_period_ns = c.rule.r.rate_period_ns;
		mr[i].burst = c.rule.r.burst;
		mr[i].id = c.rule.r.id;
		/* the endpoint words and dry-run as written, not as libxrl
		 * stored them: the model must not inherit its reading */
		model_rule_words(rs->line[i], &mr[i]);
		mr[i].agg_count = c.rule.r.agg_rate_count;
		mr[i].agg_period_ns = c.rule.r.agg_rate_period_ns;
		mr[i].nk_count = c.rule.r.nk_rate_count;
		mr[i].nk_period_ns = c.rule.r.nk_rate_period_ns;
	}
	if (xrl_rules_commit(s->x, v, rs->n)) {
		fprintf(stderr, "commit refused: %s\n", xrl_errmsg());
		for (int i = 0; i < rs->n; i++)
			fprintf(stderr, "  %s\n", rs->line[i]);
		return -1;
	}
	if (xrl_rules_get(s->x, &got, &n_got))
		return -1;
	for (int i = 0; i < rs->n; i++)
		for (size_t j = 0; j < n_got; j++)
			if (got[j].r.id == mr[i].id) {
				mr[i].gen = got[j].r.gen;
				mr[i].slot = got[j].r.slot;
			}
	free(got);
	model_set_rules(m, mr, rs->n);
	memcpy(s->rules, mr, sizeof(mr));
	s->n = rs->n;
	return 0;
}

/* Frames the program answered (DNS slip), over the run: a fuzzer that
 * never answers tests no answer. */
static unsigned long long answered_frames;

static const char *verdict_name(int v)
{
	return v == XDP_PASS ? "PASS" : v == XDP_DROP ? "DROP" : v == XDP_TX ? "TX" : "?";
}

/* Compare one rule's counters; what differs goes to why. */
static bool rule_agrees(struct sut *s, const struct m_rule *r, uint64_t now_ns, char *why,
			size_t len)
{
	struct xrl_rule_stats p = {};

	xrl_rule_stats_get(s->x, r->slot, &p);
	/* The model's cache is ideal (every entry kept): the program's, two
	 * ways a set, answers at most its drops; a drop it did not answer
	 * took the whole path and met the aggregate closed, or the key's
	 * bucket. The rest must be equal. */
	if (p.hot_dropped > r->st.hot_dropped || p.agg_dropped < r->st.agg_dropped ||
	    p.agg_dropped - r->st.agg_dropped > r->st.hot_dropped - p.hot_dropped) {
		snprintf(why, len, "rule %u hot-key cache: program hot_dropped %llu agg_dropped %llu; "
			 "model (ideal cache) %llu %llu",
			 r->id, p.hot_dropped, p.agg_dropped, r->st.hot_dropped, r->st.agg_dropped);
		return false;
	}
	{
		struct xrl_rule_stats q = r->st;

		q.hot_dropped = p.hot_dropped;
		q.agg_dropped = p.agg_dropped;
		/* "closed until" passed is open, whether a packet of the
		 * rule looked since (it would not when the cache answered) */
		if (q.agg_until && !xrl_before(xrl_ns_to_tu(now_ns), q.agg_until))
			q.agg_until = 0;
		if (p.agg_until && !xrl_before(xrl_ns_to_tu(now_ns), p.agg_until))
			p.agg_until = 0;
		if (!memcmp(&p, &q, sizeof(p)))
			return true;
	}
	snprintf(why, len,
		 "rule %u counters: program passed %llu/%lluB dropped %llu/%lluB would-drop %llu/%lluB "
		 "new_keys %llu/%llu refused failure %llu/%llu agg %llu tokens %llu/%llu until %llu; "
		 "model passed %llu/%lluB dropped %llu/%lluB "
		 "would-drop %llu/%lluB new_keys %llu/%llu refused failure %llu/%llu agg %llu tokens %llu/%llu until %llu",
		 r->id, p.passed_packets, p.passed_bytes, p.dropped_packets, p.dropped_bytes,
		 p.would_drop_packets, p.would_drop_bytes,
		 p.new_keys, p.nk_refused, p.failure_passed, p.failure_dropped, p.agg_dropped,
		 p.agg_tokens, p.nk_tokens, p.agg_until,
		 r->st.passed_packets, r->st.passed_bytes, r->st.dropped_packets,
		 r->st.dropped_bytes, r->st.would_drop_packets, r->st.would_drop_bytes,
		 r->st.new_keys, r->st.nk_refused, r->st.failure_passed, r->st.failure_dropped,
		 r->st.agg_dropped, r->st.agg_tokens, r->st.nk_tokens, r->st.agg_until);
	return false;
}

static bool global_agrees(struct sut *s, const struct model *m, char *why, size_t len)
{
	struct xrl_global_stats g = {};
	struct xrl_if_stats i = {};

	xrl_global_stats_get(s->x, &g);
	xrl_if_stats_get(s->x, IFINDEX, &i);
	if (memcmp(&g, &m->g, sizeof(g))) {
		snprintf(why, len,
			 "global counters: program unmatched %llu non_ip %llu malformed %llu passed %llu/%llu/%llu/%llu dropped %llu/%llu/%llu/%llu keys_inserted %llu; "
			 "model unmatched %llu non_ip %llu malformed %llu passed %llu/%llu/%llu/%llu dropped %llu/%llu/%llu/%llu keys_inserted %llu",
			 g.unmatched_packets, g.non_ip_packets, g.malformed_packets,
			 g.passed_packets[0], g.passed_packets[1], g.passed_packets[2], g.passed_packets[3],
			 g.dropped_packets[0], g.dropped_packets[1], g.dropped_packets[2], g.dropped_packets[3],
			 g.keys_inserted, m->g.unmatched_packets, m->g.non_ip_packets, m->g.malformed_packets,
			 m->g.passed_packets[0], m->g.passed_packets[1], m->g.passed_packets[2], m->g.passed_packets[3],
			 m->g.dropped_packets[0], m->g.dropped_packets[1], m->g.dropped_packets[2], m->g.dropped_packets[3],
			 m->g.keys_inserted);
		return false;
	}
	if (memcmp(&i, &m->ifs, sizeof(i))) {
		snprintf(why, len, "interface counters: program passed %llu dropped %llu; model %llu %llu",
			 i.passed_packets, i.dropped_packets, m->ifs.passed_packets, m->ifs.dropped_packets);
		return false;
	}
	return true;
}

static bool all_rules_agree(struct sut *s, const struct model *m, char *why, size_t len)
{
	for (int i = 0; i < m->n_rules; i++)
		if (!rule_agrees(s, &m->rules[i], m->now_ns, why, len))
			return false;
	return true;
}

/*
 * Run steps [0, n) on a fresh program and a fresh model. Returns the index
 * of the first step after which they disagree (why says how), -1 when they
 * agree throughout, -2 when the run itself failed. expect, when not NULL,
 * holds a verdict per step that the program must also give (a case file's).
 */
static int replay(const struct step *st, int n, const int *expect, int *got, char *why, size_t len)
{
	struct sut s;
	struct model m;
	int bad = -1;

	if (model_init(&m) || sut_open(&s, LOG.keys))
		return -2;
	m.ncpus = libbpf_num_possible_cpus();
	m.keys = LOG.keys;
	for (int i = 0; i < n && bad == -1; i++) {
		const struct step *p = &st[i];
		struct m_result r;
		int v;

		switch (p->kind) {
		case S_CLOCK:
			m.now_ns = p->v;
			xrl_test_clock_set(s.x, p->v);
			break;
		case S_MODE:
			m.mode = p->v;
			xrl_mode_set(s.x, p->v);
			break;
		case S_HEARTBEAT:
			/* a heartbeat stamped a little after the clock the
			 * program read: the daemon's clock ran on meanwhile */
			m.heartbeat_ns = p->at == HB_NOW ? m.now_ns : p->at;
			m.watchdog_ns = p->v;
			xrl_heartbeat(s.x, 1000, p->v);
			__atomic_store_n(&xrl_control(s.x)->heartbeat_ns, m.heartbeat_ns,
					 __ATOMIC_RELEASE);
			break;
		case S_RULES:
			if (!all_rules_agree(&s, &m, why, len)) {
				bad = i;
				break;
			}
			if (apply_rules(&s, &m, &LOG.sets[p->v]))
				bad = -2;
			break;
		case S_FRAME:
			if (m.g.keys_inserted + FUZZ_LRU_SLACK >= LOG.keys) {
				n = i;		/* the table could evict from here */
				break;
			}
			v = run_frame(&s, p->frame, p->len);
			if (v < 0) {
				bad = -2;
				break;
			}
			model_run(&m, p->frame, p->len, &r);
			answered_frames += v == XDP_TX;
			if (got)
				got[i] = r.verdict;
			if (v != r.verdict) {
				snprintf(why, len, "verdict: program %s, model %s (%s, rule %d, endpoint rule %d)",
					 verdict_name(v), verdict_name(r.verdict),
					 r.pkt.kind == M_NON_IP ? "non-IP" :
					 r.pkt.kind == M_MALFORMED ? "malformed" : "IP",
					 r.rule >= 0 ? (int)m.rules[r.rule].id : -1,
					 r.ep_rule >= 0 ? (int)m.rules[r.ep_rule].id : -1);
				bad = i;
			} else if (expect && expect[i] >= 0 && expect[i] != v) {
				snprintf(why, len, "verdict: program %s, the case expects %s",
					 verdict_name(v), verdict_name(expect[i]));
				bad = i;
			} else if (!global_agrees(&s, &m, why, len) ||
				   (r.rule >= 0 && !rule_agrees(&s, &m.rules[r.rule], m.now_ns, why, len)) ||
				   (r.ep_rule >= 0 &&
				    !rule_agrees(&s, &m.rules[r.ep_rule], m.now_ns, why, len))) {
				bad = i;
			}
			break;
		}
	}
	if (bad == -1 && !all_rules_agree(&s, &m, why, len))
		bad = n - 1;
	sut_close(&s);
	model_free(&m);
	return bad;
}

/* ---- the case format ---- */

static void hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

/* The steps in the case format, each frame with the model's verdict. */
static void print_case(FILE *f, const struct step *st, int n, const int *verdict)
{
	if (LOG.keys != FUZZ_KEYS)
		fprintf(f, "keys %llu\n", (unsigned long long)LOG.keys);
	for (int i = 0; i < n; i++) {
		const struct step *p = &st[i];

		switch (p->kind) {
		case S_CLOCK:
			fprintf(f, "clock %llu\n", (unsigned long long)p->v);
			break;
		case S_MODE:
			fprintf(f, "mode %s\n", xrl_mode_name(p->v));
			break;
		case S_HEARTBEAT:
			if (p->at == HB_NOW)
				fprintf(f, "heartbeat %llu\n", (unsigned long long)p->v);
			else
				fprintf(f, "heartbeat %llu at %llu\n", (unsigned long long)p->v,
					(unsigned long long)p->at);
			break;
		case S_RULES:
			fprintf(f, "rules %d\n", LOG.sets[p->v].n);
			for (int j = 0; j < LOG.sets[p->v].n; j++)
				fprintf(f, "%s\n", LOG.sets[p->v].line[j]);
			break;
		case S_FRAME:
			fprintf(f, "frame ");
			hex(f, p->frame, p->len);
			fprintf(f, " %s\n", verdict_name(verdict[i]));
			break;
		}
	}
}

static int unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) && n < max) {
		unsigned b;

		if (sscanf(s, "%2x", &b) != 1)
			return -1;
		out[n++] = b;
		s += 2;
	}
	return n;
}

static void log_reset(void)
{
	for (int i = 0; i < LOG.n; i++)
		free(LOG.s[i].frame);
	LOG.n = 0;
	LOG.n_sets = 0;
	LOG.keys = FUZZ_KEYS;
}

static struct step *log_add(enum step_kind k, uint64_t v)
{
	struct step *p = &LOG.s[LOG.n++];

	memset(p, 0, sizeof(*p));
	p->kind = k;
	p->v = v;
	p->at = HB_NOW;
	return p;
}

static void log_frame(const uint8_t *f, size_t len)
{
	struct step *p = log_add(S_FRAME, 0);

	p->frame = malloc(len);
	memcpy(p->frame, f, len);
	p->len = len;
}

/* Read a case file into LOG; expect[] gets "PASS"/"DROP" written after a frame. */
static int read_case(const char *path, int *expect)
{
	FILE *f = fopen(path, "r");
	char line[2 * MAX_FRAME + 64];

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	log_reset();
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char word[32];
		uint8_t buf[MAX_FRAME];
		int n;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (LOG.n >= MAX_STEPS - 1)
			break;
		if (sscanf(line, "keys %llu", &v) == 1) {
			LOG.keys = v;
		} else if (sscanf(line, "clock %llu", &v) == 1) {
			log_add(S_CLOCK, v);
		} else if (sscanf(line, "heartbeat %llu", &v) == 1) {
			unsigned long long at;

			log_add(S_HEARTBEAT, v)->at = sscanf(line, "heartbeat %*u at %llu", &at) == 1 ?
						       at : HB_NOW;
		} else if (sscanf(line, "mode %31s", word) == 1) {
			int mode;

			for (mode = 0; mode < XRL_MODE_MAX; mode++)
				if (!strcmp(word, xrl_mode_name(mode)))
					break;
			if (mode == XRL_MODE_MAX)
				goto bad;
			log_add(S_MODE, mode);
		} else if (sscanf(line, "rules %d", &n) == 1) {
			struct ruleset *rs = &LOG.sets[LOG.n_sets];

			if (n < 0 || n > M_MAX_RULES)
				goto bad;
			rs->n = n;
			for (int j = 0; j < n; j++) {
				if (!fgets(rs->line[j], sizeof(rs->line[j]), f))
					goto bad;
				rs->line[j][strcspn(rs->line[j], "\n")] = 0;
			}
			log_add(S_RULES, LOG.n_sets++);
		} else if (!strncmp(line, "frame ", 6)) {
			char *sp = strchr(line + 6, ' ');

			n = unhex(line + 6, buf, sizeof(buf));
			if (n < 14)
				goto bad;
			expect[LOG.n] = !sp ? -1 : !strncmp(sp + 1, "PASS", 4) ? XDP_PASS :
					 !strncmp(sp + 1, "DROP", 4) ? XDP_DROP :
					 !strncmp(sp + 1, "TX", 2) ? XDP_TX : -1;
			log_frame(buf, n);
		} else {
			goto bad;
		}
	}
	fclose(f);
	return 0;
bad:
	fprintf(stderr, "%s: cannot read '%s'\n", path, line);
	fclose(f);
	return -1;
}

/* ---- generators ---- */

static const uint8_t NET4[16] = { 198, 18, 0, 0 };
static const uint8_t NET6[16] = { 0x20, 0x01, 0x0d, 0xb8 };

/* An address under the prefix, or anywhere in the test ranges. */
static void addr_under(int family, const uint8_t *pfx, unsigned plen, uint8_t *out)
{
	unsigned bytes = family == 4 ? 4 : 16;

	for (unsigned i = 0; i < bytes; i++) {
		uint8_t r = rnd();

		/* mostly small host parts, so that keys repeat */
		if (i >= bytes - 2 || chance(10))
			r = chance(70) ? below(4) : r;
		else
			r = chance(80) ? 0 : r;
		if (i * 8 + 8 <= plen)
			out[i] = pfx[i];
		else if (i * 8 >= plen)
			out[i] = r;
		else {
			uint8_t mask = 0xff << (8 - plen % 8);

			out[i] = (pfx[i] & mask) | (r & ~mask);
		}
	}
}

/* Destination ports the rules name and the frames go to, so that they meet. */
static const unsigned PORTS[] = { 0, 22, 53, 80, 443, 1023, 1024, 8080, 65535 };
static const char *const RANGES[] = { "0-1023", "1024-65535", "80-443", "53-53", "22-80",
				      "1000-2000", "0-65535", "443-8080", "65535-65535" };

/* What makes a rule a duplicate of another: its prefix and its endpoint
 * words (dport 0-65535 is "every port", as none). */
static void rule_key(const char *line, char *key, size_t len)
{
	const char *end = strstr(line, " rate ");
	const char *act = strstr(line, " action ");
	unsigned lo, hi;
	char *all;
	int at;

	if (!end || (act && act < end))
		end = act;
	snprintf(key, len, "%.*s", (int)(end ? end - line : (long)strlen(line)), line);
	if ((all = strstr(key, " dport 0-65535")))
		memmove(all, all + 14, strlen(all + 14) + 1);
	/* dport N-N is dport N */
	if ((all = strstr(key, " dport ")) && sscanf(all, " dport %u-%u%n", &lo, &hi, &at) == 2 &&
	    lo == hi) {
		char rest[RULE_LINE];

		snprintf(rest, sizeof(rest), "%s", all + at);
		snprintf(all, len - (all - key), " dport %u%s", lo, rest);
	}
}

/* A rate for a rule: packets or bytes (tc's units), for one algorithm. */
static int gen_rate(char *l, size_t room, bool window)
{
	static const char *const unit[] = { "s", "min", "h" };

	if (chance(25)) {
		/* a byte rate, per second: bytes or bits */
		bool bits = chance(50);
		uint64_t bps = window ? 1514 + below(chance(50) ? 4000 : 100000)
				      : chance(20) ? 1 + below(100000000) : 1 + below(chance(70) ? 3000 : 200000);
		uint64_t count = bits ? bps * 8 : bps;
		const char *u = bits ? "bit" : "bps";
		int k;

		if (bits && chance(50))
			count += below(8);	/* not a whole number of bytes */
		if (count % 1000 == 0 && chance(70)) {
			count /= 1000;
			u = bits ? "kbit" : "kbps";
		}
		k = snprintf(l, room, " rate %llu%s", (unsigned long long)count, u);
		if (!window) {
			/* bytes, at least a full-size frame, refilled within a year */
			uint64_t burst = 1514 + below(chance(70) ? 1000 : 200000);

			if (burst > bps * 300ULL * 86400)
				burst = bps * 300ULL * 86400;
			if (burst < 1514)
				burst = 1514;
			if (burst % 1024 == 0 || chance(20))
				k += snprintf(l + k, room - k, " burst %llukb",
					      (unsigned long long)(burst + 1023) / 1024);
			else
				k += snprintf(l + k, room - k, " burst %llu", (unsigned long long)burst);
		}
		return k;
	}
	if (window) {
		uint64_t count = chance(10) ? 1 + below(0xffffffffULL) :
				 chance(50) ? 1 + below(10) : 1 + below(2000);

		return snprintf(l, room, " rate %llu/%s", (unsigned long long)count, unit[below(3)]);
	}
	{
		uint64_t count = chance(10) ? 1 + below(100000000) :
				 chance(50) ? 1 + below(10) : 1 + below(2000);
		const char *u = unit[below(3)];
		uint64_t burst = chance(10) ? 1 + below(100000) : 1 + below(16);
		uint64_t period = u[0] == 's' ? 1 : u[0] == 'm' ? 60 : 3600;

		if (count > 100000000ULL / 2 && u[0] != 's')
			u = "s", period = 1;
		/* burst / rate under a year */
		if (burst > count * (300 * 86400 / period))
			burst = count * (300 * 86400 / period);
		return snprintf(l, room, " rate %llu/%s burst %llu",
				(unsigned long long)count, u, (unsigned long long)burst);
	}
}

/* An endpoint rule's words: a protocol, maybe ports and syn. */
static int gen_endpoint(char *l, size_t room, int family)
{
	static const char *const proto[] = { "tcp", "udp", "icmp", "icmpv6", "132", "47", "0", "60" };
	int p = chance(70) ? (int)below(2) : (int)below(8), k;

	if (p == 2 && family == 6 && chance(70))
		p = 3;
	k = snprintf(l, room, " proto %s", proto[p]);
	if (p <= 1 && chance(65)) {
		if (chance(50))
			k += snprintf(l + k, room - k, " dport %u", PORTS[below(9)]);
		else
			k += snprintf(l + k, room - k, " dport %s", RANGES[below(9)]);
	}
	if (p == 0 && chance(35))
		k += snprintf(l + k, room - k, " syn");
	return k;
}

/* A limit rule's aggregate (small bursts, so that it binds), new-key
 * budget (small rates: a pool's spoofed sources exhaust it) and, for a
 * source token bucket of packets, scope fleet (no daemon: a host rule). */
static int gen_shared(char *l, size_t room, bool no_fleet)
{
	static const char *const unit[] = { "s", "min", "h" };
	int k = 0;

	if (chance(35)) {
		k += snprintf(l + k, room - k, " aggregate %llu/%s",
			      (unsigned long long)(chance(60) ? 1 + below(30) : 1 + below(5000)),
			      unit[below(3)]);
		if (chance(60))
			/* from 200 on, a CPU takes chunks of more than one */
			k += snprintf(l + k, room - k, " burst %llu",
				      (unsigned long long)(chance(60) ? 1 + below(10) :
							   chance(50) ? 1 + below(500) :
							   200 + below(3000)));
	}
	if (chance(40))
		k += snprintf(l + k, room - k, " new-keys %llu/%s",
			      (unsigned long long)(1 + below(chance(70) ? 10 : 3000)), unit[below(3)]);
	if (!no_fleet && chance(15))
		k += snprintf(l + k, room - k, " scope fleet");
	return k;
}

static void gen_rules(struct ruleset *rs)
{
	char prefixes[M_MAX_RULES][64], keys[M_MAX_RULES][RULE_LINE];
	int fams[M_MAX_RULES];
	int n = 1 + below(chance(20) ? 24 : 8);

	rs->n = 0;
	for (int i = 0; i < n; i++) {
		int family = chance(50) ? 4 : 6;
		unsigned max = family == 4 ? 32 : 128, plen, klen;
		uint8_t a[16] = {}, pf[16];
		char txt[64], *l = rs->line[rs->n];
		bool dup = false, ep = chance(35), window;
		int k, twin;

		plen = chance(10) ? 0 : chance(50) ? below(max + 1) :
		       family == 4 ? 15 + below(18) : 32 + below(97);
		if (plen >= (family == 4 ? 15u : 32u)) {
			/* inside the test range */
			addr_under(family, family == 4 ? NET4 : NET6, family == 4 ? 15 : 32, a);
		} else {
			memcpy(a, family == 4 ? NET4 : NET6, 16);
		}
		memset(pf, 0, sizeof(pf));
		for (unsigned b = 0; b < plen; b++)
			if (a[b / 8] & (0x80 >> (b % 8)))
				pf[b / 8] |= 0x80 >> (b % 8);
		inet_ntop(family == 4 ? AF_INET : AF_INET6, pf, txt, sizeof(txt));
		snprintf(prefixes[rs->n], sizeof(prefixes[0]), "%s/%u", txt, plen);
		fams[rs->n] = family;
		/* an endpoint rule often on a prefix another rule has, and then
		 * often its twin: the same ports with or without syn, the same
		 * protocol with other ports (the tie-breaks of specificity) */
		twin = -1;
		if (ep && rs->n && chance(50)) {
			int j = below(rs->n);

			strcpy(prefixes[rs->n], prefixes[j]);
			family = fams[rs->n] = fams[j];
			max = family == 4 ? 32 : 128;
			plen = atoi(strchr(prefixes[j], '/') + 1);
			if (strstr(keys[j], " proto ") && chance(60))
				twin = j;
		}
		k = snprintf(l, RULE_LINE, "rule add %s", prefixes[rs->n]);
		if (twin >= 0 && strstr(keys[twin], " proto tcp") && chance(60)) {
			/* the same words, syn toggled */
			const char *w = strstr(keys[twin], " proto ");
			const char *syn = strstr(w, " syn");

			k += syn ? snprintf(l + k, RULE_LINE - k, "%.*s", (int)(syn - w), w)
				 : snprintf(l + k, RULE_LINE - k, "%s syn", w);
		} else if (twin >= 0 && (strstr(keys[twin], " proto tcp") ||
					 strstr(keys[twin], " proto udp"))) {
			k += snprintf(l + k, RULE_LINE - k, " proto %s dport %s%s",
				      strstr(keys[twin], " proto tcp") ? "tcp" : "udp",
				      chance(50) ? RANGES[below(9)] : "22",
				      strstr(keys[twin], " proto tcp") && chance(50) ? " syn" : "");
		} else if (ep && chance(30)) {
			/* DNS, where slip answers */
			k += snprintf(l + k, RULE_LINE - k, " proto udp dport 53");
		} else if (ep) {
			k += gen_endpoint(l + k, RULE_LINE - k, family);
		}
		rule_key(l, keys[rs->n], sizeof(keys[0]));
		for (int j = 0; j < rs->n; j++)
			dup |= !strcmp(keys[j], keys[rs->n]);
		if (dup)
			continue;
		switch (below(10)) {
		case 0:
			k += snprintf(l + k, RULE_LINE - k, " action allow");
			break;
		case 1:
			k += snprintf(l + k, RULE_LINE - k, " action deny");
			break;
		default:
			window = chance(45);
			k += gen_rate(l + k, RULE_LINE - k, window);
			if (window)
				k += snprintf(l + k, RULE_LINE - k, " algo %s",
					      chance(50) ? "fixed-window" : "sliding-window");
			else if (chance(10))
				k += snprintf(l + k, RULE_LINE - k, " algo token-bucket");
			if (chance(40)) {
				klen = plen + below(max - plen + 1);
				if (!klen)	/* 0 is "the default" */
					klen = 1 + below(max);
				k += snprintf(l + k, RULE_LINE - k, " per /%u", klen);
			}
			if (chance(20))
				k += snprintf(l + k, RULE_LINE - k, " action limit");
			k += gen_shared(l + k, RULE_LINE - k, ep || window || strstr(l, "bit") ||
					strstr(l, "bps"));
		}
		if (chance(40) && !strstr(l, "allow"))
			k += snprintf(l + k, RULE_LINE - k, " on-failure %s", chance(50) ? "closed" : "open");
		if (chance(20))
			k += snprintf(l + k, RULE_LINE - k, " dry-run");
		/* DNS slip: a limit rule of proto udp */
		if (strstr(l, " proto udp") && !strstr(l, " action allow") &&
		    !strstr(l, " action deny") && chance(80))
			k += snprintf(l + k, RULE_LINE - k, " slip %u", (unsigned)below(4));
		snprintf(l + k, RULE_LINE - k, " id %d", rs->n + 1);
		rs->n++;
	}
}

/* Sources to draw from in an epoch: some under each rule, some elsewhere. */
struct pool {
	int n;
	int family[256];
	uint8_t a[256][16];
	/* a spoofer: every frame from a new address under its rule's prefix
	 * (plen + 1; 0: an ordinary source) */
	uint8_t spoof[256];
};

static void gen_pool(struct pool *p, const struct ruleset *rs)
{
	p->n = 0;
	for (int i = 0; i < rs->n && p->n < 200; i++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		if (xrl_cmd_parse_line(rs->line[i], XRL_IN_CLI, &c, &e))
			continue;
		for (int j = 0; j < 1 + (int)below(6); j++, p->n++) {
			p->family[p->n] = c.rule.family;
			addr_under(c.rule.family, c.rule.addr, c.rule.prefix_len, p->a[p->n]);
			p->spoof[p->n] = chance(40) ? c.rule.prefix_len + 1 : 0;
		}
	}
	for (int j = 0; j < 8; j++, p->n++) {
		p->family[p->n] = chance(50) ? 4 : 6;
		p->spoof[p->n] = 0;
		if (chance(20)) {
			for (int b = 0; b < 16; b++)
				p->a[p->n][b] = rnd();
		} else {
			addr_under(p->family[p->n], p->family[p->n] == 4 ? NET4 : NET6,
				   p->family[p->n] == 4 ? 15 : 32, p->a[p->n]);
		}
	}
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* A DNS query after the UDP header at p, mostly one this host answers
 * (docs/answers.md), each of its fields now and then wrong: the header's
 * flags and counts, the labels (a pointer, a reserved type, a name about
 * 255 bytes long), the question cut short, an EDNS record or more after
 * it; the UDP length mostly right. n: the UDP bytes so far (their ports
 * kept); returns the new length (at most 8 + 12 + 300). */
static size_t dns_query(uint8_t *p, size_t n)
{
	uint8_t *d = p + 8;
	size_t m = 12;
	int labels = chance(5) ? 4 : (int)below(5);

	(void)n;
	d[0] = rnd(), d[1] = rnd();
	d[2] = chance(85) ? (chance(50) ? 0x01 : 0x00) : rnd();
	d[3] = chance(80) ? 0 : rnd();
	put16(d + 4, chance(90) ? 1 : below(3));
	put16(d + 6, chance(90) ? 0 : 1);
	put16(d + 8, 0);
	put16(d + 10, chance(50) ? 0 : 1);
	for (int i = 0; i < labels; i++) {
		unsigned l = labels == 4 && chance(80) ? 61 + below(4) : 1 + below(20);

		if (chance(3))
			l = chance(50) ? 0xc0 : 64 + below(64);
		d[m++] = l;
		for (unsigned j = 0; j < l && j < 63; j++)
			d[m++] = 'a' + below(26);
		if (l > 63)
			break;
	}
	if (chance(95))
		d[m++] = 0;
	for (int i = 0, k = chance(95) ? 4 : (int)below(4); i < k; i++)
		d[m++] = i & 1;
	if (chance(40)) {
		static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };

		memcpy(d + m, opt, sizeof(opt));
		m += sizeof(opt);
	}
	if (chance(10))
		m += below(8);
	if (chance(80))
		put16(p + 2, 53);
	if (chance(3))
		put16(p, 0);
	put16(p + 4, chance(95) ? 8 + m : (unsigned)below(400));
	return 8 + m;
}

static size_t l4(uint8_t *p, size_t room, unsigned proto)
{
	size_t n = proto == 6 ? 20 : proto == 17 ? 8 : proto == 1 || proto == 58 ? 8 : below(16);

	n += below(chance(80) ? 32 : 300);
	if (chance(5))
		n = below(22);		/* a TCP or UDP header cut short */
	if (n > room)
		n = room;
	for (size_t i = 0; i < n; i++)
		p[i] = rnd();
	/* ports the rules name, mostly; TCP: SYN, SYN-ACK, ACK or any flags */
	if ((proto == 6 || proto == 17) && n >= 4 && chance(75))
		put16(p + 2, chance(70) ? PORTS[below(9)] : (unsigned)below(2000));
	if (proto == 6 && n >= 13)
		p[12] = 5 << 4;
	if (proto == 6 && n >= 14 && chance(80)) {
		static const uint8_t flags[] = { 0x02, 0x12, 0x10, 0x18, 0x03, 0x06 };

		p[13] = flags[below(6)];
	}
	if (proto == 17 && room >= 8 + 12 + 300 && chance(60))
		n = dns_query(p, n);
	return n;
}

/* During a flood, every frame comes from this source of the pool (a
 * spoofer: from new addresses under its prefix); -1: any source. */
static int flood_who = -1;

/* A spoofer's next address: random bits below its prefix. */
static const uint8_t *pool_addr(const struct pool *pool, int who)
{
	static uint8_t a[16];
	unsigned plen = pool->spoof[who] - 1u;

	if (!pool->spoof[who])
		return pool->a[who];
	for (unsigned b = 0; b < 128; b++) {
		uint8_t bit = 0x80 >> (b % 8);

		if (b < plen ? pool->a[who][b / 8] & bit : rnd() & 1)
			a[b / 8] |= bit;
		else
			a[b / 8] &= ~bit;
	}
	return a;
}

/* A frame from a source of the pool, well formed or nearly. */
static size_t gen_frame(uint8_t *f, const struct pool *pool)
{
	static const unsigned l4s[] = { 6, 17, 1, 58, 132, 47 };
	size_t off = 12, n;
	int tags = chance(70) ? 0 : chance(70) ? 1 : chance(70) ? 2 : 3 + below(2);
	int who = flood_who >= 0 && flood_who < pool->n ? flood_who : (int)below(pool->n);
	int family = pool->family[who];
	unsigned type;

	for (int i = 0; i < 12; i++)
		f[i] = rnd();
	for (int i = 0; i < tags; i++) {
		put16(f + off, chance(50) ? 0x8100 : chance(90) ? 0x88a8 : 0x9100);
		put16(f + off + 2, rnd());
		off += 4;
	}
	type = chance(5) ? (chance(50) ? 0x0806 : (unsigned)below(65536)) :
	       family == 4 ? 0x0800 : 0x86dd;
	put16(f + off, type);
	off += 2;
	if (type == 0x0800) {
		uint8_t *ip = f + off;
		unsigned opt = chance(70) ? 0 : below(11);
		unsigned proto = chance(90) ? l4s[below(3)] : (unsigned)below(256);

		memset(ip, 0, 20);
		ip[0] = 0x40 | (5 + opt);
		ip[8] = 64;
		ip[9] = proto;
		/* fragments: first ones (offset 0, MF) and ones at offset 1
		 * often, as tiny first fragments are decided there */
		if (chance(20))
			put16(ip + 6, (chance(50) ? 0x2000 : 0) |
				      (chance(30) ? 0 : chance(30) ? 1 : (unsigned)below(0x2000)));
		memcpy(ip + 12, pool_addr(pool, who), 4);
		for (unsigned i = 0; i < opt * 4; i++)
			ip[20 + i] = chance(50) ? 1 : rnd();
		n = 20 + opt * 4;
		n += l4(ip + n, MAX_FRAME - 64 - off - n, proto);
		put16(ip + 2, n);
		off += n;
	} else if (type == 0x86dd) {
		static const unsigned ext[] = { 0, 43, 44, 51, 60, 135 };
		uint8_t *ip = f + off, *nh = ip + 6;
		int next = chance(50) ? 0 : below(chance(80) ? 4 : 11);

		memset(ip, 0, 40);
		ip[0] = 0x60;
		ip[7] = 64;
		memcpy(ip + 8, pool_addr(pool, who), 16);
		for (int b = 0; b < 16; b++)
			ip[24 + b] = chance(50) ? NET6[b] : rnd();
		n = 40;
		for (int i = 0; i < next && n < 400; i++) {
			unsigned t = ext[below(6)];
			uint8_t *h = ip + n;
			size_t hl;

			*nh = t;
			nh = h;
			if (t == 44) {
				hl = 8;
				memset(h, 0, 8);
				put16(h + 2, chance(40) ? 0 : chance(30) ? 1 : chance(30) ? 8 | (rnd() & 1) :
					     (unsigned)rnd() & 0xfff9);
			} else if (t == 51) {
				h[1] = below(6);
				hl = (h[1] + 2) * 4;
			} else {
				h[1] = below(4);
				hl = (h[1] + 1) * 8;
			}
			for (size_t b = 2; b < hl && t != 44; b++)
				h[b] = chance(50) ? 0 : rnd();
			n += hl;
		}
		*nh = chance(90) ? l4s[below(4)] : below(256);
		n += l4(ip + n, MAX_FRAME - 64 - off - n, *nh);
		put16(ip + 4, n - 40);
		off += n;
	} else {
		n = below(100);
		for (size_t i = 0; i < n; i++)
			f[off + i] = rnd();
		off += n;
	}
	/* trailing padding; now and then to a full-size or jumbo frame, which
	 * a byte rule's budget of 1514 bytes or more may not hold */
	if (chance(10)) {
		n = chance(10) ? 1400 + below(MAX_FRAME - 1400 - off) : below(40);
		memset(f + off, 0, n);
		off += n;
	}
	return off;
}

/* Mutations: a few bytes or bits changed, a length field off by some, garbage. */
static size_t mutate(uint8_t *f, size_t len)
{
	int k = below(4);

	if (chance(3)) {
		len = 14 + below(600 - 14);
		for (size_t i = 0; i < len; i++)
			f[i] = rnd();
		return len;
	}
	for (int i = 0; i < 1 + k; i++) {
		size_t at = below(len < 80 ? len : 80);

		if (chance(50))
			f[at] ^= 1 << below(8);
		else
			f[at] = rnd();
	}
	return len;
}

/* ---- the run ---- */

static long long shrink_budget;

/* Shrink LOG to a minimal failing sequence (ddmin on steps, keeping the
 * last one, the disagreeing frame); print it. */
static void report(int bad, const char *why0, uint64_t seed)
{
	struct step *cur = malloc(sizeof(*cur) * (bad + 1)), *try = malloc(sizeof(*try) * (bad + 1));
	int n = bad + 1, chunk;
	char why[1024];

	memcpy(cur, LOG.s, sizeof(*cur) * n);
	snprintf(why, sizeof(why), "%s", why0);
	shrink_budget = 400;
	for (chunk = n / 2; chunk >= 1 && shrink_budget > 0; chunk /= 2) {
		for (int at = 0; at + 1 < n && shrink_budget > 0;) {
			int len = at + chunk < n - 1 ? chunk : n - 1 - at, m = 0, r;
			char w[1024];

			for (int i = 0; i < n; i++)
				if (i < at || i >= at + len)
					try[m++] = cur[i];
			shrink_budget--;
			r = replay(try, m, NULL, NULL, w, sizeof(w));
			if (r >= 0) {
				n = r + 1;
				memcpy(cur, try, sizeof(*cur) * n);
				snprintf(why, sizeof(why), "%s", w);
			} else {
				at += len;
			}
		}
	}
	printf("DISAGREEMENT (seed %llu): %s\n", (unsigned long long)seed, why);
	printf("--- case (%d steps; save as tests/fuzz/cases/NAME.case)\n", n);
	printf("# xrl-fuzz seed %llu: %s\n", (unsigned long long)seed, why);
	{
		int *got = calloc(n, sizeof(int));

		replay(cur, n, NULL, got, why, sizeof(why));
		print_case(stdout, cur, n, got);
		free(got);
	}
	printf("---\n");
	fflush(stdout);
	free(cur);
	free(try);
}

static int fuzz(uint64_t seed, uint64_t frames, double seconds)
{
	struct timespec t0, t;
	uint64_t done = 0, disagree = 0, epochs = 0;
	double el = 0;

	rng = seed;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < frames && (seconds <= 0 || el < seconds)) {
		int steps = 2000 + below(8000), bad;
		uint64_t now, hb_at, wd;
		struct pool pool;
		char why[1024];

		log_reset();
		if (chance(25))
			LOG.keys = FUZZ_KEYS_SMALL;
		/* the clock: an ordinary uptime, or near the 2^57/2^58 ns
		 * where time units pass 2^63 and wrap */
		now = chance(70) ? 1000000000000ULL + below(1ULL << 40) :
		      chance(50) ? (1ULL << 57) - below(1ULL << 34) : (1ULL << 58) - below(1ULL << 34);
		log_add(S_CLOCK, now);
		gen_rules(&LOG.sets[LOG.n_sets]);
		if (getenv("XRL_FUZZ_SHOW"))
			for (int i = 0; i < LOG.sets[LOG.n_sets].n; i++)
				fprintf(stderr, "%s\n", LOG.sets[LOG.n_sets].line[i]);
		gen_pool(&pool, &LOG.sets[LOG.n_sets]);
		log_add(S_RULES, LOG.n_sets++);
		hb_at = wd = 0;
		if (chance(30)) {
			hb_at = now;
			wd = chance(50) ? 5000000000ULL : 1 + below(2000000000ULL);
			log_add(S_HEARTBEAT, wd);
		}
		if (chance(30))
			log_add(S_MODE, below(XRL_MODE_MAX));
		while (LOG.n < steps && done < frames) {
			uint8_t f[MAX_FRAME];
			size_t len;
			unsigned what = below(1000);

			if (what < 40) {
				static const uint64_t scale[] = { 1, 1000, 1000000, 100000000, 1000000000, 3600000000000ULL };

				now += below(scale[below(6)] + 1);
				log_add(S_CLOCK, now);
			} else if (what < 55) {
				/* a whole fraction of a second, minute or hour, +-1 ns:
				 * where a bucket of a round rate gains a token */
				static const uint64_t unit[] = { 1000000000ULL, 60000000000ULL, 3600000000000ULL };

				now += unit[below(3)] * (1 + below(3)) / (1 + below(chance(50) ? 4 : 2000)) +
				       below(3) - 1;
				log_add(S_CLOCK, now);
			} else if (what < 60) {
				/* to the watchdog's edge: exactly its time, or 1 ns off */
				uint64_t edge = hb_at + wd + below(3) - 1;

				if (wd && edge > now) {
					now = edge;
					log_add(S_CLOCK, now);
				}
			} else if (what < 63) {
				log_add(S_MODE, chance(60) ? XRL_MODE_ENFORCE : below(XRL_MODE_MAX));
			} else if (what < 68) {
				hb_at = now;
				wd = chance(20) ? 0 : chance(50) ? 5000000000ULL : 1 + below(2000000000ULL);
				if (chance(10))	/* a coarse tick or two ahead */
					hb_at = now + below(8000000);
				log_add(S_HEARTBEAT, wd)->at = hb_at;
			} else if (what < 69 && LOG.n_sets < 8) {
				/* a new set: some rules unchanged, some new */
				struct ruleset *rs = &LOG.sets[LOG.n_sets], *old = &LOG.sets[LOG.n_sets - 1];

				gen_rules(rs);
				for (int i = 0; i < old->n && i < rs->n; i++)
					if (chance(60))
						strcpy(rs->line[i], old->line[i]);
				/* duplicates after the copy: keep the old set */
				for (int i = 0; i < rs->n; i++)
					for (int j = 0; j < i; j++) {
						char a[RULE_LINE], b[RULE_LINE];

						rule_key(rs->line[i], a, sizeof(a));
						rule_key(rs->line[j], b, sizeof(b));
						if (!strcmp(a, b))
							*rs = *old;
					}
				log_add(S_RULES, LOG.n_sets++);
			} else if (what < 72) {
				/* a flood from one source or spoofer, small steps of
				 * the clock between: aggregates, new-key budgets and
				 * the chunks of a CPU run out and refill */
				int n = 20 + below(chance(70) ? 200 : 3000);
				uint64_t step = chance(60) ? 1000 : below(chance(50) ? 1000000 : 100000000);

				/* or one frame again and again, padded past its IP
				 * packet to other lengths (the same source, class
				 * and verdicts, other costs): the hot-key cache's
				 * entries of byte and endpoint rules answer */
				bool sticky = chance(40);
				uint8_t sf[MAX_FRAME];
				size_t base = 0;

				flood_who = below(pool.n);
				/* often a spoofer: new keys beyond the budgets */
				for (int j = 0; j < 8 && chance(60) && !pool.spoof[flood_who]; j++)
					flood_who = below(pool.n);
				if (sticky)
					base = gen_frame(sf, &pool);
				for (int j = 0; j < n && LOG.n < MAX_STEPS - 2 && done < frames; j++) {
					if (chance(10)) {
						now += below(step + 1);
						log_add(S_CLOCK, now);
					}
					if (sticky) {
						size_t room = MAX_FRAME - base, pad;

						pad = chance(50) ? 0 : below((room < 1400 ? room : 1400) + 1);
						memcpy(f, sf, base);
						for (size_t b = 0; b < pad; b++)
							f[base + b] = rnd();
						len = base + pad;
					} else {
						len = gen_frame(f, &pool);
					}
					log_frame(f, len);
					done++;
				}
				flood_who = -1;
			} else if (chance(2)) {
				/* every truncation of one frame */
				len = gen_frame(f, &pool);
				for (size_t cut = 14; cut <= len && LOG.n < MAX_STEPS - 1; cut++, done++)
					log_frame(f, cut);
			} else {
				len = gen_frame(f, &pool);
				if (chance(15))
					len = mutate(f, len);
				if (chance(10))
					len = 14 + below(len - 13);
				log_frame(f, len);
				done++;
			}
		}
		bad = replay(LOG.s, LOG.n, NULL, NULL, why, sizeof(why));
		if (bad == -2)
			return 2;
		if (bad >= 0) {
			disagree++;
			report(bad, why, seed);
		}
		epochs++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9;
		if (!quiet && epochs % 50 == 0)
			fprintf(stderr, "  %llu frames, %llu disagreements, %.0f s\n",
				(unsigned long long)done, (unsigned long long)disagree, el);
	}
	log_reset();
	printf("seed %llu: %llu frames in %.1f s (%.0f frames/s), %llu epochs\n",
	       (unsigned long long)seed, (unsigned long long)done, el, done / (el > 0 ? el : 1),
	       (unsigned long long)epochs);
	/* the program's verification is most of a short run's time: the
	 * rate past it is the one a longer run tends to */
	printf("%lu programs loaded (%s) in %.1f s; %.0f frames/s past loading\n", loads,
	       fresh_load ? "--fresh: one a sequence" : "one a table size, reset for each sequence",
	       load_s, el > load_s ? done / (el - load_s) : 0);
	printf("%llu frames answered (DNS slip)\n", answered_frames);
	printf("%llu frames, %llu disagreements\n", (unsigned long long)done,
	       (unsigned long long)disagree);
	return disagree ? 1 : 0;
}

static int replay_files(char **files, int n)
{
	static int expect[MAX_STEPS];
	int passed = 0, failed = 0;

	for (int i = 0; i < n; i++) {
		char why[1024] = "";
		int bad;

		memset(expect, 0xff, sizeof(expect));
		if (read_case(files[i], expect))
			bad = -2;
		else
			bad = replay(LOG.s, LOG.n, expect, NULL, why, sizeof(why));
		if (bad == -1) {
			printf("ok   %s\n", files[i]);
			passed++;
		} else {
			printf("FAIL %s: step %d: %s\n", files[i], bad, why);
			failed++;
		}
	}
	log_reset();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

static int quiet_print(enum libbpf_print_level l, const char *fmt, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* One CPU: a test run executes on the calling CPU, and the per-CPU chunks
 * of an aggregate or a new-key budget (and the hot-key cache) are then one
 * CPU's, as the model has them. The first CPU the process may use. */
static int pin_one_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return perror("sched_getaffinity"), -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set)) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				return perror("sched_setaffinity"), -1;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "replay", no_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "fresh", no_argument, NULL, 'f' },
		{}
	};
	uint64_t frames = 10000000, seed;
	double seconds = 0;
	bool do_replay = false;
	struct timespec ts;
	int c;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = (uint64_t)ts.tv_sec * 1000003 ^ ts.tv_nsec ^ (uint64_t)getpid() << 32;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			frames = strtoull(optarg, NULL, 0);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			do_replay = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'f':
			fresh_load = true;
			break;
		default:
			fprintf(stderr, "usage: xrl-fuzz [--frames N] [--seconds S] [--seed N] [--quiet] [--fresh] | --replay FILE...\n");
			return 2;
		}
	}
	libbpf_set_print(quiet_print);
	if (pin_one_cpu())
		return 2;
	LOG.s = calloc(MAX_STEPS, sizeof(*LOG.s));
	LOG.keys = FUZZ_KEYS;
	LOG.sets = calloc(16, sizeof(*LOG.sets));
	if (do_replay) {
		c = replay_files(argv + optind, argc - optind);
	} else {
		printf("seed %llu\n", (unsigned long long)seed);
		fflush(stdout);
		c = fuzz(seed, frames, seconds);
	}
	sut_unload();
	return c;
}
