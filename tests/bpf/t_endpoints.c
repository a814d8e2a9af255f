// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Endpoint rules (protocol and port): classes, specificity, fragments,
 * GRO aggregates, commits.
 */
#include "harness.h"

/* The endpoint rules' example: every source 1000 pps overall, 10 SYN/min
 * to TCP/22, 100/s to UDP/53 per /24. A packet passes only when its source
 * rule and its endpoint rule both admit; what either refuses costs the
 * other nothing (docs/rules.md, Order). */
TEST(endpoint_rules)
{
	struct xrl_rule_stats ssh, dns;

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 rate 1000/s burst 1000 id 1",
		     "rule add 198.18.5.0/24 rate 1/h burst 5 id 2",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10 id 10",
		     "rule add 0.0.0.0/0 proto udp dport 53 rate 100/s burst 100 per /24 id 11",
		     "rule add ::/0 proto tcp dport 22 syn rate 10/min burst 3 id 12"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 15), 10,
		 "10 SYNs to TCP/22 a minute");
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, ACK, false, 15), 15, "not a SYN");
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN | ACK, false, 5), 5,
		 "a SYN-ACK is not a SYN");
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 80, SYN, false, 15), 15, "no endpoint rule");
	CHECK_EQ(ep_send("198.18.0.2", IPPROTO_TCP, 22, SYN, false, 15), 10, "its own key");
	/* per /24: two sources share 100 */
	CHECK_EQ(ep_send("198.18.1.1", IPPROTO_UDP, 53, 0, false, 80) +
		 ep_send("198.18.1.2", IPPROTO_UDP, 53, 0, false, 80), 100, "per /24: two sources share 100");
	CHECK_EQ(ep_send("198.18.1.3", IPPROTO_UDP, 54, 0, false, 80), 80,
		 "of 80 to UDP/54 from 198.18.1.3, those passed");
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_UDP, 53, 0, false, 150), 100, "another /24");
	/* both must admit: the source rule's 5 first; what it drops costs
	 * the endpoint rule nothing */
	ssh = rstats(10);
	CHECK_EQ(ep_send("198.18.5.1", IPPROTO_TCP, 22, SYN, false, 15), 5,
		 "both must admit: the source rule's 5 first");
	CHECK_EQ(rstats(10).passed_packets - ssh.passed_packets, 5,
		 "the endpoint rule passed what the source rule passed");
	CHECK_EQ(rstats(10).dropped_packets - ssh.dropped_packets, 0,
		 "what the source rule dropped costs the endpoint rule nothing");
	CHECK_EQ(rstats(2).dropped_packets, 10, "rule 2: dropped packets");
	/* IPv6 */
	CHECK_EQ(ep_send("2001:db8::1", IPPROTO_TCP, 22, SYN, false, 5), 3, "IPv6");
	ssh = rstats(10);
	dns = rstats(11);
	CHECK_EQ(ssh.passed_packets, 25, "ssh: passed packets");
	CHECK_EQ(ssh.dropped_packets, 10, "ssh: dropped packets");
	CHECK_EQ(dns.passed_packets, 200, "dns: passed packets");
	CHECK_EQ(dns.dropped_packets, 110, "dns: dropped packets");
	CHECK_EQ(dns.new_keys, 2, "dns: new keys");
	/* the source rule counted every packet it passed, and none of the
	 * 10 SYNs and 110 DNS queries its endpoint rules refused first */
	CHECK_EQ(rstats(1).passed_packets, 15 + 15 + 5 + 15 + 15 + 160 + 80 + 150 - 10 - 110,
		 "the source rule counted every packet it passed, none its endpoint rules refused");
	CHECK_EQ(rstats(1).dropped_packets, 0, "the source rule dropped nothing");
	teardown();
}

/* The most specific endpoint rule: the source prefix first, then the
 * narrowest ports, then a SYN rule; protocols by number. */
TEST(endpoint_specificity)
{
	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 1-1024 rate 1/h burst 2 id 1",
		     "rule add 0.0.0.0/0 proto tcp dport 22 rate 1/h burst 5 id 2",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 1/h burst 7 id 3",
		     "rule add 198.18.7.0/24 proto tcp rate 1/h burst 1 id 4",
		     "rule add 0.0.0.0/0 proto 132 rate 1/h burst 4 id 5",
		     "rule add 0.0.0.0/0 proto icmp action deny id 6"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 80, ACK, false, 10), 2,
		 "TCP/80: the source rule's burst of 2");
	CHECK_EQ(ep_send("198.18.0.2", IPPROTO_TCP, 22, ACK, false, 10), 5,
		 "TCP/22 without SYN: the port's rule, burst 5");
	CHECK_EQ(ep_send("198.18.0.3", IPPROTO_TCP, 22, SYN, false, 10), 7,
		 "a SYN to TCP/22: the SYN rule, burst 7");
	CHECK_EQ(ep_send("198.18.0.4", IPPROTO_TCP, 2000, SYN, false, 10), 10, "none");
	CHECK_EQ(ep_send("198.18.7.1", IPPROTO_TCP, 22, SYN, false, 10), 1, "/24 first");
	CHECK_EQ(ep_send("198.18.0.5", 132, 0, 0, false, 10), 4, "protocol 132: its rule, burst 4");
	CHECK_EQ(ep_send("198.18.0.5", IPPROTO_ICMP, 0, 0, false, 3), 0, "ICMP denied");
	CHECK_EQ(ep_send("198.18.0.5", IPPROTO_UDP, 22, 0, false, 3), 3,
		 "UDP/22 is not TCP/22: no endpoint rule");
	teardown();
}

/* A non-first fragment has no ports: it meets only the endpoint rules of
 * its protocol that name no port and no SYN. */
TEST(endpoint_fragments)
{
	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 action deny id 1",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn action deny id 2",
		     "rule add 198.18.3.0/24 proto udp rate 1/h burst 3 id 3",
		     "rule add 2001:db8::/32 proto udp rate 1/h burst 2 id 4"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_UDP, 53, 0, false, 3), 0, "UDP/53 denied");
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_UDP, 53, 0, true, 3), 3, "no port");
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, true, 3), 3,
		 "a non-first fragment has no port: no SYN rule");
	CHECK_EQ(ep_send("198.18.3.1", IPPROTO_UDP, 53, 0, true, 5), 3, "a rule for all ports");
	CHECK_EQ(ep_send("2001:db8::1", IPPROTO_UDP, 53, 0, true, 5), 2,
		 "an IPv6 non-first fragment meets the UDP rule, burst 2");
	teardown();
}

/* A TCP SYN to port dport from src, its 20-byte header split as a tiny
 * first fragment (MF, offset 0) of its first `first` bytes and the rest
 * at offset first / 8; pad bytes of padding after the first, where a
 * parser reading past the IP packet would find the flags `padflags`.
 * *a and *b get the verdicts of the two fragments, the first sent first. */
static void syn_fragments(const char *src, uint16_t dport, int first, int pad, uint8_t padflags,
			  int *a, int *b)
{
	bool v6 = strchr(src, ':') != NULL;
	uint8_t tcp[20] = { 0x9c, 0x40, dport >> 8, dport & 0xff, 0, 0, 0, 1,
			    0, 0, 0, 0, 5 << 4, SYN, 0xff, 0xff };
	struct frame f1 = { .src = src, .l4 = IPPROTO_TCP, .payload = first, .pad = pad };
	struct frame f2 = { .src = src, .l4 = IPPROTO_TCP, .payload = 20 - first };
	uint8_t b1[256], b2[256];
	size_t l1, l2, at = 14 + (v6 ? 48 : 20);

	if (v6) {
		f1.ext[0] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .more = 1 }, f1.n_ext = 1;
		f2.ext[0] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .frag_off = first / 8 }, f2.n_ext = 1;
	} else {
		f1.more_frags = 1;
		f2.frag_off = first / 8;
	}
	l1 = frame_build(b1, sizeof(b1), &f1);
	l2 = frame_build(b2, sizeof(b2), &f2);
	memcpy(b1 + at, tcp, first);
	if (pad >= 14 - first)
		b1[at + 13] = padflags;
	memcpy(b2 + at, tcp + first, 20 - first);
	*a = run_raw(b1, l1);
	*b = run_raw(b2, l2);
}

/* RFC 1858 and RFC 3128: a SYN whose first fragment holds 8 bytes of its
 * TCP header has no flags there and its second fragment no ports, but the
 * stack reassembles a SYN to port 22: both fragments are malformed, in
 * either order, and a rule of the port denies the SYN whole. */
TEST(endpoint_tiny_fragments)
{
	struct xrl_global_stats g0;
	int a, b;

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 22 action deny id 1",
		     "rule add ::/0 proto tcp dport 22 action deny id 2",
		     "rule add 0.0.0.0/0 proto tcp dport 23 syn action deny id 3"),
	      "the rule set commits: %s", xrl_errmsg());
	g0 = gstats();
	syn_fragments("198.18.0.1", 22, 8, 0, 0, &a, &b);
	CHECK_EQ(a, DROP, "the first fragment of a split SYN dropped");
	CHECK_EQ(b, DROP, "its second fragment dropped");
	syn_fragments("2001:db8::1", 22, 8, 0, 0, &a, &b);
	CHECK_EQ(a, DROP, "IPv6: the first fragment of a split SYN dropped");
	CHECK_EQ(b, DROP, "IPv6: its second fragment dropped");
	CHECK_EQ(gstats().malformed_packets - g0.malformed_packets, 4,
		 "four malformed fragments counted");
	CHECK_EQ(rstats(1).dropped_packets + rstats(2).dropped_packets, 0,
		 "no endpoint rule saw them");
	/* the flags of the tiny first fragment in its padding: ACK there,
	 * SYN in the second fragment; not read as "not a SYN" */
	syn_fragments("198.18.0.1", 23, 8, 20, ACK, &a, &b);
	CHECK_EQ(a, DROP, "the flags of the tiny first fragment in its padding");
	CHECK_EQ(b, DROP, "the second fragment (the SYN) dropped");
	/* 16 bytes: the flags are there, but not the whole header; the rest
	 * at offset 2 has no ports and passes a port rule (the datagram
	 * cannot be reassembled without its first fragment) */
	syn_fragments("198.18.0.1", 22, 16, 0, 0, &a, &b);
	CHECK_EQ(a, DROP, "16 bytes: the flags are there");
	CHECK_EQ(b, PASS, "a fragment at offset 2 has no ports: it passes");
	/* a whole SYN meets the port's rule; a fragment of a datagram
	 * further on meets only the rules of its protocol */
	g0 = gstats();
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 3), 0,
		 "a whole SYN meets the port's rule");
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, true, 3), 3,
		 "of 3 SYN fragments to TCP/22 from 198.18.0.1, those passed");
	CHECK_EQ(gstats().malformed_packets - g0.malformed_packets, 0,
		 "SYN fragments are not malformed");
	CHECK_EQ(rstats(1).dropped_packets, 3, "rule 1: dropped packets");
	teardown();
}

/* A TCP packet (no options, ACK) from src of l3len bytes by its IP
 * length: an aggregate when that is over the MTU; its verdict. */
static int tcp_of_len(const char *src, int l3len)
{
	bool v6 = strchr(src, ':') != NULL;
	int hdrs = v6 ? 40 : 20;
	struct frame f = { .src = src, .l4 = IPPROTO_TCP, .payload = l3len - hdrs };
	static uint8_t buf[4096];
	size_t len = frame_build(buf, sizeof(buf), &f);

	buf[14 + hdrs + 12] = 5 << 4;
	buf[14 + hdrs + 13] = ACK;
	return run_raw(buf, len);
}

/* In generic mode an XDP program sees GRO aggregates: a packet rule counts
 * the segments one carries. BPF_PROG_TEST_RUN runs on the loopback device
 * of the caller's namespace: in a namespace of its own with an MTU of 1000,
 * TCP segments hold 960 bytes (IPv4) or 940 (IPv6). */
static void gro_segments_body(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 10 id 1",
		     "rule add 2001:db8::/32 rate 1/h burst 10 id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	for (int i = 0; i < 3; i++)	/* 3 segments each: 9 tokens */
		CHECK_EQ(tcp_of_len("198.18.0.1", 40 + 3 * 960), PASS,
			 "an aggregate of 3 segments within the burst");
	CHECK_EQ(tcp_of_len("198.18.0.1", 40 + 2 * 960 + 1), DROP, "3 > 1");
	/* the refusal of an aggregate is not cached: one segment fits */
	CHECK_EQ(tcp_of_len("198.18.0.1", 1000), PASS,
		 "the refusal of an aggregate is not cached: one segment fits");
	CHECK_EQ(tcp_of_len("198.18.0.1", 100), DROP, "the burst spent");
	/* IPv6 likewise */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(tcp_of_len("2001:db8::1", 60 + 2 * 940 + 1), PASS, "IPv6 likewise");
	CHECK_EQ(tcp_of_len("2001:db8::1", 60 + 940 + 1), DROP, "2 > 1");
	CHECK_EQ(tcp_of_len("2001:db8::1", 200), PASS, "IPv6: one segment fits");
	CHECK_EQ(tcp_of_len("2001:db8::1", 200), DROP, "IPv6: the burst spent");
	/* what the program saw: frames, counted once each */
	CHECK_EQ(rstats(1).passed_packets, 4, "what the program saw: frames, counted once each");
	CHECK_EQ(rstats(1).dropped_packets, 2, "rule 1: dropped packets");
	teardown();
}

TEST(gro_aggregate_segments)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct ifreq ifr = { .ifr_mtu = 1000 };
		int fd;

		strcpy(ifr.ifr_name, "lo");
		if (unshare(CLONE_NEWNET) || (fd = socket(AF_INET, SOCK_DGRAM, 0)) < 0 ||
		    ioctl(fd, SIOCSIFMTU, &ifr)) {
			fprintf(stderr, "    a namespace with lo at MTU 1000: %s\n", strerror(errno));
			_exit(2);
		}
		close(fd);
		tl_cur_failed = 0;
		gro_segments_body();
		fflush(stderr);
		_exit(tl_cur_failed ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the test in its namespace: status %d", status);
}

/* Endpoint rules read back as written, survive further commits (the id
 * spaces alternate), and keep their buckets when unchanged. */
TEST(endpoint_commits)
{
	struct xrl_rule_entry *v;
	size_t n;

	setup();
	for (int round = 0; round < 3; round++) {
		CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 100 id 1",
			     "rule add 198.18.0.0/16 proto tcp dport 22 rate 1/h burst 2 id 2",
			     "rule add 198.18.0.0/16 proto udp dport 100-200 rate 1/h burst 3 id 3"),
		      "the rule set commits: %s", xrl_errmsg());
		CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 5), round ? 0 : 2,
			 "TCP/22: its burst of 2, once for the three commits");
		CHECK_EQ(ep_send("198.18.0.1", IPPROTO_UDP, 150, 0, false, 5), round ? 0 : 3,
			 "UDP/100-200: its burst of 3, once for the three commits");
	}
	CHECK(!xrl_rules_get(X, &v, &n), "xrl_rules_get: %s", xrl_errmsg());
	CHECK_EQ(n, 3, "three rules published");
	if (n == 3) {
		CHECK(!v[0].r.ep && v[1].r.ep && v[1].r.proto == IPPROTO_TCP && v[1].r.dport_lo == 22 &&
		      v[1].r.dport_hi == 22 && v[2].r.dport_lo == 100 && v[2].r.dport_hi == 200,
		      "read back");
	}
	free(v);
	/* removed: the endpoint rules stop at once */
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 100 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 5), 5,
		 "of 5 SYN to TCP/22 from 198.18.0.1, those passed");
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "one rule left");
	free(v);
	teardown();
}

/*
 * The order (docs/rules.md): a packet its endpoint rule's bucket refuses
 * costs its limiting source rule nothing, neither a token of its bucket nor
 * a count, IPv4 and IPv6, UDP and TCP SYNs; the source rule's cached drop
 * never takes such a packet, and the endpoint rule's cached drop touches no
 * bucket. An endpoint rule that cannot refuse from its bucket (dry-run)
 * and a source rule that denies keep the order source rule first.
 */
TEST(endpoint_refusal_costs_source_nothing)
{
	static const char *const src[] = { "198.18.0.1", "2001:db8::1" };
	struct xrl_bucket b0, e0;
	struct xrl_rule_stats s0, e1;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 5 id 1",
		     "rule add 2001:db8::/32 rate 1/h burst 5 id 2",
		     "rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 2 id 3",
		     "rule add ::/0 proto udp dport 53 rate 1/h burst 2 id 4",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 1/h burst 2 id 5",
		     "rule add 198.18.0.0/16 proto udp dport 54 rate 1/h burst 1 dry-run id 6",
		     "rule add 198.18.9.0/24 action deny id 7"),
	      "the rule set commits: %s", xrl_errmsg());
	for (int f = 0; f < 2; f++) {
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 10), 2,
			 "the endpoint rule's burst of 2");
		CHECK_EQ(rstats(3 + f).dropped_packets, 8, "the endpoint rule dropped 8");
		CHECK_EQ(rstats(3 + f).hot_dropped, 7, "7 of them from the cache");
		CHECK_EQ(rstats(1 + f).passed_packets, 2, "the source rule met the 2 it passed");
		CHECK_EQ(rstats(1 + f).dropped_packets, 0, "and dropped none");
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 80, 0, false, 5), 3,
			 "the source rule's bucket kept its other 3 tokens");
		CHECK_EQ(rstats(1 + f).dropped_packets, 2, "the source rule's own refusals");
		/* both refuse: the endpoint rule's, from its bucket */
		s0 = rstats(1 + f);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 4), 0, "both refuse");
		CHECK_EQ(rstats(1 + f).dropped_packets, s0.dropped_packets,
			 "both refuse: not the source rule's");
		CHECK_EQ(rstats(3 + f).dropped_packets, 12, "both refuse: the endpoint rule's");
		/* the source rule's entry, not the endpoint rule's: a commit of
		 * the same rules voids both, the source rule refuses again and
		 * caches; the endpoint rule's bucket still refuses first */
		CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 5 id 1",
			     "rule add 2001:db8::/32 rate 1/h burst 5 id 2",
			     "rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 2 id 3",
			     "rule add ::/0 proto udp dport 53 rate 1/h burst 2 id 4",
			     "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 1/h burst 2 id 5",
			     "rule add 198.18.0.0/16 proto udp dport 54 rate 1/h burst 1 dry-run id 6",
			     "rule add 198.18.9.0/24 action deny id 7"),
		      "the same rules again: %s", xrl_errmsg());
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 80, 0, false, 2), 0, "the source rule's cache");
		s0 = rstats(1 + f);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 1), 0,
			 "the source rule's cached drop does not take it");
		CHECK_EQ(rstats(1 + f).dropped_packets, s0.dropped_packets,
			 "the source rule's cached drop does not take it: not counted there");
		CHECK_EQ(rstats(3 + f).dropped_packets, 13, "the endpoint rule's refusal");
		/* the endpoint rule's cached drop touches no bucket */
		xrl_test_clock_set(X, T0 + 1000000);
		b0 = bucket_of(1 + f, src[f]);
		e0 = bucket_of(3 + f, src[f]);
		e1 = rstats(3 + f);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 20), 0, "cached drops");
		CHECK_EQ(rstats(3 + f).hot_dropped - e1.hot_dropped, 20, "all 20 from the cache");
		CHECK_EQ(bucket_of(3 + f, src[f]).last_ns, e0.last_ns,
			 "the endpoint rule's bucket untouched");
		CHECK_EQ(bucket_of(3 + f, src[f]).tat, e0.tat, "its TAT too");
		CHECK_EQ(bucket_of(3 + f, src[f]).dropped, 33, "its key's drops exact, cached ones too");
		CHECK_EQ(bucket_of(1 + f, src[f]).last_ns, b0.last_ns,
			 "the source rule's bucket untouched");
		CHECK_EQ(rstats(1 + f).passed_packets + rstats(1 + f).dropped_packets,
			 s0.passed_packets + s0.dropped_packets, "the source rule's counts untouched");
		xrl_test_clock_set(X, T0);
	}
	/* a TCP SYN: after the SYN-cookie step, the same order */
	s0 = rstats(1);
	CHECK_EQ(ep_send("198.18.0.2", IPPROTO_TCP, 22, SYN, false, 6), 2, "2 SYNs to TCP/22");
	CHECK_EQ(rstats(1).passed_packets - s0.passed_packets, 2, "SYNs: the source rule's 2");
	CHECK_EQ(rstats(5).dropped_packets, 4, "SYNs: the endpoint rule's 4");
	CHECK_EQ(ep_send("198.18.0.2", IPPROTO_TCP, 80, SYN, false, 5), 3,
		 "SYNs: the source rule's bucket kept its other 3 tokens");
	/* a dry-run endpoint rule refuses nothing: both rules meet each packet */
	s0 = rstats(1);
	CHECK_EQ(ep_send("198.18.0.3", IPPROTO_UDP, 54, 0, false, 4), 4, "dry-run passes");
	CHECK_EQ(rstats(6).would_drop_packets, 3, "dry-run: 3 would-drops");
	CHECK_EQ(rstats(1).passed_packets - s0.passed_packets, 4, "dry-run: the source rule's 4");
	CHECK_EQ(ep_send("198.18.0.3", IPPROTO_UDP, 80, 0, false, 3), 1,
		 "dry-run: the source rule's last token");
	/* a deny source rule decides first: the endpoint rule meets nothing */
	e1 = rstats(3);
	CHECK_EQ(ep_send("198.18.9.1", IPPROTO_UDP, 53, 0, false, 3), 0, "denied");
	CHECK_EQ(rstats(7).dropped_packets, 3, "denied by the source rule");
	CHECK_EQ(rstats(3).dropped_packets + rstats(3).passed_packets,
		 e1.dropped_packets + e1.passed_packets, "denied: the endpoint rule met nothing");
	teardown();
}
