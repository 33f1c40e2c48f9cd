#!/usr/bin/env bash
# Writes docs/results/overload.md: the lock-free rows and fenced+batch swept
# past their knee in the open model (a fresh buyer per click), on real
# backends, three shops: goodput and p99 against the offered rate, how fast
# the clicks a shop sheds are answered, and how much of its peak each row
# keeps past it.
#
# Needs real servers, named as loadgen's flags name them:
#   LOADGEN_MYSQL_DSN  a MySQL or MariaDB database the run may fill
#   LOADGEN_REDIS      five Redis nodes, host:port,...
#   LOADGEN_ETCD       optional: an etcd cluster (else three members in process)
# Optional: RATES (default 500,1000,2000,3000,4000: past 4000/s the attacker and
# three shops on a 2-core machine hold more than 20,000 connections), COUNT (runs of each
# point, the median run's figures; default 3), MODES, and REPORT_DIR to
# keep the run's report folder. Also renders the top of its report.html (the
# sweep's charts) into docs/report-sweep.png, where Chromium is installed.
# Takes about COUNT × 3 minutes on a 2-core machine; run it on a quiet one.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

: "${LOADGEN_MYSQL_DSN:?set LOADGEN_MYSQL_DSN to a MySQL/MariaDB database (user:pass@tcp(host:3306)/db?parseTime=true)}"
: "${LOADGEN_REDIS:?set LOADGEN_REDIS to five Redis nodes, host:port,...}"
export LOADGEN_MYSQL_DSN LOADGEN_REDIS
rates=${RATES:-500,1000,2000,3000,4000}
count=${COUNT:-3}
modes=${MODES:-sql-atomic,redis-decr,redis-queue,fenced+batch}
out=docs/results/overload.md
work=$results_work

go build -o "$work/loadgen" ./cmd/loadgen
cmd=(loadgen --strategies "$modes" --sweep "$rates" --count "$count")
reports=${REPORT_DIR:-$work/report}
"$work/loadgen" --strategies "$modes" --sweep "$rates" --count "$count" --out "$reports" | tee "$work/stdout"
report=$(ls -d "$reports"/*/ | tail -n 1)
results_report=$report
results_screenshot docs/report-sweep.png

{
	results_head overload "Overload: goodput past the knee"
	echo "Command: \`${cmd[*]}\`."
	echo
	sed -n '2,$p' "$report/report.md"
} >"$out"
echo "wrote $out"
