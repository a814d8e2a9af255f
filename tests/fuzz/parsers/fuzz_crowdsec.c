// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: what a CrowdSec Local API may send (the strict JSON reader, a
 * stream answer, a Go duration, a Local API URL): never a crash, a leak or an
 * out-of-bounds read, and every decision taken is a valid prefix. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/jsonr.h"
#include "base/url.h"
#include "deciders/crowdsec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* not NUL-terminated: the parsers take a length */
	char *s = malloc(size ? size : 1), *z = malloc(size + 1), host[64], why[160];
	struct xrl_cs_answer a;
	struct jr_tok tok[64];
	const char *err;
	long long ms;
	int port;

	if (!s || !z)
		goto out;
	memcpy(s, data, size);
	memcpy(z, data, size);
	z[size] = '\0';
	jr_parse(s, size, tok, 64, &err);
	if (xrl_cs_parse(s, size, &a) == 0) {
		for (size_t i = 0; i < a.n; i++)
			if ((a.v[i].family != 4 && a.v[i].family != 6) ||
			    a.v[i].prefix_len > (a.v[i].family == 4 ? 32 : 128) ||
			    a.v[i].ms > XRL_CS_MAX_DURATION_MS)
				abort();
		xrl_cs_answer_free(&a);
	}
	xrl_go_duration_ms(z, &ms);
	xrl_http_url_parse(z, host, sizeof(host), &port, why, sizeof(why));
out:
	free(s);
	free(z);
	return 0;
}
