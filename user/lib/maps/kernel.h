/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: what the program needs of the kernel (kernel.c).
 * When the object fails to load, the kernel is probed for the helpers and
 * map types the program uses, and a missing one is named with the Linux
 * release that brought it, instead of the verifier's log.
 */
#ifndef XRL_MAPS_KERNEL_H
#define XRL_MAPS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

/* The oldest kernel that has everything the program uses
 * (the SYN cookie helpers). */
#define XRL_KERNEL_MIN	"6.0"

/* a helper of the XDP program, one of the tc program only, a map type, a
 * helper of the socket filter that writes the bans' events (xrl_emit) */
enum xrl_kernel_need_kind { XRL_NEED_HELPER, XRL_NEED_MAP_TYPE, XRL_NEED_TC_HELPER,
			     XRL_NEED_SK_HELPER /* the bans' events' socket filter */ };

/* One helper or map type the program uses, newest first. */
struct xrl_kernel_need {
	const char *name;	/* "bpf_loop", "BPF_MAP_TYPE_RINGBUF" */
	const char *since;	/* the Linux release that brought it: "5.17" */
	enum xrl_kernel_need_kind kind;
	int id;			/* enum bpf_func_id or enum bpf_map_type */
};

extern const struct xrl_kernel_need xrl_kernel_needs[];
extern const size_t xrl_kernel_nneeds;

/* The message for the needs a probe found missing (missing[i] for
 * xrl_kernel_needs[i]), on the kernel of this release (NULL: not said):
 * "this kernel (Linux R) lacks bpf_loop (Linux 5.17+); xdp-rl needs Linux
 * 5.19 or later". The number of needs missing; 0 writes nothing. */
int xrl_kernel_lacks_format(const bool *missing, const char *release, char *buf, size_t len);

/* Probe this kernel for every need (BPF_PROG_TYPE_XDP for the helpers): the
 * number missing, with their message in buf. A probe that cannot tell (no
 * privilege, an error) counts as present. */
int xrl_kernel_probe(char *buf, size_t len);

#endif
