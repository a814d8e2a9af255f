// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * udpsink: count the UDP datagrams that reach a port, per source address.
 *   udpsink -p PORT [-6] -T SECONDS
 * Prints one JSON object {"SOURCE": count, ...} when the time is up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SRC 64

int main(int argc, char **argv)
{
	struct { char addr[INET6_ADDRSTRLEN]; long n; } src[MAX_SRC];
	int opt, port = 0, v6 = 0, fd, nsrc = 0;
	double seconds = 0;
	struct timespec t0, t;

	while ((opt = getopt(argc, argv, "p:6T:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case '6': v6 = 1; break;
		case 'T': seconds = atof(optarg); break;
		default: goto usage;
		}
	}
	if (port <= 0 || port > 65535 || seconds <= 0 || seconds > 600)
		goto usage;
	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
	if (v6) {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

		if (bind(fd, (void *)&a, sizeof(a)))
			goto err;
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

		if (bind(fd, (void *)&a, sizeof(a)))
			goto err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		char buf[2048], a[INET6_ADDRSTRLEN];
		int i;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
		if (poll(&p, 1, 50) <= 0)
			continue;
		if (recvfrom(fd, buf, sizeof(buf), 0, (void *)&ss, &sl) < 0)
			continue;
		if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
		else
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		for (i = 0; i < nsrc && strcmp(src[i].addr, a); i++)
			;
		if (i == nsrc) {
			if (nsrc == MAX_SRC)
				continue;
			snprintf(src[nsrc].addr, sizeof(src[nsrc].addr), "%s", a);
			src[nsrc++].n = 0;
		}
		src[i].n++;
	}
	printf("{");
	for (int i = 0; i < nsrc; i++)
		printf("%s\"%s\": %ld", i ? ", " : "", src[i].addr, src[i].n);
	printf("}\n");
	return 0;
err:
	fprintf(stderr, "Error: cannot bind port %d: %s\n", port, strerror(errno));
	return 1;
usage:
	fprintf(stderr, "usage: udpsink -p PORT [-6] -T SECONDS<=600\n");
	return 2;
}
