// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * verifier-stats: load every program of a BPF object file as the kernel
 * verifies it in production (the object's defaults: no test clock) and
 * print, per program, the verifier's statistics line:
 *   PROGRAM processed N insns (limit L) max_states_per_insn M total_states T ...
 * The count is the cost the verifier pays for the program (its global
 * functions included), to compare two builds of it side by side:
 *   verifier-stats OBJECT.bpf.o [OBJECT.bpf.o ...]
 * Needs the privilege to load BPF programs. Nothing is attached or pinned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

/* BPF_LOG_STATS of the kernel's bpf_verifier_log: statistics only */
#define LOG_STATS	4
#define LOG_SIZE	(64 * 1024)

struct prog_log {
	struct bpf_program *prog;
	char buf[LOG_SIZE];
};

/* The line of the log that starts with "processed ", without its newline. */
static const char *processed_line(char *log)
{
	char *p = strstr(log, "processed ");
	char *nl;

	if (!p)
		return NULL;
	nl = strchr(p, '\n');
	if (nl)
		*nl = '\0';
	return p;
}

static int one_object(const char *path)
{
	struct prog_log *logs = NULL;
	struct bpf_object *obj;
	struct bpf_program *prog;
	size_t n = 0, i;
	int err;

	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		err = -errno;
		fprintf(stderr, "Error: %s: %s\n", path, strerror(errno));
		return err;
	}
	bpf_object__for_each_program(prog, obj)
		n++;
	logs = calloc(n ? n : 1, sizeof(*logs));
	if (!logs) {
		err = -ENOMEM;
		goto cleanup;
	}
	i = 0;
	bpf_object__for_each_program(prog, obj) {
		logs[i].prog = prog;
		bpf_program__set_log_level(prog, LOG_STATS);
		bpf_program__set_log_buf(prog, logs[i].buf, LOG_SIZE);
		i++;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "Error: %s: cannot load: %s\n", path, strerror(-err));
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		const char *line = processed_line(logs[i].buf);

		if (!line) {
			fprintf(stderr, "Error: %s: %s: no statistics in the verifier log\n", path,
				bpf_program__name(logs[i].prog));
			err = -ENOENT;
			continue;
		}
		printf("%s %s\n", bpf_program__name(logs[i].prog), line);
	}
cleanup:
	bpf_object__close(obj);
	free(logs);
	return err;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: verifier-stats OBJECT.bpf.o [OBJECT.bpf.o ...]\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (argc > 2)
			printf("%s\n", argv[i]);
		if (one_object(argv[i]))
			ret = 1;
	}
	return ret;
}
