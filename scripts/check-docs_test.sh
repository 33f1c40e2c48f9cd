#!/usr/bin/env bash
# Tests scripts/check-docs.sh on copies of this tree: it passes on the docs
# as they are, and fails on each of two figures seeded where the old check
# (a number found in any results file) let them through:
#   - docs/overload.md: the CPU profile at another rate of the sweeps
#     ("four times its knee"), where the paragraph links
#     results/overload-profile.md, which ran at 4,000/s;
#   - docs/batch.md: the default sale "at 250 clicks/s", the old rate that
#     stale results files still show (or another candidate where a
#     regeneration put it in default.md), where the paragraph links
#     results/default.md.
# It also fails on a chapter longer than 200 lines and on a prose line
# longer than 120 characters.
# Each seed must be in some results file (or it proves nothing new) and not
# in the file its paragraph links to. Prints what failed; exits 1 if anything
# did. .ci/run runs it in its "check docs" step.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
fail() { printf 'check-docs_test: %s\n' "$*"; bad=1; }

# tree NAME: a copy of the tree (links may point anywhere in it), in $work/NAME.
tree() {
	mkdir "$work/$1"
	tar -C "$root" --exclude=./.git -cf - . | tar -C "$work/$1" -xf -
}

# seed NAME FILE OLD NEW: replaces the text OLD, which must be there, by NEW
# in FILE of tree NAME.
seed() {
	local f=$work/$1/$2 text
	text=$(cat "$f")
	[[ $text == *"$3"* ]] || { fail "$2 no longer says \"$3\": choose another seed"; return 1; }
	printf '%s\n' "${text/"$3"/"$4"}" >"$f"
}

# pick LINKED NUMBER...: prints the first NUMBER that is in some results file
# (else the old check would fail on it too, and it proved nothing) and not in
# LINKED (else it is no mismatch); results files are regenerated, so a seed
# has more than one candidate.
pick() {
	local linked all n
	linked=$(tr -d ',' <"$root/docs/results/$1")
	all=$(cat "$root"/docs/results/*.md | tr -d ',')
	shift
	for n in "$@"; do
		if grep -qw -- "$n" <<<"$all" && ! grep -qw -- "$n" <<<"$linked"; then
			echo "$n"
			return
		fi
	done
	fail "none of $* is in a results file and not in the one linked: choose other candidates"
	return 1
}

# expect_fail NAME WANT: check-docs.sh fails on tree NAME, naming WANT.
expect_fail() {
	local out
	if out=$(bash "$work/$1/scripts/check-docs.sh" 2>&1); then
		fail "$1: check-docs.sh passed a seeded mismatch"
	elif ! grep -qF -- "$2" <<<"$out"; then
		fail "$1: check-docs.sh failed, but not on \"$2\":"$'\n'"$out"
	fi
}

tree real
out=$(bash "$work/real/scripts/check-docs.sh" 2>&1) || fail "the docs as they are fail:"$'\n'"$out"

tree profile
# The issue's figure: four times sql-atomic's knee, a rate of a sweep.
if n=$(pick overload-profile.md 8000 16000 6400 3000 2000); then
	seed profile docs/overload.md "offered 4,000/s, a third past its knee" "offered $n/s, four times its knee" &&
		expect_fail profile "docs/overload.md: $n is not in docs/results/overload-profile.md"
fi

tree batch
# The old rate of the stale results files first.
if n=$(pick default.md 250 1200 2392); then
	seed batch docs/batch.md "At 280 clicks/s the queue is short" "At $n clicks/s the queue is short" &&
		expect_fail batch "docs/batch.md: $n is not in docs/results/default.md"
fi

tree long
# A chapter past 200 lines, and a prose line past 120 characters.
yes '' | head -n 200 >>"$work/long/docs/empty-restart.md"
expect_fail long "docs/empty-restart.md: $(wc -l <"$work/long/docs/empty-restart.md") lines, more than 200"
printf '%s\n' "$(printf 'word %.0s' $(seq 25))" >>"$work/long/docs/lua.md"
expect_fail long "prose lines over 120 characters"

[ $bad -eq 0 ] && echo "check-docs_test: ok"
exit $bad
