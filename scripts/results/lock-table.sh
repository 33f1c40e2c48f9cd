#!/usr/bin/env bash
# Writes docs/results/lock-table.md: the textbook's lock throughput table
# measured on this machine in one run of cmd/locktable: single Redis (lua),
# Redlock over five nodes, etcd, ZooKeeper and the database's row lock, with
# many independent keys and with one hot key, beside the claimed figures.
#
# Real servers only, on this machine (the command refuses other addresses):
# LOCKTABLE_REDIS (five nodes), LOCKTABLE_ETCD, LOCKTABLE_ZOOKEEPER and
# LOCKTABLE_MYSQL_DSN, each defaulting to loadgen's variable (LOADGEN_REDIS,
# ...) and then to the tests' (FLASHSALE_TEST_REDIS_ADDRS, ...). A server not
# named shows as skipped in the table. The DSN is passed in the environment,
# so that the command written into the file holds no password. About three
# minutes with the command's defaults; nothing else should use the cores
# meanwhile (all.sh's LOCK).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
redis=${LOCKTABLE_REDIS:-${LOADGEN_REDIS:-${FLASHSALE_TEST_REDIS_ADDRS:-}}}
etcd=${LOCKTABLE_ETCD:-${LOADGEN_ETCD:-${FLASHSALE_TEST_ETCD_ENDPOINTS:-}}}
zookeeper=${LOCKTABLE_ZOOKEEPER:-${LOADGEN_ZOOKEEPER:-${FLASHSALE_TEST_ZOOKEEPER:-}}}
export LOCKTABLE_MYSQL_DSN=${LOCKTABLE_MYSQL_DSN:-${LOADGEN_MYSQL_DSN:-${FLASHSALE_TEST_MYSQL_DSN:-}}}
unset LOCKTABLE_REDIS LOCKTABLE_ETCD LOCKTABLE_ZOOKEEPER LOADGEN_MYSQL_DSN # the flags below say them; one file, no -real
args=()
[ -n "$redis" ] && args+=(--redis "$redis")
[ -n "$etcd" ] && args+=(--etcd "$etcd")
[ -n "$zookeeper" ] && args+=(--zookeeper "$zookeeper")
db=none
if [ -n "$LOCKTABLE_MYSQL_DSN" ]; then
	db="the database of \`LOCKTABLE_MYSQL_DSN\`, at $(sed -nE 's/.*@(tcp|unix)\(([^)]*)\).*/\2/p' <<<"$LOCKTABLE_MYSQL_DSN")"
fi
export RESULTS_BACKENDS="real, on this machine: Redis at ${redis:-none}, etcd at ${etcd:-none}, ZooKeeper at ${zookeeper:-none}, $db"
results_begin lock-table "The lock throughput table, measured"
go build -o "$results_work/locktable" ./cmd/locktable
cmd="locktable${args[*]:+ ${args[*]}}"
echo "==> $cmd" >&2
t0=$SECONDS
"$results_work/locktable" "${args[@]}" >"$results_work/table.md"
{
	echo
	echo "## \`$cmd\`"
	echo
	if [ -n "$LOCKTABLE_MYSQL_DSN" ]; then
		echo "With \`LOCKTABLE_MYSQL_DSN\` naming the row lock's database. Took $((SECONDS - t0)) s."
	else
		echo "Took $((SECONDS - t0)) s."
	fi
	sed -n '2,$p' "$results_work/table.md" # the command's own title line is dropped
} >>"$results_work/out.md"
results_end
