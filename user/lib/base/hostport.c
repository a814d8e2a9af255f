// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, plain helpers: HOST:PORT as the metrics server binds it and as the
 * fleet's Redis client connects to it.
 */
#include "base/hostport.h"
#include "base/strict.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

int xrl_hostport_parse(const char *s, char *host, size_t hlen, int *port)
{
	const char *colon;
	__u64 p;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= hlen)
			return -EINVAL;
		memcpy(host, s + 1, rb - s - 1);
		host[rb - s - 1] = '\0';
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= hlen || colon == s)
			return -EINVAL;
		memcpy(host, s, colon - s);
		host[colon - s] = '\0';
	}
	if (xrl_dec_parse(colon + 1, 1, 65535, &p))
		return -EINVAL;
	*port = p;
	return 0;
}

int xrl_redis_hostport(const char *s, char *host, size_t hlen, int *port)
{
	const char *colon = strrchr(s, ':');
	__u64 p;

	if (!colon || colon == s || (size_t)(colon - s) >= hlen ||
	    xrl_dec_parse(colon + 1, 1, 65535, &p))
		return -EINVAL;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	if (!xrl_redis_host_numeric(host))
		return -EINVAL;
	*port = p;
	return 0;
}

/* hiredis resolves a name with a blocking getaddrinfo() inside its
 * non-blocking connect, out of reach of any deadline: only addresses */
bool xrl_redis_host_numeric(const char *host)
{
	struct in6_addr a;

	return inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1;
}

int xrl_redis_addrs_check(const char *addrs)
{
	char list[256], host[64], *save = NULL, *tok;
	int port, n = 0;

	/* as the client splits it: strtok_r, empty elements skipped */
	if (strlen(addrs) >= sizeof(list))
		return -EINVAL;
	strcpy(list, addrs);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++)
		if (xrl_redis_hostport(tok, host, sizeof(host), &port))
			return -EINVAL;
	return n ? 0 : -EINVAL;
}

/*
 * What the daemon binds, and what the grammar and --check accept: one
 * function, so that a file that passes --check never fails at the bind for
 * its address's form. ADDR is an IP address; names are not resolved (a
 * daemon that starts before the resolver, or whose name resolves to another
 * address at each restart, would serve somewhere else than the file says).
 */
int xrl_hostport_sockaddr(const char *s, struct sockaddr_storage *ss, socklen_t *len,
			  char *why, size_t wlen)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	int port;

	memset(ss, 0, sizeof(*ss));
	if (xrl_hostport_parse(s, host, sizeof(host), &port)) {
		snprintf(why, wlen, "ADDR:PORT or off");
		return -EINVAL;
	}
	if (s[0] != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof(*in4);
		return 0;
	}
	if (s[0] == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	if (s[0] != '[' && strchr(host, ':'))
		snprintf(why, wlen, "an IPv6 address is written in brackets: [%s]:%d", host, port);
	else if (!strcmp(host, "localhost"))
		snprintf(why, wlen, "ADDR is an IP address, names are not resolved: did you mean 127.0.0.1:%d?",
			 port);
	else
		snprintf(why, wlen, "ADDR is an IP address (192.0.2.1:%d, [2001:db8::1]:%d), names are not resolved",
			 port, port);
	return -EINVAL;
}
