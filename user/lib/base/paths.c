// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, plain helpers: is a path safe from other users? The pin
 * directory, the configuration file and the Redis credentials are trusted
 * only when nobody but root and the user running the command can change
 * what they hold or where their names lead.
 */
#include "base/paths.h"
#include "base/log.h"

#include <limits.h>
#include <stdbool.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* A directory on the way to the file: owned by root (or this user), and not
 * writable by group or others unless sticky (as /tmp and a bpffs's root
 * are: then only the owner of an entry may rename or remove it). */
static int dir_safe(const struct xrl_path_rules *r, const char *name, const char *dir,
		    const struct stat *st)
{
	if (!trusted_uid(st->st_uid))
		return xrl_fail(EPERM, "%s, a parent of the %s %s, belongs to uid %u: its owner could swap "
			    "the %s. Refused", dir, r->what, name, (unsigned int)st->st_uid, r->what);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return xrl_fail(EPERM, "%s, a parent of the %s %s, is writable by %s without the sticky bit "
			    "(mode %04o): anyone could swap the %s. Refused", dir, r->what, name,
			    st->st_mode & S_IWOTH ? "others" : "its group", (unsigned int)(st->st_mode & 07777),
			    r->what);
	return 0;
}

/* The most symlinks one resolution follows, as the kernel's own bound */
#define XRL_PATH_MAX_LINKS	40

/*
 * Resolve path by hand, one name at a time, as the kernel would: "/" and
 * each directory on the way checked by dir_safe(); each symlink met (in the
 * middle of a chain too: stat() and realpath() see only where it ends) owned
 * by root or this user, since in a sticky directory its owner could point it
 * elsewhere; at most XRL_PATH_MAX_LINKS of them (ELOOP). The end must be the
 * file st describes (not swapped meanwhile). Any failure refuses.
 */
static int chain_safe(const struct xrl_path_rules *r, const char *path, const struct stat *want)
{
	char cur[PATH_MAX], todo[PATH_MAX], link[PATH_MAX], rest[PATH_MAX];
	unsigned int links = 0;
	struct stat st;
	ssize_t n;
	int err;

	if (path[0] == '/') {
		snprintf(cur, sizeof(cur), "/");
	} else if (!getcwd(cur, sizeof(cur))) {
		return xrl_fail(errno, "cannot resolve %s: %s", path, strerror(errno));
	}
	/* the working directory is already resolved: check it as named */
	if (path[0] != '/') {
		char up[PATH_MAX], *slash;

		snprintf(up, sizeof(up), "%s", cur);
		for (;;) {
			if (lstat(up, &st))
				return xrl_fail(errno, "cannot stat %s: %s", up, strerror(errno));
			if ((err = dir_safe(r, path, up, &st)))
				return err;
			if (!strcmp(up, "/"))
				break;
			slash = strrchr(up, '/');
			if (slash == up)
				slash[1] = '\0';
			else
				*slash = '\0';
		}
	} else {
		if (lstat("/", &st))
			return xrl_fail(errno, "cannot stat /: %s", strerror(errno));
		if ((err = dir_safe(r, path, "/", &st)))
			return err;
	}
	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return xrl_fail(ENAMETOOLONG, "cannot resolve %s: %s", path, strerror(ENAMETOOLONG));
	for (char *p = todo;;) {
		char *name, *end;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		name = p;
		end = strchr(p, '/');
		p = end ? end : p + strlen(p);
		len = (size_t)(p - name);
		if (len == 1 && name[0] == '.')
			continue;
		if (len == 2 && name[0] == '.' && name[1] == '.') {
			char *slash = strrchr(cur, '/');

			if (slash == cur)
				slash[1] = '\0';
			else
				*slash = '\0';
			continue;
		}
		if (strlen(cur) + 1 + len + 1 > sizeof(cur))
			return xrl_fail(ENAMETOOLONG, "cannot resolve %s: %s", path, strerror(ENAMETOOLONG));
		if (strcmp(cur, "/"))
			strcat(cur, "/");
		strncat(cur, name, len);
		if (lstat(cur, &st))
			return xrl_fail(errno, "cannot resolve %s: %s: %s", path, cur, strerror(errno));
		if (S_ISLNK(st.st_mode)) {
			if (!trusted_uid(st.st_uid))
				return xrl_fail(EPERM, "%s, %s the %s %s, is a symlink of uid %u: its owner could "
					    "point it elsewhere. Refused", cur, *p ? "a parent of" : "on the way to",
					    r->what, path, (unsigned int)st.st_uid);
			if (++links > XRL_PATH_MAX_LINKS)
				return xrl_fail(ELOOP, "cannot resolve %s: %s", path, strerror(ELOOP));
			n = readlink(cur, link, sizeof(link) - 1);
			if (n < 0)
				return xrl_fail(errno, "cannot resolve %s: %s: %s", path, cur, strerror(errno));
			link[n] = '\0';
			/* the link's target, then what was left of the name */
			snprintf(rest, sizeof(rest), "%s", p);
			if (snprintf(todo, sizeof(todo), "%s%s", link, rest) >= (int)sizeof(todo))
				return xrl_fail(ENAMETOOLONG, "cannot resolve %s: %s", path, strerror(ENAMETOOLONG));
			p = todo;
			/* the link's own name off: the target is read from its directory */
			*strrchr(cur, '/') = '\0';
			if (!*cur || link[0] == '/')
				snprintf(cur, sizeof(cur), "/");
			continue;
		}
		/* a name with more after it must be a directory on the way */
		while (*p == '/')
			p++;
		if (*p) {
			if (!S_ISDIR(st.st_mode))
				return xrl_fail(ENOTDIR, "cannot resolve %s: %s: %s", path, cur, strerror(ENOTDIR));
			if ((err = dir_safe(r, path, cur, &st)))
				return err;
			continue;
		}
		/* the end: the file the caller opened and checked */
		if (want && (st.st_dev != want->st_dev || st.st_ino != want->st_ino))
			return xrl_fail(EPERM, "%s %s changed while it was checked. Refused", r->what, path);
		return 0;
	}
	/* path names a directory ("/" or ending in "..") */
	if (lstat(cur, &st))
		return xrl_fail(errno, "cannot resolve %s: %s", path, strerror(errno));
	if (want && (st.st_dev != want->st_dev || st.st_ino != want->st_ino))
		return xrl_fail(EPERM, "%s %s changed while it was checked. Refused", r->what, path);
	return 0;
}

int xrl_path_safe(const char *path, const struct stat *st, const struct xrl_path_rules *r)
{
	struct stat own;

	if (!st) {
		if (stat(path, &own))
			return xrl_fail(errno, "cannot stat %s: %s", path, strerror(errno));
		st = &own;
	}
	if (!trusted_uid(st->st_uid))
		return xrl_fail(EPERM, "%s %s belongs to uid %u, not root: %s. Refused; %s", r->what, path,
			    (unsigned int)st->st_uid, r->owner_why, r->owner_fix);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return xrl_fail(EPERM, "%s %s is writable by %s (mode %04o): %s. Refused; %s", r->what, path,
			    st->st_mode & S_IWOTH ? "others" : "its group", (unsigned int)(st->st_mode & 07777),
			    r->write_why, r->write_fix);
	/* each name on the way, each symlink of the chain, as resolved */
	return chain_safe(r, path, st);
}
