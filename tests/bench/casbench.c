// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * casbench: what a compare-and-swap on one shared cache line costs when
 * several CPUs update it at once, against the same update on a line of each
 * CPU's own. This is the shape of the data path's shared state: a key's
 * GCRA bucket (one 64-bit TAT, updated with one compare-and-swap by every
 * CPU that meets the key) and an aggregate's TAT.
 *
 *   casbench [-n UPDATES] [-r ROUNDS] [-t THREADS] [-j]
 *
 * Each case runs THREADS threads (default: every online CPU, at most 64),
 * thread i pinned to CPU i, each making UPDATES successful updates
 * "tat = max(tat, now) + interval" in a load / compute / compare-and-swap
 * loop (retried when another CPU changed the word between the load and the
 * swap), with a spin on a start flag so that all begin together:
 *   alone       one thread, one line (the uncontended cost);
 *   own lines   every thread its own line (no sharing: should equal alone);
 *   one line    every thread the same line (the contended cost);
 *   one line, xadd  the same line with a lock xadd (an update that cannot
 *               fail: the line's transfer alone, no retry).
 * Reported per case: ns per successful update per thread (CPU time of the
 * slowest thread / UPDATES: a thread preempted is not charged), the host's updates per second (all threads),
 * and the retries per update; median of ROUNDS interleaved rounds.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE		64
#define MAX_THREADS	64

struct line {
	_Alignas(LINE) _Atomic uint64_t word;
	char pad[LINE - sizeof(uint64_t)];
};

enum kind { K_ALONE, K_OWN, K_SHARED, K_XADD, K_N };
static const char *const names[K_N] = {
	[K_ALONE] = "alone (one CPU, one line)",
	[K_OWN] = "every CPU its own line",
	[K_SHARED] = "every CPU one shared line (compare-and-swap)",
	[K_XADD] = "every CPU one shared line (lock xadd, cannot fail)",
};

static struct line lines[MAX_THREADS];
static _Atomic int go;

struct worker {
	pthread_t th;
	int cpu;
	enum kind kind;
	uint64_t n, retries;
	double seconds;
};

/* the thread's own CPU time: a thread preempted by another job on a busy
 * host is not charged the time it did not run */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	_Atomic uint64_t *word = w->kind == K_OWN ? &lines[w->cpu].word : &lines[0].word;
	uint64_t retries = 0, now = 1000;
	cpu_set_t set;
	double t0;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load_explicit(&go, memory_order_acquire))
		;
	t0 = now_s();
	for (uint64_t i = 0; i < w->n; i++) {
		now += 3;	/* a clock that moves, as the data path's does */
		if (w->kind == K_XADD) {
			atomic_fetch_add_explicit(word, 7, memory_order_relaxed);
			continue;
		}
		uint64_t old = atomic_load_explicit(word, memory_order_relaxed), tat;

		for (;;) {
			tat = (old > now ? old : now) + 7;
			if (atomic_compare_exchange_weak_explicit(word, &old, tat, memory_order_relaxed,
								  memory_order_relaxed))
				break;
			retries++;
		}
	}
	w->seconds = now_s() - t0;
	w->retries = retries;
	return NULL;
}

/* one case: ns per update per thread (slowest thread), retries per update */
static int run_case(enum kind k, int threads, uint64_t n, double *ns, double *retry)
{
	struct worker w[MAX_THREADS] = {};
	double worst = 0;
	uint64_t r = 0;

	if (k == K_ALONE)
		threads = 1;
	memset(lines, 0, sizeof(lines));
	atomic_store(&go, 0);
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ .cpu = i, .kind = k, .n = n };
		if (pthread_create(&w[i].th, NULL, run, &w[i]))
			return -1;
	}
	usleep(20000);	/* every thread spinning on its CPU */
	atomic_store_explicit(&go, 1, memory_order_release);
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].seconds > worst)
			worst = w[i].seconds;
		r += w[i].retries;
	}
	*ns = worst * 1e9 / n;
	*retry = (double)r / ((double)n * threads);
	return threads;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int opt, rounds = 5, threads = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t n = 20000000;
	bool json = false;
	double ns[K_N][32], re[K_N][32];
	int used[K_N];

	while ((opt = getopt(argc, argv, "n:r:t:jh")) != -1) {
		switch (opt) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'j': json = true; break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: casbench [-n UPDATES] [-r ROUNDS] [-t THREADS] [-j]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 1000 || rounds < 1 || rounds > 32 || threads < 1 || threads > MAX_THREADS ||
	    threads > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr, "Error: UPDATES >= 1000, ROUNDS 1..32, THREADS 1..online CPUs (at most %d)\n",
			MAX_THREADS);
		return 2;
	}
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < K_N; k++) {
			used[k] = run_case(k, threads, n, &ns[k][r], &re[k][r]);
			if (used[k] < 0) {
				fprintf(stderr, "Error: cannot start the threads\n");
				return 1;
			}
		}
	double med[K_N], mre[K_N], lo[K_N], hi[K_N];

	for (int k = 0; k < K_N; k++) {
		qsort(ns[k], rounds, sizeof(double), cmp);
		qsort(re[k], rounds, sizeof(double), cmp);
		med[k] = ns[k][(rounds - 1) / 2];
		lo[k] = ns[k][0];
		hi[k] = ns[k][rounds - 1];
		mre[k] = re[k][(rounds - 1) / 2];
	}
	/* (almost) no retry on the shared line: the threads hardly ran at the
	 * same time (a busy host, or too few updates), and the case measured
	 * little sharing; said on stderr and under the table */
	bool apart = used[K_SHARED] > 1 && mre[K_SHARED] < 0.05;

	if (apart)
		fprintf(stderr, "Warning: %.3f retries per update on the shared line: the threads hardly overlapped\n",
			mre[K_SHARED]);
	if (json) {
		printf("[");
		for (int k = 0; k < K_N; k++)
			printf("%s{\"case\": \"%s\", \"threads\": %d, \"ns_per_update\": %.2f, \"min\": %.2f, "
			       "\"max\": %.2f, \"updates_per_second\": %.0f, \"retries_per_update\": %.3f, "
			       "\"x_alone\": %.2f}", k ? ", " : "", names[k], used[k], med[k], lo[k], hi[k],
			       used[k] * 1e9 / med[k], mre[k], med[k] / med[K_ALONE]);
		printf("]\n");
		return 0;
	}
	printf("| %d CPUs, %llu updates each | ns per update (median, min–max) | updates/s, all CPUs | retries per update | × alone |\n",
	       threads, (unsigned long long)n);
	printf("|---|---:|---:|---:|---:|\n");
	for (int k = 0; k < K_N; k++)
		printf("| %s | %.1f (%.1f–%.1f) | %.1f M | %.3f | %.2f |\n", names[k], med[k], lo[k], hi[k],
		       used[k] * 1e3 / med[k], mre[k], med[k] / med[K_ALONE]);
	if (apart)
		printf("\n(%.3f retries per update on the shared line: the threads hardly ran at the same time — a busy host — so this run did not measure a contended line.)\n",
		       mre[K_SHARED]);
	return 0;
}
