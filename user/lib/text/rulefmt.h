/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the text layer (rulefmt.c): a rule written back as the grammar
 * reads it.
 */
#ifndef XRL_TEXT_RULEFMT_H
#define XRL_TEXT_RULEFMT_H

#include <stddef.h>
#include "base/json.h"
#include "model/rule.h"

/* A rule's rate and burst as the grammar reads them back ("-": none). */
void xrl_rule_rate_format(const struct xrl_rule *r, char *buf, size_t len);
void xrl_rule_burst_format(const struct xrl_rule *r, char *buf, size_t len);
/* An endpoint rule's "tcp", "udp", "icmp", "icmpv6" or "N", and its
 * "22", "1000-2000" or "-" (every port). */
void xrl_rule_proto_format(const struct xrl_rule *r, char *buf, size_t len);
void xrl_rule_ports_format(const struct xrl_rule *r, char *buf, size_t len);
/* A rule as a line of xdp-rl.conf ("rule add PREFIX rate ... id N ..."),
 * every setting written out: the line parses back into the same rule. The
 * length it needed (>= len: cut). */
size_t xrl_rule_config_format(const struct xrl_rule_entry *e, char *buf, size_t len);
/* A rule's fields (inside an object): id, prefix, action, rate, burst, per,
 * on_failure — what `rule add` takes, so a listing can be fed back. */
void xrl_rule_json(struct jw *w, const struct xrl_rule_entry *e);

#endif
