// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Writes the bash completion of xdp-rlctl on stdout, from the grammar's
 * table (user/lib/grammar.c): the commands, their sub-commands, keywords
 * and enum words are the parser's own, so the completion cannot drift from
 * what the CLI accepts. The Makefile runs it at build time into
 * .output/xdp-rlctl.bash; `make install` puts that under
 * share/bash-completion/completions/xdp-rlctl.
 */
#include <stdio.h>
#include <string.h>

#include "text/grammar.h"

/* The first word of a command's name into buf. */
static void first_word(const char *name, char *buf, size_t len)
{
	const char *sp = strchr(name, ' ');

	snprintf(buf, len, "%.*s", (int)(sp ? (size_t)(sp - name) : strlen(name)), name);
}

/* NAME=KIND of one parameter: "-" a required positional, "-?" an optional
 * one; KIND flag, iface, topic, file (a path), ruleid (the ids of the
 * rules in the pins), words:a,b,c (no aliases), or value (what cannot be
 * completed: numbers, prefixes, addresses, rates). */
static void param_spec(const struct xrl_param *p)
{
	char words[160];

	if (p->name)
		printf(" %s=", p->name);
	else
		printf(" %s=", p->need == XRL_REQUIRED ? "-" : "-?");
	switch (p->type) {
	case XRL_ARG_FLAG:
		printf("flag");
		break;
	case XRL_ARG_IFACE:
		printf("iface");
		break;
	case XRL_ARG_TOPIC:
		printf("topic");
		break;
	case XRL_ARG_FILE:
		printf("file");
		break;
	case XRL_ARG_RULE_REF:	/* ID|PREFIX: the ids */
		printf("ruleid");
		break;
	case XRL_ARG_NUM:
		printf("%s", p->what && !strcmp(p->what, "rule id") ? "ruleid" : "value");
		break;
	case XRL_ARG_WORD:
		xrl_words_join(p->words, ",", words, sizeof(words));
		printf("words:%s", words);
		break;
	default:
		printf("value");
		break;
	}
}

int main(void)
{
	char w[32], prev[32] = "";

	printf("# bash completion for xdp-rlctl(8)\n"
	       "# Generated from the grammar's table (user/lib/grammar.c) by\n"
	       "# user/bashcomp/gen_completion.c at build time: do not edit.\n\n");

	printf("# the first words of the commands\n_xdp_rlctl_commands='");
	for (size_t i = 0, n = 0; i < xrl_ncommands; i++) {
		if (!(xrl_commands[i].where & XRL_IN_CLI))
			continue;
		first_word(xrl_commands[i].name, w, sizeof(w));
		if (!strcmp(w, prev))
			continue;
		printf("%s%s", n++ ? " " : "", w);
		snprintf(prev, sizeof(prev), "%s", w);
	}
	printf("'\n\n");

	/* keywords added after a command's first ones (struct xrl_param.late):
	 * a prefix they share with an earlier keyword is the earlier one's */
	printf("# keywords that yield a shared prefix to the earlier ones (late)\n_xdp_rlctl_late=' ");
	for (size_t i = 0; i < xrl_ncommands; i++)
		for (const struct xrl_param *q = xrl_commands[i].params; q && !xrl_param_end(q); q++)
			if (q->late && q->name)
				printf("%s ", q->name);
	printf("'\n\n");

	/* what the parser gives a first word's shared prefix to */
	printf("# first words that win a prefix they share (the table's preferred)\n_xdp_rlctl_preferred='");
	for (size_t i = 0, n = 0; i < xrl_ncommands; i++) {
		if (!(xrl_commands[i].where & XRL_IN_CLI) || !xrl_commands[i].preferred)
			continue;
		first_word(xrl_commands[i].name, w, sizeof(w));
		printf("%s%s", n++ ? " " : "", w);
	}
	printf("'\n\n");

	printf("# _xdp_rlctl_subs WORD: the sub-commands of a group, and help\n"
	       "_xdp_rlctl_subs()\n{\n\tcase $1 in\n");
	prev[0] = '\0';
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const char *name = xrl_commands[i].name, *sp = strchr(name, ' ');

		if (!(xrl_commands[i].where & XRL_IN_CLI) || !sp)
			continue;
		first_word(name, w, sizeof(w));
		if (strcmp(w, prev)) {
			printf("%s\t%s) echo '", prev[0] ? " help' ;;\n" : "", w);
			snprintf(prev, sizeof(prev), "%s", w);
		} else {
			printf(" ");
		}
		printf("%s", sp + 1);
	}
	printf("%s\tesac\n}\n\n", prev[0] ? " help' ;;\n" : "");

	printf("# _xdp_rlctl_params COMMAND: its parameters, NAME=KIND each (NAME \"-\":\n"
	       "# a positional, \"-?\" an optional one; KIND flag, iface, topic,\n"
	       "# words:a,b,c or value)\n"
	       "_xdp_rlctl_params()\n{\n\tcase $1 in\n");
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const struct xrl_command *cmd = &xrl_commands[i];

		if (!(cmd->where & XRL_IN_CLI) || !cmd->params)
			continue;
		printf("\t'%s') echo '", cmd->name);
		for (const struct xrl_param *p = cmd->params; !xrl_param_end(p); p++)
			param_spec(p);
		printf(" ' ;;\n");
	}
	printf("\tesac\n}\n\n");

	fputs(
"# _xdp_rlctl_resolve WORD CANDIDATES...: the candidate WORD means, as the\n"
"# parser reads it (the whole word, or a prefix only one candidate begins)\n"
"_xdp_rlctl_resolve()\n"
"{\n"
"\tlocal word=$1 c hit= n=0\n"
"\tshift\n"
"\tfor c; do\n"
"\t\t[[ $c == \"$word\" ]] && { echo \"$c\"; return 0; }\n"
"\t\t[[ -n $word && $c == \"$word\"* ]] && { hit=$c; ((n++)); }\n"
"\tdone\n"
"\t((n == 1)) && { echo \"$hit\"; return 0; }\n"
"\t# several: the one that is not a late keyword, as the parser decides\n"
"\tn=0\n"
"\tfor c; do\n"
"\t\t[[ -n $word && $c == \"$word\"* && $_xdp_rlctl_late != *\" $c \"* ]] && { hit=$c; ((n++)); }\n"
"\tdone\n"
"\t((n == 1)) && echo \"$hit\"\n"
"}\n"
"\n"
"# _xdp_rlctl_resolve_first WORD: the command WORD means; a prefix several\n"
"# begin goes to the preferred one, as in the parser\n"
"_xdp_rlctl_resolve_first()\n"
"{\n"
"\tlocal c r\n"
"\tr=$(_xdp_rlctl_resolve \"$1\" $_xdp_rlctl_commands)\n"
"\t[[ -n $r ]] && { echo \"$r\"; return 0; }\n"
"\tfor c in $_xdp_rlctl_preferred; do\n"
"\t\t[[ -n $1 && $c == \"$1\"* ]] && { echo \"$c\"; return 0; }\n"
"\tdone\n"
"}\n"
"\n"
"# the interfaces of this network namespace\n"
"_xdp_rlctl_ifaces()\n"
"{\n"
"\tlocal l\n"
"\tif command -v ip >/dev/null 2>&1; then\n"
"\t\tip -o link show 2>/dev/null | while IFS= read -r l; do\n"
"\t\t\tl=${l#*: }\n"
"\t\t\tl=${l%%: *}\n"
"\t\t\techo \"${l%%@*}\"\n"
"\t\tdone\n"
"\telse\n"
"\t\tls /sys/class/net 2>/dev/null\n"
"\tfi\n"
"}\n"
"\n"
"# _xdp_rlctl_rule_ids: the ids of the rules in the pins (of --pin-dir,\n"
"# when the line gives one), read through xdp-rlctl itself\n"
"_xdp_rlctl_rule_ids()\n"
"{\n"
"\t\"${COMP_WORDS[0]}\" ${_xdp_rlctl_pin:+--pin-dir \"$_xdp_rlctl_pin\"} -j rule list 2>/dev/null |\n"
"\t\tgrep -o '\"id\":[0-9]*' | cut -d: -f2\n"
"}\n"
"\n"
"# _xdp_rlctl_values KIND: COMPREPLY for a value of that kind\n"
"_xdp_rlctl_values()\n"
"{\n"
"\tlocal cur=$2 w\n"
"\tcase $1 in\n"
"\tiface) COMPREPLY=($(compgen -W \"$(_xdp_rlctl_ifaces)\" -- \"$cur\")) ;;\n"
"\ttopic) COMPREPLY=($(compgen -W \"$_xdp_rlctl_commands\" -- \"$cur\")) ;;\n"
"\tfile) compopt -o filenames 2>/dev/null\n"
"\t\tCOMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
"\truleid) COMPREPLY=($(compgen -W \"$(_xdp_rlctl_rule_ids)\" -- \"$cur\")) ;;\n"
"\twords:*) w=${1#words:}\n"
"\t\tCOMPREPLY=($(compgen -W \"${w//,/ }\" -- \"$cur\")) ;;\n"
"\tesac\n"
"}\n"
"\n"
"_xdp_rlctl()\n"
"{\n"
"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
"\tlocal words=() i w k n=1 cmd first subs p ip=0 expect= used=' '\n"
"\tlocal pos=() kws=() names=() specs=() _xdp_rlctl_pin=\n"
"\tCOMPREPLY=()\n"
"\n"
"\t# options, before the command or after it\n"
"\tif [[ $prev == --pin-dir || $prev == -d ]]; then\n"
"\t\tCOMPREPLY=($(compgen -d -- \"$cur\"))\n"
"\t\treturn 0\n"
"\tfi\n"
"\tif [[ $cur == -* ]]; then\n"
"\t\tCOMPREPLY=($(compgen -W '-j --json -p --pretty --pin-dir -V --version -h --help' -- \"$cur\"))\n"
"\t\treturn 0\n"
"\tfi\n"
"\t# the words before the cursor, options left out\n"
"\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
"\t\tw=${COMP_WORDS[i]}\n"
"\t\tcase $w in\n"
"\t\t--pin-dir | -d) ((i++)); _xdp_rlctl_pin=${COMP_WORDS[i]} ;;\n"
"\t\t--pin-dir=*) _xdp_rlctl_pin=${w#--pin-dir=} ;;\n"
"\t\t=) ((i++)); _xdp_rlctl_pin=${COMP_WORDS[i]} ;;\t# --pin-dir = DIR, as COMP_WORDBREAKS splits it\n"
"\t\t-*) ;;\n"
"\t\t*) words+=(\"$w\") ;;\n"
"\t\tesac\n"
"\tdone\n"
"\tif ((${#words[@]} == 0)); then\n"
"\t\tCOMPREPLY=($(compgen -W \"$_xdp_rlctl_commands\" -- \"$cur\"))\n"
"\t\treturn 0\n"
"\tfi\n"
"\tfirst=$(_xdp_rlctl_resolve_first \"${words[0]}\") || return 0\n"
"\t[[ -n $first ]] || return 0\n"
"\tcmd=$first\n"
"\tsubs=$(_xdp_rlctl_subs \"$first\")\n"
"\tif [[ -n $subs ]]; then\n"
"\t\tif ((${#words[@]} == 1)); then\n"
"\t\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
"\t\t\treturn 0\n"
"\t\tfi\n"
"\t\tw=$(_xdp_rlctl_resolve \"${words[1]}\" $subs)\n"
"\t\t[[ -n $w && $w != help ]] || return 0\n"
"\t\tcmd=\"$first $w\"\n"
"\t\tn=2\n"
"\tfi\n"
"\n"
"\t# the command's parameters: positionals in order, keywords once each\n"
"\tread -ra specs <<<\"$(_xdp_rlctl_params \"$cmd\")\"\n"
"\tfor p in \"${specs[@]}\"; do\n"
"\t\tif [[ ${p%%=*} == -* ]]; then\n"
"\t\t\tpos+=(\"$p\")\n"
"\t\telse\n"
"\t\t\tkws+=(\"$p\")\n"
"\t\t\tnames+=(\"${p%%=*}\")\n"
"\t\tfi\n"
"\tdone\n"
"\tfor ((i = n; i < ${#words[@]}; i++)); do\n"
"\t\tw=${words[i]}\n"
"\t\tif [[ -n $expect ]]; then\n"
"\t\t\texpect=\n"
"\t\t\tcontinue\n"
"\t\tfi\n"
"\t\tif ((ip < ${#pos[@]})) && [[ ${pos[ip]%%=*} == - ]]; then\n"
"\t\t\t((ip++))\n"
"\t\t\tcontinue\n"
"\t\tfi\n"
"\t\tk=$(_xdp_rlctl_resolve \"$w\" \"${names[@]}\")\n"
"\t\tif [[ -n $k ]]; then\n"
"\t\t\tused+=\"$k \"\n"
"\t\t\tip=${#pos[@]}\n"
"\t\t\tfor p in \"${kws[@]}\"; do\n"
"\t\t\t\t[[ ${p%%=*} == \"$k\" && ${p#*=} != flag ]] && expect=${p#*=}\n"
"\t\t\tdone\n"
"\t\telif ((ip < ${#pos[@]})); then\n"
"\t\t\t((ip++))\n"
"\t\tfi\n"
"\tdone\n"
"\n"
"\t# what may come at the cursor\n"
"\tif [[ -n $expect ]]; then\n"
"\t\t_xdp_rlctl_values \"$expect\" \"$cur\"\n"
"\t\treturn 0\n"
"\tfi\n"
"\tif ((ip < ${#pos[@]})); then\n"
"\t\t_xdp_rlctl_values \"${pos[ip]#*=}\" \"$cur\"\n"
"\t\t[[ ${pos[ip]%%=*} == - ]] && return 0\n"
"\tfi\n"
"\tfor k in \"${names[@]}\"; do\n"
"\t\t[[ $used == *\" $k \"* ]] || [[ $k != \"$cur\"* ]] || COMPREPLY+=(\"$k\")\n"
"\tdone\n"
"\treturn 0\n"
"}\n"
"complete -F _xdp_rlctl xdp-rlctl\n", stdout);
	return 0;
}
