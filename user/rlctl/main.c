// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rlctl: the operator's command line. The grammar (user/lib/grammar.c)
 * parses, libxrl does every map and attach operation; the command files
 * only run and print:
 *   main.c   options, messages, the lock discipline, dispatch
 *   iface.c  attach, detach, purge, status
 *   rules.c  rule add, del, list, flush; mode set
 *   stats.c  stats, show
 *   top.c    top, top watch
 *   keys.c   key list, reset, del
 *   replay.c replay
 *   events.c events
 */
#include "rlctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

struct rlctl_opts opt;
struct jw jw;

/* One message on stderr: {"error": ...} under -j, else "Error: ...". */
static void p_msg(const char *kind, const char *label, const char *fmt, va_list ap)
{
	char msg[600];

	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int)sizeof(msg))
		xrl_utf8_trim(msg);	/* never cut a character in two */
	if (opt.json) {
		struct jw e;

		jw_init(&e, stderr, false);
		jw_obj_start(&e);
		jw_kstr(&e, kind, msg);
		jw_obj_end(&e);
		jw_finish(&e);
	} else {
		fprintf(stderr, "%s: %s\n", label, msg);
	}
}

__attribute__((format(printf, 1, 2)))
void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_msg("error", "Error", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
void p_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p_msg("note", "Note", fmt, ap);
	va_end(ap);
}

/* Warnings of libxrl come while the lock is held: kept, printed after.
 * Debug lines (libbpf's, with XRL_DEBUG=1) go out at once. */
static char warnings[1024];

static void cli_log(enum xrl_log_level level, const char *msg)
{
	size_t l = strlen(warnings);

	if (level > XRL_LOG_WARN) {
		fprintf(stderr, "%s\n", msg);
		return;
	}
	snprintf(warnings + l, sizeof(warnings) - l, "%s%s", l ? "\n" : "", msg);
}

void print_warnings(void)
{
	char *line = warnings, *nl;

	while (*line) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (opt.json) {
			struct jw e;

			jw_init(&e, stderr, false);
			jw_obj_start(&e);
			jw_kstr(&e, "warning", line);
			jw_obj_end(&e);
			jw_finish(&e);
		} else {
			fprintf(stderr, "Warning: %s\n", line);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	warnings[0] = '\0';
}

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

/* Readers (status, rule list, stats, show, top) take no lock: each map
 * element is read atomically, and a reader stuck on a full pipe must not
 * stall the daemon or a writer. */
int open_reader(struct xrl **x)
{
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .no_lock = true };

	if (xrl_open(&o, x)) {
		p_err("%s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* Writers return from here with the lock held; they do their map and pin
 * operations, then unlock() before they print anything. */
int open_writer(struct xrl **x, bool create, __u32 keys)
{
	struct xrl_open_opts o = { .pin_dir = opt.pin_dir, .create = create, .keys = keys };

	if (xrl_open(&o, x)) {
		p_err("%s", xrl_errmsg());
		return -1;
	}
	return 0;
}

/* A writer's failure, kept until the lock is released. */
char emsg[1024];

__attribute__((format(printf, 1, 2)))
int set_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(emsg, sizeof(emsg), fmt, ap) >= (int)sizeof(emsg))
		xrl_utf8_trim(emsg);
	va_end(ap);
	return -1;
}

/* End of a writer's locked part. A failed command changes nothing: a new
 * instance that xrl_open() created for it goes away again. */
void unlock(struct xrl *x, int err)
{
	if (err && xrl_created(x) && xrl_discard(x)) {
		size_t l = strlen(emsg);

		snprintf(emsg + l, sizeof(emsg) - l, "; and the new instance could not be removed: %s",
			 xrl_errmsg());
	}
	xrl_unlock(x);
	print_warnings();
}

int end_write(struct xrl *x, int err)
{
	if (err)
		set_err("%s", xrl_errmsg());
	unlock(x, err);
	if (err)
		p_err("%s", emsg);
	return err;
}

void rule_fields(const struct xrl_rule_entry *e, char *pfx, size_t plen,
			char *rate, size_t rlen)
{
	xrl_prefix_format(e, pfx, plen);
	if (e->r.action == XRL_ACT_LIMIT)
		xrl_rule_rate_format(&e->r, rate, rlen);
	else
		snprintf(rate, rlen, "-");
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
