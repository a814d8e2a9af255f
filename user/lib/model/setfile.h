/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (setfile.c): a set's name, its elements, and the
 * text of a set file (docs/sets.md): one prefix a line, FireHOL .netset,
 * `ipset save` output, address ranges A-B (the fewest prefixes covering
 * them exactly). Parsed from a buffer: no file descriptor here (the text
 * layer reads the file, text/setload.c).
 */
#ifndef XRL_MODEL_SETFILE_H
#define XRL_MODEL_SETFILE_H

#include <stdbool.h>
#include <stddef.h>
#include "xdp_rl_common.h"

/* One element: a prefix and its own timeout (0: the set's default). */
struct xrl_set_item {
	__u8 family;		/* 4 or 6 */
	__u8 prefix_len;
	__u8 addr[16];		/* network order */
	__u64 timeout_ns;
};

struct xrl_set_list {
	struct xrl_set_item *v;
	size_t n, cap;
};

void xrl_set_list_free(struct xrl_set_list *l);
int xrl_set_list_push(struct xrl_set_list *l, const struct xrl_set_item *it);

/* A set's name: 1 .. XRL_SET_NAME_MAX of [A-Za-z0-9_.-], a letter first.
 * 0, or -EINVAL with xrl_errmsg() set. */
int xrl_set_name_check(const char *name);
/* A set's or an element's timeout: a duration (xrl_duration_parse(): N
 * seconds, Ns, Nm, Nh, Nd) of 1 s .. 365 d, in ns. */
int xrl_set_timeout_parse(const char *s, __u64 *ns);

/* The fewest prefixes covering lo..hi exactly (both of one family, lo <=
 * hi), appended to *l. -EINVAL when lo > hi. */
int xrl_range_to_prefixes(int family, const __u8 *lo, const __u8 *hi, struct xrl_set_list *l);

/* One element as the CLI writes it: a prefix, a bare address or a range
 * A-B (appended: a range may be several prefixes). */
int xrl_set_elem_parse(const char *s, struct xrl_set_list *l);

/* The whole text of a set file, appending to *l. On the first bad line:
 * -EINVAL with xrl_errmsg() "FILE:LINE: ..." (file names it); *l then holds
 * what came before (the caller applies nothing). More than max elements
 * in all: -E2BIG, said the same way. */
int xrl_set_parse(const char *buf, size_t len, const char *file, size_t max, struct xrl_set_list *l);

#endif
