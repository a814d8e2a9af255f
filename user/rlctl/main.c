// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: the operator's command line. The grammar (user/lib/text/)
 * parses, libxrl does every map and attach operation; the command files
 * only run and print:
 *   main.c   options and dispatch
 *   common.c messages, warnings, opening the pins, the lock discipline
 *   iface.c  attach, detach, purge, status
 *   rules.c  rule add, del, list, flush; mode set
 *   stats.c  stats, show
 *   top.c    top, top watch
 *   keys.c   key list, reset, del
 *   replay.c replay
 *   events.c events
 *   bans.c   ban add, del, list, flush
 *   capture.c capture
 */
#include "rlctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

void usage(FILE *f)
{
	fprintf(f, "Usage: xdp-rlctl [-j|--json] [-p|--pretty] [--pin-dir DIR] COMMAND ...\n"
		   "       xdp-rlctl -V|--version\n"
		   "Commands:\n");
	xrl_usage(f, XRL_IN_CLI, NULL);
	fprintf(f, "Options may also follow the command. Any word may be shortened while it\n"
		   "stays unambiguous (r l: rule list). 'help' after a command shows its usage.\n"
		   "See xdp-rlctl(8).\n");
}


/* help, help COMMAND, COMMAND help: the table's synopses (under -j an array
 * of {command, synopsis, help}) */
static int do_help(struct xrl_cmd *c)
{
	const char *topic = c->help.topic[0] ? c->help.topic : NULL;

	if (opt.json) {
		jw_arr_start(&jw);
		for (size_t i = 0; i < xrl_ncommands; i++) {
			const struct xrl_command *cmd = &xrl_commands[i];
			char syn[512];

			if (!(cmd->where & XRL_IN_CLI) || (topic && !xrl_cmd_in_topic(cmd, topic)))
				continue;
			xrl_cmd_synopsis(cmd, syn, sizeof(syn));
			jw_obj_start(&jw);
			jw_kstr(&jw, "command", cmd->name);
			jw_kstr(&jw, "synopsis", syn);
			jw_kstr(&jw, "help", cmd->help);
			jw_key(&jw, "params");
			jw_arr_start(&jw);
			for (const struct xrl_param *p = cmd->params; p && !xrl_param_end(p); p++)
				for (const struct xrl_param *q = p; q; q = q->then) {
					jw_obj_start(&jw);
					if (q->name)
						jw_kstr(&jw, "keyword", q->name);
					else if (q->meta)
						jw_kstr(&jw, "position", q->meta);
					else {
						char w[128];

						xrl_words_join(q->words, "|", w, sizeof(w));
						jw_kstr(&jw, "position", w);
					}
					if (q != p)
						jw_kstr(&jw, "after", p->name);
					jw_kstr(&jw, "help", q->help ? q->help : "");
					jw_obj_end(&jw);
				}
			jw_arr_end(&jw);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_finish(&jw);
		return 0;
	}
	if (!topic) {
		usage(stdout);
		return 0;
	}
	/* one command: its keywords, a line each; a group: the synopses */
	for (size_t i = 0; i < xrl_ncommands; i++)
		if ((xrl_commands[i].where & XRL_IN_CLI) && !strcmp(xrl_commands[i].name, topic) &&
		    !(i + 1 < xrl_ncommands && xrl_cmd_in_topic(&xrl_commands[i + 1], topic)))
			return xrl_cmd_help(stdout, &xrl_commands[i]);
	if (xrl_usage(stdout, XRL_IN_CLI, topic)) {	/* the parser knows them all */
		p_err("unknown command '%s'", topic);
		return EXIT_USAGE;
	}
	return 0;
}

static void print_version(void)
{
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "version", xrl_version());
		jw_kstr(&jw, "libbpf_version", libbpf_version_string());
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("xdp-rlctl %s\nusing libbpf %s\n", xrl_version(), libbpf_version_string());
	}
}

static int (*const handlers[])(struct xrl_cmd *c) = {
	[XRL_CMD_ATTACH] = do_attach,
	[XRL_CMD_DETACH] = do_detach,
	[XRL_CMD_PURGE] = do_purge,
	[XRL_CMD_STATUS] = do_status,
	[XRL_CMD_UPGRADE] = do_upgrade,
	[XRL_CMD_RULE_ADD] = do_rule_add,
	[XRL_CMD_RULE_DEL] = do_rule_del,
	[XRL_CMD_RULE_LIST] = do_rule_list,
	[XRL_CMD_RULE_FLUSH] = do_rule_flush,
	[XRL_CMD_MODE_SET] = do_mode_set,
	[XRL_CMD_MODE_SHOW] = do_mode_show,
	[XRL_CMD_STATS] = do_stats,
	[XRL_CMD_SHOW] = do_show,
	[XRL_CMD_TOP] = do_top,
	[XRL_CMD_KEY_LIST] = do_key_list,
	[XRL_CMD_KEY_RESET] = do_key_reset,
	[XRL_CMD_KEY_DEL] = do_key_del,
	[XRL_CMD_EVENTS] = do_events,
	[XRL_CMD_HELP] = do_help,
	[XRL_CMD_REPLAY] = do_replay,
	[XRL_CMD_BAN_ADD] = do_ban_add,
	[XRL_CMD_BAN_DEL] = do_ban_del,
	[XRL_CMD_BAN_LIST] = do_ban_list,
	[XRL_CMD_BAN_FLUSH] = do_ban_flush,
	[XRL_CMD_CAPTURE] = do_capture,
	[XRL_CMD_SET_CREATE] = do_set_create,
	[XRL_CMD_SET_ADD] = do_set_add,
	[XRL_CMD_SET_DEL] = do_set_del,
	[XRL_CMD_SET_LIST] = do_set_list,
	[XRL_CMD_SET_SHOW] = do_set_show,
	[XRL_CMD_SET_FLUSH] = do_set_flush,
	[XRL_CMD_SET_LOAD] = do_set_load,
	[XRL_CMD_SUGGEST] = do_suggest,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct xrl_parse_err e;
	char bad[300] = "", **words;
	bool help = false, version = false;
	struct xrl_cmd c;
	int ch, nw = 0, rc;

	/*
	 * Options go before the command or anywhere after it ("rule list -j",
	 * "status --pin-dir X"), as with bpftool. A word that begins with '-'
	 * is an option: no value of the grammar does ("per /24" is no option;
	 * numbers take no sign), and "--" ends the options for an interface
	 * whose name does. The other words, in order, are the command.
	 * getopt stays quiet: an error is told once, as JSON under -j.
	 */
	words = calloc(argc + 1, sizeof(*words));
	if (!words) {
		fprintf(stderr, "Error: out of memory\n");
		return 1;
	}
	opterr = 0;
	while (optind < argc) {
		const char *w = argv[optind];

		if (!strcmp(w, "--")) {
			for (optind++; optind < argc; optind++)
				words[nw++] = argv[optind];
			break;
		}
		if (w[0] != '-' || !w[1]) {
			words[nw++] = argv[optind++];
			continue;
		}
		ch = getopt_long(argc, argv, "+:jphVd:", longopts, NULL);
		if (ch == -1)
			break;
		w = argv[optind - 1];	/* the word that went wrong */
		switch (ch) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.json = opt.pretty = true;
			break;
		case 'd':
			opt.pin_dir = optarg;
			break;
		case 'h':
			help = true;
			break;
		case 'V':
			version = true;
			break;
		case ':':
			if (!bad[0])
				snprintf(bad, sizeof(bad), "option '%s' needs an argument", w);
			break;
		default:
			if (bad[0])
				break;
			if (optopt && !strncmp(w, "--", 2))	/* --json=x */
				snprintf(bad, sizeof(bad), "option '%s' takes no argument", w);
			else if (optopt)
				snprintf(bad, sizeof(bad), "unknown option '-%c'", optopt);
			else
				snprintf(bad, sizeof(bad), "unknown option '%s'", w);
			break;
		}
	}
	jw_init(&jw, stdout, opt.pretty);
	xrl_log_set(cli_log, getenv("XRL_DEBUG") ? XRL_LOG_DEBUG : XRL_LOG_WARN);

	if (!bad[0] && (help || version)) {
		if (version)
			print_version();
		else
			usage(stdout);
		rc = 0;
	} else if (bad[0] || !nw) {
		p_err("%s", bad[0] ? bad : "missing command");
		if (!opt.json)
			usage(stderr);
		rc = EXIT_USAGE;
	} else if (xrl_cmd_parse(nw, words, XRL_IN_CLI, &c, &e)) {
		p_err("%s", e.msg);
		rc = EXIT_USAGE;
	} else {
		rc = handlers[c.kind](&c);
	}
	free(words);
	return rc;
}
