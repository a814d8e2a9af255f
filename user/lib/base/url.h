/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (url.c): the URL of a local HTTP API (CrowdSec's
 * LAPI), checked as the client will take it.
 */
#ifndef XRL_BASE_URL_H
#define XRL_BASE_URL_H

#include <stddef.h>

/*
 * "http://HOST:PORT" or "http://HOST:PORT/": HOST an IPv4 address or a
 * bracketed IPv6 one, never a name (a resolver's wait is out of reach of
 * any deadline), PORT 1 .. 65535. No https (the Local API is on the host
 * or a trusted link; TLS is a terminator's job), no user, no path. 0, or
 * -EINVAL with why filled.
 */
int xrl_http_url_parse(const char *url, char *host, size_t hlen, int *port, char *why, size_t wlen);

#endif
