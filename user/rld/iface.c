// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the served interfaces — attach, adopt what a previous run left,
 * follow link notifications, and put the pins back when they were removed.
 */
#include "rld.h"

#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

enum link_state { LINK_NONE, LINK_STALE, LINK_LIVE };

/* Our pinned link on ifname: none, stale (its device is gone, or the link
 * was detached), or live, and then at which hook (hook_of()) and in which
 * XDP mode. */
static enum link_state link_state_hook(struct rld *r, const char *ifname, enum xrl_xdp_mode *mode,
				       enum xrl_hook *hook)
{
	enum link_state st = LINK_NONE;
	struct xrl_attachment *a;
	size_t n;

	if (mode)
		*mode = XRL_XDP_UNKNOWN;
	if (hook)
		*hook = XRL_HOOK_XDP;
	if (xrl_attachments(r->x, &a, &n))
		return LINK_NONE;
	for (size_t i = 0; i < n; i++) {
		char name[IF_NAMESIZE];

		if (strcmp(a[i].ifname, ifname))
			continue;
		/* live while its device is still the one of that name */
		st = a[i].ifindex && if_indextoname(a[i].ifindex, name) && !strcmp(name, ifname) ?
			     LINK_LIVE : LINK_STALE;
		if (mode)
			*mode = a[i].mode;
		if (hook)
			*hook = a[i].hook;
	}
	free(a);
	return st;
}

static enum link_state link_state(struct rld *r, const char *ifname, enum xrl_xdp_mode *mode)
{
	return link_state_hook(r, ifname, mode, NULL);
}

/* Attach interface ic at its configured hook (tc: no XDP mode, got is
 * XRL_XDP_UNKNOWN). */
static int attach_at_hook(struct rld *r, const struct xrl_iface_cfg *ic, enum xrl_xdp_mode *got)
{
	*got = XRL_XDP_UNKNOWN;
	if (ic->hook == XRL_HOOK_TC) {
		int err = xrl_attach_tc(r->x, ic->name);

		/* the instance's first tc hook loads its tc program (libxrl),
		 * which the daemon can do at its start-up only (caps.c) */
		if (err == -EPERM || err == -EACCES) {
			char why[256];

			snprintf(why, sizeof(why), "%s", xrl_errmsg());
			err = xrl_fail(err, "%s (after its start-up the daemon cannot load the tc program that the "
				       "instance's first tc hook needs: restart it, or attach one interface with "
				       "'xdp-rlctl attach dev %s hook tc' once)", why, ic->name);
		}
		return err;
	}
	return xrl_attach(r->x, ic->name, ic->mode, got);
}

/* "tc ingress" or "native mode": where an attach put the program */
static const char *where_name(const struct xrl_iface_cfg *ic, enum xrl_xdp_mode got, char *buf, size_t len)
{
	if (ic->hook == XRL_HOOK_TC)
		snprintf(buf, len, "tc ingress");
	else
		snprintf(buf, len, "%s mode", xrl_xdp_mode_name(got));
	return buf;
}

/*
 * Attached at the other hook than configured (xdp-rlctl attached it at
 * XDP, the file says tc, or the other way): attached again at the file's
 * hook, the old link first (one program per interface). If that fails, the
 * old hook is put back and the mismatch said, not retried until a reload.
 */
static int reattach_hook(struct rld *r, size_t i, enum xrl_hook cur)
{
	const struct xrl_iface_cfg *ic = &r->ifs.cfg[i];
	struct xrl_iface_cfg back = *ic;
	enum xrl_xdp_mode got;
	char why[512], at[32];
	int err;

	if (xrl_lock(r->x))
		return 0;	/* the next tick */
	xrl_detach(r->x, ic->name);
	err = attach_at_hook(r, ic, &got);
	if (!err) {
		xrl_log(XRL_LOG_WARN, "interface %s: the program was attached at the %s hook, the configuration says %s: attached again at %s",
			ic->name, xrl_hook_name(cur), xrl_hook_name(ic->hook), where_name(ic, got, at, sizeof(at)));
		r->ifs.st[i].ours = true;
		r->ifs.st[i].hook_mismatch = false;
		xrl_unlock(r->x);
		return 0;
	}
	snprintf(why, sizeof(why), "%s", xrl_errmsg());
	back.hook = cur;
	back.mode = XRL_XDP_AUTO;
	err = attach_at_hook(r, &back, &got);
	xrl_unlock(r->x);
	r->ifs.st[i].hook_mismatch = true;
	xrl_log(XRL_LOG_ERR, "interface %s: attached at the %s hook, the configuration says %s, and that failed (%s)%s",
		ic->name, xrl_hook_name(cur), xrl_hook_name(ic->hook), why,
		err ? ": and the old hook could not be attached again either" : ": left as it was");
	return err ? -1 : 0;
}

static bool attached_now(struct rld *r, const char *ifname)
{
	return link_state(r, ifname, NULL) == LINK_LIVE;
}

bool has_link_pin(struct rld *r, const char *ifname)
{
	return link_state(r, ifname, NULL) != LINK_NONE;
}

/* What the metrics show: each served interface, attached or not, and the
 * count. The metrics thread reads the copy, under r->lock. */
void count_attached(struct rld *r)
{
	struct xrl_iface_stat *v = calloc(r->ifs.n + 1, sizeof(*v));
	unsigned n = 0;

	for (size_t i = 0; i < r->ifs.n; i++) {
		bool live = attached_now(r, r->ifs.cfg[i].name);

		n += live;
		if (!v)
			continue;
		snprintf(v[i].name, sizeof(v[i].name), "%s", r->ifs.cfg[i].name);
		v[i].attached = live;
		v[i].mode_mismatch = live && r->ifs.st && r->ifs.st[i].mode_mismatch;
		v[i].hook = r->ifs.cfg[i].hook;
		v[i].hook_mismatch = live && r->ifs.st && r->ifs.st[i].hook_mismatch;
		v[i].tc_position = live && r->ifs.st ? r->ifs.st[i].tc_position : 0;
	}
	pthread_mutex_lock(&r->lock);
	free(r->stats.ifaces);
	r->stats.ifaces = v;
	r->stats.nifaces = v ? r->ifs.n : 0;
	r->stats.interfaces_attached = n;
	pthread_mutex_unlock(&r->lock);
}

/*
 * The program is attached, but not in the configured mode (xdp-rlctl
 * attached it natively, and the file says generic): attach it again in the
 * file's mode. The kernel has one XDP program per device at a time, so the
 * old link goes first: packets in between (24-34 ms on a veth here, the
 * detach and the attach together) pass unmetered; the log says how long. If the configured mode fails, the old one is put back and the
 * mismatch is reported (log, metric), not retried until a reload.
 */
static int reattach_mode(struct rld *r, size_t i, enum xrl_xdp_mode cur)
{
	const struct xrl_iface_cfg *ic = &r->ifs.cfg[i];
	struct iface_state *st = &r->ifs.st[i];
	enum xrl_xdp_mode got;
	char why[512];
	double t0;
	int err;

	if (xrl_lock(r->x))
		return 0;	/* another process holds the lock: the next tick */
	t0 = now_ms();
	xrl_detach(r->x, ic->name);
	err = xrl_attach(r->x, ic->name, ic->mode, &got);
	if (!err) {
		xrl_log(XRL_LOG_WARN, "interface %s: the program was attached in %s mode (by xdp-rlctl attach?), the configuration says %s: attached again in %s mode (unmetered for %.1f ms)",
			ic->name, xrl_xdp_mode_name(cur), xrl_xdp_mode_name(ic->mode), xrl_xdp_mode_name(got),
			now_ms() - t0);
		st->ours = true;
		st->mode_mismatch = false;
		xrl_unlock(r->x);
		return 0;
	}
	snprintf(why, sizeof(why), "%s", xrl_errmsg());
	err = xrl_attach(r->x, ic->name, cur, &got);
	xrl_unlock(r->x);
	if (err) {
		xrl_log(XRL_LOG_ERR, "interface %s: attaching in %s mode failed (%s), and in %s mode again too: %s",
			ic->name, xrl_xdp_mode_name(ic->mode), why, xrl_xdp_mode_name(cur), xrl_errmsg());
		return -1;
	}
	st->mode_mismatch = true;
	xrl_log(XRL_LOG_ERR, "interface %s: attached in %s mode, but the configuration says %s, and attaching in %s mode failed (%s): left in %s mode",
		ic->name, xrl_xdp_mode_name(cur), xrl_xdp_mode_name(ic->mode), xrl_xdp_mode_name(ic->mode), why,
		xrl_xdp_mode_name(cur));
	return 0;
}

/* Attach served interface i (quiet: without repeating an error already
 * said), or adopt what a previous run or xdp-rlctl left attached, in the
 * configured mode. 0 when attached; -ENODEV when the interface does not
 * exist; another negative errno when the attach failed (the cause logged). */
static int attach_iface(struct rld *r, size_t i, bool quiet)
{
	const struct xrl_iface_cfg *ic = &r->ifs.cfg[i];
	struct iface_state *st = &r->ifs.st[i];
	enum xrl_xdp_mode got, cur;
	enum xrl_hook hook;
	char at[32];
	int err;

	if (link_state_hook(r, ic->name, &cur, &hook) == LINK_LIVE) {
		if (!st->attached)
			xrl_log(XRL_LOG_INFO, "interface %s: adopted the program already attached (%s)", ic->name,
				hook == XRL_HOOK_TC ? "tc ingress" : xrl_xdp_mode_name(cur));
		st->attached = true;
		if (hook != ic->hook && !st->hook_mismatch)
			return reattach_hook(r, i, hook);
		if (hook != ic->hook || hook == XRL_HOOK_TC)
			return 0;
		if (ic->mode != XRL_XDP_AUTO && cur != XRL_XDP_UNKNOWN && cur != ic->mode && !st->mode_mismatch)
			return reattach_mode(r, i, cur);
		return 0;
	}
	st->attached = false;
	if (!if_nametoindex(ic->name)) {
		if (!quiet)
			xrl_log(XRL_LOG_WARN, "interface %s does not exist; it will be attached when it appears", ic->name);
		return -ENODEV;
	}
	if ((err = xrl_lock(r->x))) {
		if (!quiet)
			xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
		return err;
	}
	if (has_link_pin(r, ic->name))
		xrl_detach(r->x, ic->name);	/* a stale link of a device that is gone */
	err = attach_at_hook(r, ic, &got);
	if (err && !quiet)
		xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
	else if (!err)
		xrl_log(XRL_LOG_INFO, "interface %s: attached (%s)", ic->name, where_name(ic, got, at, sizeof(at)));
	xrl_unlock(r->x);
	if (!err) {
		st->attached = st->ours = true;
		st->mode_mismatch = st->hook_mismatch = false;
	}
	return err;
}

/* Does the rule set in force hold a packet rule (a limit counted in
 * packets)? */
static bool has_packet_rules(struct rld *r)
{
	struct xrl_rule_entry *v = NULL;
	bool found = false;
	size_t n = 0;

	if (xrl_rules_get(r->x, &v, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++)
		found = v[i].r.action == XRL_ACT_LIMIT && v[i].r.unit == XRL_UNIT_PACKETS;
	free(v);
	return found;
}

/* Generic mode sees GRO's aggregates, whose segments a packet rule can only
 * count as a lower bound the sender controls: said once per interface. */
static void gro_warn(struct rld *r, size_t i)
{
	const char *name = r->ifs.cfg[i].name;
	enum xrl_xdp_mode cur;

	if (r->ifs.st[i].gro_warned || link_state(r, name, &cur) != LINK_LIVE || cur != XRL_XDP_GENERIC ||
	    xrl_iface_gro(name) != 1 || !has_packet_rules(r))
		return;
	r->ifs.st[i].gro_warned = true;
	xrl_log(XRL_LOG_WARN, "interface %s: generic mode with GRO on: packet rules count a merged frame's segments "
		"only as a lower bound the sender controls; use native mode, or 'ethtool -K %s gro off' "
		"(README, \"Native or generic\")", name, name);
}

void serve_iface(struct rld *r, size_t i)
{
	int err = attach_iface(r, i, false);

	/* an error said once; a missing interface waits for its link event */
	r->ifs.st[i].failed = err && err != -ENODEV;
	if (!err)
		gro_warn(r, i);
}

/* Why the program left IFNAME, for the log. */
static void lost_cause(struct rld *r, const char *ifname, bool at_tc, char *buf, size_t len)
{
	struct xrl_xdp_holder h;
	char who[128];

	if (!at_tc && xrl_xdp_foreign(xrl_pin_dir(r->x), ifname, &h) == 1) {
		xrl_xdp_holder_format(&h, who, sizeof(who));
		snprintf(buf, len, "%s is attached there now", who);
	} else if (!has_link_pin(r, ifname)) {
		snprintf(buf, len, "its link pin %s/link_%s was removed, or xdp-rlctl detached it", xrl_pin_dir(r->x), ifname);
	} else {
		snprintf(buf, len, "its link was detached");
	}
}

/*
 * Every second: each served interface that exists carries the program. A
 * link pin removed on its own (rm PIN/link_d0), a detach by hand, or another
 * XDP program in the way take XDP off (or keep it off) without any event
 * to see; this attaches again, saying why once per outage.
 */
/* Served interface i carries the program, in its mode, or is attached
 * again; a loss is said once, with its cause. */
static void recheck_iface(struct rld *r, size_t i)
{
	const char *name = r->ifs.cfg[i].name;
	struct iface_state *st = &r->ifs.st[i];
	enum xrl_xdp_mode cur;
	char why[400];
	int err;

	if (!if_nametoindex(name)) {
		st->failed = st->attached = false;
		return;
	}
	enum xrl_hook hook;

	if (link_state_hook(r, name, &cur, &hook) == LINK_LIVE && (hook == r->ifs.cfg[i].hook || st->hook_mismatch) &&
	    (r->ifs.cfg[i].mode == XRL_XDP_AUTO || cur == XRL_XDP_UNKNOWN || cur == r->ifs.cfg[i].mode ||
	     st->mode_mismatch)) {
		st->failed = false;
		st->attached = true;
		return;
	}
	if (st->attached && !attached_now(r, name)) {
		lost_cause(r, name, r->ifs.cfg[i].hook == XRL_HOOK_TC, why, sizeof(why));
		xrl_log(XRL_LOG_WARN, "interface %s: the program is no longer attached (%s): attaching again",
			name, why);
		st->lost = true;
		st->attached = false;
	}
	err = attach_iface(r, i, st->failed);
	st->failed = err && err != -ENODEV;
	if (!err && st->lost) {
		r->stats.link_repairs++;
		st->lost = false;
	}
}

/*
 * At tc: is xdp-rl still first in the interface's tcx chain? A program
 * attached before it later (BPF_F_BEFORE) decides first, and what it passes
 * (TC_ACT_OK ends the chain) or drops never meets the limiter. Said once
 * per occurrence, with the program's id and name; with `interface IFACE
 * hook tc first` xdp-rl is put first again (its link made again: tens of
 * milliseconds unmetered, the detach's RCU grace period; said and counted).
 */
static void tc_order(struct rld *r, const struct xrl_attachment *a, size_t na)
{
	for (size_t i = 0; i < r->ifs.n; i++) {
		const struct xrl_iface_cfg *ic = &r->ifs.cfg[i];
		struct iface_state *st = &r->ifs.st[i];
		const struct xrl_attachment *at = NULL;
		__u64 gap = 0;
		int err;

		st->tc_position = 0;
		for (size_t j = 0; j < na && !at; j++)
			if (!strcmp(a[j].ifname, ic->name) && a[j].hook == XRL_HOOK_TC)
				at = &a[j];
		if (!at)
			continue;
		if (!at->tc_position) {
			if (!st->order_unknown && at->ifindex)
				xrl_log(XRL_LOG_WARN, "interface %s: cannot read the order of its tcx chain (%s): "
					"whether xdp-rl runs first is not checked", ic->name,
					"CAP_NET_ADMIN was dropped at the start, before this interface was at tc: restart the daemon");
			st->order_unknown = at->ifindex != 0;
			continue;
		}
		st->order_unknown = false;
		st->tc_position = at->tc_position;
		if (at->tc_position == 1) {
			if (st->not_first)
				xrl_log(XRL_LOG_INFO, "interface %s: xdp-rl is first in the tcx chain again", ic->name);
			st->not_first = false;
			continue;
		}
		if (!ic->tc_first) {
			if (!st->not_first)
				xrl_log(XRL_LOG_WARN, "interface %s: program %u%s%s runs before xdp-rl in the tcx chain "
					"(position %u): what it passes or drops skips the limiter; 'interface %s hook tc first' "
					"in the configuration (or 'xdp-rlctl attach dev %s hook tc first') puts xdp-rl first again",
					ic->name, at->tc_first_id, at->tc_first_name[0] ? " " : "", at->tc_first_name,
					at->tc_position, ic->name, ic->name);
			st->not_first = true;
			continue;
		}
		if ((err = xrl_lock(r->x))) {
			xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
			continue;
		}
		err = xrl_tc_front(r->x, ic->name, &gap);
		xrl_unlock(r->x);
		if (err < 0) {
			xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
			continue;
		}
		r->stats.tc_reorders++;
		st->tc_position = 1;
		st->not_first = false;
		xrl_log(XRL_LOG_WARN, "interface %s: program %u%s%s had been attached before xdp-rl in the tcx chain: "
			"xdp-rl is first again (unmetered for %llu us)", ic->name, at->tc_first_id,
			at->tc_first_name[0] ? " " : "", at->tc_first_name, (unsigned long long)gap / 1000);
	}
}

static void repair_links(struct rld *r)
{
	struct xrl_attachment *a;
	size_t n;

	if (!r->ifs.st)	/* out of memory at the last reload */
		return;
	for (size_t i = 0; i < r->ifs.n; i++)
		recheck_iface(r, i);
	if (xrl_attachments(r->x, &a, &n) == 0) {
		tc_order(r, a, n);
		free(a);
	}
	count_attached(r);
}

size_t ifaces_failed(struct rld *r, char *names, size_t len)
{
	size_t n = 0, l = 0;

	names[0] = '\0';
	for (size_t i = 0; r->ifs.st && i < r->ifs.n; i++) {
		if (!r->ifs.st[i].failed)
			continue;
		n++;
		if (l < len)
			l += snprintf(names + l, len - l, " %s", r->ifs.cfg[i].name);
	}
	return n;
}

/* The names the daemon serves, for xdp-rlctl to see (detach). */
void serves_sync(struct rld *r)
{
	const char **v = calloc(r->ifs.n + 1, sizeof(*v));

	if (!v)
		return;
	for (size_t i = 0; i < r->ifs.n; i++)
		v[i] = r->ifs.cfg[i].name;
	if (xrl_daemon_serves_set(r->x, v, r->ifs.n))
		xrl_log(XRL_LOG_WARN, "%s: xdp-rlctl detach cannot tell the served interfaces", xrl_errmsg());
	free(v);
}

/* Is a served interface held by another XDP program? Asked before anything
 * is created (the start refuses) and by --check: xdp-rl never replaces
 * what it did not attach. Says each one: to the log, or (check) as
 * FILE:LINE:1: to stdout. */
int ifaces_held(struct rld *r, const struct xrl_config *c, bool check)
{
	struct xrl_iface_cfg *v;
	size_t n;
	int held = 0;

	if (set_ifaces(r, c, &v, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct xrl_xdp_holder h;
		char who[128], where[PATH_MAX + 32];
		/* at tc, whatever holds the XDP hook stays there */
		int held_by = v[i].hook == XRL_HOOK_TC ? 0 : xrl_xdp_foreign(r->opt.pin_dir, v[i].name, &h);

		if (held_by <= 0)
			continue;
		held++;
		xrl_xdp_holder_format(&h, who, sizeof(who));
		if (i < c->nifaces)
			snprintf(where, sizeof(where), "%s:%d:1: ", r->opt.config, c->iface_line[i]);
		else
			snprintf(where, sizeof(where), "--iface %s: ", v[i].name);
		if (check)
			printf("%sinterface %s: %s is attached: the daemon would not start (xdp-rl never replaces what it did not attach)\n",
			       where, v[i].name, who);
		else
			xrl_log(XRL_LOG_ERR, "%sinterface %s: %s is attached; xdp-rl never replaces what it did not attach: not starting",
				where, v[i].name, who);
	}
	free(v);
	return held;
}

void unserve_iface(struct rld *r, const char *name)
{
	xrl_lock(r->x);
	if (xrl_detach(r->x, name))
		xrl_log(XRL_LOG_WARN, "interface %s: %s", name, xrl_errmsg());
	else
		xrl_log(XRL_LOG_INFO, "interface %s: detached", name);
	xrl_unlock(r->x);
}

/* The served set: the file's interfaces and every --iface. */
int set_ifaces(struct rld *r, const struct xrl_config *c, struct xrl_iface_cfg **out, size_t *n)
{
	struct xrl_iface_cfg *v = calloc(c->nifaces + r->opt.nifaces + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < c->nifaces; i++)
		v[(*n)++] = c->ifaces[i];
	for (int i = 0; i < r->opt.nifaces; i++) {
		bool dup = false;

		for (size_t j = 0; j < *n; j++)
			dup |= !strcmp(v[j].name, r->opt.ifaces[i]);
		if (!dup) {
			snprintf(v[*n].name, IF_NAMESIZE, "%s", r->opt.ifaces[i]);
			v[(*n)++].mode = XRL_XDP_AUTO;
		}
	}
	*out = v;
	return 0;
}

void on_link(const struct xrl_link_event *ev, void *ctx)
{
	struct rld *r = ctx;

	for (size_t i = 0; i < r->ifs.n; i++) {
		if (strcmp(r->ifs.cfg[i].name, ev->ifname))
			continue;
		if (!ev->added) {
			xrl_log(XRL_LOG_WARN, "interface %s disappeared; keeping the maps, waiting for it", ev->ifname);
			if (r->ifs.st)
				r->ifs.st[i].attached = false;
		} else if (r->ifs.st && !attached_now(r, ev->ifname)) {
			/* RTM_NEWLINK comes for any change of the link too (its
			 * XDP program included): "appeared" only when it did */
			if (!r->ifs.st[i].attached && !r->ifs.st[i].failed)
				xrl_log(XRL_LOG_INFO, "interface %s appeared", ev->ifname);
			recheck_iface(r, i);
		}
	}
	count_attached(r);
}

/*
 * An `rm -rf` of the pin directory drops the links' last references, so XDP
 * is detached, while the daemon still holds the maps and the program. Pin
 * them again, renew the daemon's claim and re-attach: the buckets, rules and
 * counters carry on. Checked every second and before every reload.
 */
int check_pins(struct rld *r)
{
	int err;

	if (xrl_pins_ok(r->x) == 1) {
		if (r->ifs.pins_broken)
			xrl_log(XRL_LOG_INFO, "the pins under %s are whole again", xrl_pin_dir(r->x));
		r->ifs.pins_broken = false;
		r->stats.pins_ok = 1;
		repair_links(r);
		return 0;
	}
	if (!r->ifs.pins_broken)
		xrl_log(XRL_LOG_ERR, "pins under %s were removed: pinning the maps again and re-attaching",
			xrl_pin_dir(r->x));
	err = xrl_lock(r->x);
	if (!err) {
		err = xrl_pins_restore(r->x);
		xrl_unlock(r->x);
	}
	if (err) {
		/* say it once per outage, count it in the metrics */
		if (!r->ifs.pins_broken)
			xrl_log(XRL_LOG_ERR, "cannot restore the pins: %s; not enforcing until they are", xrl_errmsg());
		r->ifs.pins_broken = true;
		r->stats.pins_ok = 0;
		return err;
	}
	r->stats.pin_restores++;
	serves_sync(r);
	for (size_t i = 0; r->ifs.st && i < r->ifs.n; i++)
		serve_iface(r, i);
	count_attached(r);
	r->ifs.pins_broken = false;
	r->stats.pins_ok = 1;
	xrl_log(XRL_LOG_WARN, "restored the pins under %s; %u interface(s) attached", xrl_pin_dir(r->x),
	     r->stats.interfaces_attached);
	return 0;
}
