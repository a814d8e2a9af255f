// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The flood generator's XDP program, run by BPF_PROG_RUN in live-frames
 * mode: give each frame its source address, fix the checksums, and
 * redirect it out of the device.
 *
 * Frames are recycled by the kernel's page pool and may keep what an
 * earlier run wrote, so every field is written from the constants below,
 * never adjusted from what is in the frame. A receiver that answers in
 * place (XDP_TX: a SYN cookie) sends the page back rewritten, MACs swapped
 * included: while the program is not attached to the device (live_only),
 * every frame it sees is one of BPF_PROG_RUN's, and each is first written
 * whole from the base frame (tmpl).
 */
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

struct state {
	__u64 next;	/* this CPU's next frame index */
	__u64 step;	/* the number of threads */
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

SEC("xdp")
int xrl_flood(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct state *st;
	__u32 zero = 0, idx, saddr;
	__u16 c;

	if (live_only) {
		/* every frame is ours: the base frame again, whatever the
		 * page holds */
		if (tmpl_len > sizeof(tmpl) || tmpl_len < 14 || data + tmpl_len > end)
			return XDP_ABORTED;
		if (bpf_xdp_store_bytes(ctx, 0, (void *)tmpl, tmpl_len))
			return XDP_ABORTED;
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
	}
	/* The program is also attached to the device it floods out of (see
	 * xrl_flood.c): frames the device really receives are not ours, and
	 * pass untouched. */
	if (data + 6 + 6 > end)
		return XDP_PASS;
	for (int i = 0; i < 6; i++)
		if (((__u8 *)data)[6 + i] != own_mac[i])
			return XDP_PASS;
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
