// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The flood generator's XDP program, run by BPF_PROG_RUN in live-frames
 * mode: give each frame its source address, fix the checksums, and
 * redirect it out of the device.
 *
 * Frames are recycled by the kernel's page pool and may keep what an
 * earlier run wrote, so every field is written from the constants below,
 * never adjusted from what is in the frame. A receiver that answers in
 * place (XDP_TX: a SYN cookie, a slipped DNS answer) sends the page back
 * rewritten, MACs swapped included: while the program is not attached to
 * the device (live_only), or when the caller says the flood is answered
 * (answered), each frame is first written whole from the base frame
 * (tmpl). The program tells BPF_PROG_RUN's frames from frames the device
 * really receives by their ingress device: the loader gives its own the
 * loopback device.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 ifindex_out;
const volatile __u32 nsrc;		/* sources; 1: the frame is sent as built */
const volatile __u32 perm_a;		/* index -> source: (a * i + b) mod nsrc, */
const volatile __u32 perm_b;		/* a permutation when gcd(a, nsrc) = 1 */
const volatile __u16 saddr_off;		/* offset of the 32 varied bits of the source */
const volatile __u32 saddr_base;	/* those 32 bits in the base frame, host order */
const volatile __u16 ip_csum_off;	/* IPv4 header checksum, 0 for IPv6 */
const volatile __u16 ip_csum_base;	/* checksums in host order */
const volatile __u16 l4_csum_off;	/* checksum covering the source, 0 if none */
const volatile __u16 l4_csum_base;
const volatile __u8 l4_is_udp;		/* a UDP checksum of 0 is sent as 0xffff */
const volatile __u8 own_mac[6];		/* the device's MAC: the source of our frames */
const volatile __u8 tmpl[128];		/* the base frame's first tmpl_len bytes */
const volatile __u32 tmpl_len;
__u32 live_only;			/* set by the loader: not attached to the device */
const volatile __u8 answered;		/* the receiver answers (XDP_TX): what comes
					 * back is counted and dropped, and every
					 * frame is written whole before it goes */
const volatile __u16 answer_port;	/* an answer comes from this UDP/TCP port */

struct state {
	__u64 next;	/* this CPU's next frame index */
	__u64 step;	/* the number of threads */
	__u64 returned;	/* answers DEV received while answered (the flood's port) */
	__u64 other;	/* anything else DEV received then (the stack's ICMP...) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct state);
} flood_state SEC(".maps");

/* RFC 1624: the checksum after a 32-bit word changed from `from` to `to`. */
static __always_inline __u16 csum_replace(__u16 csum, __u32 from, __u32 to)
{
	__u32 s = (__u16)~csum;

	s += (__u16)~(from >> 16) + (__u16)~(from & 0xffff);
	s += (to >> 16) + (to & 0xffff);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return ~s;
}

/* An answer: IPv4 or IPv6 (no VLAN tag, no extension header, as the flood
 * sends them), UDP or TCP with answer_port on either side (an answer from
 * it, or our frame sent back as it came). */
static __always_inline bool from_answer_port(void *data, void *end)
{
	__u16 proto, *l4;
	__u8 *ip = data + 14, *stop = end;

	if (data + 14 > end)
		return false;
	proto = *(__u16 *)(data + 12);
	if (proto == bpf_htons(0x0800)) {
		if (ip + 20 > stop || (ip[9] != 17 && ip[9] != 6))
			return false;
		l4 = (void *)(ip + (ip[0] & 0xf) * 4);
	} else if (proto == bpf_htons(0x86dd)) {
		if (ip + 40 > stop || (ip[6] != 17 && ip[6] != 6))
			return false;
		l4 = (void *)(ip + 40);
	} else {
		return false;
	}
	if ((void *)(l4 + 2) > end)
		return false;
	return l4[0] == bpf_htons(answer_port) || l4[1] == bpf_htons(answer_port);
}

SEC("xdp")
int xrl_flood(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct state *st;
	__u32 zero = 0, idx, saddr;
	bool rewrite = true;
	__u16 c;

	/* BPF_PROG_RUN gives our frames the loopback device as their
	 * ingress (see xrl_flood.c): anything else was received by DEV. */
	if (ctx->ingress_ifindex == ifindex_out) {
		if (!answered)
			return XDP_PASS;
		/* an answer to one of our frames: counted, and its page goes
		 * back to BPF_PROG_RUN's pool instead of up DEV's stack */
		st = bpf_map_lookup_elem(&flood_state, &zero);
		if (st) {
			if (from_answer_port(data, end))
				st->returned++;
			else
				st->other++;
		}
		return XDP_DROP;
	}
	/* The base frame again, whatever the page holds, when the page may
	 * have been answered in place (it then comes back rewritten, MACs
	 * swapped): always while not attached or answered, else when the
	 * source MAC is not ours. */
	if (!live_only && !answered && data + 12 <= end) {
		rewrite = false;
		for (int i = 0; i < 6; i++)
			if (((__u8 *)data)[6 + i] != own_mac[i])
				rewrite = true;
	}
	if (rewrite) {
		if (tmpl_len > sizeof(tmpl) || tmpl_len < 14 || data + tmpl_len > end)
			return XDP_ABORTED;
		if (bpf_xdp_store_bytes(ctx, 0, (void *)tmpl, tmpl_len))
			return XDP_ABORTED;
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
	}
	if (nsrc <= 1)
		return bpf_redirect(ifindex_out, 0);
	st = bpf_map_lookup_elem(&flood_state, &zero);
	if (!st)
		return XDP_ABORTED;
	idx = (__u32)(((__u64)perm_a * (st->next % nsrc) + perm_b) % nsrc);
	st->next += st->step;
	saddr = saddr_base + idx;

	/* The offsets are load-time constants; bound them for the verifier. */
	if (saddr_off > 256 || ip_csum_off > 256 || l4_csum_off > 256)
		return XDP_ABORTED;
	if (data + saddr_off + 4 > end)
		return XDP_ABORTED;
	*(__be32 *)(data + saddr_off) = bpf_htonl(saddr);
	if (ip_csum_off) {
		if (data + ip_csum_off + 2 > end)
			return XDP_ABORTED;
		c = csum_replace(ip_csum_base, saddr_base, saddr);
		*(__be16 *)(data + ip_csum_off) = bpf_htons(c);
	}
	if (l4_csum_off) {
		if (data + l4_csum_off + 2 > end)
			return XDP_ABORTED;
		c = csum_replace(l4_csum_base, saddr_base, saddr);
		if (l4_is_udp && c == 0)
			c = 0xffff;
		*(__be16 *)(data + l4_csum_off) = bpf_htons(c);
	}
	return bpf_redirect(ifindex_out, 0);
}
