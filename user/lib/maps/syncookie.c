// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: SYN cookies' counters, the verified table and the host check.
 */
#include "maps/internal.h"
#include "maps/syncookie.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int sum_percpu(struct xrl *x, int map, __u32 idx, __u64 *sum, size_t nfields)
{
	size_t stride = nfields * sizeof(__u64);
	__u64 *vals = calloc(x->ncpus, stride);

	if (!vals)
		return xrl_fail(ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(x->map_fd[map], &idx, vals)) {
		int err = xrl_fail(errno, "cannot read the SYN-cookie counters: %s", strerror(errno));

		free(vals);
		return err;
	}
	memset(sum, 0, stride);
	for (int c = 0; c < x->ncpus; c++)
		for (size_t f = 0; f < nfields; f++)
			sum[f] += vals[c * nfields + f];
	free(vals);
	return 0;
}

int xrl_sc_stats_get(struct xrl *x, __u32 slot, struct xrl_sc_stats *sum)
{
	return sum_percpu(x, M_SC_STATS, slot, (__u64 *)sum, sizeof(*sum) / sizeof(__u64));
}

int xrl_answers_get(struct xrl *x, struct xrl_answer_stats *sum)
{
	return sum_percpu(x, M_ANSWERS, 0, (__u64 *)sum, sizeof(*sum) / sizeof(__u64));
}

int xrl_sc_table_get(struct xrl *x, struct xrl_sc_table *t)
{
	struct xrl_sc_key k, next;
	struct xrl_sc_stats all;
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	void *prev = NULL;
	int fd = x->map_fd[M_SC_VERIFIED], err;

	memset(t, 0, sizeof(*t));
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return xrl_fail(errno, "cannot read the verified table: %s", strerror(errno));
	t->size = info.max_entries;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		t->entries++;
		k = next;
		prev = &k;
	}
	if ((err = xrl_sc_stats_get(x, XRL_RULE_SLOTS, &all)))
		return err;
	t->inserted = all.verified;
	t->evicted = all.verified > t->entries ? all.verified - t->entries : 0;
	return 0;
}

int xrl_sc_verified_clear(struct xrl *x)
{
	int fd = x->map_fd[M_SC_VERIFIED];
	struct xrl_sc_key k;

	/* deleting the first key each time: the walk never loses its place */
	while (!bpf_map_get_next_key(fd, NULL, &k))
		if (bpf_map_delete_elem(fd, &k) && errno != ENOENT)
			return xrl_fail(errno, "cannot clear the verified table: %s", strerror(errno));
	return 0;
}

/* The first line of a /proc or /sys file as a number; -1: no such file. */
static long read_num(const char *path)
{
	char buf[32];
	long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

int xrl_sc_host_check(char *buf, size_t len)
{
	long v;

	buf[0] = '\0';
	v = read_num("/proc/sys/net/ipv4/tcp_syncookies");
	if (v < 0) {
		snprintf(buf, len, "this kernel has no SYN cookies (net.ipv4.tcp_syncookies is missing: CONFIG_SYN_COOKIES)");
		return -ENOTSUP;
	}
	if (v == 0) {
		snprintf(buf, len, "net.ipv4.tcp_syncookies is 0: SYNPROXY checks the cookies with the kernel's SYN cookies (sysctl -w net.ipv4.tcp_syncookies=1)");
		return -ENOTSUP;
	}
	if (access("/sys/module/nft_synproxy", F_OK) && access("/sys/module/xt_SYNPROXY", F_OK)) {
		snprintf(buf, len, "netfilter's SYNPROXY is not loaded (modprobe nft_synproxy, and its nftables rules: docs/answers.md)");
		return -ENOTSUP;
	}
	v = read_num("/proc/sys/net/netfilter/nf_conntrack_tcp_loose");
	if (v < 0) {
		snprintf(buf, len, "connection tracking is not loaded (modprobe nf_conntrack; SYNPROXY needs it)");
		return -ENOTSUP;
	}
	if (v != 0) {
		snprintf(buf, len, "net.netfilter.nf_conntrack_tcp_loose is %ld: conntrack would take the cookie's ACK for a connection, and SYNPROXY would never see it (sysctl -w net.netfilter.nf_conntrack_tcp_loose=0)", v);
		return -ENOTSUP;
	}
	return 0;
}
