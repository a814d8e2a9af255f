// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: capture. The library runs the capture (maps/capture.h) and
 * encodes the blocks (base/pcapw.h); this writes them, a pcapng file with
 * each packet's verdict and rule in its comment, or a classic pcap file.
 */
#include "rlctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>

#define MAX_IFACES	64
#define BLOCK_MAX	(XRL_CAPTURE_MAX_SNAPLEN + 512)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct writer {
	FILE *f;
	bool stream;		/* stdout: flushed after every packet */
	int format;		/* enum xrl_capture_format */
	__u32 snaplen;
	__u64 wall_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	__u32 ifindex[MAX_IFACES];	/* pcapng interface id -> ifindex */
	__u32 nifaces;
	__u64 written, count;
	bool failed;
	int err;		/* the errno of the first write that failed */
	uint8_t buf[BLOCK_MAX];
};

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A failed write: its errno kept for the message (what runs between the
 * write and the message, the capture's stop, changes errno). */
static void write_failed(struct writer *w, int err)
{
	if (!w->failed)
		w->err = err;
	w->failed = true;
}

static void put(struct writer *w, size_t n)
{
	if (!n)
		write_failed(w, ENOBUFS);
	else if (fwrite(w->buf, 1, n, w->f) != n)
		write_failed(w, errno);
}

/* The pcapng interface id of an ifindex: an Interface Description Block
 * the first time it is seen (the last id when there are too many). */
static __u32 iface_id(struct writer *w, __u32 ifindex)
{
	char name[IF_NAMESIZE + 16];

	for (__u32 i = 0; i < w->nifaces; i++)
		if (w->ifindex[i] == ifindex)
			return i;
	if (w->nifaces == MAX_IFACES)
		return MAX_IFACES - 1;
	if (!if_indextoname(ifindex, name))
		snprintf(name, sizeof(name), "ifindex %u", ifindex);
	put(w, xrl_pcapng_idb(w->buf, sizeof(w->buf), XRL_LINKTYPE_ETHERNET, w->snaplen, name));
	w->ifindex[w->nifaces] = ifindex;
	return w->nifaces++;
}

static int on_packet(const struct xrl_capture_pkt *p, void *ctx)
{
	struct writer *w = ctx;
	__u64 ts = p->ts_ns + w->wall_offset;
	char comment[128], rule[24];

	if (w->failed || (w->count && w->written >= w->count))
		return 1;
	if (w->format == XRL_CAPTURE_PCAP) {
		put(w, xrl_pcap_record(w->buf, sizeof(w->buf), ts, p->data, p->caplen, p->len));
	} else {
		__u32 id = iface_id(w, p->ifindex);

		if (p->has_rule)
			snprintf(rule, sizeof(rule), "%u", p->rule_id);
		else
			snprintf(rule, sizeof(rule), "none");
		snprintf(comment, sizeof(comment), "xdp-rl verdict=%s rule=%s mode=%s ifindex=%u",
			 p->verdict == XRL_CAPTURE_F_DROP ? "drop" : "pass", rule,
			 xrl_mode_name(p->mode), p->ifindex);
		put(w, xrl_pcapng_epb(w->buf, sizeof(w->buf), id, ts, p->data, p->caplen, p->len,
				      XRL_PCAPNG_INBOUND, comment));
	}
	if (w->stream && fflush(w->f))
		write_failed(w, errno);
	if (!w->failed)
		w->written++;	/* the summary counts what was written */
	return w->failed || (w->count && w->written >= w->count);
}

static int filter_of(const struct xrl_cmd *c, struct xrl_capture_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->verdicts = c->capture.verdict;
	f->snaplen = c->capture.snaplen;
	if (c->capture.rule) {
		f->has_rule = true;
		f->rule_id = c->capture.rule;
	}
	if (c->capture.key[0]) {
		struct xrl_rule_entry e;

		if (xrl_prefix_parse(c->capture.key, &e)) {
			p_err("%s", xrl_errmsg());
			return -1;
		}
		f->family = e.family;
		f->prefix_len = e.prefix_len;
		memcpy(f->addr, e.addr, sizeof(f->addr));
	}
	return 0;
}

/* The summary, on stderr (stdout may be the capture). */
static void summary(const struct writer *w, const struct xrl_capture_totals *t)
{
	if (opt.json) {
		struct jw j;

		jw_init(&j, stderr, opt.pretty);
		jw_obj_start(&j);
		jw_ku64(&j, "written", w->written);
		jw_ku64(&j, "matched", t->matched);
		jw_ku64(&j, "captured", t->captured);
		jw_ku64(&j, "left_out", t->left_out);
		jw_ku64(&j, "buffer_dropped", t->lost);
		jw_ku64(&j, "rate_cap", XRL_CAPTURE_RATE);
		jw_obj_end(&j);
		jw_finish(&j);
		return;
	}
	fprintf(stderr, "capture: %llu packets written; %llu matched, %llu left out over the rate cap "
		"(%u/s), %llu dropped by the buffer\n",
		(unsigned long long)w->written, (unsigned long long)t->matched,
		(unsigned long long)t->left_out, XRL_CAPTURE_RATE, (unsigned long long)t->lost);
}

int do_capture(struct xrl_cmd *c)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: poll returns */
	struct xrl_capture_totals t = {};
	struct xrl_capture_filter f;
	struct xrl_capture_run *run = NULL;
	struct writer *w;
	struct xrl *x = NULL;
	__u64 t0, deadline = 0;
	int rc = 1, err;

	if (filter_of(c, &f))
		return EXIT_USAGE;
	w = calloc(1, sizeof(*w));
	if (!w) {
		p_err("out of memory");
		return 1;
	}
	w->format = c->capture.format;
	w->snaplen = c->capture.snaplen ? c->capture.snaplen : XRL_CAPTURE_SNAPLEN;
	w->count = c->capture.count;
	w->stream = !strcmp(c->capture.file, "-");
	if (open_reader(&x))
		goto out;
	if (xrl_capture_start(x, &f, on_packet, w, &run)) {
		p_err("%s", xrl_errmsg());
		goto out;
	}
	if (w->stream) {
		if (isatty(STDOUT_FILENO)) {
			p_err("the capture is binary: write it to a file, or pipe it (capture - | tcpdump -r -)");
			goto out;
		}
		w->f = stdout;
	} else if (!(w->f = fopen(c->capture.file, "we"))) {
		p_err("cannot write %s: %s", c->capture.file, strerror(errno));
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a reader gone: a write error, then the summary */
	w->wall_offset = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	if (w->format == XRL_CAPTURE_PCAP)
		put(w, xrl_pcap_header(w->buf, sizeof(w->buf), w->snaplen, XRL_LINKTYPE_ETHERNET));
	else
		put(w, xrl_pcapng_shb(w->buf, sizeof(w->buf), "xdp-rlctl capture"));
	if (w->stream)
		fflush(w->f);
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (c->capture.seconds)
		deadline = t0 + c->capture.seconds * 1000000000ULL;
	rc = 0;
	while (!stop && !w->failed && (!w->count || w->written < w->count)) {
		int wait = 250;

		if (deadline) {
			__u64 now = clock_ns(CLOCK_MONOTONIC);

			if (now >= deadline)
				break;
			if ((deadline - now) / 1000000 < (__u64)wait)
				wait = (deadline - now) / 1000000 + 1;
		}
		err = xrl_capture_poll(run, wait);
		if (err < 0) {
			p_err("%s", xrl_errmsg());
			rc = 1;
			break;
		}
		if (!w->stream && fflush(w->f))
			write_failed(w, errno);
	}
	xrl_capture_stop(run, &t);
	run = NULL;
	if (w->f && fflush(w->f))
		write_failed(w, errno);
	if (w->failed && !stop && !(w->count && w->written >= w->count)) {
		p_err("cannot write %s: %s", w->stream ? "to stdout" : c->capture.file, strerror(w->err));
		rc = 1;
	}
	summary(w, &t);
out:
	xrl_capture_stop(run, NULL);
	if (w->f && w->f != stdout)
		fclose(w->f);
	free(w);
	xrl_close(x);
	return rc;
}
