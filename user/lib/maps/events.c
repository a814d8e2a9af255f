// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the live events of the data path, read from its ring buffers.
 */
#include "maps/internal.h"
#include "model/ban.h"
#include "xrl_emit.skel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_ether.h>

struct xrl_events {
	struct ring_buffer *rb;
	xrl_event_cb cb;
	void *ctx;
	bool draining;		/* discard: the backlog of a ring nobody read */
	int claim_fd;
	struct xrl *x;		/* for the claim's check */
};

static int on_sample(void *ctx, void *data, size_t size)
{
	struct xrl_events *ev = ctx;
	struct xrl_event e = {};

	if (ev->draining)
		return 0;
	memcpy(&e, data, size < sizeof(e) ? size : sizeof(e));
	return ev->cb(&e, ev->ctx);
}

int xrl_events_open(struct xrl *x, enum xrl_events_reader who, xrl_event_cb cb, void *ctx,
		    struct xrl_events **out)
{
	struct xrl_events *ev = calloc(1, sizeof(*ev));
	int err;

	if (!ev)
		return xrl_fail(ENOMEM, "out of memory");
	ev->cb = cb;
	ev->ctx = ctx;
	ev->claim_fd = -1;
	ev->x = x;
	if (who == XRL_EVENTS_CTL && x->pinned) {
		ev->claim_fd = xrl__events_claim(x);
		if (ev->claim_fd < 0) {
			err = ev->claim_fd;
			free(ev);
			return err;
		}
	}
	ev->rb = ring_buffer__new(x->map_fd[who == XRL_EVENTS_RLD ? M_EVENTS_RLD : M_EVENTS_CTL],
				  on_sample, ev, NULL);
	if (!ev->rb) {
		err = xrl_fail(errno, "cannot read the events ring: %s", strerror(errno));
		xrl_events_close(ev);
		return err;
	}
	ev->draining = true;
	ring_buffer__consume(ev->rb);
	ev->draining = false;
	*out = ev;
	return 0;
}

int xrl_events_fd(const struct xrl_events *ev)
{
	return ring_buffer__epoll_fd(ev->rb);
}

/*
 * The claim is an flock on DIR/events. When the pin directory is removed
 * and the daemon pins the maps again, the directory comes back without it,
 * and a second reader could claim the new one and take half the records.
 * Each poll renews the claim on the directory that is there now; if another
 * reader holds it already, this one gives way (-EBUSY, xrl_errmsg() says
 * why), so there is never more than one.
 */
static int claim_check(struct xrl_events *ev)
{
	struct stat a, b;
	char p[PATH_MAX];
	int fd;

	if (ev->claim_fd < 0)
		return 0;
	xrl__pin_path(ev->x, EVENTS_DIR, p, sizeof(p));
	if (stat(p, &a) == 0 && fstat(ev->claim_fd, &b) == 0 &&
	    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		return 0;
	fd = xrl__events_claim(ev->x);
	if (fd < 0)
		return xrl_fail(EBUSY, "the pin directory was replaced and another reader follows its events now: %s",
			    xrl_errmsg());
	close(ev->claim_fd);
	ev->claim_fd = fd;
	return 0;
}

int xrl_events_poll(struct xrl_events *ev, int timeout_ms)
{
	int err = claim_check(ev);

	return err ? err : ring_buffer__poll(ev->rb, timeout_ms);
}

int xrl_events_consume(struct xrl_events *ev)
{
	return ring_buffer__consume(ev->rb);
}

void xrl_events_close(struct xrl_events *ev)
{
	if (!ev)
		return;
	ring_buffer__free(ev->rb);
	if (ev->claim_fd >= 0)
		close(ev->claim_fd);
	free(ev);
}

int xrl_event_stats_get(struct xrl *x, struct xrl_event_stats *sum)
{
	size_t nf = sizeof(*sum) / sizeof(__u64);
	__u64 *vals = calloc(x->ncpus, sizeof(*sum)), *s = (__u64 *)sum;
	__u32 zero = 0;

	if (!vals)
		return xrl_fail(ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(x->map_fd[M_EVENT_STATS], &zero, vals)) {
		int err = xrl_fail(errno, "cannot read the event counters: %s", strerror(errno));

		free(vals);
		return err;
	}
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < x->ncpus; c++)
		for (size_t f = 1; f < nf; f++)		/* field 0: the cap's state */
			s[f] += vals[c * nf + f];
	free(vals);
	return 0;
}

const char *xrl_event_kind_name(int kind)
{
	return kind == XRL_EV_LIMITED ? "limited" : kind == XRL_EV_UNLIMITED ? "unlimited" :
	       kind == XRL_EV_BANNED ? "banned" : kind == XRL_EV_UNBANNED ? "unbanned" : "unknown";
}

bool xrl_event_is_ban(const struct xrl_event *e)
{
	return e->kind == XRL_EV_BANNED || e->kind == XRL_EV_UNBANNED;
}

void xrl_ban_event_format(const struct xrl_event *e, char *buf, size_t len)
{
	char key[64], by[40], d[32];
	struct xrl_ban b = { .origin = e->origin, .rule_id = e->rule_id };

	xrl_event_key_format(e, key, sizeof(key));
	if (e->origin == XRL_BAN_DECIDER)
		snprintf(by, sizeof(by), "a decider");
	else
		xrl_ban_by_format(&b, by, sizeof(by));
	if (e->kind == XRL_EV_UNBANNED) {
		snprintf(buf, len, "%s no longer banned (ban by %s %s; %llu dropped)", key, by,
			 e->cause == XRL_EV_CAUSE_LIFTED ? "lifted" : "ended",
			 (unsigned long long)e->dropped);
		return;
	}
	if (e->expires_ns > e->ts_ns)
		xrl_left_format(e->expires_ns - e->ts_ns, d, sizeof(d));
	snprintf(buf, len, "%s %sbanned by %s %s%s", key,
		 e->mode == XRL_MODE_DRY_RUN ? "would be " : "", by,
		 e->expires_ns ? "for " : "until ban del", e->expires_ns ? d : "");
}

void xrl_event_key_format(const struct xrl_event *e, char *buf, size_t len)
{
	int full = e->family == 4 ? 32 : 128;
	size_t l;

	xrl_addr_format(e->family, e->addr, buf, len);
	l = strlen(buf);
	if (e->key_len && e->key_len < full)
		snprintf(buf + l, len - l, "/%u", e->key_len);
}

__u64 xrl_event_wall_ns(struct xrl *x, __u64 ts_ns)
{
	struct timespec rt;
	__u64 now = xrl_now_ns(x), wall;

	clock_gettime(CLOCK_REALTIME, &rt);
	wall = (__u64)rt.tv_sec * XRL_NSEC_PER_SEC + rt.tv_nsec;
	return ts_ns <= now ? wall - (now - ts_ns) : wall + (ts_ns - now);
}

/*
 * The bans' events from userspace: a ban set, lifted or reclaimed here is
 * written into the data path's own rings by a small socket filter
 * (bpf/xrl_emit.bpf.c) run once per event with BPF_PROG_TEST_RUN, on this
 * instance's rings and event counters. Loaded at the first event of the
 * handle; when it cannot be (a handle without the rings, a kernel that
 * refuses it), the bans keep the data path's events alone: "banned" at the
 * first drop, "unbanned" at the first packet after the end.
 */
bool xrl__ban_events_ready(struct xrl *x)
{
	struct xrl_emit *e;

	if (x->emit)
		return true;
	if (x->emit_failed)
		return false;
	x->emit_failed = true;
	if (x->map_fd[M_EVENTS_RLD] < 0 || x->map_fd[M_EVENTS_CTL] < 0 ||
	    x->map_fd[M_EVENT_STATS] < 0)
		return false;
	e = xrl_emit__open();
	if (!e)
		return false;
	if (bpf_map__reuse_fd(e->maps.xrl_events_rld, x->map_fd[M_EVENTS_RLD]) ||
	    bpf_map__reuse_fd(e->maps.xrl_events_ctl, x->map_fd[M_EVENTS_CTL]) ||
	    bpf_map__reuse_fd(e->maps.xrl_event_stats, x->map_fd[M_EVENT_STATS]) ||
	    xrl_emit__load(e)) {
		xrl_log(XRL_LOG_DEBUG, "no events for bans set from userspace: %s", strerror(errno));
		xrl_emit__destroy(e);
		return false;
	}
	x->emit = e;
	x->emit_failed = false;
	return true;
}

int xrl__ban_event(struct xrl *x, int kind, int family, const __u8 *addr, __u8 plen,
		   const struct xrl_ban *b, __u32 cause)
{
	/* a socket filter's data starts after the Ethernet header */
	__u8 in[ETH_HLEN + sizeof(struct xrl_event)] = {};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = sizeof(in), .repeat = 1);
	struct xrl_event ev = {}, *e = &ev;

	if (!xrl__ban_events_ready(x))
		return -ENOENT;
	e->ts_ns = xrl_now_ns(x);
	e->dropped = b->dropped;
	e->rule_id = b->rule_id;
	e->kind = kind;
	e->family = family;
	e->key_len = plen;
	e->mode = x->ctrl ? __atomic_load_n(&x->ctrl->mode, __ATOMIC_RELAXED) & (XRL_MODE_MAX - 1) : 0;
	memcpy(e->addr, addr, family == 4 ? 4 : 16);
	e->expires_ns = b->expires_ns;
	e->origin = b->origin;
	e->cause = kind == XRL_EV_UNBANNED ? cause : 0;
	memcpy(in + ETH_HLEN, e, sizeof(*e));
	if (bpf_prog_test_run_opts(bpf_program__fd(x->emit->progs.xrl_emit), &o))
		return -errno;
	return o.retval == 0 ? 0 : o.retval == 1 ? 1 : -EINVAL;
}

bool xrl_ban_events_prepare(struct xrl *x)
{
	return xrl__ban_events_ready(x);
}

void xrl__ban_events_close(struct xrl *x)
{
	xrl_emit__destroy(x->emit);
	x->emit = NULL;
}
