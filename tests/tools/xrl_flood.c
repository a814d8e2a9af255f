// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xrl-flood: a fast, bounded flood generator for the tests and benchmarks.
 *
 * It builds one frame, then has the kernel transmit it COUNT times out of
 * DEV through BPF_PROG_RUN in live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES):
 * a small XDP program gives each copy its source address and redirects it.
 * The receiving veth must have an XDP program or GRO on to take the frames.
 *
 *   xrl-flood -i DEV -d DST [-m DST_MAC] [-s SRC|CIDR] [-N SOURCES] [-R SEED]
 *             [-n COUNT] [-l FRAME_BYTES] [-P udp|tcp|icmp] [-p PORT]
 *             [-v VLAN] [-t THREADS] [-c FIRST_CPU] [-T SECONDS] [-Q NAME] [-A] [-j]
 *
 * While it runs, the program is also attached (native XDP) to DEV itself, a
 * device the caller created for the flood: with the program in the kernel's
 * XDP dispatcher for the whole run, a BPF_PROG_RUN call no longer re-images
 * the dispatcher (about 24 ms each here). Frames DEV really receives pass
 * untouched (unless -A, below). Without that attachment (DEV has another XDP program) it still
 * works, slower, and then writes each frame's headers whole (a receiver
 * that answers with XDP_TX hands the page back rewritten).
 *
 * -Q NAME makes every frame a DNS query (UDP; ID 0x4242, RD, one question:
 * NAME, type A, class IN; the frame as long as the query unless -l says
 * more). -A says the receiver answers the flood in place (XDP_TX: a slipped
 * DNS answer, a SYN cookie): every frame is then written whole before it
 * goes, and what DEV receives back is dropped by the attached program and
 * counted: "returned", the answers (UDP or TCP with the flood's port -p on
 * either side: an answer from it, or the frame sent back as it came), and
 * "returned_other" (anything else: the stack's ICMP errors), so that the
 * answers neither reach DEV's stack nor
 * hold the pages BPF_PROG_RUN recycles. BPF_PROG_RUN's frames are told from
 * frames DEV receives by their ingress device: ours are given the loopback
 * device of DEV's namespace.
 *
 * Sources: SRC alone sends from one address; a CIDR draws SOURCES addresses
 * (all of it by default) from the 32 bits after the prefix length,
 * sequentially, or in a pseudo-random order with -R SEED (a permutation:
 * every source sends the same number of frames).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/if_link.h>
#include <signal.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xrl_flood.skel.h"

/* Headers at any offset of the frame (after 14 bytes of Ethernet an IP
 * header is 2 bytes off its alignment): types that promise no alignment. */
typedef struct iphdr pkt_iphdr __attribute__((aligned(1)));
typedef struct ipv6hdr pkt_ipv6hdr __attribute__((aligned(1)));
typedef struct udphdr pkt_udphdr __attribute__((aligned(1)));
typedef struct tcphdr pkt_tcphdr __attribute__((aligned(1)));

#define CHUNK		4096	/* frames per BPF_PROG_RUN call: a fine-grained stop */

static struct {
	const char *dev, *dst, *src, *proto, *qname;
	__u8 dst_mac[6];
	bool have_mac, json, answered;
	unsigned long long count;
	unsigned long long sources;
	unsigned long long seed;
	bool random;
	int len, port, vlan, threads, cpu0;
	double seconds;
} o = {
	.src = NULL, .proto = "udp", .count = 1000000, .len = 0, .port = 9,
	.vlan = -1, .threads = 1, .cpu0 = 0, .seconds = 30,
};

struct worker {
	pthread_t th;
	int cpu, prog_fd, ifindex, err;
	unsigned long long todo, sent;
	const void *frame;
	size_t frame_len;
	double deadline;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __u32 csum_add(__u32 s, const void *p, size_t len)
{
	const __u8 *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (b[i] << 8) | b[i + 1];
	if (len & 1)
		s += b[len - 1] << 8;
	return s;
}

static __u16 csum_fold(__u32 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;	/* host order */
}

static __u64 splitmix(__u64 *x)
{
	__u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u64 gcd(__u64 a, __u64 b)
{
	while (b) {
		__u64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	/* data_end must be the frame size, or the kernel refuses the context;
	 * the ingress is the loopback device, so that the program tells these
	 * frames from the ones the device receives */
	struct xdp_md ctx = { .data_end = w->frame_len, .ingress_ifindex = w->ifindex };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (w->sent < w->todo && now_s() < w->deadline && !stop) {
		unsigned long long n = w->todo - w->sent;
		LIBBPF_OPTS(bpf_test_run_opts, t,
			    .data_in = w->frame, .data_size_in = w->frame_len,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
			    .repeat = n < CHUNK ? n : CHUNK,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		if (bpf_prog_test_run_opts(w->prog_fd, &t)) {
			w->err = errno;
			break;
		}
		w->sent += t.repeat;
	}
	return NULL;
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: xrl-flood -i DEV -d DST [-m DST_MAC] [-s SRC|CIDR] [-N SOURCES] [-R SEED]\n"
		"                 [-n COUNT] [-l FRAME_BYTES] [-P udp|tcp|icmp] [-p PORT] [-v VLAN]\n"
		"                 [-t THREADS] [-c FIRST_CPU] [-T SECONDS] [-Q NAME] [-A] [-j]\n");
	exit(code);
}

static int die(const char *msg)
{
	fprintf(stderr, "Error: %s\n", msg);
	return 1;
}

int main(int argc, char **argv)
{
	__u8 frame[1600] = {}, *p = frame, src[16] = {}, dst[16] = {};
	int opt, v6, plen, maxlen, ifindex, l3_off, l4_off, hdrs, ncpu;
	unsigned long long nsrc = 1, total = 0;
	struct worker *w;
	struct xrl_flood *skel;
	struct ifreq ifr = {};
	char cidr[64], *slash;
	double t0, t1;
	__u8 l4proto;
	int sock, lo_ifindex, qlen = 0;
	__u8 query[12 + 256 + 4] = {};

	while ((opt = getopt(argc, argv, "i:d:m:s:N:R:n:l:P:p:v:t:c:T:Q:Ajh")) != -1) {
		switch (opt) {
		case 'i': o.dev = optarg; break;
		case 'd': o.dst = optarg; break;
		case 'm':
			if (sscanf(optarg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &o.dst_mac[0], &o.dst_mac[1],
				   &o.dst_mac[2], &o.dst_mac[3], &o.dst_mac[4], &o.dst_mac[5]) != 6)
				usage(2);
			o.have_mac = true;
			break;
		case 's': o.src = optarg; break;
		case 'N': o.sources = strtoull(optarg, NULL, 0); break;
		case 'R': o.seed = strtoull(optarg, NULL, 0); o.random = true; break;
		case 'n': o.count = strtoull(optarg, NULL, 0); break;
		case 'l': o.len = atoi(optarg); break;
		case 'P': o.proto = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'v': o.vlan = atoi(optarg); break;
		case 't': o.threads = atoi(optarg); break;
		case 'c': o.cpu0 = atoi(optarg); break;
		case 'T': o.seconds = atof(optarg); break;
		case 'Q': o.qname = optarg; break;
		case 'A': o.answered = true; break;
		case 'j': o.json = true; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (!o.dev || !o.dst || o.count < 1 || o.count > 10000000000ULL ||
	    o.seconds <= 0 || o.seconds > 600 || o.threads < 1 || o.threads > ncpu || o.len < 0 ||
	    o.cpu0 < 0 || o.cpu0 + o.threads > ncpu || o.vlan > 4095)
		usage(2);
	ifindex = if_nametoindex(o.dev);
	if (!ifindex)
		return die("unknown interface");
	lo_ifindex = if_nametoindex("lo");
	if (!lo_ifindex)
		return die("no loopback device in this namespace");

	/* addresses */
	v6 = strchr(o.dst, ':') != NULL;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, o.dst, dst) != 1)
		return die("invalid destination address");
	snprintf(cidr, sizeof(cidr), "%s", o.src ? o.src : (v6 ? "2001:db8::1" : "198.18.0.1"));
	slash = strchr(cidr, '/');
	if (slash)
		*slash = '\0';
	if (inet_pton(v6 ? AF_INET6 : AF_INET, cidr, src) != 1)
		return die("invalid source: give an address or CIDR of the destination's family");
	maxlen = v6 ? 128 : 32;
	plen = slash ? atoi(slash + 1) : maxlen;
	if (plen < 0 || plen > maxlen || (v6 && plen < 32 && slash))
		return die("invalid source prefix length (IPv6: /32 .. /128)");

	/* the 32 varied bits: the word holding the first bit after the prefix */
	int word = v6 ? (plen < 128 ? plen / 32 : 3) : 0;
	int free_bits = plen == maxlen ? 0 : 32 - plen % 32;
	__u32 base;

	memcpy(&base, src + 4 * word, 4);
	base = ntohl(base);
	if (free_bits) {
		__u32 keep = free_bits == 32 ? 0 : ~0u << free_bits;

		base &= keep;
		nsrc = free_bits == 32 ? 0xffffffffULL : 1ULL << free_bits;
		if (!v6 && plen < 31)
			base += 1, nsrc -= 2;	/* skip network and broadcast */
	}
	if (o.sources) {
		if (o.sources > nsrc)
			return die("more sources than the prefix holds");
		nsrc = o.sources;
	}
	{
		__u32 b = htonl(base);

		memcpy(src + 4 * word, &b, 4);
	}

	/* the frame */
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o.dev);
	if (sock < 0 || ioctl(sock, SIOCGIFHWADDR, &ifr))
		return die("cannot read the interface's MAC address");
	close(sock);
	memcpy(p, o.have_mac ? o.dst_mac : (const __u8 *)"\xff\xff\xff\xff\xff\xff", 6);
	memcpy(p + 6, ifr.ifr_hwaddr.sa_data, 6);
	p += 12;
	if (o.vlan >= 0) {
		*(__be16 *)p = htons(ETH_P_8021Q);
		*(__be16 *)(p + 2) = htons(o.vlan);
		p += 4;
	}
	*(__be16 *)p = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	p += 2;
	l3_off = p - frame;

	if (!strcmp(o.proto, "udp"))
		l4proto = IPPROTO_UDP;
	else if (!strcmp(o.proto, "tcp"))
		l4proto = IPPROTO_TCP;
	else if (!strcmp(o.proto, "icmp"))
		l4proto = v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	else
		return die("protocol must be udp, tcp or icmp");
	if (o.qname) {
		/* a DNS query: header (ID, RD, QDCOUNT 1), the name as labels,
		 * type A, class IN */
		const char *n = o.qname;
		int at = 12;

		if (l4proto != IPPROTO_UDP)
			return die("-Q needs -P udp");
		query[0] = 0x42, query[1] = 0x42, query[2] = 0x01, query[5] = 1;
		while (*n) {
			const char *dot = strchr(n, '.');
			int l = dot ? dot - n : (int)strlen(n);

			if (l < 1 || l > 63 || at + 1 + l > 12 + 254)
				return die("-Q: a DNS name of labels of 1..63 bytes, 253 bytes at most");
			query[at++] = l;
			memcpy(query + at, n, l);
			at += l;
			n += l + (dot != NULL);
		}
		query[at++] = 0;
		query[at + 1] = 1, query[at + 3] = 1;
		qlen = at + 4;
	}
	hdrs = l3_off + (v6 ? 40 : 20) + (l4proto == IPPROTO_TCP ? 20 : 8) + qlen;
	if (!o.len)
		o.len = hdrs > 64 ? hdrs : 64;	/* default: the smallest frame */
	if (o.len < hdrs || o.len < 60 || o.len > 1514 + (o.vlan >= 0 ? 4 : 0))
		return die("frame length out of range for these headers (60 .. 1514)");
	l4_off = l3_off + (v6 ? 40 : 20);
	int l4_len = o.len - l4_off;

	if (v6) {
		pkt_ipv6hdr *ip6 = (void *)(frame + l3_off);

		ip6->version = 6;
		ip6->hop_limit = 64;
		ip6->nexthdr = l4proto;
		ip6->payload_len = htons(l4_len);
		memcpy(&ip6->saddr, src, 16);
		memcpy(&ip6->daddr, dst, 16);
	} else {
		pkt_iphdr *ip = (void *)(frame + l3_off);

		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = l4proto;
		ip->tot_len = htons(o.len - l3_off);
		memcpy(&ip->saddr, src, 4);
		memcpy(&ip->daddr, dst, 4);
		ip->check = htons(csum_fold(csum_add(0, ip, 20)));
	}

	__u8 *l4 = frame + l4_off;
	int csum_at;

	if (l4proto == IPPROTO_UDP) {
		pkt_udphdr *u = (void *)l4;

		u->source = htons(40000);
		u->dest = htons(o.port);
		u->len = htons(l4_len);
		memcpy(l4 + 8, query, qlen);
		csum_at = 6;
	} else if (l4proto == IPPROTO_TCP) {
		pkt_tcphdr *t = (void *)l4;

		t->source = htons(40000);
		t->dest = htons(o.port);
		t->seq = htonl(0x12345678);
		t->doff = 5;
		t->syn = 1;
		t->window = htons(64240);
		csum_at = 16;
	} else {
		l4[0] = v6 ? ICMPV6_ECHO_REQUEST : ICMP_ECHO;
		csum_at = 2;
	}
	/* the L4 checksum: with the pseudo-header, except for ICMPv4 */
	{
		__u32 s = csum_add(0, l4, l4_len);
		__u16 c;

		if (l4proto != IPPROTO_ICMP) {
			s = csum_add(s, src, v6 ? 16 : 4);
			s = csum_add(s, dst, v6 ? 16 : 4);
			s += l4proto + l4_len;
		}
		c = csum_fold(s);
		if (l4proto == IPPROTO_UDP && c == 0)
			c = 0xffff;
		*(__be16 *)(l4 + csum_at) = htons(c);
	}

	/* the program */
	libbpf_set_print(NULL);
	skel = xrl_flood__open();
	if (!skel)
		return die("cannot open the generator program");
	skel->rodata->ifindex_out = ifindex;
	skel->rodata->nsrc = nsrc;
	skel->rodata->saddr_off = l3_off + (v6 ? 8 + 4 * word : 12);
	skel->rodata->saddr_base = base;
	skel->rodata->ip_csum_off = v6 ? 0 : l3_off + 10;
	skel->rodata->ip_csum_base = v6 ? 0 : ntohs(*(__be16 *)(frame + l3_off + 10));
	skel->rodata->l4_csum_off = l4proto == IPPROTO_ICMP ? 0 : l4_off + csum_at;
	skel->rodata->l4_csum_base = ntohs(*(__be16 *)(l4 + csum_at));
	skel->rodata->l4_is_udp = l4proto == IPPROTO_UDP;
	memcpy((void *)skel->rodata->own_mac, ifr.ifr_hwaddr.sa_data, 6);
	/* the headers, rewritten into every frame while not attached */
	skel->rodata->tmpl_len = o.len < (int)sizeof(skel->rodata->tmpl) ? o.len : (int)sizeof(skel->rodata->tmpl);
	memcpy((void *)skel->rodata->tmpl, frame, skel->rodata->tmpl_len);
	skel->rodata->answered = o.answered;
	skel->rodata->answer_port = o.port;
	skel->rodata->perm_a = 1;
	skel->rodata->perm_b = 0;
	if (o.random && nsrc > 1) {
		__u64 x = o.seed, a;

		do
			a = splitmix(&x) % nsrc;
		while (a == 0 || gcd(a, nsrc) != 1);
		skel->rodata->perm_a = a;
		skel->rodata->perm_b = splitmix(&x) % nsrc;
	}
	if (xrl_flood__load(skel))
		return die("cannot load the generator program");

	/* per-CPU start: thread k sends frames k, k + T, k + 2T, ... */
	{
		int ncpus = libbpf_num_possible_cpus();
		struct { __u64 next, step, returned, other; } *st = calloc(ncpus, sizeof(*st));
		__u32 zero = 0;

		for (int k = 0; k < o.threads; k++)
			st[o.cpu0 + k] = (typeof(*st)){ k, o.threads, 0, 0 };
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.flood_state), &zero, st, 0))
			return die("cannot set the generator's state");
		free(st);
	}

	/* keep the program in the XDP dispatcher for the whole run */
	bool attached = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.xrl_flood),
				       XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL) == 0;

	if (!attached) {
		fprintf(stderr, "Warning: %s has an XDP program; each call re-images the XDP dispatcher (slower)\n",
			o.dev);
		/* every frame the program sees is then one of ours */
		skel->bss->live_only = 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	w = calloc(o.threads, sizeof(*w));
	t0 = now_s();
	for (int k = 0; k < o.threads; k++) {
		w[k] = (struct worker){
			.cpu = o.cpu0 + k, .prog_fd = bpf_program__fd(skel->progs.xrl_flood),
			.ifindex = lo_ifindex, .frame = frame, .frame_len = o.len,
			.todo = o.count / o.threads + (k < (int)(o.count % o.threads)),
			.deadline = t0 + o.seconds,
		};
		pthread_create(&w[k].th, NULL, run_worker, &w[k]);
	}
	for (int k = 0; k < o.threads; k++) {
		pthread_join(w[k].th, NULL);
		total += w[k].sent;
		if (w[k].err) {
			fprintf(stderr, "Error: BPF_PROG_RUN on %s: %s\n", o.dev, strerror(w[k].err));
			if (attached)
				bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
			return 1;
		}
	}
	t1 = now_s();
	/* the answers still in flight, then what came back */
	unsigned long long returned = 0, other = 0;

	if (o.answered && attached) {
		int ncpus = libbpf_num_possible_cpus();
		struct { __u64 next, step, returned, other; } *st = calloc(ncpus, sizeof(*st));
		__u32 zero = 0;

		usleep(100000);
		if (!st || bpf_map_lookup_elem(bpf_map__fd(skel->maps.flood_state), &zero, st)) {
			bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
			return die("cannot read the generator's count of answers");
		}
		for (int c = 0; c < ncpus; c++) {
			returned += st[c].returned;
			other += st[c].other;
		}
		free(st);
	}
	if (attached)
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	if (o.json)
		printf("{\"sent\": %llu, \"seconds\": %.6f, \"pps\": %.0f, \"sources\": %llu, \"frame_bytes\": %d%s",
		       total, t1 - t0, total / (t1 - t0), nsrc, o.len, o.answered && attached ? "" : "}\n");
	else
		printf("sent %llu frames in %.3f s: %.3f Mpps (%llu sources, %d bytes)\n",
		       total, t1 - t0, total / (t1 - t0) / 1e6, nsrc, o.len);
	if (o.answered && attached) {
		if (o.json)
			printf(", \"returned\": %llu, \"returned_pps\": %.0f, \"returned_other\": %llu}\n",
			       returned, returned / (t1 - t0), other);
		else
			printf("returned %llu answers: %.3f Mpps (and %llu other frames)\n",
			       returned, returned / (t1 - t0) / 1e6, other);
	}
	xrl_flood__destroy(skel);
	free(w);
	return 0;
}
