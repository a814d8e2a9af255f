/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the deciders' transport (http.c): one HTTP/1.1 GET to a local
 * API, bounded in time and size. The whole exchange (connect, request,
 * every byte of the answer) has one deadline; the answer is read into
 * memory up to a cap; its status line, headers and body (by
 * Content-Length, chunked, or up to the close) are parsed strictly. A
 * server that stalls, lies about a length or sends too much gets an error,
 * never a wait past the deadline.
 */
#ifndef XRL_DECIDERS_HTTP_H
#define XRL_DECIDERS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define XRL_HTTP_MAX_HEADERS	(16u << 10)	/* the status line and headers, at most */

struct xrl_http_req {
	const char *host;	/* an IP address */
	int port;
	const char *path;	/* "/v1/decisions/stream?startup=true" */
	const char *header;	/* one more header line without CRLF ("X-Api-Key: ..."), or NULL */
	long timeout_ms;	/* the whole exchange's deadline */
	size_t max_body;	/* a longer body is refused: -EMSGSIZE */
	const bool *stop;	/* set by another thread: the exchange ends, -ECANCELED */
};

struct xrl_http_resp {
	int status;		/* 100 .. 599 */
	char *body;		/* NUL-terminated, malloc()ed: free() it */
	size_t len;
};

/* 0, or a negative errno with xrl_errmsg() saying what went wrong:
 * -ECONNREFUSED (and other connect errors), -ETIMEDOUT, -ECANCELED,
 * -EMSGSIZE (the answer is over its caps), -EPROTO (not HTTP as sent by a
 * server: a bad status line, header, length or chunk), -ENOMEM. */
int xrl_http_get(const struct xrl_http_req *q, struct xrl_http_resp *r);

#endif
