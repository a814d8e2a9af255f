// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Reference programs for the tests and the micro-benchmark. */
#include "parsing.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The floor: the cheapest program there is. */
SEC("xdp")
int xdp_drop_all(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* The goodput floor: a program that lets everything through untouched. */
SEC("xdp")
int xdp_pass_all(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* The parser alone, with the same verdicts for non-IP and malformed. */
SEC("xdp")
int xdp_parse_only(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};

	return parse_packet(ctx, &pkt) == XRL_PARSE_MALFORMED ? XDP_DROP : XDP_PASS;
}
