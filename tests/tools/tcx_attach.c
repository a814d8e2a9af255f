// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tcx-attach OBJ IFACE PIN [before|after]: load the first program of the
 * BPF object OBJ (a "tc" program) and attach it to IFACE's tcx ingress
 * chain, first (before, the default: BPF_F_BEFORE with no anchor) or last
 * (after); its link pinned at PIN. Removing PIN detaches it. A foreign
 * neighbour for the tests of hook tc (Debian 12's bpftool has no tcx).
 * tcx-attach count IFACE: how many programs IFACE's tcx ingress chain runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef BPF_F_BEFORE
#define BPF_F_BEFORE	(1U << 3)
#define BPF_F_AFTER	(1U << 4)
#endif
#define TCX_INGRESS	46	/* enum bpf_attach_type: BPF_TCX_INGRESS */

int main(int argc, char **argv)
{
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	unsigned int ifindex;
	int fd = -1, err = 1;
	__u32 flags;

	if (argc == 3 && !strcmp(argv[1], "count")) {
		__u32 ids[64], cnt = 64;

		ifindex = if_nametoindex(argv[2]);
		if (!ifindex || bpf_prog_query(ifindex, TCX_INGRESS, 0, NULL, ids, &cnt)) {
			fprintf(stderr, "Error: cannot query %s's tcx chain: %s\n", argv[2], strerror(errno));
			return 1;
		}
		printf("%u\n", cnt);
		return 0;
	}
	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "before") && strcmp(argv[4], "after"))) {
		fprintf(stderr, "usage: tcx-attach OBJ IFACE PIN [before|after] | tcx-attach count IFACE\n");
		return 2;
	}
	flags = argc == 5 && !strcmp(argv[4], "after") ? BPF_F_AFTER : BPF_F_BEFORE;
	ifindex = if_nametoindex(argv[2]);
	if (!ifindex) {
		fprintf(stderr, "Error: unknown interface %s\n", argv[2]);
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "Error: cannot load %s\n", argv[1]);
		goto cleanup;
	}
	prog = bpf_object__next_program(obj, NULL);
	if (!prog) {
		fprintf(stderr, "Error: no program in %s\n", argv[1]);
		goto cleanup;
	}
	{
		LIBBPF_OPTS(bpf_link_create_opts, o, .flags = flags);

		fd = bpf_link_create(bpf_program__fd(prog), ifindex, TCX_INGRESS, &o);
	}
	if (fd < 0) {
		fprintf(stderr, "Error: cannot attach to %s at tcx ingress: %s\n", argv[2], strerror(errno));
		goto cleanup;
	}
	if (bpf_obj_pin(fd, argv[3])) {
		fprintf(stderr, "Error: cannot pin the link at %s: %s\n", argv[3], strerror(errno));
		goto cleanup;
	}
	err = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	bpf_object__close(obj);
	return err;
}
