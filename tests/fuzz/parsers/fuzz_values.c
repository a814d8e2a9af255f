// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: the value parsers (prefixes, addresses, rates, numbers,
 * ADDR:PORT of the metrics server) and their round trips: what parses and
 * is formatted back parses again to the same value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/config.h"
#include "text/grammar.h"
#include "libxrl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), buf[128], host[64], why[160];
	struct xrl_rule_entry e, e2;
	struct sockaddr_storage ss;
	socklen_t sl;
	__u64 count, period, count2, period2, v;
	__u8 addr[16], addr2[16];
	int family, family2, port;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	memset(&e, 0, sizeof(e));
	if (!xrl_prefix_parse(s, &e)) {
		xrl_prefix_format(&e, buf, sizeof(buf));
		memset(&e2, 0, sizeof(e2));
		if (xrl_prefix_parse(buf, &e2) || e2.family != e.family ||
		    e2.prefix_len != e.prefix_len || memcmp(e2.addr, e.addr, 16))
			abort();	/* the round trip lost something */
	}
	if (!xrl_addr_parse(s, &family, addr)) {
		xrl_addr_format(family, addr, buf, sizeof(buf));
		if (xrl_addr_parse(buf, &family2, addr2) || family2 != family ||
		    memcmp(addr, addr2, family == 4 ? 4 : 16))
			abort();
	}
	if (!xrl_rate_parse(s, &count, &period)) {
		xrl_rate_format(count, period, buf, sizeof(buf));
		if (xrl_rate_parse(buf, &count2, &period2) || count2 != count || period2 != period)
			abort();
	}
	xrl_dec_parse(s, 0, UINT64_MAX, &v);
	xrl_dec_parse(s, 10, 3600000, &v);
	xrl_hostport_parse(s, host, sizeof(host), &port);
	xrl_hostport_sockaddr(s, &ss, &sl, why, sizeof(why));
	free(s);
	return 0;
}
