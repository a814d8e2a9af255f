// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer: the configuration file reader (xrl_config_parse_text, what
 * xdp-rld and --check run on a file's text), errors and all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "text/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct xrl_config c;
	struct xrl_config_err *errs = NULL;
	size_t nerrs = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&c, 0, sizeof(c));
	xrl_config_parse_text("fuzz.conf", text, &c, &errs, &nerrs);
	xrl_config_free(&c);
	free(errs);
	free(text);
	return 0;
}
