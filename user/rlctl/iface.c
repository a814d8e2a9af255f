// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: attach, detach, purge, status, upgrade. */
#include "rlctl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include "fleet/view.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>

/* Whether IFNAME, as this network namespace sees it, is a veth: asked of
 * the driver through a socket of the current namespace (the namespace's
 * own device, whatever /sys shows; nsenter keeps the host's /sys). */
static bool is_veth(const char *ifname)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = {};
	bool veth;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&di;
	veth = ioctl(fd, SIOCETHTOOL, &ifr) == 0 && !strcmp(di.driver, "veth");
	close(fd);
	return veth;
}

int do_attach(struct xrl_cmd *c)
{
	enum xrl_xdp_mode got = XRL_XDP_UNKNOWN;
	struct xrl *x;
	int err;

	/* checked before anything is created */
	if (!if_nametoindex(c->attach.ifname)) {
		p_err("unknown interface '%s'", c->attach.ifname);
		return 1;
	}
	opt.bans = c->attach.bans;
	opt.syn_verified = c->attach.syn_verified;
	if (open_writer(&x, true, c->attach.keys))
		return 1;
	/* an interrupted upgrade is finished before its program is attached */
	err = xrl_upgrade_recover(x) < 0;
	if (!err && c->attach.hook == XRL_HOOK_TC && c->attach.tc_first) {
		__u64 gap = 0;
		int moved = xrl_tc_front(x, c->attach.ifname, &gap);

		/* attached there already: first again; else a new attach,
		 * which puts it first */
		if (moved != -ENOENT) {
			err = end_write(x, moved < 0 ? -1 : 0);
			if (!err && opt.json) {
				jw_obj_start(&jw);
				jw_kstr(&jw, "ifname", c->attach.ifname);
				jw_kstr(&jw, "hook", "tc");
				jw_kbool(&jw, "moved_first", moved == 1);
				jw_ku64(&jw, "unmetered_us", gap / 1000);
				jw_obj_end(&jw);
				jw_finish(&jw);
			} else if (!err && moved == 1) {
				printf("%s: xdp-rl is first in the tcx chain again (its link made again: "
				       "unmetered for %llu us)\n", c->attach.ifname, (unsigned long long)gap / 1000);
			} else if (!err) {
				printf("%s: xdp-rl is first in the tcx chain already\n", c->attach.ifname);
			}
			xrl_close(x);
			return err ? 1 : 0;
		}
	}
	if (c->attach.hook == XRL_HOOK_TC)
		err = end_write(x, err ? -1 : xrl_attach_tc(x, c->attach.ifname));
	else
		err = end_write(x, err ? -1 : xrl_attach(x, c->attach.ifname, c->attach.xdp_mode, &got));
	if (!err && opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "ifname", c->attach.ifname);
		jw_kstr(&jw, "hook", xrl_hook_name(c->attach.hook));
		if (c->attach.hook == XRL_HOOK_TC)
			{ jw_key(&jw, "mode"); jw_null(&jw); }
		else
			jw_kstr(&jw, "mode", xrl_xdp_mode_name(got));
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else if (!err && c->attach.hook == XRL_HOOK_TC) {
		printf("attached to %s (tc ingress)\n", c->attach.ifname);
	} else if (!err) {
		printf("attached to %s (%s mode)\n", c->attach.ifname, xrl_xdp_mode_name(got));
	}
	/* Native XDP on a veth, any program, turns off TCP segmentation
	 * offload on its peer: every TCP segment then travels alone (README,
	 * Performance). Said once, on stderr, where it cannot break -j. */
	if (!err && c->attach.hook == XRL_HOOK_XDP && got == XRL_XDP_NATIVE && is_veth(c->attach.ifname))
		p_note("%s is a veth: native XDP there turns off TCP segmentation offload on its peer and cuts bulk TCP to about a third (bench: 0.35x, generic 0.8x); 'mode generic' keeps most of it", c->attach.ifname);
	xrl_close(x);
	return err ? 1 : 0;
}

int do_detach(struct xrl_cmd *c)
{
	struct xrl_attachment *a = NULL;
	bool purged = false, detached = true;
	struct xrl *x;
	size_t n = 0;
	pid_t pid;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	/* the daemon would put it back within a second: refused, and the
	 * ways that do stop it named */
	if (xrl_daemon_serves(x, c->detach.ifname, &pid) == 1) {
		char who[32] = "";

		if (pid > 0)
			snprintf(who, sizeof(who), " (pid %d)", (int)pid);
		unlock(x, -EBUSY);
		p_err("%s is served by xdp-rld%s, which would attach it again within a second: not detached. "
		      "To stop limiting %s, remove it from the daemon's configuration ('interface %s' or --iface) and reload "
		      "(systemctl reload xdp-rld); to remove the limiter, stop the daemon (systemctl stop xdp-rld), then "
		      "'xdp-rlctl detach dev %s purge'",
		      c->detach.ifname, who, c->detach.ifname, c->detach.ifname, c->detach.ifname);
		xrl_close(x);
		return 1;
	}
	err = xrl_detach(x, c->detach.ifname);
	if (err == -ENOENT && c->detach.purge) {
		/* Not attached there. With nothing attached anywhere, purge
		 * still removes the pins: a leftover instance is removable. */
		set_err("%s", xrl_errmsg());
		if (xrl_attachments(x, &a, &n) == 0 && n == 0) {
			detached = false;
			err = 0;
		}
	} else if (err) {
		set_err("%s", xrl_errmsg());
	}
	if (!err && c->detach.purge) {
		free(a);
		a = NULL;
		err = xrl_attachments(x, &a, &n);
		if (!err && n == 0) {
			err = xrl_purge(x);
			purged = !err;
		}
		if (err && detached)
			set_err("detached from %s, but %s", c->detach.ifname, xrl_errmsg());
		else if (err)
			set_err("%s", xrl_errmsg());
	}
	unlock(x, err);
	if (err) {
		p_err("%s", emsg);
		goto out;
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "ifname", c->detach.ifname);
		jw_kbool(&jw, "detached", detached);
		jw_kbool(&jw, "purged", purged);
		jw_ku64(&jw, "still_attached", n);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		if (detached)
			printf("detached from %s\n", c->detach.ifname);
		else
			printf("not attached to %s, and nothing else is attached either\n", c->detach.ifname);
		if (purged)
			printf("removed the pins under %s\n", opt.pin_dir ? opt.pin_dir : XRL_DEFAULT_PIN_DIR);
		else if (c->detach.purge) {
			char names[256];

			xrl_attachments_names(a, n, names, sizeof(names));
			printf("pins kept: still attached to %zu interface(s): %s\n", n, names);
		}
	}
out:
	free(a);
	xrl_close(x);
	return err ? 1 : 0;
}

/* Remove the pins of an instance attached nowhere: the way out of a pin
 * directory that holds the wrong tables, or that nothing uses. */
int do_purge(struct xrl_cmd *c)
{
	char dir[PATH_MAX];
	struct xrl *x;
	int err;

	/* the pins alone, not the maps: an instance missing some pins (an rm
	 * by hand) cannot be opened, and must still be removable */
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .pins_only = true };

	(void)c;
	if (xrl_open(&o, &x)) {
		p_err("%s", xrl_errmsg());
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s", xrl_pin_dir(x));
	err = end_write(x, xrl_purge(x));
	if (!err && opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "pin_dir", dir);
		jw_kbool(&jw, "purged", true);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else if (!err) {
		printf("removed the pins under %s\n", dir);
	}
	xrl_close(x);
	return err ? 1 : 0;
}

int do_upgrade(struct xrl_cmd *c)
{
	struct xrl_upgrade_report r;

	(void)c;
	if (xrl_upgrade(opt.pin_dir, &r, NULL)) {
		print_warnings();
		p_err("%s", xrl_errmsg());
		return 1;
	}
	print_warnings();	/* an interrupted upgrade it finished first */
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "from_build", r.from.build);
		jw_ku64(&jw, "from_layout", r.from.layout);
		jw_ku64(&jw, "from_prog_id", r.old_prog_id);
		jw_kstr(&jw, "to_build", xrl_version());
		jw_ku64(&jw, "to_layout", XRL_LAYOUT_VERSION);
		jw_ku64(&jw, "to_prog_id", r.new_prog_id);
		jw_ku64(&jw, "links", r.links);
		jw_ku64(&jw, "maps_added", r.maps_added);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("upgraded build %s (program %u) to %s (program %u), layout %u: %u link(s) moved, "
		       "%u new map(s) created\n", r.from.build, r.old_prog_id, xrl_version(), r.new_prog_id,
		       XRL_LAYOUT_VERSION, r.links, r.maps_added);
	}
	return 0;
}

int do_status(struct xrl_cmd *c)
{
	struct xrl_status st;
	struct xrl_global_stats g;
	struct xrl_attachment *a;
	struct xrl_prog_runtime rt;
	struct xrl_build_info bi;
	struct { __u32 id; } info;
	long long hb_age;
	unsigned long long keys4, keys6, ns_pkt, win_runs, win_pkt;
	bool sampled, hb;
	const char *by;
	__u64 wd;
	struct xrl *x;
	size_t n;

	if (open_reader(&x))
		return 1;
	if (xrl_status_read(x, c->status.sample_ms, &st)) {
		p_err("%s", xrl_errmsg());
		xrl_status_free(&st);
		xrl_close(x);
		return 1;
	}
	g = st.global;
	a = st.att;
	n = st.natt;
	rt = st.rt;
	bi = st.build;
	info.id = st.prog_id;
	hb_age = st.hb_age;
	hb = st.heartbeating;
	wd = st.watchdog_ns;
	keys4 = st.keys4;
	keys6 = st.keys6;
	ns_pkt = st.ns_pkt;
	win_runs = st.win_runs;
	win_pkt = st.win_pkt;
	sampled = st.sampled;
	by = st.enabled_by;
	if (opt.json) {
		xrl_status_json(&jw, x, &st);
		jw_finish(&jw);
	} else {
		printf("pin dir:     %s\n", xrl_pin_dir(x));
		printf("program id:  %u\n", info.id);
		printf("build:       %s (map layout %u)\n", bi.build, bi.layout);
		printf("mode:        %s\n", xrl_mode_name(xrl_mode_get(x)));
		printf("rules:       %u\n", xrl_control(x)->rules);
		printf("keys IPv4:   %llu tracked / %u capacity\n", keys4,
		       xrl_keys_capacity_family(x, 4));
		printf("keys IPv6:   %llu tracked / %u capacity\n", keys6,
		       xrl_keys_capacity_family(x, 6));
		if (st.nsets)
			printf("sets:        %zu, %llu prefixes, %llu bytes (%llu a prefix)\n", st.nsets,
			       (unsigned long long)st.set_pfx, (unsigned long long)st.set_mem,
			       st.set_pfx ? (unsigned long long)(st.set_mem / st.set_pfx) : 0ULL);
		printf("keys:        %llu inserted, ~%llu evicted or deleted\n",
		       (unsigned long long)g.keys_inserted, xrl_keys_evicted_estimate(&g, keys4 + keys6));
		status_bans_text(x);
		if (hb_age < 0)
			printf("daemon:      none has heartbeated\n");
		else
			printf("daemon:      %s, last heartbeat %.1f s ago (watchdog %s%s)\n",
			       hb ? "heartbeating" : "not heartbeating", hb_age / 1e9,
			       wd ? "" : "off", !wd ? "" : (__u64)hb_age > wd ? "fired: rules follow on-failure" : "armed");
		xrl_fleet_print(stdout, x);
		if (!rt.enabled)
			printf("run time:    stats not enabled (xdp-rld enables them while it runs)\n");
		else if (sampled && win_runs)
			printf("run time:    %llu ns/packet over the last %.3f s (%llu runs)\n", win_pkt,
			       c->status.sample_ms / 1e3, win_runs);
		else if (sampled)
			printf("run time:    no runs in the last %.3f s\n", c->status.sample_ms / 1e3);
		if (rt.enabled && rt.run_cnt)
			printf("             %llu ns/packet over %llu runs since the stats were enabled\n",
			       ns_pkt, (unsigned long long)rt.run_cnt);
		else if (rt.enabled)
			printf("             no runs counted since the stats were enabled\n");
		if (rt.enabled)	/* one switch for the host */
			printf("             stats enabled by %s: they are global, every BPF program of the "
			       "host is timed while they are on\n", by);
		printf("interfaces:  %s\n", n ? "" : "none");
		for (size_t i = 0; i < n; i++) {
			if (a[i].ifindex && a[i].tc_position > 1)
				/* its passes no longer decide first: said, with the way back */
				printf("  %-16s %-8s ifindex %u  NOT FIRST in the tcx chain (position %u): "
				       "program %u%s%s runs before it, and what it passes or drops skips "
				       "the limiter; 'attach dev %s hook tc first' puts xdp-rl first again\n",
				       a[i].ifname, "tc", a[i].ifindex, a[i].tc_position, a[i].tc_first_id,
				       a[i].tc_first_name[0] ? " " : "", a[i].tc_first_name, a[i].ifname);
			else if (a[i].ifindex)
				printf("  %-16s %-8s ifindex %u%s\n", a[i].ifname,
				       a[i].hook == XRL_HOOK_TC ? "tc" : xrl_xdp_mode_name(a[i].mode), a[i].ifindex,
				       a[i].tc_clsact ? "  (a clsact filter: no tcx links)" : "");
			else
				printf("  %-16s gone (link detached; 'detach dev %s' to clean up)\n",
				       a[i].ifname, a[i].ifname);
		}
	}
	xrl_status_free(&st);
	xrl_close(x);
	return 0;
}
