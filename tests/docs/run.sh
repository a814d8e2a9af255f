#!/usr/bin/env bash
# The documentation holds to the code, without root (make check):
#  - every metric the docs name (README.md, DEVELOPING.md, docs/*.md, the man
#    pages, the alerting rules) is one that xdp-rld exports (a series name in
#    user/rld/);
#  - every link of the Markdown pages (file, file#anchor, #anchor) exists, and
#    every section the docs and the sources name ("see *Rules*", "(README,
#    \"Privileges\")") is a heading of one of the pages;
#  - docs/README.md links every page of docs/, the README fits on a screen
#    (at most 300 lines), DEVELOPING.md's layout table names every folder.
# Closes with "N passed, N failed".
cd "$(dirname "$0")/../.."
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
ko() { echo "FAIL $1"; [[ -n "${2:-}" ]] && sed 's/^/    /' <<<"$2"; failed=$((failed + 1)); }

# the Markdown pages; each topic's reference is one page of docs/
PAGES=(README.md DEVELOPING.md docs/*.md)
DOCS=("${PAGES[@]}" man/*.[0-9] packaging/xdp-rl-alerts.yml)
# the sources that name sections of the docs in their comments
SRCDIRS=(man packaging user include bpf tests/e2e tests/fuzz tests/bpf)

# the series xdp-rld writes: "xdp_rl_NAME" at the start of a string
exported=$(grep -rho --include='*.c' '"xdp_rl_[a-z0-9_]*' user/rld | tr -d '"' | sort -u)
# a histogram's series are NAME_bucket, NAME_sum, NAME_count: NAME too
exported=$(printf '%s\n' $exported $(sed -n 's/_bucket$//p' <<<"$exported") | sort -u)

# the names of the docs that look like metrics; a name of a file of the tree
# (xdp_rl_common.h) or a family's prefix ("every xdp_rl_fleet_*") is none
missing=
for m in $(cat "${DOCS[@]}" | grep -o 'xdp_rl_[a-z0-9_]*' | sort -u); do
	[[ $m == *_ ]] && continue
	[[ -n $(find include bpf user -name "$m.*" -print -quit) ]] && continue
	# a pin's name (xdp_rl_prog_new), a string of the library, is none either
	grep -rqF --include='*.[ch]' "\"$m\"" user/lib && continue
	grep -qx "$m" <<<"$exported" || missing+="$m (in $(grep -l "$m" "${DOCS[@]}" | tr '\n' ' '))"$'\n'
done
if [[ -z $missing ]]; then ok "every metric the docs name is exported"; else ko "metrics the docs name and xdp-rld does not export" "$missing"; fi

# headings FILE: the page's headings outside code blocks
headings() { awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ +/, ""); print }' "$1"; }
# anchors FILE: their GitHub anchors
anchors() { headings "$1" | sed -e 's/[A-Z]/\L&/g' -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'; }

# every link of every page: a file relative to the page, an anchor of the
# page it names (or of the page itself); web addresses are not followed
bad=
for p in "${PAGES[@]}"; do
	dir=$(dirname "$p")
	while IFS= read -r target; do
		[[ -z $target || $target == *://* || $target == mailto:* ]] && continue
		file=${target%%#*}
		anchor=
		[[ $target == *#* ]] && anchor=${target#*#}
		if [[ -z $file ]]; then
			file=$p
		else
			file=$(realpath -m --relative-to=. "$dir/$file")
		fi
		if [[ ! -e $file ]]; then
			bad+="$p: $target (no $file)"$'\n'
		elif [[ -n $anchor ]] && ! anchors "$file" | grep -qx -- "$anchor"; then
			bad+="$p: $target (no heading #$anchor in $file)"$'\n'
		fi
	done < <(awk '/^```/ { code = !code; next } !code' "$p" | grep -o '](\([^) ]*\))' | sed 's/^](//; s/)$//')
done
if [[ -z $bad ]]; then ok "every link of the pages exists"; else ko "links to what is not there" "$bad"; fi

# sections named in prose: see *X*, see "X", (README, "X") — a heading of
# any page, since a topic has one page
all_headings=$(for p in "${PAGES[@]}"; do headings "$p"; done)
bad=
while IFS= read -r ref; do
	[[ -z $ref ]] && continue
	grep -qixF -- "$ref" <<<"$all_headings" || bad+="'$ref': $(grep -rlF -- "$ref" "${PAGES[@]}" "${SRCDIRS[@]}" | head -n 3 | tr '\n' ' ')"$'\n'
done < <({
	grep -ohi 'see \*[^*]*\*' "${PAGES[@]}" man/*.[0-9] | sed 's/^[Ss]ee \*//; s/\*$//'
	grep -ohi 'see "[^"]*"' "${PAGES[@]}" man/*.[0-9] | sed 's/^[Ss]ee "//; s/"$//'
	grep -rho '(README, "[^"]*")' "${PAGES[@]}" "${SRCDIRS[@]}" | sed 's/^(README, "//; s/")$//'
} | sort -u)
if [[ -z $bad ]]; then ok "every section the docs name exists"; else ko "sections named that no page has" "$bad"; fi

# a section named with its page ("Upgrading" in docs/operations.md, or
# (docs/operations.md, "Upgrading")) is a heading of that page
bad=
while IFS=$'\t' read -r ref page; do
	[[ -z $ref ]] && continue
	if [[ ! -e $page ]]; then
		bad+="'$ref' in $page: no such page"$'\n'
	elif ! headings "$page" | grep -qixF -- "$ref"; then
		bad+="'$ref' is no heading of $page"$'\n'
	fi
done < <({
	cat "${PAGES[@]}" man/*.[0-9] | tr '\n' ' ' | grep -oE '"[^"]+" in +docs/[a-z0-9_-]+\.md' |
		sed -E 's/^"([^"]+)" in +(.*)$/\1\t\2/'
	grep -rhoE '\(docs/[a-z0-9_-]+\.md, "[^"]+"\)' "${PAGES[@]}" "${SRCDIRS[@]}" |
		sed -E 's/^\((docs\/[^,]+), "([^"]+)"\)$/\2\t\1/'
} | sort -u)
if [[ -z $bad ]]; then ok "every section named with its page is on that page"; else ko "sections not on the page named" "$bad"; fi

# the minimum kernel the README states covers every helper and map type the
# program uses: a new one must be placed in its table (and may raise it)
kernel=$(awk '/^## Minimum kernel/ { on = 1; next } on && /^## / { on = 0 } on' README.md)
bad=
for h in $(find bpf include -name '*.[ch]' -exec cat {} + | grep -oE '\bbpf_[a-z0-9_]+\(' | tr -d '(' | sort -u); do
	# byte-order macros of bpf_endian.h, not helpers
	[[ $h == bpf_htons || $h == bpf_ntohs || $h == bpf_htonl || $h == bpf_ntohl ]] && continue
	grep -qF "\`$h()\`" <<<"$kernel" || bad+="helper $h"$'\n'
done
for t in $(find bpf include -name '*.[ch]' -exec cat {} + | grep -oE 'BPF_MAP_TYPE_[A-Z_]+' | sort -u); do
	grep -qE "\`(BPF_MAP_TYPE)?_?${t#BPF_MAP_TYPE_}\`" <<<"$kernel" || bad+="map type $t"$'\n'
done
if [[ -z $bad ]]; then ok "the README's minimum kernel covers every helper and map type of bpf/"; else ko "helpers and map types the README's minimum kernel does not place" "$bad"; fi

# the index names every page of docs/ (the raw bench report included)
bad=
for p in docs/*.md; do
	[[ $p == docs/README.md ]] && continue
	grep -qF "]($(basename "$p")" docs/README.md || bad+="$p"$'\n'
	# and every section of a topic's page, so that a "see *X*" is found
	grep -q '^# ' "$p" && [[ $p != docs/bench.md ]] || continue
	while IFS= read -r h; do
		grep -qF "[$h]($(basename "$p")#" docs/README.md || bad+="$p: section '$h'"$'\n'
	done < <(awk '/^```/ { code = !code; next } !code && /^##+ / { sub(/^#+ +/, ""); print }' "$p")
done
if [[ -z $bad ]]; then ok "docs/README.md links every page of docs/ and its sections"; else ko "pages and sections docs/README.md does not link" "$bad"; fi

# the README says what it is and links the rest: at most 300 lines
n=$(wc -l <README.md)
if ((n <= 300)); then ok "the README is $n lines (at most 300)"; else ko "the README is $n lines: at most 300, the rest goes to docs/"; fi

# the layout table of DEVELOPING.md names every folder of the tree (three
# levels deep; a fuzzer's corpus is its parent's): in a clone, the folders
# of the files git tracks, so that a build's or a run's leftovers are none
tree_dirs() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files | sed -n 's|/[^/]*$||p' | awk -F/ '{
			p = $1; print p
			for (i = 2; i <= NF && i <= 3; i++) { p = p "/" $i; print p }
		}' | grep -v '/corpus'
	else
		find . -mindepth 1 -maxdepth 3 \( -name .git -o -name .output -o -name corpus \) -prune -o \
			-type d -printf '%P\n'
	fi
}
layout=$(awk '/^## Layout/ { on = 1; next } on && /^## / { on = 0 } on' DEVELOPING.md)
bad=
while IFS= read -r d; do
	grep -qF "\`$d/" <<<"$layout" || bad+="$d/"$'\n'
done < <(tree_dirs | sort -u)
if [[ -z $bad ]]; then ok "DEVELOPING.md's layout names every folder"; else ko "folders DEVELOPING.md's layout does not name" "$bad"; fi

# one size for the bucket tables wherever the docs give it: the per-key
# bytes of "Limits of the design" times the default million keys a family
kb=$(cat "${PAGES[@]}" | tr '\n' ' ' | grep -oE '\(([0-9]+) bytes +per IPv4 key, ([0-9]+) per IPv6 key' | head -n 1)
v4=$(grep -oE '\([0-9]+' <<<"$kb" | tr -d '(')
v6=$(grep -oE ', [0-9]+ per' <<<"$kb" | grep -oE '[0-9]+')
keys=$(sed -n 's/^#define XRL_DEFAULT_KEYS[[:space:]]*\([0-9]*\).*/\1/p' include/xdp_rl_common.h)
if [[ -z $v4 || -z $v6 || -z $keys ]]; then
	ko "the bucket tables' size: no per-key bytes in the docs ($kb) or no XRL_DEFAULT_KEYS"
else
	want=$(((v4 + v6) * keys / 1048576))
	got=$(cat "${PAGES[@]}" man/*.[0-9] | tr '\n' ' ' | sed 's/\\f[BIRP]//g' |
		grep -oE '(bucket +tables +take|allocated +up +front:) +[0-9]+ +MiB' | grep -oE '[0-9]+ +MiB' | sort -u | tr '\n' ' ')
	if [[ $got == "$want MiB " ]]; then
		ok "one size for the default bucket tables: $want MiB"
	else
		ko "the default bucket tables: ($v4 + $v6) bytes x $keys keys is $want MiB; the docs say: $got"
	fi
fi

# claims of absence the tree has outgrown
bad=
if grep -rq --include='*.c' '"xdp_rl_fleet_' user/rld; then
	bad+=$(grep -niE 'fleet (limits|metrics?) (do|does) not exist|no fleet metric' "${DOCS[@]}")$'\n'
fi
if [[ -z $(find . -path ./.git -prune -o -iname '*dashboard*' -print -quit) ]]; then
	bad+=$(grep -niE 'dashboard' "${DOCS[@]}")$'\n'
fi
# each binary's -V prints its own version (print_version: one program name)
bad+=$(grep -niE 'version of both' "${DOCS[@]}")$'\n'
# the docs say what is, not which issue brought it
bad+=$(grep -nE '\b[Ii]ssues? #?[0-9]+' "${DOCS[@]}")$'\n'
bad=$(sed '/^$/d' <<<"$bad")
if [[ -z $bad ]]; then ok "no claim of absence the tree has outgrown"; else ko "the docs say what is no longer so" "$bad"; fi

echo "$passed passed, $failed failed"
((failed == 0))
