#!/usr/bin/env bash
# make install: binaries, man pages, the systemd unit, the alerting rules, the
# fail2ban action, the Grafana dashboard, the example config.
source "$(dirname "$0")/../lib/e2e.sh"

test_make_install() {
	local root="$TMPD/root" f
	make -s -C "$TOP" install DESTDIR="$root" PREFIX=/usr >/dev/null || { fail "make install failed"; return; }
	for f in usr/sbin/xdp-rlctl usr/sbin/xdp-rld usr/share/man/man8/xdp-rlctl.8 \
		usr/share/man/man8/xdp-rld.8 usr/share/man/man5/xdp-rl.conf.5 \
		usr/lib/systemd/system/xdp-rld.service etc/xdp-rl/rules.conf \
		usr/share/bash-completion/completions/xdp-rlctl usr/share/xdp-rl/xdp-rl-alerts.yml \
		usr/share/xdp-rl/fail2ban/action.d/xdp-rl.conf \
		usr/share/xdp-rl/grafana/xdp-rl.json; do
		[[ -f "$root/$f" ]] || fail "$f not installed"
	done
	check_match "unit runs the installed daemon" "$(grep ^ExecStart= "$root/usr/lib/systemd/system/xdp-rld.service")" \
		"^ExecStart=/usr/sbin/xdp-rld "
	check_match "restarts on failure" "$(cat "$root/usr/lib/systemd/system/xdp-rld.service")" "Restart=on-failure"
	check_match "example config is valid" "$("$root/usr/sbin/xdp-rld" --check --config "$root/etc/xdp-rl/rules.conf")" \
		"valid, 2 rules"
	# the alerting rules, as packaged, and valid
	cmp -s "$root/usr/share/xdp-rl/xdp-rl-alerts.yml" "$TOP/packaging/xdp-rl-alerts.yml" ||
		fail "the installed alerting rules are not packaging/xdp-rl-alerts.yml"
	check_match "installed alerting rules load" "$(promtool check rules "$root/usr/share/xdp-rl/xdp-rl-alerts.yml" 2>&1)" \
		"SUCCESS: [0-9]+ rules found"
	# the Grafana dashboard, as packaged, and JSON
	cmp -s "$root/usr/share/xdp-rl/grafana/xdp-rl.json" "$TOP/packaging/grafana/xdp-rl.json" ||
		fail "the installed dashboard is not packaging/grafana/xdp-rl.json"
	jq -e .panels "$root/usr/share/xdp-rl/grafana/xdp-rl.json" >/dev/null || fail "the installed dashboard is no JSON"
	man -l "$root/usr/share/man/man5/xdp-rl.conf.5" >/dev/null 2>&1 || fail "xdp-rl.conf.5 does not render"
	# the installed completion is the one generated from the grammar, and works
	cmp -s "$root/usr/share/bash-completion/completions/xdp-rlctl" "$OUT/xdp-rlctl.bash" ||
		fail "the installed completion is not the generated one"
	check_eq "installed completion" "$(bash -c 'source "$1"; COMP_WORDS=(xdp-rlctl rule a); COMP_CWORD=2
		_xdp_rlctl; echo "${COMPREPLY[*]}"' _ "$root/usr/share/bash-completion/completions/xdp-rlctl")" "add"
	check_match "installed binaries know their version" "$("$root/usr/sbin/xdp-rlctl" -V)" "^xdp-rlctl [0-9]"
	# an existing configuration is never overwritten
	echo "# mine" >"$root/etc/xdp-rl/rules.conf"
	make -s -C "$TOP" install DESTDIR="$root" PREFIX=/usr >/dev/null
	check_eq "config kept" "$(cat "$root/etc/xdp-rl/rules.conf")" "# mine"
}

run_test test_make_install
summary
