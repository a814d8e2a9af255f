/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (addr.c): addresses and prefixes.
 */
#ifndef XRL_MODEL_ADDR_H
#define XRL_MODEL_ADDR_H

#include <stddef.h>
#include "model/rule.h"

/* "198.18.0.0/15", "2001:db8::/32", or a bare address (a host prefix).
 * IPv4-mapped IPv6 addresses (::ffff:0:0/96) are refused: no packet the
 * program sees has one (IPv4 arrives as IPv4), so they would never match;
 * the message suggests the IPv4 form. */
int xrl_prefix_parse(const char *s, struct xrl_rule_entry *e);
int xrl_addr_parse(const char *s, int *family, __u8 *addr);
void xrl_prefix_format(const struct xrl_rule_entry *e, char *buf, size_t len);
void xrl_addr_format(int family, const __u8 *addr, char *buf, size_t len);
/* The first `bits` bits of `bytes` bytes set: a prefix's mask. */
void xrl__mask_bits(__u8 *out, int bits, int bytes);

#endif
