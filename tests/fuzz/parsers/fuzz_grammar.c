// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: the command grammar, one line as the CLI and the config file
 * read it, and as argv (words split at NUL bytes). A command that parses
 * is also formatted back where the grammar can (rules: prefix and rate). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/grammar.h"
#include "libxrl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *argv[64];
	struct xrl_parse_err e;
	struct xrl_cmd c;
	int argc = 0;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	for (unsigned where = XRL_IN_CLI; where <= XRL_IN_CONFIG; where <<= 1)
		if (!xrl_cmd_parse_line(line, where, &c, &e) && c.kind == XRL_CMD_RULE_ADD) {
			char buf[96];

			xrl_prefix_format(&c.rule, buf, sizeof(buf));
			xrl_rate_format(c.rule.r.rate_count, c.rule.r.rate_period_ns, buf, sizeof(buf));
		}
	/* the same bytes as argv: NUL-separated words */
	for (size_t i = 0; i < size && argc < 63;) {
		argv[argc++] = line + i;
		i += strlen(line + i) + 1;
	}
	argv[argc] = NULL;
	if (argc)
		xrl_cmd_parse(argc, argv, XRL_IN_CLI, &c, &e);
	free(line);
	return 0;
}
