# Sourced by lock-table.sh and lock-table-rtt.sh: the servers cmd/locktable
# measures, from LOCKTABLE_REDIS (five nodes), LOCKTABLE_ETCD,
# LOCKTABLE_ZOOKEEPER and LOCKTABLE_MYSQL_DSN, each defaulting to loadgen's
# variable (LOADGEN_REDIS, ...) and then to the tests' (FLASHSALE_TEST_REDIS_ADDRS,
# ...). Sets locktable_args (the flags) and RESULTS_BACKENDS; the DSN stays in
# the environment, so that the command written into a file holds no password.
redis=${LOCKTABLE_REDIS:-${LOADGEN_REDIS:-${FLASHSALE_TEST_REDIS_ADDRS:-}}}
etcd=${LOCKTABLE_ETCD:-${LOADGEN_ETCD:-${FLASHSALE_TEST_ETCD_ENDPOINTS:-}}}
zookeeper=${LOCKTABLE_ZOOKEEPER:-${LOADGEN_ZOOKEEPER:-${FLASHSALE_TEST_ZOOKEEPER:-}}}
export LOCKTABLE_MYSQL_DSN=${LOCKTABLE_MYSQL_DSN:-${LOADGEN_MYSQL_DSN:-${FLASHSALE_TEST_MYSQL_DSN:-}}}
unset LOCKTABLE_REDIS LOCKTABLE_ETCD LOCKTABLE_ZOOKEEPER LOCKTABLE_RTT LOADGEN_MYSQL_DSN # the flags say them; one file, no -real
locktable_args=()
[ -n "$redis" ] && locktable_args+=(--redis "$redis")
[ -n "$etcd" ] && locktable_args+=(--etcd "$etcd")
[ -n "$zookeeper" ] && locktable_args+=(--zookeeper "$zookeeper")
db=none
if [ -n "$LOCKTABLE_MYSQL_DSN" ]; then
	db="the database of \`LOCKTABLE_MYSQL_DSN\`, at $(sed -nE 's/.*@(tcp|unix)\(([^)]*)\).*/\2/p' <<<"$LOCKTABLE_MYSQL_DSN")"
fi
export RESULTS_BACKENDS="real, on this machine: Redis at ${redis:-none}, etcd at ${etcd:-none}, ZooKeeper at ${zookeeper:-none}, $db"

# locktable_run OUT FLAGS...: runs the built locktable with the servers' flags
# and FLAGS, and writes to OUT a section headed with the command.
locktable_run() {
	local out=$1 t0=$SECONDS
	shift
	local args=("${locktable_args[@]}" "$@")
	local cmd="locktable${args[*]:+ ${args[*]}}"
	echo "==> $cmd" >&2
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
	} >"$out"
}
