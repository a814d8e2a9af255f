/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (hostport.c): HOST:PORT, split and checked.
 */
#ifndef XRL_BASE_HOSTPORT_H
#define XRL_BASE_HOSTPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* "127.0.0.1:9437", "[::1]:9437" */
int xrl_hostport_parse(const char *s, char *host, size_t hlen, int *port);
/* A Redis seed "HOST:PORT" as the fleet's client splits it (the last ':',
 * an IPv4 or IPv6 address of under hlen bytes, never a name, port
 * 1 .. 65535): 0 or -EINVAL. MOVED and ASK addresses are taken by it too. */
int xrl_redis_hostport(const char *s, char *host, size_t hlen, int *port);
/* HOST an IPv4 or IPv6 address (inet_pton), not a name */
bool xrl_redis_host_numeric(const char *host);
/* A 'fleet redis' list, "HOST:PORT[,HOST:PORT...]", checked as the client
 * will take it, without connecting: 0 or -EINVAL. */
int xrl_redis_addrs_check(const char *addrs);
/* ADDR:PORT as the daemon binds it: ADDR an IPv4 address or a bracketed
 * IPv6 one, never a name. 0, or -EINVAL with why (a hint) filled. The
 * grammar, --check, --metrics and the bind all use this one. */
int xrl_hostport_sockaddr(const char *s, struct sockaddr_storage *ss, socklen_t *len,
			  char *why, size_t wlen);

#endif
