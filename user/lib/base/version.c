// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The version string, defined once: the Makefile writes it into
 * .output/xrl_version.h (rewritten only when it changes). */
#include "base/version.h"
#include "xrl_version.h"

const char *xrl_version(void)
{
	return XRL_VERSION;
}
