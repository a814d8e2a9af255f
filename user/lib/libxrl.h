/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl: every map and attach operation of xdp-rl. The CLI and the daemon
 * are thin layers on top of it. This is their umbrella: it includes the
 * headers of the layers (base, model, maps, fleet's view, features); no file
 * of the library includes it.
 *
 * Functions return 0 or a negative errno; on failure xrl_errmsg() says what
 * went wrong in words an operator can act on.
 */
#ifndef LIBXRL_H
#define LIBXRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <net/if.h>
#include <sys/types.h>
#include "xdp_rl_common.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/strict.h"
#include "base/version.h"
#include "base/pcapw.h"
#include "model/addr.h"
#include "model/rule.h"
#include "model/suggest.h"
#include "model/words.h"
#include "model/ban.h"

/* The map layer, the fleet as the CLI shows it, the features. */
#include "maps/xrl.h"
#include "maps/rules.h"
#include "maps/stats.h"
#include "maps/events.h"
#include "maps/bans.h"
#include "maps/capture.h"
#include "maps/attach.h"
#include "maps/sets.h"
#include "maps/kernel.h"
#include "maps/syncookie.h"
#include "fleet/view.h"
#include "features/upgrade.h"
#include "features/restore.h"
#include "features/replay.h"
#include "features/report.h"

#endif
