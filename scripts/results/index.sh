#!/usr/bin/env bash
# Writes docs/results/index.md: every results file, what wrote it, when, on
# which backends, and how long it took; and the totals, embedded and real,
# which are how long scripts/results/all.sh takes. Reads the files only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=docs/results/index.md

# backends FILE: "real", "none", or "embedded", followed by the servers
# beside them: "+ redis-server" (beside the embedded ones: a Redis Cluster
# or a Sentinel-managed master), "+ Redis Cluster" (beside the real ones)
# and "+ ZooKeeper" (an ensemble). The head's "Backends:" line says which of
# the three; the servers show in that line or in a report's "Machine:" line,
# which loadgen writes from what it ran on.
backends() {
	local said kind extra=
	said=$(grep -m1 -oE '^Backends: [a-z]+' "$1" | cut -d' ' -f2 || true)
	case $said in
	none)
		echo none
		return
		;;
	real) kind=real ;;
	*) kind=embedded ;;
	esac
	said=$(grep -E '^Backends: |^Machine: ' "$1" || true)
	if [ "$kind" = real ]; then
		! grep -q 'Redis Cluster' <<<"$said" || extra+=" + Redis Cluster"
	else
		! grep -qE 'Redis Cluster|Sentinel|redis-server' <<<"$said" || extra+=" + redis-server"
	fi
	! grep -q 'ZooKeeper' <<<"$said" || extra+=" + ZooKeeper"
	echo "$kind$extra"
}

emb=0 real=0
rows=$(for f in docs/results/*.md; do
	[ "$f" = "$out" ] && continue
	title=$(head -n 1 "$f" | sed 's/^# //')
	script=$(grep -m1 -oE 'scripts/results/[a-z-]+\.sh' "$f" || echo '?')
	date=$(grep -m1 -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' "$f" || echo '?')
	# Seconds: this directory's scripts say "Regenerating this file took N s";
	# the overload scripts' reports say "Run took N.Ns" or "(N.N s wall".
	secs=$(grep -m1 -oE 'Regenerating this file took [0-9]+ s' "$f" | grep -oE '[0-9]+' ||
		grep -m1 -oE 'Run took [0-9.]+s' "$f" | grep -oE '[0-9]+' | head -n 1 ||
		grep -m1 -oE '\([0-9.]+ s wall' "$f" | grep -oE '[0-9]+' | head -n 1 || echo 0)
	printf '| [%s](%s) | %s | `%s` | %s | %s | %s |\n' "$(basename "$f" .md)" "$(basename "$f")" "$title" "$script" "$(backends "$f")" "$date" "$secs"
done)
emb=$(printf '%s\n' "$rows" | awk -F'|' '$5 !~ /real/ {s += $7} END {print s + 0}')
real=$(printf '%s\n' "$rows" | awk -F'|' '$5 ~ /real/ {s += $7} END {print s + 0}')
{
	echo "# Results"
	echo
	echo "Every figure in README.md and docs/ comes from one of these files. Each file is written by its"
	echo "script and heads itself with the command, the machine, the Go version, the backends and the date."
	echo "\`scripts/results/all.sh\` runs every script, then \`scripts/results/index.sh\`, which wrote this page."
	echo
	echo "Backends: *embedded* is SQLite, five miniredis nodes and three etcd members in the load generator's"
	echo "process; *real* is the servers named in \`LOADGEN_MYSQL_DSN\`, \`LOADGEN_REDIS\` and \`LOADGEN_ETCD\` (or"
	echo "what the file's head names); *none* is no backend at all. Beside them, real servers: *+ redis-server*"
	echo "(a Redis Cluster or a Sentinel-managed master), *+ Redis Cluster*, *+ ZooKeeper* (an ensemble, which"
	echo "needs Java)."
	echo
	echo "| file | what | script | backends | date | seconds |"
	echo "|---|---|---|---|---|---:|"
	printf '%s\n' "$rows"
	echo
	echo "A full regeneration took $emb s on the embedded backends and $real s more on the real ones,"
	echo "adding up the times above, as each file records them."
} >"$out"
echo "wrote $out" >&2
