#!/usr/bin/env bash
# Checks README.md and docs/*.md (not the generated docs/results files):
#   - README.md has at most 250 lines, every chapter in docs/ at most 200, and
#     no prose line (outside code blocks and tables) more than 120 characters;
#   - every relative link resolves to a file, and every #anchor to a heading;
#   - no commit hash, and no run-history prose ("one run", "re-run", "slower day");
#   - every number of two digits or more in the prose (outside code) appears in
#     the results files its paragraph links to, or else its section; where
#     neither links one, in any docs/results file, or in the code or flags that
#     set it (a setting, not a measurement).
# Prints what it finds and exits 1 if anything; changes nothing. Run it from anywhere.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
docs=(README.md docs/*.md)
bad=0
fail() { printf '%s\n' "$*"; bad=1; }

n=$(wc -l <README.md)
[ "$n" -le 250 ] || fail "README.md: $n lines, more than 250"
for f in docs/*.md; do
	n=$(wc -l <"$f")
	[ "$n" -le 200 ] || fail "$f: $n lines, more than 200"
done
long=$(for f in "${docs[@]}"; do
	awk -v f="$f" '/^```/{c=!c; next} !c && !/^\|/ && length($0) > 120 {print f ":" FNR ": " length($0) " characters"}' "$f"
done)
[ -z "$long" ] || fail "prose lines over 120 characters (a table row or code may be longer):"$'\n'"$long"

# anchors FILE: the GitHub anchors of FILE's headings, one per line.
anchors() {
	grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ //; s/[`*]//g' | tr '[:upper:]' '[:lower:]' |
		sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

for f in "${docs[@]}"; do
	dir=$(dirname "$f")
	# Links outside code: ](target), not http(s) or mailto.
	while IFS= read -r target; do
		case $target in http://* | https://* | mailto:*) continue ;; esac
		path=${target%%#*} anchor=
		[[ $target == *"#"* ]] && anchor=${target#*#}
		if [ -z "$path" ]; then file=$f; else file=$dir/$path; fi
		if [ ! -e "$file" ]; then
			fail "$f: link to $target: no such file"
		elif [ -n "$anchor" ] && [ -f "$file" ] && ! anchors "$file" | grep -qxF "$anchor"; then
			fail "$f: link to $target: no heading for #$anchor"
		fi
	done < <(awk '/^```/{c=!c; next} !c' "$f" | grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//')
done

hashes=$(grep -nP '\b(?=[0-9a-f]{7,12}\b)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}\b' "${docs[@]}" |
	grep -vE '[0-9a-f]{8}-[0-9a-f]{4}-')
[ -z "$hashes" ] || fail "what looks like commit hashes:"$'\n'"$hashes"
history=$(grep -niE 'one run|re-?run|slower day|quieter day|alternated' "${docs[@]}")
[ -z "$history" ] || fail "run-history prose:"$'\n'"$history"

# Numbers: the prose without code blocks, inline code and link targets.
# A number is checked against the results files its paragraph links to
# (a list item and a table row are paragraphs of their own); failing that,
# against those its section (the text under one heading) links to; failing
# that, against every results file and the code and flags that set it.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
numbers() { tr -d ',' | grep -oE '[0-9]+(\.[0-9]+)?' | sort -u; }
{
	cat docs/results/*.md
	find cmd internal migrations -name '*.go' ! -name '*_test.go' -o -name '*.sql' -o -name '*.lua' | xargs cat
	cat compose.yaml Dockerfile
} | numbers >"$work/known"
mkdir "$work/results"
for r in docs/results/*.md; do numbers <"$r" >"$work/results/${r##*/}"; done

# prose FILE: one line per number of two digits or more (or with a
# decimal point) in FILE's prose: the results files that vouch for it
# (space-separated, none for any), a bar, the number.
prose() {
	awk -v dir="$(dirname "$1")" '
	function resolve(t,   p) {
		sub(/#.*/, "", t)
		p = (dir == "." ? t : dir "/" t)
		while (sub(/(^|\/)\.\//, "/", p)) {}
		while (sub(/[^\/]+\/\.\.\//, "", p)) {}
		sub(/^\//, "", p)
		return p ~ /^docs\/results\/[^\/]+\.md$/ ? p : ""
	}
	function flush() {
		if (np) { para[++npara] = plinks; nums[npara] = pnums }
		np = 0; plinks = ""; pnums = ""
	}
	function flushsection(   i, l) {
		flush()
		for (i = 1; i <= npara; i++) {
			l = para[i] != "" ? para[i] : slinks
			n = split(nums[i], a, " ")
			for (j = 1; j <= n; j++) printf "%s|%s\n", l, a[j]
		}
		npara = 0; slinks = ""
	}
	function addlink(set, p) { return (index(" " set " ", " " p " ") ? set : (set == "" ? p : set " " p)) }
	/^```/ { flush(); code = !code; next }
	code { next }
	/^[ \t]*$/ { flush(); next }
	/^#+ / { flushsection(); next }
	/^[ \t]*([-*+]|[0-9]+\.)[ \t]/ || /^\|/ { flush() }
	{
		np = 1
		line = $0
		gsub(/`[^`]*`/, "", line)
		rest = line
		while (match(rest, /\]\([^) ]+\)/)) {
			t = substr(rest, RSTART + 2, RLENGTH - 3)
			rest = substr(rest, RSTART + RLENGTH)
			if (t ~ /^(https?|mailto):/) continue
			p = resolve(t)
			if (p != "") { plinks = addlink(plinks, p); slinks = addlink(slinks, p) }
		}
		gsub(/\]\([^)]*\)/, "]", line)
		pos = 1
		while (match(substr(line, pos), /[0-9][0-9,]*(\.[0-9]+)?/)) {
			at = pos + RSTART - 1
			pre = at > 1 ? substr(line, at - 1, 1) : ""
			pos = at + 1
			if (pre ~ /[A-Za-z0-9_.\/:-]/) continue
			num = substr(line, at, RLENGTH)
			pos = at + RLENGTH
			gsub(/,/, "", num)
			if (num !~ /\./ && length(num) < 2) continue
			pnums = pnums " " num
		}
	}
	END { flushsection() }
	' "$1"
}

for f in "${docs[@]}"; do
	prose "$f" | sort -u | while IFS="|" read -r links num; do
		if [ -z "$links" ]; then
			grep -qxF "$num" "$work/known" ||
				echo "$f: $num is in no results file, and no code or flag sets it"
			continue
		fi
		found=
		for r in $links; do
			grep -qxF "$num" "$work/results/${r##*/}" && { found=1; break; }
		done
		[ -n "$found" ] || echo "$f: $num is not in $links, the results its paragraph or section links to"
	done
done | { out=$(cat); [ -z "$out" ] || { printf '%s\n' "$out"; exit 1; }; } || bad=1

[ $bad -eq 0 ] && echo "docs: ok"
exit $bad
