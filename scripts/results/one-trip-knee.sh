#!/usr/bin/env bash
# Writes docs/results/one-trip-knee-real.md (one-trip-knee.md on the
# embedded backends): sql-atomic and sql-one-trip side by side at --rtt 2ms,
# on a finer grid of rates than network.sh's doublings, three runs of each
# point (the median), so that each row's knee (the last rate whose p99
# stays under 100 ms) and peak can be compared within a factor finer than
# two. Meant for the real servers; about three minutes on two cores.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_begin one-trip-knee "The one-round-trip row beside sql-atomic at 2 ms, on a fine grid"
results_run --strategies sql-atomic,sql-one-trip --sweep 300,400,600,800,1200,1600,2400,3200 --rtt 2ms --count 3
results_end
