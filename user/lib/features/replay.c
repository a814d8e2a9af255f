// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: replay a capture through the real XDP program (BPF_PROG_TEST_RUN)
 * on a private instance whose clock is the capture's timestamps. What the
 * rules would have done is what the program counted; the keys that would
 * have been limited are the buckets whose drop counter moved, seen after
 * each dropped frame.
 *
 * A key's count is its bucket's drop counter plus the drops the per-CPU
 * hot-key cache holds for it and has not added to the bucket yet. The walk
 * (XRL_REPLAY_WALK) reads that sum after every dropped frame: the bucket
 * and all XRL_HOT_SLOTS entries of the cache, ~260 bpf() calls a frame. The
 * default path asks what moved it instead: a frame moves its key's count
 * by a refusal of the bucket (its counter, read before and after the frame,
 * moves) or by an answer of the cache (the rule's hot_dropped moves: the
 * cache's entries are found by the packet's source, so the entry that
 * answered is this key's); a flush of the cache into the bucket moves
 * neither the count nor, within one frame of the key, anything else. The
 * counts themselves are read once, at the end, with one read of the cache.
 * The rule sets do not change during a replay, so a source's rule is
 * looked up once. Both paths give the same result (test_replay_paths).
 */
#define _GNU_SOURCE	/* sched_getcpu(), CPU_SET() */
#include "maps/internal.h"
#include "features/replay.h"
#include "features/replay_keys.h"
#include "maps/syncookie.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <linux/if_ether.h>
/* pcap's own struct bpf_insn would clash with the kernel's */
#define PCAP_DONT_INCLUDE_PCAP_BPF_H
#include <pcap/pcap.h>
#include <pcap/dlt.h>

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2	276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4	228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6	229
#endif

#define ETH_HDR		14
#define SLL_HDR		16
#define SLL2_HDR	20

/* ---- frames ---- */

/* The start of the L3 header of an Ethernet frame, past up to two VLAN
 * tags as the program's parser walks them, and its ethertype; 0 when the
 * frame is too short to say. */
static size_t l3_offset(const __u8 *f, size_t len, __u16 *proto)
{
	size_t off = 12;

	if (len < ETH_HDR)
		return 0;
	*proto = f[12] << 8 | f[13];
	for (int i = 0; i < 2 && (*proto == ETH_P_8021Q || *proto == ETH_P_8021AD); i++) {
		if (len < off + 6)
			return 0;
		off += 4;
		*proto = f[off] << 8 | f[off + 1];
	}
	return off + 2;
}

/* The source address of an Ethernet frame as the program's parser finds
 * it (IPv4 or IPv6): its family, or 0. Only asked about frames the program
 * dropped; a frame the program found malformed has no bucket, whatever
 * this says. */
static int frame_source(const __u8 *f, size_t len, __u8 *addr)
{
	__u16 proto;
	size_t off = l3_offset(f, len, &proto);

	if (!off)
		return 0;
	if (proto == ETH_P_IP && len >= off + 20) {
		memcpy(addr, f + off + 12, 4);
		return 4;
	}
	if (proto == ETH_P_IPV6 && len >= off + 40) {
		memcpy(addr, f + off + 8, 16);
		return 6;
	}
	return 0;
}

/* The offset of the end of the IP header of an Ethernet frame (IPv4 with
 * its options, IPv6's fixed header), *l3 the offset of its start; 0 when
 * the frame does not hold all of it. */
static size_t ip_header_end(const __u8 *f, size_t len, size_t *l3)
{
	__u16 proto;
	size_t off = l3_offset(f, len, &proto);

	if (!off)
		return 0;
	*l3 = off;
	if (proto == ETH_P_IP && len >= off + 20 && (f[off] & 0xf) >= 5)
		off += (f[off] & 0xf) * 4;
	else if (proto == ETH_P_IPV6)
		off += 40;
	else
		return 0;
	return len >= off ? off : 0;
}

/*
 * A frame cut by the snaplen, or longer than XRL_REPLAY_MAX_FRAME: when the
 * captured bytes hold its whole IP header, the rest is filled with zeros up
 * to its length on the wire (at most XRL_REPLAY_MAX_FRAME), so that the
 * program's length checks see the frame that was on the wire; the verdict
 * reads the headers only. A frame longer than that gets the IP length of
 * what is run. Returns the length to run, or len when the cut falls inside
 * the headers (*cut_hdr set): run as captured, the program finds it
 * malformed, as it would the same bytes on the wire.
 */
static size_t frame_complete(__u8 *f, size_t len, __u64 wire, bool *cut_hdr)
{
	size_t l3 = 0, target = wire < XRL_REPLAY_MAX_FRAME ? wire : XRL_REPLAY_MAX_FRAME;

	*cut_hdr = false;
	if (target <= len && wire <= XRL_REPLAY_MAX_FRAME)
		return len;
	if (!ip_header_end(f, len, &l3)) {
		*cut_hdr = true;
		return len;
	}
	memset(f + len, 0, target - len);
	if (wire > XRL_REPLAY_MAX_FRAME) {
		size_t ip_len = target - l3;

		if ((f[l3] >> 4) == 6)
			ip_len -= 40;
		f[l3 + ((f[l3] >> 4) == 6 ? 4 : 2)] = ip_len >> 8;
		f[l3 + ((f[l3] >> 4) == 6 ? 4 : 2) + 1] = ip_len & 0xff;
	}
	return target;
}

static void eth_header(__u8 *f, const __u8 *src, size_t srclen, __u16 proto)
{
	memset(f, 0, ETH_HDR);
	if (srclen == 6)
		memcpy(f + 6, src, 6);
	f[12] = proto >> 8;
	f[13] = proto & 0xff;
}

/* The frame to run, in buf (XRL_REPLAY_MAX_FRAME bytes): its length, 0
 * when there is not enough of it for an Ethernet header. *converted is set
 * for a header built here; *wire gets the frame's length on the wire as
 * Ethernet. */
static size_t frame_build(int dlt, const struct pcap_pkthdr *h, const __u8 *d,
			  __u8 *buf, bool *converted, __u64 *wire)
{
	size_t caplen = h->caplen, hdr = 0, plen;
	__u16 proto = 0;

	*converted = dlt != DLT_EN10MB;
	switch (dlt) {
	case DLT_EN10MB:
		*wire = h->len;
		plen = caplen < XRL_REPLAY_MAX_FRAME ? caplen : XRL_REPLAY_MAX_FRAME;
		memcpy(buf, d, plen);
		return plen;
	case DLT_LINUX_SLL:
		/* pkttype, hatype, halen, addr[8], protocol */
		if (caplen < SLL_HDR)
			return 0;
		hdr = SLL_HDR;
		proto = d[14] << 8 | d[15];
		eth_header(buf, d + 6, d[4] << 8 | d[5], proto);
		break;
	case DLT_LINUX_SLL2:
		/* protocol, reserved, ifindex, hatype, pkttype, halen, addr[8] */
		if (caplen < SLL2_HDR)
			return 0;
		hdr = SLL2_HDR;
		proto = d[0] << 8 | d[1];
		eth_header(buf, d + 12, d[11], proto);
		break;
	default:	/* raw IP: the version says which */
		if (!caplen)
			return 0;
		proto = dlt == DLT_IPV6 || (dlt == DLT_RAW && d[0] >> 4 == 6) ?
			ETH_P_IPV6 : ETH_P_IP;
		eth_header(buf, NULL, 0, proto);
		break;
	}
	*wire = h->len - hdr + ETH_HDR;
	plen = caplen - hdr;
	if (plen > XRL_REPLAY_MAX_FRAME - ETH_HDR)
		plen = XRL_REPLAY_MAX_FRAME - ETH_HDR;
	memcpy(buf + ETH_HDR, d + hdr, plen);
	return ETH_HDR + plen;
}

static int cmp_key_first(const void *a, const void *b)
{
	const struct xrl_replay_key *x = a, *y = b;

	if (x->first_drop_ns != y->first_drop_ns)
		return x->first_drop_ns < y->first_drop_ns ? -1 : 1;
	return x->rule_id < y->rule_id ? -1 : x->rule_id > y->rule_id;
}

/* Records in the file, for the size of the bucket tables. */
static int count_frames(const char *path, __u64 *n)
{
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p = pcap_open_offline(path, eb);

	*n = 0;
	if (!p)
		return xrl_fail(EINVAL, "cannot read the capture %s: %s", path, eb);
	while (pcap_next_ex(p, &h, &d) == 1)
		(*n)++;
	pcap_close(p);
	return 0;
}

int xrl_replay(const char *path, const struct xrl_rule_entry *rules, size_t n,
	       struct xrl_replay_result *out)
{
	return xrl_replay_flags(path, rules, n, 0, out);
}

int xrl_replay_flags(const char *path, const struct xrl_rule_entry *rules, size_t n,
		     unsigned int flags, struct xrl_replay_result *out)
{
	bool walk = flags & XRL_REPLAY_WALK, pinned = false;
	cpu_set_t cpus;
	struct rule_memo *memo = NULL;
	struct xrl_rule_stats *rsv = NULL;
	__u64 *hot_last = NULL;
	struct xrl_open_opts o = { .no_pin = true, .test_clock = true };
	struct xrl_rule_entry *v = NULL, *got = NULL;
	char eb[PCAP_ERRBUF_SIZE];
	struct key_table kt = {};
	struct pcap_pkthdr *h;
	__u8 buf[XRL_REPLAY_MAX_FRAME];
	struct xrl *x = NULL;
	const u_char *d;
	pcap_t *p = NULL;
	__u64 frames, prev = 0, slack;
	size_t ngot = 0;
	int fd[2] = { -1, -1 }, err, r;
	const char *dname;

	memset(out, 0, sizeof(*out));
	xrl__errbuf[0] = '\0';
	/* The capture is read twice (its frame count sizes the tables): a
	 * FIFO or a pipe would hang or come back empty the second time. */
	{
		struct stat st;

		if (stat(path, &st))
			return xrl_fail(errno, "cannot read the capture %s: %s", path, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return xrl_fail(EINVAL, "cannot read the capture %s: not a regular file (a pipe or a FIFO cannot be read twice: save it to a file first)",
				    path);
	}
	err = count_frames(path, &frames);
	if (err)
		return err;
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!p)
		return xrl_fail(EINVAL, "cannot read the capture %s: %s", path, eb);
	out->linktype = pcap_datalink(p);
	dname = pcap_datalink_val_to_name(out->linktype);
	snprintf(out->linktype_name, sizeof(out->linktype_name), "%s",
		 dname ? dname : "unknown");
	switch (out->linktype) {
	case DLT_EN10MB: case DLT_LINUX_SLL: case DLT_LINUX_SLL2:
	case DLT_RAW: case DLT_IPV4: case DLT_IPV6:
		break;
	default:
		err = xrl_fail(EPROTONOSUPPORT, "%s: link type %s (%d) is not supported: replay takes "
			   "Ethernet (EN10MB), Linux cooked (LINUX_SLL, LINUX_SLL2) and raw IP "
			   "(RAW, IPV4, IPV6) captures", path, out->linktype_name, out->linktype);
		goto out;
	}

	/* Bucket tables with room for a key per frame, so that the LRU
	 * evicts nothing a real table of that size would have kept. */
	o.keys = frames * 2 + 256ULL * libbpf_num_possible_cpus() < XRL_DEFAULT_KEYS ?
		 frames * 2 + 256ULL * libbpf_num_possible_cpus() : XRL_DEFAULT_KEYS;
	slack = 256ULL * libbpf_num_possible_cpus();
	if (o.keys < 4096)
		o.keys = 4096;
	err = xrl_open(&o, &x);
	if (err)
		goto out;
	pinned = xrl__pin_cpu(&cpus);
	v = calloc(n + 1, sizeof(*v));
	if (!v) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = rules[i];
		v[i].r.slot = v[i].r.gen = 0;	/* this instance hands them out */
	}
	err = xrl_rules_commit(x, v, n);
	if (err)
		goto out;
	err = xrl_mode_set(x, XRL_MODE_ENFORCE);
	if (err)
		goto out;
	memo = calloc(RULE_MEMO_SLOTS, sizeof(*memo));
	rsv = calloc(x->ncpus, sizeof(*rsv));
	hot_last = calloc(XRL_RULE_SLOTS, sizeof(*hot_last));
	if (!memo || !rsv || !hot_last) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		fd[i] = xrl__rules_fd(x, i ? 6 : 4);
		if (fd[i] < 0) {
			err = xrl_fail(fd[i], "cannot open the replay's IPv%d rule set: %s",
				   i ? 6 : 4, strerror(-fd[i]));
			goto out;
		}
	}

	while ((r = pcap_next_ex(p, &h, &d)) == 1) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = buf, .repeat = 1);
		__u64 ts = (__u64)h->ts.tv_sec * XRL_NSEC_PER_SEC + h->ts.tv_usec;	/* ns: NANO precision */
		bool conv, cut_hdr;
		__u64 wire = 0;
		size_t len = frame_build(out->linktype, h, d, buf, &conv, &wire);
		struct xrl_rule rule;
		__u8 addr[16] = {};
		struct xrl_key key;
		__u64 before = 0;
		int family = 0;
		bool have;

		if (!out->frames)
			out->first_ns = ts;
		else if (ts < prev)
			out->clock_backwards++;
		out->frames++;
		out->last_ns = prev = ts;
		if (len < ETH_HDR) {
			out->skipped_short++;
			continue;
		}
		if (h->caplen < h->len)
			out->truncated++;
		if (wire > XRL_REPLAY_MAX_FRAME)
			out->oversize++;
		len = frame_complete(buf, len, wire, &cut_hdr);
		if (cut_hdr)
			out->cut_in_headers++;
		if (conv)
			out->converted++;

		/* The fast path: the key's bucket counter before the frame.
		 * Only a refusal of its own frames moves it, and what it was
		 * after the last is known, unless the cache has answered for
		 * the key: a fill for another source may then flush the key's
		 * drops into it, so it is read. Before its first frame seen,
		 * no refusal has moved it. */
		have = false;
		if (!walk && (family = frame_source(buf, len, addr)) &&
		    xrl__source_rule(memo, fd, family, addr, &rule) && rule.action == XRL_ACT_LIMIT) {
			struct xrl_replay_key *e;
			struct xrl_bucket b;

			have = true;
			xrl_key_of(&key, &rule, family, addr);
			e = xrl__kt_find(&kt, &key);
			before = e ? kt.seen[e - kt.v].dropped : 0;
			if (e && kt.seen[e - kt.v].answered)
				before = xrl_bucket_peek(x, &key, &b) ? 0 : b.dropped;
		}

		xrl_test_clock_set(x, ts);
		t.data_size_in = len;
		if (bpf_prog_test_run_opts(xrl_prog_fd(x), &t)) {
			err = xrl_fail(errno, "%s: frame %llu (%zu bytes): the test run failed: %s", path,
				   (unsigned long long)out->frames, len, strerror(errno));
			goto out;
		}
		out->run++;
		if (t.retval == XDP_TX)
			out->answered++;	/* refused, and answered in place */
		else if (t.retval != XDP_DROP)
			out->passed++;
		else
			out->dropped++;

		if (!walk) {
			struct xrl_replay_key *e;
			struct xrl_bucket b;
			bool answered;

			if (!have || (t.retval == XDP_PASS && !rule.dry_run))
				continue;
			/* An answer of the cache moved the count; the bucket
			 * is still there while the table cannot have evicted
			 * anything: a frame makes two keys at most, and the
			 * table was sized with room for those and per-CPU
			 * slack (XRL_DEFAULT_KEYS caps it for long captures). */
			answered = xrl__cache_answered(x, rule.slot, hot_last, rsv);
			if (answered && out->run * 2 + slack <= o.keys) {
				b.dropped = 0;
			} else if (xrl_bucket_peek(x, &key, &b)) {
				continue;
			}
			if (!(e = xrl__kt_get(&kt, &key, &rule))) {
				err = xrl_fail(ENOMEM, "out of memory");
				goto out;
			}
			if (answered)
				kt.seen[e - kt.v].answered = true;
			else
				kt.seen[e - kt.v].dropped = b.dropped;
			if (b.dropped > before || answered) {
				if (!e->dropped)
					e->first_drop_ns = ts;
				e->last_drop_ns = ts;
				/* a lower bound: the count is read at the end */
				e->dropped = b.dropped > e->dropped ? b.dropped : e->dropped + 1;
			}
			continue;
		}

		/* Which key, if a bucket dropped it (or would have: a dry-run
		 * rule's frames pass): its drop counter moved. */
		family = frame_source(buf, len, addr);
		if (family) {
			struct xrl_lpm6_key k = { .prefixlen = family == 6 ? 128 : 32 };
			struct xrl_replay_key *e;
			struct xrl_bucket b;

			memcpy(k.addr, addr, 16);
			if (bpf_map_lookup_elem(fd[family == 6], &k, &rule) ||
			    rule.action != XRL_ACT_LIMIT ||
			    (t.retval == XDP_PASS && !rule.dry_run))
				continue;
			xrl_key_of(&key, &rule, family, addr);
			if (xrl_bucket_get(x, &key, &b))
				continue;
			if (!(e = xrl__kt_get(&kt, &key, &rule))) {
				err = xrl_fail(ENOMEM, "out of memory");
				goto out;
			}
			if (b.dropped > e->dropped) {
				if (!e->dropped)
					e->first_drop_ns = ts;
				e->last_drop_ns = ts;
				e->dropped = b.dropped;
			}
		}
	}
	if (r == PCAP_ERROR)
		snprintf(out->stopped, sizeof(out->stopped), "%s", pcap_geterr(p));

	if (!walk) {
		err = xrl__kt_counts(x, &kt);
		if (err)
			goto out;
	}
	err = xrl_rules_get(x, &got, &ngot);
	if (!err)
		err = xrl_global_stats_get(x, &out->global);
	if (err)
		goto out;
	out->rules = calloc(ngot + 1, sizeof(*out->rules));
	if (!out->rules) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ngot; i++) {
		out->rules[i].rule = got[i];
		err = xrl_rule_stats_get(x, got[i].r.slot, &out->rules[i].stats);
		if (!err && got[i].r.syncookies)
			err = xrl_sc_stats_get(x, got[i].r.slot, &out->rules[i].sc);
		if (err)
			goto out;
	}
	out->nrules = ngot;
	/* keys whose bucket never dropped were looked up for nothing */
	out->keys = kt.v;
	out->nkeys = 0;
	for (size_t i = 0; i < kt.n; i++)
		if (kt.v[i].dropped)
			kt.v[out->nkeys++] = kt.v[i];
	kt.v = NULL;
	xrl_sort(out->keys, out->nkeys, sizeof(*out->keys), cmp_key_first);
out:
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(kt.v);
	free(kt.slot);
	free(kt.gen);
	free(kt.seen);
	free(memo);
	free(rsv);
	free(hot_last);
	free(got);
	free(v);
	xrl_close(x);
	if (p)
		pcap_close(p);
	if (pinned)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	return err;
}

void xrl_replay_free(struct xrl_replay_result *r)
{
	free(r->rules);
	free(r->keys);
	r->rules = NULL;
	r->keys = NULL;
	r->nrules = r->nkeys = 0;
}
