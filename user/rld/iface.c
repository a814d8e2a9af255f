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
 * was detached), or live, and then in which mode. */
static enum link_state link_state(const char *ifname, enum xrl_xdp_mode *mode)
{
	enum link_state st = LINK_NONE;
	struct xrl_attachment *a;
	size_t n;

	if (mode)
		*mode = XRL_XDP_UNKNOWN;
	if (xrl_attachments(d.x, &a, &n))
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
	}
	free(a);
	return st;
}

bool attached_now(const char *ifname)
{
	return link_state(ifname, NULL) == LINK_LIVE;
}

bool has_link_pin(const char *ifname)
{
	return link_state(ifname, NULL) != LINK_NONE;
}

/* What the metrics show: each served interface, attached or not, and the
 * count. The metrics thread reads the copy, under d.lock. */
void count_attached(void)
{
	struct xrl_iface_stat *v = calloc(d.nifaces + 1, sizeof(*v));
	unsigned n = 0;

	for (size_t i = 0; i < d.nifaces; i++) {
		bool live = attached_now(d.ifaces[i].name);

		n += live;
		if (!v)
			continue;
		snprintf(v[i].name, sizeof(v[i].name), "%s", d.ifaces[i].name);
		v[i].attached = live;
		v[i].mode_mismatch = live && d.ifst && d.ifst[i].mode_mismatch;
	}
	pthread_mutex_lock(&d.lock);
	free(d.stats.ifaces);
	d.stats.ifaces = v;
	d.stats.nifaces = v ? d.nifaces : 0;
	d.stats.interfaces_attached = n;
	pthread_mutex_unlock(&d.lock);
}

/*
 * The program is attached, but not in the configured mode (xdp-rlctl
 * attached it natively, and the file says generic): attach it again in the
 * file's mode. The kernel has one XDP program per device at a time, so the
 * old link goes first: packets in between (24-34 ms on a veth here, the
 * detach and the attach together) pass unmetered; the log says how long. If the configured mode fails, the old one is put back and the
 * mismatch is reported (log, metric), not retried until a reload.
 */
static int reattach_mode(size_t i, enum xrl_xdp_mode cur)
{
	const struct xrl_iface_cfg *ic = &d.ifaces[i];
	struct iface_state *st = &d.ifst[i];
	enum xrl_xdp_mode got;
	char why[512];
	double t0;
	int err;

	if (xrl_lock(d.x))
		return 0;	/* another process holds the lock: the next tick */
	t0 = now_ms();
	xrl_detach(d.x, ic->name);
	err = xrl_attach(d.x, ic->name, ic->mode, &got);
	if (!err) {
		xrl_log(XRL_LOG_WARN, "interface %s: the program was attached in %s mode (by xdp-rlctl attach?), the configuration says %s: attached again in %s mode (unmetered for %.1f ms)",
			ic->name, xrl_xdp_mode_name(cur), xrl_xdp_mode_name(ic->mode), xrl_xdp_mode_name(got),
			now_ms() - t0);
		st->ours = true;
		st->mode_mismatch = false;
		xrl_unlock(d.x);
		return 0;
	}
	snprintf(why, sizeof(why), "%s", xrl_errmsg());
	err = xrl_attach(d.x, ic->name, cur, &got);
	xrl_unlock(d.x);
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
static int attach_iface(size_t i, bool quiet)
{
	const struct xrl_iface_cfg *ic = &d.ifaces[i];
	struct iface_state *st = &d.ifst[i];
	enum xrl_xdp_mode got, cur;
	int err;

	if (link_state(ic->name, &cur) == LINK_LIVE) {
		if (!st->attached)
			xrl_log(XRL_LOG_INFO, "interface %s: adopted the program already attached (%s mode)", ic->name,
				xrl_xdp_mode_name(cur));
		st->attached = true;
		if (ic->mode != XRL_XDP_AUTO && cur != XRL_XDP_UNKNOWN && cur != ic->mode && !st->mode_mismatch)
			return reattach_mode(i, cur);
		return 0;
	}
	st->attached = false;
	if (!if_nametoindex(ic->name)) {
		if (!quiet)
			xrl_log(XRL_LOG_WARN, "interface %s does not exist; it will be attached when it appears", ic->name);
		return -ENODEV;
	}
	if ((err = xrl_lock(d.x))) {
		if (!quiet)
			xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
		return err;
	}
	if (has_link_pin(ic->name))
		xrl_detach(d.x, ic->name);	/* a stale link of a device that is gone */
	err = xrl_attach(d.x, ic->name, ic->mode, &got);
	if (err && !quiet)
		xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
	else if (!err)
		xrl_log(XRL_LOG_INFO, "interface %s: attached (%s mode)", ic->name, xrl_xdp_mode_name(got));
	xrl_unlock(d.x);
	if (!err) {
		st->attached = st->ours = true;
		st->mode_mismatch = false;
	}
	return err;
}

/* Does the rule set in force hold a packet rule (a limit counted in
 * packets)? */
static bool has_packet_rules(void)
{
	struct xrl_rule_entry *v = NULL;
	bool found = false;
	size_t n = 0;

	if (xrl_rules_get(d.x, &v, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++)
		found = v[i].r.action == XRL_ACT_LIMIT && v[i].r.unit == XRL_UNIT_PACKETS;
	free(v);
	return found;
}

/* Generic mode sees GRO's aggregates, whose segments a packet rule can only
 * count as a lower bound the sender controls: said once per interface. */
static void gro_warn(size_t i)
{
	const char *name = d.ifaces[i].name;
	enum xrl_xdp_mode cur;

	if (d.ifst[i].gro_warned || link_state(name, &cur) != LINK_LIVE || cur != XRL_XDP_GENERIC ||
	    xrl_iface_gro(name) != 1 || !has_packet_rules())
		return;
	d.ifst[i].gro_warned = true;
	xrl_log(XRL_LOG_WARN, "interface %s: generic mode with GRO on: packet rules count a merged frame's segments "
		"only as a lower bound the sender controls; use native mode, or 'ethtool -K %s gro off' "
		"(README, \"Native or generic\")", name, name);
}

void serve_iface(size_t i)
{
	int err = attach_iface(i, false);

	/* an error said once; a missing interface waits for its link event */
	d.ifst[i].failed = err && err != -ENODEV;
	if (!err)
		gro_warn(i);
}

/* Why the program left IFNAME, for the log. */
static void lost_cause(const char *ifname, char *buf, size_t len)
{
	struct xrl_xdp_holder h;
	char who[128];

	if (xrl_xdp_foreign(xrl_pin_dir(d.x), ifname, &h) == 1) {
		xrl_xdp_holder_format(&h, who, sizeof(who));
		snprintf(buf, len, "%s is attached there now", who);
	} else if (!has_link_pin(ifname)) {
		snprintf(buf, len, "its link pin %s/link_%s was removed, or xdp-rlctl detached it", xrl_pin_dir(d.x), ifname);
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
static void recheck_iface(size_t i)
{
	const char *name = d.ifaces[i].name;
	struct iface_state *st = &d.ifst[i];
	enum xrl_xdp_mode cur;
	char why[400];
	int err;

	if (!if_nametoindex(name)) {
		st->failed = st->attached = false;
		return;
	}
	if (link_state(name, &cur) == LINK_LIVE &&
	    (d.ifaces[i].mode == XRL_XDP_AUTO || cur == XRL_XDP_UNKNOWN || cur == d.ifaces[i].mode ||
	     st->mode_mismatch)) {
		st->failed = false;
		st->attached = true;
		return;
	}
	if (st->attached && !attached_now(name)) {
		lost_cause(name, why, sizeof(why));
		xrl_log(XRL_LOG_WARN, "interface %s: the program is no longer attached (%s): attaching again",
			name, why);
		st->lost = true;
		st->attached = false;
	}
	err = attach_iface(i, st->failed);
	st->failed = err && err != -ENODEV;
	if (!err && st->lost) {
		d.stats.link_repairs++;
		st->lost = false;
	}
}

static void repair_links(void)
{
	if (!d.ifst)	/* out of memory at the last reload */
		return;
	for (size_t i = 0; i < d.nifaces; i++)
		recheck_iface(i);
	count_attached();
}

size_t ifaces_failed(char *names, size_t len)
{
	size_t n = 0, l = 0;

	names[0] = '\0';
	for (size_t i = 0; d.ifst && i < d.nifaces; i++) {
		if (!d.ifst[i].failed)
			continue;
		n++;
		if (l < len)
			l += snprintf(names + l, len - l, " %s", d.ifaces[i].name);
	}
	return n;
}

/* The names the daemon serves, for xdp-rlctl to see (detach). */
void serves_sync(void)
{
	const char **v = calloc(d.nifaces + 1, sizeof(*v));

	if (!v)
		return;
	for (size_t i = 0; i < d.nifaces; i++)
		v[i] = d.ifaces[i].name;
	if (xrl_daemon_serves_set(d.x, v, d.nifaces))
		xrl_log(XRL_LOG_WARN, "%s: xdp-rlctl detach cannot tell the served interfaces", xrl_errmsg());
	free(v);
}

/* Is a served interface held by another XDP program? Asked before anything
 * is created (the start refuses) and by --check: xdp-rl never replaces
 * what it did not attach. Says each one: to the log, or (check) as
 * FILE:LINE:1: to stdout. */
int ifaces_held(const struct xrl_config *c, bool check)
{
	struct xrl_iface_cfg *v;
	size_t n;
	int held = 0;

	if (set_ifaces(c, &v, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct xrl_xdp_holder h;
		char who[128], where[PATH_MAX + 32];
		int r = xrl_xdp_foreign(opt.pin_dir, v[i].name, &h);

		if (r <= 0)
			continue;
		held++;
		xrl_xdp_holder_format(&h, who, sizeof(who));
		if (i < c->nifaces)
			snprintf(where, sizeof(where), "%s:%d:1: ", opt.config, c->iface_line[i]);
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

void unserve_iface(const char *name)
{
	xrl_lock(d.x);
	if (xrl_detach(d.x, name))
		xrl_log(XRL_LOG_WARN, "interface %s: %s", name, xrl_errmsg());
	else
		xrl_log(XRL_LOG_INFO, "interface %s: detached", name);
	xrl_unlock(d.x);
}

/* The served set: the file's interfaces and every --iface. */
int set_ifaces(const struct xrl_config *c, struct xrl_iface_cfg **out, size_t *n)
{
	struct xrl_iface_cfg *v = calloc(c->nifaces + opt.nifaces + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < c->nifaces; i++)
		v[(*n)++] = c->ifaces[i];
	for (int i = 0; i < opt.nifaces; i++) {
		bool dup = false;

		for (size_t j = 0; j < *n; j++)
			dup |= !strcmp(v[j].name, opt.ifaces[i]);
		if (!dup) {
			snprintf(v[*n].name, IF_NAMESIZE, "%s", opt.ifaces[i]);
			v[(*n)++].mode = XRL_XDP_AUTO;
		}
	}
	*out = v;
	return 0;
}

void on_link(const struct xrl_link_event *ev, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < d.nifaces; i++) {
		if (strcmp(d.ifaces[i].name, ev->ifname))
			continue;
		if (!ev->added) {
			xrl_log(XRL_LOG_WARN, "interface %s disappeared; keeping the maps, waiting for it", ev->ifname);
			if (d.ifst)
				d.ifst[i].attached = false;
		} else if (d.ifst && !attached_now(ev->ifname)) {
			/* RTM_NEWLINK comes for any change of the link too (its
			 * XDP program included): "appeared" only when it did */
			if (!d.ifst[i].attached && !d.ifst[i].failed)
				xrl_log(XRL_LOG_INFO, "interface %s appeared", ev->ifname);
			recheck_iface(i);
		}
	}
	count_attached();
}

/*
 * An `rm -rf` of the pin directory drops the links' last references, so XDP
 * is detached, while the daemon still holds the maps and the program. Pin
 * them again, renew the daemon's claim and re-attach: the buckets, rules and
 * counters carry on. Checked every second and before every reload.
 */
int check_pins(void)
{
	int err;

	if (xrl_pins_ok(d.x) == 1) {
		if (d.pins_broken)
			xrl_log(XRL_LOG_INFO, "the pins under %s are whole again", xrl_pin_dir(d.x));
		d.pins_broken = false;
		d.stats.pins_ok = 1;
		repair_links();
		return 0;
	}
	if (!d.pins_broken)
		xrl_log(XRL_LOG_ERR, "pins under %s were removed: pinning the maps again and re-attaching",
			xrl_pin_dir(d.x));
	err = xrl_lock(d.x);
	if (!err) {
		err = xrl_pins_restore(d.x);
		xrl_unlock(d.x);
	}
	if (err) {
		/* say it once per outage, count it in the metrics */
		if (!d.pins_broken)
			xrl_log(XRL_LOG_ERR, "cannot restore the pins: %s; not enforcing until they are", xrl_errmsg());
		d.pins_broken = true;
		d.stats.pins_ok = 0;
		return err;
	}
	d.stats.pin_restores++;
	serves_sync();
	for (size_t i = 0; d.ifst && i < d.nifaces; i++)
		serve_iface(i);
	count_attached();
	d.pins_broken = false;
	d.stats.pins_ok = 1;
	xrl_log(XRL_LOG_WARN, "restored the pins under %s; %u interface(s) attached", xrl_pin_dir(d.x),
	     d.stats.interfaces_attached);
	return 0;
}
