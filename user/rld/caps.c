// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rld: the capabilities it keeps after start-up (README, "Privileges").
 *
 * Linux keeps capabilities per thread: capset() changes the calling thread
 * only, and a new thread starts with a copy of its creator's sets. So the
 * start-up (load, pin, attach, run-time statistics) runs with what the
 * daemon was given; then the event loop keeps CAP_BPF alone in its
 * permitted, effective and bounding sets (caps_keep()), and each other
 * thread trims itself: the log writer, the heartbeat and the fleet client's
 * sync thread drop every capability (caps_thread_none()), the metrics
 * thread serves HTTP with an empty effective set and raises its permitted
 * ones only while it reads the maps, and the event loop reads the
 * configuration file with an empty effective set (caps_effective()). A thread that lowered its effective set
 * can raise it again from its permitted set; what left the permitted set is
 * gone for good.
 */
#include "rld.h"

#include <cap-ng.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>

/* What the kernel requires after start-up (measured on 6.18 with
 * kernel.unprivileged_bpf_disabled=2, README "Privileges"):
 * CAP_BPF: creating each reload's LPM tries and class array.
 * Not CAP_SYS_ADMIN: the published rule sets (maps in maps) are opened by
 * pin or through the descriptors the daemon keeps of what it published
 * (libxrl, rules.c), never by id after the start.
 * CAP_NET_ADMIN, only while the configuration has syn-cookies rules: a
 * reload that changes their ports rewrites netfilter's SYNPROXY table
 * (nft, which gets it as an ambient capability, libxrl syncookie.c). A
 * configuration that gains its first syn-cookies rule on a reload cannot
 * get it back: that reload is refused, saying so; restart the daemon.
 * CAP_NET_ADMIN also while it serves an interface at hook tc: the order of
 * its tcx chain (is xdp-rl still first?) is read with BPF_PROG_QUERY. An
 * interface at tc that a reload adds is served, its order unknown until
 * a restart (said in the log). */
static const int keep[] = { CAP_BPF, CAP_NET_ADMIN };

int caps_keep(char *kept, size_t len, bool net_admin)
{
	bool have[sizeof(keep) / sizeof(keep[0])];
	size_t l = 0;
	int err;

	if (capng_get_caps_process())
		return -EPERM;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		have[i] = capng_have_capability(CAPNG_PERMITTED, keep[i]) &&
			  (keep[i] != CAP_NET_ADMIN || net_admin);
	capng_clear(CAPNG_SELECT_BOTH);
	kept[0] = '\0';
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		if (!have[i])
			continue;
		capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET, keep[i]);
		if (l < len)
			l += snprintf(kept + l, len - l, "%scap_%s", l ? ", " : "",
				      capng_capability_to_name(keep[i]));
	}
	if (!kept[0])
		snprintf(kept, len, "none");
	err = capng_apply(CAPNG_SELECT_BOTH);
	if (err)	/* without CAP_SETPCAP the bounding set stays: the rest still goes */
		err = capng_apply(CAPNG_SELECT_CAPS);
	return err ? -EPERM : 0;
}

int caps_thread_none(void)
{
	/* the bounding set too, where this thread still may (a thread started
	 * before caps_keep(): nothing it could exec would regain them) */
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_BOTH) == 0)
		return 0;
	capng_clear(CAPNG_SELECT_CAPS);
	return capng_apply(CAPNG_SELECT_CAPS) ? -EPERM : 0;
}

int caps_effective(bool on)
{
	if (capng_get_caps_process())
		return -EPERM;
	for (unsigned int c = 0; c <= CAP_LAST_CAP; c++)
		if (on && capng_have_capability(CAPNG_PERMITTED, c))
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE, c);
		else if (!on)
			capng_update(CAPNG_DROP, CAPNG_EFFECTIVE, c);
	return capng_apply(CAPNG_SELECT_CAPS) ? -EPERM : 0;
}
