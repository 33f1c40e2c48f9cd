#!/usr/bin/env bash
# Checks README.md and docs/*.md (not the generated docs/results files):
#   - README.md has at most 250 lines;
#   - every relative link resolves to a file, and every #anchor to a heading;
#   - no commit hash, and no run-history prose ("one run", "re-run", "slower day");
#   - every number of two digits or more in the prose (outside code) appears in
#     a docs/results file, or in the code or flags that set it (a setting, not
#     a measurement).
# Prints what it finds and exits 1 if anything; changes nothing. Run it from anywhere.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
docs=(README.md docs/*.md)
bad=0
fail() { printf '%s\n' "$*"; bad=1; }

n=$(wc -l <README.md)
[ "$n" -le 250 ] || fail "README.md: $n lines, more than 250"

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
known=$(mktemp)
trap 'rm -f "$known"' EXIT
{
	cat docs/results/*.md
	find cmd internal migrations -name '*.go' ! -name '*_test.go' -o -name '*.sql' -o -name '*.lua' | xargs cat
	cat compose.yaml Dockerfile
} | tr -d ',' | grep -oE '[0-9]+(\.[0-9]+)?' | sort -u >"$known"
for f in "${docs[@]}"; do
	awk '/^```/{c=!c; next} !c' "$f" | sed -E 's/`[^`]*`//g; s/\]\([^)]*\)/]/g' |
		grep -oP '(?<![A-Za-z0-9_./:-])[0-9][0-9,]*(\.[0-9]+)?' | tr -d ',' | sort -u |
		while IFS= read -r num; do
			[[ $num != *.* && ${#num} -lt 2 ]] && continue
			grep -qxF "$num" "$known" || echo "$f: $num is in no results file, and no code or flag sets it"
		done
done | { out=$(cat); [ -z "$out" ] || { printf '%s\n' "$out"; exit 1; }; } || bad=1

[ $bad -eq 0 ] && echo "docs: ok"
exit $bad
