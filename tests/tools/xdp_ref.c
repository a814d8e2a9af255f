// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ref: attach a reference program (the benchmark's floor) to a device.
 *   xdp-ref DEV drop|pass|parse native|generic   attach (stays attached)
 *     drop: XDP_DROP on every frame (the flood's floor); pass: XDP_PASS on
 *     every frame (the goodput floor); parse: the parser alone
 *   xdp-ref DEV admit native|generic RATE BURST
 *     the ideal limiter: RATE frames a second (burst BURST) per CPU pass,
 *     the rest drop, with no parsing and no per-key state
 *   xdp-ref DEV off                           detach whatever is attached
 */
#include <errno.h>
#include <stdlib.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xrl_test_progs.skel.h"

int main(int argc, char **argv)
{
	struct xrl_test_progs *skel;
	unsigned int ifindex;
	__u32 flags;
	int fd, err;

	if (argc < 3 || !(ifindex = if_nametoindex(argv[1]))) {
		fprintf(stderr, "usage: xdp-ref DEV drop|pass|parse native|generic | xdp-ref DEV admit native|generic RATE BURST | xdp-ref DEV off\n");
		return 2;
	}
	libbpf_set_print(NULL);
	if (!strcmp(argv[2], "off")) {
		bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL);
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
		return 0;
	}
	if (argc < 4 || (strcmp(argv[2], "drop") && strcmp(argv[2], "pass") &&
			 strcmp(argv[2], "parse") && strcmp(argv[2], "admit")) ||
	    (!strcmp(argv[2], "admit") && argc < 6) ||
	    (strcmp(argv[3], "native") && strcmp(argv[3], "generic"))) {
		fprintf(stderr, "usage: xdp-ref DEV drop|pass|parse native|generic | xdp-ref DEV admit native|generic RATE BURST | xdp-ref DEV off\n");
		return 2;
	}
	flags = !strcmp(argv[3], "generic") ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	skel = xrl_test_progs__open();
	if (skel && !strcmp(argv[2], "admit")) {
		skel->rodata->admit_rate = strtoull(argv[4], NULL, 10);
		skel->rodata->admit_burst = strtoull(argv[5], NULL, 10);
	}
	if (skel && xrl_test_progs__load(skel)) {
		xrl_test_progs__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		fprintf(stderr, "Error: cannot load the reference programs\n");
		return 1;
	}
	fd = bpf_program__fd(!strcmp(argv[2], "parse") ? skel->progs.xdp_parse_only :
			     !strcmp(argv[2], "admit") ? skel->progs.xdp_admit_rate :
			     !strcmp(argv[2], "pass")  ? skel->progs.xdp_pass_all :
							 skel->progs.xdp_drop_all);
	err = bpf_xdp_attach(ifindex, fd, flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err)
		fprintf(stderr, "Error: cannot attach to %s: %s\n", argv[1], strerror(-err));
	xrl_test_progs__destroy(skel);	/* the attachment keeps the program */
	return err ? 1 : 0;
}
