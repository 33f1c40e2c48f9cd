#!/usr/bin/env bash
# Writes docs/results/lock-table-rtt.md: cmd/locktable twice in a row on the
# same servers, on loopback and with --rtt (RESULTS_RTT, default 1ms: a
# simulated network between the clients and every server), and the two side
# by side: ops/s, the ratio of each system to single Redis beside the claimed
# one, and the p50 of a cycle alone (one hot key, one contender), which counts
# the round trips a lock needs.
#
# The servers as lock-table.sh takes them (lock-table-servers.sh). About six
# minutes with the command's defaults; nothing else should use the cores
# meanwhile (all.sh's LOCK).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. scripts/results/lock-table-servers.sh
rtt=${RESULTS_RTT:-1ms}
results_begin lock-table-rtt "The lock throughput table, on loopback and over a network"
go build -o "$results_work/locktable" ./cmd/locktable
locktable_run "$results_work/loopback.md"
locktable_run "$results_work/rtt.md" --rtt "$rtt"
{
	echo
	echo "## Side by side: loopback, and rtt $rtt"
	echo
	echo "From the two runs below, one after the other on the same servers: the first on loopback, the second"
	echo "with \`--rtt $rtt\` on every link. The claimed figures are the textbook's."
	echo
	awk -v rtt="$rtt" -f scripts/results/lock-table-rtt.awk "$results_work/loopback.md" "$results_work/rtt.md"
	cat "$results_work/loopback.md" "$results_work/rtt.md"
} >>"$results_work/out.md"
results_end
