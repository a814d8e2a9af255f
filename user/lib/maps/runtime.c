// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the program's own cost, from the kernel's BPF run-time statistics
 * (run_time_ns and run_cnt in bpf_prog_info). The kernel counts them only
 * while they are enabled: by a process that holds a BPF_STATS_RUN_TIME fd
 * (bpf_enable_stats(), an anonymous "bpf-stats" inode; closing it disables
 * them again), or by the sysctl kernel.bpf_stats_enabled (global, sticky).
 */
#include "maps/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATS_SYSCTL	"/proc/sys/kernel/bpf_stats_enabled"

int xrl_runtime_stats_enable(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0)
		return xrl_fail(errno, "cannot enable the kernel's BPF run-time statistics: %s", strerror(errno));
	return fd;
}

/* A process other than this one that holds a "bpf-stats" fd; 0: none. */
static int stats_holder(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	int found = 0;

	if (!proc)
		return 0;
	while (!found && (p = readdir(proc))) {
		char dir[64], path[300], link[64];
		struct dirent *f;
		DIR *fds;

		if (!isdigit((unsigned char)p->d_name[0]) || atoi(p->d_name) == getpid())
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/fd", p->d_name);
		fds = opendir(dir);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			ssize_t l;

			snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
			l = readlink(path, link, sizeof(link) - 1);
			if (l <= 0)
				continue;
			link[l] = '\0';
			if (!strcmp(link, "anon_inode:bpf-stats")) {
				found = atoi(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

int xrl_prog_runtime_get(struct xrl *x, bool who, struct xrl_prog_runtime *rt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	FILE *f;

	memset(rt, 0, sizeof(*rt));
	if (bpf_obj_get_info_by_fd(x->prog_fd, &info, &len))
		return xrl_fail(errno, "cannot read the program's info: %s", strerror(errno));
	rt->run_time_ns = info.run_time_ns;
	rt->run_cnt = info.run_cnt;
	if (!who)
		return 0;
	f = fopen(STATS_SYSCTL, "r");
	if (f) {
		int v = 0;

		rt->by_sysctl = fscanf(f, "%d", &v) == 1 && v == 1;
		fclose(f);
	}
	rt->holder_pid = stats_holder();
	if (rt->holder_pid) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d/comm", rt->holder_pid);
		f = fopen(p, "r");
		if (f) {
			if (fgets(rt->holder_comm, sizeof(rt->holder_comm), f))
				rt->holder_comm[strcspn(rt->holder_comm, "\n")] = '\0';
			fclose(f);
		}
	}
	rt->enabled = rt->by_sysctl || rt->holder_pid;
	return 0;
}
