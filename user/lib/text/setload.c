// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: read a set file whole, bounded, then parse it
 * (model/setfile.c).
 */
#include "text/setload.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int xrl_set_file_read(const char *path, struct xrl_set_list *l)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, err = 0;

	xrl_set_list_free(l);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return xrl_fail(errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = xrl_fail(errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = xrl_fail(EISDIR, "%s: a directory, not a set file", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = xrl_fail(EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if ((unsigned long long)st.st_size > XRL_SET_FILE_MAX) {
		err = xrl_fail(EFBIG, "%s: %lld bytes, over the %llu MiB a set file may have", path,
			       (long long)st.st_size, XRL_SET_FILE_MAX >> 20);
		goto out;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = xrl_fail(errno, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;	/* shrunk meanwhile: what is there */
		got += r;
	}
	err = xrl_set_parse(buf, got, path, XRL_SET_MAX_ELEMS, l);
out:
	if (err)
		xrl_set_list_free(l);
	free(buf);
	close(fd);
	return err;
}
