// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: what the program needs of the kernel. A kernel older than
 * XRL_KERNEL_MIN refuses the object with a verifier log that names an
 * "unknown func" or a map type by number; probing the helpers and map types
 * the program uses (libbpf_probe_bpf_helper(), _map_type()) names what is
 * missing and the release that brought it.
 */
#include "maps/internal.h"
#include "maps/kernel.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* Every helper and map type of bpf/, newest first (the test holds this
 * list to the sources). */
const struct xrl_kernel_need xrl_kernel_needs[] = {
	{ "bpf_tcp_raw_gen_syncookie_ipv4", "6.0", XRL_NEED_HELPER, BPF_FUNC_tcp_raw_gen_syncookie_ipv4 },
	{ "bpf_tcp_raw_gen_syncookie_ipv6", "6.0", XRL_NEED_HELPER, BPF_FUNC_tcp_raw_gen_syncookie_ipv6 },
	{ "bpf_tcp_raw_check_syncookie_ipv4", "6.0", XRL_NEED_HELPER, BPF_FUNC_tcp_raw_check_syncookie_ipv4 },
	{ "bpf_tcp_raw_check_syncookie_ipv6", "6.0", XRL_NEED_HELPER, BPF_FUNC_tcp_raw_check_syncookie_ipv6 },
	{ "bpf_map_lookup_percpu_elem", "5.19", XRL_NEED_HELPER, BPF_FUNC_map_lookup_percpu_elem },
	{ "bpf_loop", "5.17", XRL_NEED_HELPER, BPF_FUNC_loop },
	{ "bpf_check_mtu", "5.12", XRL_NEED_HELPER, BPF_FUNC_check_mtu },
	{ "bpf_ktime_get_coarse_ns", "5.11", XRL_NEED_HELPER, BPF_FUNC_ktime_get_coarse_ns },
	{ "bpf_ringbuf_reserve", "5.8", XRL_NEED_HELPER, BPF_FUNC_ringbuf_reserve },
	{ "bpf_ringbuf_submit", "5.8", XRL_NEED_HELPER, BPF_FUNC_ringbuf_submit },
	{ "bpf_ringbuf_output", "5.8", XRL_NEED_SK_HELPER, BPF_FUNC_ringbuf_output },
	{ "BPF_MAP_TYPE_RINGBUF", "5.8", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_RINGBUF },
	{ "bpf_jiffies64", "5.5", XRL_NEED_HELPER, BPF_FUNC_jiffies64 },
	{ "bpf_xdp_adjust_tail", "4.18", XRL_NEED_HELPER, BPF_FUNC_xdp_adjust_tail },
	{ "BPF_MAP_TYPE_ARRAY_OF_MAPS", "4.12", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_ARRAY_OF_MAPS },
	{ "BPF_MAP_TYPE_LPM_TRIE", "4.11", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_LPM_TRIE },
	{ "BPF_MAP_TYPE_LRU_HASH", "4.10", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_LRU_HASH },
	{ "bpf_skb_pull_data", "4.9", XRL_NEED_TC_HELPER, BPF_FUNC_skb_pull_data },
	{ "bpf_perf_event_output", "4.8", XRL_NEED_HELPER, BPF_FUNC_perf_event_output },
	{ "bpf_csum_diff", "4.6", XRL_NEED_HELPER, BPF_FUNC_csum_diff },
	{ "BPF_MAP_TYPE_PERCPU_ARRAY", "4.6", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_PERCPU_ARRAY },
	{ "bpf_skb_load_bytes", "4.5", XRL_NEED_SK_HELPER, BPF_FUNC_skb_load_bytes },
	{ "BPF_MAP_TYPE_PERF_EVENT_ARRAY", "4.3", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_PERF_EVENT_ARRAY },
	{ "bpf_ktime_get_ns", "4.1", XRL_NEED_HELPER, BPF_FUNC_ktime_get_ns },
	{ "bpf_get_prandom_u32", "4.1", XRL_NEED_HELPER, BPF_FUNC_get_prandom_u32 },
	{ "bpf_map_lookup_elem", "3.19", XRL_NEED_HELPER, BPF_FUNC_map_lookup_elem },
	{ "bpf_map_update_elem", "3.19", XRL_NEED_HELPER, BPF_FUNC_map_update_elem },
	{ "BPF_MAP_TYPE_HASH", "3.19", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_HASH },
	{ "BPF_MAP_TYPE_ARRAY", "3.19", XRL_NEED_MAP_TYPE, BPF_MAP_TYPE_ARRAY },
};
const size_t xrl_kernel_nneeds = sizeof(xrl_kernel_needs) / sizeof(xrl_kernel_needs[0]);

int xrl_kernel_lacks_format(const bool *missing, const char *release, char *buf, size_t len)
{
	size_t l = 0, n = 0, k = 0;

	for (size_t i = 0; i < xrl_kernel_nneeds; i++)
		n += missing[i];
	if (!n)
		return 0;
	if (release)
		l = snprintf(buf, len, "this kernel (Linux %s) lacks ", release);
	else
		l = snprintf(buf, len, "this kernel lacks ");
	for (size_t i = 0; i < xrl_kernel_nneeds && l < len; i++) {
		if (!missing[i])
			continue;
		k++;
		l += snprintf(buf + l, len - l, "%s%s (Linux %s+)",
			      k == 1 ? "" : k == n ? " and " : ", ",
			      xrl_kernel_needs[i].name, xrl_kernel_needs[i].since);
	}
	if (l < len)
		snprintf(buf + l, len - l, "; xdp-rl needs Linux %s or later", XRL_KERNEL_MIN);
	return n;
}

int xrl_kernel_probe(char *buf, size_t len)
{
	bool missing[sizeof(xrl_kernel_needs) / sizeof(xrl_kernel_needs[0])] = { false };
	struct utsname u;

	buf[0] = '\0';
	/* An array map is as old as BPF itself: when even it probes as
	 * missing, the probe cannot tell (without CAP_BPF under
	 * kernel.unprivileged_bpf_disabled, every probe answers 0), and
	 * nothing is said to be missing. */
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY, NULL) != 1)
		return 0;
	for (size_t i = 0; i < xrl_kernel_nneeds; i++) {
		const struct xrl_kernel_need *k = &xrl_kernel_needs[i];
		int r = k->kind == XRL_NEED_HELPER ?
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, k->id, NULL) :
			k->kind == XRL_NEED_TC_HELPER ?
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS, k->id, NULL) :
			k->kind == XRL_NEED_SK_HELPER ?
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_SOCKET_FILTER, k->id, NULL) :
			libbpf_probe_bpf_map_type(k->id, NULL);

		missing[i] = r == 0;	/* 1: there; < 0: cannot tell */
	}
	return xrl_kernel_lacks_format(missing, uname(&u) ? NULL : u.release, buf, len);
}

/*
 * libbpf's warnings while the skeleton loads, held back: a load that fails
 * on a kernel that lacks a need drops them (the verifier's log of an
 * unknown helper says less than the probe) unless XRL_DEBUG is set; any
 * other outcome passes them on as they came. Messages from another thread
 * meanwhile are held and passed on too.
 */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static libbpf_print_fn_t held_prev;
static char *held;		/* the messages, each ending in '\0' */
static size_t held_len, held_cap;
static bool held_cut;		/* some did not fit */

#define HELD_MAX	(4u << 20)

static int hold_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (level != LIBBPF_WARN)	/* info, debug: as before */
		return held_prev ? held_prev(level, fmt, ap) : 0;
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	pthread_mutex_lock(&held_lock);
	if (n >= 0 && held_len + n + 1 > held_cap && held_len + n + 1 <= HELD_MAX) {
		size_t cap = held_cap ? held_cap : 4096;
		char *p;

		while (cap < held_len + n + 1)
			cap *= 2;
		if ((p = realloc(held, cap))) {
			held = p;
			held_cap = cap;
		}
	}
	if (n >= 0 && held_len + n + 1 <= held_cap) {
		vsnprintf(held + held_len, n + 1, fmt, ap);
		held_len += n + 1;
	} else {
		held_cut = true;
	}
	pthread_mutex_unlock(&held_lock);
	return 0;
}

static int pass_on(libbpf_print_fn_t fn, enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fn(level, fmt, ap);
	va_end(ap);
	return r;
}

int xrl__skel_load(struct xdp_rl *skel, char *lacks, size_t len)
{
	libbpf_print_fn_t prev;
	int err;

	lacks[0] = '\0';
	pthread_mutex_lock(&held_lock);
	held_len = 0;
	held_cut = false;
	pthread_mutex_unlock(&held_lock);
	prev = libbpf_set_print(hold_print);
	held_prev = prev;
	err = xdp_rl__load(skel);
	libbpf_set_print(prev);
	if (err && !xrl__is_perm(-err))
		xrl_kernel_probe(lacks, len);
	pthread_mutex_lock(&held_lock);
	/* XRL_DEBUG=1 keeps the verifier's log in every case */
	if ((!lacks[0] || getenv("XRL_DEBUG")) && prev) {
		for (size_t i = 0; i < held_len; i += strlen(held + i) + 1)
			pass_on(prev, LIBBPF_WARN, "%s", held + i);
		if (held_cut)
			pass_on(prev, LIBBPF_WARN, "libbpf: (messages cut: over %u bytes)\n", HELD_MAX);
	}
	free(held);
	held = NULL;
	held_len = held_cap = 0;
	pthread_mutex_unlock(&held_lock);
	return err;
}
