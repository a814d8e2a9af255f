// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE	/* pipe2 */
/*
 * libxrl: SYN cookies' counters, the verified table and the host check.
 */
#include "maps/internal.h"
#include "maps/syncookie.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "maps/xrl.h"

#include "model/rule.h"

int xrl_sc_stats_get(struct xrl *x, __u32 slot, struct xrl_sc_stats *sum)
{
	return xrl__percpu_sum(x, M_SC_STATS, slot, (__u64 *)sum, sizeof(*sum) / sizeof(__u64));
}

/* the answers every step sent (DNS slip, SYN cookies): the global stats' */
int xrl_answers_get(struct xrl *x, struct xrl_answer_stats *sum)
{
	struct xrl_global_stats g;
	int err = xrl_global_stats_get(x, &g);

	sum->tx_packets = err ? 0 : g.answered_packets;
	return err;
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

/* In nft's child: CAP_NET_ADMIN, when permitted (the daemon keeps it for
 * syn-cookies rules), made inheritable and ambient, so that nft (no file
 * capabilities) runs with it; without it nft says it may not. */
static void nft_child_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	__u32 bit = 1u << (CAP_NET_ADMIN % 32);
	int w = CAP_NET_ADMIN / 32;

	if (syscall(SYS_capget, &h, d) || !(d[w].permitted & bit))
		return;
	d[w].inheritable |= bit;
	d[w].effective |= bit;
	if (syscall(SYS_capset, &h, d))
		return;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0, 0);
}

/* Run nft -f - on script; its messages (stderr and stdout) in msg. The
 * exit status, or -errno when it could not run. */
static int run_nft(const char *script, char *msg, size_t len)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, st = 0;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	msg[0] = '\0';
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		int err = -errno;

		close(in[0]);
		close(in[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return err;
	}
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		nft_child_caps();
		execlp("nft", "nft", "-f", "-", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* a script of a few hundred bytes fits the pipe: written whole
	 * before anything is read */
	if (write(in[1], script, strlen(script)) < 0)
		st = -errno;
	close(in[1]);
	/* nft's output until it closes it, within XRL_SC_NFT_TIMEOUT_MS: a
	 * hung nft (the netlink lock held) is killed, the commit refused,
	 * and the caller (the daemon's event loop) goes on */
	{
		struct timespec t0, t;
		struct pollfd pfd = { .fd = out[0], .events = POLLIN };
		long left;
		char drop[256];

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			left = XRL_SC_NFT_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
							(t.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				close(out[0]);
				snprintf(msg, len, "nft did not finish within %d ms: killed",
					 XRL_SC_NFT_TIMEOUT_MS);
				return -ETIMEDOUT;
			}
			r = poll(&pfd, 1, (int)left);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				continue;
			if (got + 1 < len)
				r = read(out[0], msg + got, len - 1 - got);
			else
				r = read(out[0], drop, sizeof(drop));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (got + 1 < len)
				got += r;
		}
	}
	msg[got] = '\0';
	close(out[0]);
	while (got && (msg[got - 1] == '\n'))
		msg[--got] = '\0';
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st))
		return -EINTR;
	return WEXITSTATUS(st);
}

void xrl_sc_table_name(const char *pin_dir, char *buf, size_t len)
{
	__u32 h = 2166136261u;	/* FNV-1a of the pin directory */

	if (!pin_dir || !strcmp(pin_dir, XRL_DEFAULT_PIN_DIR)) {
		snprintf(buf, len, "%s", XRL_SC_NFT_TABLE);
		return;
	}
	for (const char *c = pin_dir; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(buf, len, "%s_%08x", XRL_SC_NFT_TABLE, h);
}

int xrl_sc_ports(const struct xrl_rule_entry *v, size_t n, char *ports, size_t len)
{
	size_t l = 0;
	int k = 0;

	ports[0] = '\0';
	for (size_t i = 0; i < n && l < len; i++) {
		const struct xrl_rule *ru = &v[i].r;

		if (!ru->syncookies)
			continue;
		if (ru->dport_lo == ru->dport_hi)
			l += snprintf(ports + l, len - l, "%s%u", k ? ", " : "", ru->dport_lo);
		else
			l += snprintf(ports + l, len - l, "%s%u-%u", k ? ", " : "",
				      ru->dport_lo, ru->dport_hi);
		k++;
	}
	if (l >= len)
		return xrl_fail(E2BIG, "syn-cookies: too many port ranges for one SYNPROXY rule");
	return k;
}

int xrl_sc_ephemeral_check(const struct xrl_rule *r, char *buf, size_t len)
{
	unsigned int lo = 0, hi = 0;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	int n = f ? fscanf(f, "%u %u", &lo, &hi) : 0;

	if (f)
		fclose(f);
	if (n != 2)
		return 0;	/* no such file: nothing known to overlap */
	if (r->dport_hi < lo || r->dport_lo > hi)
		return 0;
	snprintf(buf, len, "its ports %u-%u overlap the host's own connections' ports (net.ipv4.ip_local_port_range %u-%u): their answers would be challenged; give the listening ports only, or move the range",
		 r->dport_lo, r->dport_hi, lo, hi);
	return -ENOTSUP;
}

int xrl_sc_nft_sync(const char *table, const struct xrl_rule_entry *v, size_t n)
{
	char ports[1024], script[4096], msg[1024];
	size_t l;
	int r, k;

	k = xrl_sc_ports(v, n, ports, sizeof(ports));
	if (k < 0)
		return k;
	/* the table created if missing, then deleted and written whole: one
	 * transaction, never a moment without the rule or with a half one */
	if (!k) {
		l = snprintf(script, sizeof(script), "table inet %s\ndelete table inet %s\n",
			     table, table);
	} else {
		l = snprintf(script, sizeof(script),
			"table inet %1$s\n"
			"delete table inet %1$s\n"
			"table inet %1$s {\n"
			"\tchain syn_notrack {\n"
			"\t\ttype filter hook prerouting priority raw; policy accept;\n"
			"\t\ttcp dport { %2$s } tcp flags & (fin|syn|rst|ack) == syn fib daddr type local notrack\n"
			"\t}\n"
			"\tchain proxy {\n"
			"\t\ttype filter hook input priority filter; policy accept;\n"
			"\t\tmeta nfproto ipv4 tcp dport { %2$s } ct state invalid,untracked synproxy mss %3$u wscale %5$u timestamp sack-perm\n"
			"\t\tmeta nfproto ipv6 tcp dport { %2$s } ct state invalid,untracked synproxy mss %4$u wscale %5$u timestamp sack-perm\n"
			"\t\ttcp dport { %2$s } ct state invalid drop\n"
			"\t}\n"
			"}\n", table, ports, XRL_SC_MSS4, XRL_SC_MSS6, XRL_SC_WSCALE);
	}
	if (l >= sizeof(script))
		return xrl_fail(E2BIG, "syn-cookies: the SYNPROXY rules do not fit");
	r = run_nft(script, msg, sizeof(msg));
	if (r == 127 || r == -ENOENT)
		return xrl_fail(ENOTSUP, "syn-cookies need nftables for netfilter's SYNPROXY: 'nft' is not installed (apt-get install nftables)");
	if (r < 0)
		return xrl_fail(-r, "cannot run nft for the SYNPROXY rules: %s",
				msg[0] ? msg : strerror(-r));
	if (r)
		return xrl_fail(ENOTSUP, "cannot install netfilter's SYNPROXY rules (nftables table inet %s): %s",
				table, msg[0] ? msg : "nft failed");
	return 0;
}
