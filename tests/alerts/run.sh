#!/usr/bin/env bash
# The alerting rules in packaging/xdp-rl-alerts.yml: `promtool check rules`,
# then `promtool test rules` on each alert's synthetic series
# (tests/alerts/ALERT.test.yml: a group where it fires, one where it does not).
# Needs neither root nor a server; closes with "N passed, N failed".
cd "$(dirname "$0")/../.."
rules=packaging/xdp-rl-alerts.yml
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
ko() { echo "FAIL $1"; [[ -n "${2:-}" ]] && sed 's/^/    /' <<<"$2"; failed=$((failed + 1)); }

if ! command -v promtool >/dev/null; then
	ko "promtool not found (Debian package prometheus: scripts/deps.sh)"
	echo "$passed passed, $failed failed"
	exit 1
fi

if out=$(promtool check rules "$rules" 2>&1); then ok "promtool check rules"; else ko "promtool check rules" "$out"; fi

alerts=$(sed -n 's/^ *- alert: *\([A-Za-z0-9_]*\).*/\1/p' "$rules")
for a in $alerts; do
	t=tests/alerts/$a.test.yml
	if [[ ! -f $t ]]; then
		ko "$a: no $t"
		continue
	fi
	# both cases, for this alert: one that fires, one that does not
	if ! grep -q "alertname: $a\$" "$t" || ! grep -q 'exp_alerts: \[\]' "$t" ||
		! grep -q 'exp_labels:' "$t" || grep -q 'alertname:' <(grep 'alertname:' "$t" | grep -v "alertname: $a\$"); then
		ko "$a: $t must test $a firing (exp_labels) and not firing (exp_alerts: [])"
		continue
	fi
	if out=$(promtool test rules "$t" 2>&1); then ok "$a fires and does not"; else ko "$a" "$out"; fi
done
# a test file without its alert would pass on nothing
for t in tests/alerts/*.test.yml; do
	a=$(basename "$t" .test.yml)
	grep -qx "$a" <<<"$alerts" || ko "$t: no alert $a in $rules"
done

echo "$passed passed, $failed failed"
((failed == 0))
