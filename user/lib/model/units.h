/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (units.c): rates, byte rates and sizes.
 */
#ifndef XRL_MODEL_UNITS_H
#define XRL_MODEL_UNITS_H

#include <stddef.h>
#include <linux/types.h>

/* "100/s", "5/min", "1/h" */
int xrl_rate_parse(const char *s, __u64 *count, __u64 *period_ns);
void xrl_rate_format(__u64 count, __u64 period_ns, char *buf, size_t len);
/* tc(8)'s rates: "10mbit" (bits/s), "2mbps" (bytes/s): *unit XRL_UNIT_BITS
 * or XRL_UNIT_BYTES, *count in that unit per second. */
int xrl_byte_rate_parse(const char *s, __u64 *count, __u8 *unit);
/* The largest unit that divides count: "10mbit", "2mbps". */
void xrl_byte_rate_format(__u64 count, __u8 unit, char *buf, size_t len);
/* tc(8)'s sizes: "64kb" = 65536 bytes (b, k/kb, m/mb, g/gb) */
int xrl_size_parse(const char *s, __u64 *bytes);
void xrl_size_format(__u64 bytes, char *buf, size_t len);

#endif
