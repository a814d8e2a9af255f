// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: one rule checked and its derived fields filled
 * (interval, limit, key mask, clock), and a whole set checked (ranges,
 * duplicates, what the endpoint tables hold). No map, no file descriptor:
 * the CLI, the configuration reader, --check and the commit all call these.
 */
#include "model/rule.h"
#include "model/ban.h"
#include "model/addr.h"
#include "model/epclass.h"
#include "model/words.h"
#include "base/log.h"
#include "base/strict.h"
#include "xrl_meter.h"

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An endpoint rule's ports; a source rule has no protocol, ports or SYN. */
static int rule_check_endpoint(struct xrl_rule_entry *e, const char *pfx)
{
	struct xrl_rule *r = &e->r;

	if (!r->ep) {
		r->proto = r->syn = r->syncookies = 0;
		r->dport_lo = r->dport_hi = 0;
		return 0;
	}
	if (r->dport_lo > r->dport_hi)
		return xrl_fail(EINVAL, "rule %s: dport %u-%u is an empty range", pfx,
			    r->dport_lo, r->dport_hi);
	return 0;
}

int xrl_rule_check_scope(const struct xrl_rule *r, enum xrl_rule_field *bad)
{
	if (r->scope != XRL_SCOPE_FLEET)
		return 0;
	*bad = XRL_FIELD_SCOPE;
	/* only a limit rule has a rate to share across the fleet */
	if (r->action != XRL_ACT_LIMIT)
		return xrl_fail(EINVAL, "'scope fleet' means nothing with action %s: only a limit rule has a rate to share across hosts (leave out scope)",
				xrl_word_name(xrl_action_words, r->action));
	/* the fleet bucket in Redis is a GCRA of packets of source keys: a
	 * window algorithm, a byte rate or an endpoint rule has no fleet
	 * counterpart (README, "Fleet-wide limits") */
	if (r->algo != XRL_ALGO_GCRA)
		return xrl_fail(EINVAL, "'scope fleet' takes a token bucket: the fleet bucket in Redis is a GCRA (leave out algo, or scope)");
	if (r->unit != XRL_UNIT_PACKETS)
		return xrl_fail(EINVAL, "'scope fleet' counts packets: the fleet bucket's clock is in microseconds, too coarse for a byte rate (use N/s, or leave out scope)");
	if (r->ep)
		return xrl_fail(EINVAL, "'scope fleet' takes a source rule: endpoint rules (proto) are metered per host (leave out scope, or proto)");
	return 0;
}

/*
 * The checks between fields that a parser used to make on its own words:
 * here once, for the CLI, the configuration file, --check and the commit.
 * With w (a parser's), whether dport and burst were written is what w
 * says; without it, what the values say (0-65535 is "no dport", the
 * grammar writes it so when none is given; a burst of 0 is none). The
 * messages are the CLI's: the parser shows them at the word *bad names.
 */
static int rule_check_written(const struct xrl_rule *r, const struct xrl_rule_written *w,
			      enum xrl_rule_field *bad)
{
	bool dport = w ? w->dport : r->dport_lo || r->dport_hi != 65535;
	bool burst = w ? w->burst : r->burst != 0;

	if (xrl_rule_check_scope(r, bad))
		return -EINVAL;
	if (r->ep) {
		*bad = XRL_FIELD_DPORT;
		if (dport && r->proto != IPPROTO_TCP && r->proto != IPPROTO_UDP)
			return xrl_fail(EINVAL, "'dport' needs proto tcp or udp: other protocols have no ports");
		*bad = XRL_FIELD_SYN;
		if (r->syn && r->proto != IPPROTO_TCP)
			return xrl_fail(EINVAL, "'syn' needs proto tcp");
		*bad = XRL_FIELD_SYNCOOKIES;
		if (r->syncookies && r->proto != IPPROTO_TCP)
			return xrl_fail(EINVAL, "'syn-cookies' needs proto tcp: a SYN cookie is TCP's");
		/* the cookie's ACK must reach the rule: a syn rule sees SYNs only */
		if (r->syncookies && r->syn)
			return xrl_fail(EINVAL, "'syn-cookies' takes every TCP packet of its ports, the handshake's ACK too: leave out 'syn'");
		/* every port would take in the answers to the host's own
		 * connections: only listening ports are protected */
		if (r->syncookies && r->proto == IPPROTO_TCP && !dport)
			return xrl_fail(EINVAL, "'syn-cookies' protects listening ports: give 'dport' (the host's own connections use the others)");
	}
	*bad = XRL_FIELD_SYNCOOKIES;
	if (r->syncookies && !r->ep)
		return xrl_fail(EINVAL, "'syn-cookies' takes an endpoint rule: it needs 'proto tcp'");
	if (r->syncookies && r->action != XRL_ACT_LIMIT)
		return xrl_fail(EINVAL, "'syn-cookies' means nothing with action %s: only a limit rule challenges its sources",
				xrl_word_name(xrl_action_words, r->action));
	*bad = XRL_FIELD_BAN;
	if (r->ban_s && r->action != XRL_ACT_LIMIT)
		return xrl_fail(EINVAL, "'ban' needs action limit: only a key a rule limits can be banned");
	if (!r->ban_s && (r->ban_after || r->ban_max_s))
		return xrl_fail(EINVAL, "'%s' belongs to 'ban DURATION': the rule does not ban",
				r->ban_after ? "after" : "ban-max");
	if (r->ban_s > XRL_BAN_MAX_S || r->ban_max_s > XRL_BAN_MAX_S || r->ban_after > XRL_BAN_AFTER_MAX)
		return xrl_fail(EINVAL, "a ban lasts 1s .. %ud, after 1 .. %u offences", XRL_BAN_MAX_S / 86400,
				XRL_BAN_AFTER_MAX);
	if (r->ban_s && r->ban_max_s && r->ban_max_s < r->ban_s)
		return xrl_fail(EINVAL, "'ban-max' is shorter than 'ban': a repeat offender's ban only grows");
	/* DNS slip answers queries over UDP that a limit rule's key buckets
	 * refuse: an endpoint rule of proto udp (any port: DNS is not always
	 * on 53) */
	*bad = XRL_FIELD_SLIP;
	if (r->slip > XRL_SLIP_MAX)
		return xrl_fail(EINVAL, "slip must be 0 .. %u", XRL_SLIP_MAX);
	if (r->slip && (!r->ep || r->proto != IPPROTO_UDP))
		return xrl_fail(EINVAL, "'slip' needs proto udp: it answers refused DNS queries over UDP (rule add PREFIX proto udp dport 53 ... slip N)");
	if (r->slip && r->action != XRL_ACT_LIMIT)
		return xrl_fail(EINVAL, "'slip' means nothing with action %s: it answers what a limit rule refuses (leave it out, or use action limit)",
				xrl_word_name(xrl_action_words, r->action));
	if (r->action != XRL_ACT_LIMIT)
		return 0;
	*bad = XRL_FIELD_WINDOW_BURST;
	if (r->algo != XRL_ALGO_GCRA && burst)
		return xrl_fail(EINVAL, "'burst' belongs to the token bucket: %s admits rate per window, no more (leave out burst, or use algo token-bucket)",
			    xrl_word_name(xrl_algo_words, r->algo));
	*bad = XRL_FIELD_BURST;
	if (w && w->burst_sized && r->unit == XRL_UNIT_PACKETS)
		return xrl_fail(EINVAL, "burst in bytes needs a byte rate (rate 10mbit, rate 2mbps); a packet rate's burst is a number of packets");
	return 0;
}

/* The smallest byte budget: a full-size Ethernet frame must be able to pass. */
#define XRL_MIN_BYTES	1514

/*
 * A window algorithm or a byte rate: the window rules keep the
 * window in interval (ns) and the cost units per window in limit; a byte
 * rate's token bucket charges the frame length against an interval per
 * byte. Rates in bits per second are metered in bytes.
 */
static int rule_check_units(struct xrl_rule_entry *e, const char *pfx,
			    enum xrl_rule_field *bad)
{
	struct xrl_rule *r = &e->r;
	__u64 per_window, period = r->rate_period_ns;
	bool bytes = r->unit != XRL_UNIT_PACKETS;

	if (r->algo >= XRL_ALGO_MAX)
		return xrl_fail(EINVAL, "rule %s: unknown algorithm %u", pfx, r->algo);
	if (r->unit > XRL_UNIT_BITS)
		return xrl_fail(EINVAL, "rule %s: unknown rate unit %u", pfx, r->unit);
	if (bytes && period != XRL_PERIOD_SEC)
		return xrl_fail(EINVAL, "rule %s: a byte rate is per second", pfx);
	if (r->algo != XRL_ALGO_GCRA) {
		per_window = r->unit == XRL_UNIT_BITS ? r->rate_count / 8 : r->rate_count;
		if (!xrl_rate_interval(1, period) || !per_window)
			return xrl_fail(EINVAL, "rule %s: rate must be at least 1 per window (a second, a minute or an hour)", pfx);
		if (per_window > XRL_WIN_COUNT_MAX)
			return xrl_fail(EINVAL, "rule %s: rate must be at most %llu per window", pfx,
				    XRL_WIN_COUNT_MAX);
		if (bytes && per_window < XRL_MIN_BYTES)
			return xrl_fail(EINVAL, "rule %s: a byte rate under %u bytes per window never passes a full-size frame",
				    pfx, XRL_MIN_BYTES);
		r->interval = period;
		r->limit = per_window;
		return 0;
	}
	/* a byte rate's token bucket: bits per second as 1/8 byte per second */
	r->interval = xrl_rate_interval(r->rate_count,
					r->unit == XRL_UNIT_BITS ? period * 8 : period);
	if (!r->interval)
		return xrl_fail(EINVAL, "rule %s: a byte rate must be between 1 byte/s and %llu bytes/s (800mbit)",
			    pfx, XRL_RATE_MAX_PER_SEC);
	*bad = XRL_FIELD_BURST;
	if (r->burst < XRL_MIN_BYTES)
		return xrl_fail(EINVAL, "rule %s: burst of a byte rate must be at least %u bytes (a full-size frame)",
			    pfx, XRL_MIN_BYTES);
	r->limit = xrl_burst_limit(r->interval, r->burst);
	if (!r->limit)
		return xrl_fail(EINVAL, "rule %s: burst %u takes too long to refill at this rate (over a year)",
			    pfx, r->burst);
	return 0;
}

/* A shared GCRA of count per period_ns and burst: interval, limit and the
 * chunk a CPU takes at once. */
static int shared_gcra(__u64 count, __u64 period_ns, __u32 burst, const char *pfx,
		       const char *what, __u64 *interval, __u64 *limit, __u32 *chunk)
{
	*interval = xrl_rate_interval(count, period_ns);
	if (!*interval)
		return xrl_fail(EINVAL, "rule %s: %s rate must be between 1/h and %llu/s",
			    pfx, what, XRL_RATE_MAX_PER_SEC);
	*limit = xrl_burst_limit(*interval, burst);
	if (!*limit)
		return xrl_fail(EINVAL, "rule %s: %s burst %u takes too long to refill at this rate (over a year)",
			    pfx, what, burst);
	*chunk = xrl_chunk(burst, libbpf_num_possible_cpus());
	return 0;
}

/*
 * The data path's coarse clock moves a tick at a time (clock_getres() of
 * CLOCK_MONOTONIC_COARSE: 4 ms at HZ=250). A token bucket whose tolerance
 * (burst / rate) is under XRL_PRECISE_TICKS ticks would admit at most its
 * burst a tick, a fraction of its rate ("100000/s burst 10": 2,500/s): such
 * a rule, or one whose aggregate is such a bucket, meters on the precise
 * clock instead (some 20 ns a packet more).
 */
static __u64 coarse_tick_tu(void)
{
	static __u64 tick;
	struct timespec ts;

	if (!tick) {
		__u64 ns = 4000000;	/* HZ=250, if the clock will not say */

		if (!clock_getres(CLOCK_MONOTONIC_COARSE, &ts) && (ts.tv_sec || ts.tv_nsec))
			ns = ts.tv_sec * XRL_NSEC_PER_SEC + ts.tv_nsec;
		tick = xrl_ns_to_tu(ns);
	}
	return tick;
}

static void rule_clock(struct xrl_rule *r)
{
	__u64 need = XRL_PRECISE_TICKS * coarse_tick_tu();

	r->precise = (r->algo == XRL_ALGO_GCRA && r->limit && r->limit < need) ||
		     (r->agg_limit && r->agg_limit < need);
}

/* aggregate RATE [burst N]: the burst defaults to one second of the rate
 * (at least 1, at most 2^32 - 1); new-keys RATE: burst = the rate's count. */
static int aggregate_check(struct xrl_rule *r, const char *pfx, enum xrl_rule_field *bad)
{
	int err;

	r->agg_interval = r->agg_limit = 0;
	r->agg_chunk = 0;
	if (r->agg_rate_count) {
		*bad = XRL_FIELD_AGGREGATE;
		if (!r->agg_burst) {
			__u64 b = r->agg_rate_count * XRL_PERIOD_SEC / r->agg_rate_period_ns;

			r->agg_burst = b < 1 ? 1 : b > UINT32_MAX ? UINT32_MAX : b;
		}
		err = shared_gcra(r->agg_rate_count, r->agg_rate_period_ns, r->agg_burst, pfx,
				  "aggregate", &r->agg_interval, &r->agg_limit, &r->agg_chunk);
		if (err)
			return err;
	}
	if (r->nk_rate_count) {
		*bad = XRL_FIELD_NEWKEYS;
		r->nk_burst = r->nk_rate_count > UINT32_MAX ? UINT32_MAX : r->nk_rate_count;
		return shared_gcra(r->nk_rate_count, r->nk_rate_period_ns, r->nk_burst, pfx,
				   "new-keys", &r->nk_interval, &r->nk_limit, &r->nk_chunk);
	}
	r->nk_interval = r->nk_limit = 0;	/* the default comes at commit */
	return 0;
}

int xrl_rule_check(struct xrl_rule_entry *e, enum xrl_rule_field *bad)
{
	return xrl_rule_check_written(e, NULL, bad);
}

int xrl_rule_check_written(struct xrl_rule_entry *e, const struct xrl_rule_written *w,
			   enum xrl_rule_field *bad)
{
	struct xrl_rule *r = &e->r;
	int maxlen = e->family == 6 ? 128 : 32;
	char pfx[INET6_ADDRSTRLEN + 8];
	enum xrl_rule_field dummy;
	__u8 mask[16] = {};
	int err;

	if (!bad)
		bad = &dummy;
	xrl_prefix_format(e, pfx, sizeof(pfx));
	if (rule_check_written(r, w, bad)) {
		char msg[sizeof(xrl__errbuf)];

		/* a parser shows the message at the word; a rule set checked
		 * as a whole needs to say which rule it is about */
		if (w)
			return -EINVAL;
		snprintf(msg, sizeof(msg), "%s", xrl_errmsg());
		return xrl_fail(EINVAL, "rule %s: %s", pfx, msg);
	}
	/* a rule that bans: its defaults written out (rule list config) */
	if (r->ban_s) {
		if (!r->ban_after)
			r->ban_after = 1;
		if (!r->ban_max_s)
			r->ban_max_s = r->ban_s > XRL_BAN_MAX_DEFAULT_S ? r->ban_s : XRL_BAN_MAX_DEFAULT_S;
	}
	*bad = XRL_FIELD_ACTION;
	if (xrl_rule_is_set(e) && r->ep)
		return xrl_fail(EINVAL, "rule %s: a set rule takes no proto, dport or syn (an endpoint rule's prefix is a prefix)", pfx);
	if (r->action > XRL_ACT_DENY)
		return xrl_fail(EINVAL, "rule %s: unknown action %u", pfx, r->action);
	if (!r->key_len) {
		r->key_len = e->family == 6 ? 64 : 32;
		if (r->key_len < e->prefix_len)
			r->key_len = e->prefix_len;
	}
	*bad = XRL_FIELD_KEYLEN;
	if (r->key_len > maxlen && xrl_rule_is_set(e))
		return xrl_fail(EINVAL, "rule %s: key length /%u: a set rule's per /LEN keys IPv4 sources, at most /32 (IPv6 ones by /64)",
			    pfx, r->key_len);
	if (r->key_len > maxlen)
		return xrl_fail(EINVAL, "rule %s: key length /%u is longer than an IPv%d address",
			    pfx, r->key_len, e->family);
	if (r->key_len < e->prefix_len)
		return xrl_fail(EINVAL, "rule %s: key length /%u is shorter than the prefix",
			    pfx, r->key_len);
	xrl__mask_bits(mask, r->key_len, maxlen / 8);
	memcpy(r->key_mask, mask, sizeof(r->key_mask));

	*bad = XRL_FIELD_ACTION;
	if (rule_check_endpoint(e, pfx))
		return -EINVAL;
	if (r->action != XRL_ACT_LIMIT) {
		/* allow and deny are never metered */
		r->interval = r->limit = 0;
		r->agg_interval = r->agg_limit = r->nk_interval = r->nk_limit = 0;
		r->precise = 0;
		return 0;
	}
	*bad = XRL_FIELD_RATE;
	if (!r->rate_count)
		return xrl_fail(EINVAL, "rule %s: rate must be at least 1", pfx);
	if (r->algo != XRL_ALGO_GCRA || r->unit != XRL_UNIT_PACKETS) {
		err = rule_check_units(e, pfx, bad) ?: aggregate_check(r, pfx, bad);
		rule_clock(r);
		return err;
	}
	r->interval = xrl_rate_interval(r->rate_count, r->rate_period_ns);
	if (!r->interval)
		return xrl_fail(EINVAL, "rule %s: rate must be between 1/h and %llu/s",
			    pfx, XRL_RATE_MAX_PER_SEC);
	*bad = XRL_FIELD_BURST;
	if (!r->burst)
		return xrl_fail(EINVAL, "rule %s: burst must be at least 1", pfx);
	r->limit = xrl_burst_limit(r->interval, r->burst);
	if (!r->limit)
		return xrl_fail(EINVAL, "rule %s: burst %u takes too long to refill at this rate (over a year)",
			    pfx, r->burst);
	err = aggregate_check(r, pfx, bad);
	rule_clock(r);
	return err;
}

/*
 * Rules without new-keys: table / XRL_NEWKEYS_DEFAULT_DIV new keys a second
 * after a burst of half the table: a spoofed flood fills the free half at
 * once and then turns the table over in no less than 8 s, so a real source
 * that sends once in a few seconds keeps its bucket.
 */
void xrl_rules_newkeys_default(struct xrl_rule_entry *v, size_t n, int table)
{
	__u64 rate = table > 0 ? (__u64)table / XRL_NEWKEYS_DEFAULT_DIV : 0;
	__u64 burst = table > 0 ? (__u64)table / 2 : 0;

	if (rate < 1)
		rate = 1;
	if (burst < rate)
		burst = rate;
	for (size_t i = 0; i < n; i++) {
		struct xrl_rule *r = &v[i].r;

		if (r->action != XRL_ACT_LIMIT || r->nk_rate_count)
			continue;
		r->nk_interval = xrl_rate_interval(rate, XRL_PERIOD_SEC);
		r->nk_burst = burst;
		r->nk_limit = xrl_burst_limit(r->nk_interval, burst);
		r->nk_chunk = xrl_chunk(burst, libbpf_num_possible_cpus());
	}
}

int xrl_rule_prepare(struct xrl_rule_entry *e)
{
	return xrl_rule_check(e, NULL);
}

/* Order by family, prefix length, address: equal prefixes are neighbours. */
int xrl_rule_cmp_prefix(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = *(const struct xrl_rule_entry *const *)a;
	const struct xrl_rule_entry *y = *(const struct xrl_rule_entry *const *)b;

	if (x->family != y->family)
		return x->family - y->family;
	if (xrl_rule_is_set(x) || xrl_rule_is_set(y))	/* a set rule: by its set */
		return strcmp(x->set, y->set);
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	if (memcmp(x->addr, y->addr, 16))
		return memcmp(x->addr, y->addr, 16);
	/* an endpoint rule is named by its prefix and what it covers */
	if (x->r.ep != y->r.ep || x->r.proto != y->r.proto || x->r.syn != y->r.syn)
		return (x->r.ep - y->r.ep) * 65536 + (x->r.proto - y->r.proto) * 2 + (x->r.syn - y->r.syn);
	if (x->r.dport_lo != y->r.dport_lo)
		return x->r.dport_lo - y->r.dport_lo;
	return x->r.dport_hi - y->r.dport_hi;
}

static int cmp_id_ptr(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = *(const void *const *)a, *y = *(const void *const *)b;

	return x->r.id < y->r.id ? -1 : x->r.id > y->r.id;
}

/*
 * Every error of a whole set, each reported once through report(): a rule
 * out of range, every duplicate prefix and every duplicate id (each second,
 * third, ... occurrence, with `first` the index of the one written first;
 * -1 when there is none). Returns the first error, or 0.
 */
int xrl_rules_check_all(struct xrl_rule_entry *v, size_t n, xrl_rules_report report, void *ctx)
{
	struct xrl_rule_entry **p = NULL;
	int err = 0, e;

	/* the one limit, for the CLI, the daemon and --check alike */
	if (n > XRL_MAX_RULES) {
		err = xrl_fail(ENOSPC, "too many rules: %zu (at most %d, IPv4 and IPv6 together)",
			   n, XRL_MAX_RULES);
		if (report)
			report(ctx, XRL_MAX_RULES, -1, xrl_errmsg());
		return err;
	}
	{
		size_t nsets = 0;

		for (size_t i = 0; i < n; i++)
			if (xrl_rule_is_set(&v[i]) && ++nsets > XRL_MAX_SET_RULES) {
				err = xrl_fail(ENOSPC, "too many set rules: at most %d rules take a set",
					       XRL_MAX_SET_RULES);
				if (report)
					report(ctx, i, -1, xrl_errmsg());
				return err;
			}
	}
	for (size_t i = 0; i < n; i++) {
		e = xrl_rule_prepare(&v[i]);
		if (e) {
			err = err ?: e;
			if (!report)
				return err;
			report(ctx, i, -1, xrl_errmsg());
		}
	}
	if (n < 2 || err)
		return err;
	p = malloc(n * sizeof(*p));
	if (!p)
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		p[i] = &v[i];
	xrl_sort(p, n, sizeof(*p), xrl_rule_cmp_prefix);
	/* within a run of equal prefixes the first written is the one kept */
	for (size_t i = 0, j; i < n; i = j) {
		struct xrl_rule_entry *first = p[i];

		for (j = i + 1; j < n && xrl_rule_cmp_prefix(&p[i], &p[j]) == 0; j++)
			if (p[j] < first)
				first = p[j];
		for (size_t k = i; k < j; k++) {
			char pfx[INET6_ADDRSTRLEN + 8];

			if (p[k] == first)
				continue;
			xrl_prefix_format(p[k], pfx, sizeof(pfx));
			e = xrl_rule_is_set(p[k]) ?
			    xrl_fail(EEXIST, "duplicate set rule %s: one rule a set", pfx) :
			    first->r.id ? xrl_fail(EEXIST, "duplicate prefix %s: rule %u has it already",
					       pfx, first->r.id)
					: xrl_fail(EEXIST, "duplicate prefix %s", pfx);
			err = err ?: e;
			if (!report)
				goto out;
			report(ctx, p[k] - v, first - v, xrl_errmsg());
		}
	}
	xrl_sort(p, n, sizeof(*p), cmp_id_ptr);
	for (size_t i = 0, j; i < n; i = j) {
		struct xrl_rule_entry *first = p[i];

		for (j = i + 1; j < n && p[i]->r.id && p[j]->r.id == p[i]->r.id; j++)
			if (p[j] < first)
				first = p[j];
		for (size_t k = i; k < j && p[i]->r.id; k++) {
			if (p[k] == first)
				continue;
			e = xrl_fail(EEXIST, "duplicate rule id %u", p[k]->r.id);
			err = err ?: e;
			if (!report)
				goto out;
			report(ctx, p[k] - v, first - v, xrl_errmsg());
		}
	}
	/* what the endpoint tables can hold, checked here so that --check,
	 * the CLI and a reload refuse the same sets */
	if (!err) {
		size_t bad = 0;

		err = xrl__endpoints_check(v, n, &bad);
		if (err && report)
			report(ctx, bad, -1, xrl_errmsg());
	}
out:
	free(p);
	return err;
}

struct first_bad {
	size_t bad;
	bool set;
	char msg[sizeof(xrl__errbuf)];
};

static void keep_first(void *ctx, size_t bad, long first, const char *msg)
{
	struct first_bad *f = ctx;

	(void)first;
	/* the earliest rule in the file that is wrong */
	if (!f->set || bad < f->bad) {
		f->bad = bad;
		f->set = true;
		snprintf(f->msg, sizeof(f->msg), "%s", msg);
	}
}

int xrl_rules_validate(struct xrl_rule_entry *v, size_t n, size_t *bad)
{
	struct first_bad f = {};
	int err = xrl_rules_check_all(v, n, keep_first, &f);

	if (err && f.set) {
		*bad = f.bad;
		snprintf(xrl__errbuf, sizeof(xrl__errbuf), "%s", f.msg);
	}
	return err;
}
