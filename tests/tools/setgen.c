// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * setgen: N distinct random prefixes, IPv4 and IPv6 mixed (about one in
 * three IPv6), of random lengths (IPv4 /12 .. /32, IPv6 /24 .. /128), one a
 * line, for the big set tests and the benchmark. None covers or falls in
 * the test ranges the labs send from (198.18.0.0/15, 198.51.100.0/24,
 * 2001:db8::/32), so a test adds those it wants itself.
 *
 *   setgen N [SEED] [v4]     (v4: IPv4 only, for contenders without IPv6)
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static uint64_t next(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct pfx {
	uint8_t family, len, addr[16];
};

static uint64_t hash(const struct pfx *p)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < sizeof(*p); i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ULL;
	return h;
}

/* Does prefix p overlap q/qlen (both of one family, bytes of it)? */
static int overlaps(const uint8_t *a, int len, const uint8_t *q, int qlen)
{
	int bits = len < qlen ? len : qlen;

	for (int i = 0; i < bits; i++) {
		int m = 0x80 >> (i % 8);

		if ((a[i / 8] & m) != (q[i / 8] & m))
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static const uint8_t t1[4] = { 198, 18 }, t2[4] = { 198, 51, 100 }, t3[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 0, cap, got = 0;
	int v4only = argc > 3 && !strcmp(argv[3], "v4");
	struct pfx *tab;
	char *out;
	size_t olen = 0;

	if (!n || n > 10000000) {
		fprintf(stderr, "usage: setgen N [SEED] [v4]  (1 <= N <= 10000000)\n");
		return 2;
	}
	rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	for (cap = 1; cap < 2 * n; cap <<= 1)
		;
	tab = calloc(cap, sizeof(*tab));
	out = malloc(n * 48);
	if (!tab || !out)
		return 1;
	while (got < n) {
		struct pfx p = {};
		uint64_t r = next(), s = next();
		int bytes;

		p.family = (!v4only && r % 3 == 0) ? 6 : 4;
		if (p.family == 4) {
			p.len = 12 + (r >> 8) % 21;
			memcpy(p.addr, &s, 4);
		} else {
			uint64_t u = next();

			p.len = 24 + (r >> 8) % 105;
			memcpy(p.addr, &s, 8);
			memcpy(p.addr + 8, &u, 8);
			p.addr[0] = 0x20 | (p.addr[0] & 0x0f);	/* 2000::/4, global unicast */
		}
		bytes = p.family == 6 ? 16 : 4;
		for (int i = 0; i < bytes; i++) {
			int b = p.len - 8 * i;

			p.addr[i] &= b >= 8 ? 0xff : b <= 0 ? 0 : (uint8_t)(0xff << (8 - b));
		}
		if (p.family == 4 && (overlaps(p.addr, p.len, t1, 15) || overlaps(p.addr, p.len, t2, 24)))
			continue;
		if (p.family == 6 && overlaps(p.addr, p.len, t3, 32))
			continue;
		for (uint64_t h = hash(&p) & (cap - 1);; h = (h + 1) & (cap - 1)) {
			if (!tab[h].family) {
				char a[INET6_ADDRSTRLEN];

				tab[h] = p;
				inet_ntop(p.family == 6 ? AF_INET6 : AF_INET, p.addr, a, sizeof(a));
				olen += sprintf(out + olen, "%s/%u\n", a, p.len);
				got++;
				break;
			}
			if (!memcmp(&tab[h], &p, sizeof(p)))
				break;	/* a duplicate: draw again */
		}
	}
	fwrite(out, 1, olen, stdout);
	free(out);
	free(tab);
	return 0;
}
