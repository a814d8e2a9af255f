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

/* Our pinned link on ifname: none, stale (its device is gone), or live. */
static enum link_state link_state(const char *ifname)
{
	enum link_state st = LINK_NONE;
	struct xrl_attachment *a;
	size_t n;

	if (xrl_attachments(d.x, &a, &n))
		return LINK_NONE;
	for (size_t i = 0; i < n; i++) {
		char name[IF_NAMESIZE];

		if (strcmp(a[i].ifname, ifname))
			continue;
		/* live while its device is still the one of that name */
		st = a[i].ifindex && if_indextoname(a[i].ifindex, name) && !strcmp(name, ifname) ?
			     LINK_LIVE : LINK_STALE;
	}
	free(a);
	return st;
}

bool attached_now(const char *ifname)
{
	return link_state(ifname) == LINK_LIVE;
}

bool has_link_pin(const char *ifname)
{
	return link_state(ifname) != LINK_NONE;
}

void count_attached(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < d.nifaces; i++)
		n += attached_now(d.ifaces[i].name);
	d.stats.interfaces_attached = n;
}

/* Attach (quiet: without repeating an error already said), or adopt what
 * a previous run left attached. 0 when attached, -1 when not. */
static int attach_iface(const struct xrl_iface_cfg *ic, bool quiet)
{
	enum xrl_xdp_mode got;
	int err;

	if (attached_now(ic->name)) {
		xrl_log(XRL_LOG_INFO, "interface %s: adopted the program already attached", ic->name);
		return 0;
	}
	if (!if_nametoindex(ic->name)) {
		xrl_log(XRL_LOG_WARN, "interface %s does not exist; it will be attached when it appears", ic->name);
		return -1;
	}
	if ((err = xrl_lock(d.x))) {
		if (!quiet)
			xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
		return -1;
	}
	if (has_link_pin(ic->name))
		xrl_detach(d.x, ic->name);	/* a stale link of a device that is gone */
	err = xrl_attach(d.x, ic->name, ic->mode, &got);
	if (err && !quiet)
		xrl_log(XRL_LOG_ERR, "interface %s: %s", ic->name, xrl_errmsg());
	else if (!err)
		xrl_log(XRL_LOG_INFO, "interface %s: attached (%s mode)", ic->name, xrl_xdp_mode_name(got));
	xrl_unlock(d.x);
	return err ? -1 : 0;
}

void serve_iface(const struct xrl_iface_cfg *ic)
{
	attach_iface(ic, false);
}

/*
 * Every second: each served interface that exists carries the program. A
 * link pin removed on its own (rm PIN/link_d0), or a detach by hand, takes
 * XDP off without any event to see; this puts it back, saying so once per
 * outage.
 */
static void repair_links(void)
{
	if (!d.iface_failed)	/* out of memory at the last reload */
		return;
	for (size_t i = 0; i < d.nifaces; i++) {
		const char *name = d.ifaces[i].name;
		bool failed = d.iface_failed[i];

		if (!if_nametoindex(name) || attached_now(name)) {
			d.iface_failed[i] = false;
			continue;
		}
		if (!failed)
			xrl_log(XRL_LOG_WARN, "interface %s: the program is no longer attached (its link pin removed?): attaching again",
				name);
		d.iface_failed[i] = attach_iface(&d.ifaces[i], failed) != 0;
		if (!d.iface_failed[i])
			d.stats.link_repairs++;
	}
	count_attached();
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
		} else if (!attached_now(ev->ifname)) {
			xrl_log(XRL_LOG_INFO, "interface %s appeared", ev->ifname);
			serve_iface(&d.ifaces[i]);
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
	for (size_t i = 0; i < d.nifaces; i++)
		serve_iface(&d.ifaces[i]);
	count_attached();
	d.pins_broken = false;
	d.stats.pins_ok = 1;
	xrl_log(XRL_LOG_WARN, "restored the pins under %s; %u interface(s) attached", xrl_pin_dir(d.x),
	     d.stats.interfaces_attached);
	return 0;
}
