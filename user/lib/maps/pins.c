// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the bpffs, the pin directory and its lock, load or reuse the
 * pinned maps, the daemon's claim, purge.
 */
#define _GNU_SOURCE	/* program_invocation_short_name */
#include "maps/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

/* ------------------------------------------------------------------ */
/* Open, load, pin                                                     */

const char *const xrl__map_names[M__COUNT] = {
	"xrl_control", "xrl_rules4", "xrl_rules6", "xrl_buckets4",
	"xrl_buckets6", "xrl_rule_stats", "xrl_global_stats", "xrl_if_stats",
	"xrl_events_rld", "xrl_events_ctl", "xrl_event_stats",
	"xrl_ep4", "xrl_ep6", "xrl_ep_class",
	"xrl_fleet_rules", "xrl_fleet_keys4", "xrl_fleet_keys6", "xrl_leases",
	"xrl_rule_shared", "xrl_hot", "xrl_fleet_scratch",
};

/* The caller may not read the pins or use bpf() (EACCES, EPERM): say so
 * and what to do, rather than "not loaded" or another version's pins. */
static int perm_denied(int err, const char *what, const char *path)
{
	return xrl_fail(err, "permission denied: %s %s (uid %u): xdp-rl's pins and bpf() are root's "
		    "(CAP_BPF, CAP_NET_ADMIN and read access to the pins): run it as root, e.g. with sudo",
		    what, path, (unsigned)geteuid());
}

static bool is_perm(int err)
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

static int ensure_bpffs(const char *pin_dir, bool create)
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
		return perm_denied(EACCES, "cannot look into", parent);
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
static int pin_dir_safe(const char *pin_dir)
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

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The pid holding the flock on fd's file, from /proc/locks; 0 if unknown. */
static int lock_holder(int fd)
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

static int lock_dir(struct xrl *x)
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
	pid = lock_holder(x->lock_fd);
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
	return x->pinned ? lock_dir(x) : 0;
}

void xrl_unlock(struct xrl *x)
{
	if (x->lock_fd >= 0)
		flock(x->lock_fd, LOCK_UN);
	x->locked = false;
}

void pin_path(const struct xrl *x, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", x->pin_dir, name);
}

static bool pin_exists(const struct xrl *x, const char *name)
{
	char p[PATH_MAX];

	pin_path(x, name, p, sizeof(p));
	return access(p, F_OK) == 0;
}

int map_max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	return info.max_entries;
}


/* "xdp-rlctl", with --pin-dir when it is not the default: the start of a
 * command to tell the operator. */
static void ctl_cmd(const struct xrl *x, char *buf, size_t len)
{
	if (strcmp(x->pin_dir, XRL_DEFAULT_PIN_DIR))
		snprintf(buf, len, "xdp-rlctl --pin-dir %s", x->pin_dir);
	else
		snprintf(buf, len, "xdp-rlctl");
}

/* A `keys N` that the pinned tables do not have: say how to get out. The
 * way is to keep them, or to detach everywhere and purge. */
static int keys_mismatch(struct xrl *x, int cap, __u32 keys)
{
	struct xrl_attachment *a = NULL;
	char cmd[PATH_MAX + 32], steps[sizeof(xrl__errbuf)];
	size_t n = 0, l = 0;

	ctl_cmd(x, cmd, sizeof(cmd));
	if (xrl_attachments(x, &a, &n))
		n = 0;	/* still worth saying: purge will name them */
	steps[0] = '\0';
	for (size_t i = 0; i < n && l < sizeof(steps); i++)
		l += snprintf(steps + l, sizeof(steps) - l, "'%s detach dev %s', ", cmd, a[i].ifname);
	if (l < sizeof(steps))
		snprintf(steps + l, sizeof(steps) - l, "%s'%s purge'", n ? "then " : "", cmd);
	free(a);
	return xrl_fail(EEXIST, "the pinned bucket tables hold %d keys each, not %u: attach without 'keys' to keep them, "
		    "or start over (rules and buckets are lost): %s", cap, keys, steps);
}

/* Load this build's object on the pinned maps (reused, new ones created and
 * pinned) and pin its program at prog_pin. upgrade: the pinned maps are
 * checked against this build's first, and nothing is pinned when they
 * differ. */
static int load_object(struct xrl *x, const struct xrl_open_opts *o, const char *prog_pin,
		       bool upgrade)
{
	struct bpf_map *maps[M__COUNT];
	char p[PATH_MAX];
	int err;

	x->skel = xdp_rl__open();
	if (!x->skel)
		return xrl_fail(errno, "cannot open the BPF object: %s", strerror(errno));
	x->skel->rodata->use_test_clock = o->test_clock;
	snprintf((char *)x->skel->rodata_info->xrl_info.build,
		 sizeof(x->skel->rodata_info->xrl_info.build), "%s", xrl_version());

	maps[M_CONTROL] = x->skel->maps.xrl_control;
	maps[M_RULES4] = x->skel->maps.xrl_rules4;
	maps[M_RULES6] = x->skel->maps.xrl_rules6;
	maps[M_BUCKETS4] = x->skel->maps.xrl_buckets4;
	maps[M_BUCKETS6] = x->skel->maps.xrl_buckets6;
	maps[M_RULE_STATS] = x->skel->maps.xrl_rule_stats;
	maps[M_GLOBAL_STATS] = x->skel->maps.xrl_global_stats;
	maps[M_IF_STATS] = x->skel->maps.xrl_if_stats;
	maps[M_EVENTS_RLD] = x->skel->maps.xrl_events_rld;
	maps[M_EVENTS_CTL] = x->skel->maps.xrl_events_ctl;
	maps[M_EVENT_STATS] = x->skel->maps.xrl_event_stats;
	maps[M_EP4] = x->skel->maps.xrl_ep4;
	maps[M_EP6] = x->skel->maps.xrl_ep6;
	maps[M_EP_CLASS] = x->skel->maps.xrl_ep_class;
	maps[M_FLEET_RULES] = x->skel->maps.xrl_fleet_rules;
	maps[M_FLEET_KEYS4] = x->skel->maps.xrl_fleet_keys4;
	maps[M_FLEET_KEYS6] = x->skel->maps.xrl_fleet_keys6;
	maps[M_LEASES] = x->skel->maps.xrl_leases;
	maps[M_RULE_SHARED] = x->skel->maps.xrl_rule_shared;
	maps[M_HOT] = x->skel->maps.xrl_hot;
	maps[M_FLEET_SCRATCH] = x->skel->maps.xrl_fleet_scratch;

	if (x->pinned && pin_exists(x, map_names[M_BUCKETS4])) {
		/* Buckets survive an upgrade: take the pinned table's size. */
		int fd, cap;

		pin_path(x, map_names[M_BUCKETS4], p, sizeof(p));
		fd = bpf_obj_get(p);
		cap = fd < 0 ? -errno : map_max_entries(fd);
		if (fd >= 0)
			close(fd);
		if (cap < 0)
			return xrl_fail(cap, "cannot read pinned %s: %s", p, strerror(-cap));
		if (o->keys && (__u32)cap != o->keys)
			return keys_mismatch(x, cap, o->keys);
		bpf_map__set_max_entries(maps[M_BUCKETS4], cap);
		bpf_map__set_max_entries(maps[M_BUCKETS6], cap);
	} else if (o->keys) {
		/* `keys` sizes each family's table */
		bpf_map__set_max_entries(maps[M_BUCKETS4], o->keys);
		bpf_map__set_max_entries(maps[M_BUCKETS6], o->keys);
	}

	if (x->pinned) {
		x->created = true;
		for (int i = 0; i < M__COUNT; i++) {
			pin_path(x, map_names[i], p, sizeof(p));
			bpf_map__set_pin_path(maps[i], p);
			/* an existing pin is reused by libbpf, and kept by xrl_discard() */
			x->new_pin[i] = !pin_exists(x, map_names[i]);
		}
	}

	if (upgrade && (err = xrl__upgrade_precheck(x)))
		return err;
	err = xdp_rl__load(x->skel);
	if (err && is_perm(-err))	/* not another version's maps: no right to load */
		return xrl_fail(err, "cannot load the BPF program: permission denied (uid %u): loading it takes root "
			    "(CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON): run it as root, e.g. with sudo",
			    (unsigned)geteuid());
	if (err)
		return xrl_fail(err, "cannot load the BPF program: %s (a pinned map from another version? 'xdp-rlctl purge' to start over)",
			    strerror(-err));

	x->prog_fd = bpf_program__fd(x->skel->progs.xdp_rl);
	for (int i = 0; i < M__COUNT; i++)
		x->map_fd[i] = bpf_map__fd(maps[i]);

	/* A program that finds no inner map passes everything as unmatched;
	 * an empty rule set says the same, and lets `bpftool map` show it.
	 * Maps reused from pins keep the set they hold. */
	for (int family = 4; family <= 6; family += 2) {
		err = rules_install_empty(x, family);
		if (err)
			return xrl_fail(err, "cannot create the empty IPv%d rule set: %s",
				    family, strerror(-err));
	}

	if (x->pinned) {
		pin_path(x, prog_pin, p, sizeof(p));
		if (bpf_obj_pin(x->prog_fd, p))
			return xrl_fail(errno, "cannot pin the program at %s: %s", p, strerror(errno));
		if (upgrade)
			x->prog_pin_new = true;
		else
			x->new_pin[M__COUNT] = true;
		pin_path(x, upgrade ? INFO_PIN_NEW : INFO_PIN, p, sizeof(p));
		unlink(p);	/* a leftover info pin without its program */
		if (bpf_obj_pin(bpf_map__fd(x->skel->maps.rodata_info), p))
			return xrl_fail(errno, "cannot pin the program's build at %s: %s", p, strerror(errno));
		if (!upgrade)
			x->new_pin[M__COUNT + 1] = true;
	}
	return 0;
}

int xrl__load_upgrade(struct xrl *x, const char *prog_pin, unsigned int *maps_added)
{
	struct xrl_open_opts o = { .pin_dir = x->pin_dir };
	int err = load_object(x, &o, prog_pin, true);

	*maps_added = 0;
	for (int i = 0; i < M__COUNT; i++)
		*maps_added += x->new_pin[i];
	return err;
}

static int reuse_pins(struct xrl *x, const struct xrl_open_opts *o)
{
	char p[PATH_MAX];
	int cap, err;

	pin_path(x, PROG_PIN, p, sizeof(p));
	x->prog_fd = bpf_obj_get(p);
	if (x->prog_fd < 0 && is_perm(errno))
		return perm_denied(errno, "cannot open the pinned program", p);
	if (x->prog_fd < 0)
		return xrl_fail(errno, "cannot open pinned program %s: %s", p, strerror(errno));
	/* another layout's maps are never read or written by this build */
	if ((err = xrl__layout_check(x, x->prog_fd, "pinned program")))
		return err;
	for (int i = 0; i < M__COUNT; i++) {
		pin_path(x, map_names[i], p, sizeof(p));
		x->map_fd[i] = bpf_obj_get(p);
		if (x->map_fd[i] < 0 && is_perm(errno))
			return perm_denied(errno, "cannot open the pinned map", p);
		if (x->map_fd[i] < 0)
			return xrl_fail(errno, "cannot open pinned map %s: %s ('xdp-rlctl purge' to start over; "
				    "pinned by an older build of xdp-rl? detach and purge with that build, "
				    "or remove %s, which detaches it everywhere; its rules and buckets are lost)",
				    p, strerror(errno), x->pin_dir);
	}
	cap = map_max_entries(x->map_fd[M_BUCKETS4]);
	if (o->keys && cap >= 0 && (__u32)cap != o->keys)
		return keys_mismatch(x, cap, o->keys);
	return 0;
}

int xrl_open(const struct xrl_open_opts *o, struct xrl **out)
{
	struct xrl *x;
	int err;

	xrl__errbuf[0] = '\0';
	x = calloc(1, sizeof(*x));
	if (!x)
		return xrl_fail(ENOMEM, "out of memory");
	x->lock_fd = -1;
	x->daemon_fd = -1;
	x->prog_fd = -1;
	for (int i = 0; i < M__COUNT; i++)
		x->map_fd[i] = x->set_fd[i] = -1;
	pthread_mutex_init(&x->set_lock, NULL);
	x->ncpus = libbpf_num_possible_cpus();
	x->pinned = !o->no_pin;
	if (o->pin_dir && strlen(o->pin_dir) > PATH_MAX - 64) {
		err = xrl_fail(ENAMETOOLONG, "pin directory name is too long");
		goto err;
	}
	snprintf(x->pin_dir, sizeof(x->pin_dir), "%s",
		 o->pin_dir ? o->pin_dir : XRL_DEFAULT_PIN_DIR);
	/* no trailing slash: the parent is derived from the last component */
	for (size_t l = strlen(x->pin_dir); l > 1 && x->pin_dir[l - 1] == '/'; l--)
		x->pin_dir[l - 1] = '\0';

	if (o->keys && o->keys < 16) {
		err = xrl_fail(EINVAL, "keys %u: the bucket table needs at least 16 entries", o->keys);
		goto err;
	}

	if (x->pinned) {
		err = ensure_bpffs(x->pin_dir, o->create);
		if (err)
			goto err;
		for (int tries = 0;; tries++) {
			struct stat a, b;

			if (access(x->pin_dir, F_OK)) {
				if (errno == EACCES) {	/* a parent the caller cannot search */
					err = perm_denied(EACCES, "cannot look into the parent of", x->pin_dir);
					goto err;
				}
				if (!o->create) {
					err = xrl_fail(ENOENT, "xdp-rl is not loaded (nothing pinned at %s); run 'xdp-rlctl attach dev IFACE' first",
						   x->pin_dir);
					goto err;
				}
				if (mkdir(x->pin_dir, 0700) == 0)
					x->created_dir = true;
				else if (is_perm(errno)) {
					err = perm_denied(errno, "cannot create", x->pin_dir);
					goto err;
				} else if (errno != EEXIST) {
					err = xrl_fail(errno, "cannot create %s: %s", x->pin_dir, strerror(errno));
					goto err;
				}
			}
			if ((err = pin_dir_safe(x->pin_dir))) {
				if (x->created_dir)	/* made here, under an unsafe parent */
					rmdir(x->pin_dir);
				x->created_dir = false;
				goto err;
			}
			/* the pins of a directory the caller cannot search would
			 * all look absent: "not loaded" would be a lie */
			if (faccessat(AT_FDCWD, x->pin_dir, X_OK, AT_EACCESS) && errno == EACCES) {
				err = perm_denied(EACCES, "cannot read the pin directory", x->pin_dir);
				goto err;
			}
			if (o->no_lock)
				break;
			err = lock_dir(x);
			if (err)
				goto err;
			/* A creator that failed removes the directory it made:
			 * locked, it must still be the one at the path. */
			if (tries >= 3 || (fstat(x->lock_fd, &a) == 0 && stat(x->pin_dir, &b) == 0 &&
					   a.st_dev == b.st_dev && a.st_ino == b.st_ino))
				break;
			close(x->lock_fd);
			x->lock_fd = -1;
			x->locked = false;
			x->created_dir = false;
		}
		if (o->pins_only) {
			x->created_dir = false;
			*out = x;
			return 0;
		} else if (pin_exists(x, PROG_PIN)) {
			x->created_dir = false;	/* another creator got the lock first */
			err = reuse_pins(x, o);
		} else if (o->create) {
			err = load_object(x, o, PROG_PIN, false);
		} else {
			err = xrl_fail(ENOENT, "xdp-rl is not loaded (nothing pinned at %s); run 'xdp-rlctl attach dev IFACE' first",
				   x->pin_dir);
		}
	} else {
		err = load_object(x, o, PROG_PIN, false);
	}
	if (err)
		goto err;

	x->ctrl = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		       MAP_SHARED, x->map_fd[M_CONTROL], 0);
	if (x->ctrl == MAP_FAILED) {
		x->ctrl = NULL;
		err = xrl_fail(errno, "cannot map the control block: %s", strerror(errno));
		goto err;
	}
	/* a set published before the set pins existed, or whose pin a commit
	 * left stale: pinned now, by one that may open it by id */
	if (x->pinned && x->locked)
		xrl__sets_pin(x);
	*out = x;
	return 0;
err:
	xrl_discard(x);	/* keeps xrl__errbuf: the first failure is the one to tell */
	xrl_close(x);
	return err;
}

bool xrl_created(const struct xrl *x)
{
	return x->created || x->created_dir;
}

int xrl_discard(struct xrl *x)
{
	char p[PATH_MAX], saved[sizeof(xrl__errbuf)];
	int err = 0;

	if (!xrl_created(x) || (x->pinned && !x->locked))
		return 0;	/* unlocked, another process may be using them */
	memcpy(saved, xrl__errbuf, sizeof(saved));
	for (int i = 0; i <= M__COUNT + 1; i++) {
		if (!x->new_pin[i])
			continue;
		/* the empty set a new map-in-map was given (rules.c) */
		if (i < M__COUNT && x->set_fd[i] >= 0)
			xrl__set_unpin(x, i);
		pin_path(x, i < M__COUNT ? map_names[i] : i == M__COUNT ? PROG_PIN : INFO_PIN, p, sizeof(p));
		if (unlink(p) && errno != ENOENT && !err)
			err = xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
		x->new_pin[i] = false;
	}
	if (x->created_dir && rmdir(x->pin_dir) && errno != ENOENT && !err)
		err = xrl_fail(errno, "cannot remove %s: %s", x->pin_dir, strerror(errno));
	x->created = x->created_dir = false;
	if (!err)
		memcpy(xrl__errbuf, saved, sizeof(xrl__errbuf));
	return err;
}

void xrl_close(struct xrl *x)
{
	if (!x)
		return;
	if (x->ctrl)
		munmap(x->ctrl, sysconf(_SC_PAGESIZE));
	if (x->own_prog_fd && x->prog_fd >= 0)
		close(x->prog_fd);	/* adopted after an upgrade */
	if (x->leases)
		munmap(x->leases, XRL_FLEET_SLOTS * sizeof(struct xrl_lease));
	if (x->skel) {
		xdp_rl__destroy(x->skel);	/* owns the fds */
	} else {
		for (int i = 0; i < M__COUNT; i++)
			if (x->map_fd[i] >= 0)
				close(x->map_fd[i]);
		if (x->prog_fd >= 0 && !x->own_prog_fd)
			close(x->prog_fd);
	}
	if (x->lock_fd >= 0)
		close(x->lock_fd);	/* drops the flock */
	if (x->daemon_fd >= 0)
		close(x->daemon_fd);
	xrl__sets_close(x);
	pthread_mutex_destroy(&x->set_lock);
	free(x);
}

const char *xrl_pin_dir(const struct xrl *x)
{
	return x->pin_dir;
}

int xrl_prog_fd(const struct xrl *x)
{
	return x->prog_fd;
}

struct xrl_control *xrl_control(struct xrl *x)
{
	return x->ctrl;
}

void xrl_attachments_names(const struct xrl_attachment *a, size_t n, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && l < len; i++)
		l += snprintf(buf + l, len - l, "%s%s%s", i ? ", " : "", a[i].ifname,
			      a[i].ifindex ? "" : " (gone)");
}

/* Is this a name xdp-rl pins under its directory? */
static bool our_pin(const char *name)
{
	if (!strcmp(name, PROG_PIN) || !strcmp(name, PROG_PIN_NEW) || !strcmp(name, INFO_PIN) ||
	    !strcmp(name, INFO_PIN_NEW) || !strcmp(name, DAEMON_DIR) || !strcmp(name, EVENTS_DIR) ||
	    !strncmp(name, LINK_PREFIX, strlen(LINK_PREFIX)) || xrl__set_pin_name(name))
		return true;
	for (int i = 0; i < M__COUNT; i++)
		if (!strcmp(name, map_names[i]))
			return true;
	return false;
}

/* The pid of the process holding a claim (DAEMON_DIR, EVENTS_DIR) on the
 * directory; 0: none, -1: held, by whom unknown. */
static pid_t claim_holder(struct xrl *x, const char *name)
{
	char p[PATH_MAX];
	pid_t pid = 0;
	int fd;

	pin_path(x, name, p, sizeof(p));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
	} else if (errno == EWOULDBLOCK) {
		pid = lock_holder(fd);
		if (!pid)
			pid = -1;	/* held, by whom unknown */
	}
	close(fd);
	return pid;
}

/* Remove the served interfaces' names from the daemon's claim. */
/* Remove the served-interface names but those in keep[nkeep]. */
static void serves_clear(struct xrl *x, const char *const *keep, size_t nkeep)
{
	struct dirent *de;
	char p[PATH_MAX];
	DIR *d;

	pin_path(x, DAEMON_DIR, p, sizeof(p));
	if (!(d = opendir(p)))
		return;
	while ((de = readdir(d))) {
		char q[PATH_MAX * 2];

		bool kept = false;

		if (de->d_type != DT_DIR || strncmp(de->d_name, SERVES_PREFIX, strlen(SERVES_PREFIX)))
			continue;
		for (size_t i = 0; i < nkeep && !kept; i++)
			kept = !strcmp(de->d_name + strlen(SERVES_PREFIX), keep[i]);
		if (kept)
			continue;
		snprintf(q, sizeof(q), "%s/%s", p, de->d_name);
		rmdir(q);
	}
	closedir(d);
}

/* A claim directory holds nothing (anything in it is another tool's); a
 * pin is no directory. */
static bool claim_empty(struct xrl *x, const char *name)
{
	bool daemon = !strcmp(name, DAEMON_DIR);
	struct dirent *de;
	char p[PATH_MAX];
	bool empty = true;
	DIR *d;

	if (strcmp(name, DAEMON_DIR) && strcmp(name, EVENTS_DIR))
		return true;
	pin_path(x, name, p, sizeof(p));
	if (!(d = opendir(p)))
		return errno == ENOTDIR;
	/* the daemon's claim holds its served interfaces' names (a daemon
	 * killed with -9 leaves them) */
	while (empty && (de = readdir(d)))
		empty = (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) ||
			(daemon && de->d_type == DT_DIR && !strncmp(de->d_name, SERVES_PREFIX, strlen(SERVES_PREFIX)));
	closedir(d);
	return empty;
}

int xrl_purge(struct xrl *x)
{
	struct xrl_attachment *a;
	struct dirent *de;
	size_t n;
	DIR *d;
	int err;

	err = xrl_attachments(x, &a, &n);
	if (err)
		return err;
	if (n) {
		char names[256], cmd[PATH_MAX + 32];

		xrl_attachments_names(a, n, names, sizeof(names));
		free(a);
		ctl_cmd(x, cmd, sizeof(cmd));
		return xrl_fail(EBUSY, "still attached to %s: pins kept ('%s detach dev IFACE' for each first)",
			    names, cmd);
	}
	free(a);
	/* A daemon serving the directory would pin it all again at once; an
	 * events reader would go on following maps that are gone. */
	if (x->daemon_fd < 0) {
		pid_t holder = claim_holder(x, DAEMON_DIR);

		if (holder > 0)
			return xrl_fail(EBUSY, "xdp-rld (pid %d) serves %s and would pin it all again: pins kept (stop it first)",
				    (int)holder, x->pin_dir);
		if (holder < 0)
			return xrl_fail(EBUSY, "an xdp-rld serves %s and would pin it all again: pins kept (stop it first)",
				    x->pin_dir);
	}
	{
		pid_t holder = claim_holder(x, EVENTS_DIR);

		if (holder)
			return xrl_fail(EBUSY, "'xdp-rlctl events' (pid %d) follows %s: pins kept (stop it first)",
				    (int)holder, x->pin_dir);
	}
	/* Only a directory of xdp-rl's own names: a --pin-dir mistyped onto
	 * another tool's pins must not lose them. */
	d = opendir(x->pin_dir);
	if (!d)
		return xrl_fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.' && (!our_pin(de->d_name) || !claim_empty(x, de->d_name))) {
			err = xrl_fail(EEXIST, "%s holds '%s', which is not xdp-rl's: nothing removed",
				   x->pin_dir, de->d_name);
			closedir(d);
			return err;
		}
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		pin_path(x, de->d_name, p, sizeof(p));
		/* the claims are directories (DAEMON_DIR, EVENTS_DIR) */
		if (!strcmp(de->d_name, DAEMON_DIR))
			serves_clear(x, NULL, 0);
		if (unlink(p) && !(errno == EISDIR && rmdir(p) == 0))
			err = xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
	}
	closedir(d);
	if (!err && rmdir(x->pin_dir))
		err = xrl_fail(errno, "cannot remove %s: %s", x->pin_dir, strerror(errno));
	return err;
}

/* ------------------------------------------------------------------ */
/* The daemon's claim and the pins' health                             */

/* Claim DIR/daemon: mkdir (bpffs has directories but no regular files) and
 * hold an exclusive flock on it until xrl_close(). */
static int claim(struct xrl *x, pid_t *holder)
{
	char p[PATH_MAX];
	int fd;

	*holder = 0;
	pin_path(x, DAEMON_DIR, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		*holder = lock_holder(fd);
		close(fd);
		if (err == EWOULDBLOCK)
			return xrl_fail(EBUSY, "%s is served by another xdp-rld (pid %d): one daemon per pin directory",
				    x->pin_dir, (int)*holder);
		return xrl_fail(err, "cannot lock %s: %s", p, strerror(err));
	}
	if (x->daemon_fd >= 0)
		close(x->daemon_fd);
	x->daemon_fd = fd;
	return 0;
}

/* The claim of the reader of xrl_events_ctl: DIR/events, flocked for as
 * long as the returned fd is open. One reader at a time: a ring gives each
 * record to one consumer only, so two readers would each see half. */
int xrl__events_claim(struct xrl *x)
{
	char p[PATH_MAX];
	int fd, pid;

	pin_path(x, EVENTS_DIR, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	pid = lock_holder(fd);
	close(fd);
	if (pid > 0)
		return xrl_fail(EBUSY, "another 'xdp-rlctl events' (pid %d) follows the events of %s: one reader at a time",
			    pid, x->pin_dir);
	return xrl_fail(EBUSY, "another 'xdp-rlctl events' follows the events of %s: one reader at a time",
		    x->pin_dir);
}

/*
 * The interfaces the daemon serves, for xdp-rlctl to see: a directory
 * DAEMON_DIR/if_NAME each (bpffs has no regular files), made and removed by
 * the daemon that holds the claim. The names count only while a daemon
 * holds it: one killed with -9 leaves them, and nobody serves them.
 */
int xrl_daemon_serves_set(struct xrl *x, const char *const *names, size_t n)
{
	char p[PATH_MAX], q[PATH_MAX * 2];
	int err = 0;

	if (x->daemon_fd < 0)
		return xrl_fail(EINVAL, "only the daemon's handle names what it serves");
	/* the new names first, then the stale ones out: an interface served
	 * before and after is never unnamed (a detach in between would not
	 * see the daemon) */
	pin_path(x, DAEMON_DIR, p, sizeof(p));
	for (size_t i = 0; i < n; i++) {
		snprintf(q, sizeof(q), "%s/" SERVES_PREFIX "%s", p, names[i]);
		if (mkdir(q, 0700) && errno != EEXIST && !err)
			err = xrl_fail(errno, "cannot create %s: %s", q, strerror(errno));
	}
	serves_clear(x, names, n);
	return err;
}

int xrl_daemon_serves(struct xrl *x, const char *ifname, pid_t *pid)
{
	char p[PATH_MAX], q[PATH_MAX * 2];
	struct stat st;

	*pid = 0;
	if (!x->pinned || strlen(ifname) >= IF_NAMESIZE)
		return 0;
	pin_path(x, DAEMON_DIR, p, sizeof(p));
	snprintf(q, sizeof(q), "%s/" SERVES_PREFIX "%s", p, ifname);
	if (stat(q, &st) || !S_ISDIR(st.st_mode))
		return 0;
	if (x->daemon_fd >= 0) {
		*pid = getpid();
		return 1;
	}
	*pid = claim_holder(x, DAEMON_DIR);
	return *pid != 0;
}

int xrl_daemon_claim(struct xrl *x, pid_t *holder)
{
	pid_t h;

	if (!x->pinned)
		return xrl_fail(EINVAL, "an unpinned instance has no daemon");
	return claim(x, holder ? holder : &h);
}

static __u32 fd_id(int fd, bool prog)
{
	if (prog) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	} else {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	}
}

/* The object pinned at DIR/name: 1 ours, 0 missing, -EEXIST another one. */
static int pinned_is(struct xrl *x, const char *name, int fd, bool prog)
{
	char p[PATH_MAX];
	int pfd, same;

	pin_path(x, name, p, sizeof(p));
	pfd = bpf_obj_get(p);
	if (pfd < 0)
		return 0;
	same = fd_id(pfd, prog) == fd_id(fd, prog);
	close(pfd);
	return same ? 1 : -EEXIST;
}

/* Is DIR/daemon the directory this handle holds its claim on? (An rmdir and
 * mkdir in its place would let a second daemon claim the new one.) */
static bool claim_intact(struct xrl *x)
{
	struct stat a, b;
	char p[PATH_MAX];

	if (x->daemon_fd < 0)
		return true;
	pin_path(x, DAEMON_DIR, p, sizeof(p));
	return stat(p, &a) == 0 && fstat(x->daemon_fd, &b) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int xrl_pins_ok(struct xrl *x)
{
	if (!x->pinned)
		return 1;
	/* an upgrade replaced the program on these maps: serve the new one */
	if (pinned_is(x, PROG_PIN, x->prog_fd, true) == -EEXIST && xrl__adopt_upgraded(x))
		xrl_warn("the program under %s was upgraded: re-attaching uses the new one", x->pin_dir);
	if (pinned_is(x, PROG_PIN, x->prog_fd, true) != 1)
		return 0;
	for (int i = 0; i < M__COUNT; i++)
		if (pinned_is(x, map_names[i], x->map_fd[i], false) != 1)
			return 0;
	return claim_intact(x);
}

/* Is any link pinned in the directory a link of another program? */
static bool foreign_links(struct xrl *x)
{
	__u32 ours = fd_id(x->prog_fd, true);
	struct xrl_attachment *a = NULL;
	bool found = false;
	size_t n = 0;

	if (xrl_attachments(x, &a, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++)
		found = a[i].prog_id && a[i].prog_id != ours;
	free(a);
	return found;
}

int xrl_pins_restore(struct xrl *x)
{
	bool replaced = false;
	char p[PATH_MAX];
	pid_t holder;
	int err;

	if (!x->pinned)
		return 0;
	err = ensure_bpffs(x->pin_dir, true);
	if (err)
		return err;
	if (mkdir(x->pin_dir, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", x->pin_dir, strerror(errno));
	if ((err = pin_dir_safe(x->pin_dir)))
		return err;
	/* the old directory may be gone: lock the one that is there now */
	if (x->lock_fd >= 0) {
		close(x->lock_fd);
		x->lock_fd = -1;
	}
	for (int i = -1; i < M__COUNT; i++) {
		const char *name = i < 0 ? PROG_PIN : map_names[i];
		int fd = i < 0 ? x->prog_fd : x->map_fd[i];

		err = pinned_is(x, name, fd, i < 0);
		if (err == 1)
			continue;
		pin_path(x, name, p, sizeof(p));
		if (err < 0) {
			/* Another instance was made here after the removal (a
			 * CLI command that found nothing). Unattached, it serves
			 * nothing: this handle's maps, with their buckets and
			 * the daemon's rules, take the place back. Attached
			 * somewhere, it is left alone. */
			if (foreign_links(x))
				return xrl_fail(EEXIST, "%s holds another attached instance: not replaced", x->pin_dir);
			if (unlink(p))
				return xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
			replaced = true;
		}
		if (bpf_obj_pin(fd, p))
			return xrl_fail(errno, "cannot pin %s: %s", p, strerror(errno));
	}
	/* the program's build, when this handle has it (it loaded the object);
	 * else status finds it by the program's map ids */
	if (x->skel && !x->own_prog_fd && !pin_exists(x, INFO_PIN)) {
		pin_path(x, INFO_PIN, p, sizeof(p));
		if (bpf_obj_pin(bpf_map__fd(x->skel->maps.rodata_info), p))
			xrl_warn("cannot pin the program's build at %s: %s", p, strerror(errno));
	}
	if (replaced)
		xrl_warn("replaced an unattached instance pinned at %s after the pins were removed (its rules are gone)",
		     x->pin_dir);
	/* the published sets, from this handle's descriptors of them */
	xrl__sets_pin(x);
	/* renew the claim when its directory was removed or replaced */
	if (!claim_intact(x))
		return claim(x, &holder);
	return 0;
}
