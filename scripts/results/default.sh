#!/usr/bin/env bash
# Writes docs/results/default.md: the sale of the README, once per strategy,
# with the default crowd (660 buyers, 100 units, 280 clicks/s over three
# shops, 8% of critical sections stalled 300 ms against a 100 ms lock TTL).
# About a minute on a 2-core machine, embedded or real (see lib.sh).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin default "The sale, once per strategy"
results_run
results_end

# report.html of that run, for docs/report.md.
[ "$results_name" = default ] && results_screenshot docs/report-default.png

# The README's table: the same run on the embedded backends, its safety columns.
[ "$results_name" = default ] || exit 0
awk -v table="$(awk -F' \\| ' '
	/^\| strategy \| reqs/ { on = 1; next }
	on && /^\|---/ { next }
	on && /^\| / { gsub(/^\| | \|$/, ""); split($0, c, / \| /)
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c[1], c[3], c[4], c[7], c[9], c[10], c[11], c[18]; next }
	on { exit }' "$results_out")" '
	/^<!-- default-table/ { print; print "| strategy | 201 | 202 | errors | oversold | dup_orders | consistent | p99 |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|"; print table; skip = 1; next }
	/^<!-- \/default-table/ { skip = 0 }
	!skip' README.md >README.md.new && mv README.md.new README.md
