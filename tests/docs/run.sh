#!/usr/bin/env bash
# The documentation holds to the code, without root (make check):
#  - every metric the docs name (README, man pages, the alerting rules) is
#    one that xdp-rld exports (a series name in user/rld/*.c);
#  - every link of the README (#anchor, file) and every section the docs and
#    the sources name ("see *Rules*", "(README, \"Privileges\")") exists.
# Closes with "N passed, N failed".
cd "$(dirname "$0")/../.."
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
ko() { echo "FAIL $1"; [[ -n "${2:-}" ]] && sed 's/^/    /' <<<"$2"; failed=$((failed + 1)); }

DOCS=(README.md man/*.[0-9] packaging/xdp-rl-alerts.yml)

# the series xdp-rld writes: "xdp_rl_NAME" at the start of a string
exported=$(grep -ho '"xdp_rl_[a-z0-9_]*' user/rld/*.c | tr -d '"' | sort -u)
# a histogram's series are NAME_bucket, NAME_sum, NAME_count: NAME too
exported=$(printf '%s\n' $exported $(sed -n 's/_bucket$//p' <<<"$exported") | sort -u)

# the names of the docs that look like metrics; a name of a file of the tree
# (xdp_rl_common.h) or a family's prefix ("every xdp_rl_fleet_*") is none
missing=
for m in $(cat "${DOCS[@]}" | grep -o 'xdp_rl_[a-z0-9_]*' | sort -u); do
	[[ $m == *_ ]] && continue
	[[ -n $(find include bpf user -name "$m.*" -print -quit) ]] && continue
	# a pin's name (xdp_rl_prog_new), a string of the library, is none either
	grep -qF "\"$m\"" user/lib/*.h user/lib/*/*.[ch] && continue
	grep -qx "$m" <<<"$exported" || missing+="$m (in $(grep -l "$m" "${DOCS[@]}" | tr '\n' ' '))"$'\n'
done
if [[ -z $missing ]]; then ok "every metric the docs name is exported"; else ko "metrics the docs name and xdp-rld does not export" "$missing"; fi

# the README's headings outside code blocks, and their GitHub anchors
headings=$(awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ +/, ""); print }' README.md)
anchors=$(sed -e 's/[A-Z]/\L&/g' -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g' <<<"$headings")

bad=
for a in $(grep -o '](#[^)]*)' README.md | sed 's/^](#//; s/)$//'); do
	grep -qx -- "$a" <<<"$anchors" || bad+="#$a"$'\n'
done
for f in $(grep -o '](\([^)#:]*\))' README.md | sed 's/^](//; s/)$//'); do
	[[ -e $f ]] || bad+="$f"$'\n'
done
if [[ -z $bad ]]; then ok "every link of the README exists"; else ko "README links to what is not there" "$bad"; fi

# sections named in prose: see *X*, see "X", (README, "X")
bad=
while IFS= read -r ref; do
	[[ -z $ref ]] && continue
	grep -qixF -- "$ref" <<<"$headings" || bad+="'$ref': $(grep -rlF -- "$ref" README.md man packaging user include bpf | head -n 3 | tr '\n' ' ')"$'\n'
done < <({
	grep -ohi 'see \*[^*]*\*' README.md man/*.[0-9] | sed 's/^[Ss]ee \*//; s/\*$//'
	grep -ohi 'see "[^"]*"' README.md man/*.[0-9] | sed 's/^[Ss]ee "//; s/"$//'
	grep -rho '(README, "[^"]*")' README.md man packaging user include bpf | sed 's/^(README, "//; s/")$//'
} | sort -u)
if [[ -z $bad ]]; then ok "every section the docs name exists"; else ko "sections named that the README does not have" "$bad"; fi

# one size for the bucket tables wherever the docs give it: the per-key
# bytes of "Limits of the design" times the default million keys a family
kb=$(tr '\n' ' ' <README.md | grep -oE '\(([0-9]+) bytes +per IPv4 key, ([0-9]+) per IPv6 key' | head -n 1)
v4=$(grep -oE '\([0-9]+' <<<"$kb" | tr -d '(')
v6=$(grep -oE ', [0-9]+ per' <<<"$kb" | grep -oE '[0-9]+')
keys=$(sed -n 's/^#define XRL_DEFAULT_KEYS[[:space:]]*\([0-9]*\).*/\1/p' include/xdp_rl_common.h)
if [[ -z $v4 || -z $v6 || -z $keys ]]; then
	ko "the bucket tables' size: no per-key bytes in the README ($kb) or no XRL_DEFAULT_KEYS"
else
	want=$(((v4 + v6) * keys / 1048576))
	got=$(cat README.md man/*.[0-9] | tr '\n' ' ' | sed 's/\\f[BIRP]//g' |
		grep -oE '(bucket +tables +take|allocated +up +front:) +[0-9]+ +MiB' | grep -oE '[0-9]+ +MiB' | sort -u | tr '\n' ' ')
	if [[ $got == "$want MiB " ]]; then
		ok "one size for the default bucket tables: $want MiB"
	else
		ko "the default bucket tables: ($v4 + $v6) bytes x $keys keys is $want MiB; the docs say: $got"
	fi
fi

# claims of absence the tree has outgrown
bad=
if grep -q '"xdp_rl_fleet_' user/rld/*.c; then
	bad+=$(grep -niE 'fleet (limits|metrics?) (do|does) not exist|no fleet metric' "${DOCS[@]}")$'\n'
fi
if [[ -z $(find . -path ./.git -prune -o -iname '*dashboard*' -print -quit) ]]; then
	bad+=$(grep -niE 'dashboard' "${DOCS[@]}")$'\n'
fi
# each binary's -V prints its own version (print_version: one program name)
bad+=$(grep -niE 'version of both' "${DOCS[@]}")$'\n'
bad=$(sed '/^$/d' <<<"$bad")
if [[ -z $bad ]]; then ok "no claim of absence the tree has outgrown"; else ko "the docs say what is no longer so" "$bad"; fi

echo "$passed passed, $failed failed"
((failed == 0))
