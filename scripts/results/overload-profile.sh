#!/usr/bin/env bash
# Writes docs/results/overload-profile.md: where the CPU goes when a shop is
# offered far past its knee, and the database's and Redis's share of it.
# One sql-atomic sweep point at RATE (default 4000 clicks/s) on real
# backends with the whole load generator's process profiled (three shops
# and the attacker share it), the database server's and the Redis server's
# CPU read from /proc before and after.
#
# Needs LOADGEN_MYSQL_DSN and LOADGEN_REDIS as scripts/results/overload.sh
# does, and the database and Redis servers on this machine (their pids are
# found with pgrep: MYSQLD_PID and REDIS_PID to say which). Linux only.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

: "${LOADGEN_MYSQL_DSN:?set LOADGEN_MYSQL_DSN to a MySQL/MariaDB database}"
: "${LOADGEN_REDIS:?set LOADGEN_REDIS to five Redis nodes, host:port,...}"
export LOADGEN_MYSQL_DSN LOADGEN_REDIS
rate=${RATE:-4000}
mode=${MODE:-sql-atomic}
mysqld=${MYSQLD_PID:-$(pgrep -o -x mariadbd || pgrep -o -x mysqld)}
first_redis=${LOADGEN_REDIS%%,*}
redis=${REDIS_PID:-$(pgrep -f "redis-server .*:${first_redis##*:}" | head -n 1)}
out=docs/results/overload-profile.md
work=$results_work

# cpu PID: the process's user+system CPU so far, in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks=$(getconf CLK_TCK)

go build -o "$work/loadgen" ./cmd/loadgen
m0=$(cpu "$mysqld") r0=$(cpu "$redis") t0=$(date +%s.%N)
"$work/loadgen" --strategies "$mode" --sweep "$rate" --cpuprofile "$work/cpu.prof" --out "$work/report" >"$work/stdout"
m1=$(cpu "$mysqld") r1=$(cpu "$redis") t1=$(date +%s.%N)
report=$(ls -d "$work"/report/*/ | tail -n 1)

{
	results_head overload-profile "Overload: where the CPU goes"
	echo "Command: \`loadgen --strategies $mode --sweep $rate --cpuprofile cpu.prof\`; the servers' CPU from \`/proc/<pid>/stat\`."
	echo
	sed -n '/^| strategy | offered/,/^$/p' "$report/report.md"
	echo "Over the whole run ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s wall, the attack 3 s of it):"
	echo
	echo "| process | CPU seconds |"
	echo "|---|---:|"
	echo "| load generator (three shops and the attacker) | $(go tool pprof -top "$work/loadgen" "$work/cpu.prof" 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*\)s.*/\1/p') |"
	echo "| database server | $(awk -v a="$m0" -v b="$m1" -v t="$ticks" 'BEGIN { printf "%.2f", (b - a) / t }') |"
	echo "| first Redis node | $(awk -v a="$r0" -v b="$r1" -v t="$ticks" 'BEGIN { printf "%.2f", (b - a) / t }') |"
	echo
	echo "The load generator's profile, by what each frame and all it calls took (\`go tool pprof -top -cum\`),"
	echo "the frames that tell the shops' HTTP, their orders and the attacker apart:"
	echo
	echo '```'
	go tool pprof -top -cum -nodecount=400 "$work/loadgen" "$work/cpu.prof" 2>/dev/null |
		grep -E 'flat%|net/http\.\(\*conn\)\.serve$|httpapi\.\(\*api\)\.placeOrder$|order\.\(\*Service\)\.Place$|httpapi\.\(\*admission\)\.enter$|httpapi\.decodeJSON$|httpapi\.writeError$|net/http\.\(\*conn\)\.readRequest$|net/http\.\(\*response\)\.finishRequest$|vegeta/v12/lib\.\(\*Attacker\)\.hit$|net/http\.\(\*persistConn\)\.readLoop$|net/http\.\(\*persistConn\)\.writeLoop$|net/http\.\(\*Transport\)\.dialConn$|runtime\.gcBgMarkWorker$'
	echo '```'
} >"$out"
echo "wrote $out"
