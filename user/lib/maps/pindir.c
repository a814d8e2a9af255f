// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the pin directory. The names xdp-rl pins under it, the bpffs it
 * must be on (mounted when the default one is missing; refused where it
 * would vanish with the command), and its safety from other users.
 */
#define _GNU_SOURCE	/* program_invocation_short_name */
#include "maps/internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

const char *const xrl__map_names[M__COUNT] = {
	"xrl_control", "xrl_rules4", "xrl_rules6", "xrl_buckets4",
	"xrl_buckets6", "xrl_rule_stats", "xrl_global_stats", "xrl_if_stats",
	"xrl_events_rld", "xrl_events_ctl", "xrl_event_stats",
	"xrl_ep4", "xrl_ep6", "xrl_ep_class",
	"xrl_fleet_rules", "xrl_fleet_keys4", "xrl_fleet_keys6", "xrl_leases",
	"xrl_rule_shared", "xrl_hot", "xrl_fleet_scratch",
	"xrl_bans4", "xrl_bans6", "xrl_ban_stats", "xrl_ban_totals", "xrl_offenders",
	"xrl_ban_scratch",
	"xrl_sc_verified", "xrl_sc_stats",
	"xrl_sets", "xrl_set_rules", "xrl_set_meta",
	"xrl_answer_cap",
	"xrl_ban_hot",
};

/* The caller may not read the pins or use bpf() (EACCES, EPERM): say so
 * and what to do, rather than "not loaded" or another version's pins. */
int xrl__perm_denied(int err, const char *what, const char *path)
{
	return xrl_fail(err, "permission denied: %s %s (uid %u): xdp-rl's pins and bpf() are root's "
		    "(CAP_BPF, CAP_NET_ADMIN and read access to the pins): run it as root, e.g. with sudo",
		    what, path, (unsigned)geteuid());
}

bool xrl__is_perm(int err)
{
	return err == EACCES || err == EPERM;
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

/* The parent of pid, from /proc/PID/stat; 0 when unknown. */
static pid_t parent_of(pid_t pid)
{
	char p[64], buf[512], *s;
	int ppid = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(p, "re")))
		return 0;
	/* "PID (COMM) STATE PPID ...": COMM may hold spaces and ')' */
	if (fgets(buf, sizeof(buf), f) && (s = strrchr(buf, ')')))
		sscanf(s + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid > 0 ? ppid : 0;
}

/* Does this process's mount namespace end with it? It does when no process
 * but this one and its ancestors is in it: `ip netns exec` makes one for the
 * command alone (or a shell it starts). A bpffs mounted there vanishes with
 * the command, and the links pinned in it, so the attachment does not last.
 * The namespace of PID 1 lasts (a host's, a container's, even when this is
 * the container's PID 1: `docker exec` joins it); processes whose namespace
 * cannot be read count as elsewhere. */
static bool mount_ns_ends_with_us(void)
{
	pid_t self = getpid(), anc[128];
	struct stat me, st;
	struct dirent *de;
	bool shared = false;
	int na = 0;
	DIR *d;

	if (self == 1 || stat("/proc/self/ns/mnt", &me))
		return false;
	for (pid_t p = self; p > 1 && na < (int)(sizeof(anc) / sizeof(anc[0]));) {
		p = parent_of(p);
		if (p > 1)	/* PID 1 is no ancestor that ends */
			anc[na++] = p;
	}
	if (!(d = opendir("/proc")))
		return false;
	while (!shared && (de = readdir(d))) {
		char p[64], *end;
		long pid = strtol(de->d_name, &end, 10);
		bool mine = pid == self;

		if (*end || pid <= 0)
			continue;
		for (int i = 0; i < na && !mine; i++)
			mine = pid == anc[i];
		if (mine)
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/ns/mnt", pid);
		shared = stat(p, &st) == 0 && st.st_dev == me.st_dev && st.st_ino == me.st_ino;
	}
	closedir(d);
	return !shared;
}

/* The name of this process's network namespace under /run/netns, if any. */
static bool netns_name(char *buf, size_t len)
{
	struct stat me, st;
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (stat("/proc/self/ns/net", &me) || !(d = opendir("/run/netns")))
		return false;
	while (!found && (de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/run/netns/%s", de->d_name);
		if (stat(p, &st) == 0 && st.st_dev == me.st_dev && st.st_ino == me.st_ino) {
			snprintf(buf, len, "%s", de->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* No bpffs at /sys/fs/bpf, and the mount namespace ends with this command:
 * whatever is pinned there would vanish with it. Refuse, saying what to do. */
static int refuse_private_sysfs(const char *parent)
{
	char ns[NAME_MAX + 1];

	if (!mount_ns_ends_with_us())
		return 0;
	if (netns_name(ns, sizeof(ns)))
		return xrl_fail(EPERM, "no bpffs at %s in this mount namespace, which ends with this command "
			    "('ip netns exec' gives it a /sys of its own): what it pins would vanish with it. "
			    "Run 'nsenter --net=/run/netns/%s %s ...' instead of 'ip netns exec %s', "
			    "or --pin-dir on a bpffs mounted outside",
			    parent, ns, program_invocation_short_name, ns);
	return xrl_fail(EPERM, "no bpffs at %s in this mount namespace, which ends with this command "
		    "(as under 'ip netns exec'): what it pins would vanish with it. "
		    "Run it in a namespace that lasts, or --pin-dir on a bpffs mounted outside",
		    parent);
}

int xrl__ensure_bpffs(const char *pin_dir, bool create)
{
	char parent[PATH_MAX], *slash;
	int err;

	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return xrl_fail(EINVAL, "pin directory '%s' must be inside a bpffs mount", pin_dir);
	*slash = '\0';
	if (is_bpffs(parent))
		return 0;
	if (errno == EACCES)	/* statfs() of a directory the caller cannot reach */
		return xrl__perm_denied(EACCES, "cannot look into", parent);
	if (!strcmp(parent, "/sys/fs/bpf") && (err = refuse_private_sysfs(parent)))
		return err;
	/* Like other BPF tools, mount the default bpffs when it is missing. */
	if (create && !strcmp(parent, "/sys/fs/bpf")) {
		if (mount("bpf", parent, "bpf", 0, "mode=0700") == 0)
			return 0;
		return xrl_fail(errno, "cannot mount bpffs on %s: %s", parent, strerror(errno));
	}
	if (!create && !strcmp(parent, "/sys/fs/bpf"))
		return xrl_fail(ENOENT, "xdp-rl is not loaded (no bpffs at %s); run 'xdp-rlctl attach dev IFACE' first",
			    parent);
	return xrl_fail(EINVAL, "'%s' is not on a bpffs mount (mount -t bpf bpf DIR)", parent);
}

/*
 * Whoever can replace the pin directory, or write into it, can unlink the
 * link pins (detaching the limiter) or slip in maps of their own. Refuse a
 * pin directory that is not a directory owned by root (or by this user), or
 * that group or others may write; and one whose parents let anyone else
 * swap it (xrl_path_safe(): each up to / owned by root or this user, and not
 * writable by group or others unless sticky).
 */
int xrl__pin_dir_safe(const char *pin_dir)
{
	static const struct xrl_path_rules rules = {
		.what = "pin directory",
		.owner_why = "whoever owns it can unlink the pins and detach xdp-rl",
		.owner_fix = "remove it (or chown root and chmod 0700 it)",
		.write_why = "anyone who can write it can unlink the pins and detach xdp-rl",
		.write_fix = "chmod 0700 it",
	};
	struct stat st;

	if (lstat(pin_dir, &st))
		return xrl_fail(errno, "cannot stat %s: %s", pin_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return xrl_fail(ENOTDIR, "pin directory %s is not a directory (a symlink?): refused", pin_dir);
	return xrl_path_safe(pin_dir, &st, &rules);
}

void xrl__pin_path(const struct xrl *x, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", x->pin_dir, name);
}

bool xrl__pin_exists(const struct xrl *x, const char *name)
{
	char p[PATH_MAX];

	xrl__pin_path(x, name, p, sizeof(p));
	return access(p, F_OK) == 0;
}

/* "xdp-rlctl", with --pin-dir when it is not the default: the start of a
 * command to tell the operator. */
void xrl__ctl_cmd(const struct xrl *x, char *buf, size_t len)
{
	if (strcmp(x->pin_dir, XRL_DEFAULT_PIN_DIR))
		snprintf(buf, len, "xdp-rlctl --pin-dir %s", x->pin_dir);
	else
		snprintf(buf, len, "xdp-rlctl");
}
