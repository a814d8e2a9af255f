// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the pin-directory lock (an flock on the directory, waited for at
 * most XRL_LOCK_WAIT_MS), and who holds an flock, for the messages.
 */
#include "maps/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The pid holding the flock on fd's file, from /proc/locks; 0 if unknown. */
int xrl__flock_holder(int fd)
{
	char line[256];
	struct stat st;
	int pid = 0;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF"; waiters have "->" */
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long ino;
		char type[16];
		int p;

		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &p, &maj, &min, &ino) != 5)
			continue;
		if (!strcmp(type, "FLOCK") && makedev(maj, min) == st.st_dev && ino == st.st_ino)
			pid = p;
	}
	fclose(f);
	return pid > 0 ? pid : 0;
}

int xrl__lock_dir(struct xrl *x)
{
	long long deadline = mono_ms() + XRL_LOCK_WAIT_MS;
	char comm[32] = "";
	int pid;

	if (x->lock_fd < 0)
		x->lock_fd = open(x->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->lock_fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", x->pin_dir, strerror(errno));
	for (;;) {
		if (flock(x->lock_fd, LOCK_EX | LOCK_NB) == 0) {
			x->locked = true;
			return 0;
		}
		if (errno != EWOULDBLOCK)
			return xrl_fail(errno, "cannot lock %s: %s", x->pin_dir, strerror(errno));
		if (mono_ms() >= deadline)
			break;
		usleep(10000);
	}
	pid = xrl__flock_holder(x->lock_fd);
	if (!pid)
		return xrl_fail(EBUSY, "%s is locked by another xdp-rl process (gave up after %d ms)",
			    x->pin_dir, XRL_LOCK_WAIT_MS);
	{
		char p[64];
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%d/comm", pid);
		if ((f = fopen(p, "re"))) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return xrl_fail(EBUSY, "%s is locked by another xdp-rl process (pid %d%s%s; gave up after %d ms)",
		    x->pin_dir, pid, comm[0] ? ", " : "", comm, XRL_LOCK_WAIT_MS);
}

int xrl_lock(struct xrl *x)
{
	return x->pinned ? xrl__lock_dir(x) : 0;
}

int xrl_trylock(struct xrl *x)
{
	if (!x->pinned)
		return 0;
	if (x->lock_fd < 0)
		x->lock_fd = open(x->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->lock_fd < 0)
		return -errno;
	if (flock(x->lock_fd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	x->locked = true;
	return 0;
}

void xrl_unlock(struct xrl *x)
{
	if (x->lock_fd >= 0)
		flock(x->lock_fd, LOCK_UN);
	x->locked = false;
}
