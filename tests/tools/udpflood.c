// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * udpflood: a small, bounded UDP sender for the end-to-end tests.
 *   udpflood -s SRC -d DST [-p PORT] [-n COUNT] [-r PPS [-P]] [-l BYTES] [-t SECONDS]
 * Sends COUNT datagrams from SRC (bound) to DST, paced at PPS when given,
 * stopping early after SECONDS (default 60), and prints how many it sent.
 * Paced, a sender that fell behind (a busy CPU) catches up at once; with -P
 * (polite) it never does: the packets of the slots it missed are not sent,
 * so that it never sends faster than PPS, whatever the machine's load.
 * A socket sender, for paced floods and goodput; the fast generator is
 * xrl-flood (live frames, xrl_flood.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int addr_of(const char *s, struct sockaddr_storage *ss, int port)
{
	struct sockaddr_in *a4 = (void *)ss;
	struct sockaddr_in6 *a6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		return sizeof(*a4);
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return sizeof(*a6);
	}
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *src = NULL, *dst = NULL;
	long count = 100, pps = 0, len = 64, port = 9;
	double limit = 60;
	struct sockaddr_storage sa, da;
	char buf[1500] = {};
	int opt, fd, slen, dlen;
	long sent = 0, skipped = 0;	/* -P: slots missed, not sent */
	double t0;
	bool polite = false;	/* -P */
	bool start = false;	/* -S: print the start (CLOCK_MONOTONIC ns) too */
	long at_ms = -1;	/* -A MS: start MS ms into a second of CLOCK_MONOTONIC */

	while ((opt = getopt(argc, argv, "s:d:p:n:r:l:t:SA:P")) != -1) {
		switch (opt) {
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'p': port = atol(optarg); break;
		case 'n': count = atol(optarg); break;
		case 'r': pps = atol(optarg); break;
		case 'l': len = atol(optarg); break;
		case 't': limit = atof(optarg); break;
		case 'S': start = true; break;
		case 'P': polite = true; break;
		case 'A': at_ms = atol(optarg); break;
		default: goto usage;
		}
	}
	if (!src || !dst || count < 1 || count > 100000000 || len < 1 || len > 1400 ||
	    limit <= 0 || limit > 600 || at_ms > 999)
		goto usage;
	slen = addr_of(src, &sa, 0);
	dlen = addr_of(dst, &da, port);
	if (slen < 0 || dlen < 0 || sa.ss_family != da.ss_family) {
		fprintf(stderr, "Error: invalid or mixed-family addresses\n");
		return 2;
	}
	fd = socket(sa.ss_family, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (void *)&sa, slen)) {
		fprintf(stderr, "Error: cannot bind %s: %s\n", src, strerror(errno));
		return 1;
	}
	if (at_ms >= 0) {	/* the next time the clock is at_ms into a second */
		double t = now(), next = (long)t + at_ms / 1e3;

		if (next < t)
			next += 1;
		usleep((next - t) * 1e6);
		while (now() < next)
			;
	}
	t0 = now();
	while (sent + skipped < count) {
		if ((sent & 255) == 0 && now() - t0 > limit)
			break;	/* floods are bounded in time too */
		if (pps && sent + skipped > (now() - t0) * pps) {
			usleep(200);
			continue;
		}
		/* polite: more than one slot behind, the missed ones are skipped */
		if (pps && polite && sent + skipped + 1 < (now() - t0) * pps) {
			skipped = (long)((now() - t0) * pps) - sent;
			if (sent + skipped >= count)
				break;
		}
		if (sendto(fd, buf, len, 0, (void *)&da, dlen) < 0) {
			if (errno == ENOBUFS || errno == EAGAIN) {
				usleep(100);
				continue;
			}
			fprintf(stderr, "Error: send: %s\n", strerror(errno));
			return 1;
		}
		sent++;
	}
	if (start)	/* packet i left at start + i / pps */
		printf("%ld %.0f\n", sent, t0 * 1e9);
	else
		printf("%ld\n", sent);
	return 0;
usage:
	fprintf(stderr, "usage: udpflood -s SRC -d DST [-p PORT] [-n COUNT<=1e8] [-r PPS [-P]] [-l BYTES] [-t SECONDS<=600] [-S] [-A MS]\n");
	return 2;
}
