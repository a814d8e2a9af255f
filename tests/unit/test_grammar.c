// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The grammar and the configuration checker, table-driven, without root and
 * without touching the system (make check):
 * - every command and keyword of the table parses (a row each, and a check
 *   that no keyword of the table is left without one);
 * - every error names the word it is about (its index in argv);
 * - the configuration checker reports FILE:LINE:COL;
 * - a rule printed by `rule list -j` parses back into the same rule;
 * - the usage text, the man pages and docs/cli.md agree with the table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <netinet/in.h>

#include "testlib.h"
#include "text/config.h"
#include "text/grammar.h"
#include "base/json.h"
#include "libxrl.h"
#include "xrl_meter.h"

#define CLI XRL_IN_CLI
#define CONF XRL_IN_CONFIG

struct pcase {
	const char *line;
	unsigned where;
	int argi;		/* -1: parses; else the word the error names */
	const char *msg;	/* a substring of the error */
};

static const struct pcase cases[] = {
	/* every command and keyword, valid */
	{ "attach dev eth1", CLI, -1 },
	{ "attach dev eth1 mode native keys 4096", CLI, -1 },
	{ "attach mode generic dev eth1", CLI, -1 },
	{ "attach dev eth1 mode auto", CLI, -1 },
	{ "attach dev eth1 hook tc", CLI, -1 },
	{ "attach dev eth1 hook tc first", CLI, -1 },
	{ "attach dev eth1 syn-verified 16", CLI, -1 },
	{ "attach dev eth1 syn-verified 16777216", CLI, -1 },
	{ "attach dev eth1 hook xdp mode generic", CLI, -1 },
	{ "detach dev eth1", CLI, -1 },
	{ "detach dev eth1 purge", CLI, -1 },
	{ "purge", CLI, -1 },
	{ "purge dev eth1", CLI, 1, "unknown argument 'dev'" },
	{ "purge", CONF, 0, "'purge' is not a configuration command" },
	{ "upgrade", CLI, -1 },
	{ "upgrade dev eth1", CLI, 1, "unknown argument 'dev'" },
	{ "upgrade", CONF, 0, "'upgrade' is not a configuration command" },
	{ "status", CLI, -1 },
	{ "status sample 1000", CLI, -1 },
	{ "status sample 0", CLI, -1 },
	{ "status sample 60001", CLI, 2, "60001" },
	{ "rule add 198.18.0.0/15 rate 100/s burst 20", CLI, -1 },
	/* sets: a rule that takes one, the set commands and their errors */
	{ "rule add @bogons action deny", CLI, -1 },
	{ "rule add @partners action allow", CONF, -1 },
	{ "rule add @NAME rate 10/s burst 5 per /24", CLI, -1 },
	{ "rule add @9x action deny", CLI, 2, "it begins with a letter" },
	{ "rule add @a/b action deny", CLI, 2, "letters, digits" },
	{ "rule add @ action deny", CLI, 2, "1 to 31 characters" },
	{ "rule add @abcdefghijabcdefghijabcdefghijab action deny", CLI, 2, "1 to 31 characters" },
	{ "rule add @s rate 1/s burst 1 per /48", CLI, 8, "at most /32" },
	{ "rule add @s rate 1/s burst 1 proto udp", CLI, 2, "a set rule takes no proto" },
	{ "set create bl", CLI, -1 },
	{ "set create tmp timeout 1h", CLI, -1 },
	{ "set create tmp timeout 90", CLI, -1 },
	{ "set create tmp timeout 1w", CLI, 4, "invalid duration" },
	{ "set create tmp timeout 0", CLI, 4, "1s .. 365d" },
	{ "set create 1st", CLI, 2, "begins with a letter" },
	{ "set add bl 198.18.0.0/15", CLI, -1 },
	{ "set add bl 2001:db8::/32 timeout 30m", CLI, -1 },
	{ "set add bl 198.18.0.1-198.18.0.9", CLI, -1 },
	{ "set add bl 198.18.0.9-198.18.0.1", CLI, 3, "first address is above its last" },
	{ "set add bl 198.18.0.1/15", CLI, 3, "host bits set" },
	{ "set add bl 198.18.0.1-2001:db8::1", CLI, 3, "an IPv4 and an IPv6 address" },
	{ "set add bl nonsense", CLI, 3, "invalid prefix" },
	{ "set del bl", CLI, -1 },
	{ "set del bl 198.18.0.0/15", CLI, -1 },
	{ "set list", CLI, -1 },
	{ "set show bl", CLI, -1 },
	{ "set flush bl", CLI, -1 },
	{ "set load bl /etc/xdp-rl/bl.netset", CLI, -1 },
	{ "set load", CLI, 2, "missing" },
	{ "set bl file /etc/xdp-rl/bl.netset", CONF, -1 },
	{ "set partners file p.txt timeout 1d", CONF, -1 },
	{ "set 9x file p.txt", CONF, 1, "begins with a letter" },
	{ "set bl file p.txt timeout 1w", CONF, 5, "invalid duration" },
	{ "set bl", CONF, 2, "missing" },
	{ "set bl file p.txt", CLI, 1, "unknown set command 'bl'" },
	{ "set create bl", CONF, 0, "'set create' is not a configuration command" },
	{ "rule add 198.18.0.0/24 rate 5/min burst 1 per /24 action limit id 7 on-failure closed", CLI, -1 },
	{ "rule add 2001:db8::/32 rate 1/h burst 1 per /48", CONF, -1 },
	{ "rule add 192.0.2.1 action allow", CLI, -1 },
	{ "rule add 192.0.2.0/24 action deny on-failure open", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 10/second burst 1", CLI, -1 },
	/* algorithms, byte rates, per-rule dry-run */
	{ "rule add 198.18.0.0/24 rate 10/s algo fixed-window", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 600/min algo sliding-window per /32", CONF, -1 },
	{ "rule add 198.18.0.0/24 rate 10/s burst 5 algo token-bucket dry-run", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 10mbit burst 64kb", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 2mbps burst 3000", CONF, -1 },
	{ "rule add 198.18.0.0/24 rate 1gbit algo sliding-window", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 10/s burst 5 algo fixed-window", CLI, 5, "'burst' belongs to the token bucket" },
	{ "rule add 198.18.0.0/24 rate 10/s burst 5 algo leaky", CLI, 8, "invalid algorithm 'leaky' (token-bucket, fixed-window, sliding-window)" },
	{ "rule add 198.18.0.0/24 action allow algo fixed-window", CLI, 5, "'algo' means nothing with action allow" },
	{ "rule add 198.18.0.0/24 rate 10/s burst 64kb", CLI, 6, "burst in bytes needs a byte rate" },
	{ "rule add 198.18.0.0/24 rate 10mbit burst 100", CLI, 6, "at least 1514 bytes" },
	{ "rule add 198.18.0.0/24 rate 10mbyte burst 64kb", CLI, 4, "invalid rate '10mbyte'" },
	{ "rule add 198.18.0.0/24 rate 10mbit burst 64kib", CLI, 6, "invalid burst '64kib'" },
	{ "rule add 198.18.0.0/24 rate 900mbit burst 64kb", CLI, 4, "between 1 byte/s and 100000000 bytes/s" },
	{ "rule add 198.18.0.0/24 rate 5000000000/min algo fixed-window", CLI, 4, "at most 4294967295 per window" },
	{ "rule add 198.18.0.0/24 rate 4294967295/min algo sliding-window", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 10kbit algo fixed-window", CLI, 4, "never passes a full-size frame" },
	/* endpoint rules */
	{ "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10", CLI, -1 },
	{ "rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies rate 100/s burst 100", CLI, -1 },
	{ "rule add ::/0 proto tcp dport 8000-8080 rate 100/s burst 100 syn-cookies", CONF, -1 },
	{ "rule add 0.0.0.0/0 syn-cookies rate 10/s burst 10", CLI, 3, "'syn-cookies' takes an endpoint rule" },
	{ "rule add 0.0.0.0/0 proto udp dport 53 syn-cookies rate 10/s burst 10", CLI, 7, "'syn-cookies' needs proto tcp" },
	{ "rule add 0.0.0.0/0 proto tcp dport 80 syn syn-cookies rate 10/s burst 10", CLI, 8, "leave out 'syn'" },
	{ "rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies action allow", CLI, 7, "means nothing with action allow" },
	{ "rule add 0.0.0.0/0 proto tcp syn-cookies rate 10/s burst 10", CLI, 5, "protects listening ports: give 'dport'" },
	{ "rule add 198.18.0.0/16 proto udp dport 53 rate 100/s burst 100 per /24", CONF, -1 },
	{ "rule add 198.18.0.0/16 proto udp dport 1000-2000 rate 100/s burst 100", CLI, -1 },
	{ "rule add 198.18.0.0/16 proto icmp rate 10/s burst 10", CLI, -1 },
	{ "rule add 2001:db8::/32 proto icmpv6 action deny", CLI, -1 },
	{ "rule add 198.18.0.0/16 proto 132 rate 10/s burst 10", CLI, -1 },
	{ "rule add 198.18.0.0/16 proto gre rate 10/s burst 10", CLI, 4, "invalid proto 'gre' (tcp, udp, icmp, icmpv6 or a protocol number" },
	{ "rule add 198.18.0.0/16 proto 256 rate 10/s burst 10", CLI, 4, "invalid proto '256'" },
	{ "rule add 198.18.0.0/16 dport 22 rate 10/s burst 10", CLI, 3, "'dport' makes an endpoint rule: it needs 'proto tcp'" },
	{ "rule add 198.18.0.0/16 proto icmp dport 22 rate 10/s burst 10", CLI, 5, "'dport' needs proto tcp or udp" },
	{ "rule add 198.18.0.0/16 proto udp syn rate 10/s burst 10", CLI, 5, "'syn' needs proto tcp" },
	{ "rule add 198.18.0.0/16 syn rate 10/s burst 10", CLI, 3, "'syn' makes an endpoint rule" },
	{ "rule add 198.18.0.0/16 proto tcp dport 2000-1000 rate 10/s burst 10", CLI, 6, "invalid dport '2000-1000'" },
	{ "rule add 198.18.0.0/16 proto tcp dport 65536 rate 10/s burst 10", CLI, 6, "invalid dport '65536'" },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 aggregate 50000/s", CLI, -1 },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 aggregate 50000/s burst 900 new-keys 100/s", CONF, -1 },
	{ "rule add 198.18.0.0/16 rate 100/s aggregate 5/s burst 9 burst 10", CLI, -1 },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 new-keys 10/min", CLI, -1 },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 aggregate 5/s burst", CLI, 9, "missing value after 'aggregate burst'" },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 aggregate 5/s burst 0", CLI, 10, "invalid aggregate burst '0'" },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 aggregate 5/x", CLI, 8, "invalid aggregate rate '5/x'" },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 new-keys 0/s", CLI, 8, "new-keys rate must be at least 1" },
	{ "rule add 198.18.0.0/16 rate 100/s burst 10 new-keys 1000000000/s", CLI, 8, "new-keys rate must be between" },
	{ "rule add 198.18.0.0/16 action deny new-keys 5/s", CLI, 5, "'new-keys' means nothing with action deny" },
	{ "rule add 198.18.0.0/16 action allow aggregate 5/s", CLI, 5, "'aggregate' means nothing with action allow" },
	{ "rule add 198.18.0.0/16 proto udp dport 53 rate 10/s burst 10 slip 2", CLI, -1 },
	{ "rule add 2001:db8::/32 proto udp rate 10/s burst 10 slip 0", CONF, -1 },
	{ "rule add 198.18.0.0/16 proto udp dport 53 rate 10/s burst 10 slip 100", CLI, -1 },
	{ "rule add 198.18.0.0/16 proto udp dport 53 rate 10/s burst 10 slip 101", CLI, 12, "invalid slip '101'" },
	{ "rule add 198.18.0.0/16 proto udp dport 53 rate 10/s burst 10 slip -1", CLI, 12, "invalid slip '-1'" },
	{ "rule add 198.18.0.0/16 proto tcp dport 53 rate 10/s burst 10 slip 2", CLI, 11, "'slip' needs proto udp" },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 slip 2", CLI, 7, "'slip' needs proto udp" },
	{ "rule add 198.18.0.0/16 proto udp action deny slip 1", CLI, 7, "'slip' means nothing with action deny" },
	{ "rule del 3", CLI, -1 },
	{ "rule del 198.18.0.0/24", CLI, -1 },
	{ "rule del id 3", CLI, -1 },
	{ "rule list", CLI, -1 },
	{ "rule list config", CLI, -1 },
	{ "rule list c", CLI, -1 },
	{ "rule flush", CLI, -1 },
	{ "mode", CLI, -1 },
	{ "mode set enforce", CONF, -1 },
	{ "mode set dry-run", CLI, -1 },
	{ "mode set fail-open", CLI, -1 },
	{ "mode set fail-closed", CLI, -1 },
	{ "stats", CLI, -1 },
	{ "show 198.18.0.1", CLI, -1 },
	{ "show 2001:db8::1", CLI, -1 },
	{ "top", CLI, -1 },
	{ "top count 3", CLI, -1 },
	{ "replay flood.pcap", CLI, -1 },
	{ "replay flood.pcapng config /etc/xdp-rl/rules.conf", CLI, -1 },
	{ "capture drops.pcapng", CLI, -1 },
	{ "capture - count 100 seconds 10 verdict any rule 3 key 198.18.0.0/24 snaplen 128 format pcap", CLI, -1 },
	{ "capture f key 2001:db8::1 verdict pass format pcapng", CLI, -1 },
	{ "top sample 100", CLI, -1 },
	{ "top watch", CLI, -1 },
	{ "top count 5 sample 500 watch", CLI, -1 },
	{ "top rule 3", CLI, -1 },
	{ "top watch rule 3", CLI, -1 },
	{ "suggest", CLI, -1 },
	{ "suggest rule 1 seconds 30 percentile 99 headroom 100", CLI, -1 },
	{ "suggest headroom 0 seconds 86400", CLI, -1 },
	{ "suggest from 127.0.0.1:9437 rule 2 percentile 90", CLI, -1 },
	{ "suggest from [::1]:9437", CLI, -1 },
	{ "key list", CLI, -1 },
	{ "key list rule 3 limited", CLI, -1 },
	{ "key reset 198.18.0.1", CLI, -1 },
	{ "key del 2001:db8::1", CLI, -1 },
	{ "events", CLI, -1 },
	{ "events count 3 timeout 10", CLI, -1 },
	{ "help", CLI, -1 },
	{ "help rule", CLI, -1 },
	{ "interface eth1", CONF, -1 },
	{ "interface eth1 mode native", CONF, -1 },
	{ "interface eth1 hook tc", CONF, -1 },
	{ "interface eth1 hook tc first", CONF, -1 },
	{ "heartbeat 1000", CONF, -1 },
	{ "watchdog 0", CONF, -1 },
	{ "metrics 127.0.0.1:9437", CONF, -1 },
	{ "fleet redis 198.18.10.1:6379,198.18.10.2:6379 cluster sync 50 timeout 5", CONF, -1 },
	{ "fleet host h1", CONF, -1 },
	{ "fleet auth /etc/xdp-rl/redis.auth", CONF, -1 },
	{ "rule add 198.18.0.0/24 rate 5/s burst 1 scope fleet", CLI, -1 },
	{ "rule add 198.18.0.0/24 rate 5/s burst 1 scope host", CONF, -1 },
	{ "rule add 198.18.0.0/24 action deny scope fleet", CLI, 5, "'scope fleet' means nothing with action deny" },
	{ "rule add 198.18.0.0/24 rate 5/s algo fixed-window scope fleet", CLI, 7, "'scope fleet' takes a token bucket" },
	{ "rule add 198.18.0.0/24 proto udp rate 5/s burst 1 scope fleet", CLI, 9, "'scope fleet' takes a source rule" },
	{ "rule add 198.18.0.0/24 rate 10mbit burst 64kb scope fleet", CLI, 7, "'scope fleet' counts packets" },
	{ "rule add 198.18.0.0/24 rate 5/s burst 1 scope world", CLI, 8, "invalid scope 'world' (host, fleet)" },
	{ "fleet redis 198.18.10.1:6379 sync 5", CONF, 4, "invalid sync '5'" },
	{ "fleet redis 198.18.10.1:6379 timeout 0", CONF, 4, "invalid timeout '0'" },
	{ "fleet redis 198.18.10.1:6379 hosts 8", CONF, -1 },
	{ "fleet redis 198.18.10.1:6379 hosts 0", CONF, 4, "invalid hosts '0'" },
	{ "fleet redis", CONF, 2, "missing HOST:PORT[,HOST:PORT...]" },
	{ "crowdsec http://127.0.0.1:8080 key-file /etc/xdp-rl/crowdsec.key poll 5000 timeout 1000", CONF, -1 },
	{ "crowdsec http://127.0.0.1:8080 key-file k poll 50", CONF, 5, "invalid poll '50'" },
	{ "crowdsec http://127.0.0.1:8080 key-file k timeout 5", CONF, 5, "invalid timeout '5'" },
	{ "crowdsec http://127.0.0.1:8080 key-file k max-body 16", CONF, -1 },
	{ "crowdsec http://127.0.0.1:8080 key-file k max-body 0", CONF, 5, "invalid max-body '0'" },
	{ "crowdsec http://127.0.0.1:8080", CONF, 2, "missing 'key-file FILE'" },
	{ "crowdsec", CLI, 0, "it belongs in xdp-rl.conf" },
	{ "metrics [::1]:9437", CONF, -1 },
	{ "metrics off", CONF, -1 },

	/* bans */
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 per /24 ban 10m", CLI, -1 },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 ban 10m after 3 ban-max 1d", CONF, -1 },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 after 3", CLI, 7, "'after' belongs to 'ban DURATION'" },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 ban-max 1h", CLI, 7, "'ban-max' belongs to 'ban DURATION'" },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 ban 1h ban-max 10m", CLI, 7, "'ban-max' is shorter than 'ban'" },
	{ "rule add 198.18.0.0/16 action allow ban 1h", CLI, 5, "'ban' needs action limit" },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 ban 1h after 0", CLI, 10, "invalid offences '0'" },
	{ "rule add 198.18.0.0/16 rate 10/s burst 10 ban 1w", CLI, 8, "invalid duration '1w'" },
	{ "attach dev eth1 bans 1024", CLI, -1 },
	{ "attach dev eth1 bans 8", CLI, 4, "invalid bans '8'" },
	{ "ban add 198.51.100.7", CLI, -1 },
	{ "ban add 198.51.100.0/24 for 10m reason scanning", CLI, -1 },
	{ "ban add 2001:db8::/32 for 2d by fail2ban", CLI, -1 },
	{ "ban add 198.51.100.7 for 1h scope fleet", CLI, -1 },
	{ "ban add 198.51.100.7 for 1h scope fleet by fail2ban", CLI, 8, "'by' and 'scope fleet' do not go together" },
	{ "ban add 198.51.100.7 scope world", CLI, 4, "invalid scope 'world' (host, fleet)" },
	{ "ban add 0.0.0.0/0 for 90", CONF, -1 },
	{ "ban add 198.51.100.7 reason ssh brute force for 1h", CLI, 5, "unknown argument 'brute'" },
	{ "ban add 198.51.100.7 for 0", CLI, 4, "invalid duration '0'" },
	{ "ban add 198.51.100.7 for 367d", CLI, 4, "too long" },
	{ "ban add 198.51.100.7 for 10x", CLI, 4, "invalid duration '10x'" },
	{ "ban add 198.51.100.7 for", CLI, 3, "missing value after 'for'" },
	{ "ban add 198.51.100.1/24", CLI, 2, "host bits set" },
	{ "ban add 198.51.100.7 by Fail2ban", CLI, 4, "a-z, 0-9" },
	{ "ban add 198.51.100.7 by averyveryverylongname", CLI, 4, "is too long" },
	{ "ban add 198.51.100.7 reason 0123456789012345678901234567890123456789012345678901234567890123", CLI, 4, "reason '0123" },
	{ "ban add", CLI, 2, "missing PREFIX" },
	{ "ban del 198.51.100.0/24", CLI, -1 },
	{ "ban del 198.51.100.0/24 by crowdsec", CLI, -1 },
	{ "ban del 198.51.100.0/24", CONF, 0, "'ban del' is not a configuration command" },
	{ "ban list", CLI, -1 },
	{ "ban flush", CLI, -1 },
	{ "ban flush by crowdsec", CLI, -1 },
	{ "ban frob", CLI, 1, "unknown ban command 'frob' (add, del, list, flush)" },

	/* errors, each naming its word */
	{ "top sample 5", CLI, 2, "invalid sample '5': out of range (milliseconds, 10 .. 60000)" },
	{ "top watch watch", CLI, 2, "'watch' given twice" },
	{ "key", CLI, 1, "missing key command (list, reset, del)" },
	{ "key frob", CLI, 1, "unknown key command 'frob' (list, reset, del)" },
	{ "key list rule 0", CLI, 3, "invalid rule id '0'" },
	{ "key list limited 3", CLI, 3, "unknown argument '3' (rule, limited)" },
	{ "key list", CONF, 0, "'key list' is not a configuration command" },
	{ "key reset", CLI, 2, "missing ADDR" },
	{ "key del 198.18.0.0/24", CLI, 2, "invalid address '198.18.0.0/24'" },
	{ "key reset 192.0.2.1 192.0.2.2", CLI, 3, "unknown argument '192.0.2.2'" },
	{ "", CLI, 0, "missing command" },
	{ "frobnicate", CLI, 0, "unknown command 'frobnicate'" },
	{ "interface eth1", CLI, 0, "it belongs in xdp-rl.conf" },
	{ "attach dev eth1", CONF, 0, "'attach' is not a configuration command (rule add, mode set, ban add, set, interface, heartbeat, watchdog, metrics, fleet redis, fleet host, fleet auth, crowdsec)" },
	{ "rule del 3", CONF, 0, "'rule del' is not a configuration command" },
	{ "attach", CLI, 1, "missing 'dev IFACE'" },
	{ "attach dev", CLI, 1, "missing value after 'dev'" },
	{ "attach dev eth1 mode fast", CLI, 4, "invalid XDP mode 'fast' (native, generic, auto)" },
	{ "attach dev eth1 keys 8", CLI, 4, "invalid keys '8': out of range (16 .. 1073741824)" },
	{ "attach dev eth1 hook ebpf", CLI, 4, "invalid hook 'ebpf' (xdp, tc)" },
	{ "attach dev eth1 hook tc mode native", CLI, 5, "mode is an XDP mode: hook tc has none" },
	{ "attach dev eth1 first", CLI, 3, "first is the tcx chain's order: it needs hook tc" },
	{ "attach dev eth1 syn-verified 15", CLI, 4, "invalid syn-verified '15': out of range (16 .. 16777216)" },
	{ "attach dev eth1 syn-verified 16777217", CLI, 4, "invalid syn-verified '16777217': out of range (16 .. 16777216)" },
	{ "attach dev eth1 syn-verified lots", CLI, 4, "invalid syn-verified 'lots'" },
	{ "attach dev eth1 hook xdp first", CLI, 5, "first is the tcx chain's order: it needs hook tc" },
	{ "attach dev eth1 keys +100", CLI, 4, "no sign allowed" },
	{ "attach dev eth1 keys 1e3", CLI, 4, "not a decimal number" },
	{ "attach dev eth1 keys 04096", CLI, 4, "no leading zeros allowed" },
	{ "rule add 198.18.0.0/024 rate 1/s burst 1", CLI, 2, "no leading zeros allowed" },
	{ "attach dev eth1 dev eth2", CLI, 3, "'dev' given twice" },
	{ "attach dev abcdefghijklmnopq", CLI, 2, "interface name 'abcdefghijklmnopq' is too long" },
	{ "detach dev eth1 purge now", CLI, 4, "unknown argument 'now' (dev, purge)" },
	{ "rule", CLI, 1, "missing rule command (add, del, list, flush)" },
	{ "rule lsit", CLI, 1, "unknown rule command 'lsit' (add, del, list, flush); did you mean 'list'?" },
	{ "rule add", CLI, 2, "missing PREFIX" },
	{ "rule add 198.18.0.1/24 rate 1/s burst 1", CLI, 2, "host bits set (did you mean 198.18.0.0/24?)" },
	{ "rule add 198.18.0.0/+24 rate 1/s burst 1", CLI, 2, "no sign allowed" },
	{ "rule add ::ffff:198.18.0.1 rate 1/s burst 1", CLI, 2, "did you mean 198.18.0.1?" },
	{ "rule add 198.18.0.0/24 rate 1/s", CLI, 5, "missing 'burst N'" },
	{ "rule add 198.18.0.0/24 burst 1", CLI, 5, "missing 'rate N/s|N/min|N/h'" },
	{ "rule add 198.18.0.0/24 rate 1/s brust 1", CLI, 5, "unknown argument 'brust' (rate, burst, per, action, id, on-failure, algo, dry-run, proto, dport, syn, scope, aggregate, new-keys, syn-cookies, ban, after, ban-max, slip)" },
	{ "rule add 198.18.0.0/24 rate 1/fortnight burst 1", CLI, 4, "invalid rate '1/fortnight'" },
	{ "rule add 198.18.0.0/24 rate 0/s burst 1", CLI, 4, "rate must be at least 1" },
	{ "rule add 198.18.0.0/24 burst 1 rate 200000000/s", CLI, 6, "rate must be between 1/h and 100000000/s" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 0", CLI, 6, "burst must be at least 1" },
	{ "rule add 198.18.0.0/24 burst 0 rate 1/s", CLI, 4, "burst must be at least 1" },
	{ "rule add 198.18.0.0/24 rate 1/h burst 4294967295", CLI, 6, "takes too long to refill" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 1 per /16", CLI, 8, "key length /16 is shorter than the prefix" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 1 per /33", CLI, 8, "key length /33 is longer than an IPv4 address" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 1 per 24", CLI, 8, "invalid key length '24' (/LEN)" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 1 per /0", CLI, 8, "key length /0" },
	{ "rule add 198.18.0.0/24 action block", CLI, 4, "invalid action 'block' (limit, allow, deny)" },
	{ "rule add 198.18.0.0/24 action allow id 0", CLI, 6, "invalid id '0': out of range" },
	{ "rule add 198.18.0.0/24 action deny on-failure maybe", CLI, 6, "invalid on-failure 'maybe' (open, closed)" },
	{ "rule add 198.18.0.0/24 rate 1/s rate 2/s burst 1", CLI, 5, "'rate' given twice" },
	{ "rule add 198.18.0.0/24 rate", CLI, 3, "missing value after 'rate'" },
	{ "rule del", CLI, 2, "missing ID|PREFIX" },
	{ "rule del +1", CLI, 2, "invalid rule id '+1': no sign allowed" },
	{ "rule del id +1", CLI, 3, "invalid rule id '+1': no sign allowed" },
	{ "rule del id 198.18.0.0/24", CLI, 3, "invalid rule id '198.18.0.0/24'" },
	{ "rule del id", CLI, 2, "missing value after 'id'" },
	{ "rule del 3 id 3", CLI, 3, "the rule is named twice" },
	{ "rule del 198.18.0.0/24 id 3", CLI, 3, "the rule is named twice" },
	{ "rule del 1 2", CLI, 3, "unknown argument '2'" },
	{ "rule list all", CLI, 2, "unknown argument 'all'" },
	{ "mode", CONF, 0, "'mode' is not a configuration command" },
	{ "mode sett enforce", CLI, 1, "unknown mode command 'sett' (set); did you mean 'set'?" },
	{ "mode set", CLI, 2, "missing mode (enforce, dry-run, fail-open, fail-closed)" },
	{ "mode set panic", CLI, 2, "invalid mode 'panic' (enforce, dry-run, fail-open, fail-closed)" },
	{ "show", CLI, 1, "missing ADDR" },
	{ "show 198.18.0", CLI, 1, "'198.18.0'" },
	{ "top count", CLI, 1, "missing value after 'count'" },
	{ "replay", CLI, 1, "missing" },
	{ "replay f.pcap config", CLI, 2, "missing value after 'config'" },
	{ "replay f.pcap", CONF, 0, "" },
	{ "capture", CLI, 1, "missing" },
	{ "capture f verdict dropped", CLI, 3, "invalid verdict 'dropped' (drop, pass, any)" },
	{ "capture f key 198.18.0.300", CLI, 3, "invalid prefix '198.18.0.300'" },
	{ "capture f snaplen 10", CLI, 3, "invalid snaplen '10': out of range (64 .. 4096)" },
	{ "capture f format pcapx", CLI, 3, "invalid format 'pcapx' (pcapng, pcap)" },
	{ "capture f count 0", CLI, 3, "out of range (1 .. 100000000)" },
	{ "capture f", CONF, 0, "" },
	{ "top count 0", CLI, 2, "invalid count '0': out of range (1 .. 1000000)" },
	{ "top 5", CLI, 1, "unknown argument '5' (count, sample, watch, rule)" },
	{ "top rule 0", CLI, 2, "invalid rule id '0': out of range (1 .. 4294967295)" },
	{ "suggest seconds 0", CLI, 2, "invalid seconds '0': out of range (1 .. 86400)" },
	{ "suggest seconds 86401", CLI, 2, "out of range (1 .. 86400)" },
	{ "suggest percentile 101", CLI, 2, "invalid percentile '101': out of range (1 .. 100)" },
	{ "suggest headroom 1.5", CLI, 2, "invalid headroom '1.5'" },
	{ "suggest 95", CLI, 1, "unknown argument '95' (rule, seconds, percentile, headroom, from)" },
	{ "suggest from localhost:9437", CLI, 2, "invalid daemon's metrics address 'localhost:9437'" },
	{ "suggest from off", CLI, 2, "'from off': from takes the daemon's metrics address" },
	{ "suggest from 127.0.0.1:9437 seconds 5", CLI, 3, "'seconds' means nothing with 'from'" },
	{ "suggest rule 1", CONF, 0, "" },
	{ "events timeout 0", CLI, 2, "invalid timeout '0': out of range (1 .. 86400)" },
	{ "events count 2000000", CLI, 2, "invalid count '2000000': out of range (1 .. 1000000)" },
	{ "events", CONF, 0, "'events' is not a configuration command" },
	{ "help abcdefghijklmnopqrstuvwxyz0123456789", CLI, 1, "command 'abcdefghijklmnopqrstuvwxyz0123456789' is too long" },
	{ "interface", CONF, 1, "missing IFACE" },
	{ "interface eth1 mode fast", CONF, 3, "invalid XDP mode 'fast'" },
	{ "interface eth1 mode generic hook tc", CONF, 2, "mode is an XDP mode: hook tc has none" },
	{ "interface eth1 first", CONF, 2, "first is the tcx chain's order: it needs hook tc" },
	{ "heartbeat 5", CONF, 1, "invalid heartbeat '5': out of range (milliseconds, 10 .. 3600000)" },
	{ "heartbeat", CONF, 1, "missing MS" },
	{ "watchdog soon", CONF, 1, "invalid watchdog 'soon': not a decimal number" },
	{ "watchdog 10 20", CONF, 2, "unknown argument '20'" },
	{ "metrics 127.0.0.1", CONF, 1, "invalid metrics address '127.0.0.1' (ADDR:PORT or off)" },
	{ "metrics 127.0.0.1:+9437", CONF, 1, "invalid metrics address" },

	/* shortened words: an ambiguous prefix lists the candidates */
	{ "mode set fail", CLI, 2, "ambiguous mode 'fail' (fail-open, fail-closed)" },
	{ "mode set f", CLI, 2, "ambiguous mode 'f' (fail-open, fail-closed)" },
	{ "mode set fail", CLI, 2, "ambiguous mode 'fail' (fail-open, fail-closed)" },
	{ "attach dev eth1 mode n keys 4096 d eth2", CLI, 7, "'dev' given twice" },
	/* an unknown word: did you mean, from the table */
	{ "stauts", CLI, 0, "unknown command 'stauts'; did you mean 'status' or 'stats'?" },
	{ "atach dev eth1", CLI, 0, "unknown command 'atach'; did you mean 'attach'?" },
	{ "frobnicate", CLI, 0, "unknown command 'frobnicate'" },
	{ "rule add 198.18.0.0/24 rate 1/s brust 1", CLI, 5, "; did you mean 'burst'?" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 1 actoin deny", CLI, 7, "did you mean 'action'?" },
	{ "mode set dryrun", CLI, 2, "invalid mode 'dryrun' (enforce, dry-run, fail-open, fail-closed); did you mean 'dry-run'?" },
	{ "rule add 198.18.0.0/24 action alow", CLI, 4, "did you mean 'allow'?" },
	{ "help rulr", CLI, 1, "unknown command 'rulr'; did you mean 'rule'?" },
	{ "help inter", CLI, 1, "unknown command 'inter'" },
	{ "help interface", CLI, 1, "it belongs in xdp-rl.conf" },
	/* the configuration file is strict: full words only, hints still */
	{ "rule add 198.18.0.0/24 ra 1/s burst 1", CONF, 3, "unknown argument 'ra'" },
	{ "rule add 198.18.0.0/24 rate 1/s burst 1 action d", CONF, 8, "invalid action 'd'" },
	{ "mode set dry", CONF, 2, "invalid mode 'dry'" },
	{ "mode s enforce", CONF, 1, "unknown mode command 's'" },
	{ "rul add 198.18.0.0/24 rate 1/s burst 1", CONF, 0, "unknown command 'rul'; did you mean 'rule'?" },
	{ "int eth1", CONF, 0, "unknown command 'int'" },
	{ "heartbeet 100", CONF, 0, "did you mean 'heartbeat'?" },
	{ "rule help", CONF, 1, "unknown rule command 'help' (add)" },
	{ "rule add help", CONF, 2, "invalid prefix 'help'" },
	/* help after a command: nothing may follow */
	{ "rule help list", CLI, 2, "unexpected 'list' after help" },
	{ "rule add help 198.18.0.0/24", CLI, 3, "unexpected '198.18.0.0/24' after help" },
	/* a word the action makes meaningless is refused, not ignored */
	{ "rule add 192.0.2.0/24 action allow rate 1/s", CLI, 5, "'rate' means nothing with action allow: an allow rule is never metered" },
	{ "rule add 192.0.2.0/24 burst 5 action deny", CLI, 3, "'burst' means nothing with action deny" },
	{ "rule add 192.0.2.0/24 action allow per /32", CLI, 5, "'per' means nothing with action allow" },
	{ "rule add 192.0.2.0/24 action allow on-failure closed", CLI, 5, "'on-failure' means nothing with action allow" },
	{ "rule add 192.0.2.0/24 per /24 rate 1/s action deny", CONF, 3, "'per' means nothing with action deny" },
	{ "rule add 192.0.2.0/24 action allow rate 1/s burst 1", CONF, 5, "leave out rate, burst and per, or use action limit" },
	/* what the daemon cannot bind is refused where it is written */
	{ "metrics localhost:9437", CONF, 1, "names are not resolved: did you mean 127.0.0.1:9437?" },
	{ "metrics prometheus.example:9437", CONF, 1, "ADDR is an IP address" },
	{ "metrics ::1:9437", CONF, 1, "an IPv6 address is written in brackets: [::1]:9437" },
	{ "metrics [127.0.0.1]:9437", CONF, 1, "ADDR is an IP address" },
};

static int parse(const char *line, unsigned where, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	return xrl_cmd_parse_line(line, where, c, e);
}

static void test_parse_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *t = &cases[i];
		struct xrl_parse_err e;
		struct xrl_cmd c;
		int err = parse(t->line, t->where, &c, &e);

		if (t->argi < 0) {
			CHECK(!err, "'%s': %s", t->line, e.msg);
			continue;
		}
		CHECK(err, "'%s' parsed", t->line);
		CHECK(e.argi == t->argi, "'%s': blames word %d, not %d (%s)", t->line, e.argi,
		      t->argi, e.msg);
		CHECK(strstr(e.msg, t->msg), "'%s': '%s' does not say '%s'", t->line, e.msg, t->msg);
	}
}

/* No command or keyword of the table is without a valid row above. */
/* Durations and times left, as bans and rules that ban write them. */
static void test_ban_values(void)
{
	static const struct { const char *s; __u64 secs; } ok[] = {
		{ "90", 90 }, { "90s", 90 }, { "10m", 600 }, { "2h", 7200 }, { "7d", 604800 },
		{ "366d", 366 * 86400ULL },
	};
	static const char *const bad[] = { "", "0", "0s", "1w", "-5", "+5", "5 s", "s", "367d",
					   "31622401", "99999999999999999999" };
	char buf[32];
	__u64 v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(!xrl_duration_parse(ok[i].s, XRL_BAN_MAX_S, &v) && v == ok[i].secs,
		      "'%s': %llu", ok[i].s, (unsigned long long)v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(xrl_duration_parse(bad[i], XRL_BAN_MAX_S, &v) == -EINVAL, "'%s' accepted", bad[i]);
	xrl_duration_format(600, buf, sizeof(buf));
	CHECK(!strcmp(buf, "10m"), "600 s: %s", buf);
	xrl_duration_format(90000, buf, sizeof(buf));
	CHECK(!strcmp(buf, "25h"), "90000 s: %s", buf);
	xrl_duration_format(61, buf, sizeof(buf));
	CHECK(!strcmp(buf, "61s"), "61 s: %s", buf);
	xrl_left_format(599500000000ULL, buf, sizeof(buf));
	CHECK(!strcmp(buf, "10m"), "599.5 s left: %s", buf);
	xrl_left_format(3723000000000ULL, buf, sizeof(buf));
	CHECK(!strcmp(buf, "1h2m"), "3723 s left: %s", buf);
	xrl_left_format(1, buf, sizeof(buf));
	CHECK(!strcmp(buf, "1s"), "1 ns left: %s", buf);
	CHECK(!xrl_ban_reason_check("ssh brute force, 5 tries"), "a reason with spaces");
	CHECK(xrl_ban_reason_check("tab\there") == -EINVAL, "a control byte");
	CHECK(xrl_ban_reason_check("caf\xc3\xa9") == -EINVAL, "not ASCII");
	CHECK(!xrl_ban_who_check("fail2ban") && !xrl_ban_who_check("crowd-sec_1.x"), "decider names");
	CHECK(xrl_ban_who_check("") == -EINVAL && xrl_ban_who_check("a b") == -EINVAL, "bad names");
}

static void test_table_covered(void)
{
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const struct xrl_command *cmd = &xrl_commands[i];
		size_t nl = strlen(cmd->name);
		bool seen = false;

		for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
			seen |= cases[j].argi < 0 && !strncmp(cases[j].line, cmd->name, nl) &&
				(!cases[j].line[nl] || cases[j].line[nl] == ' ');
		CHECK(seen, "command '%s' has no valid case", cmd->name);
		for (const struct xrl_param *p = cmd->params; p && (p->name || p->meta || p->words); p++) {
			char kw[64];

			if (!p->name)
				continue;
			snprintf(kw, sizeof(kw), " %s ", p->name);
			seen = false;
			for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
				char line[300];

				snprintf(line, sizeof(line), "%s ", cases[j].line);
				seen |= cases[j].argi < 0 && !strncmp(line, cmd->name, nl) &&
					strstr(line + nl, kw);
			}
			CHECK(seen, "keyword '%s' of '%s' has no valid case", p->name, cmd->name);
		}
	}
}

/* A shortened line parses as its full form does, on the CLI only: the
 * grammar's words (commands, sub-commands, keywords, enum words) may be
 * shortened to an unambiguous prefix, never the values. */
static void test_prefixes(void)
{
	static const struct { const char *shortened, *full; } cases[] = {
		{ "r l", "rule list" },
		{ "rule ad 198.18.0.0/24 rate 1/s burst 1", "rule add 198.18.0.0/24 rate 1/s burst 1" },
		{ "ru a 198.18.0.0/24 ra 5/min b 3 p /24 a l i 7 o c",
		  "rule add 198.18.0.0/24 rate 5/min burst 3 per /24 action limit id 7 on-failure closed" },
		{ "r a 192.0.2.1 ac al", "rule add 192.0.2.1 action allow" },
		{ "r a 192.0.2.1 ac de on-failure op", "rule add 192.0.2.1 action deny on-failure open" },
		/* a later keyword never takes an older one's prefix */
		{ "r a 198.18.0.0/24 ra 1/s b 1 ag 5/s b 7 n 1/s",
		  "rule add 198.18.0.0/24 rate 1/s burst 1 aggregate 5/s burst 7 new-keys 1/s" },
		{ "r d 3", "rule del 3" },
		{ "r d i 3", "rule del id 3" },
		{ "r f", "rule flush" },
		/* rule is preferred: "r" is not replay's */
		{ "re c.pcap c r.conf", "replay c.pcap config r.conf" },
		{ "rep c.pcap", "replay c.pcap" },
		{ "statu", "status" },
		{ "stats", "stats" },
		/* status is the table's preferred word: it wins what it shares
		 * with stats and show, as ip's and bpftool's first match does */
		{ "st", "status" },
		{ "stat", "status" },
		{ "s", "status" },
		{ "sh 198.18.0.1", "show 198.18.0.1" },
		{ "t c 3", "top count 3" },
		{ "m", "mode" },
		{ "mode s dry", "mode set dry-run" },
		{ "m s fail-c", "mode set fail-closed" },
		{ "mo se e", "mode set enforce" },
		{ "at d eth1 m n k 4096", "attach dev eth1 mode native keys 4096" },
		{ "att dev eth1 mode g", "attach dev eth1 mode generic" },
		{ "de d eth1 p", "detach dev eth1 purge" },
		{ "h", "help" },
		{ "help r", "help rule" },
		{ "he sh", "help show" },
		/* "help" after a command, at every level */
		{ "rule help", "help rule" },
		{ "r h", "help rule" },
		{ "mode help", "help mode" },
		{ "top help", "help top" },
		/* values are never completed: "d" is an interface here */
		{ "attach dev d", "attach dev d" },
	};
	static const char *const strict[] = {
		"r l", "rule a 198.18.0.0/24 rate 1/s burst 1", "mode s enforce", "mode set enf",
		"rule add 198.18.0.0/24 rate 1/s bur 1", "interf eth1", "he 100", "metr off",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xrl_parse_err e1, e2;
		struct xrl_cmd a, b;
		int err1 = parse(cases[i].shortened, CLI, &a, &e1);
		int err2 = parse(cases[i].full, CLI, &b, &e2);

		CHECK(!err1 && !err2, "'%s': %s / '%s': %s", cases[i].shortened, e1.msg,
		      cases[i].full, e2.msg);
		if (!err1 && !err2)
			CHECK(!memcmp(&a, &b, sizeof(a)), "'%s' does not parse as '%s'",
			      cases[i].shortened, cases[i].full);
	}
	/* the configuration file takes full words only */
	for (size_t i = 0; i < sizeof(strict) / sizeof(strict[0]); i++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		CHECK(parse(strict[i], CONF, &c, &e), "'%s' parsed in a configuration file", strict[i]);
	}
}

/* An exact word wins over a prefix of a longer one; words with the same
 * value (aliases) are no ambiguity. */
static void test_word_match(void)
{
	static const struct xrl_word w[] = {
		{ "set", 1 }, { "settle", 2 }, { "sets", 3 }, { "stop", 4 }, { "halt", 4 }, { "hal", 4 },
		{ NULL, 0 },
	};
	long long v = 0;

	CHECK(xrl_word_match(w, "set", true, &v) == 0 && v == 1, "exact 'set' wins: %lld", v);
	CHECK(xrl_word_match(w, "sett", true, &v) == 0 && v == 2, "sett");
	CHECK(xrl_word_match(w, "se", true, &v) == -ENOTUNIQ, "se is ambiguous");
	CHECK(xrl_word_match(w, "s", true, &v) == -ENOTUNIQ, "s is ambiguous");
	CHECK(xrl_word_match(w, "st", true, &v) == 0 && v == 4, "st");
	CHECK(xrl_word_match(w, "ha", true, &v) == 0 && v == 4, "ha: two names, one value");
	CHECK(xrl_word_match(w, "sett", false, &v) == -EINVAL, "no prefixes when strict");
	CHECK(xrl_word_match(w, "", true, &v) == -EINVAL, "the empty word");
	CHECK(xrl_word_match(w, "settles", true, &v) == -EINVAL, "longer than a word");
	/* and in the table: a full word keeps its meaning */
	CHECK(xrl_word_match(xrl_rate_unit_words, "s", false, &v) == 0 && v == XRL_PERIOD_SEC, "s");
	CHECK(xrl_edit_distance("brust", "burst") == 1, "a transposition is one edit");
	CHECK(xrl_edit_distance("stauts", "status") == 1, "stauts");
	CHECK(xrl_edit_distance("", "id") == 2, "empty");
}

/* help at every level names its topic: the command's own words */
static void test_help_topics(void)
{
	static const struct { const char *line, *topic; } cases[] = {
		{ "help", "" }, { "help rule", "rule" }, { "help ru", "rule" }, { "rule help", "rule" },
		{ "rule add help", "rule add" }, { "r a help", "rule add" }, { "rule del help", "rule del" },
		{ "mode help", "mode" }, { "mode set help", "mode set" }, { "attach help", "attach" },
		{ "status help", "status" }, { "help help", "help" }, { "top help", "top" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		if (parse(cases[i].line, CLI, &c, &e)) {
			CHECK(0, "'%s': %s", cases[i].line, e.msg);
			continue;
		}
		CHECK(c.kind == XRL_CMD_HELP, "'%s' is no help", cases[i].line);
		CHECK(!strcmp(c.help.topic, cases[i].topic), "'%s': topic '%s', not '%s'", cases[i].line,
		      c.help.topic, cases[i].topic);
		/* and every topic has something to show */
		FILE *f = fopen("/dev/null", "w");

		CHECK(xrl_usage(f, CLI, c.help.topic[0] ? c.help.topic : NULL) == 0, "usage of '%s'", c.help.topic);
		fclose(f);
	}
}

/* Every enum word parses to its value and prints back as itself. */
static void test_words(void)
{
	const struct xrl_word *tables[] = {
		xrl_xdp_mode_words, xrl_action_words, xrl_mode_words, xrl_on_failure_words,
		xrl_rate_unit_words,
	};

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (const struct xrl_word *w = tables[t]; w->name; w++) {
			long long v = -1;

			CHECK(xrl_word_parse(tables[t], w->name, &v) == 0 && v == w->value, "%s", w->name);
		}
	}
	CHECK(!strcmp(xrl_mode_name(XRL_MODE_DRY_RUN), "dry-run"), "mode name");
	CHECK(!strcmp(xrl_xdp_mode_name(XRL_XDP_GENERIC), "generic"), "xdp mode name");
	CHECK(!strcmp(xrl_action_name(XRL_ACT_DENY), "deny"), "action name");
	CHECK(!strcmp(xrl_word_name(xrl_rate_unit_words, XRL_PERIOD_MIN), "min"), "unit name");
}

/* ---- the configuration checker: FILE:LINE:COL ---- */

static void test_config_positions(void)
{
	static const char text[] =
		"# comment\n"
		"interface d0 mode native\n"
		"\n"
		"rule add 198.18.0.0/24 rate 100/s brust 20\n"
		"rule add 198.18.1.1/24 rate 1/s burst 1\n"
		"attach dev d0\n"
		"   watchdog soon\n"
		"interface d0\n";
	static const struct { int line, col; const char *msg; } want[] = {
		{ 4, 35, "unknown argument 'brust'" },
		{ 5, 10, "host bits set" },
		{ 6, 1, "'attach' is not a configuration command" },
		{ 7, 13, "invalid watchdog 'soon'" },
		{ 8, 11, "interface d0 given twice (first on line 2)" },
	};
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;

	CHECK(xrl_config_parse_text("t.conf", text, &c, &errs, &n) == -EINVAL, "refused");
	CHECK_EQ(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK(errs[i].line == want[i].line && errs[i].col == want[i].col,
		      "error %zu at %d:%d, not %d:%d (%s)", i, errs[i].line, errs[i].col,
		      want[i].line, want[i].col, errs[i].msg);
		CHECK(strstr(errs[i].msg, want[i].msg), "'%s' does not say '%s'", errs[i].msg, want[i].msg);
	}
	free(errs);
	xrl_config_free(&c);

	/* the whole set: a duplicate prefix is blamed on its second line */
	CHECK(xrl_config_parse_text("t.conf", "rule add 198.18.0.0/24 rate 1/s burst 1\n"
				    "rule add 198.18.0.0/24 rate 2/s burst 1\n", &c, &errs, &n) == -EINVAL,
	      "duplicate refused");
	CHECK(n == 1 && errs[0].line == 2 && errs[0].col == 10 &&
	      strstr(errs[0].msg, "duplicate prefix 198.18.0.0/24"), "%s", n ? errs[0].msg : "");
	free(errs);
	xrl_config_free(&c);
}

/* Set-level errors and repeated single-valued lines: every one, each on its
 * line, beside the errors of single lines. */
static void test_config_all_errors(void)
{
	static const char text[] =
		"rule add 198.18.0.0/24 rate 1/s burst 1 id 1\n"	/* 1 */
		"rule add 198.18.0.0/24 rate 2/s burst 1\n"		/* 2: dup prefix of 1 */
		"rule add 198.18.1.0/24 rate 1/s brust 1\n"		/* 3: line error */
		"rule add 198.18.0.0/24 rate 3/s burst 1\n"		/* 4: dup prefix of 1 */
		"rule add 2001:db8::/32 rate 1/s burst 1 id 1\n"	/* 5: dup id of 1 */
		"rule add 2001:db8:1::/48 rate 1/s burst 1 id 1\n"	/* 6: dup id of 1 */
		"heartbeat 100\n"					/* 7 */
		"heartbeat 200\n"					/* 8: twice */
		"watchdog 500\n"					/* 9 */
		"  watchdog 500\n"					/* 10: twice, even equal */
		"mode set enforce\n"					/* 11 */
		"mode set dry-run\n"					/* 12: twice */
		"metrics off\n"					/* 13 */
		"metrics 127.0.0.1:9000\n";				/* 14: twice */
	static const struct { int line, col; const char *msg; } want[] = {
		{ 3, 33, "unknown argument 'brust'" },
		{ 8, 1, "'heartbeat' given twice (first on line 7)" },
		{ 10, 3, "'watchdog' given twice (first on line 9)" },
		{ 12, 1, "'mode set' given twice (first on line 11)" },
		{ 14, 1, "'metrics' given twice (first on line 13)" },
		{ 2, 10, "duplicate prefix 198.18.0.0/24: rule 1 has it already (first on line 1)" },
		{ 4, 10, "duplicate prefix 198.18.0.0/24: rule 1 has it already (first on line 1)" },
		{ 5, 10, "duplicate rule id 1 (first on line 1)" },
		{ 6, 10, "duplicate rule id 1 (first on line 1)" },
	};
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;

	CHECK(xrl_config_parse_text("t.conf", text, &c, &errs, &n) == -EINVAL, "refused");
	CHECK(n == sizeof(want) / sizeof(want[0]), "%zu errors, not %zu", n, sizeof(want) / sizeof(want[0]));
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		bool found = false;

		for (size_t i = 0; i < n && !found; i++)
			found = errs[i].line == want[w].line && errs[i].col == want[w].col &&
				strstr(errs[i].msg, want[w].msg);
		CHECK(found, "no error %d:%d '%s'", want[w].line, want[w].col, want[w].msg);
	}
	free(errs);
	xrl_config_free(&c);

	/* the lines of single-valued settings are kept (for --check's warnings) */
	CHECK(!xrl_config_parse_text("t.conf", "# x\nwatchdog 100\nheartbeat 80\n", &c, &errs, &n) &&
	      c.watchdog_line == 2 && c.heartbeat_line == 3 && !c.metrics_line && !c.mode_line, "lines");
	free(errs);
	xrl_config_free(&c);
}

/* A 'fleet redis' list the daemon's client would refuse is refused at
 * parse (--check, reload), naming the line: ports 0 and 70000, no port, no
 * seed, a host name. Lists the client takes stay valid. */
static void test_config_fleet_redis(void)
{
	static const char *bad[] = {
		"fleet redis 198.18.10.1:0\n", "fleet redis 198.18.10.1:70000\n",
		"fleet redis 198.18.10.1\n", "fleet redis ,\n",
		"fleet redis 198.18.10.1:6379,198.18.10.2:65536 cluster\n",
		"fleet redis 198.18.10.1:6379x\n",
		/* names: hiredis would resolve them with a blocking call */
		"fleet redis redis.example:1,198.18.10.2:65535 cluster\n",
		"fleet redis localhost:6379\n",
	};
	static const char *good[] = {
		"fleet redis 198.18.10.1:6379\n", "fleet redis 198.18.10.1:1,198.18.10.2:65535 cluster\n",
		"fleet redis 198.18.10.1:6379,\n", "fleet redis 2001:db8::1:6379\n",
	};
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(xrl_config_parse_text("t.conf", bad[i], &c, &errs, &n) == -EINVAL && n == 1 &&
		      errs[0].line == 1 && errs[0].col == 13 &&
		      strstr(errs[0].msg, "invalid Redis address list"), "%s", bad[i]);
		free(errs);
		xrl_config_free(&c);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(!xrl_config_parse_text("t.conf", good[i], &c, &errs, &n), "%s", good[i]);
		free(errs);
		xrl_config_free(&c);
	}
}

/* The digest that names the applied file (xdp_rl_config_info). */
static void test_sha256(void)
{
	static const struct { const char *in; const char *hex; } v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",	/* 56: two blocks of padding */
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	unsigned char d[32];
	char hex[65], *a = malloc(1000001);

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		xrl_sha256(v[i].in, strlen(v[i].in), d);
		xrl_sha256_hex(d, hex);
		CHECK(!strcmp(hex, v[i].hex), "sha256('%s') = %s", v[i].in, hex);
	}
	if (a) {	/* a million 'a' */
		memset(a, 'a', 1000000);
		xrl_sha256(a, 1000000, d);
		xrl_sha256_hex(d, hex);
		CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "%s", hex);
		free(a);
	}
}

/* What top and key parse into: the defaults and every keyword's field. */
static void test_top_key_values(void)
{
	struct xrl_parse_err e;
	struct xrl_cmd c;

	CHECK(!parse("top", CLI, &c, &e), "%s", e.msg);
	CHECK(c.kind == XRL_CMD_TOP && c.top.count == 10 && c.top.sample_ms == 1000 && !c.top.watch,
	      "top: count %u, sample %u, watch %d", c.top.count, c.top.sample_ms, c.top.watch);
	CHECK(!parse("suggest", CLI, &c, &e), "%s", e.msg);
	CHECK(c.suggest.seconds == 60 && c.suggest.percentile == 95 && c.suggest.headroom == 50 &&
	      !c.suggest.rule, "suggest: seconds %u, percentile %u, headroom %u", c.suggest.seconds,
	      c.suggest.percentile, c.suggest.headroom);
	CHECK(!parse("suggest headroom 0 rule 4", CLI, &c, &e) && c.suggest.headroom == 0 &&
	      c.suggest.rule == 4 && c.suggest.seconds == 60, "suggest headroom 0: %u", c.suggest.headroom);
	CHECK(!parse("top watch", CLI, &c, &e), "%s", e.msg);
	CHECK(c.top.watch && c.top.count == 20 && c.top.sample_ms == 1000, "top watch: count %u, sample %u",
	      c.top.count, c.top.sample_ms);
	CHECK(!parse("top w s 250 c 3", CLI, &c, &e), "%s", e.msg);
	CHECK(c.top.watch && c.top.count == 3 && c.top.sample_ms == 250, "top w s 250 c 3: count %u, sample %u",
	      c.top.count, c.top.sample_ms);
	CHECK(!c.top.rule, "top without rule: every rule's keys (%u)", c.top.rule);
	CHECK(!parse("top r 7 c 2", CLI, &c, &e), "%s", e.msg);
	CHECK(c.top.rule == 7 && c.top.count == 2 && !c.top.watch, "top r 7 c 2: rule %u, count %u",
	      c.top.rule, c.top.count);
	CHECK(!parse("key list", CLI, &c, &e), "%s", e.msg);
	CHECK(c.kind == XRL_CMD_KEY_LIST && !c.key_list.rule && !c.key_list.limited, "key list");
	CHECK(!parse("k l r 7 l", CLI, &c, &e), "%s", e.msg);
	CHECK(c.kind == XRL_CMD_KEY_LIST && c.key_list.rule == 7 && c.key_list.limited, "k l r 7 l");
	CHECK(!parse("key reset 198.18.0.9", CLI, &c, &e), "%s", e.msg);
	CHECK(c.kind == XRL_CMD_KEY_RESET && c.addr.family == 4 && c.addr.addr[0] == 198 && c.addr.addr[3] == 9,
	      "key reset 198.18.0.9");
	CHECK(!parse("key d 2001:db8::1", CLI, &c, &e), "%s", e.msg);
	CHECK(c.kind == XRL_CMD_KEY_DEL && c.addr.family == 6 && c.addr.addr[15] == 1, "key d 2001:db8::1");
}

/*
 * The checks between a rule's fields are made once, in model/rule.c: the
 * rule add of the CLI and of a configuration file (which say where), and a
 * rule built in code as the commit and --check get it (xrl_rule_check() and
 * xrl_rules_check_all()), all give the CLI's message, and the field says
 * which word to blame.
 */
static void test_rule_checks_once(void)
{
	static const struct {
		const char *line;	/* what the CLI is given */
		enum xrl_rule_field field;
		const char *msg;
	} cases[] = {
		{ "rule add 198.18.0.0/24 rate 10/s burst 5 proto icmp dport 22",
		  XRL_FIELD_DPORT, "'dport' needs proto tcp or udp: other protocols have no ports" },
		{ "rule add 198.18.0.0/24 rate 10/s burst 5 proto udp syn",
		  XRL_FIELD_SYN, "'syn' needs proto tcp" },
		{ "rule add 198.18.0.0/24 rate 10/s burst 5 algo fixed-window",
		  XRL_FIELD_WINDOW_BURST, "'burst' belongs to the token bucket: fixed-window admits rate per window" },
		{ "rule add 198.18.0.0/24 rate 10/s burst 5 scope fleet algo fixed-window",
		  XRL_FIELD_SCOPE, "'scope fleet' takes a token bucket" },
	};
	struct xrl_rule_written w = { 0 };
	struct xrl_rule_entry e;
	struct xrl_parse_err pe;
	enum xrl_rule_field bad;
	struct xrl_cmd c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the CLI refuses it with the check's message */
		CHECK(parse(cases[i].line, CLI, &c, &pe) == -EINVAL && strstr(pe.msg, cases[i].msg),
		      "'%s': %s", cases[i].line, pe.msg);
		/* the same rule built in code, as the commit gets it: the word
		 * checks of the parser are left out by hand */
		memset(&e, 0, sizeof(e));
		CHECK(!xrl_prefix_parse("198.18.0.0/24", &e), "%s", xrl_errmsg());
		e.r.action = XRL_ACT_LIMIT;
		e.r.rate_count = 10;
		e.r.rate_period_ns = XRL_PERIOD_SEC;
		e.r.burst = 5;
		e.r.dport_hi = 65535;
		if (i == 0) {
			e.r.ep = 1;
			e.r.proto = IPPROTO_ICMP;
			e.r.dport_lo = e.r.dport_hi = 22;
		} else if (i == 1) {
			e.r.ep = 1;
			e.r.proto = IPPROTO_UDP;
			e.r.syn = 1;
		} else if (i == 2) {
			e.r.algo = XRL_ALGO_FIXED_WINDOW;
		} else {
			e.r.algo = XRL_ALGO_FIXED_WINDOW;
			e.r.scope = XRL_SCOPE_FLEET;
		}
		CHECK(xrl_rule_check(&e, &bad) == -EINVAL && bad == cases[i].field &&
		      strstr(xrl_errmsg(), cases[i].msg), "%s: field %d: %s", cases[i].line, bad,
		      xrl_errmsg());
		/* with no word to show it at, the message names the rule */
		CHECK(!strncmp(xrl_errmsg(), "rule 198.18.0.0/24: ", 20), "%s: names no rule: %s",
		      cases[i].line, xrl_errmsg());
		CHECK(xrl_rules_check_all(&e, 1, NULL, NULL) == -EINVAL &&
		      strstr(xrl_errmsg(), cases[i].msg), "%s: set: %s", cases[i].line, xrl_errmsg());
	}
	/* what only the words say: a burst of 0 written for a window, a burst
	 * in bytes for a packet rate; the values alone pass */
	memset(&e, 0, sizeof(e));
	CHECK(!xrl_prefix_parse("198.18.0.0/24", &e), "%s", xrl_errmsg());
	e.r.action = XRL_ACT_LIMIT;
	e.r.rate_count = 10;
	e.r.rate_period_ns = XRL_PERIOD_SEC;
	e.r.algo = XRL_ALGO_SLIDING_WINDOW;
	CHECK(!xrl_rule_check(&e, &bad), "a window without a burst: %s", xrl_errmsg());
	w.burst = true;
	CHECK(xrl_rule_check_written(&e, &w, &bad) == -EINVAL && bad == XRL_FIELD_WINDOW_BURST,
	      "a window with 'burst 0' written: %d", bad);
	CHECK(parse("rule add 198.18.0.0/24 rate 10/s burst 0 algo sliding-window", CLI, &c, &pe) ==
	      -EINVAL && pe.argi == 5 && strstr(pe.msg, "'burst' belongs to the token bucket"),
	      "burst 0 for a window: %d %s", pe.argi, pe.msg);
	e.r.algo = XRL_ALGO_GCRA;
	e.r.burst = 65536;
	w = (struct xrl_rule_written){ .burst = true, .burst_sized = true };
	CHECK(xrl_rule_check_written(&e, &w, &bad) == -EINVAL && bad == XRL_FIELD_BURST &&
	      strstr(xrl_errmsg(), "burst in bytes needs a byte rate"), "%s", xrl_errmsg());
}

/* The fleet lines fill the one struct of fleet settings the client takes. */
static void test_config_fleet_settings(void)
{
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;

	CHECK(!xrl_config_parse_text("t.conf",
				     "fleet redis 198.18.10.1:6379 cluster sync 50 timeout 3 hosts 7\n"
				     "fleet host h1\nfleet auth /etc/xdp-rl/redis.auth\n", &c, &errs, &n),
	      "%s", n ? errs[0].msg : "");
	CHECK(!strcmp(c.fleet.redis, "198.18.10.1:6379") && c.fleet.cluster &&
	      c.fleet.sync_ms == 50 && c.fleet.timeout_ms == 3 && c.fleet.hosts == 7 &&
	      !strcmp(c.fleet.host, "h1") && !strcmp(c.fleet.auth_file, "/etc/xdp-rl/redis.auth"),
	      "%s %d %ld %ld %ld %s %s", c.fleet.redis, c.fleet.cluster, c.fleet.sync_ms,
	      c.fleet.timeout_ms, c.fleet.hosts, c.fleet.host, c.fleet.auth_file);
	free(errs);
	xrl_config_free(&c);
	CHECK(!xrl_config_parse_text("t.conf", "fleet redis 198.18.10.1:6379\n", &c, &errs, &n),
	      "%s", n ? errs[0].msg : "");
	CHECK(!c.fleet.cluster && !c.fleet.sync_ms && !c.fleet.timeout_ms && !c.fleet.hosts &&
	      !c.fleet.host[0] && !c.fleet.auth_file[0], "defaults: 0 and \"\"");
	free(errs);
	xrl_config_free(&c);
}

static void test_config_values(void)
{
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;
	int err;

	err = xrl_config_parse_text("t.conf",
				    "interface d0 mode generic\ninterface d1\nheartbeat 200\nwatchdog 0\n"
				    "metrics [::1]:9000\nmode set dry-run\n"
				    "rule add 198.18.0.0/24 rate 100/s burst 20 id 4 # trailing\n",
				    &c, &errs, &n);
	CHECK(!err, "%s", n ? errs[0].msg : "");
	CHECK_EQ(c.nifaces, 2);
	CHECK(c.nifaces == 2 && !strcmp(c.ifaces[0].name, "d0") && c.ifaces[0].mode == XRL_XDP_GENERIC &&
	      c.ifaces[1].mode == XRL_XDP_AUTO, "interfaces");
	CHECK_EQ(c.heartbeat_ms, 200);
	CHECK_EQ(c.watchdog_ms, 0);
	CHECK(!strcmp(c.metrics, "[::1]:9000"), "%s", c.metrics);
	CHECK(c.has_mode && c.mode == XRL_MODE_DRY_RUN, "mode");
	CHECK(c.nrules == 1 && c.rules[0].r.id == 4 && c.rules[0].r.burst == 20, "rule");
	free(errs);
	xrl_config_free(&c);

	/* the built-in rule set parses */
	CHECK(!xrl_config_parse_text("(built-in)", xrl_default_config, &c, &errs, &n) && c.nrules == 2,
	      "built-in rules");
	free(errs);
	xrl_config_free(&c);
}

/* The file reader: an empty file is refused, a file of comments is not. */
static void test_config_files(void)
{
	char path[] = "/tmp/xrl-grammar-XXXXXX";
	struct xrl_config_err *errs;
	struct xrl_config c;
	int fd = mkstemp(path);
	size_t n;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	CHECK(xrl_config_load(path, &c, &errs, &n) == -EINVAL && n == 1 &&
	      strstr(errs[0].msg, "the file is empty"), "empty file");
	free(errs);
	CHECK(write(fd, " \n\t\n", 4) == 4, "write");
	CHECK(xrl_config_load(path, &c, &errs, &n) == -EINVAL && n == 1, "blank file");
	free(errs);
	CHECK(write(fd, "# no rules on purpose\n", 22) == 22, "write");
	CHECK(xrl_config_load(path, &c, &errs, &n) == 0 && c.nrules == 0, "comments only");
	free(errs);
	xrl_config_free(&c);
	close(fd);
	unlink(path);
	CHECK(xrl_config_load(path, &c, &errs, &n) == -ENOENT, "missing file");
	free(errs);
}

/* A file another user could write, or swap through its directory, is
 * refused; a sticky directory is fine (this user owns both). */
/*
 * A chain of symlinks to the file: root's link to a link of uid 65534 (in
 * a sticky directory, as /tmp: its owner could point it at any root-owned
 * file) is refused, though the first link and the end are root's; root's
 * links all along are read; a loop is refused. Root only (lchown).
 */
static void chain_of_links(const char *dir, const char *path)
{
	char first[96], mid[96], loop[96];
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;

	if (geteuid()) {
		fprintf(stderr, "    (not root: the chain of symlinks not tried)\n");
		return;
	}
	snprintf(first, sizeof(first), "%s/first.conf", dir);
	snprintf(mid, sizeof(mid), "%s/mid.conf", dir);
	snprintf(loop, sizeof(loop), "%s/loop.conf", dir);
	CHECK(!symlink(path, mid) && !symlink(mid, first) && !symlink(loop, loop), "symlinks");
	CHECK(xrl_config_load(first, &c, &errs, &n) == 0 && c.nrules == 1, "root's chain: read");
	free(errs);
	xrl_config_free(&c);
	CHECK(!lchown(mid, 65534, 65534), "lchown");
	CHECK(xrl_config_load(first, &c, &errs, &n) == -EPERM && n == 1 &&
	      strstr(errs[0].msg, "mid.conf, on the way to the configuration file") &&
	      strstr(errs[0].msg, "is a symlink of uid 65534"), "a link of uid 65534 in the chain: refused");
	free(errs);
	CHECK(xrl_config_load(loop, &c, &errs, &n) < 0, "a loop: refused");
	free(errs);
	unlink(first);
	unlink(mid);
	unlink(loop);
}

static void test_config_file_writers(void)
{
	char dir[] = "/tmp/xrl-writers-XXXXXX", path[64];
	struct xrl_config_err *errs;
	struct xrl_config c;
	size_t n;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/rules.conf", dir);
	f = fopen(path, "w");
	CHECK(f && fputs("rule add 198.18.0.0/24 rate 1/s burst 1\n", f) >= 0, "write");
	if (f)
		fclose(f);
	chmod(dir, 0755);
	chmod(path, 0644);
	CHECK(xrl_config_load(path, &c, &errs, &n) == 0 && c.nrules == 1, "0644 in 0755: read");
	free(errs);
	xrl_config_free(&c);
	chmod(path, 0646);
	CHECK(xrl_config_load(path, &c, &errs, &n) == -EPERM && n == 1 &&
	      strstr(errs[0].msg, "is writable by others (mode 0646)") && errs[0].line == 1,
	      "world-writable: refused");
	free(errs);
	chmod(path, 0664);
	CHECK(xrl_config_load(path, &c, &errs, &n) == -EPERM && n == 1 &&
	      strstr(errs[0].msg, "is writable by its group (mode 0664)"), "group-writable: refused");
	free(errs);
	chmod(path, 0644);
	chmod(dir, 0777);
	CHECK(xrl_config_load(path, &c, &errs, &n) == -EPERM && n == 1 &&
	      strstr(errs[0].msg, "a parent of the configuration file") &&
	      strstr(errs[0].msg, "without the sticky bit (mode 0777)"), "open directory: refused");
	free(errs);
	chmod(dir, 01777);
	CHECK(xrl_config_load(path, &c, &errs, &n) == 0, "sticky directory: read");
	free(errs);
	xrl_config_free(&c);
	chain_of_links(dir, path);
	unlink(path);
	rmdir(dir);
}

/* ---- round trip: rule add -> rule list -j -> rule add ---- */

/* The value of "key" in a flat JSON object: a string, a number or null. */
static bool json_field(const char *json, const char *key, char *out, size_t len)
{
	char k[64];
	const char *p;
	size_t n = 0;

	snprintf(k, sizeof(k), "\"%s\":", key);
	if (!(p = strstr(json, k)))
		return false;
	p += strlen(k);
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < len; p++)
			out[n++] = *p;
	} else {
		for (; *p && *p != ',' && *p != '}' && n + 1 < len; p++)
			out[n++] = *p;
	}
	out[n] = '\0';
	return true;
}

static void test_round_trip(void)
{
	static const char *const rules[] = {
		"rule add 198.18.0.0/15 rate 100/s burst 20",
		"rule add 198.18.0.0/24 rate 5/min burst 3 per /24 id 9 on-failure closed",
		"rule add 2001:db8::/32 rate 1/h burst 1 per /48 id 12",
		"rule add 192.0.2.1 action allow id 3",
		"rule add 192.0.2.0/24 action deny on-failure closed",
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		char *json = NULL, line[512], v[7][64];
		static const char *const keys[] = { "prefix", "rate", "burst", "per", "action", "id", "on_failure" };
		struct xrl_parse_err e;
		struct xrl_cmd a, b;
		size_t len = 0;
		struct jw w;
		FILE *f;

		if (parse(rules[i], CLI, &a, &e)) {
			CHECK(0, "'%s': %s", rules[i], e.msg);
			continue;
		}
		f = open_memstream(&json, &len);
		jw_init(&w, f, false);
		jw_obj_start(&w);
		xrl_rule_json(&w, &a.rule);
		jw_obj_end(&w);
		fclose(f);
		for (size_t k = 0; k < 7; k++)
			CHECK(json_field(json, keys[k], v[k], sizeof(v[k])), "%s: no %s", json, keys[k]);
		/* a rule id of 0 is assigned at commit: left out */
		if (!strcmp(v[1], "null"))
			/* allow and deny take no per: their key length is the default */
			snprintf(line, sizeof(line), "rule add %s action %s%s%s%s%s",
				 v[0], v[4], strcmp(v[6], "null") ? " on-failure " : "",
				 strcmp(v[6], "null") ? v[6] : "", strcmp(v[5], "0") ? " id " : "",
				 strcmp(v[5], "0") ? v[5] : "");
		else
			snprintf(line, sizeof(line), "rule add %s rate %s burst %s per /%s action %s on-failure %s%s%s",
				 v[0], v[1], v[2], v[3], v[4], v[6], strcmp(v[5], "0") ? " id " : "",
				 strcmp(v[5], "0") ? v[5] : "");
		if (parse(line, CLI, &b, &e)) {
			CHECK(0, "'%s' (from %s): %s", line, json, e.msg);
		} else {
			CHECK(!memcmp(&a.rule, &b.rule, sizeof(a.rule)), "'%s' came back as '%s'", rules[i], line);
		}
		free(json);
	}
}

/* rule list config: a rule written as a config line parses back into the
 * same rule, every setting of it (those rule list has no column for too) */
static void test_config_format_round_trip(void)
{
	static const char *const rules[] = {
		"rule add 198.18.0.0/15 rate 100/s burst 20",
		"rule add 198.18.0.0/15 rate 100/s burst 20 aggregate 5000/s burst 800 new-keys 50/s",
		"rule add 198.18.0.0/16 rate 100/s burst 20 aggregate 5/min id 4",
		"rule add 198.18.1.0/24 rate 10mbit burst 64kb per /24 on-failure closed dry-run",
		"rule add 198.18.2.0/24 rate 600/min algo sliding-window",
		"rule add 198.18.3.0/24 rate 2mbps algo fixed-window",
		"rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10 id 2",
		"rule add 0.0.0.0/0 proto udp dport 1000-2000 action deny on-failure closed",
		"rule add 0.0.0.0/0 proto udp dport 53 rate 20/s burst 40 slip 2 id 9",
		"rule add 0.0.0.0/0 proto icmp rate 5/s burst 5",
		"rule add ::/0 proto 47 action deny",
		"rule add 192.0.2.1 action allow id 40",
		"rule add 2001:db8::/32 rate 1/h burst 1 per /48 scope fleet",
		"rule add 192.0.2.0/24 action deny on-failure closed",
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct xrl_parse_err e;
		struct xrl_cmd a, b;
		char line[1024];

		if (parse(rules[i], CLI, &a, &e)) {
			CHECK(0, "'%s': %s", rules[i], e.msg);
			continue;
		}
		CHECK(xrl_rule_config_format(&a.rule, line, sizeof(line)) < sizeof(line), "%s: cut", rules[i]);
		if (parse(line, CONF, &b, &e)) {
			CHECK(0, "'%s' (from '%s'): %s", line, rules[i], e.msg);
			continue;
		}
		CHECK(!memcmp(&a.rule, &b.rule, sizeof(a.rule)), "'%s' came back as '%s'", rules[i], line);
	}
}

/* help: every keyword says what it takes; COMMAND help writes a line per
 * keyword (with its help beside it or under it), none too long to read */
static void test_param_help(void)
{
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const struct xrl_command *cmd = &xrl_commands[i];
		char *out = NULL, *line, *save = NULL;
		size_t len = 0, nparams = 0, nlines = 0;
		FILE *f;

		for (const struct xrl_param *p = cmd->params; p && !xrl_param_end(p); p++)
			for (const struct xrl_param *q = p; q; q = q->then) {
				CHECK(q->help && q->help[0], "%s: keyword %s has no help", cmd->name,
				      q->name ? q->name : q->meta);
				nparams++;
			}
		f = open_memstream(&out, &len);
		xrl_cmd_help(f, cmd);
		fclose(f);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			CHECK(strlen(line) <= 110, "%s help: a line of %zu characters: %s", cmd->name,
			      strlen(line), line);
			/* a keyword whose words are too long: its help on the next line */
			if (strspn(line, " ") < 4 + 30)
				nlines++;
		}
		CHECK(nlines == 2 + nparams, "%s help: %zu lines for %zu keywords", cmd->name, nlines,
		      nparams);
		free(out);
	}
}

/* ---- the usage text, the man pages and docs/cli.md agree with the table ---- */

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len), *f = fopen(path, "r");
	char chunk[4096];
	size_t n;

	if (!f) {
		fclose(m);
		free(buf);
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* The text of a .B/.BI/.BR/.I line as man shows it: the arguments (quotes
 * keep spaces) alternate fonts without a space, or, for a one-font macro,
 * are joined by spaces; font escapes removed. */
static void detroff(const char *line, char *out, size_t len)
{
	bool alternating = strncmp(line, ".B ", 3) && strncmp(line, ".I ", 3);
	const char *p = strchr(line, ' ');
	size_t n = 0;
	int args = 0;

	while (p && *p && n + 1 < len) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (args++ && !alternating)
			out[n++] = ' ';
		if (*p == '"') {
			for (p++; *p && *p != '"' && n + 1 < len; p++)
				out[n++] = *p;
			if (*p)
				p++;
		} else {
			for (; *p && *p != ' ' && n + 1 < len; p++)
				out[n++] = *p;
		}
	}
	out[n] = '\0';
	/* \fB \fI \fR \fP and \- */
	for (char *s = out; (s = strchr(s, '\\'));) {
		int skip = s[1] == 'f' ? 3 : s[1] == '-' ? 1 : 0;

		if (!skip) {
			s++;
			continue;
		}
		memmove(s, s + skip, strlen(s + skip) + 1);
	}
}

/* Does the man page have an entry (the line after a .TP) that is, or that
 * lists among ", "-separated ones, this synopsis? */
static bool man_has(const char *man, const char *syn)
{
	for (const char *p = man; (p = strstr(p, "\n.TP\n")); p++) {
		char line[512], text[512];
		const char *s = p + 5, *e = strchr(s, '\n');

		snprintf(line, sizeof(line), "%.*s", (int)(e ? e - s : (long)strlen(s)), s);
		detroff(line, text, sizeof(text));
		/* entries are separated by ", " (a comma inside a word, as in
		 * HOST:PORT[,HOST:PORT...], is part of it) */
		for (char *tok = text, *next; tok; tok = next) {
			next = strstr(tok, ", ");
			if (next) {
				*next = '\0';
				next += 2;
			}
			while (*tok == ' ')
				tok++;
			if (!strcmp(tok, syn))
				return true;
		}
	}
	return false;
}

/*
 * An entry for the synopsis: the synopsis itself, or, for a long one (that
 * would wrap at 80 columns), its words before the first optional part
 * followed by "[OPTION]...", with an entry of its own for each optional
 * part ("[per /LEN]" -> "per /LEN").
 */
static bool man_has_entry(const char *man, const char *syn)
{
	char head[256], part[128];
	const char *opt = strstr(syn, " [");

	if (man_has(man, syn))
		return true;
	if (!opt || strlen(syn) < 60)
		return false;
	snprintf(head, sizeof(head), "%.*s [OPTION]...", (int)(opt - syn), syn);
	if (!man_has(man, head))
		return false;
	for (const char *p = opt; (p = strstr(p, " [")); ) {
		const char *e = p + 2;
		int depth = 1;	/* "[aggregate RATE [burst N]]": the outer one */

		for (; *e && depth; e++)
			depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
		if (depth)
			return false;
		e--;
		snprintf(part, sizeof(part), "%.*s", (int)(e - p - 2), p + 2);
		if (!man_has(man, part)) {
			fprintf(stderr, "    no entry for the option '%s' of '%s'\n", part, head);
			return false;
		}
		p = e;
	}
	return true;
}

static void test_docs_agree(void)
{
	char *rlctl = slurp("man/xdp-rlctl.8"), *conf = slurp("man/xdp-rl.conf.5");
	char *cli = slurp("docs/cli.md"), *usage = NULL, *block;
	size_t ulen = 0;
	FILE *f;

	CHECK(rlctl && conf && cli, "run from the top of the tree");
	if (!rlctl || !conf || !cli)
		goto out;
	f = open_memstream(&usage, &ulen);
	xrl_usage(f, CLI, NULL);
	fclose(f);
	/* the CLI reference block of docs/cli.md is the usage text, line for line */
	block = strstr(cli, "xdp-rlctl [-j|--json] [-p|--pretty] [--pin-dir DIR] COMMAND ...\n");
	CHECK(block, "docs/cli.md: no CLI reference block");
	if (block) {
		block = strchr(block, '\n') + 1;
		CHECK(!strncmp(block, usage, ulen) && !strncmp(block + ulen, "```", 3),
		      "docs/cli.md's CLI reference differs from the table's usage:\n%s", usage);
	}
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const struct xrl_command *cmd = &xrl_commands[i];
		char syn[512];

		xrl_cmd_synopsis(cmd, syn, sizeof(syn));
		if (cmd->where & CLI)
			CHECK(man_has_entry(rlctl, syn), "xdp-rlctl(8) has no entry '%s'", syn);
		if (cmd->where & CONF)
			CHECK(man_has_entry(conf, syn), "xdp-rl.conf(5) has no entry '%s'", syn);
	}
	/* help COMMAND lists that group only; an unknown one is refused */
	f = fopen("/dev/null", "w");
	CHECK(xrl_usage(f, CLI, "rule") == 0, "help rule");
	CHECK(xrl_usage(f, CLI, "ru") == -ENOENT, "help ru");
	CHECK(xrl_usage(f, CLI, "interface") == -ENOENT, "interface is not a CLI command");
	fclose(f);
out:
	free(usage);
	free(rlctl);
	free(conf);
	free(cli);
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_parse_table);
	RUN(test_table_covered);
	RUN(test_ban_values);
	RUN(test_prefixes);
	RUN(test_word_match);
	RUN(test_help_topics);
	RUN(test_words);
	RUN(test_config_positions);
	RUN(test_config_all_errors);
	RUN(test_config_fleet_redis);
	RUN(test_sha256);
	RUN(test_top_key_values);
	RUN(test_rule_checks_once);
	RUN(test_config_fleet_settings);
	RUN(test_config_values);
	RUN(test_config_files);
	RUN(test_config_file_writers);
	RUN(test_round_trip);
	RUN(test_config_format_round_trip);
	RUN(test_param_help);
	RUN(test_docs_agree);
	return tl_summary();
}
