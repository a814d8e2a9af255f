// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libxrl, plain helpers: a local API's URL (url.h). */
#include "base/url.h"
#include "base/strict.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int xrl_http_url_parse(const char *url, char *host, size_t hlen, int *port, char *why, size_t wlen)
{
	const char *h, *end, *colon;
	struct in6_addr a;
	char portbuf[8];
	size_t n;
	__u64 p;

	if (!strncmp(url, "https://", 8)) {
		snprintf(why, wlen, "https is not supported: use http:// to a Local API on this host or a trusted link");
		return -EINVAL;
	}
	if (strncmp(url, "http://", 7)) {
		snprintf(why, wlen, "expected http://HOST:PORT");
		return -EINVAL;
	}
	h = url + 7;
	end = h + strlen(h);
	if (end > h && end[-1] == '/')
		end--;
	if (memchr(h, '/', end - h) || memchr(h, '@', end - h) || memchr(h, '?', end - h)) {
		snprintf(why, wlen, "expected http://HOST:PORT, without a user or a path");
		return -EINVAL;
	}
	if (*h == '[') {
		const char *close = memchr(h, ']', end - h);

		if (!close || close + 1 >= end || close[1] != ':') {
			snprintf(why, wlen, "expected http://[IPV6]:PORT");
			return -EINVAL;
		}
		n = close - h - 1;
		colon = close + 1;
		h++;
	} else {
		colon = memchr(h, ':', end - h);
		if (!colon) {
			snprintf(why, wlen, "the port is missing: http://HOST:PORT");
			return -EINVAL;
		}
		n = colon - h;
	}
	if (!n || n >= hlen) {
		snprintf(why, wlen, "expected an IP address as HOST");
		return -EINVAL;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, &a) != 1 && inet_pton(AF_INET6, host, &a) != 1) {
		snprintf(why, wlen, "'%s' is not an IP address (names are not resolved)", host);
		return -EINVAL;
	}
	n = end - colon - 1;
	if (!n || n >= sizeof(portbuf)) {
		snprintf(why, wlen, "expected a port 1 .. 65535");
		return -EINVAL;
	}
	memcpy(portbuf, colon + 1, n);
	portbuf[n] = '\0';
	if (xrl_dec_parse(portbuf, 1, 65535, &p)) {
		snprintf(why, wlen, "expected a port 1 .. 65535");
		return -EINVAL;
	}
	*port = (int)p;
	return 0;
}
